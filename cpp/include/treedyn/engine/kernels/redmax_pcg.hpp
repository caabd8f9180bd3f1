// The kernel of solver "redmax-pcg" in the engine (engine/engine.hpp): one Pcg per thread, so that a
// batch of forward dynamics runs over the threads; step (with its warm starts) uses thread 0's
#pragma once
#include "treedyn/engine/kernels/redmax_ops.hpp"
#include "treedyn/redmax/pcg.hpp"

namespace treedyn::redmax {

template <class S> struct RedMaxPcgKernel : KernelOps<S> {
  struct Workspace {
    Pcg<S> solver;
    Workspace(const Model<S>&, const RedMaxPcgKernel& k) : solver(k.sys, k.tol, k.max_iter) {}
  };
  const System<S> sys;
  const S tol;
  const int max_iter;
  RedMaxPcgKernel(const Model<S>&, const System<S>& system, const S& tolerance, const int& iterations)
      : sys(system), tol(tolerance), max_iter(iterations) {}
};

}  // namespace treedyn::redmax
