// redmax-pcg (baxter2019 §3): M̃_r q̇ = f̃_r solved by preconditioned conjugate gradients with
// O(n) products — J, Jᵀ by traversals (Alg. 2, 3), the per-body blocks and the springs'
// coupling blocks in maximal coordinates — and the projected block Jacobi preconditioner
// (Alg. 4). The l loop-closure columns M̃⁻¹Gᵀ are solved in parallel over OpenMP threads (§3.4).
// Every solve starts from the previous step's solution (warm start).
#pragma once
#include <algorithm>
#include <memory>

#include "treedyn/engine.hpp"  // max_threads
#include "treedyn/linalg/pcg.hpp"
#include "treedyn/redmax/preconditioner.hpp"
#include "treedyn/redmax/step.hpp"
#ifdef TREEDYN_HAS_OPENMP
#include <omp.h>
#endif

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

  Pcg(const System<S>& sys, S tol, int max_iter)
      : sys_(sys), ws_(sys), pre_(sys.tree), Ar_(VecX::Zero(sys.tree.nv)), tol_(tol), max_iter_(max_iter) {
    scratch_.emplace_back(new Scratch(sys_.tree));
  }

  const System<S>& system() const { return sys_; }
  Workspace<S>& workspace() { return ws_; }

  StepStats<S> step(const S* q, const S* qd, S t, S h, S* qout, S* qdout) {
    StepStats<S> st = redmax::step(sys_, ws_, q, qd, t, h, [&](S hh) { prepare(hh); },
                                   [&](const auto& B, auto& X) { return solve(B, X); }, qout, qdout);
    st.max_iterations = max_it_;
    st.unconverged = unconverged_;
    return st;
  }

  // M̃_r(q)⁻¹ R for step h, each column from zero
  MatX inverse_inertia(const S* q, S h, const MatX& R) {
    const VecX zero = VecX::Zero(sys_.tree.nv);
    implicit_terms(sys_, ws_, q, zero.data(), S(0), h);
    prepare(h);
    MatX X = MatX::Zero(R.rows(), R.cols());
    solve(R, X);
    return X;
  }

  VecX forward_dynamics(const S* q, const S* qd, const S* tau, S t) {
    VecX b(sys_.tree.nv), x = VecX::Zero(sys_.tree.nv);
    explicit_terms(sys_, ws_, q, qd, tau, t, b.data());
    prepare(S(0));  // P = M_r: one iteration
    solve(b, x);
    return x;
  }

  // P⁻¹ X at q for step h (Alg. 4 alone, for tests: equals M̃_r⁻¹ X without coupling springs)
  MatX precondition(const S* q, S h, const MatX& X) {
    const VecX zero = VecX::Zero(sys_.tree.nv);
    implicit_terms(sys_, ws_, q, zero.data(), S(0), h);
    prepare(h);
    MatX Y(X.rows(), X.cols());
    Scratch& s = *scratch_[0];
    for (int c = 0; c < X.cols(); ++c) pre_.apply(sys_.tree, ws_.d, X.col(c).data(), Y.col(c).data(), s.w.data(), s.y.data());
    return Y;
  }

  // the preconditioner of the workspace's blocks, and the reduced diagonal hD_r − h²K_r
  void prepare(S h) {
    for (int k = 0; k < sys_.tree.nv; ++k) Ar_[k] = h * sys_.d_r[k] + h * h * sys_.k_r[k];
    pre_.build(sys_.tree, ws_.d, ws_.A.data(), Ar_.data());
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

  // X = M̃_r⁻¹ B column by column, X holding the starting guesses; columns over threads
  template <class MB, class MX> long solve(const MB& B, MX& X) {
    const int cols = static_cast<int>(B.cols()), n = sys_.tree.nv;
    // threads only for enough work: a parallel region costs a wake-up, and on a loaded machine a
    // wait for a time slice, which a small system's whole step would not cover
    const int nthreads = long(cols) * n < kParallelWork ? 1 : std::max(1, std::min(max_threads(), cols));
    while (static_cast<int>(scratch_.size()) < nthreads) scratch_.emplace_back(new Scratch(sys_.tree));
    std::vector<linalg::PcgResult> res(cols);
    auto one = [&](int c, Scratch& s) {
      res[c] = linalg::pcg<S>([&](const S* x, S* y) { product(x, y, s); },
                              [&](const S* r, S* z) { pre_.apply(sys_.tree, ws_.d, r, z, s.w.data(), s.y.data()); },
                              B.col(c).data(), X.col(c).data(), n, tol_, max_iter_, s.v);
    };
#ifdef TREEDYN_HAS_OPENMP
    if (nthreads > 1) {
#pragma omp parallel for num_threads(nthreads) schedule(dynamic, 1)
      for (int c = 0; c < cols; ++c) one(c, *scratch_[omp_get_thread_num()]);
    } else {
      for (int c = 0; c < cols; ++c) one(c, *scratch_[0]);
    }
#else
    for (int c = 0; c < cols; ++c) one(c, *scratch_[0]);
#endif
    long total = 0;
    for (const auto& r : res) {
      if (r.breakdown)
        throw std::runtime_error("redmax-pcg: M̃_r is not positive definite (PCG breakdown); the stiffness may be too "
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
  S tol_;
  int max_iter_;
  int max_it_ = 0, unconverged_ = 0;
  std::vector<std::unique_ptr<Scratch>> scratch_;
};

}  // namespace treedyn::redmax
