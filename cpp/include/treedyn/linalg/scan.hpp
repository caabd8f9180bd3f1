// Block bi-diagonal systems by parallel scan (yang-wu-pan §II-B, eqs. (3)-(5); Blelloch 1990):
//
//   x_0 = b_0,   x_i = A_{i-1} x_{i-1} + b_i   (0 < i < n)                         eq. (3)
//
// i.e. [I; −A_0 I; ...; −A_{n-2} I] x = b (eq. (4)), A_i (k x k), b_i and x_i (k x m). Each step is
// the affine map a_i = (A_{i-1}, b_i): x ↦ A_{i-1} x + b_i (eq. (5), a_0 = (0, b_0)), composition
// a_{i-1} ⊕ a_i = a_i ∘ a_{i-1} = (A_i A_{i-1}, A_i b_{i-1} + b_i) is associative, and x_i is the
// translation part of a_0 ⊕ ... ⊕ a_i. Blelloch's work-efficient scan over a balanced binary tree:
// the up-sweep forms the compositions of subtrees, the down-sweep hands every leaf the composition
// of everything before it (the exclusive prefix, whose translation part is x_{i-1}), and a last
// parallel step applies a_i. 2 log₂ n levels, O(n k² (k + m)) work; each level's nodes are
// independent and spread over OpenMP threads, each node written by one thread in a fixed order,
// so the answer does not depend on the number of threads.
//
// The array is padded to a power of two with identity maps (flag `identity`), which cost nothing.
// Storage: flat row-major blocks, as numpy's C-contiguous (n-1, k, k) and (n, k, m) arrays.
// K: the block size at compile time (fixed-size Eigen blocks for k <= 6), or Eigen::Dynamic.
#pragma once
#include <Eigen/Core>
#include <algorithm>
#include <vector>

#include "treedyn/support/parallel.hpp"  // parallel_chunks

