// Θ(n²) inverse of the joint-space inertia matrix (drumwright2012): M⁻¹R in Θ(nm) by applying
// unit impulses and propagating them through articulated-body inertias, in the global frame (§5).
//
//   mMultInv     Alg. 1: fixed base; M⁻¹R one column of R at a time
//   mMultInvFB   Alg. 2: floating base (body 1 is joined to the world by a free joint and carries
//                the whole tree); the base velocity change comes from Î^A_0⁻¹ (lines 6-10)
//   mInv         Alg. 1 / 2 with R = 1: the full M⁻¹, every column at once (see the note there)
//
// Both need, once per configuration (§5 "Require" and §5.2): the spatial axes ŝ and the
// articulated inertias Î^A in the global frame, and Î^A ŝ and ŝᵀÎ^A ŝ. The global frame has the
// world's axes and its origin at the tree's root (minv_chain_step): about the world origin, M⁻¹
// would lose digits to the square of the tree's distance from it. Joints of any number of
// DoF: ŝ_i is 6 x n_i, Î^A ŝ too, and ŝᵀÎ^A ŝ is n_i x n_i, factored (LLᵀ) once. Notation:
//   u_i = R_ik − ŝ_iᵀŶ^A_i        the numerator of line 5, kept for line 8
//   Ũ_i = Î^A_i ŝ_i (ŝᵀÎ^Aŝ)⁻¹   so that line 5 is Ŷ^A_λ += Ŷ^A_i + Ũ_i u_i
// Line 5 as printed omits the "+ Ŷ^A_i" that carries the impulses of the bodies beyond i (it is
// the p^a_i = p^A_i + U D⁻¹ u of the articulated-body algorithm); without it M⁻¹ is wrong for
// every chain longer than two.
#pragma once
#include <Eigen/Cholesky>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "treedyn/algorithms/aba.hpp"
#include "treedyn/algorithms/minv_columns.hpp"
#include "treedyn/parallel.hpp"

namespace treedyn {

// the end of body i's coordinate range: the subtree i..last[i] owns coordinates [v_index[i], v_end)
template <class S> inline int subtree_v_end(const Model<S>& model, int i) {
  const int l = model.last[i];
  return model.v_index[l] + model.nv_i[l];
}

// Alg. 2 applies when body 1 floats (a free joint) and carries every other body
template <class S> inline bool is_floating_base(const Model<S>& model) {
  return model.N >= 1 && model.kind[1] == JointKind::Free && model.last[1] == model.N;
}

template <class S> struct MinvData {
  using Small = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic, 0, 6, 6>;  // no heap
  // structure
  std::vector<int> joint_of;             // nv: the body whose joint owns each coordinate
  bool floating_base = false;            // Alg. 2 (mMultInvFB) rather than Alg. 1
  int first = 1;                         // first joint of the passes: 2 under Alg. 2 (1 is the base)
  // per configuration, global frame (§5 "Require"; §5.2: computed once)
  std::vector<Transform<S>> X0;          // ^iX_0: global frame (world axes, origin at i's root) -> body i
  std::vector<ArticulatedInertia<S>> IA; // Î^A_i (Î^a_i = Î^A_i − Ũ ŝᵀÎ^A after its step, in place)
  std::vector<Motion<S>> s;              // nv: the columns of ŝ_i
  std::vector<Force<S>> IAs;             // nv: the columns of Î^A_i ŝ_i
  std::vector<Force<S>> Ut;              // nv: the columns of Ũ_i = Î^A_i ŝ_i (ŝᵀÎ^A ŝ)⁻¹
  std::vector<Small> Dinv;               // (ŝ_iᵀÎ^A_i ŝ_i)⁻¹
  Mat6<S> IA0inv;                        // Alg. 2: Î^A_0⁻¹ (the base's articulated inertia)
  // the same per joint, packed for mInv's column loops: ŝ, Î^Aŝ, Ũ (n_i x 6 each, one row per
  // joint column) and (ŝᵀÎ^Aŝ)⁻¹ (n_i x n_i), at 24 n_i + n_i² entries from rows_at[i]
  std::vector<S> rows;
  std::vector<std::size_t> rows_at;
  // per column of R (Alg. 1 lines 2-10); a thread solving columns uses its own
  struct Column {
    std::vector<Force<S>> Y;             // Ŷ^A_i
    std::vector<Motion<S>> dv;           // Δv̂_i
    std::vector<char> busy;              // Ŷ^A_i ≠ 0̂ (an impulse has reached body i)
    std::vector<S> u;                    // nv: u_i
  } col;

  explicit MinvData(const Model<S>& model)
      : joint_of(model.nv), X0(model.N + 1, Transform<S>::identity()),
        IA(model.N + 1, ArticulatedInertia<S>::zero()), s(model.nv, Motion<S>::zero()),
        IAs(model.nv, Force<S>::zero()), Ut(model.nv, Force<S>::zero()), Dinv(model.N + 1),
        IA0inv(Mat6<S>::Identity()),
        col{std::vector<Force<S>>(model.N + 1, Force<S>::zero()), std::vector<Motion<S>>(model.N + 1, Motion<S>::zero()),
            std::vector<char>(model.N + 1, 0), std::vector<S>(model.nv, S(0))} {
    for (int i = 1; i <= model.N; ++i)
      for (int a = 0; a < model.nv_i[i]; ++a) joint_of[model.v_index[i] + a] = i;
    for (int i = 0; i <= model.N; ++i) Dinv[i].setZero(model.nv_i[i], model.nv_i[i]);
    rows_at.assign(model.N + 2, 0);
    for (int i = 0; i <= model.N; ++i) rows_at[i + 1] = rows_at[i] + 18 * model.nv_i[i] + model.nv_i[i] * model.nv_i[i];
    rows.assign(rows_at[model.N + 1], S(0));
    floating_base = is_floating_base(model);
    first = floating_base ? 2 : 1;
  }
};

// ---- once per configuration -----------------------------------------------------------------

// X1 X2 with all nine entries of E1 E2 multiplied out (36m + 27a). Transform's 33m product takes
// the third row as the cross product of the first two, which is exact for rotations but, chained
// down a long branch, amplifies rounding by about 4/3 per link: ^iX_0 of a 400-link chain would
// no longer be a rotation. Once per link per configuration, so the 3 extra multiplications are moot.
template <class S> inline Transform<S> chain_product(const Transform<S>& X1, const Transform<S>& X2) {
  Transform<S> X;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) X.E(i, j) = X1.E(i, 0) * X2.E(0, j) + X1.E(i, 1) * X2.E(1, j) + X1.E(i, 2) * X2.E(2, j);
  X.r = X2.r + mulT(X2.E, X1.r);
  return X;
}

