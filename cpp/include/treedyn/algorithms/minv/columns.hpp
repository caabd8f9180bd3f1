// The column loops of mInv (minv/blocked.hpp): each joint's lines 5 and 8 of drumwright2012
// Alg. 1 over a contiguous range of columns of R = 1, on raw arrays. This header includes nothing and calls no
// library function, so that it can be compiled twice, once for any x86-64 and once for AVX2 + FMA
// (src/minv_kernels_avx2.cpp), with no inline function shared between the two (which the linker
// could otherwise pick from the AVX2 unit for a CPU without it). The namespace is set by the
// includer: TREEDYN_MINV_ISA (default `generic`).
//
// Layout: F and V are 6 rows of `ld` entries (row r is component r of [n; f] or [ω; v], column k
// is M⁻¹'s column k); `out` points at row v_i of M⁻¹ (row-major, `nv` entries per row).
#pragma once
#include <type_traits>  // compile-time only: no function of it reaches the object code
#if defined(__AVX2__)
#include <immintrin.h>  // always-inline intrinsics only
#endif

#ifndef TREEDYN_MINV_ISA
#define TREEDYN_MINV_ISA generic
#endif

// the loops read and write rows of F, V and M⁻¹ that never overlap: tell the compiler so that it
// vectorises them over columns (it cannot prove it by itself)
#ifndef TREEDYN_COLUMNS_INDEPENDENT
#if defined(__clang__)
#define TREEDYN_COLUMNS_INDEPENDENT _Pragma("clang loop vectorize(assume_safety)")
#elif defined(__GNUC__)
#define TREEDYN_COLUMNS_INDEPENDENT _Pragma("GCC ivdep")
#else
#define TREEDYN_COLUMNS_INDEPENDENT
#endif
#endif