namespace treedyn {

// per-instance workspace: the tree's nodes (padded length P = 2^⌈log₂ n⌉), allocated once
template <class S> struct ScanWorkspace {
  int n = 0, k = 0, m = 0, P = 0;
  std::vector<S> M, t;         // P k², P k m: node i's map x ↦ M x + t
  std::vector<S> Mtmp, ttmp;   // P k², P k m: the other child's old value in the down-sweep
  std::vector<char> identity;  // P: node i is the identity map
  ScanWorkspace() = default;
  ScanWorkspace(int n_, int k_, int m_) { resize(n_, k_, m_); }
  void resize(int n_, int k_, int m_) {
    n = n_, k = k_, m = m_;
    P = 1;
    while (P < n) P *= 2;
    M.assign(size_t(P) * k * k, S(0));
    Mtmp.assign(size_t(P) * k * k, S(0));
    t.assign(size_t(P) * k * m, S(0));
    ttmp.assign(size_t(P) * k * m, S(0));
    identity.assign(P, 1);
  }
};

namespace scan_detail {
template <class S, int K> using MatK = Eigen::Matrix<S, K, K, Eigen::RowMajor>;
template <class S, int K> using MatKm = Eigen::Matrix<S, K, Eigen::Dynamic, Eigen::RowMajor>;

// node `later` ← node `later` ∘ node `earlier` (eq. (5)'s ⊕: a_earlier ⊕ a_later); the result goes
// to (Mo, to, io), which may be `later` itself. Mo = M_L M_E, to = M_L t_E + t_L.
template <class S, int K>
inline void compose(int k, int m, const S* ML, const S* tL, bool iL, const S* ME, const S* tE, bool iE, S* Mo, S* to,
                    char& io, MatK<S, K>& scratchM, MatKm<S, K>& scratcht) {
  if (iE) {  // later ∘ identity = later
    if (Mo != ML) std::copy(ML, ML + k * k, Mo), std::copy(tL, tL + k * m, to);
    io = iL;
    return;
  }
  if (iL) {  // identity ∘ earlier = earlier
    if (Mo != ME) std::copy(ME, ME + k * k, Mo), std::copy(tE, tE + k * m, to);
    io = 0;
    return;
  }
  const Eigen::Map<const MatK<S, K>> ML_(ML, k, k), ME_(ME, k, k);
  const Eigen::Map<const MatKm<S, K>> tL_(tL, k, m), tE_(tE, k, m);
  scratchM.noalias() = ML_ * ME_;
  scratcht.noalias() = ML_ * tE_;
  scratcht += tL_;
  Eigen::Map<MatK<S, K>>(Mo, k, k) = scratchM;
  Eigen::Map<MatKm<S, K>>(to, k, m) = scratcht;
  io = 0;
}
}  // namespace scan_detail

// inputs: A ((n-1) k², row-major blocks), b (n k m); output: x (n k m), not aliasing the inputs.
// The inputs are copied into w, never written to.
template <class S, int K = Eigen::Dynamic>
void scan_solve(ScanWorkspace<S>& w, int n, int k, int m, const S* A, const S* b, S* x) {
  using namespace scan_detail;
  if (w.n != n || w.k != k || w.m != m) w.resize(n, k, m);
  if (n == 0 || k == 0 || m == 0) return;
  const size_t kk = size_t(k) * k, km = size_t(k) * m;
  const int P = w.P;
  // leaves: a_0 = (0, b_0), a_i = (A_{i-1}, b_i) (eq. (5)); padding: identity
  std::fill(w.M.begin(), w.M.begin() + kk, S(0));
  std::copy(A, A + (n - 1) * kk, w.M.begin() + kk);
  std::copy(b, b + n * km, w.t.begin());
  std::fill(w.identity.begin(), w.identity.begin() + n, 0);
  std::fill(w.identity.begin() + n, w.identity.end(), 1);
  // up-sweep (reduce): node i (the right end of a block of 2d leaves) ← node i ∘ node i−d
  for (int d = 1; d < P; d *= 2) {
    const int nodes = P / (2 * d);
    parallel_chunks(0, nodes, 32, [&](std::ptrdiff_t c0, std::ptrdiff_t c1, int) {
      MatK<S, K> sM(k, k);  // a chunk's scratch
      MatKm<S, K> st(k, m);
      for (int c = int(c0); c < int(c1); ++c) {
        const int i = (c + 1) * 2 * d - 1, l = i - d;
        compose<S, K>(k, m, &w.M[i * kk], &w.t[i * km], w.identity[i], &w.M[l * kk], &w.t[l * km], w.identity[l],
                      &w.M[i * kk], &w.t[i * km], w.identity[i], sM, st);
      }
    });
  }
  // down-sweep: the root gets the identity (nothing comes before the whole array); then each node
  // hands its prefix to its left child and prefix ⊕ (left child's sum) to its right child
  w.identity[P - 1] = 1;
  for (int d = P / 2; d >= 1; d /= 2) {
    const int nodes = P / (2 * d);
    parallel_chunks(0, nodes, 32, [&](std::ptrdiff_t c0, std::ptrdiff_t c1, int) {
      MatK<S, K> sM(k, k);  // a chunk's scratch
      MatKm<S, K> st(k, m);
      for (int c = int(c0); c < int(c1); ++c) {
        const int i = (c + 1) * 2 * d - 1, l = i - d;
        // old left-child sum, kept aside
        std::copy(&w.M[l * kk], &w.M[l * kk] + kk, &w.Mtmp[l * kk]);
        std::copy(&w.t[l * km], &w.t[l * km] + km, &w.ttmp[l * km]);
        const char il = w.identity[l];
        // left child ← prefix
        std::copy(&w.M[i * kk], &w.M[i * kk] + kk, &w.M[l * kk]);
        std::copy(&w.t[i * km], &w.t[i * km] + km, &w.t[l * km]);
        w.identity[l] = w.identity[i];
        // right child ← (left sum) ∘ prefix
        compose<S, K>(k, m, &w.Mtmp[l * kk], &w.ttmp[l * km], il, &w.M[i * kk], &w.t[i * km], w.identity[i],
                      &w.M[i * kk], &w.t[i * km], w.identity[i], sM, st);
      }
    });
  }
  // node i now holds a_0 ⊕ ... ⊕ a_{i-1}, whose translation part is x_{i-1}:
  // x_0 = b_0, x_i = A_{i-1} x_{i-1} + b_i (eq. (3)), in parallel
  parallel_range(0, n, 64, [&](int i) {
    Eigen::Map<MatKm<S, K>> xi(x + i * km, k, m);
    xi = Eigen::Map<const MatKm<S, K>>(b + i * km, k, m);
    if (i == 0) return;
    const Eigen::Map<const MatK<S, K>> Ai(A + (i - 1) * kk, k, k);
    const Eigen::Map<const MatKm<S, K>> xprev(&w.t[i * km], k, m);
    xi.noalias() += Ai * xprev;
  });
}

}  // namespace treedyn
