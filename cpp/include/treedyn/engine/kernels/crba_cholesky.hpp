// The kernel of solver "crba-cholesky" (engine/engine.hpp)
#pragma once
#include "treedyn/algorithms/crba_cholesky.hpp"

namespace treedyn {

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
