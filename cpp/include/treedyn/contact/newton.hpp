// MuJoCo's soft constraint problem solved in its primal form by Newton's method with an exact line
// search (Todorov 2014, "Convex and analytically-invertible dynamics with contacts and constraints",
// §IV; MuJoCo's documentation, "Computation: Solver: Newton"), dense: the step's second contact solver
// beside ADMM (contact/admm.hpp), for the soft problem of a small tree.
//
// In impulse units (λ = h f, the free motion v* = v + h q̈, the rows' targets b, regularisers R > 0)
// the dual problem that ADMM solves, min ½λᵀ(J M⁻¹Jᵀ + R)λ + λᵀ(J v* − b) over λ ≥ 0 row by row
// (a pyramid's edges, a frictionless normal, a limit), is the dual of
//   min_x  c(x) = ½ (x − v*)ᵀ M (x − v*) + Σ_k ½ min(0, J_k x − b_k)² / R_k           (1)
// over the velocity after the step x = v⁺, with λ_k = max(0, −(J_k x − b_k)/R_k) (eq. 1's
// stationarity M(x − v*) = Jᵀλ). Two more kinds of row, MuJoCo's: an equality's (a soft connect, weld,
// joint or tendon equality: λ free) is always active, its term ½ r_k² / R_k, λ_k = −r_k/R_k; a dry
// friction's (|λ| ≤ F_k) is quadratic while |r_k| < R_k F_k and linear beyond, F_k |r_k| − ½ R_k F_k²
// (MuJoCo's Huber cost of frictionloss), λ_k = −clamp(r_k/R_k, −F_k, F_k), r = J x − b. c is convex
// and piecewise quadratic, its pieces the sets of active rows J_k x < b_k:
//   gradient   ∇c = M (x − v*) + Jᵀ (a ∘ r / R),  r = J x − b, a_k = [r_k < 0]                (2)
//   Hessian    H  = M + Jᵀ diag(a / R) J                                                     (3)
//   step       p  = −H⁻¹ ∇c, x ← x + α p, α the exact minimiser of c(x + α p):               (4)
//              c' along p is continuous, piecewise linear and increasing; its breakpoints are
//              the rows' zeros α_k = −r_k/s_k (s = J p), swept in order until c' = 0.
// On a piece Newton's step is exact: the iteration stops when the active set no longer changes
// (the gradient vanishes to rounding) or by MuJoCo's tests, the gradient, the cost's improvement or
// the Newton decrement below tolerance on its scale 1/(mean inertia · max(1, nv)), in acceleration units.
// Elliptic cones and hard (R = 0) rows are ADMM's (step.hpp chooses).
#pragma once
#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include <Eigen/Cholesky>
#include <Eigen/Core>

#include "treedyn/algorithms/ltl.hpp"

