// RNEA bias + CRBA mass matrix + dense Cholesky (algorithms/crba_cholesky.hpp) as a solver kernel.
#pragma once
#include <algorithm>

#include "treedyn/algorithms/crba_cholesky.hpp"
#include "treedyn/solvers/kernel.hpp"

namespace treedyn {

template <class S> struct CrbaCholeskyKernel {
  struct Workspace : Data<S> {
    explicit Workspace(const Model<S>& model) : Data<S>(model, true) {}  // with M and its LLᵀ
  };
  static constexpr bool forms_pivots = false;
  explicit CrbaCholeskyKernel(const Model<S>&) {}
  double forward_dynamics(const Model<S>& model, Workspace& w, const S* q, const S* qd, const S* tau, const S* fext,
                          S* qdd) const {
    crba_cholesky_forward_dynamics(model, w, q, qd, tau, fext, qdd);
    return 0;
  }
  double inverse_inertia(const Model<S>& model, Workspaces<Workspace, S>& ws, const S* q, const S* R, int m, S* Y) {
    crba_cholesky_inverse_inertia(model, ws[0], q, R, m, Y);
    return 0;
  }
  // M = LLᵀ, then LLᵀ X = 1
  bool inverse_mass_matrix(const Model<S>& model, Workspaces<Workspace, S>& ws, const S* q, S* Minv, double& omega) {
    const int nv = model.nv;
    omega = 0;
    if (nv == 0) return false;
    factorize_mass_matrix(model, ws[0], q);
    Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic> I =
        Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic>::Identity(nv, nv);
    ws[0].llt.solveInPlace(I);
    std::copy(I.data(), I.data() + std::size_t(nv) * nv, Minv);
    return false;
  }
};

}  // namespace treedyn
