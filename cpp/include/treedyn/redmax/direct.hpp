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
#pragma once
#include <Eigen/SparseCholesky>
#include <Eigen/SparseCore>

#include "treedyn/redmax/step.hpp"

namespace treedyn::redmax {

template <class S> class Direct {
 public:
  using SpMat = Eigen::SparseMatrix<S, Eigen::ColMajor, int>;
  using VecX = Eigen::Matrix<S, Eigen::Dynamic, 1>;
  using MatX = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic>;

  Direct(const System<S>& sys, bool leaf_to_root)
      : sys_(sys), ws_(sys), leaf_to_root_(leaf_to_root), Ac_(sys.tree.N + 1), Mt_(sys.tree.nv, sys.tree.nv) {}

  const System<S>& system() const { return sys_; }
  Workspace<S>& workspace() { return ws_; }
  const SpMat& matrix() const { return Mt_; }  // M̃_r of the last step (in the solver's ordering)
  bool leaf_to_root() const { return leaf_to_root_; }
  long nonzeros() const { return static_cast<long>(Mt_.nonZeros()); }

  StepStats<S> step(const S* q, const S* qd, S t, S h, S* qout, S* qdout) {
    return redmax::step(sys_, ws_, q, qd, t, h, [&](S hh) { assemble(hh); factor(); },
                        [&](const auto& B, auto& X) { X = B; solve(X); return 0L; }, qout, qdout);
  }

  // M̃_r(q)⁻¹ R for step h (q̇ plays no part in M̃_r)
  MatX inverse_inertia(const S* q, S h, const MatX& R) {
    const VecX zero = VecX::Zero(sys_.tree.nv);
    implicit_terms(sys_, ws_, q, zero.data(), S(0), h);
    assemble(h);
    factor();
    MatX X = R;
    solve(X);
    return X;
  }

  // the unconstrained continuous dynamics (see explicit_terms)
  VecX forward_dynamics(const S* q, const S* qd, const S* tau, S t) {
    VecX x(sys_.tree.nv);
    explicit_terms(sys_, ws_, q, qd, tau, t, x.data());
    assemble(S(0));
    factor();
    solve(x);
    return x;
  }

  // Build M̃_r from the workspace's blocks A, C (implicit_terms must have run) for step h.
  void assemble(S h) {
    const Model<S>& m = sys_.tree;
    const Data<S>& d = ws_.d;
    trip_.clear();
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
    // springs: entry (α, β) = J_{a,α}ᵀ C J_{b,β}, J_{a,α} = ^aX_0 (^αX_0)⁻¹ S_α
    for (size_t k = 0; k < sys_.springs.size(); ++k) {
      const Spring<S>& s = sys_.springs[k];
      if (s.a == s.b) continue;
      for (int al = s.a; al > 0; al = m.parent[al])
        for (int ka = 0; ka < m.nv_i[al]; ++ka) {
          const int ra = index(m.v_index[al] + ka);
          const Motion<S> Ja = d.X0[s.a].apply(d.X0[al].inv_apply(d.Ssub[m.v_index[al] + ka]));
          Force<S> F = Force<S>::from(ws_.C[k].transpose() * Ja.vec());  // on body b
          for (int be = s.b; be > 0; be = m.parent[be]) {
            for (int kb = 0; kb < m.nv_i[be]; ++kb) {
              const S val = dot(d.Ssub[m.v_index[be] + kb], F);
              const int rb = index(m.v_index[be] + kb);
              trip_.emplace_back(ra, rb, val);
              trip_.emplace_back(rb, ra, val);
            }
            F = d.Xup[be].inv_apply(F);
          }
        }
    }
    for (int k = 0; k < m.nv; ++k) trip_.emplace_back(index(k), index(k), h * sys_.d_r[k] + h * h * sys_.k_r[k]);
    Mt_.setFromTriplets(trip_.begin(), trip_.end());
  }

  void factor() {
    if (leaf_to_root_) factor_with(natural_);
    else factor_with(amd_);
  }

  // X ← M̃_r⁻¹ X (X: nv x m, in joint order)
  template <class Mat> void solve(Mat& X) {
    const int n = sys_.tree.nv;
    if (leaf_to_root_) {  // reverse the rows into the solver's order and back
      MatX Xr = X.colwise().reverse();
      Xr = natural_.solve(Xr);
      X = Xr.colwise().reverse();
    } else {
      X = amd_.solve(X).eval();
    }
    (void)n;
  }

 private:
  int index(int v) const { return leaf_to_root_ ? sys_.tree.nv - 1 - v : v; }

  // M̃(rows of joint r, cols of joint c) = S_rᵀ F, and the mirrored entries too with `mirror`
  template <class A, class B> void add_block(int r, int c, const A& Sr, const B& F, bool mirror = false) {
    const Model<S>& m = sys_.tree;
    const Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic, 0, 6, 6> blk = Sr.transpose() * F;
    for (int a = 0; a < blk.rows(); ++a)
      for (int b = 0; b < blk.cols(); ++b) {
        const int row = index(m.v_index[r] + a), col = index(m.v_index[c] + b);
        trip_.emplace_back(row, col, blk(a, b));
        if (mirror) trip_.emplace_back(col, row, blk(a, b));
      }
  }

  template <class LDLT> void factor_with(LDLT& ldlt) {
    if (!analyzed_) {
      ldlt.analyzePattern(Mt_);
      analyzed_ = true;
    }
    ldlt.factorize(Mt_);
    if (ldlt.info() != Eigen::Success)
      throw std::runtime_error("redmax-direct: the implicit system matrix M̃_r is singular (a zero pivot)");
  }

  const System<S> sys_;  // a copy: the solver owns what it solves
  Workspace<S> ws_;
  bool leaf_to_root_;
  bool analyzed_ = false;
  std::vector<Mat6<S>> Ac_;
  std::vector<Eigen::Triplet<S, int>> trip_;
  SpMat Mt_;
  Eigen::SimplicialLDLT<SpMat, Eigen::Lower, Eigen::AMDOrdering<int>> amd_;
  Eigen::SimplicialLDLT<SpMat, Eigen::Lower, Eigen::NaturalOrdering<int>> natural_;
};

}  // namespace treedyn::redmax
