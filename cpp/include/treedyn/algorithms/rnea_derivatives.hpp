// Analytic derivatives of inverse dynamics (carpentier-mansard2018, §IV and Alg. 1): of
// τ = RNEA(q, q̇, q̈, f_ext), the partials ∂τ/∂q, ∂τ/∂q̇ and M = ∂τ/∂q̈, in O(n d) (d: the depth).
// ∂/∂q is taken in the tangent space, as Pinocchio: column k is d/dε τ(q ⊕ ε e_k) at ε = 0 for
// treedyn's integrate (configuration.hpp), which moves body i by the twist s_k of coordinate k —
// a spherical joint's quaternion by right multiplication, a free joint along SE(3)'s exponential.
//
// Everything is expressed in one inertial frame per tree: the world's axes, the origin at the
// tree's root at this q (as minv/minv.hpp: about the world origin, the inertias would lose digits to
// the square of the tree's distance from it). In it, coordinate k (a column s_k of joint i's
// motion subspace) moves its subtree rigidly: every motion m, force f and inertia I of it varies
// as s_k × m, s_k ×* f, s_k ×* I − I s_k× (eq. (9) of the paper), on top of what the velocities
// and accelerations of the bodies themselves change. Write P(k) for the frame just before
// coordinate k — body λ(i), except for a universal joint's second axis, whose P is the cross
// piece between the two axes — and v_P, a_P for its motion. Then, for a body j beyond k,
//   ∂v_j/∂q_k = s_k × v_j + Ψ̇_k,                 Ψ̇_k = v_P × s_k
//   ∂a_j/∂q_k = s_k × a_j + Ψ̇_k × v_j + Ψ̈_k,     Ψ̈_k = a_P × s_k + v_P × Ψ̇_k
//   ∂v_j/∂q̇_k = s_k,  ∂a_j/∂q̇_k = ṡ_k + Ψ̇_k − v_j × s_k
// (the paper's eqs. (13)–(16); a_0 = −g carries gravity, ṡ_k = v_i × s_k is the column's time
// derivative, v_λ × s_k for a universal joint's first axis, which is fixed in the parent).
// With f_j = I_j a_j + v_j ×* I_j v_j − f_ext,j and F_i = Σ_{j in subtree(i)} f_j:
//   ∂F_i/∂q_k = s_k ×* F_i + I^c_i Ψ̈_k + 2B^c_i Ψ̇_k,   ∂F_i/∂q̇_k = I^c_i (ṡ_k + Ψ̇_k) + 2B^c_i s_k
// for i beyond k, where I^c_i = Σ I_j and 2B^c_i = Σ 2B_j, 2B_j x = v_j ×* I_j x + x ×* I_j v_j +
// I_j (x × v_j).
// τ_c = s_cᵀ F_i then gives, for c a column of joint i and k one of an ancestor joint (the pair
// form of singh-russell-wensing),
//   ∂τ_c/∂q_k = Ψ̈_kᵀ (I^c_i s_c) + Ψ̇_kᵀ (2B^c_i)ᵀ s_c      ∂τ_k/∂q_c = s_kᵀ H_c
//   ∂τ_c/∂q̇_k = (ṡ_k + Ψ̇_k)ᵀ (I^c_i s_c) + s_kᵀ (2B^c_i)ᵀ s_c   ∂τ_k/∂q̇_c = s_kᵀ K_c
// with H_c = I^c_i Ψ̈_c + 2B^c_i Ψ̇_c + s_c ×* F_i and K_c = I^c_i (ṡ_c + Ψ̇_c) + 2B^c_i s_c; inside
// one joint ∂τ_a/∂q_b = s_aᵀ (H_b − s_b ×* F_i), since its columns move with each other (a
// universal joint's first axis does not move with its second: there ∂τ_0/∂q_1 = s_0ᵀ H_1).
//
// 2B_j is kept in 9 numbers (our reduction, not the paper's 6 x 6 matrix): with I_j = rbi(m, h, Ī)
// and v_j = [ω; u], 2B_j = Σ + h_j×̄, where h_j = I_j v_j is the body's momentum, h×̄ the antisymmetric
// matrix of x ↦ x ×* h, and the symmetric part Σ = −((v×)ᵀI + I(v×)) = [A p×; −p× 0] with
// p = m u + ω × h the linear momentum and A = −(K + Kᵀ), K = Ī ω× + u× h×. Summed over a subtree:
//   2B^c x = [A^c x_ω + x_ω × n^c; 2 x_ω × p^c],   (2B^c)ᵀ x = [A^c x_ω − x_ω × n^c + 2 p^c × x_v; 0]
// with [n^c; p^c] = Σ h_j the subtree's momentum and A^c = Σ A_j.
#pragma once
#include <algorithm>
#include <vector>