// root to leaves: ^iX_0 = ^iX_λ ^λX_0, ŝ_i = ⁰X_i ŝ'_i (Table 1 row 1), Î_i = ⁰X_i* I_i ^iX_0
// (Table 1 row 2), and Î^A_i = Î_i to start eq. (7). In three parts, of which only the middle one
// needs the parent's result:
//   joint part: ^iX_λ = X_J(q_i) X_T(i) (kept in X0[i] for now) and ŝ'_i (kept in s)
template <class S> void minv_joint_step(const Model<S>& model, MinvData<S>& w, int i, const S* q) {
  const S* qi = q + model.q_index[i];
  w.X0[i] = joint_transform(model, i, qi) * model.X_tree[i];
  joint_subspace(model, i, qi, w.s.data() + model.v_index[i]);
}
//   chain part: ^iX_0 = ^iX_λ ^λX_0, where 0 is the global frame of i's tree (its root and the
//   root's subtree): the world's axes, and its origin at the root body's origin at q.
//   drumwright2012 §5 computes "in the global frame" and leaves its origin free: M⁻¹ does not
//   depend on it, but its rounding does. About an origin at distance d from the bodies, Î's
//   coupling blocks carry m d× and its rotational block m d², a revolute ŝ carries d × u, and
//   ŝᵀÎ^Aŝ and the articulated inertias cancel them down to ~m ℓ² (ℓ the tree's size): M⁻¹ loses
//   (d/ℓ)² to cancellation (about the world origin, the backward error of a 0.8 m chain was
//   ~2e4·n·u at 100 m, ~3e6·n·u at 1 km). About the root's origin, d ≤ ℓ and no world-sized number
//   enters: the positions are summed from the root as in link coordinates. The trees never
//   exchange spatial quantities (no Î^A, Ŷ^A or Δv̂ passes a root), so each may have its own
//   origin. (The mean of the tree's body origins, tried too, was no better: up to 0.17·n·u
//   against 0.01·n·u on a floating 100-link chain.)
template <class S> void minv_chain_step(const Model<S>& model, MinvData<S>& w, int i) {
  const int p = model.parent[i];
  if (p > 0) w.X0[i] = chain_product(w.X0[i], w.X0[p]);
  else w.X0[i].r.setZero();  // a root: its origin is the global frame's
}
//   world part: ŝ_i and Î_i in the global frame
template <class S> void minv_world_step(const Model<S>& model, MinvData<S>& w, int i) {
  const int vi = model.v_index[i];
  for (int b = 0; b < model.nv_i[i]; ++b) w.s[vi + b] = w.X0[i].inv_apply(w.s[vi + b]);
  w.IA[i] = ArticulatedInertia<S>::from(w.X0[i].inv_apply(model.I[i]));
}
template <class S> void minv_global_frame_step(const Model<S>& model, MinvData<S>& w, int i, const S* q) {
  minv_joint_step(model, w, i, q);
  minv_chain_step(model, w, i);
  minv_world_step(model, w, i);
}

// leaves to root, eq. (7) in the global frame (no transforms): Î^A ŝ and ŝᵀÎ^A ŝ (§5.2),
// (ŝᵀÎ^A ŝ)⁻¹, Ũ, then Î^A_λ += Î^A_i − Î^A ŝ (ŝᵀÎ^A ŝ)⁻¹ ŝᵀÎ^A
template <class S> void minv_articulated_inertia_step(const Model<S>& model, MinvData<S>& w, int i) {
  const int p = model.parent[i], vi = model.v_index[i], ni = model.nv_i[i];
  ArticulatedInertia<S>& IA = w.IA[i];
  auto& Dinv = w.Dinv[i];
  if (ni == 1) {
    w.IAs[vi] = IA * w.s[vi];
    const S D = dot(w.s[vi], w.IAs[vi]);
    if (!(D > S(0)) || !std::isfinite(static_cast<double>(D))) throw_singular(model, i);
    Dinv(0, 0) = S(1) / D;
    w.Ut[vi] = w.IAs[vi] * Dinv(0, 0);
    IA.subtract_outer(w.IAs[vi], Dinv(0, 0));
  } else if (ni > 1) {
    typename MinvData<S>::Small D(ni, ni);
    for (int b = 0; b < ni; ++b) w.IAs[vi + b] = IA * w.s[vi + b];
    for (int a = 0; a < ni; ++a)
      for (int b = 0; b < ni; ++b) D(a, b) = dot(w.s[vi + a], w.IAs[vi + b]);
    Eigen::LLT<typename MinvData<S>::Small> llt(D);
    if (llt.info() != Eigen::Success) throw_singular(model, i);
    Dinv.setIdentity(ni, ni);
    llt.solveInPlace(Dinv);
    for (int a = 0; a < ni; ++a) {
      Force<S> t = w.IAs[vi] * Dinv(0, a);
      for (int b = 1; b < ni; ++b) t += w.IAs[vi + b] * Dinv(b, a);
      w.Ut[vi + a] = t;
    }
    Eigen::Matrix<S, 6, Eigen::Dynamic, 0, 6, 6> Um(6, ni), Utm(6, ni);
    for (int b = 0; b < ni; ++b) {
      Um.col(b) = w.IAs[vi + b].vec();
      Utm.col(b) = w.Ut[vi + b].vec();
    }
    IA = ArticulatedInertia<S>::from_matrix(IA.matrix() - Utm * Um.transpose());
  }
  if (p > 0) w.IA[p] += IA;
  // packed copies for mInv's column loops
  S* rows = w.rows.data() + w.rows_at[i];
  for (int a = 0; a < ni; ++a) {
    for (int r = 0; r < 3; ++r) {
      rows[6 * a + r] = w.s[vi + a].ang[r], rows[6 * a + r + 3] = w.s[vi + a].lin[r];
      rows[6 * (ni + a) + r] = w.IAs[vi + a].ang[r], rows[6 * (ni + a) + r + 3] = w.IAs[vi + a].lin[r];
      rows[6 * (2 * ni + a) + r] = w.Ut[vi + a].ang[r], rows[6 * (2 * ni + a) + r + 3] = w.Ut[vi + a].lin[r];
    }
    for (int b = 0; b < ni; ++b) rows[18 * ni + ni * a + b] = Dinv(a, b);
  }
}

