// Contacts of the convex shapes without a closed form against each other (a cylinder, an ellipsoid or
// a convex mesh against anything but a plane; collision.hpp's collide_ordered calls these), and the
// plane's closed forms for them. As treedyn.sim.convex does them with coal, here in C++ so that a
// step calls no Python:
//   plane–cylinder   on each flat end, the rim's point deepest below the plane and the two rim points
//                    120° from it (a cylinder standing on an end rests on 3 points, lying on its side
//                    on the 2 ends' deepest points; MuJoCo's mjc_PlaneCylinder takes such a triangle)
//   plane–ellipsoid  its support point along −n: x = −D²Rᵀn/‖DRᵀn‖ in its frame, D = diag(radii)
//   plane–mesh       MuJoCo 4.0's points: of the hull's polygons at its deepest vertex, the one facing the
//                    plane, its vertices within the margin, at most 4 (collision.hpp, plane_convex)
//   sphere–ellipsoid the ellipsoid's point nearest the centre, x_i = a_i² y_i/(a_i² + t), t > 0 the root
//                    of Σ (a_i y_i/(a_i² + t))² = 1 by Newton from t = 0 (monotone: the sum is
//                    decreasing and convex in t), exact to rounding; a centre inside: GJK/EPA
//   any other pair   one point from the signed distance of the two shapes by their support functions:
//                    GJK (Gilbert, Johnson, Keerthi 1988; the simplex's nearest point by Johnson's
//                    sub-algorithm over its faces) where they are apart, the expanding polytope (EPA, van
//                    den Bergen 2001) on the Minkowski difference where they overlap: the nearest
//                    points, their midpoint, the normal from the first shape to the second, the depth
//                    (minus the distance where apart), kept above −margin.
// Nothing is allocated but the polytope's vectors, which the caller's thread keeps (thread_local).
#pragma once
#include <Eigen/Core>
#include <Eigen/Geometry>
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

namespace treedyn {
namespace convex {
using Vec3 = Eigen::Vector3d;
using Mat3 = Eigen::Matrix3d;

// kinds as collision.hpp's ShapeKind numbers them
enum Kind : int { kPlane = 0, kSphere = 1, kCapsule = 2, kBox = 3, kCylinder = 4, kEllipsoid = 5, kMesh = 6 };

// a shape at its world pose: size as GeomData's (sphere r; capsule, cylinder (r, half length); box half
// extents; ellipsoid radii), vertices (a mesh's, in its frame)
struct Posed {
  int kind;
  const Mat3& R;
  const Vec3& p;
  const Vec3& size;
  const std::vector<Vec3>* vertices;

