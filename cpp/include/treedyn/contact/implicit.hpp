// The implicit velocity terms of MuJoCo's integrators, after the constraints are solved on M.
// A step on M gives v_M = v + Δ with M Δ = h (f + Jᵀλ/h) (f the smooth force). MuJoCo's Euler takes the
// joints' damping implicitly and its implicitfast every velocity derivative of the smooth force but
// the bias (Coriolis) one: (M + hK)(v⁺ − v) = h (f + Jᵀλ/h) = M Δ, K = −∂f/∂v, MuJoCo's −qDeriv
// (mjd_smooth_vel without its RNE term, as mj_implicitSkip forms qH = M − h qDeriv), so that
//     v⁺ = v + Δ − (M + hK)⁻¹ h K Δ.
// K's terms: the joints' damping d (diagonal), each damped tendon's d_t T_tᵀ T_t, each actuator's
// kv_r m_rᵀ m_r (kv = −∂f_r/∂l̇_r: model/actuation.hpp, 0 where forcerange clamps the force; m_r its
// row of the moment). Where every actuator and damped tendon moves a single coordinate, K is diagonal
// and (M + hK)⁻¹ is ABA's at q̇ = 0 without gravity on a copy of the model with armature + h K (O(n));
// otherwise M (CRBA) + hK is formed and factored (LDLT: kv may be negative, MuJoCo's too).
#pragma once
#include <vector>

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <Eigen/LU>

#include "treedyn/model/actuation.hpp"

namespace treedyn {

struct VelocityStiffness {
  bool diagonal = true;  // every actuator's and damped tendon's row touches one coordinate
  Eigen::VectorXd kd;    // K's diagonal (diagonal) ...
  Eigen::MatrixXd K, H;  // ... or K and M + hK (dense)
  Eigen::VectorXd hk;    // h K's diagonal, and M + hK on the tree's compact rows (algorithms/ltl.hpp)
  std::vector<double> Hc;
  Eigen::LDLT<Eigen::MatrixXd> ldlt;

  static bool one_coordinate(const Eigen::MatrixXd& rows, int r) { return (rows.row(r).array() != 0).count() <= 1; }

  // whether K is diagonal for these actuators and tendons
  static bool is_diagonal(const Actuation& A) {
    for (int r = 0; r < A.nu; ++r)
      if (!one_coordinate(A.moment_v, r)) return false;
    for (int t = 0; t < int(A.d.size()); ++t)
      if (A.d[t] != 0 && !one_coordinate(A.tendon_v, t)) return false;
    return true;
  }

  // K at the actuators' velocity gains kv (nullptr: none), with the joints' damping d where given and
  // the tendons' where tendons; whether it has any term
  bool assemble(const Actuation& A, const double* kv, const std::vector<double>* d, bool tendons, int nv) {
    bool any = false;
    if (diagonal) {
      kd.setZero(nv);
      if (d)
        for (int k = 0; k < nv; ++k) kd[k] = (*d)[k];
      for (int r = 0; kv && r < A.nu; ++r)
        for (int j = 0; j < nv && kv[r] != 0; ++j) kd[j] += kv[r] * A.moment_v(r, j) * A.moment_v(r, j);
      for (int t = 0; tendons && t < int(A.d.size()); ++t)
        for (int j = 0; j < nv && A.d[t] != 0; ++j) kd[j] += A.d[t] * A.tendon_v(t, j) * A.tendon_v(t, j);
      return (kd.array() != 0).any();
    }
    K.setZero(nv, nv);
    if (d)
      for (int k = 0; k < nv; ++k) K(k, k) = (*d)[k], any = any || (*d)[k] != 0;
    for (int r = 0; kv && r < A.nu; ++r)
      if (kv[r] != 0) K.noalias() += kv[r] * A.moment_v.row(r).transpose() * A.moment_v.row(r), any = true;
    for (int t = 0; tendons && t < int(A.d.size()); ++t)
      if (A.d[t] != 0) K.noalias() += A.d[t] * A.tendon_v.row(t).transpose() * A.tendon_v.row(t), any = true;
    return any;
  }
};

}  // namespace treedyn
