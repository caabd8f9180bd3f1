// The modified ABA (ascher-pai-cloutier1996 eq. (11), algorithms/aba_modified.hpp) as a solver kernel.
#pragma once
#include "treedyn/algorithms/aba_modified.hpp"
#include "treedyn/solvers/kernel.hpp"

namespace treedyn {

template <class S> struct AbaModifiedKernel {
  using Workspace = Data<S>;
  static constexpr bool forms_pivots = true;
  explicit AbaModifiedKernel(const Model<S>&) {}
  double forward_dynamics(const Model<S>& model, Workspace& w, const S* q, const S* qd, const S* tau, const S* fext,
                          S* qdd) const {
    aba_modified(model, w, q, qd, tau, fext, qdd);
    return 0;
  }
  double inverse_inertia(const Model<S>& model, Workspaces<Workspace, S>& ws, const S* q, const S* R, int m, S* Y) {
    aba_modified_inverse_inertia(model, ws[0], q, R, m, Y);
    return 0;
  }
  bool inverse_mass_matrix(const Model<S>& model, Workspaces<Workspace, S>& ws, const S* q, S* Minv, double& omega) {
    omega = minv_by_columns(*this, model, ws, q, Minv);
    return false;
  }
};

}  // namespace treedyn