  // the support point: the shape's point farthest along d (world)
  Vec3 support(const Vec3& d) const {
    const double dn = d.norm();
    const Vec3 u = dn > 0 ? Vec3(d / dn) : Vec3::UnitX();
    const Vec3 m = R.transpose() * u;  // in the shape's frame
    switch (kind) {
      case kSphere:
        return p + size[0] * u;
      case kCapsule:
        return p + R.col(2) * (m[2] < 0 ? -size[1] : size[1]) + size[0] * u;
      case kBox:
        return p +
               R * Vec3(m[0] < 0 ? -size[0] : size[0], m[1] < 0 ? -size[1] : size[1], m[2] < 0 ? -size[2] : size[2]);
      case kCylinder: {
        const double radial = std::hypot(m[0], m[1]);
        const Vec3 x(radial > 1e-12 ? size[0] * m[0] / radial : 0.0, radial > 1e-12 ? size[0] * m[1] / radial : 0.0,
                     m[2] < 0 ? -size[1] : size[1]);
        return p + R * x;
      }
      case kEllipsoid: {
        const Vec3 Dm = size.cwiseProduct(m);
        return p + R * Vec3(size.cwiseProduct(Dm) / Dm.norm());
      }
      default: {  // kMesh
        const std::vector<Vec3>& V = *vertices;
        std::size_t best = 0;
        double top = -1e300;
        for (std::size_t k = 0; k < V.size(); ++k)
          if (const double s = V[k].dot(m); s > top) top = s, best = k;
        return p + R * V[best];
      }
    }
  }
  // a bound on the shape's extent about p (the tolerances' scale)
  double extent() const {
    if (kind == kMesh) {
      double r = 0;
      for (const Vec3& v : *vertices) r = std::max(r, v.norm());
      return r;
    }
    return size.cwiseAbs().sum();
  }
};

// a point of the Minkowski difference A − B with the two support points it came from
struct Vertex {
  Vec3 w, a, b;
};

inline Vertex support(const Posed& A, const Posed& B, const Vec3& d) {
  Vertex v;
  v.a = A.support(d), v.b = B.support(-d);
  v.w = v.a - v.b;
  return v;
}

// Johnson's sub-algorithm: the point of the hull of S[0..n) nearest the origin, as the nearest of the
// faces' (every non-empty subset's) affine projections whose barycentric coordinates are positive;
// S is reduced to that face, lam holds its coordinates
inline Vec3 nearest_in_simplex(std::array<Vertex, 4>& S, int& n, double* lam) {
  double best = 1e300;
  int best_mask = 0;
  double best_lam[4] = {0, 0, 0, 0};
  for (int mask = 1; mask < (1 << n); ++mask) {
    int idx[4], m = 0;
    for (int k = 0; k < n; ++k)
      if (mask & (1 << k)) idx[m++] = k;
    double l[4] = {1, 0, 0, 0};
    if (m > 1) {  // min ‖P₀ + Σ μ_j (P_j − P₀)‖: (DᵀD) μ = −DᵀP₀
      Eigen::Matrix<double, 3, 3> A;
      Eigen::Vector3d rhs;
      const Vec3& P0 = S[idx[0]].w;
      for (int i = 1; i < m; ++i) {
        const Vec3 Di = S[idx[i]].w - P0;
        rhs[i - 1] = -Di.dot(P0);
        for (int j = 1; j < m; ++j) A(i - 1, j - 1) = Di.dot(S[idx[j]].w - P0);
      }
      const double scale = A.diagonal().head(m - 1).maxCoeff();
      Eigen::Vector3d mu = Eigen::Vector3d::Zero();
      if (m == 2) {
        if (!(A(0, 0) > 1e-28)) continue;
        mu[0] = rhs[0] / A(0, 0);
      } else if (m == 3) {  // (fixed sizes: Eigen's closed-form 2 x 2 and 3 x 3 inverses, no pivoting LU)
        const Eigen::Matrix2d A2 = A.topLeftCorner<2, 2>();
        if (!(std::abs(A2.determinant()) > 1e-12 * scale * scale))
          continue;  // a degenerate face: its sub-faces cover it
        mu.head<2>() = A2.inverse() * rhs.head<2>();
      } else {
        if (!(std::abs(A.determinant()) > 1e-12 * scale * scale * scale)) continue;
        mu = A.inverse() * rhs;
      }
      l[0] = 1.0 - mu.head(m - 1).sum();
      for (int i = 1; i < m; ++i) l[i] = mu[i - 1];
    }
    bool inside = true;
    for (int i = 0; i < m; ++i) inside = inside && l[i] > 0;
    if (!inside) continue;
    Vec3 x = Vec3::Zero();
    for (int i = 0; i < m; ++i) x += l[i] * S[idx[i]].w;
    if (x.squaredNorm() < best) {
      best = x.squaredNorm(), best_mask = mask;
      std::copy(l, l + 4, best_lam);
    }
  }
  std::array<Vertex, 4> kept;
  int m = 0;
  for (int k = 0; k < n; ++k)
    if (best_mask & (1 << k)) lam[m] = best_lam[m], kept[m++] = S[k];
  n = m;
  S = kept;
  Vec3 x = Vec3::Zero();
  for (int i = 0; i < n; ++i) x += lam[i] * S[i].w;
  return x;
}

struct Result {
  bool overlap = false;
  double distance = 0;  // apart: the distance; overlapping: minus the depth
  Vec3 a, b, normal;    // the nearest (deepest) points of A and B, the normal A → B
};

// the polytope of EPA: triangles with outward unit normals and their distances from the origin
struct Face {
  int v[3];
  Vec3 n;
  double d;
};

struct Polytope {
  std::vector<Vertex> V;
  std::vector<Face> F;
  std::vector<std::pair<int, int>> edges;
  bool add_face(int i, int j, int k) {
    Face f{{i, j, k}, (V[j].w - V[i].w).cross(V[k].w - V[i].w), 0};
    const double len = f.n.norm();
    if (!(len > 1e-300)) return false;
    f.n /= len;
    f.d = f.n.dot(V[i].w);
    F.push_back(f);
    return true;
  }
};

// EPA from a tetrahedron around the origin: the face of A − B nearest the origin. The lower bound (the
// nearest face's distance) rises and the upper one (the support along its normal) falls; on a curved
// surface they close geometrically, and past the rounding the polytope degenerates (a nearest face
// below the last one): the iterate with the smallest gap is the answer.
inline bool epa(const Posed& A, const Posed& B, std::array<Vertex, 4> S, double tol, Result& res) {
  thread_local Polytope P;
  P.V.assign(S.begin(), S.end());
  P.F.clear();
  // orient the tetrahedron's faces outwards (away from the fourth vertex)
  const int faces[4][4] = {{0, 1, 2, 3}, {0, 3, 1, 2}, {0, 2, 3, 1}, {1, 3, 2, 0}};
  for (const auto& f : faces) {
    const Vec3 n = (P.V[f[1]].w - P.V[f[0]].w).cross(P.V[f[2]].w - P.V[f[0]].w);
    const bool flip = n.dot(P.V[f[3]].w - P.V[f[0]].w) > 0;
    if (!(flip ? P.add_face(f[0], f[2], f[1]) : P.add_face(f[0], f[1], f[2]))) return false;
  }
  Face kept{};
  double kept_gap = 1e300, last = -1e300;
  for (int it = 0; it < 128 && !P.F.empty(); ++it) {
    std::size_t best = 0;
    for (std::size_t k = 1; k < P.F.size(); ++k)
      if (P.F[k].d < P.F[best].d) best = k;
    const Face f = P.F[best];
    if (f.d < last - tol) break;  // (degenerate: rounding)
    last = f.d;
    const Vertex w = support(A, B, f.n);
    const double gap = w.w.dot(f.n) - f.d;
    if (gap < kept_gap) kept_gap = gap, kept = f;
    if (gap <= tol) break;
    const int iw = int(P.V.size());
    P.V.push_back(w);
    P.edges.clear();  // the horizon: edges of the faces w sees that no other seen face shares
    for (std::size_t k = 0; k < P.F.size();) {
      if (P.F[k].n.dot(w.w - P.V[P.F[k].v[0]].w) > 1e-3 * tol) {  // (nearly coplanar: kept, no sliver faces)
        for (int e = 0; e < 3; ++e) {
          const std::pair<int, int> edge(P.F[k].v[e], P.F[k].v[(e + 1) % 3]);
          const auto twin = std::find(P.edges.begin(), P.edges.end(), std::make_pair(edge.second, edge.first));
          if (twin != P.edges.end())
            P.edges.erase(twin);
          else
            P.edges.push_back(edge);
        }
        P.F[k] = P.F.back();
        P.F.pop_back();
      } else {
        ++k;
      }
    }
    for (const auto& [i, j] : P.edges) P.add_face(i, j, iw);
  }
  if (kept_gap == 1e300) return false;
  const Face& f = kept;  // the origin's projection on the face, in its barycentric coordinates
  const Vec3 x = f.n * f.d, &p0 = P.V[f.v[0]].w, &p1 = P.V[f.v[1]].w, &p2 = P.V[f.v[2]].w;
  const Vec3 n = (p1 - p0).cross(p2 - p0);
  const double nn = n.squaredNorm();
  double l1 = (x - p0).cross(p2 - p0).dot(n) / nn, l2 = (p1 - p0).cross(x - p0).dot(n) / nn;
  l1 = std::clamp(l1, 0.0, 1.0), l2 = std::clamp(l2, 0.0, 1.0 - l1);
  const double l0 = 1.0 - l1 - l2;
  res.overlap = true;
  res.distance = -std::max(f.d, 0.0);
  res.a = l0 * P.V[f.v[0]].a + l1 * P.V[f.v[1]].a + l2 * P.V[f.v[2]].a;
  res.b = l0 * P.V[f.v[0]].b + l1 * P.V[f.v[1]].b + l2 * P.V[f.v[2]].b;
  res.normal = f.n;  // outward of A − B: B moves along it to part
  return true;
}

// grows GJK's final simplex (the origin on it) to a tetrahedron around the origin, for EPA
inline bool tetrahedron(const Posed& A, const Posed& B, std::array<Vertex, 4>& S, int n) {
  static const Vec3 axes[6] = {Vec3::UnitX(),  -Vec3::UnitX(), Vec3::UnitY(),
                               -Vec3::UnitY(), Vec3::UnitZ(),  -Vec3::UnitZ()};
  const double tiny = 1e-12;
  if (n == 1) {
    for (const Vec3& d : axes) {
      S[1] = support(A, B, d);
      if ((S[1].w - S[0].w).norm() > tiny) {
        n = 2;
        break;
      }
    }
    if (n < 2) return false;
  }
  if (n == 2) {
    const Vec3 e = (S[1].w - S[0].w).normalized();
    int least = 0;  // the axis least aligned with the edge, made perpendicular to it
    for (int k = 1; k < 3; ++k)
      if (std::abs(e[k]) < std::abs(e[least])) least = k;
    const Vec3 d0 = e.cross(Vec3::Unit(least)).normalized(), d1 = e.cross(d0);
    for (int k = 0; k < 6 && n < 3; ++k) {
      const double phi = k * 3.14159265358979323846 / 3;
      S[2] = support(A, B, std::cos(phi) * d0 + std::sin(phi) * d1);
      if ((S[2].w - S[0].w).cross(S[1].w - S[0].w).norm() > tiny) n = 3;
    }
    if (n < 3) return false;
  }
  if (n == 3) {
    const Vec3 nrm = (S[1].w - S[0].w).cross(S[2].w - S[0].w);
    for (const double s : {1.0, -1.0}) {
      S[3] = support(A, B, s * nrm);
      if (std::abs((S[3].w - S[0].w).dot(nrm)) > tiny * nrm.norm()) return true;
    }
    return false;
  }
  return true;
}

// EPA's tolerance relative to the shapes' scale: MuJoCo's ccd_tolerance (1e-6) is coal's order too; much
// below it a curved surface's polytope degenerates in rounding before it closes
constexpr double kEpaTolerance = 1e-6;

// the signed distance of A and B: GJK, then EPA where they overlap (false: no answer, degenerate). Where the
// distance is found to be at least cutoff, GJK stops there: res.distance is then that lower bound v·w/|v| (w the
// support of A − B along −v: no point of A − B is nearer the origin along v), the points and normal unset
inline bool signed_distance(const Posed& A, const Posed& B, Result& res,
                            double cutoff = std::numeric_limits<double>::infinity()) {
  const double scale = A.extent() + B.extent() + (A.p - B.p).norm();
  const double eps = 1e-10;
  std::array<Vertex, 4> S;
  int n = 0;
  double lam[4] = {1, 0, 0, 0};
  Vec3 v = A.p - B.p;
  if (v.norm() <= 1e-12 * scale) v = Vec3::UnitX();
  v = support(A, B, -v).w;  // (a point of A − B)
  for (int it = 0; it < 128; ++it) {
    const Vertex w = support(A, B, -v);
    const double vv = v.squaredNorm(), vw = v.dot(w.w);
    if (vw > 0 && vw >= cutoff * std::sqrt(vv)) {  // apart by at least the cutoff
      res.overlap = false, res.distance = vw / std::sqrt(vv);
      return true;
    }
    if (n > 0 && vv - vw <= eps * eps * scale * scale + eps * vv) break;  // no further progress
    bool repeated = false;
    for (int k = 0; k < n; ++k) repeated = repeated || (S[k].w - w.w).norm() <= 1e-14 * scale;
    if (repeated) break;
    S[n++] = w;
    v = nearest_in_simplex(S, n, lam);
    if (n == 4 || v.norm() <= 1e-12 * scale) {  // the origin in A − B: they overlap
      if (!tetrahedron(A, B, S, n)) {
        res.overlap = true, res.distance = 0;  // touching: depth 0 at the shared point
        res.a = res.b = Vec3::Zero();
        for (int k = 0; k < n; ++k) res.a += lam[k] * S[k].a, res.b += lam[k] * S[k].b;
        res.normal = (B.p - A.p).norm() > 0 ? Vec3((B.p - A.p).normalized()) : Vec3::UnitZ();
        return true;
      }
      return epa(A, B, S, kEpaTolerance * scale, res);
    }
  }
  res.overlap = false;
  res.distance = v.norm();
  res.a = res.b = Vec3::Zero();
  for (int k = 0; k < n; ++k) res.a += lam[k] * S[k].a, res.b += lam[k] * S[k].b;
  res.normal = res.distance > 0 ? Vec3(-v / res.distance) : Vec3::UnitZ();
  return true;
}

// the point of the ellipsoid x·diag(a)⁻²·x = 1 nearest y (its frame), y outside it; false for y inside
inline bool ellipsoid_nearest(const Vec3& a, const Vec3& y, Vec3& x) {
  const Vec3 a2 = a.cwiseProduct(a), w = a2.cwiseProduct(y.cwiseProduct(y));
  if (w.cwiseQuotient(a2.cwiseProduct(a2)).sum() <= 1.0) return false;
  double t = 0;
  for (int it = 0; it < 100; ++it) {
    const Vec3 s = a2.array() + t;
    const double F = w.cwiseQuotient(s.cwiseProduct(s)).sum() - 1.0;
    const double dF = -2.0 * w.cwiseQuotient(s.cwiseProduct(s).cwiseProduct(s)).sum();
    const double step = -F / dF;
    t += step;
    if (step <= 4 * 2.220446049250313e-16 * t) break;
  }
  x = a2.cwiseProduct(y).cwiseQuotient(Vec3(a2.array() + t));
  return true;
}

}  // namespace convex
}  // namespace treedyn
