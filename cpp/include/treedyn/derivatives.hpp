// The analytic derivatives of the dynamics as the bindings call them (algorithms/rnea_derivatives.hpp,
// algorithms/aba_derivatives.hpp): B states stored one after the other, spread over the threads
// (parallel.hpp), each with its own workspace. Declarations only: src/instantiate_derivatives.cpp
// instantiates them, so that a binding unit compiles no kernel. No Python object reaches them.
#pragma once
#include "treedyn/model/model.hpp"

namespace treedyn {

// per state b: q (nq), qd, qdd (nv), fext ((N+1) x 6 or null) -> ∂τ/∂q, ∂τ/∂q̇, M (nv x nv,
// row-major; M may be null)
template <class S>
void rnea_derivatives_batch(const Model<S>& model, int B, const S* q, const S* qd, const S* qdd, const S* fext, S* dq,
                            S* dv, S* M);
// per state b: q (nq), qd, tau (nv), fext -> ∂q̈/∂q, ∂q̈/∂q̇, M⁻¹ (nv x nv, row-major)
template <class S>
void aba_derivatives_batch(const Model<S>& model, int B, const S* q, const S* qd, const S* tau, const S* fext, S* dq,
                           S* dv, S* Minv);

}  // namespace treedyn
