// Θ(n²) inverse of the joint-space inertia matrix (drumwright2012): M⁻¹R in Θ(nm) by applying
// unit impulses and propagating them through articulated-body inertias, in the global frame (§5).
//
//   mMultInv     Alg. 1: fixed base; M⁻¹R one column of R at a time
//   mMultInvFB   Alg. 2: floating base (body 1 is joined to the world by a free joint and carries
//                the whole tree); the base velocity change comes from Î^A_0⁻¹ (lines 6-10)
//   mInv         Alg. 1 / 2 with R = 1: the full M⁻¹, every column at once (minv/blocked.hpp)
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
#include <string>
#include <vector>

#include "treedyn/algorithms/aba.hpp"

namespace treedyn {

// the end of body i's coordinate range: the subtree i..last(i) owns coordinates [v_index[i], v_end)
template <class S> inline int subtree_v_end(const Model<S>& model, int i) {
  const int l = model.last(i);
  return model.v_index[l] + model.nv_i[l];
}

// Alg. 2 applies when body 1 floats (a free joint) and carries every other body
template <class S> inline bool is_floating_base(const Model<S>& model) {
  return model.N >= 1 && model.kind[1] == JointKind::Free && model.last(1) == model.N;
}

template <class S> struct MinvData {
  using Small = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic, 0, 6, 6>;  // no heap
  // structure
  std::vector<int> joint_of;   // nv: the body whose joint owns each coordinate
  bool floating_base = false;  // Alg. 2 (mMultInvFB) rather than Alg. 1
  int first = 1;               // first joint of the passes: 2 under Alg. 2 (1 is the base)
  // where threads may split the leaves-to-root sweep (MinvSetup, minv/blocked.hpp): a helper runs
  // the steps sweep_cut-1 .. sweep_rest+1 while the leader runs N .. sweep_cut; 0: no cut pays
  int sweep_cut = 0, sweep_rest = 0;
  // per configuration, global frame (§5 "Require"; §5.2: computed once)
  std::vector<Transform<S>> X0;           // ^iX_0: global frame (world axes, origin at i's root) -> body i
  std::vector<ArticulatedInertia<S>> IA;  // Î^A_i (Î^a_i = Î^A_i − Ũ ŝᵀÎ^A after its step, in place)
  std::vector<Motion<S>> s;               // nv: the columns of ŝ_i
  std::vector<Force<S>> IAs;              // nv: the columns of Î^A_i ŝ_i
  std::vector<Force<S>> Ut;               // nv: the columns of Ũ_i = Î^A_i ŝ_i (ŝᵀÎ^A ŝ)⁻¹
  std::vector<Small> Dinv;                // (ŝ_iᵀÎ^A_i ŝ_i)⁻¹
  Mat6<S> IA0inv;                         // Alg. 2: Î^A_0⁻¹ (the base's articulated inertia)
  // the same per joint, packed for mInv's column loops: ŝ, Î^Aŝ, Ũ (n_i x 6 each, one row per
  // joint column) and (ŝᵀÎ^Aŝ)⁻¹ (n_i x n_i), at 24 n_i + n_i² entries from rows_at[i]
  std::vector<S> rows;
  std::vector<std::size_t> rows_at;
  // per column of R (Alg. 1 lines 2-10); a thread solving columns uses its own
  struct Column {
    std::vector<Force<S>> Y;    // Ŷ^A_i
    std::vector<Motion<S>> dv;  // Δv̂_i
    std::vector<char> busy;     // Ŷ^A_i ≠ 0̂ (an impulse has reached body i)
    std::vector<S> u;           // nv: u_i
  } col;

  explicit MinvData(const Model<S>& model)
      : joint_of(model.nv),
        X0(model.N + 1, Transform<S>::identity()),
        IA(model.N + 1, ArticulatedInertia<S>::zero()),
        s(model.nv, Motion<S>::zero()),
        IAs(model.nv, Force<S>::zero()),
        Ut(model.nv, Force<S>::zero()),
        Dinv(model.N + 1),
        IA0inv(Mat6<S>::Identity()),
        col{std::vector<Force<S>>(model.N + 1, Force<S>::zero()),
            std::vector<Motion<S>>(model.N + 1, Motion<S>::zero()), std::vector<char>(model.N + 1, 0),
            std::vector<S>(model.nv, S(0))} {
    for (int i = 1; i <= model.N; ++i)
      for (int a = 0; a < model.nv_i[i]; ++a) joint_of[model.v_index[i] + a] = i;
    for (int i = 0; i <= model.N; ++i) Dinv[i].setZero(model.nv_i[i], model.nv_i[i]);
    rows_at.assign(model.N + 2, 0);
    for (int i = 0; i <= model.N; ++i) rows_at[i + 1] = rows_at[i] + 18 * model.nv_i[i] + model.nv_i[i] * model.nv_i[i];
    rows.assign(rows_at[model.N + 1], S(0));
    // (Alg. 2 inverts the base's Î^A_0 whole: a base with armature takes Alg. 1's 6 x 6 pivot instead)
    floating_base = is_floating_base(model);
    for (int k = 0; floating_base && model.has_armature && k < 6; ++k) floating_base = model.armature[k] == S(0);
    first = floating_base ? 2 : 1;
    // The setup's leaves-to-root sweep (eq. (7)) runs N, ..., first; each step reads its Î^A_i and
    // adds it to Î^A_λ(i). Cut at m, the steps m-1, ..., j+1 touch no Î^A that the steps N, ..., m
    // touch as long as neither such a body nor its parent is an ancestor of m: j is the last body
    // below m that is, or whose parent is. Then a helper may run them while the leader runs N..m,
    // and j..first follow both: every Î^A is still summed in the serial order (same bits). Wall
    // time ≈ max(W_top, W_free) + W_rest (W the steps' work, ~1 + n_i each); m minimises it and is
    // kept when it saves a fifth of the sweep (a random forest: a half; a chain: nothing).
    std::vector<double> W(model.N + 1, 0.0);  // W[i]: the work of the steps first..i
    for (int i = first; i <= model.N; ++i) W[i] = W[i - 1] + 1.0 + model.nv_i[i];
    std::vector<int> prev(model.N + 1, 0), youngest(model.N + 1, 0);  // previous sibling; last child so far
    for (int i = 1; i <= model.N; ++i) prev[i] = youngest[model.parent[i]], youngest[model.parent[i]] = i;
    double best = 0.8 * W[model.N];
    for (int m = first + 1; m <= model.N; ++m) {
      int j = first - 1;
      for (int c = m; c > j && model.parent[c] >= 1; c = model.parent[c]) j = std::max({j, model.parent[c], prev[c]});
      const double cost = std::max(W[model.N] - W[m - 1], W[m - 1] - W[j]) + W[j] - W[first - 1];
      if (m - 1 > j && cost < best) best = cost, sweep_cut = m, sweep_rest = j;
    }
  }
};

// ---- once per configuration -----------------------------------------------------------------

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
  if (p > 0)
    w.X0[i] = compose(w.X0[i], w.X0[p]);  // the full 3x3 product (transform.hpp)
  else
    w.X0[i].r.setZero();  // a root: its origin is the global frame's
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
    Dinv(0, 0) = invert_pivot(
        model, i, model.has_armature ? dot(w.s[vi], w.IAs[vi]) + model.armature[vi] : dot(w.s[vi], w.IAs[vi]),
        pivot_scale(model, IA, w.s[vi], vi));
    w.Ut[vi] = w.IAs[vi] * Dinv(0, 0);
    IA.subtract_outer(w.IAs[vi], Dinv(0, 0));
  } else if (ni > 1) {
    typename MinvData<S>::Small D(ni, ni);
    for (int b = 0; b < ni; ++b) w.IAs[vi + b] = IA * w.s[vi + b];
    for (int a = 0; a < ni; ++a)
      for (int b = 0; b < ni; ++b) D(a, b) = dot(w.s[vi + a], w.IAs[vi + b]);
    for (int a = 0; a < ni && model.has_armature; ++a) D(a, a) += model.armature[vi + a];  // + diag(armature_i)
    invert_joint_pivot(model, i, IA, w.s.data() + vi, D, Dinv);
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
  throw SingularJoint("the floating base '" + model.name[1] +
                      "' has a singular articulated inertia Î^A_0: "
                      "the mechanism has no inertia along some direction of the base's motion");
}

