// The linearly implicit RedMax step (baxter2019 eq. (2.13)–(2.15), (2.42)), independent of how
// M̃_r is solved: the direct solver (direct.hpp) and PCG (pcg.hpp) plug in as `Solve`.
//   M̃_r = Jᵀ(M_m + hD_m − h²K_m)J + hD_r − h²K_r                                  eq. (2.14)
//   f̃_r = Jᵀ(M_m(φ − hJ̇q̇) + h f_m) + h f_r,   φ = J q̇                           eq. (2.15)
//   G M̃⁻¹Gᵀ λ = G M̃⁻¹ f̃ + β C(q),   q̇⁺ = M̃⁻¹(f̃ − Gᵀλ)                       eq. (2.42)
// (β: Baumgarte factor, so that G q̇⁺ = −β C), then q ← q ⊕ h q̇⁺.
#pragma once
#include <Eigen/Eigenvalues>
#include <chrono>

#include "treedyn/redmax/constraints.hpp"

namespace treedyn::redmax {

template <class S> struct StepStats {
  S position_residual = 0;  // max |C(q⁺)| of the loop closures after the step
  S velocity_residual = 0;  // max |G q̇⁺| (at the step's q), after the Baumgarte target is removed
  int rows = 0, rank = 0;   // constraint rows, and the rank of G M̃⁻¹ Gᵀ
  int solves = 0;           // right-hand sides solved with M̃_r
  long iterations = 0;      // PCG iterations over all solves (0 for direct)
  int max_iterations = 0;   // PCG iterations of the longest solve
  int unconverged = 0;      // PCG solves stopped by the iteration cap
  double seconds = 0;
};

// What the constraint rows need (constraint_rows, position_residual): the kinematics, the rows
// and Gᵀ — all that treedyn.constraints asks of a system at each evaluation
template <class S> struct ConstraintWorkspace {
  using MatX = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic>;
  Data<S> d;
  std::vector<LoopRow<S>> rows;
  MatX Gt;  // nv x l: Gᵀ (a column per row of G)

  explicit ConstraintWorkspace(const System<S>& sys)
      : d(sys.tree), rows(sys.n_loop_rows()), Gt(MatX::Zero(sys.tree.nv, sys.n_loop_rows())) {}
};

// ... and what the step needs besides
template <class S> struct Workspace : ConstraintWorkspace<S> {
  using VecX = Eigen::Matrix<S, Eigen::Dynamic, 1>;
  using MatX = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic>;
  std::vector<Mat6<S>> A, C;    // eq. (2.14)'s maximal blocks: per body, per spring (coupling)
  std::vector<Force<S>> fm, w;  // f_m; a scratch body-force vector
  VecX fr, rhs, v;
  MatX Y;  // nv x l: M̃⁻¹Gᵀ

  explicit Workspace(const System<S>& sys)
      : ConstraintWorkspace<S>(sys),
        A(sys.tree.N + 1, Mat6<S>::Zero()),
        C(sys.springs.size(), Mat6<S>::Zero()),
        fm(sys.tree.N + 1, Force<S>::zero()),
        w(sys.tree.N + 1, Force<S>::zero()),
        fr(VecX::Zero(sys.tree.nv)),
        rhs(VecX::Zero(sys.tree.nv)),
        v(VecX::Zero(sys.tree.nv)),
        Y(MatX::Zero(sys.tree.nv, sys.n_loop_rows())) {}
};

// Everything of eq. (2.13) but the solve: kinematics at (q, q̇), f_m, f_r, the blocks A, C, f̃_r.
template <class S> void implicit_terms(const System<S>& sys, Workspace<S>& ws, const S* q, const S* qd, S t, S h) {
  const Model<S>& m = sys.tree;
  kinematics(m, ws.d, q, qd);
  maximal_forces(sys, ws.d, t, false, ws.fm.data());
  joint_spring_forces(sys, q, ws.fr.data());
  implicit_blocks(sys, ws.d, t, h, ws.A.data());
  spring_terms_all(sys, ws.d, h, false, ws.fm.data(), ws.A.data(), ws.C.data());
  // eq. (2.15): the body forces M_m(φ − hJ̇q̇) + h f_m, then Jᵀ
  for (int i = 0; i <= m.N; ++i) ws.w[i] = m.I[i] * (ws.d.phi[i] - ws.d.Jdqd[i] * h) + ws.fm[i] * h;
  JT_times(m, ws.d, ws.w.data(), ws.rhs.data(), ws.d.alpha.data());
  ws.rhs += h * ws.fr;
}

// The unconstrained continuous dynamics of the system — springs, dampers and forces explicit,
// loop closures left out — as M_r q̈ = x with x = τ + f_r − D_r q̇ + Jᵀ(f_m − D_m φ − M_m J̇ q̇);
// sets the blocks for h = 0 (A_i = M_i) so that the caller's M̃_r is M_r.
template <class S>
void explicit_terms(const System<S>& sys, Workspace<S>& ws, const S* q, const S* qd, const S* tau, S t, S* x) {
  const Model<S>& m = sys.tree;
  kinematics(m, ws.d, q, qd);
  maximal_forces(sys, ws.d, t, true, ws.fm.data());
  joint_spring_forces(sys, q, ws.fr.data());
  implicit_blocks(sys, ws.d, t, S(0), ws.A.data());
  spring_terms_all(sys, ws.d, S(0), true, ws.fm.data(), ws.A.data(), ws.C.data());
  for (int i = 0; i <= m.N; ++i) ws.w[i] = ws.fm[i] - m.I[i] * ws.d.Jdqd[i];
  JT_times(m, ws.d, ws.w.data(), x, ws.d.alpha.data());
  for (int k = 0; k < m.nv; ++k) x[k] += tau[k] + ws.fr[k] - m.damping[k] * qd[k];
}

// The constraint rows at the current poses and rates (C, Ġq̇) in `ws.rows`, loop closures first, then
// the couplings; with `jacobian`, Gᵀ (nv x l) too, a loop row's column through Jᵀ.
template <class S> void constraint_rows(const System<S>& sys, ConstraintWorkspace<S>& ws, bool jacobian = true) {
  const Model<S>& m = sys.tree;
  int r = 0;
  for (const auto& c : sys.loops) {
    loop_closure_rows(c, ws.d, &ws.rows[r]);
    for (int k = 0; k < loop_rows(c.kind) && jacobian; ++k) {  // Jᵀ of the row's two wrenches (Alg. 3)
      auto g = ws.Gt.col(r + k);
      g.setZero();
      JT_path(m, ws.d, c.a, ws.rows[r + k].wa, g.data());
      JT_path(m, ws.d, c.b, ws.rows[r + k].wb, g.data());
    }
    r += loop_rows(c.kind);
  }
  for (const auto& c : sys.couplings) {
    const S dp = coupling_row(c, ws.d, ws.rows[r]);
    if (jacobian) {
      auto g = ws.Gt.col(r);
      g.setZero();
      for (size_t k = 0; k < c.v1.size(); ++k) g[c.v1[k]] += c.c1[k];
      for (size_t k = 0; k < c.v2.size(); ++k) g[c.v2[k]] -= dp * c.c2[k];
    }
    ++r;
  }
}

// β of G q̇⁺ = −β C: the system's Baumgarte factor, 1/h when it is negative
template <class S> S baumgarte_factor(const System<S>& sys, S h) {
  return sys.baumgarte < S(0) ? S(1) / h : sys.baumgarte;
}

// dual_solve's part that does not depend on the solver: with Y = M̃⁻¹Gᵀ and v = M̃⁻¹f̃ in ws,
// λ = (G M̃⁻¹Gᵀ)⁺ (G v + β C) through the eigen-decomposition of G Y (symmetrised), eigenvalues
// below 1e-10 of the largest dropped; then v ← v − Yλ and the returned f = f̃ − Gᵀλ (whose solve,
// by the caller, is q̇⁺). Sets st.rank.
template <class S>
Eigen::Matrix<S, Eigen::Dynamic, 1> dual_multipliers(const System<S>& sys, Workspace<S>& ws, S h, StepStats<S>& st) {
  using MatX = typename Workspace<S>::MatX;
  using VecX = typename Workspace<S>::VecX;
  const int l = static_cast<int>(ws.rows.size());
  const MatX GY = ws.Gt.transpose() * ws.Y;
  const S beta = baumgarte_factor(sys, h);
  VecX b = ws.Gt.transpose() * ws.v;
  for (int r = 0; r < l; ++r) b[r] += beta * ws.rows[r].C;
  Eigen::SelfAdjointEigenSolver<MatX> eig(S(0.5) * (GY + GY.transpose()));
  const VecX& ev = eig.eigenvalues();
  const S tol = ev.cwiseAbs().maxCoeff() * S(1e-10);
  VecX c = eig.eigenvectors().transpose() * b;
  int rank = 0;
  for (int k = 0; k < l; ++k)
    if (ev[k] > tol) {
      c[k] /= ev[k];
      ++rank;
    } else
      c[k] = S(0);
  st.rank = rank;
  const VecX lambda = eig.eigenvectors() * c;
  ws.v -= ws.Y * lambda;
  return ws.rhs - ws.Gt * lambda;
}

// max |G q̇⁺ + β C| for q̇⁺ in ws.v
template <class S> S velocity_residual(const System<S>& sys, Workspace<S>& ws, S h) {
  const S beta = baumgarte_factor(sys, h);
  Eigen::Matrix<S, Eigen::Dynamic, 1> res = ws.Gt.transpose() * ws.v;
  for (int r = 0; r < res.size(); ++r) res[r] += beta * ws.rows[r].C;
  return res.cwiseAbs().maxCoeff();
}

// eq. (2.42) after f̃ and the factorisation: the l + 2 solves of §3.4 —
//   v₀ = M̃⁻¹ f̃,  Y = M̃⁻¹ Gᵀ (l independent columns),  (G Y) λ = G v₀ + β C,
//   q̇⁺ = M̃⁻¹ (f̃ − Gᵀλ)  (started from v₀ − Yλ, which it equals in exact arithmetic).
// G M̃⁻¹ Gᵀ is symmetric positive semi-definite; rows that are zero or dependent (a planar
// mechanism closed by a spatial joint) give zero eigenvalues, which are dropped: λ is the
// minimum-norm solution, and Gᵀλ — all the step needs — is unique.
// `solve(B, X)` overwrites X (holding a starting guess) with M̃⁻¹B and returns its iterations.
template <class S, class Solve>
void dual_solve(const System<S>& sys, Workspace<S>& ws, const S* qd, S h, Solve&& solve, StepStats<S>& st) {
  using VecX = typename Workspace<S>::VecX;
  ws.v = Eigen::Map<const VecX>(qd, sys.tree.nv);  // warm start: the previous velocity
  st.iterations += solve(ws.rhs, ws.v);
  st.solves += 1;
  const int l = static_cast<int>(ws.rows.size());
  st.rows = l;
  if (l == 0) return;
  constraint_rows(sys, ws);
  st.iterations += solve(ws.Gt, ws.Y);  // warm start: last step's columns
  st.solves += l;
  const VecX f = dual_multipliers(sys, ws, h, st);
  st.iterations += solve(f, ws.v);
  st.solves += 1;
  st.velocity_residual = velocity_residual(sys, ws, h);
}

// the constraints' position error max |C(q)| at configuration q (recomputes the kinematics)
template <class S> S position_residual(const System<S>& sys, ConstraintWorkspace<S>& ws, const S* q, const S* qd) {
  if (ws.rows.empty()) return S(0);
  kinematics(sys.tree, ws.d, q, qd);
  constraint_rows(sys, ws, false);
  S r = S(0);
  for (const auto& row : ws.rows) r = std::max(r, std::abs(row.C));
  return r;
}

// One step: (q, q̇, t) -> (qout, qdout). `prepare(h)` builds and factors M̃_r from the workspace's
// blocks, `solve(B, X)` sets X = M̃_r⁻¹ B (X holds a starting guess) and returns its iterations.
template <class S, class Prepare, class Solve>
StepStats<S> step(const System<S>& sys, Workspace<S>& ws, const S* q, const S* qd, S t, S h, Prepare&& prepare,
                  Solve&& solve, S* qout, S* qdout) {
  const auto t0 = std::chrono::steady_clock::now();
  StepStats<S> st;
  implicit_terms(sys, ws, q, qd, t, h);
  prepare(h);
  dual_solve(sys, ws, qd, h, solve, st);
  for (int k = 0; k < sys.tree.nv; ++k) qdout[k] = ws.v[k];
  integrate(sys.tree, q, qdout, h, qout);
  st.position_residual = position_residual(sys, ws, qout, qdout);
  st.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return st;
}

// Inside treedyn's own build, the pieces of the step that do not depend on the solver are
// instantiated once, in cpp/src/instantiate_redmax.cpp, rather than in each unit that includes this
// header (both solvers' and the bindings': ~8 s of CPU each). A plugin gets them from the header.
#ifdef TREEDYN_BUILDING_CORE
extern template void implicit_terms<double>(const System<double>&, Workspace<double>&, const double*, const double*,
                                            double, double);
extern template void explicit_terms<double>(const System<double>&, Workspace<double>&, const double*, const double*,
                                            const double*, double, double*);
extern template void constraint_rows<double>(const System<double>&, ConstraintWorkspace<double>&, bool);
extern template double position_residual<double>(const System<double>&, ConstraintWorkspace<double>&, const double*,
                                                 const double*);
extern template Eigen::VectorXd dual_multipliers<double>(const System<double>&, Workspace<double>&, double,
                                                         StepStats<double>&);
extern template double velocity_residual<double>(const System<double>&, Workspace<double>&, double);
#endif

}  // namespace treedyn::redmax
