// What both RedMax kernels (RedMaxDirectKernel, RedMaxPcgKernel; engine/engine.hpp) do with their
// per-thread solver, held in the workspace as `solver`
#pragma once
#include <Eigen/Core>

#include "treedyn/redmax/step.hpp"

namespace treedyn::redmax {

template <class S> struct KernelOps {
  static constexpr bool full_inverse = false;     // M_r⁻¹ = inverse_inertia(1)
  static constexpr bool passive_included = true;  // the joint springs: the system's own (redmax/forces.hpp)
  // the unconstrained continuous dynamics at t = 0 (fext: the model's point forces instead)
  template <class W>
  double forward_dynamics(const Model<S>&, W& w, const S* q, const S* qd, const S* tau, const S*, S* qdd) const {
    w.solver.forward_dynamics(q, qd, tau, S(0), qdd);
    return 0;
  }
  // M_r⁻¹ R (h = 0)
  template <class Pool>
  double inverse_inertia(const Model<S>& model, Pool& ws, const S* q, const S* R, int m, S* Y) const {
    Eigen::Map<Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic>>(Y, model.nv, m) = ws[0].solver.inverse_inertia(
        q, S(0), Eigen::Map<const Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic>>(R, model.nv, m));
    return 0;
  }
};

}  // namespace treedyn::redmax
