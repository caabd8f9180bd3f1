// The projected block Jacobi preconditioner of baxter2019 §3.2, Alg. 4, eq. (3.1):
//   P = Jᵀ(M_m + blkdiag(hD_m − h²K_m))J + hD_r − h²K_r,
// solved in O(n) by an articulated-body recursion. Rebuilt from the current state every step.
// Without springs between different (moving) bodies P = M̃_r and one PCG iteration is exact.
#pragma once
#include <Eigen/Cholesky>

#include "treedyn/redmax/mapping.hpp"

namespace treedyn::redmax {

template <class S> class BlockJacobi {
 public:
  using Small = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic, 0, 6, 6>;
  using Cols = Eigen::Matrix<S, 6, Eigen::Dynamic, 0, 6, 6>;

  explicit BlockJacobi(const Model<S>& m) : Mhat_(m.N + 1), U_(m.N + 1), Psi_(m.N + 1) {}

  // Alg. 4 lines 1-8. A: per body M_i + blkdiag(hD_m − h²K_m)_i (lines 3 and 5's first term);
  // Ar: per coordinate hD_r − h²K_r (line 4).
  void build(const Model<S>& m, const Data<S>& d, const Mat6<S>* A, const S* Ar) {
    for (int i = 0; i <= m.N; ++i) Mhat_[i] = A[i];
    for (int i = m.N; i >= 1; --i) {
      const int n = m.nv_i[i], vi = m.v_index[i];
      Mat6<S> Pi = Mhat_[i];  // Π_j = M̂_j for a fixed joint
      if (n) {
        Cols Si(6, n);
        for (int k = 0; k < n; ++k) Si.col(k) = d.Ssub[vi + k].vec();
        const Cols U = Mhat_[i] * Si;  // M̂_j S_j
        Small D = Si.transpose() * U;  // line 6: S_jᵀ M̂_j S_j + A^r_j
        for (int k = 0; k < n; ++k) D(k, k) += Ar[vi + k];
        Eigen::LLT<Small> llt(D);
        if (llt.info() != Eigen::Success)
          throw std::domain_error("redmax-pcg: the preconditioner's pivot at joint '" + m.name[i] +
                                  "' is not positive definite (stiffness too large for the time step?)");
        const Small Psi = llt.solve(Small::Identity(n, n));  // Ψ_j
        Pi.noalias() -= U * Psi * U.transpose();             // line 7
        U_[i].setZero();
        Psi_[i].setZero();
        U_[i].leftCols(n) = U;
        Psi_[i].topLeftCorner(n, n) = Psi;
      }
      const Mat6<S> X = d.Xup[i].matrix();
      Mhat_[m.parent[i]].noalias() += X.transpose() * Pi * X;  // line 5: Σ_c ^cAdᵀ Π_c ^cAd
    }
  }

  // Alg. 4 lines 11-18: y = P⁻¹ x. Bhat: scratch forces (N+1), a: scratch motions (N+1).
  void apply(const Model<S>& m, const Data<S>& d, const S* x, S* y, Force<S>* Bhat, Motion<S>* a) const {
    for (int i = 0; i <= m.N; ++i) Bhat[i] = Force<S>::zero();
    for (int i = m.N; i >= 1; --i) {  // lines 11-14
      Force<S> beta = Bhat[i];        // B̂_j = Σ_c ^cAdᵀ β_c
      switch (m.nv_i[i]) {
        case 0:
          break;
        case 1:
          backward<1>(d, m.v_index[i], i, x, Bhat[i], beta);
          break;
        case 2:
          backward<2>(d, m.v_index[i], i, x, Bhat[i], beta);
          break;
        case 3:
          backward<3>(d, m.v_index[i], i, x, Bhat[i], beta);
          break;
        default:
          backward<6>(d, m.v_index[i], i, x, Bhat[i], beta);
          break;
      }
      Bhat[m.parent[i]] += d.Xup[i].inv_apply(beta);
    }
    a[0] = Motion<S>::zero();
    for (int i = 1; i <= m.N; ++i) {          // lines 15-18
      a[i] = d.Xup[i].apply(a[m.parent[i]]);  // ^jAd V̇_p
      switch (m.nv_i[i]) {
        case 0:
          break;
        case 1:
          forward<1>(d, m.v_index[i], i, x, Bhat[i], a[i], y);
          break;
        case 2:
          forward<2>(d, m.v_index[i], i, x, Bhat[i], a[i], y);
          break;
        case 3:
          forward<3>(d, m.v_index[i], i, x, Bhat[i], a[i], y);
          break;
        default:
          forward<6>(d, m.v_index[i], i, x, Bhat[i], a[i], y);
          break;
      }
    }
  }

  // Alg. 4 lines 11-18 for the c columns of X at once (Y = P⁻¹ X): the same operations per
  // column as apply(), the columns' recursions interleaved. Xm: ^iX_p as 6x6, Sm: S_i in the first
  // nv_i columns. Bh, a: scratch (N+1 blocks of 6 x c); u: scratch of at least 6 x c.
  template <class Blk, class MX, class MY>
  void apply_block(const Model<S>& m, const std::vector<Mat6<S>>& Xm, const std::vector<Mat6<S>>& Sm, const MX& X,
                   MY& Y, std::vector<Blk>& Bh, std::vector<Blk>& a, Blk& beta, Eigen::Matrix<S, -1, -1>& u) const {
    const int c = static_cast<int>(X.cols());
    for (int i = 0; i <= m.N; ++i) Bh[i].setZero(6, c);
    for (int i = m.N; i >= 1; --i) {  // lines 11-14
      const int n = m.nv_i[i], vi = m.v_index[i];
      beta = Bh[i];
      if (n) {
        u.topRows(n).noalias() = X.middleRows(vi, n) - Sm[i].leftCols(n).transpose().lazyProduct(Bh[i]);
        Y.middleRows(vi, n).noalias() = Psi_[i].topLeftCorner(n, n).lazyProduct(u.topRows(n));  // (scratch)
        beta.noalias() += U_[i].leftCols(n).lazyProduct(Y.middleRows(vi, n));                   // line 13
      }
      Bh[m.parent[i]].noalias() += Xm[i].transpose().lazyProduct(beta);
    }
    a[0].setZero(6, c);
    for (int i = 1; i <= m.N; ++i) {  // lines 15-18
      const int n = m.nv_i[i], vi = m.v_index[i];
      a[i].noalias() = Xm[i].lazyProduct(a[m.parent[i]]);
      if (!n) continue;
      u.topRows(n).noalias() = X.middleRows(vi, n) - U_[i].leftCols(n).transpose().lazyProduct(a[i]) -
                               Sm[i].leftCols(n).transpose().lazyProduct(Bh[i]);
      Y.middleRows(vi, n).noalias() = Psi_[i].topLeftCorner(n, n).lazyProduct(u.topRows(n));  // line 16
      a[i].noalias() += Sm[i].leftCols(n).lazyProduct(Y.middleRows(vi, n));                   // line 17
    }
  }

 private:
  template <int n> using VecN = Eigen::Matrix<S, n, 1>;

  // line 13: β_j = B̂_j + M̂_j S_j Ψ_j (x_j − S_jᵀ B̂_j)
  template <int n>
  void backward(const Data<S>& d, int vi, int i, const S* x, const Force<S>& Bh, Force<S>& beta) const {
    VecN<n> u;
    for (int k = 0; k < n; ++k) u[k] = x[vi + k] - dot(d.Ssub[vi + k], Bh);
    const VecN<n> Pu = Psi_[i].template topLeftCorner<n, n>() * u;
    const Vec6<S> add = U_[i].template leftCols<n>() * Pu;
    beta.ang += add.template head<3>();
    beta.lin += add.template tail<3>();
  }
  // lines 16-17: y_j = Ψ_j (x_j − S_jᵀ M̂_j a' − S_jᵀ B̂_j), a_j = a' + S_j y_j
  template <int n>
  void forward(const Data<S>& d, int vi, int i, const S* x, const Force<S>& Bh, Motion<S>& a, S* y) const {
    Vec6<S> av;
    av << a.ang, a.lin;
    const VecN<n> Ua = U_[i].template leftCols<n>().transpose() * av;
    VecN<n> u;
    for (int k = 0; k < n; ++k) u[k] = x[vi + k] - Ua[k] - dot(d.Ssub[vi + k], Bh);
    const VecN<n> yi = Psi_[i].template topLeftCorner<n, n>() * u;
    for (int k = 0; k < n; ++k) {
      y[vi + k] = yi[k];
      a += d.Ssub[vi + k] * yi[k];
    }
  }

  std::vector<Mat6<S>> Mhat_;  // M̂_j
  std::vector<Mat6<S>> U_;     // M̂_j S_j in the first nv_j columns
  std::vector<Mat6<S>> Psi_;   // Ψ_j in the top-left nv_j x nv_j corner
};

}  // namespace treedyn::redmax
