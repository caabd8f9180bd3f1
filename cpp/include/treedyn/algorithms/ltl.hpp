// Factorisation of the joint-space inertia matrix exploiting branch-induced sparsity
// (Featherstone, "Efficient factorization of the joint space inertia matrix for branched
// kinematic trees", IJRR 24(6) 2005; cited as [8] by drumwright2012):
//   LTL   M = Lᵀ L   (L lower triangular)
//   LTDL  M = Lᵀ D L (L unit lower triangular)
// with the back-substitutions that solve M x = b (the same algorithms as RBDA §6.5 and
// spatial_v2's LTL.m / LTDL.m; loop comments name the paper's H_ij updates). Row k of L is non-zero only in the columns
// of the ancestors of coordinate k (λ over coordinates: a multi-DoF joint is a chain of coordinates), so no fill-in
// occurs: O(n d²) to factor, O(n d) per solve, for a tree of depth d.
//
// Storage: the n x n matrix of CRBA, column-major, factored in place. Both triangles hold M; the
// factor is written over the upper triangle read as row-major, i.e. L(k, j) (j ≤ k) is the entry
// at data[k n + j], so that row k of L, which the loops walk, is contiguous.
#pragma once
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "treedyn/algorithms/crba.hpp"
#include "treedyn/algorithms/pivots.hpp"
#include "treedyn/algorithms/rnea.hpp"
#include "treedyn/model/model.hpp"
#include "treedyn/support/parallel.hpp"

