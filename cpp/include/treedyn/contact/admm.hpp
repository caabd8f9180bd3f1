// The contact problem of one step, solved by ADMM on a Delassus operator (docs/contact.md).
//
// Given the rows' velocities before the impulses g = J v*, their targets b (a contact's normal
// push-out, a limit's, a bilateral row's Baumgarte velocity; 0 on the tangents) and the cones,
// find impulses λ with the velocities after them σ = G λ + g − b such that
//   contacts    λ_i ∈ K_i = {‖λ_t‖ ≤ μ λ_n} (or the cone's k-edge pyramid), σ̃_i ∈ K_i*, λ_i ⊥ σ̃_i,
//               σ̃_i = σ_i + μ_i h(−σ_t,i) e_n (De Saxcé's shift; h the support function of the
//               cone's section: ‖·‖, or the largest edge), which is Signorini's condition with
//               Coulomb's friction at its maximum dissipation: a sliding contact keeps σ_n = 0 and
//               its friction μ λ_n opposes the slide
//   limits      λ ≥ 0, σ ≥ 0, λ σ = 0
//   bilateral   σ = 0, or with bounds lo ≤ λ ≤ hi (a joint's dry friction ±h f, a tendon's limit
//               [0, ∞)): λ = clamp(λ − σ, lo, hi), σ = 0 inside, σ ≥ 0 at lo, σ ≤ 0 at hi.
// ADMM on the split λ = z, z in the cones (Boyd et al. 2011, §3; the contact form of Carpentier et
// al. 2024), each row's penalty ρ d_k (D = diag d: the operator's weights, one per contact's three
// rows so that the cones' projections stay Euclidean): λ⁺ = (G + ρD)⁻¹(ρ D z − y − (g − b + s)),
// z⁺ = Π_K(λ⁺ + D⁻¹y/ρ), y⁺ = y + ρD(λ⁺ − z⁺), with
// s the De Saxcé shift at the last iterate's σ. The state (z, y/ρ, s) — s in it, so that the update is a
// function of the state — is Anderson-accelerated (below): it halves the iterations. Residuals in
// velocity units: primal s_k |λ − z|_k (s_k = λ_max d_k), dual ρ ‖D(z⁺ − z)‖∞, and, to stop, ‖G(λ − z)‖∞ and the
// natural map of the problem itself (ncp_residual). ρ is balanced between primal and dual every 10th iteration (×/÷ 5
// when one exceeds the other tenfold; each change refactors the operator), and starts at the last step's.
#pragma once
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include <Eigen/Cholesky>
#include <Eigen/Core>

#include "treedyn/contact/polish.hpp"
#include "treedyn/linalg/reserved.hpp"

