// The kernel of solver "cfa-oee" (engine/engine.hpp); ω is its refinement indicator
#pragma once
#include "treedyn/algorithms/cfa.hpp"

namespace treedyn {

template <class S> struct CfaKernel {
  struct Workspace {
    Data<S> data;
    CfaData<S> cfa;
    Workspace(const Model<S>& model, const CfaKernel&) : data(model), cfa(model) {}
  };
  static constexpr bool full_inverse = false;  // M⁻¹ = inverse_inertia(1)
  explicit CfaKernel(const Model<S>&) {}
  double forward_dynamics(const Model<S>& model, Workspace& w, const S* q, const S* qd, const S* tau, const S* fext,
                          S* qdd) const {
    return double(cfa(model, w.data, w.cfa, q, qd, tau, fext, qdd));
  }
  template <class Pool>
  double inverse_inertia(const Model<S>& model, Pool& ws, const S* q, const S* R, int m, S* Y) const {
    return double(cfa_inverse_inertia(model, ws[0].data, ws[0].cfa, q, R, m, Y));
  }
};

}  // namespace treedyn