template <class S> [[noreturn]] void throw_singular_base(const Model<S>& model) {
  throw SingularJoint("the floating base '" + model.name[1] + "' has a singular articulated inertia Î^A_0: "
                      "the mechanism has no inertia along some direction of the base's motion");
}

// Alg. 2's Î^A_0⁻¹: the base body's articulated inertia (whole mechanism) is inverted once
template <class S> void minv_base_inertia_step(const Model<S>& model, MinvData<S>& w) {
  const Mat6<S> IA0 = w.IA[1].matrix();
  Eigen::LLT<Mat6<S>> llt(IA0);
  if (llt.info() != Eigen::Success) throw_singular_base(model);
  w.IA0inv.setIdentity();
  llt.solveInPlace(w.IA0inv);
}

// everything Alg. 1 / 2 "Require": once per configuration, O(N)
template <class S> void minv_precompute(const Model<S>& model, MinvData<S>& w, const S* q) {
  // (not shared among threads: the joint and world parts could be, for about 35 us of 1.5 ms at
  // n = 1000, but every barrier costs milliseconds as soon as another process takes a core)
  for (int i = 1; i <= model.N; ++i) minv_global_frame_step(model, w, i, q);
  for (int i = model.N; i >= w.first; --i) minv_articulated_inertia_step(model, w, i);
  if (w.floating_base) minv_base_inertia_step(model, w);
}

// ---- Alg. 2's base: ŝ_base⁻ᵀ and ŝ_base⁻¹ --------------------------------------------------
// The free joint's coordinates are (linear, angular) in body coordinates: ŝ_base = ⁰X_1 Π with Π
// the swap to the [ω; v] order. A base impulse (R_lin, R_ang) is the body-frame force
// [R_ang; R_lin] seen from the global frame; a global-frame Δv̂_0 is (lin, ang) of ^1X_0 Δv̂_0 (^1X_0
// is a pure rotation: the global frame's origin is the base's, minv_chain_step).
template <class S> inline Force<S> base_impulse(const MinvData<S>& w, const S* r) {
  return w.X0[1].inv_apply(Force<S>{Vec3<S>(r[3], r[4], r[5]), Vec3<S>(r[0], r[1], r[2])});
}
template <class S> inline void base_coordinates(const MinvData<S>& w, const Motion<S>& dv0, S* out) {
  const Motion<S> m = w.X0[1].apply(dv0);
  for (int k = 0; k < 3; ++k) {
    out[k] = m.lin[k];
    out[3 + k] = m.ang[k];
  }
}
template <class S> inline Motion<S> mul6(const Mat6<S>& A, const Force<S>& f) {
  Motion<S> m;
  for (int r = 0; r < 3; ++r) {
    m.ang[r] = A(r, 0) * f.ang[0] + A(r, 1) * f.ang[1] + A(r, 2) * f.ang[2] + A(r, 3) * f.lin[0] +
               A(r, 4) * f.lin[1] + A(r, 5) * f.lin[2];
    m.lin[r] = A(r + 3, 0) * f.ang[0] + A(r + 3, 1) * f.ang[1] + A(r + 3, 2) * f.ang[2] +
               A(r + 3, 3) * f.lin[0] + A(r + 3, 4) * f.lin[1] + A(r + 3, 5) * f.lin[2];
  }
  return m;
}

// ---- one column of R: Alg. 1 / Alg. 2 ---------------------------------------------------------

