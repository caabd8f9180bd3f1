// Constraint force algorithm (Fijany; yang-wu-pan §III, Alg. 1) for an unbranched chain of
// 1-DoF joints fixed to the world, in link coordinates (spatial [ω; v], ^iX_λ as in aba.hpp).
//
// With the bias removed (τ^δ = τ − c, eq. (7), c by RNEA), the chain's equations are
//   a_i = X_i a_{i-1} + S_i q̈_i          (I − Γ) a = S q̈           eq. (9a), a_0 = 0
//   F_i = J_i a_i + X_{i+1}ᵀ F_{i+1}      (I − Γ)ᵀ F = J a          eq. (9b), F_{N+1} = 0
//   τ^δ_i = S_iᵀ F_i                                                eq. (9c)
// with X_i = ^iX_{i-1}, J_i the rigid inertia of body i and F_i the force joint i transmits. So
// S q̈ = P F, P = (I − Γ) J⁻¹ (I − Γ)ᵀ (eq. (10)), a symmetric block tri-diagonal matrix:
//   P_ii = J_i⁻¹ + X_i J_{i-1}⁻¹ X_iᵀ (P_11 = J_1⁻¹),   P_{i,i+1} = −J_i⁻¹ X_{i+1}ᵀ.
// W_i (6 x 5) spans the constraint forces of joint i (W_iᵀ S_i = 0, S_iᵀ S_i = 1: S_i's axis is a
// unit vector), F = S τ^δ + W F_c (eq. (14)), and
//   A = Wᵀ P W (block tri-diagonal, 5 x 5 blocks), B = Wᵀ P S, C = Sᵀ P S      eq. (15)
//   A F_c = −B τ^δ  by odd–even elimination (linalg/oee.hpp)                  eq. (15), Alg. 1 line 10
//                   followed by iterative refinement (see oee.hpp)
//   q̈ = C τ^δ + Bᵀ F_c                                                         eq. (17), Alg. 1 line 11
// Accuracy. With link masses spanning 1e6, A's eigenvalues span ~1e8 (a light link passes on 4 of
// the 10 force components of its two joints at the scale of its heavy neighbours), and OEE alone
// leaves a componentwise backward error of ~1e-10 in A F_c = −Bτ^δ: q̈ 1e-3 off ABA's. The
// refinement in oee_solve brings that backward error to ~u. A second loss is intrinsic to eq. (17):
// the joint forces F = Sτ^δ + W F_c carry the heavy links' weight, and a light link's acceleration
// is the small difference of the forces at its two joints, so q̈ = Cτ^δ + BᵀF_c cancels ~1e8-fold
// (q̈ still ~1e-9 off). One step of refinement on the equations of motion removes it: the residual
// r = τ − RNEA(q, q̇, q̈) is small, so δq̈ = M⁻¹r by the same blocks (A's elimination reused) is
// accurate relative to r. Cost: one RNEA and one OEE substitution; q̈ then agrees with ABA to
// ~1e-13 on such chains. What the refinements reach is returned (the larger of ω and ρ, see
// refinement_indicator) so that the caller can warn when it stayed large (oee_backward_error_limit):
// in float32 on such chains the first solution is meaningless and the warning is all one gets.
// The blocks of A, B, C need only J_i⁻¹ (constant in body coordinates), X_i and S_i: every joint's
// blocks are computed independently, spread over the OpenMP threads (Alg. 1 lines 3-8).
#pragma once
#include <Eigen/Cholesky>
#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>
#include <string>
#include <vector>

#include "treedyn/algorithms/rnea.hpp"
#include "treedyn/linalg/oee.hpp"
#include "treedyn/support/parallel.hpp"  // parallel_range

