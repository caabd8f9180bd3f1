// The passive joint force of the model's spring–dampers (MuJoCo's qfrc_passive, joint part):
//   τ_p = −k ∘ (q ⊖ q_rest) − d ∘ q̇
// per velocity coordinate, k = model.stiffness, d = model.damping, q ⊖ q_rest by
// joint_displacement (model/configuration.hpp: a spherical joint's rotation vector of
// q_rest⁻¹ q; a free joint has damping only). Every rigid-body solver's forward dynamics adds it to
// τ (engine/engine_impl.hpp), inverse dynamics subtracts it, so that ID(FD(τ)) = τ; the RedMax
// solvers treat the same springs implicitly (redmax/forces.hpp) and the contact step's damping is
// implicit (contact/step.hpp). The armature (rotor inertia) is not here: it is part of M, in every
// kernel's pivots and mass matrix.
#pragma once
#include <cmath>

#include "treedyn/model/configuration.hpp"

namespace treedyn {

// out = τ + sign τ_p(q, q̇) (out may be τ; sign −1: inverse dynamics')
template <class S>
void add_passive_force(const Model<S>& model, const S* q, const S* qd, const S* tau, S* out, S sign = S(1)) {
  for (int i = 1; i <= model.N; ++i) {
    const int vi = model.v_index[i], ni = model.nv_i[i];
    if (ni == 0) continue;  // (a fixed joint: nothing, and its q_index may be one past q's end)
    S x[6];
    joint_displacement(model.kind[i], q + model.q_index[i], model.q_rest.data() + model.q_index[i], x);
    for (int k = 0; k < ni; ++k)
      out[vi + k] = tau[vi + k] - sign * (model.stiffness[vi + k] * x[k] + model.damping[vi + k] * qd[vi + k]);
  }
}

// The partials of −τ_p (what inverse dynamics' τ = M q̈ + c − τ_p adds) added to dq = ∂τ/∂q and
// dv = ∂τ/∂q̇ (row-major nv x nv; ∂/∂q in the tangent space, q ⊕ ε e_k): diag(d) to dv; diag(k) to dq,
// for a spherical joint k ∘ J_r⁻¹(θ), θ = q_rest⁻¹ q's rotation vector moving by right
// multiplication, J_r⁻¹(θ) = 1 + ½[θ]× + (1/θ² − (1 + cos θ)/(2θ sin θ))[θ]×² (the inverse of
// SO(3)'s right Jacobian)
template <class S> void add_passive_partials(const Model<S>& model, const S* q, S* dq, S* dv) {
  using std::cos;
  using std::sin;
  using std::sqrt;
  const int nv = model.nv;
  for (int i = 1; i <= model.N; ++i) {
    const int vi = model.v_index[i], ni = model.nv_i[i];
    for (int k = vi; k < vi + ni; ++k) dv[std::size_t(k) * nv + k] += model.damping[k];
    if (model.kind[i] == JointKind::Spherical) {
      S x[3];
      joint_displacement(model.kind[i], q + model.q_index[i], model.q_rest.data() + model.q_index[i], x);
      const Vec3<S> th(x[0], x[1], x[2]);
      const S t = sqrt(dot(th, th));
      const S c = t > S(1e-4) ? S(1) / (t * t) - (S(1) + cos(t)) / (S(2) * t * sin(t)) : S(1) / S(12) + t * t / S(720);
      const Mat3<S> X = skew<S>(th), Jinv = Mat3<S>::Identity() + S(0.5) * X + c * X * X;
      for (int r = 0; r < 3; ++r)
        for (int col = 0; col < 3; ++col)
          dq[std::size_t(vi + r) * nv + vi + col] += model.stiffness[vi + r] * Jinv(r, col);
    } else if (model.kind[i] != JointKind::Free) {
      for (int k = vi; k < vi + ni; ++k) dq[std::size_t(k) * nv + k] += model.stiffness[k];
    }
  }
}

}  // namespace treedyn
