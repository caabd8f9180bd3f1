// The analytic derivatives of the dynamics as the bindings call them (algorithms/rnea_derivatives.hpp,
// algorithms/aba_derivatives.hpp): B states stored one after the other, spread over the threads
// (support/parallel.hpp), each thread with its own workspace, kept between calls. Declarations only:
// src/instantiate_derivatives.cpp instantiates them, so that a binding unit compiles no kernel.
// No Python object reaches them.
#pragma once
#include <memory>
#include <mutex>
#include <vector>

#include "treedyn/model/model.hpp"

namespace treedyn {

template <class S> struct RneaDerivativesData;
template <class S> struct AbaDerivativesData;

template <class S> class Derivatives {
 public:
  explicit Derivatives(const Model<S>& model);
  ~Derivatives();
  const Model<S>& model() const { return model_; }
  // start again from `model` (the Python model grew or its gravity was set): new workspaces
  void reset(const Model<S>& model);
  // per state b: q (nq), qd, qdd (nv), fext ((N+1) x 6 or null) -> ∂τ/∂q, ∂τ/∂q̇, M (nv x nv,
  // row-major; M may be null)
  void rnea(int B, const S* q, const S* qd, const S* qdd, const S* fext, S* dq, S* dv, S* M);
  // per state b: q (nq), qd, tau (nv), fext -> ∂q̈/∂q, ∂q̈/∂q̇, M⁻¹ (nv x nv, row-major)
  void aba(int B, const S* q, const S* qd, const S* tau, const S* fext, S* dq, S* dv, S* Minv);

 private:
  Model<S> model_;
  std::mutex mutex_;  // one call at a time: the workspaces are shared
  std::vector<std::unique_ptr<RneaDerivativesData<S>>> rnea_ws_;
  std::vector<std::unique_ptr<AbaDerivativesData<S>>> aba_ws_;
};

}  // namespace treedyn
