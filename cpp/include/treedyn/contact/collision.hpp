// Contact detection between primitive shapes, in closed form: every pair of plane, sphere, capsule
// and box but plane–plane (cylinders, ellipsoids and convex meshes: contact/convex.hpp). collide_pair appends a pair's
// contacts (world point midway between the two surfaces, unit normal from the first geom to the second, depth > 0) to
// the caller's vector (with a margin m, the sum of the two geoms' (MuJoCo's rule, measured on 4.0): the surfaces closer
// than m, depth + m > 0 reported); nothing else is allocated and nothing throws, so the contact step (contact/step.hpp)
// calls it every step and treedyn.sim.collision.collide calls it through _core.collide_geoms.
//   plane–{sphere, capsule, box}   each penetrating sphere, cap centre (<= 2) or corner (<= 4 resting)
//   sphere–{sphere, capsule, box}  nearest points (the box from inside too: its nearest face)
//   capsule–capsule                nearest points of the segments (Ericson, Real-Time Collision
//                                  Detection §5.1.9); parallel and overlapping: the overlap's 2 ends
//   capsule–box                    nearest points of segment and box (the squared distance along the
//                                  segment is convex and piecewise quadratic); inside, the separating
//                                  axes of box and segment; lying along a face: the 2 ends of the
//                                  segment clipped to the face
//   box–box                        separating axes (15: 3 + 3 faces, 9 edge crosses; Gottschalk et al.,
//                                  OBBTree, 1996), faces preferred; a face axis gives a patch: the
//                                  incident face clipped to the reference face's sides (Sutherland–
//                                  Hodgman), up to 8 points; an edge axis 1 point
#pragma once
#include <Eigen/Core>
#include <Eigen/Geometry>  // cross
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

#include "treedyn/contact/convex.hpp"
#include "treedyn/contact/soft.hpp"