// lines 4-5 at joint i: u_i = R_ik − ŝᵀŶ^A_i; Ŷ^A_λ += Ŷ^A_i + Ũ_i u_i. Nothing to do when no
// impulse has reached i and R_ik = 0 (§5.2: propagation starts where the impulse is non-zero).
template <class S>
void mMultInv_impulse_step(const Model<S>& model, const MinvData<S>& w, typename MinvData<S>::Column& c, int i,
                           const S* r) {
  const int p = model.parent[i], vi = model.v_index[i], ni = model.nv_i[i];
  const bool reached = c.busy[i];
  bool nonzero = reached;
  for (int a = 0; a < ni; ++a) {
    c.u[vi + a] = reached ? r[vi + a] - dot(w.s[vi + a], c.Y[i]) : r[vi + a];
    nonzero = nonzero || r[vi + a] != S(0);
  }
  if (!nonzero || p == 0) return;  // the world takes no impulse
  Force<S> pa;
  if (ni == 0) {
    pa = c.Y[i];
  } else {
    pa = w.Ut[vi] * c.u[vi];
    for (int a = 1; a < ni; ++a) pa += w.Ut[vi + a] * c.u[vi + a];
    if (reached) pa += c.Y[i];
  }
  if (c.busy[p]) c.Y[p] += pa;
  else c.Y[p] = pa, c.busy[p] = 1;
}

// lines 7-10 at joint i: Δq̂_i = (ŝᵀÎ^Aŝ)⁻¹(u_i − ŝᵀÎ^A Δv̂_λ), Δv̂_i = Δv̂_λ + ŝ_i Δq̂_i
template <class S>
void mMultInv_velocity_step(const Model<S>& model, const MinvData<S>& w, typename MinvData<S>::Column& c, int i,
                            S* out) {
  const int p = model.parent[i], vi = model.v_index[i], ni = model.nv_i[i];
  const bool root = p == 0;  // Δv̂_0 = 0̂ under Alg. 1
  if (ni == 0) {
    c.dv[i] = root ? Motion<S>::zero() : c.dv[p];
    return;
  }
  if (ni == 1) {
    const S dq = root ? w.Dinv[i](0, 0) * c.u[vi]
                      : w.Dinv[i](0, 0) * (c.u[vi] - dot(c.dv[p], w.IAs[vi]));
    out[vi] = dq;
    c.dv[i] = root ? w.s[vi] * dq : c.dv[p] + w.s[vi] * dq;
    return;
  }
  S e[6];
  for (int b = 0; b < ni; ++b) e[b] = root ? c.u[vi + b] : c.u[vi + b] - dot(c.dv[p], w.IAs[vi + b]);
  Motion<S> dv = root ? Motion<S>::zero() : c.dv[p];
  for (int a = 0; a < ni; ++a) {
    S dq = w.Dinv[i](a, 0) * e[0];
    for (int b = 1; b < ni; ++b) dq += w.Dinv[i](a, b) * e[b];
    out[vi + a] = dq;
    dv += w.s[vi + a] * dq;
  }
  c.dv[i] = dv;
}

// the last joint at which the column r has a non-zero impulse (0 when r = 0)
template <class S> inline int last_impulse_joint(const Model<S>& model, const MinvData<S>& w, const S* r) {
  for (int k = model.nv - 1; k >= 0; --k)
    if (r[k] != S(0)) return w.joint_of[k];
  return 0;
}

// Alg. 1: out = M⁻¹ r for one column r (nv), fixed base
template <class S>
void mMultInv(const Model<S>& model, const MinvData<S>& w, typename MinvData<S>::Column& c, const S* r, S* out) {
  const int start = last_impulse_joint(model, w, r);
  if (start == 0) {
    for (int k = 0; k < model.nv; ++k) out[k] = S(0);
    return;
  }
  for (int i = 0; i <= start; ++i) c.busy[i] = 0;                               // lines 2-3
  for (int k = model.v_index[start] + model.nv_i[start]; k < model.nv; ++k) c.u[k] = S(0);  // R = 0 beyond start
  for (int i = start; i >= 1; --i) mMultInv_impulse_step(model, w, c, i, r);        // lines 4-5
  for (int i = 1; i <= model.N; ++i) mMultInv_velocity_step(model, w, c, i, out);   // lines 6-10
}

// Alg. 2: out = M⁻¹ r for one column r (nv), floating base (body 1 free, carrying the tree)
template <class S>
void mMultInvFB(const Model<S>& model, const MinvData<S>& w, typename MinvData<S>::Column& c, const S* r, S* out) {
  const int start = last_impulse_joint(model, w, r);
  if (start == 0) {
    for (int k = 0; k < model.nv; ++k) out[k] = S(0);
    return;
  }
  for (int i = 0; i <= start; ++i) c.busy[i] = 0;                               // lines 2-3
  for (int k = model.v_index[start] + model.nv_i[start]; k < model.nv; ++k) c.u[k] = S(0);
  for (int i = start; i >= 2; --i) mMultInv_impulse_step(model, w, c, i, r);        // lines 4-5
  // lines 6-10: Δv̂_0 = Î^A_0⁻¹(ŝ_base⁻ᵀ R_base,k − Ŷ^A_0) (the sign of Ŷ^A is ours: Ŷ^A is the
  // impulse the tree passes to the base); u_k = the base coordinates of Δv̂_0
  Force<S> f = Force<S>::zero();
  bool any = false;
  for (int k = 0; k < 6; ++k) any = any || r[k] != S(0);
  if (any) f = base_impulse(w, r);
  if (c.busy[1]) f -= c.Y[1];
  c.dv[1] = mul6(w.IA0inv, f);
  base_coordinates(w, c.dv[1], out);
  for (int i = 2; i <= model.N; ++i) mMultInv_velocity_step(model, w, c, i, out);   // lines 11-14
}

