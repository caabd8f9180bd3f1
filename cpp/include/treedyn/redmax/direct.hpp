// redmax-direct: M̃_r of eq. (2.14) assembled sparse — never a dense J — and factored by a sparse
// LDLᵀ (Eigen's SimplicialLDLT), the pattern analysed once. Assembly:
//   tree part  Jᵀ blkdiag(A_i) J: the composite-body recursion of CRBA with general 6x6 blocks,
//              A^c_p += ^iX_pᵀ A^c_i ^iX_p, then M̃(j, i) = S_jᵀ (^iX_jᵀ A^c_i S_i) up the path —
//              entries only between a joint and its ancestors;
//   springs    J_aᵀ C_s J_b + its transpose for the coupling block C_s of each spring: entries
//              between every joint above a and every joint above b;
//   reduced    h D_r − h² K_r on the diagonal.
// Orderings (§3.3): "amd" (fill-reducing) or "leaf-to-root" (indices reversed, so a tree without
// springs factors with no fill).
// One solver may be shared between threads: step, inverse_inertia, forward_dynamics and nonzeros
// take the solver's mutex; a caller using workspace(), assemble(), factor(), solve() or matrix()
// directly holds lock() around them.
#pragma once
#include <Eigen/SparseCholesky>
#include <Eigen/SparseCore>
#include <algorithm>
#include <map>
#include <mutex>

#include "treedyn/algorithms/pivots.hpp"
#include "treedyn/redmax/step.hpp"

