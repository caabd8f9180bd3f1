// JSIIA, the joint space inertia inversion algorithm (yang-wu-pan §II-C, algorithms/jsiia.hpp),
// as a solver kernel.
#pragma once
#include "treedyn/algorithms/jsiia.hpp"
#include "treedyn/solvers/kernel.hpp"

namespace treedyn {

template <class S> struct JsiiaKernel {
  struct Workspace {
    Data<S> data;
    JsiiaData<S> jsiia;
    explicit Workspace(const Model<S>& model) : data(model), jsiia(model) {}
  };
  static constexpr bool forms_pivots = false;
  explicit JsiiaKernel(const Model<S>&) {}
  double forward_dynamics(const Model<S>& model, Workspace& w, const S* q, const S* qd, const S* tau, const S* fext,
                          S* qdd) const {
    jsiia(model, w.data, w.jsiia, q, qd, tau, fext, qdd);
    return 0;
  }
  // a dense Cholesky solve of the scanned M
  double inverse_inertia(const Model<S>& model, Workspaces<Workspace, S>& ws, const S* q, const S* R, int m, S* Y) {
    jsiia_inverse_inertia(model, ws[0].data, ws[0].jsiia, q, R, m, Y);
    return 0;
  }
  bool inverse_mass_matrix(const Model<S>& model, Workspaces<Workspace, S>& ws, const S* q, S* Minv, double& omega) {
    omega = minv_by_columns(*this, model, ws, q, Minv);
    return false;
  }
};

}  // namespace treedyn
