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
// K: the block size at compile time (fixed-size Eigen blocks, much faster for k <= 6), or
// Eigen::Dynamic.
//
// 0-based indices here (the paper counts from 1). Storage: flat row-major blocks, as numpy's
// C-contiguous (n, k, k) and (n, k, m) arrays.
#pragma once
#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "treedyn/parallel.hpp"  // max_threads

#ifdef TREEDYN_HAS_OPENMP
#include <omp.h>
#endif

namespace treedyn {

struct NotPositiveDefinite : std::domain_error {
  using std::domain_error::domain_error;
};

// per-instance workspace for n blocks of size k and m right-hand sides, allocated once
template <class S, int K = Eigen::Dynamic> struct OeeWorkspace {
  using MatK = Eigen::Matrix<S, K, K, Eigen::RowMajor>;
  int n = 0, k = 0, m = 0;
  std::vector<S> D, Dn;  // n k²: D_i^(j-1) and D_i^(j)
  std::vector<S> U, Un;  // n k²: U_i^(j-1) and U_i^(j) (block i couples i to i + 2^{j-1})
  std::vector<S> R, Rn;  // n k m: R_i^(j-1) and R_i^(j)
  std::vector<S> Et, Kt; // n k²: (E_i^(j))ᵀ = D_{i+s}⁻¹ U_iᵀ and (K_i^(j))ᵀ = D_i⁻¹ U_i (Alg. 2 lines 3-4)
  std::vector<Eigen::LLT<MatK>> llt;  // n: the Cholesky factor of D_i^(j-1)
  OeeWorkspace() = default;
  OeeWorkspace(int n_, int k_, int m_) { resize(n_, k_, m_); }
  void resize(int n_, int k_, int m_) {
    if (K != Eigen::Dynamic && k_ != K) throw std::invalid_argument("OeeWorkspace: block size differs from K");
    n = n_, k = k_, m = m_;
    const size_t kk = size_t(n) * k * k, km = size_t(n) * k * m;
    for (auto* v : {&D, &Dn, &U, &Un, &Et, &Kt}) v->assign(kk, S(0));
    R.assign(km, S(0));
    Rn.assign(km, S(0));
    llt.clear();  // each built in place (reserve: no moves): copying an LLT not yet computed reads its
    llt.reserve(n);  // uninitialised info() (UB, found by .ci/sanitize)
    for (int i = 0; i < n; ++i) llt.emplace_back(k);
  }
};

namespace oee_detail {
template <class S, int K> using MatK = Eigen::Matrix<S, K, K, Eigen::RowMajor>;
template <class S, int K> using MatKm = Eigen::Matrix<S, K, Eigen::Dynamic, Eigen::RowMajor>;

// the k x k and k x m row-major blocks i of a flat array
template <class S, int K> inline Eigen::Map<MatK<S, K>> sq(std::vector<S>& a, int i, int k) {
  return Eigen::Map<MatK<S, K>>(a.data() + size_t(i) * k * k, k, k);
}
template <class S, int K> inline Eigen::Map<MatKm<S, K>> rect(std::vector<S>& a, int i, int k, int m) {
  return Eigen::Map<MatKm<S, K>>(a.data() + size_t(i) * k * m, k, m);
}

// factorise every D_i (Cholesky), in parallel; a block that is not positive definite is reported
// (the lowest index, whatever the threads)
template <class S, int K> void factorise_all(OeeWorkspace<S, K>& w, int level) {
  const int n = w.n, k = w.k;
  int bad = n;
#pragma omp parallel for num_threads(max_threads()) schedule(static) if (n > 64)
  for (int i = 0; i < n; ++i) {
    w.llt[i].compute(sq<S, K>(w.D, i, k));
    if (w.llt[i].info() != Eigen::Success) {
#pragma omp critical(treedyn_oee)
      bad = std::min(bad, i);
    }
  }
  if (bad < n)
    throw NotPositiveDefinite("odd-even elimination: block D_" + std::to_string(bad) + " is not positive definite at level " +
                              std::to_string(level) + " (the block tri-diagonal matrix must be symmetric positive definite)");
}
}  // namespace oee_detail

// one level (stride s = 2^{j-1}): lines 3-4, then lines 9-13 and 17 of Alg. 2
template <class S, int K> void oee_level(OeeWorkspace<S, K>& w, int s, int j) {
  using namespace oee_detail;
  const int n = w.n, k = w.k, m = w.m;
  const int n_pairs = n - s;  // couplings i <-> i + s that exist
  factorise_all(w, j - 1);
  // coefficients, in parallel for i = 0 .. n - s - 1 (Alg. 2 lines 2-6):
  // D_{i+s} E_iᵀ = U_iᵀ (line 3), D_i K_iᵀ = U_i (line 4)
#pragma omp parallel for num_threads(max_threads()) schedule(static) if (n_pairs > 64)
  for (int i = 0; i < n_pairs; ++i) {
    const auto Ui = sq<S, K>(w.U, i, k);
    auto Eit = sq<S, K>(w.Et, i, k);
    auto Kit = sq<S, K>(w.Kt, i, k);
    Eit = Ui.transpose();
    w.llt[i + s].solveInPlace(Eit);
    Kit = Ui;
    w.llt[i].solveInPlace(Kit);
  }
  // updates, in parallel for i = 0 .. n - 1 (Alg. 2 lines 8-15, 17), each block by one thread:
  // D_i ← D_i − E_i U_iᵀ − K_{i-s} U_{i-s}          (lines 9, 10)
  // R_i ← R_i − E_i R_{i+s} − K_{i-s} R_{i-s}       (lines 11-13)
  // U_i ← −E_i U_{i+s}   for i < n − 2s            (line 17)
#pragma omp parallel for num_threads(max_threads()) schedule(static) if (n > 64)
  for (int i = 0; i < n; ++i) {
    auto Dn = sq<S, K>(w.Dn, i, k);
    auto Rn = rect<S, K>(w.Rn, i, k, m);
    Dn = sq<S, K>(w.D, i, k);
    Rn = rect<S, K>(w.R, i, k, m);
    if (i + s < n) {
      const auto Eit = sq<S, K>(w.Et, i, k);
      const auto Ei = Eit.transpose();
      Dn.noalias() -= Ei * sq<S, K>(w.U, i, k).transpose();
      Rn.noalias() -= Ei * rect<S, K>(w.R, i + s, k, m);
      if (i + 2 * s < n) sq<S, K>(w.Un, i, k).noalias() = -Ei * sq<S, K>(w.U, i + s, k);
    }
    if (i - s >= 0) {
      const auto Kpt = sq<S, K>(w.Kt, i - s, k);
      const auto Kp = Kpt.transpose();
      Dn.noalias() -= Kp * sq<S, K>(w.U, i - s, k);
      Rn.noalias() -= Kp * rect<S, K>(w.R, i - s, k, m);
    }
  }
  std::swap(w.D, w.Dn);
  std::swap(w.R, w.Rn);
  std::swap(w.U, w.Un);
}

// inputs: D (n k², row-major blocks), U ((n-1) k²), R (n k m); output: X (n k m), which may not
// alias the inputs. The inputs are copied into w, never written to.
template <class S, int K = Eigen::Dynamic>
void oee_solve(OeeWorkspace<S, K>& w, int n, int k, int m, const S* D, const S* U, const S* R, S* X) {
  using namespace oee_detail;
  if (w.n != n || w.k != k || w.m != m) w.resize(n, k, m);
  if (n == 0 || k == 0 || m == 0) return;
  std::copy(D, D + size_t(n) * k * k, w.D.begin());
  std::copy(U, U + size_t(n - 1) * k * k, w.U.begin());
  std::copy(R, R + size_t(n) * k * m, w.R.begin());
  // the ⌈log₂ n⌉ levels (Alg. 2 line 1), stride s = 2^{j-1}
  int j = 1;
  for (int s = 1; s < n; s *= 2, ++j) oee_level(w, s, j);
  // every row is decoupled: x_i = D_i⁻¹ R_i (Alg. 2 lines 19-21)
  factorise_all(w, j - 1);
#pragma omp parallel for num_threads(max_threads()) schedule(static) if (n > 64)
  for (int i = 0; i < n; ++i) {
    Eigen::Map<MatKm<S, K>> Xi(X + size_t(i) * k * m, k, m);
    Xi = rect<S, K>(w.R, i, k, m);
    w.llt[i].solveInPlace(Xi);
  }
}

}  // namespace treedyn