// ---- the full M⁻¹: Alg. 1 / 2 with R = 1, all columns at once ----------------------------------
//
// With R = 1, column k's impulse starts at the joint owning coordinate k (§5.2), so Ŷ^A_i(:, k) is
// non-zero only for k in i's subtree, a contiguous range of columns [v_i, v_end(i)). Sibling
// subtrees own disjoint ranges, so every Ŷ^A_i of the backward pass lives in ONE 6 x nv array F
// (in place: after joint i's step, F(:, subtree(i)) holds what i passes to λ(i)), and Δv̂ in one
// 6 x nv array V. M⁻¹ is symmetric: row i is only computed for the columns of i's subtree (the
// upper triangle's entries of ancestor pairs), each joint's lines 5 and 8 working on a contiguous
// range of columns (vectorised over columns: minv_columns.hpp). The other upper-triangle entries
// pair coordinates j, k in different branches of a body a; for them (R = e_j, e_k)
//   M⁻¹(j, k) = −Ŷ^A_a(:, j)ᵀ Δv̂_a(:, k)
// (both sides are −e_jᵀ(ŝᵀÎ^Aŝ)⁻¹(Î^Aŝ)ᵀ P ⋯ P Δv̂_a(:, k), P = 1 − ŝ(ŝᵀÎ^Aŝ)⁻¹(Î^Aŝ)ᵀ the
// projections along the path from a to j), one 6-term dot product, taken from F saved at a in the
// backward pass and V at a in the forward pass. The lower triangle is mirrored strip by strip as
// the forward pass completes rows. Columns are independent, so threads split them.

// the column loops, compiled for this CPU's best instruction set (src/minv_kernels*.cpp)
template <class S> struct MinvKernels {
  void (*impulse[4])(const S*, const S*, S*, long, S*, long, int, int);  // NI = 1, 2, 3, 6
  void (*velocity[4])(const S*, const S*, const S*, S*, long, S*, long, int, int, bool);
  void (*impulse_pair)(const S*, const S*, const S*, const S*, S*, long, S*, S*, int, int);
  void (*velocity_pair)(const S*, const S*, S, const S*, const S*, S, S*, long, S*, S*, int, int);
  void (*cross)(const S*, const S*, long, S*, int, int);
  void (*cross_col)(const S*, long, const S*, S*, long, int);
  void (*base)(const S*, const S*, const S*, S*, long, S*, long, int, int);
  int (*mirror)(S*, long, int, int, int, int);  // non-zero if it read inf / NaN
  const char* isa;
};
#define TREEDYN_MINV_KERNEL_TABLE(S, NS)                                                               \
  MinvKernels<S> {                                                                                     \
    {&NS::impulse_columns<S, 1>, &NS::impulse_columns<S, 2>, &NS::impulse_columns<S, 3>,              \
     &NS::impulse_columns<S, 6>},                                                                      \
        {&NS::velocity_columns<S, 1>, &NS::velocity_columns<S, 2>, &NS::velocity_columns<S, 3>,       \
         &NS::velocity_columns<S, 6>},                                                                 \
        &NS::impulse_columns_pair<S>, &NS::velocity_columns_pair<S>, &NS::cross_row<S>,               \
        &NS::cross_col<S>, &NS::base_columns<S>, &NS::mirror_block<S>, #NS                            \
  }
// any scalar: the portable loops; double and float choose at run time (src/minv_kernels.cpp)
template <class S> const MinvKernels<S>& minv_kernels() {
  static const MinvKernels<S> k = TREEDYN_MINV_KERNEL_TABLE(S, generic);
  return k;
}
template <> const MinvKernels<double>& minv_kernels<double>();
template <> const MinvKernels<float>& minv_kernels<float>();