#include "treedyn/algorithms/kinematics.hpp"
#include "treedyn/algorithms/passive.hpp"

// A step of the passes below: a function of its own with every call inside it inlined (the small
// spatial products are otherwise left as calls inside the loops over the columns). Not compiled
// twice by GCC's target_clones (Haswell and generic): GCC 12 cannot unwind through a cloned
// function, so a singular joint's SingularJoint thrown in a step ended the process (std::terminate;
// found by .ci/sanitize, and reproduced with a 10-line program at -O2)
#if defined(__GNUC__)
#define TREEDYN_DERIVATIVES_STEP __attribute__((noinline, flatten))
#else
#define TREEDYN_DERIVATIVES_STEP
#endif

namespace treedyn {

template <class S> struct RneaDerivativesData {
  std::vector<Transform<S>> X0;                 // ^iX_0: the tree's frame -> body i
  std::vector<Motion<S>> v, a;                  // v_i, a_i (a_0 = −g), the tree's frame
  std::vector<RigidInertia<S>> Ic;              // I^c_i
  std::vector<Force<S>> hc, F;                  // Σ I_j v_j and F_i = Σ f_j over the subtree
  std::vector<Sym3<S>> Ac;                      // A^c_i
  std::vector<Motion<S>> s, dpsi, ddpsi, dadv;  // nv: s_k, Ψ̇_k, Ψ̈_k and ∂a/∂q̇ = ṡ_k + Ψ̇_k
  std::vector<S> cols;                          // 18 x nv: I^c s_c, H_c, K_c by component (descendants)
  std::vector<S> anc;                           // 21 x nv: s_k, Ψ̈_k, ṡ_k + Ψ̇_k, Ψ̇_k's ω by component (ancestors)
  std::vector<int> runs, runs_at;               // body i's ancestors' coordinates: ranges [lo, hi) from runs_at[i]
  bool dense = true;                            // every pair of coordinates is in one branch (a chain)
  explicit RneaDerivativesData(const Model<S>& model)
      : X0(model.N + 1, Transform<S>::identity()),
        v(model.N + 1, Motion<S>::zero()),
        a(model.N + 1, Motion<S>::zero()),
        Ic(model.N + 1, RigidInertia<S>::zero()),
        hc(model.N + 1, Force<S>::zero()),
        F(model.N + 1, Force<S>::zero()),
        Ac(model.N + 1, Sym3<S>::zero()),
        s(model.nv, Motion<S>::zero()),
        dpsi(model.nv, Motion<S>::zero()),
        ddpsi(model.nv, Motion<S>::zero()),
        dadv(model.nv, Motion<S>::zero()),
        cols(18 * std::size_t(model.nv)),
        anc(21 * std::size_t(model.nv)),
        runs_at(model.N + 2, 0) {
    // walking up from λ(i), a parent's coordinates join the current range when they end where it begins
    for (int i = 1; i <= model.N; ++i) {
      int lo = -1, hi = -1;
      for (int j = model.parent[i]; j > 0; j = model.parent[j]) {
        const int vj = model.v_index[j], nj = model.nv_i[j];
        if (nj == 0) continue;
        if (lo >= 0 && vj + nj == lo) {
          lo = vj;
        } else {
          if (lo >= 0) runs.push_back(lo), runs.push_back(hi);
          lo = vj, hi = vj + nj;
        }
      }
      if (lo >= 0) runs.push_back(lo), runs.push_back(hi);
      runs_at[i + 1] = int(runs.size());
      int related = model.v_index[model.last(i)] + model.nv_i[model.last(i)] - model.v_index[i];  // own + subtree
      for (int r = runs_at[i]; r < runs_at[i + 1]; r += 2) related += runs[r + 1] - runs[r];
      if (model.nv_i[i] > 0 && related != model.nv) dense = false;
    }
  }
};

// A = −(K + Kᵀ), K = Ī ω× + u× h× (above). With N = Ī ω×, whose row r is (Ī e_r) × ω, and
// u× h× = h uᵀ − (u·h) 1: A = −(N + Nᵀ) − (h uᵀ + u hᵀ) + 2 (u·h) 1 (18 products for N)
template <class S> inline Sym3<S> coriolis_block(const RigidInertia<S>& I, const Motion<S>& v) {
  const Sym3<S>& J = I.I;
  const Vec3<S>&w = v.ang, &u = v.lin, &h = I.h;
  const Vec3<S> N0 = cross(Vec3<S>(J.xx, J.yx, J.zx), w), N1 = cross(Vec3<S>(J.yx, J.yy, J.zy), w),
                N2 = cross(Vec3<S>(J.zx, J.zy, J.zz), w);
  const S uh2 = S(2) * dot(u, h);
  return {uh2 - S(2) * (N0[0] + h[0] * u[0]),           -(N1[0] + N0[1] + h[1] * u[0] + u[1] * h[0]),
          uh2 - S(2) * (N1[1] + h[1] * u[1]),           -(N2[0] + N0[2] + h[2] * u[0] + u[2] * h[0]),
          -(N2[1] + N1[2] + h[2] * u[1] + u[2] * h[1]), uh2 - S(2) * (N2[2] + h[2] * u[2])};
}

// forward pass at body i, the part before q̈: the tree's frame, s_k, v_i, ṡ_k (kept in dadv until
// the acceleration step adds Ψ̇_k), c_i = Σ ṡ_k q̇_k (kept in a), and body i's own I_i,
// h_i = I_i v_i, f_i − I_i a_i = v_i ×* h_i − f_ext,i (kept in F) and A_i as the start of the
// subtree sums. (aba_derivatives.hpp runs ABA's backward pass between this step and the next.)
template <int NI, class S>
TREEDYN_INLINE void rnea_derivatives_velocity_joint(const Model<S>& model, RneaDerivativesData<S>& d, int i, const S* q,
                                                    const S* qd, const S* fext) {
  const int p = model.parent[i], vi = model.v_index[i], ni = NI > 0 ? NI : model.nv_i[i];
  const S* qi = q + model.q_index[i];
  const Transform<S> Xup = joint_transform(model, i, qi) * model.X_tree[i];
  if (p > 0) {
    d.X0[i] = compose(Xup, d.X0[p]);
  } else {
    d.X0[i] = Xup;
    d.X0[i].r.setZero();  // a root: its origin is the tree's frame's
  }
  Motion<S>* s = d.s.data() + vi;
  joint_subspace(model, i, qi, s);
  for (int k = 0; k < ni; ++k) s[k] = d.X0[i].inv_apply(s[k]);
  const Motion<S> vp = p > 0 ? d.v[p] : Motion<S>::zero();
  Motion<S> v = vp;
  for (int k = 0; k < ni; ++k) v += s[k] * qd[vi + k];
  const bool universal = model.kind[i] == JointKind::Universal;
  Motion<S> c = Motion<S>::zero();
  for (int k = 0; k < ni; ++k) {
    // ṡ_k: the first axis of a universal joint is fixed in the parent
    const Motion<S> sdot = universal && k == 0 ? vp.cross(s[0]) : v.cross(s[k]);
    d.dadv[vi + k] = sdot;
    c += sdot * qd[vi + k];
  }
  d.v[i] = v;
  d.a[i] = c;
  const RigidInertia<S> I = d.X0[i].inv_apply(model.I[i]);
  const Force<S> h = I * v;
  d.Ic[i] = I;
  d.hc[i] = h;
  d.F[i] = cross_force(v, h);
  if (fext) d.F[i] -= d.X0[i].inv_apply(external_force(fext, i));
  d.Ac[i] = coriolis_block(I, v);
}
template <class S>
TREEDYN_DERIVATIVES_STEP void rnea_derivatives_velocity_step(const Model<S>& model, RneaDerivativesData<S>& d, int i,
                                                             const S* q, const S* qd, const S* fext) {
  if (model.nv_i[i] == 1)
    rnea_derivatives_velocity_joint<1>(model, d, i, q, qd, fext);
  else
    rnea_derivatives_velocity_joint<0>(model, d, i, q, qd, fext);
}

// forward pass at body i, the part with q̈ (q̈_i given): a_i = a_λ + c_i + Σ s_k q̈_k (a_0 = −g),
// Ψ̇_k = v_P × s_k, Ψ̈_k = a_P × s_k + v_P × Ψ̇_k with P = P(k) (λ(i), or the cross piece for a
// universal joint's second axis), ṡ_k + Ψ̇_k, and f_i = I_i a_i + v_i ×* h_i − f_ext,i
template <int NI, class S>
TREEDYN_INLINE void rnea_derivatives_acceleration_joint(const Model<S>& model, RneaDerivativesData<S>& d, int i,
                                                        const S* qd, const S* qdd) {
  const int p = model.parent[i], vi = model.v_index[i], ni = NI > 0 ? NI : model.nv_i[i], nv = model.nv;
  const Motion<S>* s = d.s.data() + vi;
  const Motion<S> vp = p > 0 ? d.v[p] : Motion<S>::zero();
  const Motion<S> ap = p > 0 ? d.a[p] : gravity_acceleration(model);
  const bool universal = model.kind[i] == JointKind::Universal;
  Motion<S> a = ap + d.a[i];
  for (int k = 0; k < ni; ++k) {
    Motion<S> vP = vp, aP = ap;
    if (universal && k == 1) {
      vP = vp + s[0] * qd[vi];
      aP = ap + s[0] * qdd[vi] + vp.cross(s[0]) * qd[vi];
    }
    d.dpsi[vi + k] = vP.cross(s[k]);
    d.ddpsi[vi + k] = aP.cross(s[k]) + vP.cross(d.dpsi[vi + k]);
    d.dadv[vi + k] += d.dpsi[vi + k];
    a += s[k] * qdd[vi + k];
    S* col = d.anc.data() + vi + k;  // by component, for the rows of the descendants (backward step)
    for (int r = 0; r < 3; ++r) {
      col[r * nv] = s[k].ang[r], col[(3 + r) * nv] = s[k].lin[r];
      col[(6 + r) * nv] = d.ddpsi[vi + k].ang[r], col[(9 + r) * nv] = d.ddpsi[vi + k].lin[r];
      col[(12 + r) * nv] = d.dadv[vi + k].ang[r], col[(15 + r) * nv] = d.dadv[vi + k].lin[r];
      col[(18 + r) * nv] = d.dpsi[vi + k].ang[r];
    }
  }
  d.a[i] = a;
  d.F[i] += d.Ic[i] * a;  // (Ic[i] is I_i until the backward pass sums it)
}
template <class S>
TREEDYN_DERIVATIVES_STEP void rnea_derivatives_acceleration_step(const Model<S>& model, RneaDerivativesData<S>& d,
                                                                 int i, const S* qd, const S* qdd) {
  if (model.nv_i[i] == 1)
    rnea_derivatives_acceleration_joint<1>(model, d, i, qd, qdd);
  else
    rnea_derivatives_acceleration_joint<0>(model, d, i, qd, qdd);
}

// The pairs of the backward step, each triangle written row by row (contiguous):
//   upper, at joint k's step, row k against its subtree's columns c in [c0, c1) (Y: the 18 rows
//   of cols, stride nv): ∂τ_k/∂q_c = s_kᵀ H_c, ∂τ_k/∂q̇_c = s_kᵀ K_c, M_kc = s_kᵀ I^c s_c;
//   lower, at joint c's step, row c against its ancestors' coordinates k in [k0, k1) (Z: the 21
//   rows of anc): ∂τ_c/∂q_k = Ψ̈_kᵀ I^c s_c + Ψ̇_kᵀ (2B^c)ᵀ s_c, ∂τ_c/∂q̇_k = (ṡ_k + Ψ̇_k)ᵀ I^c s_c
//   + s_kᵀ (2B^c)ᵀ s_c, M_ck = s_kᵀ I^c s_c.
// Every output is its own array (restrict), so the loops run in vector registers. M may be null.
template <class S>
TREEDYN_INLINE void rnea_derivatives_upper(const S* __restrict Y, int nv, const S* sk, int c0, int c1,
                                           S* __restrict dqk, S* __restrict dvk, S* __restrict Mk) {
  for (int c = c0; c < c1; ++c) {
    S q = 0, v = 0;
    for (int r = 0; r < 6; ++r) {
      q += sk[r] * Y[(6 + r) * nv + c];
      v += sk[r] * Y[(12 + r) * nv + c];
    }
    dqk[c] = q, dvk[c] = v;
  }
  if (Mk)
    for (int c = c0; c < c1; ++c) {
      S m = 0;
      for (int r = 0; r < 6; ++r) m += sk[r] * Y[r * nv + c];
      Mk[c] = m;
    }
}
template <class S>
TREEDYN_INLINE void rnea_derivatives_lower(const S* __restrict Z, int nv, const S* Ys, const S* Bts, int k0, int k1,
                                           S* __restrict dqc, S* __restrict dvc, S* __restrict Mc) {
  for (int k = k0; k < k1; ++k) {
    S q = 0, v = 0;
    for (int r = 0; r < 6; ++r) {
      q += Z[(6 + r) * nv + k] * Ys[r];
      v += Z[(12 + r) * nv + k] * Ys[r];
    }
    for (int r = 0; r < 3; ++r) {
      q += Z[(18 + r) * nv + k] * Bts[r];
      v += Z[r * nv + k] * Bts[r];
    }
    dqc[k] = q, dvc[k] = v;
  }
  if (Mc)
    for (int k = k0; k < k1; ++k) {
      S m = 0;
      for (int r = 0; r < 6; ++r) m += Z[r * nv + k] * Ys[r];
      Mc[k] = m;
    }
}

// the same loops compiled for AVX2 + FMA when the CPU has them (src/instantiate_derivatives.cpp);
// false when there is none
bool rnea_derivatives_upper_fast(const double* Y, int nv, const double* sk, int c0, int c1, double* dqk, double* dvk,
                                 double* Mk);
bool rnea_derivatives_upper_fast(const float* Y, int nv, const float* sk, int c0, int c1, float* dqk, float* dvk,
                                 float* Mk);
bool rnea_derivatives_lower_fast(const double* Z, int nv, const double* Ys, const double* Bts, int k0, int k1,
                                 double* dqc, double* dvc, double* Mc);
bool rnea_derivatives_lower_fast(const float* Z, int nv, const float* Ys, const float* Bts, int k0, int k1, float* dqc,
                                 float* dvc, float* Mc);
template <class S> inline bool rnea_derivatives_upper_fast(const S*, int, const S*, int, int, S*, S*, S*) {
  return false;
}
template <class S> inline bool rnea_derivatives_lower_fast(const S*, int, const S*, const S*, int, int, S*, S*, S*) {
  return false;
}

// backward pass at body i (children done): the rows and columns of joint i against itself and its
// subtree, then the subtree sums passed to the parent
// (NI: the joint's number of coordinates when known at compile time, 0 otherwise: with NI = 1, the
// common case, the per-column arrays below live in registers)
template <int NI, class S>
TREEDYN_INLINE void rnea_derivatives_backward_joint(const Model<S>& model, RneaDerivativesData<S>& d, int i, S* dq,
                                                    S* dv, S* M) {
  const int nv = model.nv;
  constexpr int cap = NI > 0 ? NI : 6;
  Force<S> Ys[cap], H[cap], G[cap], K[cap];  // I^c s_c, H_c, H_c − s_c ×* F_i, K_c
  Vec3<S> Bts[cap];                          // (2B^c)ᵀ s_c (its linear part is zero)
  const int p = model.parent[i], vi = model.v_index[i], ni = NI > 0 ? NI : model.nv_i[i];
  const RigidInertia<S>& Ic = d.Ic[i];
  const Sym3<S>& A = d.Ac[i];
  const Vec3<S>&n = d.hc[i].ang, &pc = d.hc[i].lin;
  for (int b = 0; b < ni; ++b) {
    const int c = vi + b;
    const Motion<S>&sc = d.s[c], &dpsi = d.dpsi[c];
    Ys[b] = Ic * sc;
    // 2B^c Ψ̇_c and 2B^c s_c
    const Force<S> Bdpsi{A * dpsi.ang + cross(dpsi.ang, n), cross(dpsi.ang, pc) * S(2)};
    const Force<S> Bs{A * sc.ang + cross(sc.ang, n), cross(sc.ang, pc) * S(2)};
    G[b] = Ic * d.ddpsi[c] + Bdpsi;  // H_c − s_c ×* F_i
    H[b] = G[b] + cross_force(sc, d.F[i]);
    K[b] = Ic * d.dadv[c] + Bs;
    Bts[b] = A * sc.ang - cross(sc.ang, n) + cross(pc, sc.lin) * S(2);
  }
  // joint i with itself: s_aᵀ (H_b − s_b ×* F_i), but s_0ᵀ H_1 for a universal joint
  const bool universal = model.kind[i] == JointKind::Universal;
  for (int b = 0; b < ni; ++b) {
    const int c = vi + b;
    for (int a = 0; a < ni; ++a) {
      const std::size_t rc = std::size_t(vi + a) * nv + c;
      dq[rc] = dot(d.s[vi + a], universal && a == 0 && b == 1 ? H[b] : G[b]);
      dv[rc] = dot(d.s[vi + a], K[b]);
      if (M) M[rc] = dot(d.s[vi + a], Ys[b]);
    }
  }
  // joint i's coordinates against its subtree's, row by row: its own rows (upper triangle) over
  // the subtree's columns, stored by component when their joints were done (a contiguous range in
  // depth-first order); then the rows of its coordinates (lower triangle) over its ancestors'
  for (int b = 0; b < ni; ++b) {
    S* col = d.cols.data() + vi + b;
    for (int r = 0; r < 3; ++r) {
      col[r * nv] = Ys[b].ang[r], col[(3 + r) * nv] = Ys[b].lin[r];
      col[(6 + r) * nv] = H[b].ang[r], col[(9 + r) * nv] = H[b].lin[r];
      col[(12 + r) * nv] = K[b].ang[r], col[(15 + r) * nv] = K[b].lin[r];
    }
  }
  const int c0 = vi + ni, c1 = model.v_index[model.last(i)] + model.nv_i[model.last(i)];
  if (c0 < c1)
    for (int a = 0; a < ni; ++a) {
      const int k = vi + a;
      const S sk[6] = {d.s[k].ang[0], d.s[k].ang[1], d.s[k].ang[2], d.s[k].lin[0], d.s[k].lin[1], d.s[k].lin[2]};
      S *dqk = dq + std::size_t(k) * nv, *dvk = dv + std::size_t(k) * nv, *Mk = M ? M + std::size_t(k) * nv : M;
      if (!rnea_derivatives_upper_fast(d.cols.data(), nv, sk, c0, c1, dqk, dvk, Mk))
        rnea_derivatives_upper(d.cols.data(), nv, sk, c0, c1, dqk, dvk, Mk);
    }
  for (int b = 0; b < ni; ++b) {
    const int c = vi + b;
    const S Y6[6] = {Ys[b].ang[0], Ys[b].ang[1], Ys[b].ang[2], Ys[b].lin[0], Ys[b].lin[1], Ys[b].lin[2]};
    const S B3[3] = {Bts[b][0], Bts[b][1], Bts[b][2]};
    S *dqc = dq + std::size_t(c) * nv, *dvc = dv + std::size_t(c) * nv, *Mc = M ? M + std::size_t(c) * nv : M;
    for (int r = d.runs_at[i]; r < d.runs_at[i + 1]; r += 2) {
      const int k0 = d.runs[r], k1 = d.runs[r + 1];
      if (!rnea_derivatives_lower_fast(d.anc.data(), nv, Y6, B3, k0, k1, dqc, dvc, Mc))
        rnea_derivatives_lower(d.anc.data(), nv, Y6, B3, k0, k1, dqc, dvc, Mc);
    }
  }
  if (p > 0) {
    d.Ic[p] += Ic;
    d.hc[p] += d.hc[i];
    d.F[p] += d.F[i];
    d.Ac[p] = d.Ac[p] + A;
  }
}
template <class S>
TREEDYN_DERIVATIVES_STEP void rnea_derivatives_backward_step(const Model<S>& model, RneaDerivativesData<S>& d, int i,
                                                             S* dq, S* dv, S* M) {
  if (model.nv_i[i] == 1)
    rnea_derivatives_backward_joint<1>(model, d, i, dq, dv, M);
  else
    rnea_derivatives_backward_joint<0>(model, d, i, dq, dv, M);
}

// outputs, row-major nv x nv: dq = ∂τ/∂q, dv = ∂τ/∂q̇, M (or null); entries between coordinates
// of different branches are zero. τ is td.rnea's, M q̈ + c − τ_p: M with the armature, and the
// passive force's partials (algorithms/passive.hpp)
template <class S>
TREEDYN_ENTRY void rnea_derivatives(const Model<S>& model, RneaDerivativesData<S>& d, const S* q, const S* qd,
                                    const S* qdd, const S* fext, S* dq, S* dv, S* M) {
  const int nv = model.nv;
  if (!d.dense) {  // (the entries between branches; a chain's are all written below)
    std::fill(dq, dq + std::size_t(nv) * nv, S(0));
    std::fill(dv, dv + std::size_t(nv) * nv, S(0));
    if (M) std::fill(M, M + std::size_t(nv) * nv, S(0));
  }
  for (int i = 1; i <= model.N; ++i) {
    rnea_derivatives_velocity_step(model, d, i, q, qd, fext);
    rnea_derivatives_acceleration_step(model, d, i, qd, qdd);
  }
  for (int i = model.N; i >= 1; --i) rnea_derivatives_backward_step(model, d, i, dq, dv, M);
  for (int k = 0; M && model.has_armature && k < nv; ++k) M[std::size_t(k) * nv + k] += model.armature[k];
  if (model.has_springs) add_passive_partials(model, q, dq, dv);
}

}  // namespace treedyn
