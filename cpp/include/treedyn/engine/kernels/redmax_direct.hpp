// The kernel of solver "redmax-direct" in the engine (engine/engine.hpp): one Direct per thread, so that
// a batch of forward dynamics runs over the threads; step and the rest use thread 0's
#pragma once
#include "treedyn/engine/kernels/redmax_ops.hpp"
#include "treedyn/redmax/direct.hpp"

namespace treedyn::redmax {

template <class S> struct RedMaxDirectKernel : KernelOps<S> {
  struct Workspace {
    Direct<S> solver;
    Workspace(const Model<S>&, const RedMaxDirectKernel& k) : solver(k.sys, k.leaf_to_root) {}
  };
  const System<S> sys;
  const bool leaf_to_root;
  RedMaxDirectKernel(const Model<S>&, const System<S>& system, const bool& ltr) : sys(system), leaf_to_root(ltr) {}
};

}  // namespace treedyn::redmax
