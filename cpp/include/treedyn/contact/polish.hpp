// The active-set polish of the contact problem on the formed Delassus operator (the default 4-edge
// pyramid): once ADMM's projected iterate z has kept one mode per row for a few iterations —
// each contact lifted (z = 0), sticking (inside its pyramid), sliding along an edge or on a face;
// each limit free or active — the problem restricted to that mode is linear, and one solve gives
// its solution to rounding, accepted only if it passes the problem's own test (in the cones, the
// natural map below the tolerance). OSQP's polish (Stellato et al. 2020, §5.2) for a QP; here the
// modes are those of the De Saxcé-shifted problem (admm.hpp):
//
//   lifted           λ = 0                                      (no unknown, no equation)
//   sticking         λ = (n, a, b) free                         σ = 0
//   edge e = (1, ±μ, 0) or (1, 0, ±μ)   λ = x e                 σ_n = 0
//   face (s₁, s₂)    λ = α (1, s₁μ, 0) + β (1, 0, s₂μ)          σ_n = 0, s₂ σ_a − s₁ σ_b = 0
//   limit active     λ free ≥ 0                                 σ = 0
//   pyramid edge     λ_e free ≥ 0 where z_e > 0                 σ_e = 0   (MuJoCo's, soft: step.hpp)
//   bilateral row    λ free                                     σ = 0
//   bounded row      at a bound: λ = lo or hi (fixed)   inside: λ free, σ = 0
//
// in each contact's turned frame (n, a, b), where the pyramid is |a| + |b| ≤ μ n and σ = Gλ + g − b.
// A face's two equations: λ ⊥ σ̃ on a face holds for σ̃ normal to it, σ̃ ∝ (μ, −s₁, −s₂), i.e.
// σ_t ∥ −(s₁, s₂) and σ̃_n = σ_n + μ h(−σ_t) = σ_n + μ|σ_t|∞ = μ|σ_t|∞: σ_n = 0; an edge's alike.
// With λ = E x and the equations Cᵀσ = 0: (Cᵀ G E) x = −Cᵀ(g − b), p × p, p ≤ m, by Gaussian
// elimination with partial pivoting (in place, no allocation). On the 10-segment centipede's
// walking steps (m ≈ 30–48) the modes ADMM finds within 5–40 iterations give the solution to 1e-16
// where ADMM alone takes 19–393 from a cold start.
#pragma once
#include <Eigen/Core>
#include <cmath>
#include <cstdint>
#include <vector>

#include "treedyn/linalg/reserved.hpp"