namespace treedyn {

struct NewtonSettings {
  double tolerance = 1e-8;  // MuJoCo's: the scaled gradient and improvement (acceleration units)
  int max_iterations = 100;
};

struct NewtonResult {
  int iterations = 0;
  bool converged = false;
  double gradient = 0, improvement = 0;  // the last scaled gradient norm and cost improvement
};

// one world's dense workspace, sized at first use (no allocation once sizes are reached)
struct NewtonWorkspace {
  ReservedMatrix J, A;               // the rows in use (n × nv), JᵀD^½ (storage kept as n shrinks: linalg/reserved.hpp)
  Eigen::MatrixXd H;                 // the Hessian (its lower triangle)
  Eigen::VectorXd x, grad;           // the iterate, the gradient
  ReservedVector r, s, Rinv, b, rw;  // per row in use: J x − b, J p, 1/R, b; the warm start's J x − b
  Eigen::VectorXd p, Mp, dx, Mdx, xw, dxw, Mdxw;
  Eigen::LLT<Eigen::MatrixXd> llt;
  std::vector<int> rows;  // the problem's row of each row in use
  // the tree's sparsity (newton_on_tree): λ over coordinates and each row's deepest coordinate; a
  // row's non-zeros lie on the chain top, λ(top), λ(λ(top)), ... (its bodies' ancestors), held compact:
  // row r's at Jc[jadr[r] + p] for the chain's p-th coordinate (algorithms/ltl.hpp's ChainRows), M and H
  // on the same rows (Mc, Hc)
  bool tree = false, fresh = false;  // fresh: Hu is to be built from M (a new problem)
  bool factored = false;             // Hc is the factor of the H of in_H's rows (an update may start from it)
  std::vector<int> lambda, top, jadr;
  // rows off the chains (a contact between two branches, an equality across them): dense rows X (their
  // index in cross, −1 for a row on its chain; top −1), kept out of H's tree factor and brought in by
  // Woodbury's identity, H⁻¹ = Hₜ⁻¹ − Y C⁻¹ Yᵀ, U = the active ones' √(1/R) Jᵀ, Y = Hₜ⁻¹U, C = I + UᵀY
  std::vector<int> cross;
  ReservedMatrix X, U, Y, C;  // (C: its Cholesky factor in the lower triangle)
  ReservedVector t;
  ChainRows chain;
  std::vector<double> Jc, Mc, Hc, Hu, xu;     // (xu: a row's scaled J for the factor's update)
  std::vector<char> in_H;                     // the rows whose terms Hu holds
  std::vector<std::pair<double, int>> event;  // the line search's breakpoints
  std::vector<char> active, next;
  std::vector<char> kind;     // per row in use: kUnilateral, kFree (an equality's) or kBox (a friction's)
  std::vector<double> bound;  // a kBox row's F
};

enum NewtonRow : char { kUnilateral = 0, kFree = 1, kBox = 2 };

// whether row k's term is quadratic at r (a kBox row beyond its band is linear: no curvature)
inline bool newton_quadratic(const NewtonWorkspace& w, int k, double r) {
  switch (w.kind[k]) {
    case kFree:
      return true;
    case kBox:
      return std::abs(r) * w.Rinv[k] < w.bound[k];
    default:
      return r < 0;
  }
}
// row k's −λ_k = ∂(its term)/∂r
inline double newton_slope(const NewtonWorkspace& w, int k, double r) {
  if (w.kind[k] == kBox) return std::clamp(r * w.Rinv[k], -w.bound[k], w.bound[k]);
  return newton_quadratic(w, k, r) ? r * w.Rinv[k] : 0.0;
}

// c(x) of (1) from dx = x − v*, M dx and r = J x − b
inline double newton_cost(const NewtonWorkspace& w, const Eigen::VectorXd& dx, const Eigen::VectorXd& Mdx,
                          const ReservedVector& r) {
  double c = 0.5 * dx.dot(Mdx);
  for (int k = 0; k < int(r.size()); ++k) {
    if (w.kind[k] == kBox && !newton_quadratic(w, k, r[k]))
      c += w.bound[k] * std::abs(r[k]) - 0.5 * w.bound[k] * w.bound[k] / w.Rinv[k];
    else if (newton_quadratic(w, k, r[k]))
      c += 0.5 * r[k] * r[k] * w.Rinv[k];
  }
  return c;
}

// the exact line search of (4): α minimising c(x + α p), from c'(0) = d0 < 0; r = J x − b, s = J p
inline double newton_line_search(NewtonWorkspace& w, double pMp, double d0) {
  const int n = int(w.r.size());
  double curv = pMp;  // c'' on the current piece
  w.event.clear();
  for (int k = 0; k < n; ++k) {
    const double rk = w.r[k], sk = w.s[k];
    if (newton_quadratic(w, k, rk + 1e-300 * sk) || (w.kind[k] == kUnilateral && rk == 0 && sk < 0))
      curv += sk * sk * w.Rinv[k];  // quadratic just after α = 0
    if (sk == 0) continue;
    if (w.kind[k] == kUnilateral && -rk / sk > 0) w.event.emplace_back(-rk / sk, k);
    if (w.kind[k] == kBox)  // (the band's edges r = ±R F: the row leaves or enters its quadratic piece)
      for (const double edge : {w.bound[k] / w.Rinv[k], -w.bound[k] / w.Rinv[k]})
        if ((edge - rk) / sk > 0) w.event.emplace_back((edge - rk) / sk, k);
  }
  std::sort(w.event.begin(), w.event.end());
  double alpha = 0, d = d0;
  for (const auto& [at, k] : w.event) {
    if (curv > 0 && alpha - d / curv <= at) return alpha - d / curv;
    d += curv * (at - alpha);
    alpha = at;
    const double q = w.s[k] * w.s[k] * w.Rinv[k];
    if (w.kind[k] == kBox)  // (at an edge: entering the band, or leaving it)
      curv += newton_quadratic(w, k, w.r[k] + (at + 1e-12 * std::max(at, 1e-300)) * w.s[k]) ? q : -q;
    else
      curv += w.s[k] < 0 ? q : -q;  // row k enters (s < 0: r + α s turns negative) or leaves
  }
  return curv > 0 ? alpha - d / curv : alpha;
}

// the products of (1) on the rows' chains and M's tree pattern where w.tree (Featherstone's branch-induced
// sparsity: M_ij ≠ 0 only for i an ancestor of j or j of i, and a row's J on its chain; H = M + JᵀDJ then
// keeps M's pattern, factored by LTL without fill-in, algorithms/ltl.hpp), dense otherwise
// the coordinates of row k's chain (w.tree), in the order of its compact entries Jc[jadr[k] ..]
inline const int* newton_row_cols(const NewtonWorkspace& w, int k) {
  return w.chain.col.data() + (w.top[k] >= 0 ? w.chain.adr[w.top[k]] : 0);
}
inline void newton_J(const NewtonWorkspace& w, const Eigen::VectorXd& x, ReservedVector& y) {
  if (!w.tree) {
    y.resize(w.J.rows());
    y.map().noalias() = w.J * x;
    return;
  }
  y.resize(int(w.top.size()));
  for (int k = 0; k < int(w.top.size()); ++k) {
    const double* Jk = w.Jc.data() + w.jadr[k];
    const int* c = newton_row_cols(w, k);
    double t = 0;
    for (int p = 0; p < w.jadr[k + 1] - w.jadr[k]; ++p) t += Jk[p] * x[c[p]];
    y[k] = w.cross[k] < 0 ? t : w.X.row(w.cross[k]).dot(x);
  }
}
inline void newton_JT_add(const NewtonWorkspace& w, int k, double a, Eigen::VectorXd& y) {  // y += a J_kᵀ
  if (!w.tree) {
    y.noalias() += a * w.J.row(k).transpose();
    return;
  }
  if (w.cross[k] >= 0) {
    y.noalias() += a * w.X.row(w.cross[k]).transpose();
    return;
  }
  const double* Jk = w.Jc.data() + w.jadr[k];
  const int* c = newton_row_cols(w, k);
  for (int p = 0; p < w.jadr[k + 1] - w.jadr[k]; ++p) y[c[p]] += a * Jk[p];
}
inline void newton_M(const NewtonWorkspace& w, const Eigen::MatrixXd& M, const Eigen::VectorXd& x, Eigen::VectorXd& y) {
  if (!w.tree) {
    y.noalias() = M * x;
    return;
  }
  const ChainRows& c = w.chain;
  y.setZero(c.n());
  for (int k = 0; k < c.n(); ++k) {  // row k of M's lower triangle, and its transpose
    const double* Mk = w.Mc.data() + c.adr[k];
    const int* ck = c.col.data() + c.adr[k];
    double t = Mk[0] * x[k];
    for (int p = 1; p < c.len[k]; ++p) t += Mk[p] * x[ck[p]], y[ck[p]] += Mk[p] * x[k];
    y[k] += t;
  }
}
// the factor of the last H (w.Hc) turned into the new one's by a rank-one update or downdate per row whose term enters
// or leaves (J_k / √R_k on its chain, algorithms/ltl.hpp's ltl_rows_update): where few rows change, a fraction of a
// new factor; the entering rows first (a downdate may cancel: false, and the caller factors H afresh)
inline bool newton_update_factor(NewtonWorkspace& w) {
  for (const bool entering : {true, false})
    for (int r = 0; r < int(w.top.size()); ++r) {
      if ((w.active[r] != 0) == (w.in_H[r] != 0) || (w.active[r] != 0) != entering || w.top[r] < 0) continue;
      const double a = std::sqrt(w.Rinv[r]);
      w.xu.assign(w.Jc.begin() + w.jadr[r], w.Jc.begin() + w.jadr[r + 1]);
      for (double& x : w.xu) x *= a;
      if (!ltl_rows_update(w.Hc.data(), w.chain, w.top[r], w.xu.data(), entering ? 1 : -1)) return false;
    }
  return true;
}

// the active rows off the chains on the tree's factor Hₜ (Woodbury's identity, NewtonWorkspace::cross): U, Y = Hₜ⁻¹U
// (a tree solve a row) and C = I + UᵀY's Cholesky; a few rows, each a pair of tree solves where the dense factor
// of H costs nv³/3
inline bool newton_cross_factor(NewtonWorkspace& w) {
  int a = 0;
  for (int k = 0; k < int(w.top.size()); ++k) a += w.cross[k] >= 0 && w.active[k];
  w.U.resize(int(w.chain.n()), a), w.Y.resize(int(w.chain.n()), a);
  if (a == 0) return true;
  a = 0;
  for (int k = 0; k < int(w.top.size()); ++k)
    if (w.cross[k] >= 0 && w.active[k]) w.U.col(a++) = std::sqrt(w.Rinv[k]) * w.X.row(w.cross[k]).transpose();
  w.Y.map() = w.U.map();
  for (int c = 0; c < a; ++c) ltl_rows_solve(w.Hc.data(), w.chain, w.Y.col(c).data());
  w.C.resize(a, a);
  w.C.map().noalias() = w.U.map().transpose() * w.Y.map();
  w.C.diagonal().array() += 1.0;
  Eigen::LLT<Eigen::Ref<Eigen::MatrixXd>> in_place(w.C.map());
  return in_place.info() == Eigen::Success;
}

// H = M + Σ_active J_kᵀ J_k / R_k and its factor: dense (lower triangle, Cholesky) or on the tree (LTL)
inline bool newton_factor(NewtonWorkspace& w, const Eigen::MatrixXd& M) {
  const int n = int(M.rows());
  if (!w.tree) {  // H = M + AAᵀ, A's columns √(1/R_k) J_kᵀ of the active rows: one rank-k update
    int a = 0;
    for (int k = 0; k < int(w.J.rows()); ++k) a += w.active[k] != 0;
    w.A.resize(n, a);
    a = 0;
    for (int k = 0; k < int(w.J.rows()); ++k)
      if (w.active[k]) w.A.col(a++) = std::sqrt(w.Rinv[k]) * w.J.row(k).transpose();
    w.H = M;
    if (a) w.H.selfadjointView<Eigen::Lower>().rankUpdate(w.A);
    w.llt.compute(w.H);  // (reads the lower triangle)
    return w.llt.info() == Eigen::Success;
  }
  // a row on the chain of top: its term J_i J_j / R for coordinates i, j of that chain, j at or above i; the
  // part of row i (an ancestor of top, at p in top's chain) is the tail of top's row from p: contiguous.
  // Hu (H before its factor) carries the rows of the last factor: a change of the active set adds and
  // takes off the rows that changed, two rows of one chain (a contact's) in one pass
  if (w.fresh) w.Hu = w.Mc, w.in_H.assign(w.top.size(), 0), w.fresh = false, w.factored = false;
  const int rows = int(w.top.size());
  double change = 0;  // the changed rows' update cost, Σ len_top² against the factor's Σ_k len_k²
  for (int r = 0; r < rows; ++r)
    if ((w.active[r] != 0) != (w.in_H[r] != 0) && w.top[r] >= 0)
      change += 2.0 * w.chain.len[w.top[r]] * w.chain.len[w.top[r]];
  const bool update = w.factored && change < w.chain.squares && newton_update_factor(w);
  for (int r = 0; r < rows;) {
    const int r1 = r + 1 < rows && w.top[r + 1] == w.top[r] ? r + 1 : r;  // (r1 = r: one row)
    const double c0 = w.Rinv[r] * (int(w.active[r] != 0) - int(w.in_H[r] != 0));
    const double c1 = r1 > r ? w.Rinv[r1] * (int(w.active[r1] != 0) - int(w.in_H[r1] != 0)) : 0.0;
    if (w.top[r] >= 0 && (c0 != 0 || c1 != 0)) {
      const double* J0 = w.Jc.data() + w.jadr[r];
      const double* J1 = w.Jc.data() + w.jadr[r1];
      const int* c = newton_row_cols(w, r);
      const int d = w.jadr[r + 1] - w.jadr[r];
      for (int p = 0; p < d; ++p) {
        double* Hi = w.Hu.data() + w.chain.adr[c[p]];
        const double a0 = c0 * J0[p], a1 = c1 * J1[p];
        for (int q = 0; q < d - p; ++q) Hi[q] += a0 * J0[p + q] + a1 * J1[p + q];
      }
    }
    r = r1 + 1;
  }
  w.in_H = w.active;
  if (!update) w.Hc = w.Hu, w.factored = ltl_rows(w.Hc.data(), w.chain) < 0;
  return w.factored && newton_cross_factor(w);
}
inline void newton_solve(NewtonWorkspace& w, Eigen::VectorXd& x) {  // x = H⁻¹ x
  if (!w.tree) {
    x = w.llt.solve(x);
    return;
  }
  ltl_rows_solve(w.Hc.data(), w.chain, x.data());  // z = Hₜ⁻¹ x, then z − Y C⁻¹ Uᵀ z
  if (w.Y.cols() == 0) return;
  w.t.resize(w.Y.cols());
  w.t.map().noalias() = w.U.map().transpose() * x;
  const auto L = w.C.triangularView<Eigen::Lower>();
  L.solveInPlace(w.t.map()), L.adjoint().solveInPlace(w.t.map());
  x.noalias() -= w.Y.map() * w.t.map();
}
// M's lower triangle on the chains' rows (Mc), once per problem
inline void newton_tree_mass(NewtonWorkspace& w, const Eigen::MatrixXd& M) {
  w.fresh = true;
  w.Mc.resize(w.chain.nnz());
  ltl_rows_from(M, static_cast<const double*>(nullptr), w.chain, w.Mc.data());
}

// minimise (1) from the warm start x0 (or v* where cheaper): w.x the velocity after the step, λ into lam
// (one per row of J; rows not in use keep 0). M: the mass matrix (with armature), h: the step. The
// iterate's dx = x − v*, M dx and r = J x − b move with it (x + αp: + α p, + α Mp, + α Jp), so that an
// iteration costs two products (M p, J p), the gradient's Jᵀ over the active rows and, where the
// active set changed, H's rank-one terms and its Cholesky factor.
inline NewtonResult newton(const Eigen::MatrixXd& M, const Eigen::VectorXd& vstar, const Eigen::VectorXd* x0, double h,
                           const NewtonSettings& opt, NewtonWorkspace& w, double* lam) {
  const int nv = int(M.rows()), n = int(w.rows.size());
  NewtonResult res;
  const double scale = 1.0 / (std::max(M.trace() / std::max(nv, 1), 1e-300) * std::max(nv, 1));
  if (w.tree) newton_tree_mass(w, M);
  w.x = vstar;
  w.dx.setZero(nv), w.Mdx.setZero(nv);
  newton_J(w, vstar, w.r);
  w.r -= w.b;
  w.kind.resize(n, kUnilateral), w.bound.resize(n, 0.0);
  double cost = newton_cost(w, w.dx, w.Mdx, w.r);
  if (x0) {
    w.dxw = *x0 - vstar;
    newton_M(w, M, w.dxw, w.Mdxw);
    newton_J(w, *x0, w.rw);
    w.rw -= w.b;
    const double cw = newton_cost(w, w.dxw, w.Mdxw, w.rw);
    if (cw < cost) cost = cw, w.x = *x0, w.dx.swap(w.dxw), w.Mdx.swap(w.Mdxw), w.r.swap(w.rw);
  }
  w.active.assign(n, 0);
  w.next.assign(n, 0);
  for (int it = 0; it < opt.max_iterations; ++it) {
    w.grad = w.Mdx;  // (2)
    for (int k = 0; k < n; ++k) {
      w.next[k] = newton_quadratic(w, k, w.r[k]);
      const double slope = newton_slope(w, k, w.r[k]);
      if (slope != 0) newton_JT_add(w, k, slope, w.grad);
    }
    res.gradient = scale * w.grad.norm() / h;
    if (res.gradient < opt.tolerance) {
      res.converged = true;
      break;
    }
    if (it == 0 || w.next != w.active) {  // (3), refactored where the active set changed
      w.active = w.next;
      if (!newton_factor(w, M)) break;  // (not positive definite to rounding: the best iterate so far)
    }
    w.p = -w.grad;  // (4)
    newton_solve(w, w.p);
    const double d0 = w.grad.dot(w.p);
    if (!(d0 < 0)) {  // no descent left: the minimum to rounding
      res.converged = true;
      break;
    }
    // MuJoCo's Newton decrement ½ ∇cᵀH⁻¹∇c = −½ ∇c·p, the cost the step is predicted to gain, on the
    // gradient's scale (acceleration units: / h²): below tolerance after a step, the iterate stands
    // (the first iterate's is gated by the gradient test above, as MuJoCo's)
    const double decrement = -0.5 * scale * d0 / (h * h);
    if (it > 0 && decrement < opt.tolerance) {
      res.converged = true;
      break;
    }
    ++res.iterations;
    newton_M(w, M, w.p, w.Mp);
    newton_J(w, w.p, w.s);
    const double alpha = newton_line_search(w, w.p.dot(w.Mp), d0);
    w.x += alpha * w.p, w.dx += alpha * w.p, w.Mdx += alpha * w.Mp, w.r += alpha * w.s;
    const double before = cost;
    cost = newton_cost(w, w.dx, w.Mdx, w.r);
    res.improvement = scale * (before - cost) / (h * h);
    if (res.improvement < opt.tolerance) {
      res.converged = true;
      break;
    }
  }
  newton_J(w, w.x, w.r);  // (afresh: λ from the final iterate, not the updates' rounding)
  w.r -= w.b;
  for (int k = 0; k < n; ++k) lam[w.rows[k]] = -newton_slope(w, k, w.r[k]);
  return res;
}

}  // namespace treedyn
