// Composite-rigid-body algorithm (RBDA Table 6.2; drumwright2012 Table 2): the mass matrix M(q).
#pragma once
#include "treedyn/algorithms/kinematics.hpp"

namespace treedyn {

// input: q (nq); output: data.M (nv x nv, both triangles)
template <class S> TREEDYN_ENTRY void crba(const Model<S>& model, Data<S>& data, const S* q) {
  kinematics(model, data, q);
  for (int i = 1; i <= model.N; ++i) data.Ic[i] = model.I[i];
  Force<S> F[6];
  for (int i = model.N; i >= 1; --i) {
    const int p = model.parent[i], vi = model.v_index[i], ni = model.nv_i[i];
    // I^c_λ += X_iᵀ I^c_i X_i  (the 52m + 52a rbi transform)
    if (p > 0) data.Ic[p] += data.Xup[i].inv_apply(data.Ic[i]);
    if (ni == 0) continue;
    // F = I^c_i S_i; M_ii = S_iᵀ F; then F travels to the root: F = X_jᵀ F, M_ji = S_jᵀ F
    for (int b = 0; b < ni; ++b) F[b] = data.Ic[i] * data.S[vi + b];
    for (int a = 0; a < ni; ++a)
      for (int b = 0; b <= a; ++b) data.M(vi + a, vi + b) = data.M(vi + b, vi + a) = dot(data.S[vi + a], F[b]);
    for (int j = i; model.parent[j] > 0;) {
      for (int b = 0; b < ni; ++b) F[b] = data.Xup[j].inv_apply(F[b]);
      j = model.parent[j];
      const int vj = model.v_index[j];
      for (int a = 0; a < model.nv_i[j]; ++a)
        for (int b = 0; b < ni; ++b) data.M(vj + a, vi + b) = data.M(vi + b, vj + a) = dot(data.S[vj + a], F[b]);
    }
  }
}

}  // namespace treedyn
