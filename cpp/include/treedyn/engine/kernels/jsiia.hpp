// The kernel of solver "jsiia" (engine/engine.hpp)
#pragma once
#include "treedyn/algorithms/jsiia.hpp"

namespace treedyn {

template <class S> struct JsiiaKernel {
  struct Workspace {
    Data<S> data;
    JsiiaData<S> jsiia;
    Workspace(const Model<S>& model, const JsiiaKernel&) : data(model), jsiia(model) {}
  };
  static constexpr bool full_inverse = false;  // M⁻¹ = inverse_inertia(1)
  explicit JsiiaKernel(const Model<S>&) {}
  double forward_dynamics(const Model<S>& model, Workspace& w, const S* q, const S* qd, const S* tau, const S* fext,
                          S* qdd) const {
    jsiia(model, w.data, w.jsiia, q, qd, tau, fext, qdd);
    return 0;
  }
  template <class Pool>
  double inverse_inertia(const Model<S>& model, Pool& ws, const S* q, const S* R, int m, S* Y) const {
    jsiia_inverse_inertia(model, ws[0].data, ws[0].jsiia, q, R, m, Y);
    return 0;
  }
};

}  // namespace treedyn
