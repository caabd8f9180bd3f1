// The full M⁻¹ of drumwright2012 in Θ(n²): Alg. 1 (fixed base) and Alg. 2 (floating base, lines
// 6-10 at the base) with R = 1, every column at once, on the per-configuration quantities of
// minv_precompute (minv/minv.hpp). Lines 4-5 run leaves to root and lines 7-10 root to leaves over
// contiguous ranges of columns, in the column loops of minv/columns.hpp (chosen per instruction
// set by minv/kernels.hpp).
//
// With R = 1, column k's impulse starts at the joint owning coordinate k (§5.2), so Ŷ^A_i(:, k) is
// non-zero only for k in i's subtree, a contiguous range of columns [v_i, v_end(i)). Sibling
// subtrees own disjoint ranges, so every Ŷ^A_i of the backward pass lives in ONE 6 x nv array F
// (in place: after joint i's step, F(:, subtree(i)) holds what i passes to λ(i)), and Δv̂ in one
// 6 x nv array V. M⁻¹ is symmetric: row i is only computed for the columns of i's subtree (the
// upper triangle's entries of ancestor pairs), each joint's lines 5 and 8 working on a contiguous
// range of columns (vectorised over columns: minv/columns.hpp). The other upper-triangle entries
// pair coordinates j, k in different branches of a body a; for them (R = e_j, e_k)
//   M⁻¹(j, k) = −Ŷ^A_a(:, j)ᵀ Δv̂_a(:, k)
// (both sides are −e_jᵀ(ŝᵀÎ^Aŝ)⁻¹(Î^Aŝ)ᵀ P ⋯ P Δv̂_a(:, k), P = 1 − ŝ(ŝᵀÎ^Aŝ)⁻¹(Î^Aŝ)ᵀ the
// projections along the path from a to j), one 6-term dot product, taken from F saved at a in the
// backward pass and V at a in the forward pass. The lower triangle is mirrored strip by strip as
// the forward pass completes rows. Columns are independent, so threads split them.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "treedyn/algorithms/minv/kernels.hpp"
#include "treedyn/algorithms/minv/minv.hpp"
#include "treedyn/support/parallel.hpp"