template <class S> struct MinvBlocked {
  struct Branch {            // body a with at least two children that own coordinates
    int a;
    int col0, col1;          // F(:, [col0, col1)) saved at a: every child's range but the last
    std::size_t offset;      // where in `saved` (6 rows of col1 - col0)
    std::vector<int> kids;   // those children, in order (the last one included)
  };
  static constexpr int line = 64 / int(sizeof(S)) > 0 ? 64 / int(sizeof(S)) : 1;  // columns per cache line
  int nv = 0;
  long ld = 0;               // row stride of F and V: nv rounded up to a cache line
  // F and V (6 x ld each, rows on cache lines) per thread: a thread only touches its own columns,
  // but columns of two threads in one array would share cache lines at the border, or adjacent
  // lines that the hardware prefetches in pairs, and every joint's step would pass them back and
  // forth between the cores (measured: the second thread ran 2x slower per column)
  std::vector<std::vector<S>> storage;
  std::vector<S> saved;
  std::vector<S> Y0;           // Alg. 2: Ŷ^A_0, 6 x ld (a chunk's forward pass may run on another thread)
  std::vector<Branch> branches;
  std::vector<int> branch_of;  // body -> index in branches, or -1
  std::vector<double> weight;  // nv + 1: cumulative work per column (to split columns among threads)
  std::vector<char> starts;    // nv + 1: a joint's first coordinate (a thread's columns start there)
  std::vector<char> pairs;     // body p: p and its only child with coordinates c are both 1-DoF
                               // and p is not a root: their steps can run as one sweep
  std::vector<int> pair_child; // that c

  explicit MinvBlocked(const Model<S>& model)
      : nv(model.nv), ld((model.nv + line - 1) / line * line), branch_of(model.N + 1, -1), weight(model.nv + 1, 0.0),
        starts(model.nv + 1, 0) {
    std::vector<std::vector<int>> kids(model.N + 1);
    for (int i = 1; i <= model.N; ++i)
      if (subtree_v_end(model, i) > model.v_index[i]) kids[model.parent[i]].push_back(i);
    std::size_t offset = 0;
    for (int a = 0; a <= model.N; ++a) {
      if (kids[a].size() < 2) continue;
      Branch b{a, model.v_index[kids[a].front()], model.v_index[kids[a].back()], offset, kids[a]};
      if (a > 0) offset += 6 * std::size_t(b.col1 - b.col0);
      branch_of[a] = int(branches.size());
      branches.push_back(b);
    }
    saved.resize(offset);
    if (is_floating_base(model)) Y0.assign(6 * std::size_t(ld), S(0));
    pairs.assign(model.N + 2, 0);
    pair_child.assign(model.N + 1, 0);
    for (int p = 1; p <= model.N; ++p) {
      if (kids[p].size() != 1 || model.parent[p] == 0 || model.nv_i[p] != 1) continue;
      const int c = kids[p][0];
      pairs[p] = model.nv_i[c] == 1 && subtree_v_end(model, c) == subtree_v_end(model, p);
      if (pairs[p]) pair_child[p] = c;
    }
    // work of column k: ~4 units per ancestor row (lines 5 and 8), 1 per other row of the upper
    // triangle (cross-branch rows) and 1 per entry of row k of the lower triangle (mirrored)
    std::vector<int> anc(model.N + 1, 0);
    for (int i = 1; i <= model.N; ++i) {
      anc[i] = anc[model.parent[i]] + model.nv_i[i];
      if (model.nv_i[i] > 0) starts[model.v_index[i]] = 1;
      for (int a = 0; a < model.nv_i[i]; ++a) {
        const int k = model.v_index[i] + a;
        weight[k + 1] = weight[k] + 4.0 * anc[i] + double(k + 1 - anc[i]) + double(k);
      }
    }
    starts[model.nv] = 1;
  }
  // thread t's F (V = F + 6 ld), made on first use; 4 spare lines each side keep other threads'
  // arrays out of prefetch range
  S* F_of(int t) {
    if (int(storage.size()) <= t) storage.resize(t + 1);
    std::vector<S>& st = storage[t];
    if (st.empty()) st.assign(12 * std::size_t(ld) + 9 * line, S(0));
    const std::size_t mis = reinterpret_cast<std::uintptr_t>(st.data()) % 64 / sizeof(S);
    return st.data() + (mis ? line - mis : 0) + 4 * line;
  }
  S* row(S* X, int r) const { return X + std::size_t(r) * ld; }
  // columns [bound[t], bound[t+1]) of chunk t: equal work, on cache lines, never splitting a joint
  std::vector<int> split(int nthreads) const {
    std::vector<int> bound(nthreads + 1, nv);
    bound[0] = 0;
    for (int t = 1, k = 0; t < nthreads; ++t) {
      const double target = weight[nv] * t / nthreads;
      while (k < nv && weight[k + 1] <= target) ++k;
      int b = (k + line / 2) / line * line;
      if (b < bound[t - 1]) b = bound[t - 1];
      while (b < nv && !starts[b]) ++b;
      bound[t] = std::min(b, nv);
    }
    return bound;
  }
};