namespace treedyn::redmax {

template <class S> class Direct {
 public:
  using SpMat = Eigen::SparseMatrix<S, Eigen::ColMajor, int>;
  using VecX = Eigen::Matrix<S, Eigen::Dynamic, 1>;
  using MatX = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic>;

  Direct(const System<S>& sys, bool leaf_to_root)
      : sys_(sys),
        ws_(sys),
        leaf_to_root_(leaf_to_root),
        Ac_(sys.tree.N + 1),
        groups_(spring_groups(sys)),
        Mt_(sys.tree.nv, sys.tree.nv) {}

  const System<S>& system() const { return sys_; }
  Workspace<S>& workspace() { return ws_; }
  const SpMat& matrix() const { return Mt_; }  // M̃_r of the last step (in the solver's ordering)
  bool leaf_to_root() const { return leaf_to_root_; }
  std::unique_lock<std::mutex> lock() const { return std::unique_lock<std::mutex>(mutex_); }
  long nonzeros() const {
    const auto held = lock();
    return static_cast<long>(Mt_.nonZeros());
  }

  StepStats<S> step(const S* q, const S* qd, S t, S h, S* qout, S* qdout);

  // M̃_r(q)⁻¹ R for step h (q̇ plays no part in M̃_r)
  MatX inverse_inertia(const S* q, S h, const MatX& R);

  // the unconstrained continuous dynamics (see explicit_terms)
  void forward_dynamics(const S* q, const S* qd, const S* tau, S t, S* qdd);

  // Build M̃_r from the workspace's blocks A, C (implicit_terms must have run) for step h.
  void assemble(S h);

  void factor() {
    if (leaf_to_root_)
      factor_with(natural_);
    else
      factor_with(amd_);
  }

  // X ← M̃_r⁻¹ X (X: nv x m, in joint order)
  template <class Mat> void solve(Mat& X) {
    if (leaf_to_root_) {  // reverse the rows into the solver's order and back
      MatX Xr = X.colwise().reverse();
      Xr = natural_.solve(Xr);
      X = Xr.colwise().reverse();
    } else {
      X = amd_.solve(X).eval();
    }
  }

 private:
  // The pattern of M̃_r depends on the topology only, and the entries come in the same order at
  // every assembly: the first one goes through triplets, and records where each entry lands in
  // the compressed matrix; later ones add straight into its values.
  void start_assembly() {
    if (pos_.empty())
      trip_.clear();
    else
      std::fill(Mt_.valuePtr(), Mt_.valuePtr() + Mt_.nonZeros(), S(0));
    next_ = 0;
  }
  void emit(int row, int col, S val) {
    if (pos_.empty())
      trip_.emplace_back(row, col, val);
    else
      Mt_.valuePtr()[pos_[next_++]] += val;
  }
  void finish_assembly() {
    if (!pos_.empty()) return;
    Mt_.setFromTriplets(trip_.begin(), trip_.end());
    pos_.resize(trip_.size());
    for (size_t k = 0; k < trip_.size(); ++k) {
      const int c = trip_[k].col();
      const int* first = Mt_.innerIndexPtr() + Mt_.outerIndexPtr()[c];
      const int* last = Mt_.innerIndexPtr() + Mt_.outerIndexPtr()[c + 1];
      pos_[k] = static_cast<int>(std::lower_bound(first, last, trip_[k].row()) - Mt_.innerIndexPtr());
    }
    trip_ = {};
  }

  // the springs between two moving bodies, grouped by their second end; per group the joints
  // above any of its first ends, in a fixed order
  struct Group {
    std::vector<int> springs, alphas;
  };
  static std::map<int, Group> spring_groups(const System<S>& sys) {
    const Model<S>& m = sys.tree;
    std::map<int, Group> groups;
    for (size_t k = 0; k < sys.springs.size(); ++k) {
      const Spring<S>& s = sys.springs[k];
      if (s.a != s.b) groups[s.b].springs.push_back(static_cast<int>(k));
    }
    for (auto& g : groups) {
      std::vector<char> seen(m.N + 1, 0);
      for (int k : g.second.springs)
        for (int al = sys.springs[k].a; al > 0 && !seen[al]; al = m.parent[al]) {
          seen[al] = 1;
          g.second.alphas.push_back(al);
        }
    }
    return groups;
  }

  int index(int v) const { return leaf_to_root_ ? sys_.tree.nv - 1 - v : v; }

  // M̃(rows of joint r, cols of joint c) = S_rᵀ F, and the mirrored entries too with `mirror`
  template <class A, class B> void add_block(int r, int c, const A& Sr, const B& F, bool mirror = false) {
    const Model<S>& m = sys_.tree;
    const Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic, 0, 6, 6> blk = Sr.transpose() * F;
    for (int a = 0; a < blk.rows(); ++a)
      for (int b = 0; b < blk.cols(); ++b) {
        const int row = index(m.v_index[r] + a), col = index(m.v_index[c] + b);
        emit(row, col, blk(a, b));
        if (mirror) emit(col, row, blk(a, b));
      }
  }

  template <class LDLT> void factor_with(LDLT& ldlt) {
    if (!analyzed_) {
      ldlt.analyzePattern(Mt_);
      analyzed_ = true;
    }
    ldlt.factorize(Mt_);
    if (ldlt.info() != Eigen::Success)
      throw std::domain_error("redmax-direct: the implicit system matrix M̃_r is singular (a zero pivot)");
    // the pivots against M̃_r's diagonal at the screen of every solver's test (algorithms/pivots.hpp;
    // a sparse factor offers no refined scale here, so an ill-conditioned M̃_r below the screen is
    // refused, where the reduced solvers decide against their refined scales); D in the
    // factorisation's ordering, P M̃_r Pᵀ = L D Lᵀ
    if (ldlt.permutationP().size() > 0)
      diag_ = ldlt.permutationP() * Mt_.diagonal();
    else
      diag_ = Mt_.diagonal();  // (natural ordering: no permutation)
    const S tol = screen_tolerance<S>();
    for (int k = 0; k < diag_.size(); ++k)
      if (!(ldlt.vectorD()[k] > tol * diag_[k]))
        throw std::domain_error("redmax-direct: the implicit system matrix M̃_r is singular (a pivot below " +
                                tolerance_text<S>(tol) +
                                " of its diagonal entry): some joint moves bodies without inertia");
  }

  const System<S> sys_;  // a copy: the solver owns what it solves
  Workspace<S> ws_;
  bool leaf_to_root_;
  bool analyzed_ = false;
  Eigen::Matrix<S, Eigen::Dynamic, 1> diag_;  // M̃_r's diagonal in the factorisation's ordering
  std::vector<Mat6<S>> Ac_;
  std::vector<Eigen::Triplet<S, int>> trip_;
  std::vector<int> pos_;  // where each entry of an assembly lands in Mt_'s values
  size_t next_ = 0;
  std::map<int, Group> groups_;
  SpMat Mt_;
  Eigen::SimplicialLDLT<SpMat, Eigen::Lower, Eigen::AMDOrdering<int>> amd_;
  Eigen::SimplicialLDLT<SpMat, Eigen::Lower, Eigen::NaturalOrdering<int>> natural_;
  mutable std::mutex mutex_;  // guards everything above that a call writes
};

// The entry points the bindings call, defined out of the class: not inline, so that the
// bindings' `extern template class` (bindings/redmax.cpp) keeps the compiler from instantiating
// the solver again there (members defined in the class are inline, and GCC instantiates an extern
// template's inline members wherever they are called, to inline them: 9 s of CPU per solver)
template <class S> StepStats<S> Direct<S>::step(const S* q, const S* qd, S t, S h, S* qout, S* qdout) {
  const auto held = lock();
  return redmax::step(
      sys_, ws_, q, qd, t, h,
      [&](S hh) {
        assemble(hh);
        factor();
      },
      [&](const auto& B, auto& X) {
        X = B;
        solve(X);
        return 0L;
      },
      qout, qdout);
}

template <class S> auto Direct<S>::inverse_inertia(const S* q, S h, const MatX& R) -> MatX {
  const auto held = lock();
  const VecX zero = VecX::Zero(sys_.tree.nv);
  implicit_terms(sys_, ws_, q, zero.data(), S(0), h);
  assemble(h);
  factor();
  MatX X = R;
  solve(X);
  return X;
}

template <class S> void Direct<S>::forward_dynamics(const S* q, const S* qd, const S* tau, S t, S* qdd) {
  const auto held = lock();
  explicit_terms(sys_, ws_, q, qd, tau, t, qdd);
  assemble(S(0));
  factor();
  Eigen::Map<VecX> x(qdd, sys_.tree.nv);
  solve(x);
}

template <class S> void Direct<S>::assemble(S h) {
  const Model<S>& m = sys_.tree;
  const Data<S>& d = ws_.d;
  start_assembly();
  // tree part: composite blocks, leaves first
  for (int i = 0; i <= m.N; ++i) Ac_[i] = ws_.A[i];
  for (int i = m.N; i >= 1; --i) {
    const Mat6<S> X = d.Xup[i].matrix();
    Ac_[m.parent[i]].noalias() += X.transpose() * Ac_[i] * X;
  }
  using Cols = Eigen::Matrix<S, 6, Eigen::Dynamic, 0, 6, 6>;
  for (int i = 1; i <= m.N; ++i) {
    const int ni = m.nv_i[i], vi = m.v_index[i];
    if (!ni) continue;
    Cols Si(6, ni);
    for (int k = 0; k < ni; ++k) Si.col(k) = d.Ssub[vi + k].vec();
    Cols F = Ac_[i] * Si;
    add_block(i, i, Si, F);
    for (int j = i; m.parent[j] > 0;) {  // up the path: F = ^jX_pᵀ F
      F = to_parent(d.Xup[j], F);
      j = m.parent[j];
      if (!m.nv_i[j]) continue;
      Cols Sj(6, m.nv_i[j]);
      for (int k = 0; k < m.nv_i[j]; ++k) Sj.col(k) = d.Ssub[m.v_index[j] + k].vec();
      add_block(j, i, Sj, F, true);
    }
  }
  // springs, grouped by the body b of their second end: entry (α, β) = F_αᵀ J_{b,β} with
  // F_α = Σ_s C_sᵀ J_{a_s,α} over the group's springs whose a_s lies below α, and
  // J_{a,α} = ^aX_0 (^αX_0)⁻¹ S_α; F_α walks up from b once for all the group's springs
  for (const auto& g : groups_) {
    const int b = g.first;
    for (int al : g.second.alphas)
      for (int ka = 0; ka < m.nv_i[al]; ++ka) {
        const Motion<S> Sa = d.X0[al].inv_apply(d.Ssub[m.v_index[al] + ka]);  // S_α in world
        Force<S> F = Force<S>::zero();
        for (int k : g.second.springs) {
          const int a = sys_.springs[k].a;
          if (a < al || a > m.last(al)) continue;  // α is not above a
          F += Force<S>::from(ws_.C[k].transpose() * d.X0[a].apply(Sa).vec());
        }
        const int ra = index(m.v_index[al] + ka);
        for (int be = b; be > 0; be = m.parent[be]) {
          for (int kb = 0; kb < m.nv_i[be]; ++kb) {
            const S val = dot(d.Ssub[m.v_index[be] + kb], F);
            const int rb = index(m.v_index[be] + kb);
            emit(ra, rb, val);
            emit(rb, ra, val);
          }
          F = d.Xup[be].inv_apply(F);
        }
      }
  }
  for (int k = 0; k < m.nv; ++k) emit(index(k), index(k), m.armature[k] + h * m.damping[k] + h * h * m.stiffness[k]);
  finish_assembly();
}

}  // namespace treedyn::redmax