namespace treedyn {

// the chains CFA handles: parent[i] = i − 1, one velocity coordinate per joint (empty if so)
template <class S> std::string cfa_unsupported(const Model<S>& model) {
  for (int i = 1; i <= model.N; ++i) {
    if (model.parent[i] != i - 1) return "the model is not an unbranched chain (body '" + model.name[i] + "')";
    if (model.nv_i[i] != 1) return "joint of body '" + model.name[i] + "' does not have exactly 1 degree of freedom";
  }
  // (the armature would join τ^δ_i = S_iᵀF_i + armature_i q̈_i, outside eq. (10)'s P)
  if (model.has_armature) return "the model has armature (rotor inertia), which CFA's equations do not take; use aba";
  return {};
}

// per-instance workspace: constants of the model (J_i⁻¹, W_i, S_i) and the blocks of A, B, C
template <class S> struct CfaData {
  using Mat65 = Eigen::Matrix<S, 6, 5>;
  using Vec5 = Eigen::Matrix<S, 5, 1>;
  using Mat5R = Eigen::Matrix<S, 5, 5, Eigen::RowMajor>;
  int n = 0;                     // joints (= bodies = nv)
  std::vector<Mat6<S>> Jinv;     // N+1: J_i⁻¹ in body coordinates (constant)
  std::vector<Vec6<S>> Sv;       // N+1: S_i, a unit vector (constant for 1-DoF joints)
  std::vector<Mat65> W;          // N+1: W_i, orthonormal basis of S_i's complement
  std::vector<Mat5R> Ad, Au;     // n, n−1: A_ii and A_{i,i+1} (row-major, as oee wants)
  std::vector<Vec5> Bd, Bu, Bl;  // B_ii, B_{i,i+1}, B_{i+1,i}
  std::vector<S> Cd, Cu;         // C_ii, C_{i,i+1}
  std::vector<Vec5> Rc, Fc;      // −B τ^δ and F_c, one 5-block per joint
  Eigen::Matrix<S, Eigen::Dynamic, 1> tau_delta;
  OeeWorkspace<S, 5> oee;   // A's elimination, for 1 (q̈) or m (M⁻¹R) right-hand sides
  std::vector<S> Rm, Fm;    // M⁻¹R: −B R and F_c for m columns (n blocks of 5 x m)
  std::vector<S> Rres, dY;  // M⁻¹R: the residual R − M Y and the correction (nv x m, column-major)

  static_assert(sizeof(Mat5R) == 25 * sizeof(S) && sizeof(Vec5) == 5 * sizeof(S),
                "oee_solve reads the blocks as one flat array");

  explicit CfaData(const Model<S>& model)
      : n(model.N),
        Jinv(model.N + 1, Mat6<S>::Zero()),
        Sv(model.N + 1, Vec6<S>::Zero()),
        W(model.N + 1, Mat65::Zero()),
        Ad(model.N + 1),
        Au(model.N + 1),
        Bd(model.N + 1),
        Bu(model.N + 1),
        Bl(model.N + 1),
        Cd(model.N + 1),
        Cu(model.N + 1),
        Rc(model.N + 1),
        Fc(model.N + 1),
        tau_delta(model.nv),
        oee(model.N, 5, 1) {
    const std::string why = cfa_unsupported(model);
    if (!why.empty()) throw std::invalid_argument("cfa: " + why);
    std::vector<S> q0(model.nq, S(0));
    for (int i = 1; i <= model.N; ++i) {
      const Mat6<S> J = model.I[i].matrix();
      Eigen::LLT<Mat6<S>> llt(J);
      if (llt.info() != Eigen::Success)
        throw SingularJoint("cfa: body '" + model.name[i] + "' has a singular spatial inertia (CFA needs J_i⁻¹)");
      Jinv[i] = llt.solve(Mat6<S>::Identity());
      Motion<S> s;
      joint_subspace(model, i, q0.data() + model.q_index[i], &s);
      Sv[i] = s.vec();
      Sv[i] /= Sv[i].norm();
      // W_i: the last 5 columns of the Householder reflector H = 1 − 2vvᵀ/vᵀv, v = S_i ± e_1 (the
      // sign of S_i's first entry: no cancellation, vᵀv ≥ 2), which maps S_i to ∓e_1. H is
      // orthogonal and symmetric, so its first column is ∓S_i and the other five span S_i's complement
      Vec6<S> v = Sv[i];
      v[0] += v[0] >= S(0) ? S(1) : S(-1);
      const Mat6<S> H = Mat6<S>::Identity() - (S(2) / v.squaredNorm()) * (v * v.transpose());
      W[i] = H.template rightCols<5>();
    }
  }
};

// Alg. 1 lines 1-2: τ^δ = τ − c(q, q̇) − Σ Jᵀ f_ext by RNEA with q̈ = 0 (also leaves ^iX_λ in data)
template <class S>
void cfa_bias(const Model<S>& model, Data<S>& data, CfaData<S>& w, const S* q, const S* qd, const S* tau,
              const S* fext) {
  rnea(model, data, q, qd, static_cast<const S*>(nullptr), fext, data.bias.data());
  for (int k = 0; k < model.nv; ++k) w.tau_delta[k] = tau[k] - data.bias[k];
}

// Alg. 1 lines 4-6 for joint i: the blocks of P (eq. (10)), then of A, B, C (eq. (15))
template <class S> void cfa_blocks_step(const Model<S>& model, const Data<S>& data, CfaData<S>& w, int i) {
  const int N = model.N;
  // P_ii = J_i⁻¹ + X_i J_{i-1}⁻¹ X_iᵀ;  P_{i,i+1} = −J_i⁻¹ X_{i+1}ᵀ
  Mat6<S> Pii = w.Jinv[i];
  if (i > 1) {
    const Mat6<S> Xi = data.Xup[i].matrix();
    Pii.noalias() += Xi * w.Jinv[i - 1] * Xi.transpose();
  }
  const auto& Wi = w.W[i];
  const Vec6<S>& Si = w.Sv[i];
  const Eigen::Matrix<S, 6, 5> PWi = Pii * Wi;
  const Vec6<S> PSi = Pii * Si;
  w.Ad[i].noalias() = Wi.transpose() * PWi;  // A_ii = W_iᵀ P_ii W_i
  w.Bd[i].noalias() = Wi.transpose() * PSi;  // B_ii = W_iᵀ P_ii S_i
  w.Cd[i] = Si.dot(PSi);                     // C_ii = S_iᵀ P_ii S_i
  if (i < N) {
    const Mat6<S> Piu = -w.Jinv[i] * data.Xup[i + 1].matrix().transpose();
    const auto& Wn = w.W[i + 1];
    const Vec6<S>& Sn = w.Sv[i + 1];
    w.Au[i].noalias() = Wi.transpose() * Piu * Wn;                // A_{i,i+1} = W_iᵀ P_{i,i+1} W_{i+1}
    w.Bu[i].noalias() = Wi.transpose() * (Piu * Sn);              // B_{i,i+1} = W_iᵀ P_{i,i+1} S_{i+1}
    w.Bl[i].noalias() = Wn.transpose() * (Piu.transpose() * Si);  // B_{i+1,i} = W_{i+1}ᵀ P_{i+1,i} S_i
    w.Cu[i] = Si.dot(Piu * Sn);                                   // C_{i,i+1} = S_iᵀ P_{i,i+1} S_{i+1}
  }
}

// Alg. 1 line 7 for joint i: R_i = −(B τ^δ)_i = −(B_{i,i-1} τ_{i-1} + B_ii τ_i + B_{i,i+1} τ_{i+1})
template <class S> void cfa_rhs_step(const Model<S>& model, CfaData<S>& w, int i) {
  const auto& t = w.tau_delta;  // joint i's coordinate is i − 1
  typename CfaData<S>::Vec5 r = w.Bd[i] * t[i - 1];
  if (i > 1) r += w.Bl[i - 1] * t[i - 2];
  if (i < model.N) r += w.Bu[i] * t[i];
  w.Rc[i] = -r;
}

// Alg. 1 line 11 for joint i: q̈_i = (C τ^δ)_i + (Bᵀ F_c)_i  (eq. (17))
template <class S> S cfa_acceleration_step(const Model<S>& model, const CfaData<S>& w, int i) {
  const auto& t = w.tau_delta;
  S a = w.Cd[i] * t[i - 1] + w.Bd[i].dot(w.Fc[i]);
  if (i > 1) a += w.Cu[i - 1] * t[i - 2] + w.Bu[i - 1].dot(w.Fc[i - 1]);
  if (i < model.N) a += w.Cu[i] * t[i] + w.Bl[i].dot(w.Fc[i + 1]);
  return a;
}

// Whether the refinement step on the equations of motion can have worked: its correction δ is the
// error of the first solution, and the step contracts errors only when that solution was accurate
// to a fraction of itself (Higham §12.1: the iteration converges when the solver's relative error
// is < 1). ρ = ‖δ‖∞ / ‖x‖∞ ≥ 1/8 is reported as is (far above any limit: the first solution was
// meaningless, as in float32 on masses spanning 1e6); a smaller ρ as 0 (converging; a step leaves
// about ρ times the solver's own relative error, and the measured ρ overstates that error
// because it includes the cancellation the step removes).
template <class S> S refinement_indicator(S dmax, S xmax) {
  if (dmax == S(0)) return S(0);
  const S rho = xmax > S(0) ? dmax / xmax : std::numeric_limits<S>::infinity();
  return rho >= S(0.125) ? rho : S(0);
}

// inputs: q (nq), qd (nv), tau (nv), fext ((N+1) x 6 or null); output: qdd (nv).
// Returns the refinement's error indicator: the larger of ω, the componentwise backward error of the
// refined constraint-force solve, and refinement_indicator's ρ; about u when both converged.
template <class S>
TREEDYN_ENTRY S cfa(const Model<S>& model, Data<S>& data, CfaData<S>& w, const S* q, const S* qd, const S* tau,
                    const S* fext, S* qdd) {
  const int N = model.N;
  if (N == 0) return S(0);
  cfa_bias(model, data, w, q, qd, tau, fext);
  // lines 3-8: A, B, C and −B τ^δ, joint by joint in parallel
  parallel_range(1, N + 1, 64, [&](int i) { cfa_blocks_step(model, data, w, i); });
  parallel_range(1, N + 1, 64, [&](int i) { cfa_rhs_step(model, w, i); });
  // line 10: A F_c = −B τ^δ by odd–even elimination (Alg. 2) and refinement; blocks 1..N are stored from index 1
  S omega;
  try {
    omega = oee_solve<S, 5>(w.oee, N, 5, 1, w.Ad[1].data(), w.Au[1].data(), w.Rc[1].data(), w.Fc[1].data());
  } catch (const NotPositiveDefinite& e) {
    throw SingularJoint(std::string("cfa: the constraint-force system is singular: ") + e.what());
  }
  // line 11: q̈ = C τ^δ + Bᵀ F_c
  parallel_range(1, N + 1, 64, [&](int i) { qdd[i - 1] = cfa_acceleration_step(model, w, i); });
  // one step of refinement on the equations of motion (see the top): r = τ − RNEA(q, q̇, q̈) =
  // τ^δ − M q̈, then δq̈ = (C − BᵀA⁻¹B) r by the same blocks and A's kept elimination, q̈ += δq̈
  rnea(model, data, q, qd, qdd, fext, data.bias.data());
  for (int k = 0; k < model.nv; ++k) w.tau_delta[k] = tau[k] - data.bias[k];
  parallel_range(1, N + 1, 64, [&](int i) { cfa_rhs_step(model, w, i); });
  // (the correction's own ω is not reported: its right-hand side is the rounding-level residual, and
  // what the correction achieves is judged by ρ below)
  oee_solve_factorised<S, 5>(w.oee, 1, w.Ad[1].data(), w.Au[1].data(), w.Rc[1].data(), w.Fc[1].data());
  // the largest |δq̈| and |q̈|, per thread and then over the threads (max: the same for any split)
  S dmax = 0, qmax = 0;
  std::mutex reduce;
  parallel_chunks(1, N + 1, 64, [&](std::ptrdiff_t i0, std::ptrdiff_t i1, int) {
    S d_part = 0, q_part = 0;
    for (std::ptrdiff_t i = i0; i < i1; ++i) {
      const S d = cfa_acceleration_step(model, w, int(i));
      qdd[i - 1] += d;
      d_part = std::max(d_part, std::abs(d));
      q_part = std::max(q_part, std::abs(qdd[i - 1]));
    }
    std::lock_guard<std::mutex> lk(reduce);
    dmax = std::max(dmax, d_part), qmax = std::max(qmax, q_part);
  });
  return std::max(omega, refinement_indicator(dmax, qmax));
}

// M y for one column y (nv) by eqs. (9a)-(9c) with q̇ = 0 and no gravity: a_i = X_i a_{i-1} + S_i y_i,
// F_i = J_i a_i + X_{i+1}ᵀ F_{i+1}, (M y)_i = S_iᵀ F_i (the residual of inverse_inertia's refinement;
// needs ^iX_λ and S_i in data)
template <class S> void cfa_mass_times(const Model<S>& model, Data<S>& data, const S* y, S* My) {
  const int N = model.N;
  for (int i = 1; i <= N; ++i) {
    const Motion<S> sy = subspace_times<S>(data.S.data() + (i - 1), 1, y + i - 1);
    data.a[i] = i > 1 ? data.Xup[i].apply(data.a[i - 1]) + sy : sy;
    data.f[i] = model.I[i] * data.a[i];
  }
  for (int i = N; i >= 1; --i) {
    My[i - 1] = dot(data.S[i - 1], data.f[i]);
    if (i > 1) data.f[i - 1] += data.Xup[i].inv_apply(data.f[i]);
  }
}

// Y (+)= (C − BᵀA⁻¹B) R for the m columns of R (nv x m, column-major), A already eliminated in w.oee:
// −B R block row by block row, A F_c = −B R by the kept elimination and refinement, then C R + Bᵀ F_c.
// Returns ω of the constraint-force solve.
template <class S>
S cfa_apply_inverse_inertia(const Model<S>& model, CfaData<S>& w, const S* R, int m, S* Y, bool accumulate) {
  const int N = model.N;
  using Blk = Eigen::Map<Eigen::Matrix<S, 5, Eigen::Dynamic, Eigen::RowMajor>>;
  const Eigen::Map<const Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic>> Rmat(R, N, m);
  // −B R, block row i (5 x m)
  parallel_range(1, N + 1, 64, [&](int i) {
    Blk r(&w.Rm[size_t(i - 1) * 5 * m], 5, m);
    r.noalias() = -w.Bd[i] * Rmat.row(i - 1);
    if (i > 1) r.noalias() -= w.Bl[i - 1] * Rmat.row(i - 2);
    if (i < N) r.noalias() -= w.Bu[i] * Rmat.row(i);
  });
  const S omega = oee_solve_factorised<S, 5>(w.oee, m, w.Ad[1].data(), w.Au[1].data(), w.Rm.data(), w.Fm.data());
  // Y (+)= C R + Bᵀ F_c, row i − 1
  Eigen::Map<Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic>> Ymat(Y, N, m);
  parallel_range(1, N + 1, 64, [&](int i) {
    auto y = Ymat.row(i - 1);
    if (!accumulate) y.setZero();
    y.noalias() += w.Cd[i] * Rmat.row(i - 1) + w.Bd[i].transpose() * Blk(&w.Fm[size_t(i - 1) * 5 * m], 5, m);
    if (i > 1)
      y.noalias() += w.Cu[i - 1] * Rmat.row(i - 2) + w.Bu[i - 1].transpose() * Blk(&w.Fm[size_t(i - 2) * 5 * m], 5, m);
    if (i < N) y.noalias() += w.Cu[i] * Rmat.row(i) + w.Bl[i].transpose() * Blk(&w.Fm[size_t(i) * 5 * m], 5, m);
  });
  return omega;
}

// M(q)⁻¹ R = (C − BᵀA⁻¹B) R (eq. (17)) for the m columns of R (nv x m, column-major) into Y:
// the blocks of A, B, C at q, A's elimination, Y = (C − BᵀA⁻¹B) R with all columns through one
// OEE substitution; then, as in cfa(), one step of refinement: R_res = R − M Y column by column
// (cfa_mass_times, O(n) each), Y += (C − BᵀA⁻¹B) R_res. Returns the error indicator as cfa does
// (the worst over the columns).
template <class S>
TREEDYN_ENTRY S cfa_inverse_inertia(const Model<S>& model, Data<S>& data, CfaData<S>& w, const S* q, const S* R, int m,
                                    S* Y) {
  const int N = model.N;
  if (N == 0 || m == 0) return S(0);
  kinematics(model, data, q);
  parallel_range(1, N + 1, 64, [&](int i) { cfa_blocks_step(model, data, w, i); });
  const size_t len = size_t(N) * m;
  if (w.Rm.size() < 5 * len) w.Rm.resize(5 * len), w.Fm.resize(5 * len);
  if (w.Rres.size() < len) w.Rres.resize(len), w.dY.resize(len);
  if (w.oee.n != N || w.oee.m != m) w.oee.resize(N, 5, m);
  S omega;
  try {
    oee_factorise(w.oee, w.Ad[1].data(), w.Au[1].data());
    omega = cfa_apply_inverse_inertia(model, w, R, m, Y, false);
    for (int c = 0; c < m; ++c) {  // R_res = R − M Y
      S* rc = &w.Rres[size_t(c) * N];
      cfa_mass_times(model, data, Y + size_t(c) * N, rc);
      for (int k = 0; k < N; ++k) rc[k] = R[size_t(c) * N + k] - rc[k];
    }
    cfa_apply_inverse_inertia(model, w, w.Rres.data(), m, w.dY.data(), false);  // its ω: as in cfa()
    S dmax = 0, ymax = 0;
    for (size_t e = 0; e < len; ++e) {
      Y[e] += w.dY[e];
      dmax = std::max(dmax, std::abs(w.dY[e]));
      ymax = std::max(ymax, std::abs(Y[e]));
    }
    omega = std::max(omega, refinement_indicator(dmax, ymax));
  } catch (const NotPositiveDefinite& e) {
    throw SingularJoint(std::string("cfa: the constraint-force system is singular: ") + e.what());
  }
  return omega;
}

}  // namespace treedyn