namespace treedyn {

template <class S> struct MinvBlocked {
  struct Branch {  // body a with at least two children that own coordinates
    int a;
    int col0, col1;         // F(:, [col0, col1)) saved at a: every child's range but the last
    std::size_t offset;     // where in `saved` (6 rows of col1 - col0)
    std::vector<int> kids;  // those children, in order (the last one included)
  };
  static constexpr int line = 64 / int(sizeof(S)) > 0 ? 64 / int(sizeof(S)) : 1;  // columns per cache line
  int nv = 0;
  long ld = 0;  // row stride of F and V: nv rounded up to a cache line
  // F and V (6 x ld each, rows on cache lines) per thread: a thread only touches its own columns,
  // but columns of two threads in one array would share cache lines at the border, or adjacent
  // lines that the hardware prefetches in pairs, and every joint's step would pass them back and
  // forth between the cores (measured: the second thread ran 2x slower per column)
  std::vector<std::vector<S>> storage;
  std::vector<S> saved;
  std::vector<S> Y0;  // Alg. 2: Ŷ^A_0, 6 x ld (a chunk's forward pass may run on another thread)
  std::vector<Branch> branches;
  std::vector<int> branch_of;   // body -> index in branches, or -1
  std::vector<double> weight;   // nv + 1: cumulative work per column (to split columns among threads)
  std::vector<double> bweight;  // nv + 1: the same, of the backward pass (lines 4-5) alone
  std::vector<double> fweight;  // nv + 1: the same, of the forward pass (lines 7-10, mirroring)
  std::vector<char> starts;     // nv + 1: a joint's first coordinate (a thread's columns start there)
  std::vector<char> pairs;      // body p: p and its only child with coordinates c are both 1-DoF
                                // and p is not a root: their steps can run as one sweep
  std::vector<int> pair_child;  // that c

  explicit MinvBlocked(const Model<S>& model)
      : nv(model.nv),
        ld((model.nv + line - 1) / line * line),
        branch_of(model.N + 1, -1),
        weight(model.nv + 1, 0.0),
        bweight(model.nv + 1, 0.0),
        fweight(model.nv + 1, 0.0),
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
        bweight[k + 1] = bweight[k] + 2.0 * anc[i];
        fweight[k + 1] = weight[k + 1] - bweight[k + 1];
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
  std::vector<int> split(int nthreads, bool forward_only = false) const {
    return split_at(forward_only ? fweight : weight, nthreads, [&](int t) { return double(t) / nthreads; });
  }
  // the next chunk [c0, c1) of the backward pass below column c1, taken from the top down while
  // the setup runs (mInv_at): about `frac` of the work left in [0, c1) but at least `least` of the
  // whole, starting on a cache line and at a joint's first coordinate; c0 = 0 takes the rest
  int chunk_below(int c1, double frac, double least) const {
    const double left = bweight[c1], take = std::max(left * frac, bweight[nv] * least);
    if (take >= left) return 0;
    const int k = int(std::lower_bound(bweight.begin(), bweight.begin() + c1 + 1, left - take) - bweight.begin());
    int b = (k + line / 2) / line * line;
    while (b < c1 && !starts[b]) ++b;
    if (b >= c1)
      for (b = std::min(k, c1 - 1); b > 0 && !starts[b];) --b;
    return b;
  }
  // bound[t] where the cumulative work `cum` reaches share(t) of its total
  template <class Share> std::vector<int> split_at(const std::vector<double>& cum, int nchunks, Share share) const {
    std::vector<int> bound(nchunks + 1, nv);
    bound[0] = 0;
    for (int t = 1, k = 0; t < nchunks; ++t) {
      const double target = cum[nv] * share(t);
      while (k < nv && cum[k + 1] <= target) ++k;
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
void impulse_step(const MinvKernels<S>& K, const Model<S>& model, const MinvData<S>& w, MinvBlocked<S>& B, S* F, int i,
                  S* Minv, int c0, int c1) {
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
void velocity_step(const MinvKernels<S>& K, const Model<S>& model, const MinvData<S>& w, MinvBlocked<S>& B, S* V, int i,
                   S* Minv, int c0, int c1) {
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
    if (c < 3)
      e.ang[c] = S(1);
    else
      e.lin[c - 3] = S(1);
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
  if (k0 < k1)
    K.velocity_pair(Jp, Jp + 6, Jp[18], Jc, Jc + 6, Jc[18], V, B.ld, outp, Minv + std::size_t(vc) * nv, k0, k1);
}

}  // namespace minv_detail

// The per-configuration setup (minv_precompute) shared by the threads of the backward pass
// (mInv_at). Item 0 (run) leads it; the other items help (help) before they take columns:
//   1. the joint parts (^iX_λ, ŝ'_i) in blocks of `block` bodies, claimed by whoever comes;
//   2. the chain parts (^iX_0 = ^iX_λ ^λX_0), root to leaves, by the leader alone (the one
//      sequential part: ~1% of M⁻¹ at n = 1000);
//   3. the world parts (ŝ_i, Î_i), in blocks claimed as the chain parts reach them;
//   4. the leaves-to-root sweep of eq. (7) by the leader, the steps of the free run
//      (MinvData::sweep_cut - 1 .. sweep_rest + 1) by a helper meanwhile (every sum in the serial order).
// Each part is the serial setup's operations on the same data, so the bits never depend on who
// ran it. A thread only waits for work that a running thread has claimed (a block, the free run),
// or for the leader: never for a thread that has not started; a leader alone claims and runs
// everything. Chunks of columns follow the sweep joint by joint: `ready` is a joint from which on
// the quantities (ŝ, Î^Aŝ, Ũ, (ŝᵀÎ^Aŝ)⁻¹ and their packed rows) are final, published every
// `stride` joints, so that its cache line does not pass between the cores at every joint
// (measured: the setup ran 1.4x slower when a waiting chunk polled a per-joint index).
template <class S> struct MinvSetup {
  static constexpr int stride = 16;
  static constexpr int block = 64;
  const Model<S>& model;
  MinvData<S>& w;
  const S* q;
  const int nblocks, cut, rest;
  alignas(64) std::atomic<int> ready;
  alignas(64) std::atomic<int> joint_next{0};
  alignas(64) std::atomic<int> world_next{0};
  alignas(64) std::atomic<int> chained{0};   // bodies 1..chained have ^iX_0
  alignas(64) std::atomic<int> free_run{0};  // its steps: 0 unclaimed, 1 claimed, 2 done
  std::atomic<bool> failed{false}, finished{false};
  std::unique_ptr<std::atomic<int>[]> done;  // block k's joint parts (k) and world parts (nblocks + k)
  MinvSetup(const Model<S>& model_, MinvData<S>& w_, const S* q_)
      : model(model_),
        w(w_),
        q(q_),
        nblocks((model_.N + block - 1) / block),
        cut(w_.sweep_cut),
        rest(w_.sweep_rest),
        ready(model_.N + 1),
        done(new std::atomic<int>[2 * std::size_t(nblocks)]()) {}
  int lo(int k) const { return 1 + k * block; }
  int hi(int k) const { return std::min(model.N + 1, 1 + (k + 1) * block); }

  // item 0: the whole setup, less what helpers have claimed
  void run() {
    guard([&] {
      joint_blocks();
      for (int k = 0; k < nblocks; ++k) {
        if (!until([&] { return done[k].load(std::memory_order_acquire) != 0; })) return;
        for (int i = lo(k); i < hi(k); ++i) minv_chain_step(model, w, i);
        chained.store(hi(k) - 1, std::memory_order_release);
      }
      if (!world_blocks() || !worlds_done()) return;
      for (int i = model.N; i >= w.first; --i) {
        if (cut && i == cut - 1) {  // the free run: here if no helper has taken it, else its end
          int unclaimed = 0;
          if (free_run.compare_exchange_strong(unclaimed, 1))
            free_steps();
          else if (!until([&] { return free_run.load(std::memory_order_acquire) == 2; }))
            return;  // the helper threw: parallel_for rethrows its error
          ready.store(rest + 1, std::memory_order_release);
          if ((i = rest) < w.first) break;
        }
        minv_articulated_inertia_step(model, w, i);
        if (i % stride == 0 || i == w.first) ready.store(i, std::memory_order_release);
      }
      if (w.floating_base) minv_base_inertia_step(model, w);  // (read by the forward pass only)
      finished.store(true, std::memory_order_release);
    });
  }
  // the other items, before they take columns
  void help() {
    guard([&] {
      joint_blocks();
      if (!world_blocks()) return;
      int unclaimed = 0;
      if (cut && free_run.compare_exchange_strong(unclaimed, 1)) {
        if (!worlds_done()) return;
        free_steps();
        free_run.store(2, std::memory_order_release);
      }
    });
  }
  // wait until joint i is ready (false: the setup threw, and parallel_for rethrows it); run
  // serially, the setup is complete before any chunk starts. `known`: the caller's last look at
  // `ready` (it reads the shared index only when it catches up)
  bool wait(int i, int& known) const {
    if (i >= known) return true;
    return until([&] { return (known = ready.load(std::memory_order_acquire)) <= i; });
  }
  // wait until the whole setup is done (false: it threw)
  bool complete() const {
    return until([&] { return finished.load(std::memory_order_acquire); });
  }

 private:
  template <class F> void guard(F f) {
    try {
      f();
    } catch (...) {
      failed.store(true, std::memory_order_release);
      throw;
    }
  }
  // spin until ready() (false if a part of the setup threw): ~1000 cycles between looks, then
  // yield (the thread waited for was descheduled)
  template <class P> bool until(P ready_) const {
    for (int spins = 0; !ready_(); ++spins) {
      if (failed.load(std::memory_order_acquire)) return false;
      if (spins < 1024)
        for (int k = 0; k < 16; ++k) spin_pause();
      else
        std::this_thread::yield();
    }
    return true;
  }
  void joint_blocks() {
    for (int k; (k = joint_next.fetch_add(1)) < nblocks;) {
      for (int i = lo(k); i < hi(k); ++i) minv_joint_step(model, w, i, q);
      done[k].store(1, std::memory_order_release);
    }
  }
  bool world_blocks() {
    for (int k; (k = world_next.fetch_add(1)) < nblocks;) {
      if (!until([&] { return chained.load(std::memory_order_acquire) >= hi(k) - 1; })) return false;
      for (int i = lo(k); i < hi(k); ++i) minv_world_step(model, w, i);
      done[nblocks + k].store(1, std::memory_order_release);
    }
    return true;
  }
  // every Î_i is in place (each starts its Î^A_i, which its children's steps add to)
  bool worlds_done() const {
    for (int k = 0; k < nblocks; ++k)
      if (!until([&] { return done[nblocks + k].load(std::memory_order_acquire) != 0; })) return false;
    return true;
  }
  void free_steps() {
    for (int i = cut - 1; i > rest; --i) minv_articulated_inertia_step(model, w, i);
  }
};

// the full M⁻¹ (nv x nv, row-major; symmetric, so also column-major) for the configuration that
// minv_precompute saw; `nthreads` threads split the columns (same bits for any number of threads).
// Returns false if an entry overflowed to inf / NaN. With `setup` (mInv_at), the setup runs as
// the first item of the backward pass.
template <class S>
bool mInv(const Model<S>& model, const MinvData<S>& w, MinvBlocked<S>& B, S* Minv, int nthreads,
          MinvSetup<S>* setup = nullptr) {
  using namespace minv_detail;
  const MinvKernels<S>& K = minv_kernels<S>();
  const int nv = model.nv, first = w.first;
  if (nv == 0) {
    if (setup) setup->run();
    return true;
  }
  nthreads = std::max(1, std::min(nthreads, nv));
  // chunks of columns of equal work, taken by the threads as they come free in each pass (any
  // thread may take any chunk: a thread's F and V serve whatever columns it works on). One chunk
  // per thread: two per thread balance a core slowed by something else better, but cost ~5% on
  // a quiet machine (more borders, shorter sweeps). With the setup in the backward pass, that pass
  // takes guided chunks (take_chunks below).
  const int nchunks = nthreads;
  const std::vector<int> bound = B.split(nchunks, setup != nullptr);  // (the forward pass's, with a setup)
  std::vector<S*> Fs(nthreads);
  for (int t = 0; t < nthreads; ++t) Fs[t] = B.F_of(t);
  std::vector<char> nonfinite(nthreads, 0);
  // lines 4-5 for the columns [c0, c1) (every column's impulse starts at its joint, §5.2)
  const auto backward = [&](int t, int c0, int c1) {
    if (c0 >= c1) return;
    S* F = Fs[t];
    int known = model.N + 1;  // the setup's joints from `known` on are ready (MinvSetup::wait)
    for (int r = 0; r < 6; ++r) std::fill(B.row(F, r) + c0, B.row(F, r) + c1, S(0));
    for (int i = w.joint_of[c1 - 1]; i >= first; --i) {  // joints after it own no column here
      save_branch(B, F, i, c0, c1);
      const int p = model.parent[i];
      if (p >= first && B.pairs[p] && B.pair_child[p] == i) {  // i and its parent in one sweep
        if (setup && !setup->wait(p, known)) return;
        impulse_pair_step(K, model, w, B, F, p, i, Minv, c0, c1);
        i = p;
        continue;
      }
      if (setup && !setup->wait(i, known)) return;
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
      if (B.pairs[i]) {                    // i and its only child in one sweep (i is no branch point)
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
  // with a setup, the backward pass's columns are taken from the top down (the first chunk follows
  // the setup from the leaves) in guided chunks: 0.7 / nthreads of the work left, at least 0.06 /
  // nthreads of the whole (measured at n = 1000 on 2 threads: fixed chunks of 4 or 8 per thread,
  // shares 1/2 and 3/100, and guided chunks in the second pass as well were all no better)
  std::atomic<int> unclaimed{nv};  // columns [0, unclaimed) not yet taken
  const auto take_chunks = [&](int t) {
    for (int c1 = unclaimed.load(); c1 > 0;) {
      const int c0 = B.chunk_below(c1, 0.7 / nthreads, 0.06 / nthreads);
      if (unclaimed.compare_exchange_weak(c1, c0)) {  // (else c1 is now the current value)
        backward(t, c0, c1);
        c1 = unclaimed.load();
      }
    }
  };
  if (setup)  // item 0: the setup, the other items: help with it; then chunks as they come
    parallel_for(nthreads, nthreads, [&](int c, int t) {
      if (c == 0)
        setup->run();
      else
        setup->help();
      take_chunks(t);
    });
  else
    parallel_for(nchunks, nthreads, [&](int c, int t) { backward(t, bound[c], bound[c + 1]); });
  // (every saved Ŷ^A is complete when the first pass returns)
  parallel_for(nchunks, nthreads, [&](int c, int t) { forward(t, bound[c], bound[c + 1]); });
  for (char bad : nonfinite)
    if (bad) return false;
  return true;
}

// the full M⁻¹ at q: minv_precompute and mInv, with the setup overlapped with the backward pass
// on more than one thread (the same operations on the same data: the same bits as minv_precompute
// followed by mInv on one thread)
template <class S>
bool mInv_at(const Model<S>& model, MinvData<S>& w, MinvBlocked<S>& B, const S* q, S* Minv, int nthreads) {
  if (nthreads <= 1 || model.nv <= 1) {
    minv_precompute(model, w, q);
    return mInv(model, w, B, Minv, 1);
  }
  MinvSetup<S> setup(model, w, q);
  return mInv(model, w, B, Minv, nthreads, &setup);
}

}  // namespace treedyn