namespace minv_detail {

inline int ni_slot(int ni) { return ni == 1 ? 0 : ni == 2 ? 1 : ni == 3 ? 2 : 3; }

// line 5 at joint i for the columns [c0, c1) of M⁻¹
template <class S>
void impulse_step(const MinvKernels<S>& K, const Model<S>& model, const MinvData<S>& w, MinvBlocked<S>& B, S* F,
                  int i, S* Minv, int c0, int c1) {
  const int vi = model.v_index[i], ni = model.nv_i[i], nv = model.nv;
  if (ni == 0) return;
  const int vend = subtree_v_end(model, i);
  // own columns: Ŷ^A_i = 0̂ and R = 1 there, so u = 1 (its block of M⁻¹) and F = Ũ
  for (int b = 0; b < ni; ++b) {
    const int k = vi + b;
    if (k < c0 || k >= c1) continue;
    for (int a = 0; a < ni; ++a) Minv[std::size_t(vi + a) * nv + k] = a == b ? S(1) : S(0);
    const Force<S>& Ut = w.Ut[k];
    for (int r = 0; r < 3; ++r) {
      B.row(F, r)[k] = Ut.ang[r];
      B.row(F, r + 3)[k] = Ut.lin[r];
    }
  }
  const int k0 = std::max(vi + ni, c0), k1 = std::min(vend, c1);
  if (k0 >= k1) return;
  const S* J = w.rows.data() + w.rows_at[i];  // ŝ, Î^Aŝ, Ũ, (ŝᵀÎ^Aŝ)⁻¹
  K.impulse[ni_slot(ni)](J, J + 12 * ni, F, B.ld, Minv + std::size_t(vi) * nv, nv, k0, k1);
}

// lines 8-10 at joint i for the columns [c0, c1)
template <class S>
void velocity_step(const MinvKernels<S>& K, const Model<S>& model, const MinvData<S>& w, MinvBlocked<S>& B, S* V,
                   int i, S* Minv, int c0, int c1) {
  const int vi = model.v_index[i], ni = model.nv_i[i], nv = model.nv;
  if (ni == 0) return;
  const int k0 = std::max(vi, c0), k1 = std::min(subtree_v_end(model, i), c1);
  if (k0 >= k1) return;
  const S* J = w.rows.data() + w.rows_at[i];  // ŝ, Î^Aŝ, Ũ, (ŝᵀÎ^Aŝ)⁻¹
  K.velocity[ni_slot(ni)](J, J + 6 * ni, J + 18 * ni, V, B.ld, Minv + std::size_t(vi) * nv, nv, k0, k1,
                          model.parent[i] == 0);
}

// at branch point a, before a's own line 5: keep Ŷ^A_a(:, j) for the columns of its children
template <class S> void save_branch(MinvBlocked<S>& B, const S* F, int a, int c0, int c1) {
  if (a == 0 || B.branch_of[a] < 0) return;
  const auto& br = B.branches[B.branch_of[a]];
  const int len = br.col1 - br.col0, k0 = std::max(br.col0, c0), k1 = std::min(br.col1, c1);
  if (k0 >= k1) return;
  for (int r = 0; r < 6; ++r) {
    const S* f = F + std::size_t(r) * B.ld;
    std::copy(f + k0, f + k1, B.saved.data() + br.offset + std::size_t(r) * len + (k0 - br.col0));
  }
}

// after a's line 9: M⁻¹(j, k) = −Ŷ^A_a(:, j)ᵀ Δv̂_a(:, k) for j in child c's range and k in the
// later children's ranges [v_end(c), v_end(a)); zero between the roots of a fixed-base forest
template <class S>
void cross_branch_step(const MinvKernels<S>& K, const Model<S>& model, MinvBlocked<S>& B, const S* V, int a, S* Minv,
                       int c0, int c1) {
  if (B.branch_of[a] < 0) return;
  const auto& br = B.branches[B.branch_of[a]];
  const int nv = model.nv, len = br.col1 - br.col0, vend_a = a > 0 ? subtree_v_end(model, a) : nv;
  for (std::size_t p = 0; p + 1 < br.kids.size(); ++p) {
    const int c = br.kids[p], j0 = model.v_index[c], j1 = subtree_v_end(model, c);
    const int k0 = std::max(j1, c0), k1 = std::min(vend_a, c1);
    if (k0 >= k1) continue;
    if (a == 0) {
      for (int j = j0; j < j1; ++j)
        for (int k = k0; k < k1; ++k) Minv[std::size_t(j) * nv + k] = S(0);
      continue;
    }
    const S* y = B.saved.data() + br.offset + (j0 - br.col0);
    if (k1 - k0 >= 8) {  // long rows: one row at a time, vectorised over its columns
      for (int j = j0; j < j1; ++j, ++y) {
        const S yj[6] = {y[0], y[len], y[2 * len], y[3 * len], y[4 * len], y[5 * len]};
        K.cross(yj, V, B.ld, Minv + std::size_t(j) * nv, k0, k1);
      }
    } else {  // few columns (a leaf sibling, say): one column at a time, over the rows
      for (int k = k0; k < k1; ++k) {
        const S vk[6] = {V[k], V[B.ld + k], V[2 * B.ld + k], V[3 * B.ld + k], V[4 * B.ld + k], V[5 * B.ld + k]};
        K.cross_col(y, len, vk, Minv + std::size_t(j0) * nv + k, nv, j1 - j0);
      }
    }
  }
}

// Alg. 2 lines 6-10 for the columns [c0, c1): Δv̂_0 = Î^A_0⁻¹(ŝ⁻ᵀ R_base − Ŷ^A_0), the base's rows
// of M⁻¹ = ŝ_base⁻¹ Δv̂_0, and V = Δv̂_0
template <class S>
void base_step(const MinvKernels<S>& K, const MinvData<S>& w, MinvBlocked<S>& B, S* F, S* V, S* Minv, int nv, int c0,
               int c1) {
  S G[36], P[36];  // Î^A_0⁻¹ and ŝ_base⁻¹ = Π⁻¹ ^1X_0, row-major
  for (int c = 0; c < 6; ++c) {
    Motion<S> e = Motion<S>::zero();
    if (c < 3) e.ang[c] = S(1);
    else e.lin[c - 3] = S(1);
    S col[6];
    base_coordinates(w, e, col);
    for (int r = 0; r < 6; ++r) P[6 * r + c] = col[r], G[6 * r + c] = w.IA0inv(r, c);
  }
  for (int k = std::max(c0, 0); k < std::min(c1, 6); ++k) {  // the base's own columns: R = 1
    S r6[6] = {S(0), S(0), S(0), S(0), S(0), S(0)};
    r6[k] = S(1);
    const Force<S> y = base_impulse(w, r6);
    for (int r = 0; r < 3; ++r) {  // Ŷ^A_0(:, k) = 0̂ there; F = −ŝ⁻ᵀ e_k gives Δv̂_0 = Î^A_0⁻¹ ŝ⁻ᵀ e_k
      B.row(F, r)[k] = -y.ang[r];
      B.row(F, r + 3)[k] = -y.lin[r];
    }
  }
  if (c0 < c1) K.base(G, P, F, V, B.ld, Minv, nv, c0, c1);
}

// lines 4-5 for c and then its parent p (B.pairs[p]), own columns included
template <class S>
void impulse_pair_step(const MinvKernels<S>& K, const Model<S>& model, const MinvData<S>& w, MinvBlocked<S>& B, S* F,
                       int p, int c, S* Minv, int c0, int c1) {
  const int nv = model.nv, vp = model.v_index[p], vc = model.v_index[c], vend = subtree_v_end(model, c);
  for (const int i : {c, p}) {  // own columns: u = 1, F = Ũ
    const int k = model.v_index[i];
    if (k < c0 || k >= c1) continue;
    Minv[std::size_t(k) * nv + k] = S(1);
    for (int r = 0; r < 3; ++r) B.row(F, r)[k] = w.Ut[k].ang[r], B.row(F, r + 3)[k] = w.Ut[k].lin[r];
  }
  const S* Jp = w.rows.data() + w.rows_at[p];
  const S* Jc = w.rows.data() + w.rows_at[c];
  S* outp = Minv + std::size_t(vp) * nv;
  if (vc >= c0 && vc < c1) K.impulse[0](Jp, Jp + 12, F, B.ld, outp, nv, vc, vc + 1);  // p on c's own column
  const int k0 = std::max(vc + 1, c0), k1 = std::min(vend, c1);
  if (k0 < k1) K.impulse_pair(Jc, Jc + 12, Jp, Jp + 12, F, B.ld, Minv + std::size_t(vc) * nv, outp, k0, k1);
}

// lines 7-10 for p and then its child c (B.pairs[p])
template <class S>
void velocity_pair_step(const MinvKernels<S>& K, const Model<S>& model, const MinvData<S>& w, MinvBlocked<S>& B, S* V,
                        int p, int c, S* Minv, int c0, int c1) {
  const int nv = model.nv, vp = model.v_index[p], vc = model.v_index[c], vend = subtree_v_end(model, c);
  const S* Jp = w.rows.data() + w.rows_at[p];
  const S* Jc = w.rows.data() + w.rows_at[c];
  S* outp = Minv + std::size_t(vp) * nv;
  if (vp >= c0 && vp < c1) K.velocity[0](Jp, Jp + 6, Jp + 18, V, B.ld, outp, nv, vp, vp + 1, false);  // p's own
  const int k0 = std::max(vc, c0), k1 = std::min(vend, c1);
  if (k0 < k1) K.velocity_pair(Jp, Jp + 6, Jp[18], Jc, Jc + 6, Jc[18], V, B.ld, outp, Minv + std::size_t(vc) * nv, k0, k1);
}

}  // namespace minv_detail

