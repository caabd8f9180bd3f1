// Odd–even elimination of a symmetric positive definite block tri-diagonal system
// (yang-wu-pan §IV, Alg. 2 "OEESolvBTDSys"; Hyafil-Kung, Levit):
//
//   [ D_0   U_0                ] [x_0]   [R_0]
//   [ U_0ᵀ  D_1   U_1          ] [x_1] = [R_1]        D_i (k x k) symmetric, U_i (k x k),
//   [       U_1ᵀ  D_2  ...     ] [...]   [...]        R_i (k x m): m right-hand sides
//   [             ...  D_{n-1} ] [   ]   [   ]
//
// Level j (stride s = 2^{j-1}) removes from every row i its couplings to rows i ± s, so that row i
// couples only to i ± 2s; after ⌈log₂ n⌉ levels every row stands alone and x_i = D_i⁻¹ R_i
// (Alg. 2 line 20). The coefficient matrices are obtained by solving with D (Alg. 2 lines 3-4),
// never by inverting it. Every level's updates are independent over i and spread over OpenMP
// threads; each output block is written by one thread from the previous level's values only
// (double buffering), so the result does not depend on the number of threads. Each level
// factorises every D_i once (Cholesky) and uses the factor for both coefficient solves.
//
// Iterative refinement. Each x_i comes out of its own elimination tree, so the x_i do not solve one
// perturbed system together: OEE is not backward stable. On an ill-conditioned A (cfa's
// constraint-force system when link masses span 1e6) its componentwise backward error reaches
// 1e-10 in double, and cfa's accelerations lose 3-6 digits more than ABA's. oee_solve therefore
// follows the elimination by fixed-precision iterative refinement (Skeel 1980; Higham, Accuracy
// and Stability of Numerical Algorithms, 2nd ed., §12.2): r = R − A X from the original blocks,
// A dX = r with the coefficients of every level kept from the elimination (no new factorisation:
// O(n log n) multiply-adds of k x k blocks by k x m ones per sweep, ⌈log₂ n⌉ parallel levels),
// X ← X + dX. The stopping rule is LAPACK xGERFS's on the componentwise backward error
// ω = max ‖r_i‖ / ‖(|A||X| + |R|)_i‖ per block (Oettli–Prager): stop when ω ≤ u, when a sweep does not halve ω,
// or after 5 sweeps. One sweep brings ω from 1e-10 to about u; X then solves (A + ΔA) X = R + ΔR
// with ΔA, ΔR bounded block row by block row by ω|A|, ω|R|, and its error is governed by Skeel's cond(A, X), which is
// insensitive to how the rows are scaled.
// K: the block size at compile time (fixed-size Eigen blocks, much faster for k <= 6), or
// Eigen::Dynamic.
//
// 0-based indices here (the paper counts from 1). Storage: flat row-major blocks, as numpy's
// C-contiguous (n, k, k) and (n, k, m) arrays.
#pragma once
#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "treedyn/support/parallel.hpp"  // parallel_range