namespace treedyn {

// Π_K(x) of one contact's (λ_n, λ_t₁, λ_t₂) on {‖λ_t‖ ≤ μ λ_n}
inline void project_soc(double mu, double* x) {
  const double t = std::hypot(x[1], x[2]);
  if (t <= mu * x[0]) return;
  if (mu * t <= -x[0]) {  // in the polar cone: the apex
    x[0] = x[1] = x[2] = 0.0;
    return;
  }
  const double a = (mu * t + x[0]) / (mu * mu + 1.0);
  const double s = t > 0 ? mu * a / t : 0.0;
  x[0] = a, x[1] *= s, x[2] *= s;
}

// The k-edge pyramid {λ_t ∈ μ λ_n conv(d_j)}, d_j = (cos φ_j, sin φ_j), φ_j = 2πj/k in the contact's
// turned tangent frame (its first edge against the slide): the edges' and faces' directions, once
struct Pyramid {
  int k = 0;
  double ch = 1;                       // cos(π/k): the faces' distance from the centre of the unit section
  std::vector<double> ec, es, fc, fs;  // edge j (cos, sin φ_j), face j's outward normal (φ_j + π/k)
  explicit Pyramid(int edges = 0) : k(edges) {
    const double pi = 3.14159265358979323846;
    ch = k ? std::cos(pi / k) : 1.0;
    for (int j = 0; j < k; ++j) {
      const double f = 2 * pi * j / k;
      ec.push_back(std::cos(f)), es.push_back(std::sin(f));
      fc.push_back(std::cos(f + pi / k)), fs.push_back(std::sin(f + pi / k));
    }
  }
  bool inside(double mu, const double* y, double tol) const {
    if (y[0] < -tol) return false;
    for (int j = 0; j < k; ++j)
      if (y[1] * fc[j] + y[2] * fs[j] > mu * ch * y[0] + tol) return false;
    return true;
  }
  // Π_K(x): the nearest of x itself (inside), its projections on the faces (planes through two
  // adjacent edges) that fall inside, on the edges' rays, and the apex
  void project(double mu, double* x) const {
    if (k == 4) return project_diamond(mu, x);
    if (inside(mu, x, 0.0)) return;
    const double scale = std::abs(x[0]) + std::abs(x[1]) + std::abs(x[2]);
    double best[3] = {0, 0, 0}, bestd = x[0] * x[0] + x[1] * x[1] + x[2] * x[2];
    auto consider = [&](const double* y) {
      const double d = (y[0] - x[0]) * (y[0] - x[0]) + (y[1] - x[1]) * (y[1] - x[1]) + (y[2] - x[2]) * (y[2] - x[2]);
      if (d < bestd) bestd = d, best[0] = y[0], best[1] = y[1], best[2] = y[2];
    };
    const double ee = 1.0 + mu * mu, nn = mu * mu * ch * ch + 1.0;
    for (int j = 0; j < k; ++j) {
      const double t = (x[0] + mu * (x[1] * ec[j] + x[2] * es[j])) / ee;  // on edge j: (1, μ d_j)
      if (t > 0) {
        const double y[3] = {t, t * mu * ec[j], t * mu * es[j]};
        consider(y);
      }
      const double s = (-mu * ch * x[0] + x[1] * fc[j] + x[2] * fs[j]) / nn;  // on face j: normal (−μ cos(π/k), f_j)
      const double y[3] = {x[0] + s * mu * ch, x[1] - s * fc[j], x[2] - s * fs[j]};
      if (inside(mu, y, 1e-12 * scale)) consider(y);
    }
    x[0] = best[0], x[1] = best[1], x[2] = best[2];
  }
  // k = 4 (the default), in closed form: the section is the diamond |λ_t₁| + |λ_t₂| ≤ μ λ_n, symmetric
  // in the signs of the tangents, so x is reflected into the quadrant t ≥ 0 (where its nearest point
  // is too) and projected on the cone {t₁ + t₂ ≤ μ n, t ≥ 0}: on the face t₁ + t₂ = μ n (normal
  // (−μ, 1, 1)) when that lands in the quadrant, else on the edge (1, 0, μ) or (1, μ, 0) whose
  // coordinate went negative, or the apex
  void project_diamond(double mu, double* x) const {
    const double s1 = x[1] < 0 ? -1.0 : 1.0, s2 = x[2] < 0 ? -1.0 : 1.0;
    double n = x[0], a = std::abs(x[1]), b = std::abs(x[2]);
    const double over = a + b - mu * n;
    if (over <= 0) return;  // inside (n ≥ (a + b)/μ ≥ 0)
    const double t = over / (mu * mu + 2.0);
    n += mu * t, a -= t, b -= t;
    if (a < 0 || b < 0) {  // onto the edge of the coordinate still positive
      const double c = a < 0 ? std::abs(x[2]) : std::abs(x[1]);
      const double r = std::max((x[0] + mu * c) / (1.0 + mu * mu), 0.0);
      n = r;
      a = a < 0 ? 0.0 : mu * r;
      b = a == 0.0 ? mu * r : 0.0;
    }
    x[0] = n, x[1] = s1 * a, x[2] = s2 * b;
  }
  // the support function of the unit section at w: max_j w·d_j (‖w‖ for the cone, k = 0)
  double support(double w1, double w2) const {
    if (k == 0) return std::hypot(w1, w2);
    double h = -1e300;
    for (int j = 0; j < k; ++j) h = std::max(h, w1 * ec[j] + w2 * es[j]);
    return h;
  }
};

struct ConeRows {
  int P = 0, L = 0, B = 0;                    // contacts (3 rows each), limits, bilateral rows
  const double* mu = nullptr;                 // P friction coefficients
  const Pyramid* pyramid = nullptr;           // k = 0: the second-order cone
  const double* turn = nullptr;               // P x 2: (cos, sin) of the angle of a contact's first edge in (t₁, t₂)
  const double *lo = nullptr, *hi = nullptr;  // B bounds of the bilateral rows' impulses (null: unbounded)
  bool convex = false;  // no De Saxcé shift: the convex problem (MuJoCo's soft contacts, contact/soft.hpp)
  // per contact, or null: 1 where its rows are two of MuJoCo's pyramid edges (λ₀, λ₁ ≥ 0) and a
  // third row held at 0 (contact/step.hpp, split_pyramids)
  const unsigned char* edges = nullptr;
  double lower(int r) const { return lo ? lo[r] : -std::numeric_limits<double>::infinity(); }
  double upper(int r) const { return hi ? hi[r] : std::numeric_limits<double>::infinity(); }
  // a contact's tangent components into its turned frame (back: sign −1)
  void rotate(int i, double* x, double sign) const {
    const double c = turn[2 * i], s = sign * turn[2 * i + 1];
    const double a = c * x[1] + s * x[2], b = -s * x[1] + c * x[2];
    x[1] = a, x[2] = b;
  }
  double shift(int i, const double* sigma) const {  // μ h(−σ_t): De Saxcé's
    if (convex) return 0.0;
    if (pyramid->k == 0) return mu[i] * std::hypot(sigma[1], sigma[2]);
    double y[3] = {0, -sigma[1], -sigma[2]};
    rotate(i, y, 1.0);
    return mu[i] * pyramid->support(y[1], y[2]);
  }
};

// how far (z, σ̃) is from solving the problem, in velocity units: the natural map
// s_k |z − Π_K(z − σ̃/s)|_k (zero exactly at a solution: z ∈ K, σ̃ ∈ K*, z ⊥ σ̃), s_k turning row
// k's impulses into velocities (λ_max(G) d_k: at least the row's own inverse inertia where d_k =
// G_kk / max G_jj, and λ_max itself on the tree, d = 1; one per contact); σ̃ = σ + De Saxcé's shift
inline void project_one(const ConeRows& c, int i, double* x);
inline double ncp_residual(const ConeRows& c, const double* z, const double* sigma, const double* scale) {
  double r = 0.0;
  for (int i = 0; i < c.P; ++i) {
    const double* zi = z + 3 * i;
    const double* si = sigma + 3 * i;
    const double s = scale[3 * i];
    const double shift = c.shift(i, si);
    double y[3] = {zi[0] - (si[0] + shift) / s, zi[1] - si[1] / s, zi[2] - si[2] / s};
    project_one(c, i, y);
    for (int k = 0; k < 3; ++k) r = std::max(r, s * std::abs(zi[k] - y[k]));
  }
  for (int l = 0; l < c.L; ++l) {
    const double zl = z[3 * c.P + l], sl = sigma[3 * c.P + l], s = scale[3 * c.P + l];
    r = std::max(r, s * std::abs(zl - std::max(zl - sl / s, 0.0)));
  }
  for (int b = 0; b < c.B; ++b) {  // |σ| unbounded; |λ − clamp(λ − σ/s, lo, hi)| s bounded
    const int k = 3 * c.P + c.L + b;
    const double zb = z[k], sb = sigma[k], s = scale[k];
    r = std::max(r, c.lo ? s * std::abs(zb - std::clamp(zb - sb / s, c.lower(b), c.upper(b))) : std::abs(sb));
  }
  return r;
}

inline void project_one(const ConeRows& c, int i, double* xi) {
  if (c.edges && c.edges[i]) {
    xi[0] = std::max(xi[0], 0.0), xi[1] = std::max(xi[1], 0.0), xi[2] = 0.0;
  } else if (c.pyramid->k == 0) {
    project_soc(c.mu[i], xi);
  } else {
    c.rotate(i, xi, 1.0);
    c.pyramid->project(c.mu[i], xi);
    c.rotate(i, xi, -1.0);
  }
}

inline void project_rows(const ConeRows& c, double* x) {
  for (int i = 0; i < c.P; ++i) project_one(c, i, x + 3 * i);
  for (int l = 0; l < c.L; ++l) x[3 * c.P + l] = std::max(x[3 * c.P + l], 0.0);
  if (c.lo)
    for (int b = 0; b < c.B; ++b) x[3 * c.P + c.L + b] = std::clamp(x[3 * c.P + c.L + b], c.lower(b), c.upper(b));
}

struct AdmmSettings {
  double tolerance = 1e-6;  // velocity units
  int max_iterations = 500;
  double rho_factor = 5.0, balance = 10.0;
  // over-relaxation (Boyd et al. §3.4.3): with Anderson acceleration 1.3 (the centipede's median
  // iterations at 10 segments: 1.0 33, 1.3 32, 1.6 46, 1.8 66)
  double alpha = 1.3;
  int anderson = 5;  // Anderson acceleration's memory (0: none; at most kAndersonMax)
  // ρ balanced every 10th iteration (each change restarts Anderson's history and refactors;
  // every iteration: 46 iterations, every 10th: 32)
  int adapt_every = 10;
  // a stall: the best residual not 10 % lower after `stall_window` more iterations. De Saxcé's
  // fixed point is not a contraction (friction that couples with the normals, μ ~ 1: the residuals
  // of Gymnasium's walker2d at rest hovered at 1.01e-6 for 5 000 iterations; a 10-segment centipede
  // step grew them 0.2 → 2 mm/s at constant ρ). The first stall freezes the shift at the best
  // iterate's velocities — a convex problem, which ADMM solves — and moves it to the new velocities
  // each time that problem is solved (Cadoux's fixed point on the shift); the third ends the solve
  // with the best iterate, reported unconverged. Walker2d, 1 s at rest: 26 unconverged steps at
  // 5 000 iterations (mean 265 iterations a step) before, 3 (residual ≤ 2.4e-6) and mean 7.5 after
  int stall_window = 100, stall_retries = 2;
  double stall_gain = 0.9;
  // the active-set polish (polish.hpp; the formed operator, the 4-edge pyramid): tried when the
  // rows' modes have not changed for `polish_after` iterations, at most `polish_tries` times a solve
  int polish_after = 3, polish_tries = 5;
};

struct AdmmResult {
  int iterations = 0;
  bool converged = false, polished = false;
  double primal = 0, dual = 0, rho = 0;
};

constexpr int kAndersonMax = 8;  // the largest memory
using AndersonSmall = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, kAndersonMax, kAndersonMax>;

struct AdmmWorkspace {
  // (per row: storage kept when the row count shrinks, linalg/reserved.hpp)
  ReservedVector lam, z, zold, y, yold, r, c, sigma, g, zbest, ybest, s, sold, scale;
  // Anderson acceleration of the map (z, y/ρ, s) ↦ its ADMM update (s: De Saxcé's shift, a state so
  // that the map is a function of the state): the last M differences of the states (dX) and of the
  // residuals (dF), a ring
  ReservedVector x, f, xprev, fprev;
  Eigen::Matrix<double, Eigen::Dynamic, 1, 0, kAndersonMax, 1> gamma;
  ReservedMatrix dX, dF;
  AndersonSmall H;
  int stored = 0, next = 0;
  bool has_prev = false, accelerated = false;
  ReservedVector zF, yF, sF;
  PolishWorkspace polish;  // sized where the operator is formed (m x m)
  void restart() { stored = next = 0, has_prev = accelerated = false; }
  void resize(int m, int memory) {
    memory = std::min(std::max(memory, 1), kAndersonMax);
    for (ReservedVector* v : {&lam, &z, &zold, &y, &yold, &r, &c, &sigma, &g, &zbest, &ybest, &zF, &yF, &s, &sold, &sF})
      v->resize(m);
    for (ReservedVector* v : {&x, &f, &xprev, &fprev}) v->resize(3 * m);
    dX.resize(3 * m, memory), dF.resize(3 * m, memory);
    H.resize(memory, memory);
    restart();
  }
};

// λ_max(G) by power iteration (a few products with G: an estimate, raised 10 % for safety)
template <class Op> double largest_eigenvalue(Op& G, AdmmWorkspace& w, int m, int iterations) {
  ReservedVector& x = w.r;
  ReservedVector& y = w.c;
  x.setConstant(1.0 / std::sqrt(double(std::max(m, 1))));
  double lam = 0.0;
  for (int it = 0; it < iterations; ++it) {
    G.apply(x.data(), y.data());
    const double n = y.norm();
    if (!(n > 0)) return 1.0;
    lam = x.dot(y);
    x = y / n;
  }
  return 1.1 * std::max(lam, 1e-300);
}

// Anderson acceleration (type II; Walker and Ni 2011; Zhang, O'Donoghue and Boyd 2020 for ADMM):
// x = (z, y/ρ, s) the state fed to the ADMM map F, f = F(x) − x; the next state is
// F(x) − (dX + dF) γ with γ = argmin ‖f − dF γ‖ over the last M differences. A mixed state whose
// residual came out larger than that of the plain step it replaced falls back to that step and
// restarts the history.
inline void anderson_step(AdmmWorkspace& w, int m, double rho, int M) {
  w.x << w.zold, w.yold / rho, w.sold;
  w.f << w.z - w.zold, (w.y - w.yold) / rho, w.s - w.sold;
  if (w.accelerated && w.f.squaredNorm() > w.fprev.squaredNorm()) {
    w.z = w.zF, w.y = w.yF, w.s = w.sF;
    w.restart();
    return;
  }
  w.accelerated = false;
  if (w.has_prev) {
    w.dX.col(w.next) = w.x - w.xprev;
    w.dF.col(w.next) = w.f - w.fprev;
    w.next = (w.next + 1) % M;
    w.stored = std::min(w.stored + 1, M);
  }
  w.xprev = w.x, w.fprev = w.f, w.has_prev = true;
  if (w.stored == 0) return;
  const int k = w.stored;
  // H = dFᵀdF: the new column's row and column (the ring's slot just written), the rest kept
  const int j = (w.next + M - 1) % M;
  for (int i = 0; i < k; ++i) w.H(i, j) = w.H(j, i) = w.dF.col(i).dot(w.dF.col(j));
  AndersonSmall Hk = w.H.topLeftCorner(k, k);
  Hk.diagonal().array() += 1e-12 * Hk.trace() + 1e-300;
  w.gamma.noalias() = w.dF.leftCols(k).transpose() * w.f;
  Hk.ldlt().solveInPlace(w.gamma);  // (fixed capacity: no heap)
  if (!w.gamma.allFinite()) return w.restart();
  w.zF = w.z, w.yF = w.y, w.sF = w.s;  // F(x), kept in case the mixed state does worse
  w.x << w.z, w.y / rho, w.s;
  w.x.map().noalias() -= w.dX.leftCols(k) * w.gamma;
  w.x.map().noalias() -= w.dF.leftCols(k) * w.gamma;
  w.z = w.x.head(m), w.y = rho * w.x.segment(m, m), w.s = w.x.tail(m);
  w.accelerated = true;
}

inline void shifts(const ConeRows& cones, const double* sigma, ReservedVector& s);

// the polish (polish.hpp) at the projected iterate z when its modes have held for
// set.polish_after iterations and were not tried before; where its solution passes the problem's
// own test (the natural map below the tolerance; λ = z, so no primal residual) it becomes z and the
// solve ends. ADMM's dual y is kept for the next step's warm start: set to its fixed point −σ̃
// instead, the Gymnasium ant and humanoid from 4 random velocities each (3 s, 2 s) had 139 and 288
// unconverged steps of 1 200 and 2 664 against 118 and 112 keeping y (112 and 203 unpolished)
inline bool try_polish(const ConeRows& cones, const ReservedMatrix& G, const AdmmSettings& set, AdmmWorkspace& w,
                       AdmmResult& out) {
  PolishWorkspace& p = w.polish;
  if (p.tries >= set.polish_tries) return false;
  const std::uint64_t signature = mode_signature(cones, w.z.data());
  p.unchanged = signature == p.signature ? p.unchanged + 1 : 0;
  p.signature = signature;
  if (p.unchanged < set.polish_after || signature == p.tried) return false;
  p.tried = signature, ++p.tries;
  if (!polish(cones, G, p.gb.data(), w.z.data(), p)) return false;
  const double r = ncp_residual(cones, p.lam.data(), p.sigma.data(), w.scale.data());
  if (!(r <= set.tolerance)) return false;
  w.z = p.lam;
  shifts(cones, p.sigma.data(), w.s);
  out.primal = 0.0, out.dual = r, out.converged = out.polished = true;
  return true;
}

// De Saxcé's shifts at the rows' velocities σ: μ_i h(−σ_t,i) on contact i's normal row, 0 elsewhere
inline void shifts(const ConeRows& cones, const double* sigma, ReservedVector& s) {
  s.setZero();
  for (int i = 0; i < cones.P; ++i) s[3 * i] = cones.shift(i, sigma + 3 * i);
}

// the impulses z (in: the warm start; out: the solution) and the dual y (in/out), for g = J v*, b
template <class Op>
AdmmResult admm(Op& G, const ConeRows& cones, const double* g, const double* b, double lambda_max, double rho0,
                const AdmmSettings& set, AdmmWorkspace& w) {
  const int m = int(w.z.size());
  const ReservedVector& d = G.weights();  // the rows' penalties: ρ d_k
  w.scale = lambda_max * d;               // impulses to velocities, row by row
  AdmmResult out;
  double rho = rho0;
  G.factor(rho);
  w.restart();
  // the velocities at the warm start, for the first De Saxcé shift
  G.apply(w.z.data(), w.sigma.data());
  for (int k = 0; k < m; ++k) w.sigma[k] += g[k] - b[k];
  shifts(cones, w.sigma.data(), w.s);
  // the polish needs G's entries: the formed operator's (formed() is null on the tree)
  const ReservedMatrix* formed = cones.pyramid->k == 4 && set.polish_after > 0 ? G.formed() : nullptr;
  if (formed) {
    if (w.polish.gb.size() != m) w.polish.resize(m);
    w.polish.restart();
    for (int k = 0; k < m; ++k) w.polish.gb[k] = g[k] - b[k];
  }
  double best = std::numeric_limits<double>::infinity();  // the iterate with the smallest residual, kept
  double best_primal = best, best_dual = best;
  double best_then = best;  // the best residual at the last stall check
  int stalls = 0;
  bool frozen = false;  // the shift s held (after a stall): the problem convex
  for (int it = 1; it <= set.max_iterations; ++it) {
    for (int k = 0; k < m; ++k) w.c[k] = g[k] - b[k] + w.s[k];
    w.r = rho * d.cwiseProduct(w.z) - w.y - w.c;
    G.solve(w.r.data(), w.lam.data());                                                      // (G + ρD) λ = r
    for (int k = 0; k < m; ++k) w.sigma[k] = w.r[k] - rho * d[k] * w.lam[k] + g[k] - b[k];  // G λ + g − b
    w.zold = w.z, w.yold = w.y, w.sold = w.s;
    if (!frozen) shifts(cones, w.sigma.data(), w.s);
    w.c = set.alpha * w.lam + (1.0 - set.alpha) * w.zold;  // λ over-relaxed (c is free until the next iteration)
    w.z = w.c + w.y.cwiseQuotient(d) / rho;
    project_rows(cones, w.z.data());
    w.y += rho * d.cwiseProduct(w.c - w.z);
    // the primal residual, row by row (s_k |λ − z|_k); the dual residual of ADMM. Where both pass,
    // the velocities' own: ‖G(λ − z)‖∞ exactly (one product: the rows' coupling kept) and the problem's
    // natural map at z with σ at λ (G λ + g − b, known from the solve)
    out.primal = (w.scale.cwiseProduct(w.lam - w.z)).lpNorm<Eigen::Infinity>();
    const double admm_dual = rho * d.cwiseProduct(w.z - w.zold).lpNorm<Eigen::Infinity>();
    out.dual = admm_dual;
    out.iterations = it;
    if (!std::isfinite(out.primal) || !std::isfinite(out.dual)) break;
    if (frozen && out.primal <= 0.1 * set.tolerance && admm_dual <= 0.1 * set.tolerance) {
      shifts(cones, w.sigma.data(), w.s);  // the problem of this shift solved: the shift moved
      w.restart();
    }
    if (formed && try_polish(cones, *formed, set, w, out)) break;
    if (out.primal <= set.tolerance && admm_dual <= set.tolerance) {
      w.c = w.lam - w.z;  // (c and r are free until the next iteration)
      G.apply(w.c.data(), w.r.data());
      out.primal = w.r.lpNorm<Eigen::Infinity>();
      out.dual = std::max(admm_dual, ncp_residual(cones, w.z.data(), w.sigma.data(), w.scale.data()));
      if (out.primal <= set.tolerance && out.dual <= set.tolerance) {
        out.converged = true;
        break;
      }
    }
    if (std::max(out.primal, out.dual) < best) {
      best = std::max(out.primal, out.dual), best_primal = out.primal, best_dual = out.dual;
      w.zbest = w.z, w.ybest = w.y;
    }
    bool changed = false;
    if (set.stall_window > 0 && it % set.stall_window == 0) {
      if (best > set.stall_gain * best_then) {
        if (++stalls > set.stall_retries) break;
        frozen = true;  // from the best iterate, the shift at its velocities
        w.z = w.zbest, w.y = w.ybest;
        G.apply(w.z.data(), w.sigma.data());
        for (int k = 0; k < m; ++k) w.sigma[k] += g[k] - b[k];
        shifts(cones, w.sigma.data(), w.s);
        w.restart();
      }
      best_then = best;
    }
    if (set.adapt_every > 0 && it % set.adapt_every == 0) {
      // ρ within [1e-6, 1e3] λ_max: a smaller one would append point masses so heavy (1/ρ) that the
      // articulated inertias' pivots lose their digits to rounding
      if (out.primal > set.balance * admm_dual && rho < 1e3 * lambda_max) {
        rho *= set.rho_factor, changed = true;
      } else if (admm_dual > set.balance * out.primal && rho > 1e-6 * lambda_max) {
        rho /= set.rho_factor, changed = true;
      }
    }
    if (changed) {
      G.factor(rho);
      w.restart();  // the history was of another map
    } else if (set.anderson > 0) {
      anderson_step(w, m, rho, std::min(set.anderson, int(w.dX.cols())));  // (the memory w was sized for)
    }
  }
  out.rho = rho;
  if (!out.converged && best < std::numeric_limits<double>::infinity()) {  // the best iterate, said so
    w.z = w.zbest, w.y = w.ybest;
    G.apply(w.z.data(), w.sigma.data());
    for (int k = 0; k < m; ++k) w.sigma[k] += g[k] - b[k];
    out.primal = best_primal;
    out.dual = std::max(best_dual, ncp_residual(cones, w.z.data(), w.sigma.data(), w.scale.data()));
  }
  return out;
}

}  // namespace treedyn