namespace treedyn {

struct PolishWorkspace {
  struct Vec {  // rows r0 .. r0 + len − 1 of λ (an unknown's direction) or of σ (an equation's)
    int r0, len;
    double e[3];
  };
  std::vector<Vec> unknowns, equations;
  ReservedMatrix GE, A;              // m x p (G E), p x p; sized m x m (storage kept: linalg/reserved.hpp)
  ReservedVector x, lam, sigma, gb;  // the reduced unknowns; λ, σ = Gλ + g − b; g − b
  std::vector<int> perm;
  std::uint64_t signature = 0, tried = 0;  // this iteration's modes; the last modes tried
  int unchanged = 0, tries = 0;
  void resize(int m) {
    unknowns.reserve(m), equations.reserve(m);
    GE.resize(m, m), A.resize(m, m);
    x.resize(m), lam.resize(m), sigma.resize(m), gb.resize(m);
    perm.resize(m);
  }
  void restart() { signature = tried = 0, unchanged = tries = 0; }
};

// contact i's mode at z (frame coordinates): 0 lifted, 1 sticking, 2/3 an edge along a/b, 4 a face;
// (a, b) its tangential impulse in the turned frame
template <class Cones> int contact_mode(const Cones& c, int i, const double* zi, double& a, double& b) {
  double t[3] = {zi[0], zi[1], zi[2]};
  c.rotate(i, t, 1.0);
  a = t[1], b = t[2];
  const double n = zi[0], mu = c.mu[i];
  if (!(n > 0)) return 0;
  const double edge = 1e-9 * mu * n;  // the projection puts a slide on the boundary to rounding
  if (std::abs(a) + std::abs(b) < mu * n - edge) return 1;
  if (std::min(std::abs(a), std::abs(b)) <= edge) return std::abs(a) >= std::abs(b) ? 2 : 3;
  return 4;
}

// a bounded row's mode at its impulse: −1 at lo, 1 at hi, 0 inside (or unbounded)
template <class Cones> int bounded_mode(const Cones& c, int r, double z) {
  if (!c.lo) return 0;
  const double lo = c.lower(r), hi = c.upper(r), tol = 1e-9 * (std::abs(lo) + std::abs(hi));
  return z <= lo + tol ? -1 : (z >= hi - tol ? 1 : 0);
}

// a signature of the modes at z (and the faces' and edges' signs): the polish is tried when it
// has not changed for a few iterations
template <class Cones> std::uint64_t mode_signature(const Cones& c, const double* z) {
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a
  auto mix = [&h](std::uint64_t v) { h = (h ^ v) * 1099511628211ull; };
  for (int i = 0; i < c.P; ++i) {
    if (c.edges && c.edges[i]) {
      mix(17 + (z[3 * i] > 0) + 2 * (z[3 * i + 1] > 0));
      continue;
    }
    double a, b;
    const int mode = contact_mode(c, i, z + 3 * i, a, b);
    mix(std::uint64_t(mode) * 4 + (a < 0) * 2 + (b < 0));
  }
  for (int l = 0; l < c.L; ++l) mix(z[3 * c.P + l] > 0 ? 7 : 11);
  for (int r = 0; r < c.B; ++r) mix(std::uint64_t(13 + bounded_mode(c, r, z[3 * c.P + c.L + r])));
  return h;
}

// the reduced problem's unknowns and equations at z's modes
template <class Cones> void reduce(const Cones& c, const double* z, PolishWorkspace& w) {
  w.unknowns.clear(), w.equations.clear();
  auto frame = [&c](int i, double n, double a, double b) {  // turned → frame
    PolishWorkspace::Vec v{3 * i, 3, {n, a, b}};
    c.rotate(i, v.e, -1.0);
    return v;
  };
  for (int i = 0; i < c.P; ++i) {
    if (c.edges && c.edges[i]) {  // two edges, each active where its impulse is positive
      for (int e = 0; e < 2; ++e)
        if (z[3 * i + e] > 0) {
          const PolishWorkspace::Vec unit{3 * i + e, 1, {1, 0, 0}};
          w.unknowns.push_back(unit), w.equations.push_back(unit);
        }
      continue;
    }
    double a, b;
    const int mode = contact_mode(c, i, z + 3 * i, a, b);
    const double mu = c.mu[i], sa = a < 0 ? -1.0 : 1.0, sb = b < 0 ? -1.0 : 1.0;
    const PolishWorkspace::Vec normal{3 * i, 1, {1, 0, 0}};
    switch (mode) {
      case 1:  // sticking: σ = 0
        for (int k = 0; k < 3; ++k) {
          const PolishWorkspace::Vec unit{3 * i + k, 1, {1, 0, 0}};
          w.unknowns.push_back(unit), w.equations.push_back(unit);
        }
        break;
      case 2:  // an edge: σ_n = 0
      case 3:
        w.unknowns.push_back(mode == 2 ? frame(i, 1, sa * mu, 0) : frame(i, 1, 0, sb * mu));
        w.equations.push_back(normal);
        break;
      case 4:  // a face: σ_n = 0, σ_t ∥ (s₁, s₂)
        w.unknowns.push_back(frame(i, 1, sa * mu, 0)), w.unknowns.push_back(frame(i, 1, 0, sb * mu));
        w.equations.push_back(normal), w.equations.push_back(frame(i, 0, sb, -sa));
        break;
      default:  // lifted
        break;
    }
  }
  const int m0 = 3 * c.P;
  for (int l = 0; l < c.L; ++l)
    if (z[m0 + l] > 0) {
      const PolishWorkspace::Vec unit{m0 + l, 1, {1, 0, 0}};
      w.unknowns.push_back(unit), w.equations.push_back(unit);
    }
  for (int r = 0; r < c.B; ++r)
    if (bounded_mode(c, r, z[m0 + c.L + r]) == 0) {  // (at a bound: fixed there, in polish)
      const PolishWorkspace::Vec unit{m0 + c.L + r, 1, {1, 0, 0}};
      w.unknowns.push_back(unit), w.equations.push_back(unit);
    }
}

// A x = rhs in place (A p x p, the top-left of w.A; rhs in w.x): Gaussian elimination with
// partial pivoting; false where a pivot is below 1e-12 of the largest entry (a singular mode)
inline bool solve_in_place(PolishWorkspace& w, int p) {
  auto A = w.A.topLeftCorner(p, p);
  double big = 0.0;
  for (int j = 0; j < p; ++j)
    for (int i = 0; i < p; ++i) big = std::max(big, std::abs(A(i, j)));
  if (!(big > 0)) return p == 0;
  for (int k = 0; k < p; ++k) {
    int r = k;
    for (int i = k + 1; i < p; ++i)
      if (std::abs(A(i, k)) > std::abs(A(r, k))) r = i;
    if (!(std::abs(A(r, k)) > 1e-12 * big)) return false;
    if (r != k) A.row(r).swap(A.row(k)), std::swap(w.x[r], w.x[k]);
    const double inv = 1.0 / A(k, k);
    for (int i = k + 1; i < p; ++i) A(i, k) *= inv;
    for (int j = k + 1; j < p; ++j) {
      const double akj = A(k, j);
      for (int i = k + 1; i < p; ++i) A(i, j) -= A(i, k) * akj;
    }
    for (int i = k + 1; i < p; ++i) w.x[i] -= A(i, k) * w.x[k];
  }
  for (int k = p - 1; k >= 0; --k) {
    double v = w.x[k];
    for (int j = k + 1; j < p; ++j) v -= A(k, j) * w.x[j];
    w.x[k] = v / A(k, k);
  }
  return w.x.head(p).allFinite();
}

// the polish at z's modes on the formed G (m x m) with g − b = gb: λ in w.lam and σ = Gλ + g − b
// in w.sigma; false where the mode's system is singular or its solution leaves a cone
template <class Cones> bool polish(const Cones& c, const ReservedMatrix& G, const double* gb, const double* z,
                                   PolishWorkspace& w) {
  const double* gb0 = gb;
  const int m = int(G.rows());
  reduce(c, z, w);
  const int p = int(w.unknowns.size()), rB = 3 * c.P + c.L;
  // the bounded rows at a bound hold their bound: g − b + G λ_fixed is the right-hand side (in σ)
  w.sigma.head(m) = Eigen::Map<const Eigen::VectorXd>(gb, m);
  for (int r = 0; r < c.B; ++r)
    if (const int mode = bounded_mode(c, r, z[rB + r]))
      w.sigma.head(m) += (mode < 0 ? c.lower(r) : c.upper(r)) * G.col(rB + r);
  gb = w.sigma.data();
  for (int j = 0; j < p; ++j) {  // G E, column by column
    const PolishWorkspace::Vec& u = w.unknowns[j];
    auto col = w.GE.col(j).head(m);
    col = u.e[0] * G.col(u.r0);
    for (int k = 1; k < u.len; ++k) col += u.e[k] * G.col(u.r0 + k);
  }
  for (int i = 0; i < p; ++i) {  // Cᵀ G E and −Cᵀ(g − b)
    const PolishWorkspace::Vec& e = w.equations[i];
    double r = 0.0;
    for (int k = 0; k < e.len; ++k) r -= e.e[k] * gb[e.r0 + k];
    w.x[i] = r;
    for (int j = 0; j < p; ++j) {
      double v = 0.0;
      for (int k = 0; k < e.len; ++k) v += e.e[k] * w.GE(e.r0 + k, j);
      w.A(i, j) = v;
    }
  }
  if (!solve_in_place(w, p)) return false;
  w.lam.setZero();
  for (int r = 0; r < c.B; ++r)
    if (const int mode = bounded_mode(c, r, z[rB + r])) w.lam[rB + r] = mode < 0 ? c.lower(r) : c.upper(r);
  for (int j = 0; j < p; ++j) {
    const PolishWorkspace::Vec& u = w.unknowns[j];
    for (int k = 0; k < u.len; ++k) w.lam[u.r0 + k] += w.x[j] * u.e[k];
  }
  for (int i = 0; i < c.P; ++i) {  // in the cones (the face's and edge's coefficients ≥ 0)
    if (c.edges && c.edges[i]) {
      if (w.lam[3 * i] < 0 || w.lam[3 * i + 1] < 0) return false;
      continue;
    }
    double t[3] = {w.lam[3 * i], w.lam[3 * i + 1], w.lam[3 * i + 2]};
    c.rotate(i, t, 1.0);
    if (!c.pyramid->inside(c.mu[i], t, 1e-9 * (std::abs(t[0]) + std::abs(t[1]) + std::abs(t[2])))) return false;
  }
  for (int l = 0; l < c.L; ++l)
    if (w.lam[3 * c.P + l] < 0) return false;
  for (int r = 0; r < c.B; ++r)
    if (w.lam[rB + r] < c.lower(r) || w.lam[rB + r] > c.upper(r)) return false;
  w.x.head(m) = Eigen::Map<const Eigen::VectorXd>(gb0, m);  // (gb now points at σ's storage)
  w.sigma.head(m).noalias() = G * w.lam.head(m);
  w.sigma.head(m) += w.x.head(m);
  return true;
}

}  // namespace treedyn