namespace treedyn {

struct NotPositiveDefinite : std::domain_error {
  using std::domain_error::domain_error;
};

// per-instance workspace for n blocks of size k and m right-hand sides, allocated once (the
// right-hand-side buffers grow with m and never shrink, so alternating m does not reallocate)
template <class S, int K = Eigen::Dynamic> struct OeeWorkspace {
  using MatK = Eigen::Matrix<S, K, K, Eigen::RowMajor>;
  int n = 0, k = 0, m = 0;
  std::vector<S> D, Dn;  // n k²: D_i^(j-1) and D_i^(j)
  std::vector<S> U, Un;  // n k²: U_i^(j-1) and U_i^(j) (block i couples i to i + 2^{j-1})
  // (E_i^(j))ᵀ = D_{i+s}⁻¹ U_iᵀ and (K_i^(j))ᵀ = D_i⁻¹ U_i (Alg. 2 lines 3-4) of every level j, for
  // the refinement's solves: level j's n − 2^{j-1} blocks start at block first[j − 1]
  std::vector<S> Et, Kt;  // Σ_j (n − 2^{j-1}) k² ≈ n ⌈log₂ n⌉ k²
  std::vector<std::size_t> first;
  std::vector<Eigen::LLT<MatK>> llt;  // n: the Cholesky factor of D_i^(j-1); after the last level, of D_i
  std::vector<S> R, Rn;               // n k m: R_i^(j-1) and R_i^(j)
  std::vector<S> dX;                  // n k m: a refinement sweep's correction
  OeeWorkspace() = default;
  OeeWorkspace(int n_, int k_, int m_) { resize(n_, k_, m_); }
  void resize(int n_, int k_, int m_) {
    if (K != Eigen::Dynamic && k_ != K) throw std::invalid_argument("OeeWorkspace: block size differs from K");
    if (n_ != n || k_ != k) {
      n = n_, k = k_;
      const size_t kk = size_t(n) * k * k;
      for (auto* v : {&D, &Dn, &U, &Un}) v->assign(kk, S(0));
      first.assign(1, 0);
      for (int s = 1; s < n; s *= 2) first.push_back(first.back() + size_t(n - s));
      Et.assign(first.back() * k * k, S(0));
      Kt.assign(first.back() * k * k, S(0));
      llt.clear();     // each built in place (reserve: no moves): copying an LLT not yet computed reads its
      llt.reserve(n);  // uninitialised info() (UB, found by .ci/sanitize)
      for (int i = 0; i < n; ++i) llt.emplace_back(k);
    }
    m = m_;
    const size_t km = size_t(n) * k * m;
    for (auto* v : {&R, &Rn, &dX})
      if (v->size() < km) v->resize(km, S(0));
  }
};

namespace oee_detail {
template <class S, int K> using MatK = Eigen::Matrix<S, K, K, Eigen::RowMajor>;
template <class S, int K> using MatKm = Eigen::Matrix<S, K, Eigen::Dynamic, Eigen::RowMajor>;

// the k x k and k x m row-major blocks i of a flat array
template <class S, int K> inline Eigen::Map<MatK<S, K>> sq(S* a, size_t i, int k) {
  return Eigen::Map<MatK<S, K>>(a + i * k * k, k, k);
}
template <class S, int K> inline Eigen::Map<const MatK<S, K>> sq(const S* a, size_t i, int k) {
  return Eigen::Map<const MatK<S, K>>(a + i * k * k, k, k);
}
template <class S, int K> inline Eigen::Map<MatKm<S, K>> rect(S* a, size_t i, int k, int m) {
  return Eigen::Map<MatKm<S, K>>(a + i * k * m, k, m);
}
template <class S, int K> inline Eigen::Map<const MatKm<S, K>> rect(const S* a, size_t i, int k, int m) {
  return Eigen::Map<const MatKm<S, K>>(a + i * k * m, k, m);
}

// factorise every D_i (Cholesky), in parallel; a block that is not positive definite is reported
// (the lowest index, whatever the threads)
template <class S, int K> void factorise_all(OeeWorkspace<S, K>& w, int level) {
  const int n = w.n, k = w.k;
  int bad = n;
  std::mutex lowest;
  parallel_range(0, n, 64, [&](int i) {
    w.llt[i].compute(sq<S, K>(w.D.data(), i, k));
    if (w.llt[i].info() != Eigen::Success) {
      std::lock_guard<std::mutex> lk(lowest);
      bad = std::min(bad, i);
    }
  });
  if (bad < n)
    throw NotPositiveDefinite(
        "odd-even elimination: block D_" + std::to_string(bad) + " is not positive definite at level " +
        std::to_string(level) + " (the block tri-diagonal matrix must be symmetric positive definite" +
        (std::is_same<S, float>::value ? "; in float32 it may only be too ill-conditioned for the precision)" : ")"));
}
}  // namespace oee_detail

// one level j (stride s = 2^{j-1}) of the elimination of D and U: lines 3-4, then lines 9-10 and 17 of Alg. 2
template <class S, int K> void oee_level(OeeWorkspace<S, K>& w, int s, int j) {
  using namespace oee_detail;
  const int n = w.n, k = w.k;
  const int n_pairs = n - s;  // couplings i <-> i + s that exist
  S* Et = w.Et.data() + w.first[j - 1] * k * k;
  S* Kt = w.Kt.data() + w.first[j - 1] * k * k;
  factorise_all(w, j - 1);
  // coefficients, in parallel for i = 0 .. n - s - 1 (Alg. 2 lines 2-6):
  // D_{i+s} E_iᵀ = U_iᵀ (line 3), D_i K_iᵀ = U_i (line 4)
  parallel_range(0, n_pairs, 64, [&](int i) {
    const auto Ui = sq<S, K>(w.U.data(), i, k);
    auto Eit = sq<S, K>(Et, i, k);
    auto Kit = sq<S, K>(Kt, i, k);
    Eit = Ui.transpose();
    w.llt[i + s].solveInPlace(Eit);
    Kit = Ui;
    w.llt[i].solveInPlace(Kit);
  });
  // updates, in parallel for i = 0 .. n - 1 (Alg. 2 lines 8-10, 17), each block by one thread:
  // D_i ← D_i − E_i U_iᵀ − K_{i-s} U_{i-s}          (lines 9, 10)
  // U_i ← −E_i U_{i+s}   for i < n − 2s            (line 17)
  parallel_range(0, n, 64, [&](int i) {
    auto Dn = sq<S, K>(w.Dn.data(), i, k);
    Dn = sq<S, K>(w.D.data(), i, k);
    if (i + s < n) {
      const auto Ei = sq<S, K>(Et, i, k).transpose();
      Dn.noalias() -= Ei * sq<S, K>(w.U.data(), i, k).transpose();
      if (i + 2 * s < n) sq<S, K>(w.Un.data(), i, k).noalias() = -Ei * sq<S, K>(w.U.data(), i + s, k);
    }
    if (i - s >= 0) Dn.noalias() -= sq<S, K>(Kt, i - s, k).transpose() * sq<S, K>(w.U.data(), i - s, k);
  });
  std::swap(w.D, w.Dn);
  std::swap(w.U, w.Un);
}

// the ⌈log₂ n⌉ levels on D and U (Alg. 2 line 1), keeping every level's coefficients, then the
// Cholesky factors of the decoupled D_i (for line 20)
template <class S, int K> void oee_factorise(OeeWorkspace<S, K>& w, const S* D, const S* U) {
  const int n = w.n, k = w.k;
  std::copy(D, D + size_t(n) * k * k, w.D.begin());
  std::copy(U, U + size_t(n - 1) * k * k, w.U.begin());
  int j = 1;
  for (int s = 1; s < n; s *= 2, ++j) oee_level(w, s, j);
  oee_detail::factorise_all(w, j - 1);
}

// X = A⁻¹ w.R by the kept coefficients: R_i ← R_i − E_i R_{i+s} − K_{i-s} R_{i-s} level by level
// (Alg. 2 lines 11-13), then x_i = D_i⁻¹ R_i (lines 19-21). w.R is overwritten.
template <class S, int K> void oee_substitute(OeeWorkspace<S, K>& w, S* X) {
  using namespace oee_detail;
  const int n = w.n, k = w.k, m = w.m;
  int j = 1;
  for (int s = 1; s < n; s *= 2, ++j) {
    const S* Et = w.Et.data() + w.first[j - 1] * k * k;
    const S* Kt = w.Kt.data() + w.first[j - 1] * k * k;
    parallel_range(0, n, 64, [&](int i) {
      auto Rn = rect<S, K>(w.Rn.data(), i, k, m);
      Rn = rect<S, K>(w.R.data(), i, k, m);
      if (i + s < n) Rn.noalias() -= sq<S, K>(Et, i, k).transpose() * rect<S, K>(w.R.data(), i + s, k, m);
      if (i - s >= 0) Rn.noalias() -= sq<S, K>(Kt, i - s, k).transpose() * rect<S, K>(w.R.data(), i - s, k, m);
    });
    std::swap(w.R, w.Rn);
  }
  parallel_range(0, n, 64, [&](int i) {
    auto Xi = rect<S, K>(X, i, k, m);
    Xi = rect<S, K>(w.R.data(), i, k, m);
    w.llt[i].solveInPlace(Xi);
  });
}

// r = R − A X into w.R, from the original blocks; returns the block-wise backward error
// ω = max over blocks i and columns of ‖r_i‖∞ / ‖(|A||X| + |R|)_i‖∞ (Oettli–Prager taken per k-row
// block rather than per row, so that a row whose |A||X| + |R| is itself at rounding level, as
// where A has exact zeros, does not stall the test; still invariant to scaling each block; 0/0 is 0)
template <class S, int K> S oee_residual(OeeWorkspace<S, K>& w, const S* D, const S* U, const S* R, const S* X) {
  using namespace oee_detail;
  const int n = w.n, k = w.k, m = w.m;
  // ω per thread, then the largest (max: the same for any split)
  S omega = 0;
  std::mutex reduce;
  parallel_chunks(0, n, 64, [&](std::ptrdiff_t i0, std::ptrdiff_t i1, int) {
    S omega_part = 0;
    for (int i = int(i0); i < int(i1); ++i) {
      auto r = rect<S, K>(w.R.data(), i, k, m);
      const auto Di = sq<S, K>(D, i, k);
      const auto Xi = rect<S, K>(X, i, k, m);
      r = rect<S, K>(R, i, k, m);
      r.noalias() -= Di * Xi;
      if (i + 1 < n) r.noalias() -= sq<S, K>(U, i, k) * rect<S, K>(X, i + 1, k, m);
      if (i > 0) r.noalias() -= sq<S, K>(U, i - 1, k).transpose() * rect<S, K>(X, i - 1, k, m);
      for (int b = 0; b < m; ++b) {  // |R_i| + Σ_j |A_ij| |X_j|, one column at a time (no allocation for fixed K)
        Eigen::Matrix<S, K, 1> scale = rect<S, K>(R, i, k, m).col(b).cwiseAbs();
        scale.noalias() += Di.cwiseAbs() * Xi.col(b).cwiseAbs();
        if (i + 1 < n) scale.noalias() += sq<S, K>(U, i, k).cwiseAbs() * rect<S, K>(X, i + 1, k, m).col(b).cwiseAbs();
        if (i > 0)
          scale.noalias() +=
              sq<S, K>(U, i - 1, k).transpose().cwiseAbs() * rect<S, K>(X, i - 1, k, m).col(b).cwiseAbs();
        const S ra = r.col(b).cwiseAbs().maxCoeff(), sa = scale.maxCoeff();
        omega_part =
            std::max(omega_part, sa > S(0) ? ra / sa : (ra > S(0) ? std::numeric_limits<S>::infinity() : S(0)));
      }
    }
    std::lock_guard<std::mutex> lk(reduce);
    omega = std::max(omega, omega_part);
  });
  return omega;
}

// the backward error ω above which oee_solve's X is not vouched for: refinement that converges ends
// at ω ≈ u (it stops at ω ≤ u or when a sweep no longer halves ω, i.e. within a few u of where the
// rounding of the residual leaves it); 2^8 u leaves room for that and is still far below the 1e-12
// to 1e-10 that OEE alone leaves on cfa's ill-conditioned chains
template <class S> constexpr S oee_backward_error_limit() { return S(256) * (std::numeric_limits<S>::epsilon() / 2); }

// X = A⁻¹ R for A already eliminated by oee_factorise(w, D, U) (D, U the same original blocks):
// substitution, then iterative refinement (see the top of this file). R (n k m) and X may not
// alias. Returns ω, the componentwise backward error of X: about u when the refinement converged.
template <class S, int K>
S oee_solve_factorised(OeeWorkspace<S, K>& w, int m, const S* D, const S* U, const S* R, S* X) {
  if (w.m != m) w.resize(w.n, w.k, m);
  const int n = w.n, k = w.k;
  if (n == 0 || k == 0 || m == 0) return S(0);
  std::copy(R, R + size_t(n) * k * m, w.R.begin());
  oee_substitute(w, X);
  // refinement (LAPACK xGERFS's rule): while ω > u and the last sweep halved ω, at most 5 sweeps
  const S u = std::numeric_limits<S>::epsilon() / 2;
  const std::ptrdiff_t len = std::ptrdiff_t(n) * k * m;
  S omega = oee_residual(w, D, U, R, X), last = std::numeric_limits<S>::infinity();
  for (int sweep = 0; sweep < 5 && omega > u && 2 * omega <= last; ++sweep) {
    oee_substitute(w, w.dX.data());  // A dX = r, r left in w.R by oee_residual
    parallel_range(0, len, 64, [&](std::ptrdiff_t e) { X[e] += w.dX[e]; });
    last = omega;
    omega = oee_residual(w, D, U, R, X);
  }
  return omega;
}

// inputs: D (n k², row-major blocks), U ((n-1) k²), R (n k m); output: X (n k m), which may not
// alias the inputs. The inputs are copied into w, never written to. Returns ω as above.
template <class S, int K = Eigen::Dynamic>
S oee_solve(OeeWorkspace<S, K>& w, int n, int k, int m, const S* D, const S* U, const S* R, S* X) {
  if (w.n != n || w.k != k || w.m != m) w.resize(n, k, m);
  if (n == 0 || k == 0 || m == 0) return S(0);
  oee_factorise(w, D, U);
  return oee_solve_factorised(w, m, D, U, R, X);
}

// oee_solve with a workspace of its own, for one call (treedyn.linalg.solve_block_tridiagonal)
template <class S, int K = Eigen::Dynamic> S oee_solve_once(int n, int k, int m, const S* D, const S* U, const S* R,
                                                            S* X) {
  OeeWorkspace<S, K> w(n, k, m);
  return oee_solve<S, K>(w, n, k, m, D, U, R, X);
}

}  // namespace treedyn