namespace treedyn {

// the loops of one instruction set, by pointer: every unit that compiles them fills one (with
// column_kernels below, in its own namespace), and minv/kernels.hpp chooses among them. Plain
// data, so that the AVX2 unit may define it without sharing any inline function.
template <class S> struct MinvKernels {
  void (*impulse[4])(const S*, const S*, S*, long, S*, long, int, int);  // impulse_columns, NI = 1, 2, 3, 6
  void (*velocity[4])(const S*, const S*, const S*, S*, long, S*, long, int, int, bool);  // velocity_columns
  void (*impulse_pair)(const S*, const S*, const S*, const S*, S*, long, S*, S*, int, int);
  void (*velocity_pair)(const S*, const S*, S, const S*, const S*, S, S*, long, S*, S*, int, int);
  void (*cross)(const S*, const S*, long, S*, int, int);  // cross_row
  void (*cross_col)(const S*, long, const S*, S*, long, int);
  void (*base)(const S*, const S*, const S*, S*, long, S*, long, int, int);  // base_columns
  int (*mirror)(S*, long, int, int, int, int);  // mirror_block: non-zero if it read inf / NaN
  const char* isa;
};

namespace TREEDYN_MINV_ISA {

// line 5 for joint i over the columns [k0, k1) of its subtree, its own columns excluded:
//   u = −ŝᵀ F(:, k)          (R_ik = 0, F(:, k) = Ŷ^A_i(:, k)), kept in row i of M⁻¹
//   F(:, k) += Ũ u           (Ŷ^A_λ(:, k) = Ŷ^A_i + Ũ u)
// s, Ut: NI x 6 (ŝ and Ũ = Î^A ŝ (ŝᵀÎ^A ŝ)⁻¹, one joint column per row)
template <class S, int NI>
void impulse_columns(const S* s, const S* Ut, S* F, long ld, S* out, long nv, int k0, int k1) {
  S* __restrict__ f0 = F;
  S* __restrict__ f1 = F + ld;
  S* __restrict__ f2 = F + 2 * ld;
  S* __restrict__ f3 = F + 3 * ld;
  S* __restrict__ f4 = F + 4 * ld;
  S* __restrict__ f5 = F + 5 * ld;
  TREEDYN_COLUMNS_INDEPENDENT
  for (int k = k0; k < k1; ++k) {
    const S x0 = f0[k], x1 = f1[k], x2 = f2[k], x3 = f3[k], x4 = f4[k], x5 = f5[k];
    S u[NI];
    for (int a = 0; a < NI; ++a) {
      const S* sa = s + 6 * a;
      u[a] = -(sa[0] * x0 + sa[1] * x1 + sa[2] * x2 + sa[3] * x3 + sa[4] * x4 + sa[5] * x5);
      out[a * nv + k] = u[a];
    }
    S y0 = x0, y1 = x1, y2 = x2, y3 = x3, y4 = x4, y5 = x5;
    for (int a = 0; a < NI; ++a) {
      const S* ua = Ut + 6 * a;
      y0 = y0 + ua[0] * u[a];
      y1 = y1 + ua[1] * u[a];
      y2 = y2 + ua[2] * u[a];
      y3 = y3 + ua[3] * u[a];
      y4 = y4 + ua[4] * u[a];
      y5 = y5 + ua[5] * u[a];
    }
    f0[k] = y0, f1[k] = y1, f2[k] = y2, f3[k] = y3, f4[k] = y4, f5[k] = y5;
  }
}

// lines 8-10 for joint i over the columns [k0, k1) of its subtree, its own columns included:
//   Δq̂ = (ŝᵀÎ^Aŝ)⁻¹(u − (Î^Aŝ)ᵀ V(:, k))   written over u in row i of M⁻¹
//   V(:, k) += ŝ Δq̂                          (Δv̂_i = Δv̂_λ + ŝ Δq̂)
// root: Δv̂_λ = 0̂ (V is not read). s, U: NI x 6; Di: NI x NI
template <class S, int NI>
void velocity_columns(const S* s, const S* U, const S* Di, S* V, long ld, S* out, long nv, int k0, int k1, bool root) {
  S* __restrict__ v0 = V;
  S* __restrict__ v1 = V + ld;
  S* __restrict__ v2 = V + 2 * ld;
  S* __restrict__ v3 = V + 3 * ld;
  S* __restrict__ v4 = V + 4 * ld;
  S* __restrict__ v5 = V + 5 * ld;
  if (root) {
    TREEDYN_COLUMNS_INDEPENDENT
    for (int k = k0; k < k1; ++k) {
      S dq[NI];
      for (int a = 0; a < NI; ++a) {
        S t = Di[a * NI] * out[k];
        for (int b = 1; b < NI; ++b) t = t + Di[a * NI + b] * out[b * nv + k];
        dq[a] = t;
      }
      S y0 = s[0] * dq[0], y1 = s[1] * dq[0], y2 = s[2] * dq[0], y3 = s[3] * dq[0], y4 = s[4] * dq[0],
        y5 = s[5] * dq[0];
      for (int a = 1; a < NI; ++a) {
        const S* sa = s + 6 * a;
        y0 = y0 + sa[0] * dq[a], y1 = y1 + sa[1] * dq[a], y2 = y2 + sa[2] * dq[a];
        y3 = y3 + sa[3] * dq[a], y4 = y4 + sa[4] * dq[a], y5 = y5 + sa[5] * dq[a];
      }
      for (int a = 0; a < NI; ++a) out[a * nv + k] = dq[a];
      v0[k] = y0, v1[k] = y1, v2[k] = y2, v3[k] = y3, v4[k] = y4, v5[k] = y5;
    }
    return;
  }
  TREEDYN_COLUMNS_INDEPENDENT
  for (int k = k0; k < k1; ++k) {
    const S x0 = v0[k], x1 = v1[k], x2 = v2[k], x3 = v3[k], x4 = v4[k], x5 = v5[k];
    S e[NI], dq[NI];
    for (int b = 0; b < NI; ++b) {
      const S* ub = U + 6 * b;
      e[b] = out[b * nv + k] - (ub[0] * x0 + ub[1] * x1 + ub[2] * x2 + ub[3] * x3 + ub[4] * x4 + ub[5] * x5);
    }
    for (int a = 0; a < NI; ++a) {
      S t = Di[a * NI] * e[0];
      for (int b = 1; b < NI; ++b) t = t + Di[a * NI + b] * e[b];
      dq[a] = t;
    }
    S y0 = x0, y1 = x1, y2 = x2, y3 = x3, y4 = x4, y5 = x5;
    for (int a = 0; a < NI; ++a) {
      const S* sa = s + 6 * a;
      y0 = y0 + sa[0] * dq[a], y1 = y1 + sa[1] * dq[a], y2 = y2 + sa[2] * dq[a];
      y3 = y3 + sa[3] * dq[a], y4 = y4 + sa[4] * dq[a], y5 = y5 + sa[5] * dq[a];
    }
    for (int a = 0; a < NI; ++a) out[a * nv + k] = dq[a];
    v0[k] = y0, v1[k] = y1, v2[k] = y2, v3[k] = y3, v4[k] = y4, v5[k] = y5;
  }
}

// Two 1-DoF joints at once, p and its only child c (a stretch of a chain), over the columns of
// c's subtree: the 6 entries of F(:, k) (or V(:, k)) stay in registers between the two joints,
// which halves the traffic of F and V. The arithmetic is the two single-joint steps', in order.
// backward: joint c, then p (lines 4-5)
template <class S>
void impulse_columns_pair(const S* sc, const S* Utc, const S* sp, const S* Utp, S* F, long ld, S* outc, S* outp, int k0,
                          int k1) {
  S* __restrict__ f0 = F;
  S* __restrict__ f1 = F + ld;
  S* __restrict__ f2 = F + 2 * ld;
  S* __restrict__ f3 = F + 3 * ld;
  S* __restrict__ f4 = F + 4 * ld;
  S* __restrict__ f5 = F + 5 * ld;
  TREEDYN_COLUMNS_INDEPENDENT
  for (int k = k0; k < k1; ++k) {
    S x0 = f0[k], x1 = f1[k], x2 = f2[k], x3 = f3[k], x4 = f4[k], x5 = f5[k];
    const S uc = -(sc[0] * x0 + sc[1] * x1 + sc[2] * x2 + sc[3] * x3 + sc[4] * x4 + sc[5] * x5);
    outc[k] = uc;
    x0 = x0 + Utc[0] * uc, x1 = x1 + Utc[1] * uc, x2 = x2 + Utc[2] * uc;
    x3 = x3 + Utc[3] * uc, x4 = x4 + Utc[4] * uc, x5 = x5 + Utc[5] * uc;
    const S up = -(sp[0] * x0 + sp[1] * x1 + sp[2] * x2 + sp[3] * x3 + sp[4] * x4 + sp[5] * x5);
    outp[k] = up;
    f0[k] = x0 + Utp[0] * up, f1[k] = x1 + Utp[1] * up, f2[k] = x2 + Utp[2] * up;
    f3[k] = x3 + Utp[3] * up, f4[k] = x4 + Utp[4] * up, f5[k] = x5 + Utp[5] * up;
  }
}

// forward: joint p, then c (lines 7-10); p is not a root (V holds Δv̂_λ(p))
template <class S>
void velocity_columns_pair(const S* sp, const S* Up, S Dp, const S* sc, const S* Uc, S Dc, S* V, long ld, S* outp,
                           S* outc, int k0, int k1) {
  S* __restrict__ v0 = V;
  S* __restrict__ v1 = V + ld;
  S* __restrict__ v2 = V + 2 * ld;
  S* __restrict__ v3 = V + 3 * ld;
  S* __restrict__ v4 = V + 4 * ld;
  S* __restrict__ v5 = V + 5 * ld;
  TREEDYN_COLUMNS_INDEPENDENT
  for (int k = k0; k < k1; ++k) {
    S x0 = v0[k], x1 = v1[k], x2 = v2[k], x3 = v3[k], x4 = v4[k], x5 = v5[k];
    const S qp = Dp * (outp[k] - (Up[0] * x0 + Up[1] * x1 + Up[2] * x2 + Up[3] * x3 + Up[4] * x4 + Up[5] * x5));
    outp[k] = qp;
    x0 = x0 + sp[0] * qp, x1 = x1 + sp[1] * qp, x2 = x2 + sp[2] * qp;
    x3 = x3 + sp[3] * qp, x4 = x4 + sp[4] * qp, x5 = x5 + sp[5] * qp;
    const S qc = Dc * (outc[k] - (Uc[0] * x0 + Uc[1] * x1 + Uc[2] * x2 + Uc[3] * x3 + Uc[4] * x4 + Uc[5] * x5));
    outc[k] = qc;
    v0[k] = x0 + sc[0] * qc, v1[k] = x1 + sc[1] * qc, v2[k] = x2 + sc[2] * qc;
    v3[k] = x3 + sc[3] * qc, v4[k] = x4 + sc[4] * qc, v5[k] = x5 + sc[5] * qc;
  }
}

// a cross-branch row: out[k] = −y ᵀ V(:, k) for k in [k0, k1) (M⁻¹(j, k) = −Ŷ^A_a(:, j)ᵀ Δv̂_a(:, k))
template <class S> void cross_row(const S* y, const S* V, long ld, S* out, int k0, int k1) {
  const S* __restrict__ v0 = V;
  const S* __restrict__ v1 = V + ld;
  const S* __restrict__ v2 = V + 2 * ld;
  const S* __restrict__ v3 = V + 3 * ld;
  const S* __restrict__ v4 = V + 4 * ld;
  const S* __restrict__ v5 = V + 5 * ld;
  S* __restrict__ o = out;
  const S y0 = y[0], y1 = y[1], y2 = y[2], y3 = y[3], y4 = y[4], y5 = y[5];
  TREEDYN_COLUMNS_INDEPENDENT
  for (int k = k0; k < k1; ++k) o[k] = -(y0 * v0[k] + y1 * v1[k] + y2 * v2[k] + y3 * v3[k] + y4 * v4[k] + y5 * v5[k]);
}

// the same for a block with few columns: column k of the rows [0, count) (M⁻¹(j0 + i, k) for
// out = &M⁻¹(j0, k)): y points at Ŷ^A_a(:, j0) in 6 saved rows of stride ylen; v = Δv̂_a(:, k)
template <class S> void cross_col(const S* y, long ylen, const S* v, S* out, long nv, int count) {
  const S* __restrict__ y0 = y;
  const S* __restrict__ y1 = y + ylen;
  const S* __restrict__ y2 = y + 2 * ylen;
  const S* __restrict__ y3 = y + 3 * ylen;
  const S* __restrict__ y4 = y + 4 * ylen;
  const S* __restrict__ y5 = y + 5 * ylen;
  const S v0 = v[0], v1 = v[1], v2 = v[2], v3 = v[3], v4 = v[4], v5 = v[5];
  TREEDYN_COLUMNS_INDEPENDENT
  for (int i = 0; i < count; ++i)
    out[i * nv] = -(y0[i] * v0 + y1[i] * v1 + y2[i] * v2 + y3[i] * v3 + y4[i] * v4 + y5[i] * v5);
}

// Alg. 2 lines 6-10 over columns [k0, k1): Δv̂_0 = −G F(:, k) (F holds Ŷ^A_0, or −ŝ⁻ᵀ e_k on the
// base's own columns), V(:, k) = Δv̂_0, the base's rows of M⁻¹ = P Δv̂_0. G = Î^A_0⁻¹, P = ŝ_base⁻¹
// (6 x 6, row-major); out points at row 0 of M⁻¹
template <class S> void base_columns(const S* G, const S* P, const S* F, S* V, long ld, S* out, long nv, int k0,
                                     int k1) {
  TREEDYN_COLUMNS_INDEPENDENT
  for (int k = k0; k < k1; ++k) {
    S x[6], dv[6];
    for (int r = 0; r < 6; ++r) x[r] = F[r * ld + k];
    for (int r = 0; r < 6; ++r) {
      const S* g = G + 6 * r;
      dv[r] = -(g[0] * x[0] + g[1] * x[1] + g[2] * x[2] + g[3] * x[3] + g[4] * x[4] + g[5] * x[5]);
      V[r * ld + k] = dv[r];
    }
    for (int r = 0; r < 6; ++r) {
      const S* p = P + 6 * r;
      out[r * nv + k] = p[0] * dv[0] + p[1] * dv[1] + p[2] * dv[2] + p[3] * dv[3] + p[4] * dv[4] + p[5] * dv[5];
    }
  }
}

// the lower triangle from the upper one, for the upper rows [r0, r1) and the columns [c0, c1):
// M⁻¹(k, j) = M⁻¹(j, k) for j in [r0, r1), k in [c0, c1), k > j (tiles of 8 rows keep both the
// strided reads and the writes in cache); the diagonal M⁻¹(k, k) of those rows is read too.
// Returns non-zero if an entry read is inf or NaN (x − x is NaN exactly then): the results are
// checked where they pass through registers anyway, not by another sweep over n² entries.
template <class S> int mirror_block(S* M, long nv, int r0, int r1, int c0, int c1) {
  int bad = 0;
  for (int jb = r0; jb < r1; jb += 8) {
    const int je = jb + 8 < r1 ? jb + 8 : r1;
    if constexpr (std::is_floating_point<S>::value)
      for (int j = jb; j < je; ++j)
        if (j >= c0 && j < c1) {
          const S d = M[j * nv + j] - M[j * nv + j];
          bad |= !(d == d);
        }
    int k = c0 > jb + 1 ? c0 : jb + 1;
#if defined(__AVX2__)
    if constexpr (std::is_same<S, double>::value) {
      // 4 x 4 blocks: rows j..j+3 at columns k..k+3 -> rows k..k+3 at columns j..j+3, for blocks
      // entirely below the diagonal (k >= je); the rest goes one entry at a time below
      if (je - jb == 8) {
        const int kstart = k > je ? k : je;
        __m256d nan_acc = _mm256_setzero_pd();
        int kk = kstart;
        for (; kk + 4 <= c1; kk += 4)
          for (int j = jb; j < je; j += 4) {
            const __m256d a0 = _mm256_loadu_pd(M + j * nv + kk), a1 = _mm256_loadu_pd(M + (j + 1) * nv + kk);
            const __m256d a2 = _mm256_loadu_pd(M + (j + 2) * nv + kk), a3 = _mm256_loadu_pd(M + (j + 3) * nv + kk);
            nan_acc = _mm256_add_pd(nan_acc, _mm256_mul_pd(_mm256_setzero_pd(), _mm256_add_pd(_mm256_add_pd(a0, a1),
                                                                                              _mm256_add_pd(a2, a3))));
            const __m256d t0 = _mm256_unpacklo_pd(a0, a1), t1 = _mm256_unpackhi_pd(a0, a1);
            const __m256d t2 = _mm256_unpacklo_pd(a2, a3), t3 = _mm256_unpackhi_pd(a2, a3);
            _mm256_storeu_pd(M + kk * nv + j, _mm256_permute2f128_pd(t0, t2, 0x20));
            _mm256_storeu_pd(M + (kk + 1) * nv + j, _mm256_permute2f128_pd(t1, t3, 0x20));
            _mm256_storeu_pd(M + (kk + 2) * nv + j, _mm256_permute2f128_pd(t0, t2, 0x31));
            _mm256_storeu_pd(M + (kk + 3) * nv + j, _mm256_permute2f128_pd(t1, t3, 0x31));
          }
        // 0 * (sum) is 0 for finite entries and NaN as soon as one is inf or NaN
        const __m256d isnan = _mm256_cmp_pd(nan_acc, nan_acc, _CMP_UNORD_Q);
        bad |= _mm256_movemask_pd(isnan) != 0;
        // the columns before kstart (at the diagonal) and after the last full block: one by one
        for (int k2 = k; k2 < kstart && k2 < c1; ++k2) {
          S* __restrict__ dst = M + k2 * nv;
          const int jend = je < k2 ? je : k2;
          for (int j = jb; j < jend; ++j) {
            const S x = M[j * nv + k2];
            const S d = x - x;
            bad |= !(d == d);
            dst[j] = x;
          }
        }
        k = kk;  // the tail [kk, c1) below
      }
    }
#endif
    for (; k < c1; ++k) {
      S* __restrict__ dst = M + k * nv;
      const int jend = je < k ? je : k;
      for (int j = jb; j < jend; ++j) {
        const S x = M[j * nv + k];
        if constexpr (std::is_floating_point<S>::value) {  // (not for the counting scalar)
          const S d = x - x;
          bad |= !(d == d);
        }
        dst[j] = x;
      }
    }
  }
  return bad;
}

// this instruction set's table (a constant expression: a unit's table is filled at compile time,
// and no code of the unit runs before the CPU is known to have its instructions)
template <class S> constexpr MinvKernels<S> column_kernels(const char* isa) {
  return {{&impulse_columns<S, 1>, &impulse_columns<S, 2>, &impulse_columns<S, 3>, &impulse_columns<S, 6>},
          {&velocity_columns<S, 1>, &velocity_columns<S, 2>, &velocity_columns<S, 3>, &velocity_columns<S, 6>},
          &impulse_columns_pair<S>,
          &velocity_columns_pair<S>,
          &cross_row<S>,
          &cross_col<S>,
          &base_columns<S>,
          &mirror_block<S>,
          isa};
}

}  // namespace TREEDYN_MINV_ISA
}  // namespace treedyn
