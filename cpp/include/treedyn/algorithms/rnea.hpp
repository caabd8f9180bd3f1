// Recursive Newton-Euler algorithm (RBDA Table 5.1; ascher-pai-cloutier1996 §2):
// τ = M(q) q̈ + c(q, q̇) − Σ Jᵀ f_ext, in link coordinates, M with the armature (τ += armature ∘ q̈).
// q̈ = nullptr gives the bias c. The joints' passive force is not here (algorithms/passive.hpp).
#pragma once
#include "treedyn/algorithms/kinematics.hpp"

namespace treedyn {

// inputs: q (nq), qd (nv), qdd (nv or null), fext ((N+1) x 6 or null); output: tau (nv)
template <class S>
TREEDYN_ENTRY void rnea(const Model<S>& model, Data<S>& data, const S* q, const S* qd, const S* qdd, const S* fext,
                        S* tau) {
  // forward pass: v_i = X v_λ + S q̇, a_i = X a_λ + S q̈ + c_J + v_i × S q̇, f_i = I a + v ×* I v − f_ext
  const Motion<S> a0 = gravity_acceleration(model);
  for (int i = 1; i <= model.N; ++i) {
    kinematics_step(model, data, i, q);
    const int p = model.parent[i], vi = model.v_index[i], ni = model.nv_i[i];
    const Motion<S>* Si = data.S.data() + vi;
    const Motion<S> vJ = subspace_times<S>(Si, ni, qd + vi);
    const Transform<S>& X = data.Xup[i];
    data.v[i] = p > 0 ? X.apply(data.v[p]) + vJ : vJ;
    data.a[i] = X.apply(p > 0 ? data.a[p] : a0) + joint_bias(model, i, Si, qd + vi) + data.v[i].cross(vJ);
    if (qdd) data.a[i] += subspace_times<S>(Si, ni, qdd + vi);
    const RigidInertia<S>& I = model.I[i];
    data.f[i] = I * data.a[i] + cross_force(data.v[i], I * data.v[i]) - external_force(fext, i);
  }
  // backward pass: τ_i = S_iᵀ f_i, f_λ += X_iᵀ f_i
  for (int i = model.N; i >= 1; --i) {
    const int p = model.parent[i], vi = model.v_index[i];
    for (int k = 0; k < model.nv_i[i]; ++k) {
      tau[vi + k] = dot(data.S[vi + k], data.f[i]);
      if (qdd && model.has_armature) tau[vi + k] += model.armature[vi + k] * qdd[vi + k];
    }
    if (p > 0) data.f[p] += data.Xup[i].inv_apply(data.f[i]);
  }
}

// q̈ ← τ − c(q, q̇, f_ext), the bias c by RNEA (left in data.bias): the right-hand side of M q̈ = τ − c
template <class S>
void bias_residual(const Model<S>& model, Data<S>& data, const S* q, const S* qd, const S* tau, const S* fext, S* qdd) {
  rnea(model, data, q, qd, static_cast<const S*>(nullptr), fext, data.bias.data());
  for (int k = 0; k < model.nv; ++k) qdd[k] = tau[k] - data.bias[k];
}

}  // namespace treedyn
