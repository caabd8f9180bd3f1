// Forward dynamics by the classical O(N³) route (drumwright2012 §6 baseline):
// c = RNEA(q, q̇, 0), M = CRBA(q), M = L Lᵀ (dense Cholesky), q̈ = M⁻¹(τ − c).
#pragma once
#include <string>

#include "treedyn/algorithms/crba.hpp"
#include "treedyn/algorithms/rnea.hpp"

namespace treedyn {

template <class S> void factorize_mass_matrix(const Model<S>& model, Data<S>& data, const S* q) {
  crba(model, data, q);
  data.llt.compute(data.M);
  if (data.llt.info() != Eigen::Success)
    throw SingularJoint(
        "the mass matrix M(q) is not positive definite (Cholesky failed): some joint "
        "moves bodies without inertia along its motion subspace");
}

// inputs: q, qd, tau, fext (or null); output: qdd. data must have with_mass_matrix.
template <class S>
TREEDYN_ENTRY void crba_cholesky_forward_dynamics(const Model<S>& model, Data<S>& data, const S* q, const S* qd,
                                                  const S* tau, const S* fext, S* qdd) {
  rnea(model, data, q, qd, static_cast<const S*>(nullptr), fext, data.bias.data());
  factorize_mass_matrix(model, data, q);
  Eigen::Map<Eigen::Matrix<S, Eigen::Dynamic, 1>> out(qdd, model.nv);
  out = Eigen::Map<const Eigen::Matrix<S, Eigen::Dynamic, 1>>(tau, model.nv) - data.bias;
  data.llt.solveInPlace(out);
}

// M(q)⁻¹ R (nv x m, column-major) into Y
template <class S>
TREEDYN_ENTRY void crba_cholesky_inverse_inertia(const Model<S>& model, Data<S>& data, const S* q, const S* R, int m,
                                                 S* Y) {
  factorize_mass_matrix(model, data, q);
  Eigen::Map<Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic>> out(Y, model.nv, m);
  out = Eigen::Map<const Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic>>(R, model.nv, m);
  data.llt.solveInPlace(out);
}

// the kernel of solver "crba-cholesky" (engine.hpp)
template <class S> struct CrbaCholeskyKernel {
  struct Workspace {
    Data<S> data;
    Workspace(const Model<S>& model, const CrbaCholeskyKernel&) : data(model, true) {}
  };
  static constexpr bool full_inverse = true;
  explicit CrbaCholeskyKernel(const Model<S>&) {}
  double forward_dynamics(const Model<S>& model, Workspace& w, const S* q, const S* qd, const S* tau, const S* fext,
                          S* qdd) const {
    crba_cholesky_forward_dynamics(model, w.data, q, qd, tau, fext, qdd);
    return 0;
  }
  template <class Pool>
  double inverse_inertia(const Model<S>& model, Pool& ws, const S* q, const S* R, int m, S* Y) const {
    crba_cholesky_inverse_inertia(model, ws[0].data, q, R, m, Y);
    return 0;
  }
  template <class Pool> bool inverse_mass_matrix(const Model<S>& model, Pool& ws, const S* q, S* Minv,
                                                 double& omega) const {
    factorize_mass_matrix(model, ws[0].data, q);
    Eigen::Map<Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic>> out(Minv, model.nv, model.nv);
    out.setIdentity();
    ws[0].data.llt.solveInPlace(out);
    omega = 0;
    return false;
  }
};

}  // namespace treedyn