namespace treedyn {
enum class ShapeKind : int { Plane = 0, Sphere = 1, Capsule = 2, Box = 3, Cylinder = 4, Ellipsoid = 5, Mesh = 6 };

// a convex mesh's faces as MuJoCo keeps them: its hull's triangles merged into polygons (edge neighbours whose
// normals agree), each polygon's unit normal and vertices, and each vertex's polygons (CSR: polygon p's vertices are
// vertex[vertex_start[p]] .. vertex[vertex_start[p + 1] − 1], vertex v's polygons polygon[polygon_start[v]] ..)
struct HullPolygons {
  std::vector<Eigen::Vector3d> normal;
  std::vector<int> vertex_start, vertex, polygon_start, polygon;
};
// the polygons of the hull V whose triangles are faces (nf × 3 vertex indices in [0, V), wound outwards); two
// triangles sharing an edge are one polygon where their normals' cosine exceeds 1 − 1e-6 (0.08°). MuJoCo groups
// triangles by their normals' spherical angles rounded to 0.01 rad in its own frame of the mesh (its principal axes,
// not the geom's): no rule in the geom's frame can be its; this one gives its plane–mesh points on the feet of
// Solo-12 and Go2 in every configuration tried, on TALOS's soles in 13 of 20 (tests/io/test_io_mesh_robots.py)
inline std::shared_ptr<const HullPolygons> hull_polygons(const std::vector<Eigen::Vector3d>& V, const int* faces,
                                                         int nf) {
  std::vector<Eigen::Vector3d> n(nf);
  for (int f = 0; f < nf; ++f) {
    const Eigen::Vector3d &a = V[faces[3 * f]], &b = V[faces[3 * f + 1]], &c = V[faces[3 * f + 2]];
    n[f] = (b - a).cross(c - a).normalized();
  }
  std::vector<int> root(nf);  // union–find over the triangles
  for (int f = 0; f < nf; ++f) root[f] = f;
  auto find = [&](int f) {
    while (root[f] != f) f = root[f] = root[root[f]];
    return f;
  };
  std::vector<std::array<int, 3>> edges;  // (lower vertex, upper vertex, triangle)
  for (int f = 0; f < nf; ++f)
    for (int k = 0; k < 3; ++k) {
      const int a = faces[3 * f + k], b = faces[3 * f + (k + 1) % 3];
      edges.push_back({std::min(a, b), std::max(a, b), f});
    }
  std::sort(edges.begin(), edges.end());
  for (std::size_t e = 1; e < edges.size(); ++e)
    if (edges[e][0] == edges[e - 1][0] && edges[e][1] == edges[e - 1][1] &&
        n[edges[e][2]].dot(n[edges[e - 1][2]]) > 1.0 - 1e-6)
      root[find(edges[e][2])] = find(edges[e - 1][2]);
  auto out = std::make_shared<HullPolygons>();
  std::vector<int> id(nf, -1);
  std::vector<std::vector<int>> members;
  for (int f = 0; f < nf; ++f) {
    int& r = id[find(f)];
    if (r < 0) r = int(members.size()), members.emplace_back(), out->normal.push_back(n[find(f)]);
    for (int k = 0; k < 3; ++k) members[r].push_back(faces[3 * f + k]);
  }
  out->vertex_start.push_back(0);
  for (auto& m : members) {
    std::sort(m.begin(), m.end());
    m.erase(std::unique(m.begin(), m.end()), m.end());
    out->vertex.insert(out->vertex.end(), m.begin(), m.end());
    out->vertex_start.push_back(int(out->vertex.size()));
  }
  out->polygon_start.assign(V.size() + 1, 0);
  for (int v : out->vertex) ++out->polygon_start[v + 1];
  for (std::size_t v = 0; v < V.size(); ++v) out->polygon_start[v + 1] += out->polygon_start[v];
  out->polygon.resize(out->vertex.size());
  std::vector<int> next(out->polygon_start.begin(), out->polygon_start.end() - 1);
  for (int p = 0; p + 1 < int(out->vertex_start.size()); ++p)
    for (int k = out->vertex_start[p]; k < out->vertex_start[p + 1]; ++k) out->polygon[next[out->vertex[k]]++] = p;
  return out;
}
struct GeomData {
  ShapeKind kind;
  int body;
  Eigen::Matrix3d R;  // placement in the body's frame
  Eigen::Vector3d p;
  Eigen::Vector3d size;  // sphere (r, 0, 0); capsule, cylinder (r, half_length, 0); box half extents; ellipsoid
                         // radii; plane, mesh unused
  std::shared_ptr<const std::vector<Eigen::Vector3d>> vertices;  // a convex mesh's, in the geom's frame
  double radius = 0.0;  // a convex mesh's: its vertices' largest distance from the geom's origin
  std::shared_ptr<const HullPolygons> polygons;  // and its faces (null: not given)
  double friction;
  double margin = 0.0;  // a pair (the sum of the two, as MuJoCo 4.0) touches closer than this, at depth + margin
  int condim = 3;       // MuJoCo's: 4 adds torsional friction (spin), 6 rolling friction too (roll)
  double spin = 0.0, roll = 0.0;
};
struct ContactPoint {
  int geom[2];
  int body[2];
  Eigen::Vector3d point;   // world point midway between the two surfaces
  Eigen::Vector3d normal;  // unit, from geom[0] towards geom[1]
  double depth;            // > 0: penetration (plus the pair's margin)
  double friction;         // max of the two geoms' (MuJoCo's rule)
  Softness soft;           // its solref, solimp (ContactOptions::soft: contact/soft.hpp)
  // MuJoCo's pyramid (step.hpp, split_pyramids): 0, 1 the edges n ± μ t₁, n ± μ t₂; 2 the torsional
  // edges n ± μ_spin n (n an angular direction), 3, 4 the rolling ones n ± μ_roll t₁, t₂ (angular)
  int half = -1;
  Eigen::Vector3d tangent = Eigen::Vector3d::Zero();  // MuJoCo's t₁ hint (plane–capsule: the axis), or 0
  int dim = 3;                    // MuJoCo's condim of the pair: 1, 3, 4 (torsional friction), 6 (and rolling)
  double spin = 0.0, roll = 0.0;  // the torsional and rolling friction coefficients (dim 4, 6)
};

namespace collision_detail {
using Vec3 = Eigen::Vector3d;
using Mat3 = Eigen::Matrix3d;

// sin of the angle under which a capsule counts as parallel to a capsule or to a box's face (each of
// the 2 points then has its own exact depth; two nearly parallel capsules' deepest point may lie
// between them: at most (1e-3 L)² / 8d deeper, L the overlap, d the centres' distance)
constexpr double kParallel = 1e-3;
// an axis replaces the best one so far (order: a's faces, b's faces, the edge crosses) only when its
// overlap is smaller by this fraction: exact and rounding ties (boxes stacked face to face, whose
// edge crosses are their faces' normal) keep a face, and a patch
constexpr double kFaceBias = 1e-6;
// an edge cross within 0.01 rad of a face normal is left to that face's axis: boxes resting face to
// face, one turned about the normal and tilted by θ, have edge crosses θ from the normal, whose overlap
// differs from the face's by O(h θ) either way: a single edge point there would let the top box twist
constexpr double kFaceCos = 0.99995;  // cos 0.01

// appends contacts in the caller's (geom, body) order; the closed forms below take the shapes in the
// order of ShapeKind, sign −1 when that is the caller's reversed (normals flipped)
struct Sink {
  std::vector<ContactPoint>& out;
  int geom[2], body[2];
  double friction, sign;
  double margin;  // the closed forms keep depth > −margin and report depth + margin (MuJoCo's dist − margin)
  void add(const Vec3& point, const Vec3& normal, double depth) const {
    out.push_back({{geom[0], geom[1]}, {body[0], body[1]}, point, sign * normal, depth + margin, friction});
  }
};

inline double sgn(double x) { return x < 0 ? -1.0 : 1.0; }

// two spheres: normal c1 → c2 (+z when the centres coincide)
inline void spheres(const Sink& s, const Vec3& c1, double r1, const Vec3& c2, double r2) {
  const Vec3 d = c2 - c1;
  const double dist = d.norm(), depth = r1 + r2 - dist;
  if (!(depth > -s.margin)) return;
  const Vec3 n = dist > 1e-12 ? Vec3(d / dist) : Vec3::UnitZ();
  s.add(c1 + n * (r1 - 0.5 * depth), n, depth);
}

// a sphere (r = 0: a point) against the plane through p0 with normal n (normal n)
inline void plane_sphere(const Sink& s, const Vec3& n, const Vec3& p0, const Vec3& c, double r) {
  const double dist = n.dot(c - p0), depth = r - dist;
  if (depth > -s.margin) s.add(c - n * (0.5 * (r + dist)), n, depth);
}

// the parameter t ∈ [0, 1] of the point of segment a + t d nearest to x
inline double segment_point(const Vec3& a, const Vec3& d, const Vec3& x) {
  const double dd = d.squaredNorm();
  return dd > 0 ? std::clamp((x - a).dot(d) / dd, 0.0, 1.0) : 0.0;
}

// the parameters (s, t) ∈ [0, 1]² of the nearest points of segments p1 + s d1, p2 + t d2 (Ericson §5.1.9)
inline void segment_segment(const Vec3& p1, const Vec3& d1, const Vec3& p2, const Vec3& d2, double& s, double& t) {
  const Vec3 r = p1 - p2;
  const double a = d1.squaredNorm(), e = d2.squaredNorm(), f = d2.dot(r), c = d1.dot(r), b = d1.dot(d2);
  const double denom = a * e - b * b;
  s = denom > 1e-14 * a * e ? std::clamp((b * f - c * e) / denom, 0.0, 1.0) : 0.0;
  t = e > 0 ? (b * s + f) / e : 0.0;
  if (t < 0) {
    t = 0;
    s = a > 0 ? std::clamp(-c / a, 0.0, 1.0) : 0.0;
  } else if (t > 1) {
    t = 1;
    s = a > 0 ? std::clamp((b - c) / a, 0.0, 1.0) : 0.0;
  }
}

// a capsule's segment: from its first cap centre x0, direction d (x0 + d the other)
inline void capsule_segment(const Mat3& R, const Vec3& p, const Vec3& size, Vec3& x0, Vec3& d) {
  d = R.col(2) * (2 * size[1]);
  x0 = p - 0.5 * d;
}

inline void sphere_capsule(const Sink& s, const Vec3& c, double r, const Mat3& R, const Vec3& p, const Vec3& size) {
  Vec3 x0, d;
  capsule_segment(R, p, size, x0, d);
  spheres(s, c, r, x0 + segment_point(x0, d, c) * d, size[0]);
}

inline void capsule_capsule(const Sink& s, const Mat3& Ra, const Vec3& pa, const Vec3& sa, const Mat3& Rb,
                            const Vec3& pb, const Vec3& sb) {
  Vec3 a0, da, b0, db;
  capsule_segment(Ra, pa, sa, a0, da);
  capsule_segment(Rb, pb, sb, b0, db);
  const double aa = da.squaredNorm(), bb = db.squaredNorm();
  if (da.cross(db).squaredNorm() <= kParallel * kParallel * aa * bb) {
    // parallel: b's ends projected on a's segment; where they overlap, each end of the overlap
    double t0 = (b0 - a0).dot(da) / aa, t1 = (b0 + db - a0).dot(da) / aa;
    if (t0 > t1) std::swap(t0, t1);
    t0 = std::max(t0, 0.0);
    t1 = std::min(t1, 1.0);
    if (t1 - t0 > 1e-9) {
      for (const double t : {t0, t1}) {
        const Vec3 x = a0 + t * da;
        spheres(s, x, sa[0], b0 + segment_point(b0, db, x) * db, sb[0]);
      }
      return;
    }
  }
  double u, v;
  segment_segment(a0, da, b0, db, u, v);
  spheres(s, a0 + u * da, sa[0], b0 + v * db, sb[0]);
}

// sphere (first) against box (second): the normal computed box → sphere, added flipped
inline void sphere_box(const Sink& s, const Vec3& c, double r, const Mat3& R, const Vec3& p, const Vec3& h) {
  const Vec3 x = R.transpose() * (c - p);
  const Vec3 y = x.cwiseMax(-h).cwiseMin(h);  // the box's point nearest the centre
  const Vec3 e = x - y;
  const double dist = e.norm();
  if (dist > 0) {  // outside
    const double depth = r - dist;
    if (!(depth > -s.margin)) return;
    const Vec3 n = R * (e / dist);
    s.add(c - n * (0.5 * (r + dist)), -n, depth);
    return;
  }
  int k = 0;  // inside: the nearest face
  for (int i = 1; i < 3; ++i)
    if (h[i] - std::abs(x[i]) < h[k] - std::abs(x[k])) k = i;
  const double gap = h[k] - std::abs(x[k]), depth = r + gap;
  const Vec3 n = R.col(k) * sgn(x[k]);
  s.add(c + n * (0.5 * (gap - r)), -n, depth);
}

// capsule (first) against box (second), in the box's frame: the segment x(t) = A + t D; normals
// computed box → capsule (nl, in the box's frame), added flipped and in world coordinates
inline void capsule_box(const Sink& s, const Mat3& Rc, const Vec3& pc, const Vec3& sc, const Mat3& R, const Vec3& p,
                        const Vec3& h) {
  const double r = sc[0];
  Vec3 x0, d;
  capsule_segment(Rc, pc, sc, x0, d);
  const Vec3 A = R.transpose() * (x0 - p), D = R.transpose() * d;
  auto emit = [&](const Vec3& x, const Vec3& nl, double depth) {  // x: the segment's point
    const Vec3 n = R * nl;
    s.add(R * x + p - n * (r - 0.5 * depth), -n, depth);
  };
  // the segment lying along face k (side σ): the ends of its part over the face, each its own depth;
  // false when it has no such part
  auto along_face = [&](int k, double sigma) {
    if (std::abs(D[k]) > kParallel * D.norm()) return false;
    double t0 = 0, t1 = 1;
    for (int j = 0; j < 3; ++j) {
      if (j == k) continue;
      if (D[j] == 0) {
        if (std::abs(A[j]) > h[j]) return false;
        continue;
      }
      double ta = (-h[j] - A[j]) / D[j], tb = (h[j] - A[j]) / D[j];
      if (ta > tb) std::swap(ta, tb);
      t0 = std::max(t0, ta);
      t1 = std::min(t1, tb);
    }
    if (!(t1 - t0 > 1e-9)) return false;
    const Vec3 nl = sigma * Vec3::Unit(k);
    for (const double t : {t0, t1}) {
      const Vec3 x = A + t * D;
      const double depth = r - (sigma * x[k] - h[k]);
      if (depth > -s.margin) emit(x, nl, depth);
    }
    return true;
  };
  // nearest points: |x(t) − clamp(x(t))|² is convex and quadratic between the t where a coordinate
  // crosses ±h; each piece's minimum in closed form
  double ts[8];
  int m = 0;
  ts[m++] = 0;
  ts[m++] = 1;
  for (int i = 0; i < 3; ++i)
    if (D[i] != 0)
      for (const double side : {-1.0, 1.0}) {
        const double t = (side * h[i] - A[i]) / D[i];
        if (t > 0 && t < 1) ts[m++] = t;
      }
  std::sort(ts, ts + m);
  double best = std::numeric_limits<double>::infinity(), tbest = 0;
  for (int k = 0; k + 1 < m; ++k) {
    const double lo = ts[k], hi = ts[k + 1], mid = 0.5 * (lo + hi);
    double qa = 0, qb = 0;
    for (int i = 0; i < 3; ++i) {
      const double xm = A[i] + mid * D[i];
      if (xm > h[i] || xm < -h[i]) {
        const double c = A[i] - (xm > h[i] ? h[i] : -h[i]);
        qa += D[i] * D[i];
        qb += c * D[i];
      }
    }
    const double t = qa > 0 ? std::clamp(-qb / qa, lo, hi) : lo;
    const Vec3 x = A + t * D;
    const double f = (x - x.cwiseMax(-h).cwiseMin(h)).squaredNorm();
    if (f < best) best = f, tbest = t;
  }
  const double dist = std::sqrt(best);
  if (dist > 1e-12 * h.maxCoeff()) {  // outside
    if (!(r - dist > -s.margin)) return;
    const Vec3 x = A + tbest * D;
    const Vec3 nl = (x - x.cwiseMax(-h).cwiseMin(h)) / dist;
    int k;
    nl.cwiseAbs().maxCoeff(&k);
    if (std::abs(nl[k]) >= 1 - 1e-9 && along_face(k, sgn(nl[k]))) return;
    emit(x, nl, r - dist);
    return;
  }
  // the segment meets the box: separating axes of box and segment (the box's faces, its edges × the
  // segment); the capsule's depth is the segment's plus r
  double overlap = std::numeric_limits<double>::infinity();
  Vec3 nl = Vec3::UnitZ();
  int face = -1;
  for (int i = 0; i < 6; ++i) {
    Vec3 u = Vec3::Unit(i % 3);
    if (i >= 3) {
      u = u.cross(D);
      const double len = u.norm();
      if (len <= 1e-9 * D.norm()) continue;
      u /= len;
    }
    const double rb = h.dot(u.cwiseAbs()), a0 = u.dot(A), a1 = u.dot(A + D);
    const double up = rb - std::min(a0, a1), down = rb + std::max(a0, a1);  // moving the capsule along ±u
    const double o = std::min(up, down);
    if (i < 3 ? o < overlap : o < (1 - kFaceBias) * overlap) {
      overlap = o;
      nl = up <= down ? u : Vec3(-u);
      face = i < 3 ? i : -1;
    }
  }
  if (face >= 0 && along_face(face, sgn(nl[face]))) return;
  const Vec3 x = nl.dot(A) <= nl.dot(A + D) ? A : Vec3(A + D);  // the segment's end deepest along −nl
  emit(x, nl, overlap + r);
}

// a's contacts with b, normals a → b
inline void box_box(const Sink& s, const Mat3& Ra, const Vec3& pa, const Vec3& ha, const Mat3& Rb, const Vec3& pb,
                    const Vec3& hb) {
  const Vec3 t = pb - pa;
  const Mat3 C = Ra.transpose() * Rb, absC = C.cwiseAbs();  // C(i, j) = a_i · b_j
  const Vec3 ta = Ra.transpose() * t, tb = Rb.transpose() * t;
  double best = std::numeric_limits<double>::infinity();
  int axis = -1;
  Vec3 L = Vec3::Zero();
  for (int i = 0; i < 3; ++i) {  // a's faces
    const double o = ha[i] + hb.dot(absC.row(i)) - std::abs(ta[i]);
    if (o < -s.margin) return;
    if (o < best) best = o, axis = i;
  }
  for (int j = 0; j < 3; ++j) {  // b's faces
    const double o = ha.dot(absC.col(j)) + hb[j] - std::abs(tb[j]);
    if (o < -s.margin) return;
    if (o < (1 - kFaceBias) * best) best = o, axis = 3 + j;
  }
  for (int i = 0; i < 3; ++i)  // the edge crosses a_i × b_j
    for (int j = 0; j < 3; ++j) {
      Vec3 u = Ra.col(i).cross(Rb.col(j));
      const double len = u.norm();
      if (len < 1e-6) continue;  // parallel edges: a face axis covers it
      u /= len;
      const double near_face =
          std::max((Ra.transpose() * u).cwiseAbs().maxCoeff(), (Rb.transpose() * u).cwiseAbs().maxCoeff());
      if (near_face > kFaceCos) continue;
      const double o =
          ha.dot((Ra.transpose() * u).cwiseAbs()) + hb.dot((Rb.transpose() * u).cwiseAbs()) - std::abs(u.dot(t));
      if (o < -s.margin) return;
      if (o < (1 - kFaceBias) * best) best = o, axis = 6 + 3 * i + j, L = u;
    }
  if (axis >= 6) {  // edge–edge: the nearest points of the two supporting edges, one point
    if (L.dot(t) < 0) L = -L;
    const int i = (axis - 6) / 3, j = (axis - 6) % 3;
    Vec3 ea = pa - ha[i] * Ra.col(i), eb = pb - hb[j] * Rb.col(j);
    for (int k = 0; k < 3; ++k) {
      if (k != i) ea += sgn(L.dot(Ra.col(k))) * ha[k] * Ra.col(k);
      if (k != j) eb -= sgn(L.dot(Rb.col(k))) * hb[k] * Rb.col(k);
    }
    const Vec3 da = 2 * ha[i] * Ra.col(i), db = 2 * hb[j] * Rb.col(j);
    double u, v;
    segment_segment(ea, da, eb, db, u, v);
    s.add(0.5 * (ea + u * da + eb + v * db), L, best);
    return;
  }
  // a face: the reference box's face with outward normal m, the other box's face most anti-parallel
  // to m clipped to the reference face's 4 sides; each point below the face, midway to its projection
  const bool ref_a = axis < 3;
  const int k = ref_a ? axis : axis - 3;
  const Mat3 &Rr = ref_a ? Ra : Rb, &Ri = ref_a ? Rb : Ra;
  const Vec3 &pr = ref_a ? pa : pb, &pi = ref_a ? pb : pa, &hr = ref_a ? ha : hb, &hi = ref_a ? hb : ha;
  const Vec3 m = Rr.col(k) * sgn((pi - pr).dot(Rr.col(k)));
  const Vec3 normal = ref_a ? m : Vec3(-m);
  const Vec3 mi = Ri.transpose() * m;
  int f;
  mi.cwiseAbs().maxCoeff(&f);
  const int fu = (f + 1) % 3, fv = (f + 2) % 3;
  const Vec3 c = pi - sgn(mi[f]) * hi[f] * Ri.col(f), U = hi[fu] * Ri.col(fu), V = hi[fv] * Ri.col(fv);
  Vec3 poly[2][8] = {{c + U + V, c - U + V, c - U - V, c + U - V}};
  int n = 4, cur = 0;
  const double tol = 1e-9 * hr.maxCoeff();  // flush faces (turned by rounding) clip as flush: the same points both ways
  for (int side = 0; side < 4 && n > 0; ++side) {  // Sutherland–Hodgman: keep w·(x − pr) <= hr_w
    const int j = side < 2 ? (k + 1) % 3 : (k + 2) % 3;
    const Vec3 w = (side % 2 ? -1.0 : 1.0) * Rr.col(j);
    const Vec3* in = poly[cur];
    Vec3* outp = poly[1 - cur];
    int count = 0;
    for (int e = 0; e < n; ++e) {
      const Vec3 &x = in[e], &y = in[(e + 1) % n];
      const double dx = w.dot(x - pr) - hr[j], dy = w.dot(y - pr) - hr[j];
      if (dx <= tol) {
        if (count < 8) outp[count++] = x;
        if (dy > tol && dx < 0 && count < 8) outp[count++] = x + (dx / (dx - dy)) * (y - x);
      } else if (dy < 0 && count < 8) {
        outp[count++] = x + (dx / (dx - dy)) * (y - x);
      }
    }
    n = count;
    cur = 1 - cur;
  }
  const Vec3 top = pr + hr[k] * m;                             // a point of the reference face
  const double same = 1e-9 * (hr.maxCoeff() + hi.maxCoeff());  // a corner met twice (faces flush): once
  for (int e = 0; e < n; ++e) {
    const Vec3& x = poly[cur][e];
    bool seen = false;
    for (int o = 0; o < e && !seen; ++o) seen = (poly[cur][o] - x).cwiseAbs().maxCoeff() <= same;
    const double depth = m.dot(top - x);
    if (depth > -s.margin && !seen) s.add(x + (0.5 * depth) * m, normal, depth);
  }
}

// a plane (normal n through p0) against a cylinder, an ellipsoid or a convex mesh (contact/convex.hpp): points x of
// the shape at signed distance d < margin from the plane, each midway x − d n / 2
inline void plane_convex(const Sink& s, const Vec3& n, const Vec3& p0, const GeomData& b, const Mat3& Rb,
                         const Vec3& pb) {
  auto add = [&](const Vec3& x) {
    const double d = n.dot(x - p0);
    if (d < s.margin) s.add(x - 0.5 * d * n, n, -d);
  };
  if (b.kind == ShapeKind::Cylinder) {  // 3 rim points on each end, the first the deepest
    const Vec3 a = Rb.col(2), u = n - n.dot(a) * a;
    const Vec3 e1 = u.norm() > 1e-9 ? Vec3(-u / u.norm()) : Vec3(Rb.col(0)), e2 = a.cross(e1);
    const double r = b.size[0], third = 2 * 3.14159265358979323846 / 3;
    for (const double end : {-1.0, 1.0})
      for (const double phi : {0.0, third, -third})
        add(pb + end * b.size[1] * a + r * (std::cos(phi) * e1 + std::sin(phi) * e2));
    return;
  }
  if (b.kind == ShapeKind::Ellipsoid) {  // the support point along −n
    const Vec3 m = b.size.cwiseProduct(Rb.transpose() * n);
    return add(pb + Rb * Vec3(-b.size.cwiseProduct(m) / m.norm()));
  }
  // a mesh: MuJoCo 4.0's points (measured against mj_forward): of the polygons at its deepest vertex a, the one whose
  // normal is nearest −n, its vertices within the margin (every vertex within it where the faces are not given); of
  // more than 4, the deepest a, the farthest from it b and the farthest on either side of the line ab
  const double centre = n.dot(pb - p0);
  if (centre - b.radius >= s.margin) return;  // (its bounding sphere clear of the plane)
  const std::vector<Vec3>& V = *b.vertices;
  const Vec3 down = Rb.transpose() * n;  // (n in the geom's frame: a vertex's distance is centre + down·v)
  int a = 0;
  double lowest = down.dot(V[0]);
  for (int j = 1; j < int(V.size()); ++j)
    if (const double d = down.dot(V[j]); d < lowest) a = j, lowest = d;
  if (!(centre + lowest < s.margin)) return;
  thread_local std::vector<int> near;
  near.clear();
  auto within = [&](int j) {
    if (centre + down.dot(V[j]) < s.margin) near.push_back(j);
  };
  if (const HullPolygons* P = b.polygons.get(); P && P->polygon_start[a] < P->polygon_start[a + 1]) {
    int face = P->polygon[P->polygon_start[a]];
    for (int k = P->polygon_start[a] + 1; k < P->polygon_start[a + 1]; ++k)
      if (P->normal[P->polygon[k]].dot(down) < P->normal[face].dot(down)) face = P->polygon[k];
    for (int k = P->vertex_start[face]; k < P->vertex_start[face + 1]; ++k) within(P->vertex[k]);
  } else {
    for (int j = 0; j < int(V.size()); ++j) within(j);
  }
  if (near.size() <= 4) {
    for (const int j : near) add(pb + Rb * V[j]);
    return;
  }
  auto flat = [&](int j) {  // x_j − x_a in the plane
    const Vec3 x = Rb * (V[j] - V[a]);
    return Vec3(x - n.dot(x) * n);
  };
  int far = a;
  double reach = 0.0;
  for (const int j : near)
    if (const double r = flat(j).squaredNorm(); r > reach) far = j, reach = r;
  const Vec3 side = n.cross(flat(far));
  int left = a, right = a;
  double most = 0.0, least = 0.0;
  for (const int j : near) {
    const double t = side.dot(flat(j));
    if (t > most) left = j, most = t;
    if (t < least) right = j, least = t;
  }
  add(pb + Rb * V[a]);
  if (far != a) add(pb + Rb * V[far]);
  if (left != a && left != far) add(pb + Rb * V[left]);
  if (right != a && right != far) add(pb + Rb * V[right]);
}

// two shapes, one without a closed form (contact/convex.hpp): a sphere against an ellipsoid by the nearest
// point, else the signed distance by GJK/EPA; one point
inline void convex_pair(const Sink& s, const GeomData& a, const Mat3& Ra, const Vec3& pa, const GeomData& b,
                        const Mat3& Rb, const Vec3& pb) {
  if (a.kind == ShapeKind::Sphere && b.kind == ShapeKind::Ellipsoid) {
    Vec3 x;
    if (convex::ellipsoid_nearest(b.size, Rb.transpose() * (pa - pb), x)) {
      Vec3 n = Rb * x.cwiseQuotient(b.size.cwiseProduct(b.size));  // ellipsoid → sphere
      n.normalize();
      const Vec3 xw = Rb * x + pb;
      const double dist = n.dot(pa - xw) - a.size[0];
      if (dist < s.margin) s.add(xw + 0.5 * dist * n, -n, -dist);
      return;
    }
  }
  const convex::Posed A{int(a.kind), Ra, pa, a.size, a.vertices.get()},
      B{int(b.kind), Rb, pb, b.size, b.vertices.get()};
  convex::Result r;
  if (!convex::signed_distance(A, B, r, s.margin) || !(r.distance < s.margin)) return;
  s.add(0.5 * (r.a + r.b), r.normal, -r.distance);
}

// the closed forms, shapes in the order of ShapeKind (a.kind <= b.kind)
inline void collide_ordered(const Sink& s, const GeomData& a, const Mat3& Ra, const Vec3& pa, const GeomData& b,
                            const Mat3& Rb, const Vec3& pb) {
  switch (a.kind) {
    case ShapeKind::Plane: {
      const Vec3 n = Ra.col(2);
      if (b.kind >= ShapeKind::Cylinder) return plane_convex(s, n, pa, b, Rb, pb);
      if (b.kind == ShapeKind::Sphere) {
        plane_sphere(s, n, pa, pb, b.size[0]);
      } else if (b.kind == ShapeKind::Capsule) {
        const Vec3 e = Rb.col(2) * b.size[1];
        const std::size_t first = s.out.size();
        plane_sphere(s, n, pa, pb - e, b.size[0]);
        plane_sphere(s, n, pa, pb + e, b.size[0]);
        for (std::size_t k = first; k < s.out.size(); ++k) s.out[k].tangent = Rb.col(2);  // (MuJoCo's frame)
      } else if (b.kind == ShapeKind::Box) {
        for (int c = 0; c < 8; ++c) {
          const Vec3 corner(c & 1 ? b.size[0] : -b.size[0], c & 2 ? b.size[1] : -b.size[1],
                            c & 4 ? b.size[2] : -b.size[2]);
          plane_sphere(s, n, pa, pb + Rb * corner, 0.0);
        }
      }
      return;
    }
    default:
      break;
  }
  if (b.kind >= ShapeKind::Cylinder) return convex_pair(s, a, Ra, pa, b, Rb, pb);
  switch (a.kind) {
    case ShapeKind::Sphere:
      if (b.kind == ShapeKind::Sphere) spheres(s, pa, a.size[0], pb, b.size[0]);
      if (b.kind == ShapeKind::Capsule) sphere_capsule(s, pa, a.size[0], Rb, pb, b.size);
      if (b.kind == ShapeKind::Box) sphere_box(s, pa, a.size[0], Rb, pb, b.size);
      return;
    case ShapeKind::Capsule:
      if (b.kind == ShapeKind::Capsule) capsule_capsule(s, Ra, pa, a.size, Rb, pb, b.size);
      if (b.kind == ShapeKind::Box) capsule_box(s, Ra, pa, a.size, Rb, pb, b.size);
      return;
    case ShapeKind::Box:
      box_box(s, Ra, pa, a.size, Rb, pb, b.size);
      return;
    default:
      return;
  }
}
}  // namespace collision_detail

// contacts of geoms a (index ia) and b (index ib), whose world poses are (Ra, pa), (Rb, pb) (the geom's
// own world rotation/position, already composed with its body's pose), appended to out
// (friction, margin: the pair's own where given (not NaN): an explicit pair's, a frictionless pair's)
inline void collide_pair(const GeomData& a, int ia, const Eigen::Matrix3d& Ra, const Eigen::Vector3d& pa,
                         const GeomData& b, int ib, const Eigen::Matrix3d& Rb, const Eigen::Vector3d& pb,
                         std::vector<ContactPoint>& out, double friction = std::nan(""), double margin = std::nan("")) {
  const bool swap = static_cast<int>(a.kind) > static_cast<int>(b.kind);
  const collision_detail::Sink s{out,
                                 {ia, ib},
                                 {a.body, b.body},
                                 std::isnan(friction) ? std::max(a.friction, b.friction) : friction,
                                 swap ? -1.0 : 1.0,
                                 std::isnan(margin) ? a.margin + b.margin : margin};
  if (swap)
    collision_detail::collide_ordered(s, b, Rb, pb, a, Ra, pa);
  else
    collision_detail::collide_ordered(s, a, Ra, pa, b, Rb, pb);
}
}  // namespace treedyn
