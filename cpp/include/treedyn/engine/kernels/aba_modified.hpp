// The kernel of solver "aba-modified" (engine/engine.hpp)
#pragma once
#include "treedyn/algorithms/aba_modified.hpp"
#include "treedyn/engine/kernels/joint_inertias.hpp"

namespace treedyn {

template <class S> struct AbaModifiedKernel {
  struct Workspace {
    Data<S> data;
    Workspace(const Model<S>& model, const AbaModifiedKernel&) : data(model) {}
  };
  static constexpr bool full_inverse = false;  // M⁻¹ = inverse_inertia(1)
  explicit AbaModifiedKernel(const Model<S>&) {}
  double forward_dynamics(const Model<S>& model, Workspace& w, const S* q, const S* qd, const S* tau, const S* fext,
                          S* qdd) const {
    aba_modified(model, w.data, q, qd, tau, fext, qdd);
    return 0;
  }
  template <class Pool>
  double inverse_inertia(const Model<S>& model, Pool& ws, const S* q, const S* R, int m, S* Y) const {
    aba_modified_inverse_inertia(model, ws[0].data, q, R, m, Y);
    return 0;
  }
  void joint_inertias(const Model<S>& model, Workspace& w, const S* q, S* D) const {
    // a lambda, not &aba_modified<S>: an address taken would keep aba_modified out of line in forward_dynamics too
    treedyn::joint_inertias(model, w.data, q, D, [](auto&&... a) { aba_modified(a...); });
  }
};

}  // namespace treedyn
