// The constraint force algorithm with odd–even elimination and refinement (yang-wu-pan,
// algorithms/cfa.hpp) as a solver kernel.
#pragma once
#include "treedyn/algorithms/cfa.hpp"
#include "treedyn/solvers/kernel.hpp"

namespace treedyn {

template <class S> struct CfaKernel {
  struct Workspace {
    Data<S> data;
    CfaData<S> cfa;
    explicit Workspace(const Model<S>& model) : data(model), cfa(model) {}
  };
  static constexpr bool forms_pivots = false;
  explicit CfaKernel(const Model<S>&) {}
  double forward_dynamics(const Model<S>& model, Workspace& w, const S* q, const S* qd, const S* tau, const S* fext,
                          S* qdd) const {
    return double(cfa(model, w.data, w.cfa, q, qd, tau, fext, qdd));
  }
  // A F_c = −B R for all the columns at once by OEE (eq. (17))
  double inverse_inertia(const Model<S>& model, Workspaces<Workspace, S>& ws, const S* q, const S* R, int m, S* Y) {
    return double(cfa_inverse_inertia(model, ws[0].data, ws[0].cfa, q, R, m, Y));
  }
  bool inverse_mass_matrix(const Model<S>& model, Workspaces<Workspace, S>& ws, const S* q, S* Minv, double& omega) {
    omega = minv_by_columns(*this, model, ws, q, Minv);
    return false;
  }
};

}  // namespace treedyn
