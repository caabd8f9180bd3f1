// Composite-rigid-body algorithm (RBDA Table 6.2; drumwright2012 Table 2): the mass matrix M(q).
#pragma once
#include "treedyn/algorithms/kinematics.hpp"

namespace treedyn {

// Table 6.2's work at body i, leaves first (I^c_i complete): I^c_λ += X_iᵀ I^c_i X_i (the 52m + 52a
// rbi transform), F = I^c_i S_i (one force per column of S_i, into F), M_ii = S_iᵀ F + diag(armature_i).
// Returns nv_i.
template <class S> inline int crba_composite_step(const Model<S>& model, Data<S>& data, int i, Force<S>* F) {
  const int p = model.parent[i], vi = model.v_index[i], ni = model.nv_i[i];
  if (p > 0) data.Ic[p] += data.Xup[i].inv_apply(data.Ic[i]);
  for (int b = 0; b < ni; ++b) F[b] = data.Ic[i] * data.S[vi + b];
  for (int a = 0; a < ni; ++a)
    for (int b = 0; b <= a; ++b) data.M(vi + a, vi + b) = data.M(vi + b, vi + a) = dot(data.S[vi + a], F[b]);
  for (int a = 0; a < ni && model.has_armature; ++a) data.M(vi + a, vi + a) += model.armature[vi + a];
  return ni;
}

// input: data.Xup and data.S at q (kinematics); output: data.M (nv x nv, both triangles)
template <class S> inline void crba_from_kinematics(const Model<S>& model, Data<S>& data) {
  for (int i = 1; i <= model.N; ++i) data.Ic[i] = model.I[i];
  Force<S> F[6];
  for (int i = model.N; i >= 1; --i) {
    const int ni = crba_composite_step(model, data, i, F);
    // F travels to the root: F = X_jᵀ F, M_ji = S_jᵀ F
    for (int j = i; ni > 0 && model.parent[j] > 0;) {
      for (int b = 0; b < ni; ++b) F[b] = data.Xup[j].inv_apply(F[b]);
      j = model.parent[j];
      const int vj = model.v_index[j], vi = model.v_index[i];
      for (int a = 0; a < model.nv_i[j]; ++a)
        for (int b = 0; b < ni; ++b) data.M(vj + a, vi + b) = data.M(vi + b, vj + a) = dot(data.S[vj + a], F[b]);
    }
  }
}

// input: q (nq); output: data.M (nv x nv, both triangles)
template <class S> TREEDYN_ENTRY void crba(const Model<S>& model, Data<S>& data, const S* q) {
  kinematics(model, data, q);
  crba_from_kinematics(model, data);
}

// The same M(q) with the forces carried up in the axes of the tree's root body r (td.mass_matrix; the
// solvers and the operation counts keep crba above, RBDA's). With R_i = (^iE_r)ᵀ turning body i's
// coordinates into r's axes (^iE_r = ^iE_λ ^λE_r down the tree, the root's own the identity) and
// d_i = R_λ r_i, body i's origin seen from its parent's in those axes (r_i: ^iX_λ's translation),
// column i's F = I^c_i S_i is turned once, F^r = (R_i n, R_i f) at body i's origin; an ancestor j
// then needs no rotation, only the move of the moment to its origin, n ← n + d_prev × f (6m + 6a
// against inv_apply's 24m + 18a), and M_ji = S^rᵀ_j F^r with S^r_j = (R_j ω_j, R_j v_j), turned once
// per joint. The lever arms d_i are the joints' own offsets, not differences of world positions,
// so a tree far from the world origin is as accurate as one at it (a world-frame CRBA, which moves
// inertias to the world origin, is not: tests/kernels/test_minv.py, far from the origin). I^c_i and M_ii
// stay in link coordinates. Needs data.Er, data.dr and data.Sr (Data(model, true)).
// crba_root_axes on data.Xup and data.S at q (kinematics): the contact step's M, on ABA's kinematics
template <class S> inline void crba_root_axes_from_kinematics(const Model<S>& model, Data<S>& data) {
  for (int i = 1; i <= model.N; ++i) {
    const int p = model.parent[i];
    if (p > 0) {
      data.Er[i].noalias() = data.Xup[i].E * data.Er[p];  // ^iE_r = ^iE_λ ^λE_r
      data.dr[i] = mulT(data.Er[p], data.Xup[i].r);       // d_i = R_λ r_i
    } else {
      data.Er[i].setIdentity();
    }
    data.Ic[i] = model.I[i];
    for (int k = model.v_index[i]; k < model.v_index[i] + model.nv_i[i]; ++k)  // S^r = R_i S
      data.Sr[k] = {mulT(data.Er[i], data.S[k].ang), mulT(data.Er[i], data.S[k].lin)};
  }
  Force<S> F[6];
  for (int i = model.N; i >= 1; --i) {
    const int ni = crba_composite_step(model, data, i, F), vi = model.v_index[i];
    if (ni == 0 || model.parent[i] == 0) continue;
    for (int b = 0; b < ni; ++b) F[b] = {mulT(data.Er[i], F[b].ang), mulT(data.Er[i], F[b].lin)};  // F^r
    for (int j = i; model.parent[j] > 0;) {
      const Vec3<S>& d = data.dr[j];  // j's origin seen from its parent's
      j = model.parent[j];
      for (int b = 0; b < ni; ++b) F[b].ang += cross(d, F[b].lin);
      const int vj = model.v_index[j];
      for (int a = 0; a < model.nv_i[j]; ++a)
        for (int b = 0; b < ni; ++b) data.M(vj + a, vi + b) = data.M(vi + b, vj + a) = dot(data.Sr[vj + a], F[b]);
    }
  }
}

template <class S> TREEDYN_ENTRY void crba_root_axes(const Model<S>& model, Data<S>& data, const S* q) {
  kinematics(model, data, q);
  crba_root_axes_from_kinematics(model, data);
}

}  // namespace treedyn
