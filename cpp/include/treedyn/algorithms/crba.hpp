// Composite-rigid-body algorithm (RBDA Table 6.2; drumwright2012 Table 2): the mass matrix M(q).
#pragma once
#include "treedyn/algorithms/kinematics.hpp"

namespace treedyn {

// input: q (nq); output: data.M (nv x nv, both triangles)
template <class S> void crba(const Model<S>& model, Data<S>& data, const S* q) {
  kinematics(model, data, q);
  for (int i = 1; i <= model.N; ++i) data.Ic[i] = model.I[i];
  using Forces = Eigen::Matrix<S, 6, Eigen::Dynamic, 0, 6, 6>;
  Forces F;
  for (int i = model.N; i >= 1; --i) {
    const int p = model.parent[i], vi = model.v_index[i], ni = model.nv_i[i];
    // I^c_λ += X_iᵀ I^c_i X_i  (the 52m + 52a rbi transform)
    if (p > 0) data.Ic[p] += data.Xup[i].inv_apply(data.Ic[i]);
    if (ni == 0) continue;
    // F = I^c_i S_i; M_ii = S_iᵀ F; then F travels to the root: M_ji = S_jᵀ F, F = X_jᵀ F
    F.resize(6, ni);
    for (int k = 0; k < ni; ++k) F.col(k) = (data.Ic[i] * Motion<S>::from(data.S.col(vi + k))).vec();
    auto Mii = data.M.block(vi, vi, ni, ni);
    Mii.noalias() = data.S.middleCols(vi, ni).transpose() * F;
    if (ni > 1) Mii = (S(0.5) * (Mii + Mii.transpose())).eval();  // exactly symmetric
    for (int j = i; model.parent[j] > 0;) {
      for (int k = 0; k < ni; ++k) F.col(k) = data.Xup[j].inv_apply(Force<S>::from(F.col(k))).vec();
      j = model.parent[j];
      const int vj = model.v_index[j], nj = model.nv_i[j];
      if (nj == 0) continue;
      data.M.block(vj, vi, nj, ni).noalias() = data.S.middleCols(vj, nj).transpose() * F;
      data.M.block(vi, vj, ni, nj) = data.M.block(vj, vi, nj, ni).transpose();
    }
  }
}

}  // namespace treedyn
