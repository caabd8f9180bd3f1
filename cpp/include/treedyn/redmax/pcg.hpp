// redmax-pcg (baxter2019 §3): M̃_r q̇ = f̃_r solved by preconditioned conjugate gradients with
// O(n) products — J, Jᵀ by traversals (Alg. 2, 3), the per-body blocks and the springs'
// coupling blocks in maximal coordinates — and the projected block Jacobi preconditioner
// (Alg. 4). The l loop-closure columns M̃⁻¹Gᵀ are solved in parallel (§3.4; support/parallel.hpp).
// Every solve starts from the previous step's solution (warm start). One solver may be shared
// between threads: step, inverse_inertia, forward_dynamics and precondition take its mutex.
#pragma once
#include <algorithm>
#include <memory>
#include <mutex>

#include "treedyn/linalg/pcg.hpp"
#include "treedyn/redmax/preconditioner.hpp"
#include "treedyn/redmax/step.hpp"
#include "treedyn/support/parallel.hpp"

namespace treedyn::redmax {

template <class S> class Pcg {
 public:
  using VecX = Eigen::Matrix<S, Eigen::Dynamic, 1>;
  using MatX = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic>;

  // what one thread needs for products and preconditioner solves
  struct Scratch {
    std::vector<Motion<S>> y;
    std::vector<Force<S>> w, alpha;
    linalg::PcgVectors<S> v;
    explicit Scratch(const Model<S>& m)
        : y(m.N + 1, Motion<S>::zero()), w(m.N + 1, Force<S>::zero()), alpha(m.N + 1, Force<S>::zero()), v(m.nv) {}
  };

  // what one thread needs to solve a block of columns together (block_solve)
  using Blk = Eigen::Matrix<S, 6, Eigen::Dynamic>;
  struct BlockScratch {
    std::vector<Blk> y, w, a;
    Blk beta;
    MatX u, R, Z, P, AP;
    void resize(const Model<S>& m, int c) {
      if (static_cast<int>(y.size()) == m.N + 1 && beta.cols() == c) return;
      y.assign(m.N + 1, Blk::Zero(6, c));
      w.assign(m.N + 1, Blk::Zero(6, c));
      a.assign(m.N + 1, Blk::Zero(6, c));
      beta.setZero(6, c);
      u.setZero(6, c);
      R.setZero(m.nv, c);
      Z.setZero(m.nv, c);
      P.setZero(m.nv, c);
      AP.setZero(m.nv, c);
    }
  };

  Pcg(const System<S>& sys, S tol, int max_iter)
      : sys_(sys),
        ws_(sys),
        pre_(sys.tree),
        Ar_(VecX::Zero(sys.tree.nv)),
        Xm_(sys.tree.N + 1, Mat6<S>::Identity()),
        Sm_(sys.tree.N + 1, Mat6<S>::Zero()),
        tol_(tol),
        max_iter_(max_iter) {
    scratch_.emplace_back(new Scratch(sys_.tree));
    block_.emplace_back(new BlockScratch());
  }

  const System<S>& system() const { return sys_; }
  Workspace<S>& workspace() { return ws_; }

  StepStats<S> step(const S* q, const S* qd, S t, S h, S* qout, S* qdout);

  // M̃_r(q)⁻¹ R for step h, each column from zero
  MatX inverse_inertia(const S* q, S h, const MatX& R);

  void forward_dynamics(const S* q, const S* qd, const S* tau, S t, S* qdd);

  // P⁻¹ X at q for step h (Alg. 4 alone, for tests: equals M̃_r⁻¹ X without coupling springs)
  MatX precondition(const S* q, S h, const MatX& X);

  // the preconditioner of the workspace's blocks, and the reduced diagonal armature + hD_r − h²K_r
  void prepare(S h) {
    const Model<S>& t = sys_.tree;
    for (int k = 0; k < t.nv; ++k) Ar_[k] = t.armature[k] + h * t.damping[k] + h * h * t.stiffness[k];
    pre_.build(sys_.tree, ws_.d, ws_.A.data(), Ar_.data());
    const Model<S>& m = sys_.tree;
    for (int i = 1; i <= m.N; ++i) {  // the 6x6 forms the block passes use
      Xm_[i] = ws_.d.Xup[i].matrix();
      for (int k = 0; k < m.nv_i[i]; ++k) Sm_[i].col(k) = ws_.d.Ssub[m.v_index[i] + k].vec();
    }
    max_it_ = 0;
    unconverged_ = 0;
  }

  // y = M̃_r x = Jᵀ(A (J x) + springs' couplings) + (hD_r − h²K_r) x: O(n + springs)
  void product(const S* x, S* y, Scratch& s) const {
    const Model<S>& m = sys_.tree;
    J_times(m, ws_.d, x, s.y.data());
    for (int i = 0; i <= m.N; ++i) s.w[i] = Force<S>::from(ws_.A[i] * s.y[i].vec());
    for (size_t k = 0; k < sys_.springs.size(); ++k) {
      const Spring<S>& sp = sys_.springs[k];
      if (sp.a == sp.b) continue;
      s.w[sp.a] += Force<S>::from(ws_.C[k] * s.y[sp.b].vec());
      s.w[sp.b] += Force<S>::from(ws_.C[k].transpose() * s.y[sp.a].vec());
    }
    s.w[0] = Force<S>::zero();
    JT_times(m, ws_.d, s.w.data(), y, s.alpha.data());
    for (int k = 0; k < m.nv; ++k) y[k] += Ar_[k] * x[k];
  }

  // Y = M̃_r X for the columns of X at once: product() with the columns' recursions interleaved
  template <class MX, class MY> void product_block(const MX& X, MY& Y, BlockScratch& s) const {
    const Model<S>& m = sys_.tree;
    const int c = static_cast<int>(X.cols());
    s.y[0].setZero(6, c);
    for (int i = 1; i <= m.N; ++i) {  // φ = J X (Alg. 2)
      s.y[i].noalias() = Xm_[i].lazyProduct(s.y[m.parent[i]]);
      if (m.nv_i[i]) s.y[i].noalias() += Sm_[i].leftCols(m.nv_i[i]).lazyProduct(X.middleRows(m.v_index[i], m.nv_i[i]));
    }
    for (int i = 0; i <= m.N; ++i) s.w[i].noalias() = ws_.A[i].lazyProduct(s.y[i]);
    for (size_t k = 0; k < sys_.springs.size(); ++k) {
      const Spring<S>& sp = sys_.springs[k];
      if (sp.a == sp.b) continue;
      s.w[sp.a].noalias() += ws_.C[k].lazyProduct(s.y[sp.b]);
      s.w[sp.b].noalias() += ws_.C[k].transpose().lazyProduct(s.y[sp.a]);
    }
    s.w[0].setZero(6, c);
    for (int i = m.N; i >= 1; --i) {  // Jᵀ w (Alg. 3)
      if (m.nv_i[i])
        Y.middleRows(m.v_index[i], m.nv_i[i]).noalias() = Sm_[i].leftCols(m.nv_i[i]).transpose().lazyProduct(s.w[i]);
      s.w[m.parent[i]].noalias() += Xm_[i].transpose().lazyProduct(s.w[i]);
    }
    Y.noalias() += Ar_.asDiagonal() * X;
  }

  // PCG on the columns of B together, each with its own α, β and stopping test (linalg::pcg per
  // column, in lockstep): one traversal per product or preconditioner step for all the columns
  template <class MB, class MX> void solve_block(const MB& B, MX& X, BlockScratch& s, linalg::PcgResult* res) const {
    const Model<S>& m = sys_.tree;
    const int c = static_cast<int>(B.cols());
    s.resize(m, c);
    auto precondition = [&]() { pre_.apply_block(m, Xm_, Sm_, s.R, s.Z, s.y, s.a, s.beta, s.u); };
    product_block(X, s.AP, s);
    s.R = B - s.AP;
    VecX bnorm(c), rz(c);
    std::vector<char> active(c, 1);
    int n_active = 0;
    for (int j = 0; j < c; ++j) {
      res[j] = linalg::PcgResult();
      bnorm[j] = B.col(j).norm();
      const S rn = s.R.col(j).norm();
      if (bnorm[j] == S(0)) X.col(j).setZero();
      if (bnorm[j] == S(0) || rn <= tol_ * bnorm[j]) {
        active[j] = 0;
        res[j].converged = true;
        res[j].relative_residual = bnorm[j] == S(0) ? 0.0 : double(rn / bnorm[j]);
      } else {
        ++n_active;
      }
    }
    if (!n_active) return;
    precondition();
    s.P = s.Z;
    for (int j = 0; j < c; ++j) rz[j] = s.R.col(j).dot(s.Z.col(j));
    for (int k = 1; k <= max_iter_ && n_active; ++k) {
      product_block(s.P, s.AP, s);
      for (int j = 0; j < c; ++j) {
        if (!active[j]) continue;
        const S pAp = s.P.col(j).dot(s.AP.col(j));
        res[j].iterations = k;
        if (!(pAp > S(0))) {
          res[j].breakdown = true;
          active[j] = 0;
          --n_active;
          continue;
        }
        const S alpha = rz[j] / pAp;
        X.col(j) += alpha * s.P.col(j);
        s.R.col(j) -= alpha * s.AP.col(j);
        const S rn = s.R.col(j).norm();
        res[j].relative_residual = double(rn / bnorm[j]);
        if (rn <= tol_ * bnorm[j]) {
          res[j].converged = true;
          active[j] = 0;
          --n_active;
        }
      }
      if (!n_active) break;
      precondition();
      for (int j = 0; j < c; ++j) {
        if (!active[j]) continue;
        const S rz_new = s.R.col(j).dot(s.Z.col(j));
        s.P.col(j) = s.Z.col(j) + (rz_new / rz[j]) * s.P.col(j);
        rz[j] = rz_new;
      }
    }
  }

  // X = M̃_r⁻¹ B column by column, X holding the starting guesses; columns over threads. (Ref: one
  // instantiation for the vectors and matrices the step solves with)
  long solve(const Eigen::Ref<const MatX>& B, Eigen::Ref<MatX> X) {
    const int cols = static_cast<int>(B.cols()), n = sys_.tree.nv;
    // threads only for enough work: a parallel region costs a wake-up, and on a loaded machine a
    // wait for a time slice, which a small system's whole step would not cover
    const int nthreads = long(cols) * n < kParallelWork ? 1 : std::max(1, std::min(max_threads(), cols));
    while (static_cast<int>(scratch_.size()) < nthreads) scratch_.emplace_back(new Scratch(sys_.tree));
    std::vector<linalg::PcgResult> res(cols);
    if (cols == 1) {  // one right-hand side: the vector PCG
      Scratch& s = *scratch_[0];
      res[0] = linalg::pcg<S>([&](const S* x, S* y) { product(x, y, s); },
                              [&](const S* r, S* z) { pre_.apply(sys_.tree, ws_.d, r, z, s.w.data(), s.y.data()); },
                              B.col(0).data(), X.col(0).data(), n, tol_, max_iter_, s.v);
    } else {  // several (the loop-closure columns): blocks of columns, one block per thread
      while (static_cast<int>(block_.size()) < nthreads) block_.emplace_back(new BlockScratch());
      auto chunk = [&](int t) {
        const int c0 = cols * t / nthreads, c1 = cols * (t + 1) / nthreads;
        auto Xc = X.middleCols(c0, c1 - c0);
        solve_block(B.middleCols(c0, c1 - c0), Xc, *block_[t], res.data() + c0);
      };
      parallel_for(nthreads, nthreads, [&](int t, int) { chunk(t); });  // chunk t has its own scratch
    }
    long total = 0;
    for (const auto& r : res) {
      if (r.breakdown)
        throw std::domain_error(
            "redmax-pcg: M̃_r is not positive definite (PCG breakdown); the stiffness may be too "
            "large for the time step");
      total += r.iterations;
      max_it_ = std::max(max_it_, r.iterations);
      unconverged_ += r.converged ? 0 : 1;
    }
    return total;
  }

 private:
  static constexpr long kParallelWork = 8192;  // columns x nv below which the solves stay serial
  const System<S> sys_;
  Workspace<S> ws_;
  BlockJacobi<S> pre_;
  VecX Ar_;
  std::vector<Mat6<S>> Xm_, Sm_;  // ^iX_p and S_i as 6x6 (S_i in the first nv_i columns)
  S tol_;
  int max_iter_;
  int max_it_ = 0, unconverged_ = 0;
  std::vector<std::unique_ptr<Scratch>> scratch_;
  std::vector<std::unique_ptr<BlockScratch>> block_;
  std::mutex mutex_;  // guards everything above that a call writes
};

// The entry points the bindings call, defined out of the class: not inline, so that the
// bindings' `extern template class` (bindings/redmax.cpp) keeps the compiler from instantiating
// the solver again there (members defined in the class are inline, and GCC instantiates an extern
// template's inline members wherever they are called, to inline them: 9 s of CPU per solver)
template <class S> StepStats<S> Pcg<S>::step(const S* q, const S* qd, S t, S h, S* qout, S* qdout) {
  const std::lock_guard<std::mutex> held(mutex_);
  StepStats<S> st = redmax::step(
      sys_, ws_, q, qd, t, h, [&](S hh) { prepare(hh); }, [&](const auto& B, auto& X) { return solve(B, X); }, qout,
      qdout);
  st.max_iterations = max_it_;
  st.unconverged = unconverged_;
  return st;
}

template <class S> auto Pcg<S>::inverse_inertia(const S* q, S h, const MatX& R) -> MatX {
  const std::lock_guard<std::mutex> held(mutex_);
  const VecX zero = VecX::Zero(sys_.tree.nv);
  implicit_terms(sys_, ws_, q, zero.data(), S(0), h);
  prepare(h);
  MatX X = MatX::Zero(R.rows(), R.cols());
  solve(R, X);
  return X;
}

template <class S> void Pcg<S>::forward_dynamics(const S* q, const S* qd, const S* tau, S t, S* qdd) {
  const std::lock_guard<std::mutex> held(mutex_);
  VecX b(sys_.tree.nv);
  explicit_terms(sys_, ws_, q, qd, tau, t, b.data());
  prepare(S(0));  // P = M_r: one iteration
  Eigen::Map<VecX> x(qdd, sys_.tree.nv);
  x.setZero();
  solve(b, x);
}

template <class S> auto Pcg<S>::precondition(const S* q, S h, const MatX& X) -> MatX {
  const std::lock_guard<std::mutex> held(mutex_);
  const VecX zero = VecX::Zero(sys_.tree.nv);
  implicit_terms(sys_, ws_, q, zero.data(), S(0), h);
  prepare(h);
  MatX Y(X.rows(), X.cols());
  Scratch& s = *scratch_[0];
  for (int c = 0; c < X.cols(); ++c)
    pre_.apply(sys_.tree, ws_.d, X.col(c).data(), Y.col(c).data(), s.w.data(), s.y.data());
  return Y;
}

}  // namespace treedyn::redmax