// the full M⁻¹ (nv x nv, row-major; symmetric, so also column-major) for the configuration that
// minv_precompute saw; `nthreads` threads split the columns (same bits for any number of threads).
// Returns false if an entry overflowed to inf / NaN.
template <class S>
bool mInv(const Model<S>& model, const MinvData<S>& w, MinvBlocked<S>& B, S* Minv, int nthreads) {
  using namespace minv_detail;
  const MinvKernels<S>& K = minv_kernels<S>();
  const int nv = model.nv, first = w.first;
  if (nv == 0) return true;
  nthreads = std::max(1, std::min(nthreads, nv));
  // chunks of columns of equal work, taken by the threads as they come free in each pass (any
  // thread may take any chunk: a thread's F and V serve whatever columns it works on). One chunk
  // per thread: two per thread balance a core slowed by something else better, but cost ~5% on
  // a quiet machine (more borders, shorter sweeps)
  const int nchunks = nthreads;
  const std::vector<int> bound = B.split(nchunks);
  std::vector<S*> Fs(nthreads);
  for (int t = 0; t < nthreads; ++t) Fs[t] = B.F_of(t);
  std::vector<char> nonfinite(nthreads, 0);
  // lines 4-5 for the columns [c0, c1) (every column's impulse starts at its joint, §5.2)
  const auto backward = [&](int t, int c0, int c1) {
    if (c0 >= c1) return;
    S* F = Fs[t];
    for (int r = 0; r < 6; ++r) std::fill(B.row(F, r) + c0, B.row(F, r) + c1, S(0));
    for (int i = w.joint_of[c1 - 1]; i >= first; --i) {  // joints after it own no column here
      save_branch(B, F, i, c0, c1);
      const int p = model.parent[i];
      if (p >= first && B.pairs[p] && B.pair_child[p] == i) {  // i and its parent in one sweep
        impulse_pair_step(K, model, w, B, F, p, i, Minv, c0, c1);
        i = p;
        continue;
      }
      impulse_step(K, model, w, B, F, i, Minv, c0, c1);
    }
    if (w.floating_base) {
      save_branch(B, F, 1, c0, c1);
      for (int r = 0; r < 6; ++r) std::copy(B.row(F, r) + c0, B.row(F, r) + c1, B.row(B.Y0.data(), r) + c0);
    }
  };
  // Alg. 2 lines 6-10 and lines 7-10 for the columns [c0, c1); the rows completed are mirrored
  const auto forward = [&](int t, int c0, int c1) {
    if (c0 >= c1) return;
    S* F = Fs[t];
    S* V = F + 6 * B.ld;
    for (int r = 0; r < 6; ++r) std::fill(B.row(V, r) + c0, B.row(V, r) + c1, S(0));
    int mirrored = 0;  // rows [0, mirrored) are mirrored into the lower triangle of these columns
    const auto mirror_to = [&](int row_end, bool force) {
      if (row_end - mirrored >= 8 || (force && row_end > mirrored)) {
        if (K.mirror(Minv, nv, mirrored, row_end, c0, c1)) nonfinite[t] = 1;
        mirrored = row_end;
      }
    };
    if (w.floating_base) {
      base_step(K, w, B, B.Y0.data(), V, Minv, nv, c0, c1);
      cross_branch_step(K, model, B, V, 1, Minv, c0, c1);
      mirror_to(6, false);
    }
    cross_branch_step(K, model, B, V, 0, Minv, c0, c1);
    const int last = w.joint_of[c1 - 1];
    for (int i = first; i <= last; ++i) {  // rows before v_i + n_i are then complete
      if (B.pairs[i]) {  // i and its only child in one sweep (i is no branch point)
        const int c = B.pair_child[i];
        velocity_pair_step(K, model, w, B, V, i, c, Minv, c0, c1);
        for (int j = i + 1; j < c; ++j) cross_branch_step(K, model, B, V, j, Minv, c0, c1);  // (fixed leaves)
        i = c;
      } else {
        velocity_step(K, model, w, B, V, i, Minv, c0, c1);
      }
      cross_branch_step(K, model, B, V, i, Minv, c0, c1);
      mirror_to(model.v_index[i] + model.nv_i[i], false);
    }
    mirror_to(nv, true);
  };
  parallel_for(nchunks, nthreads, [&](int c, int t) { backward(t, bound[c], bound[c + 1]); });
  // (every saved Ŷ^A is complete when the first pass returns)
  parallel_for(nchunks, nthreads, [&](int c, int t) { forward(t, bound[c], bound[c + 1]); });
  for (char bad : nonfinite)
    if (bad) return false;
  return true;
}

}  // namespace treedyn