namespace treedyn {

// λ over coordinates: the previous coordinate of the same joint, else the last coordinate of the
// nearest ancestor that has coordinates, else -1
template <class S> std::vector<int> coordinate_parents(const Model<S>& model) {
  std::vector<int> lambda(model.nv, -1), last_coord(model.N + 1, -1);
  for (int i = 1; i <= model.N; ++i) {
    const int p = model.parent[i], vi = model.v_index[i], ni = model.nv_i[i];
    const int up = p > 0 ? last_coord[p] : -1;
    for (int a = 0; a < ni; ++a) lambda[vi + a] = a == 0 ? up : vi + a - 1;
    last_coord[i] = ni > 0 ? vi + ni - 1 : up;
  }
  return lambda;
}

// The refined scale of LTL's pivot p_k (algorithms/pivots.hpp, as cholesky_refined_scale): p_k is M's
// quadratic form on w = (1, −L_D⁻¹ ℓ) over k and its descendants D (eliminated before it, leaves
// first), ℓ_d = L_dk; s_k = Σ_j w_j² M_jj. L_D w_D = ℓ is solved root-side first (a descendant's row
// holds its ancestors only); O(n · depth), only for a pivot the screen refuses. H: the n x n storage;
// unit: L's diagonal is 1 (LTDL, its pivots held on the diagonal)
template <class S> S ltl_refined_scale(const S* H, int n, const int* lambda, const S* diag, int k, bool unit) {
  auto L = [&](int r, int j) { return H[std::size_t(r) * n + j]; };
  auto below = [&](int d) {  // d descends from k
    for (int j = lambda[d]; j >= k; j = lambda[j])
      if (j == k) return true;
    return false;
  };
  std::vector<S> w(n, S(0));
  S scale = diag[k];
  for (int d = k + 1; d < n; ++d) {
    if (!below(d)) continue;
    S x = L(d, k);
    for (int j = lambda[d]; j > k; j = lambda[j]) x -= L(d, j) * w[j];
    w[d] = unit ? x : x / L(d, d);
    scale += w[d] * w[d] * diag[d];
  }
  return scale;
}

// a pivot p of coordinate k is positive and finite, and, where M's diagonal is given, above the
// screen's share of M_kk or the rule's share of its refined scale (algorithms/pivots.hpp)
template <class S, class Refined> inline bool pivot_ok(const S& p, const S* diag, int k, const Refined& refined) {
  if (!(p > S(0)) || !std::isfinite(static_cast<double>(p))) return false;
  return !diag || p > screen_tolerance<S>() * diag[k] || p > pivot_tolerance<S>() * refined();
}

// LTL: M = Lᵀ L in place, k from the leaves (n-1) to the root; −1, or the first coordinate whose
// pivot is singular (M is then left part-factored)
template <class S> int ltl(S* H, int n, const int* lambda, const S* diag = nullptr) {
  using std::sqrt;
  auto L = [&](int k, int j) -> S& { return H[std::size_t(k) * n + j]; };
  for (int k = n - 1; k >= 0; --k) {
    if (!pivot_ok(L(k, k), diag, k, [&] { return ltl_refined_scale(H, n, lambda, diag, k, false); })) return k;
    L(k, k) = sqrt(L(k, k));                                                     // H_kk = √H_kk
    for (int i = lambda[k]; i >= 0; i = lambda[i]) L(k, i) = L(k, i) / L(k, k);  // H_ki = H_ki / H_kk
    for (int i = lambda[k]; i >= 0; i = lambda[i]) {                             // H_ij −= H_ki H_kj
      const S Lki = L(k, i);
      for (int j = i; j >= 0; j = lambda[j]) L(i, j) -= Lki * L(k, j);
    }
  }
  return -1;
}

// LTDL: M = Lᵀ D L in place, D on the diagonal, L unit lower; −1 or the singular coordinate, as ltl
template <class S> int ltdl(S* H, int n, const int* lambda, const S* diag = nullptr) {
  auto L = [&](int k, int j) -> S& { return H[std::size_t(k) * n + j]; };
  for (int k = n - 1; k >= 0; --k) {
    if (!pivot_ok(L(k, k), diag, k, [&] { return ltl_refined_scale(H, n, lambda, diag, k, true); })) return k;
    for (int i = lambda[k]; i >= 0; i = lambda[i]) {
      const S a = L(k, i) / L(k, k);                                  // a = H_ki / H_kk
      for (int j = i; j >= 0; j = lambda[j]) L(i, j) -= a * L(k, j);  // H_ij −= a H_kj
      L(k, i) = a;
    }
  }
  return -1;
}

// back-substitutions: x = M⁻¹ x in place for M = Lᵀ L
//   Lᵀ y = x  (leaves to root: y_k = x_k / L_kk, then x_i −= L_ki y_k for the ancestors i of k)
//   L x = y   (root to leaves: x_k = (y_k − Σ L_ki x_i) / L_kk)
// `from`: the last non-zero entry of x (entries after it are zero): the first pass starts there
template <class S> void ltl_solve(const S* H, int n, const int* lambda, S* x, int from = -1) {
  auto L = [&](int k, int j) { return H[std::size_t(k) * n + j]; };
  for (int k = from >= 0 ? from : n - 1; k >= 0; --k) {
    x[k] = x[k] / L(k, k);
    const S xk = x[k];
    for (int i = lambda[k]; i >= 0; i = lambda[i]) x[i] -= L(k, i) * xk;
  }
  for (int k = 0; k < n; ++k) {
    S t = x[k];
    for (int i = lambda[k]; i >= 0; i = lambda[i]) t -= L(k, i) * x[i];
    x[k] = t / L(k, k);
  }
}

// the same for M = Lᵀ D L: Lᵀ z = x, z = D⁻¹ z, L x = z
template <class S> void ltdl_solve(const S* H, int n, const int* lambda, S* x, int from = -1) {
  auto L = [&](int k, int j) { return H[std::size_t(k) * n + j]; };
  for (int k = from >= 0 ? from : n - 1; k >= 0; --k) {
    const S xk = x[k];
    for (int i = lambda[k]; i >= 0; i = lambda[i]) x[i] -= L(k, i) * xk;
  }
  for (int k = 0; k < n; ++k) x[k] = x[k] / L(k, k);
  for (int k = 0; k < n; ++k) {
    S t = x[k];
    for (int i = lambda[k]; i >= 0; i = lambda[i]) t -= L(k, i) * x[i];
    x[k] = t;
  }
}

// LTL on compact rows. Row k of L is non-zero only in its chain k, λ(k), λ(λ(k)), …, and the chain of an
// ancestor i of k is the tail of k's that starts at i. Held contiguously in that order (the layout of
// MuJoCo's sparse factor of M), row k's update of an ancestor's row, H_ij −= H_ki H_kj over j in chain(i),
// is one contiguous axpy with no index chasing: the same arithmetic as ltl in the same order, n d² / 2
// entries for a tree of depth d, where the n x n storage costs n² and walks λ per entry.
struct ChainRows {
  std::vector<int> adr, len, col;  // row k: columns col[adr[k] .. adr[k] + len[k]) = k, λ(k), ..., a root
  double squares = 0;              // Σ_k len_k²: twice the factor's multiply-adds
  void build(const std::vector<int>& lambda) {
    const int n = int(lambda.size());
    adr.assign(n, 0), len.assign(n, 0), col.clear(), squares = 0;
    for (int k = 0; k < n; ++k) {  // (λ(k) < k: parents before children)
      len[k] = 1 + (lambda[k] >= 0 ? len[lambda[k]] : 0);
      adr[k] = int(col.size());
      for (int j = k; j >= 0; j = lambda[j]) col.push_back(j);
      squares += double(len[k]) * len[k];
    }
  }
  int n() const { return int(adr.size()); }
  int nnz() const { return int(col.size()); }
  int pos(int k, int j) const { return len[k] - len[j]; }  // j's place in k's chain (j on it)
};

// H's lower triangle (M + diag(add), add may be null) on ChainRows storage, from M's n x n matrix
template <class S, class Mat> void ltl_rows_from(const Mat& M, const S* add, const ChainRows& c, S* L) {
  for (int k = 0; k < c.n(); ++k) {
    for (int p = 0; p < c.len[k]; ++p) L[c.adr[k] + p] = M(c.col[c.adr[k] + p], k);  // (M symmetric)
    if (add) L[c.adr[k]] += add[k];
  }
}

// ltl on ChainRows storage: L (nnz) holds H's lower triangle by rows on entry, its factor on return
template <class S> int ltl_rows(S* L, const ChainRows& c, const S* diag = nullptr) {
  using std::sqrt;
  for (int k = c.n() - 1; k >= 0; --k) {
    S* Lk = L + c.adr[k];
    const int* ck = c.col.data() + c.adr[k];
    const int d = c.len[k];
    // (diag: the screen alone; its one caller, the contact step's free motion, takes ABA below it, whose
    // test decides: contact/free_motion.hpp)
    if (!pivot_ok(Lk[0], diag, k, [] { return std::numeric_limits<S>::infinity(); })) return k;
    Lk[0] = sqrt(Lk[0]);  // H_kk = √H_kk
    const S inv = S(1) / Lk[0];
    for (int p = 1; p < d; ++p) Lk[p] *= inv;  // H_ki = H_ki / H_kk (by its reciprocal: one division a row)
    for (int p = 1; p < d; ++p) {              // H_ij −= H_ki H_kj, j over i's chain: k's from i on
      S* Li = L + c.adr[ck[p]];
      const S Lki = Lk[p];
      for (int q = 0; q < d - p; ++q) Li[q] -= Lki * Lk[p + q];
    }
  }
  return -1;
}

// H ± x xᵀ on ltl_rows' factor of H, in place: the rank-one update (sign +1) or downdate (−1) of Gill, Golub, Murray
// and Saunders ("Methods for modifying matrix factorizations", Math. Comp. 28, 1974, method C1) for x non-zero only
// on the chain of `top`, held in that chain's compact order (x[t]: its t-th coordinate; overwritten). The chain's
// rows are taken in their elimination order, top first, and row k = chain t's entries meet x from t on (k's chain is
// the tail of top's), so that each row's work is one contiguous sweep: Σ_t (len_top − t) ≈ len_top²/2 entries,
// where a new factor costs Σ_k len_k²/2. false (L part-modified) where a downdated pivot keeps under `keep` of its
// square (cancellation: the caller factors H afresh)
template <class S> bool ltl_rows_update(S* L, const ChainRows& c, int top, S* x, int sign, S keep = S(1e-6)) {
  using std::sqrt;
  const int d = c.len[top];
  const int* ct = c.col.data() + c.adr[top];
  for (int t = 0; t < d; ++t) {
    const S xk = x[t];
    if (xk == S(0)) continue;
    S* Lk = L + c.adr[ct[t]];
    const S r2 = Lk[0] * Lk[0] + S(sign) * xk * xk;  // r = √(L_kk² ± x_k²)
    if (!(r2 > keep * Lk[0] * Lk[0]) || !std::isfinite(static_cast<double>(r2))) return false;
    const S r = sqrt(r2), cos = r / Lk[0], sin = xk / Lk[0], sin_signed = S(sign) * sin;
    Lk[0] = r;
    for (int p = 1; p < d - t; ++p) {  // L_ki = (L_ki ± s x_i)/c, x_i = c x_i − s L_ki
      Lk[p] = (Lk[p] + sin_signed * x[t + p]) / cos;
      x[t + p] = cos * x[t + p] - sin * Lk[p];
    }
  }
  return true;
}

// ltl_solve on ChainRows storage
template <class S> void ltl_rows_solve(const S* L, const ChainRows& c, S* x) {
  for (int k = c.n() - 1; k >= 0; --k) {  // Lᵀ y = x
    const S* Lk = L + c.adr[k];
    const int* ck = c.col.data() + c.adr[k];
    x[k] = x[k] / Lk[0];
    const S xk = x[k];
    for (int p = 1; p < c.len[k]; ++p) x[ck[p]] -= Lk[p] * xk;
  }
  for (int k = 0; k < c.n(); ++k) {  // L x = y
    const S* Lk = L + c.adr[k];
    const int* ck = c.col.data() + c.adr[k];
    S t = x[k];
    for (int p = 1; p < c.len[k]; ++p) t -= Lk[p] * x[ck[p]];
    x[k] = t / Lk[0];
  }
}

}  // namespace treedyn