// Alg. 2's Î^A_0⁻¹: the base body's articulated inertia (whole mechanism) is inverted once
template <class S> void minv_base_inertia_step(const Model<S>& model, MinvData<S>& w) {
  const Mat6<S> IA0 = w.IA[1].matrix();
  Eigen::LLT<Mat6<S>> llt(IA0);
  if (singular_pivot<S>(llt, IA0, base_scales(w.IA[1]).data()) >= 0) throw_singular_base(model);
  w.IA0inv.setIdentity();
  llt.solveInPlace(w.IA0inv);
}

// everything Alg. 1 / 2 "Require": once per configuration, O(N)
template <class S> TREEDYN_ENTRY void minv_precompute(const Model<S>& model, MinvData<S>& w, const S* q) {
  // (serial here. The full M⁻¹ shares it among its threads, beside its first column pass, with no
  // barrier that waits for a thread that has not started: MinvSetup and mInv_at, minv/blocked.hpp)
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
    m.ang[r] = A(r, 0) * f.ang[0] + A(r, 1) * f.ang[1] + A(r, 2) * f.ang[2] + A(r, 3) * f.lin[0] + A(r, 4) * f.lin[1] +
               A(r, 5) * f.lin[2];
    m.lin[r] = A(r + 3, 0) * f.ang[0] + A(r + 3, 1) * f.ang[1] + A(r + 3, 2) * f.ang[2] + A(r + 3, 3) * f.lin[0] +
               A(r + 3, 4) * f.lin[1] + A(r + 3, 5) * f.lin[2];
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
  if (c.busy[p])
    c.Y[p] += pa;
  else
    c.Y[p] = pa, c.busy[p] = 1;
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
    const S dq = root ? w.Dinv[i](0, 0) * c.u[vi] : w.Dinv[i](0, 0) * (c.u[vi] - dot(c.dv[p], w.IAs[vi]));
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
TREEDYN_ENTRY void mMultInv(const Model<S>& model, const MinvData<S>& w, typename MinvData<S>::Column& c, const S* r,
                            S* out) {
  const int start = last_impulse_joint(model, w, r);
  if (start == 0) {
    for (int k = 0; k < model.nv; ++k) out[k] = S(0);
    return;
  }
  for (int i = 0; i <= start; ++i) c.busy[i] = 0;                                           // lines 2-3
  for (int k = model.v_index[start] + model.nv_i[start]; k < model.nv; ++k) c.u[k] = S(0);  // R = 0 beyond start
  for (int i = start; i >= 1; --i) mMultInv_impulse_step(model, w, c, i, r);                // lines 4-5
  for (int i = 1; i <= model.N; ++i) mMultInv_velocity_step(model, w, c, i, out);           // lines 6-10
}

// Alg. 2: out = M⁻¹ r for one column r (nv), floating base (body 1 free, carrying the tree)
template <class S>
TREEDYN_ENTRY void mMultInvFB(const Model<S>& model, const MinvData<S>& w, typename MinvData<S>::Column& c, const S* r,
                              S* out) {
  const int start = last_impulse_joint(model, w, r);
  if (start == 0) {
    for (int k = 0; k < model.nv; ++k) out[k] = S(0);
    return;
  }
  for (int i = 0; i <= start; ++i) c.busy[i] = 0;  // lines 2-3
  for (int k = model.v_index[start] + model.nv_i[start]; k < model.nv; ++k) c.u[k] = S(0);
  for (int i = start; i >= 2; --i) mMultInv_impulse_step(model, w, c, i, r);  // lines 4-5
  // lines 6-10: Δv̂_0 = Î^A_0⁻¹(ŝ_base⁻ᵀ R_base,k − Ŷ^A_0) (the sign of Ŷ^A is ours: Ŷ^A is the
  // impulse the tree passes to the base); u_k = the base coordinates of Δv̂_0
  Force<S> f = Force<S>::zero();
  bool any = false;
  for (int k = 0; k < 6; ++k) any = any || r[k] != S(0);
  if (any) f = base_impulse(w, r);
  if (c.busy[1]) f -= c.Y[1];
  c.dv[1] = mul6(w.IA0inv, f);
  base_coordinates(w, c.dv[1], out);
  for (int i = 2; i <= model.N; ++i) mMultInv_velocity_step(model, w, c, i, out);  // lines 11-14
}

}  // namespace treedyn
