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
      Mat6<S> Pi = Mhat_[i];                                        // Π_j = M̂_j for a fixed joint
      if (n) {
        Cols Si(6, n);
        for (int k = 0; k < n; ++k) Si.col(k) = d.Ssub[vi + k].vec();
        U_[i] = Mhat_[i] * Si;                                      // M̂_j S_j
        Small D = Si.transpose() * U_[i];                           // line 6: S_jᵀ M̂_j S_j + A^r_j
        for (int k = 0; k < n; ++k) D(k, k) += Ar[vi + k];
        Eigen::LLT<Small> llt(D);
        if (llt.info() != Eigen::Success)
          throw std::runtime_error("redmax-pcg: the preconditioner's pivot at joint '" + m.name[i] +
                                   "' is not positive definite (stiffness too large for the time step?)");
        Psi_[i] = llt.solve(Small::Identity(n, n));                  // Ψ_j
        Pi.noalias() -= U_[i] * Psi_[i] * U_[i].transpose();          // line 7
      }
      const Mat6<S> X = d.Xup[i].matrix();
      Mhat_[m.parent[i]].noalias() += X.transpose() * Pi * X;       // line 5: Σ_c ^cAdᵀ Π_c ^cAd
    }
  }

  // Alg. 4 lines 11-18: y = P⁻¹ x. Bhat, beta: scratch forces (N+1), a: scratch motions (N+1).
  void apply(const Model<S>& m, const Data<S>& d, const S* x, S* y, Force<S>* Bhat, Motion<S>* a) const {
    for (int i = 0; i <= m.N; ++i) Bhat[i] = Force<S>::zero();
    for (int i = m.N; i >= 1; --i) {                                // lines 11-14
      const int n = m.nv_i[i], vi = m.v_index[i];
      Force<S> beta = Bhat[i];                                      // B̂_j = Σ_c ^cAdᵀ β_c
      if (n) {
        Eigen::Matrix<S, Eigen::Dynamic, 1, 0, 6, 1> u(n);
        for (int k = 0; k < n; ++k) u[k] = x[vi + k] - dot(d.Ssub[vi + k], Bhat[i]);
        beta += Force<S>::from(U_[i] * (Psi_[i] * u));              // line 13
      }
      Bhat[m.parent[i]] += d.Xup[i].inv_apply(beta);
    }
    a[0] = Motion<S>::zero();
    for (int i = 1; i <= m.N; ++i) {                                // lines 15-18
      const int n = m.nv_i[i], vi = m.v_index[i];
      a[i] = d.Xup[i].apply(a[m.parent[i]]);                        // ^jAd V̇_p
      if (!n) continue;
      Eigen::Matrix<S, Eigen::Dynamic, 1, 0, 6, 1> u(n);
      const Vec6<S> av = a[i].vec();
      for (int k = 0; k < n; ++k) u[k] = x[vi + k] - U_[i].col(k).dot(av) - dot(d.Ssub[vi + k], Bhat[i]);
      const Eigen::Matrix<S, Eigen::Dynamic, 1, 0, 6, 1> yi = Psi_[i] * u;  // line 16
      for (int k = 0; k < n; ++k) {
        y[vi + k] = yi[k];
        a[i] += d.Ssub[vi + k] * yi[k];                             // line 17
      }
    }
  }

 private:
  std::vector<Mat6<S>> Mhat_;  // M̂_j
  std::vector<Cols> U_;        // M̂_j S_j
  std::vector<Small> Psi_;     // Ψ_j
};

}  // namespace treedyn::redmax
