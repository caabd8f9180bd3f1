// Bilateral constraints C(q) = 0: the loop-closing joints (baxter2019 §2.2.5) and the couplings of
// joint coordinates (system.hpp). G = ∂C/∂q is each row's exact velocity Jacobian; a loop row is
// built as a pair of body "wrenches" (w_a, w_b) with Ċ = w_a·φ_a + w_b·φ_b, taken to joint space
// by Jᵀ (Alg. 3). Each row also carries Ġ q̇ (C̈ at q̈ = 0), the bias of the acceleration-level
// constraint G q̈ = −Ġ q̇ that the tree solvers' constrained dynamics use.
//   point rows:  C = e_kᵀ (x_B − x_A), k = x, y, z (world axes)
//   hinge rows:  C = (R_A u)ᵀ(R_B a), C = (R_A w)ᵀ(R_B a), with u, w ⟂ a fixed in frame A
//   universal:   C = (R_A a1)ᵀ(R_B a2) − a1ᵀa2
//   weld rows:   C = the vector part of the quaternion of R_Aᵀ R_B (w ≥ 0): θ/2 to first order for
//                frames that differ by a small rotation θ (in frame A)
// Rows that vanish identically (a planar mechanism's out-of-plane rows) are kept: the dual
// solve drops them by rank (see step.hpp).
#pragma once
#include <Eigen/Geometry>

#include "treedyn/redmax/forces.hpp"

namespace treedyn::redmax {

template <class S> struct LoopRow {
  Force<S> wa, wb;  // Ċ = wa·φ_a + wb·φ_b (loop rows; zero for couplings)
  S C;              // the position error
  S Gdqd;           // Ġ q̇ = C̈ at q̈ = 0
};

// a unit vector perpendicular to a, and a third completing a right-handed frame
template <class S> inline void perpendiculars(const Vec3<S>& a, Vec3<S>& u, Vec3<S>& w) {
  const Vec3<S> t = std::abs(a[0]) < S(0.9) ? Vec3<S>::UnitX() : Vec3<S>::UnitY();
  u = cross(a, t).normalized();
  w = cross(a, u);
}

// The world acceleration of body point x at q̈ = 0: with φ = (ω, v) and J̇q̇ = (ω̇, v̇) in body
// coordinates, ẍ = R (v̇ + ω̇ × x + ω × (v + ω × x)).
template <class S> inline Vec3<S> point_bias(const Data<S>& d, int i, const Vec3<S>& x) {
  const Motion<S>& phi = d.phi[i];
  const Motion<S>& a = d.Jdqd[i];
  const Vec3<S> vx = phi.lin + cross(phi.ang, x);
  return d.X0[i].E.transpose() * Vec3<S>(a.lin + cross(a.ang, x) + cross(phi.ang, vx));
}

// the rows of loop closure c at the poses and rates in d, written to rows[0 .. loop_rows(c.kind))
template <class S> void loop_closure_rows(const LoopClosure<S>& c, const Data<S>& d, LoopRow<S>* rows) {
  const Transform<S>& Xa = d.X0[c.a];
  const Transform<S>& Xb = d.X0[c.b];
  const Vec3<S> dx = world_point(Xb, c.pb) - world_point(Xa, c.pa);
  const Vec3<S> ddx = point_bias(d, c.b, c.pb) - point_bias(d, c.a, c.pa);
  for (int k = 0; k < 3; ++k) {  // point rows
    const Vec3<S> e = Vec3<S>::Unit(k);
    rows[k].wa = point_wrench(Xa, c.pa, Vec3<S>(-e));
    rows[k].wb = point_wrench(Xb, c.pb, e);
    rows[k].C = dx[k];
    rows[k].Gdqd = ddx[k];
  }
  const Mat3<S> RA = Xa.E.transpose() * c.Ra, RB = Xb.E.transpose() * c.Rb;  // frame axes, world
  // world angular velocities and accelerations at q̈ = 0 (the rotation of body coordinates)
  const Vec3<S> wA = Xa.E.transpose() * d.phi[c.a].ang, wB = Xb.E.transpose() * d.phi[c.b].ang;
  const Vec3<S> aA = Xa.E.transpose() * d.Jdqd[c.a].ang, aB = Xb.E.transpose() * d.Jdqd[c.b].ang;
  auto angular = [&](LoopRow<S>& row, const Vec3<S>& uA, const Vec3<S>& vB, S c0) {
    // d/dt (uA·vB) = ω_A·(uA × vB) + ω_B·(vB × uA), ω_world·m = ω_body·(E m)
    const Vec3<S> m = cross(uA, vB);
    row.wa = {mul(Xa.E, m), Vec3<S>::Zero()};
    row.wb = {mul(Xb.E, Vec3<S>(-m)), Vec3<S>::Zero()};
    row.C = dot(uA, vB) - c0;
    // d²/dt² (uA·vB) = üA·vB + 2 u̇A·v̇B + uA·v̈B, u̇ = ω × u, ü = ω̇ × u + ω × (ω × u)
    const Vec3<S> duA = cross(wA, uA), dvB = cross(wB, vB);
    row.Gdqd = dot(Vec3<S>(cross(aA, uA) + cross(wA, duA)), vB) + S(2) * dot(duA, dvB) +
               dot(uA, Vec3<S>(cross(aB, vB) + cross(wB, dvB)));
  };
  if (c.kind == LoopKind::Hinge) {
    Vec3<S> u, w;
    perpendiculars<S>(c.axis, u, w);
    const Vec3<S> aB = RB * c.axis;
    angular(rows[3], Vec3<S>(RA * u), aB, S(0));
    angular(rows[4], Vec3<S>(RA * w), aB, S(0));
  } else if (c.kind == LoopKind::Universal) {
    angular(rows[3], Vec3<S>(RA * c.axis), Vec3<S>(RB * c.axis2), dot(c.axis, c.axis2));
  } else if (c.kind == LoopKind::Weld) {
    // C = v, the vector part of the unit quaternion (w, v) of R = R_Aᵀ R_B with w ≥ 0: sin(θ/2)·axis,
    // zero only where the frames agree (three dot products of axes also vanish at 120° turns).
    // With ω = R_Aᵀ(ω_B − ω_A) (frame A): v̇ = ½(w ω + ω × v), ẇ = −½ v·ω, so Ċ_k = (R_A u_k)·(ω_B − ω_A)
    // with u_k = ½(w e_k + v × e_k), and C̈_k = (ω_A × R_A u_k + R_A u̇_k)·(ω_B − ω_A) + R_A u_k·(ω̇_B − ω̇_A).
    Eigen::Quaternion<S> qe(Mat3<S>(RA.transpose() * RB));
    if (qe.w() < S(0)) qe.coeffs() = -qe.coeffs();
    const S w = qe.w();
    const Vec3<S> v = qe.vec(), dw = wB - wA, da = aB - aA;
    const Vec3<S> om = RA.transpose() * dw;
    const S wdot = -S(0.5) * dot(v, om);
    const Vec3<S> vdot = S(0.5) * (w * om + cross(om, v));
    for (int k = 0; k < 3; ++k) {
      const Vec3<S> e = Vec3<S>::Unit(k);
      const Vec3<S> m = RA * Vec3<S>(S(0.5) * (w * e + cross(v, e)));
      const Vec3<S> dm = cross(wA, m) + RA * Vec3<S>(S(0.5) * (wdot * e + cross(vdot, e)));
      LoopRow<S>& row = rows[3 + k];
      row.wa = {mul(Xa.E, Vec3<S>(-m)), Vec3<S>::Zero()};
      row.wb = {mul(Xb.E, m), Vec3<S>::Zero()};
      row.C = v[k];
      row.Gdqd = dot(dm, dw) + dot(m, da);
    }
  }
}

// L(x) = Σ c_k x[index_k]
template <class S, class V> inline S linear_combination(const std::vector<int>& index, const std::vector<S>& c,
                                                        const V& x) {
  S s = S(0);
  for (size_t k = 0; k < index.size(); ++k) s += c[k] * x[index[k]];
  return s;
}

// coupling c's row at the configuration and rates in d (C, Ġq̇), and p'(x), the leader's factor in G
template <class S> S coupling_row(const Coupling<S>& c, const Data<S>& d, LoopRow<S>& row) {
  row.wa = row.wb = Force<S>::zero();
  const S x = linear_combination(c.q2, c.c2, d.q) - c.x0;
  S p = S(0), dp = S(0), ddp = S(0);
  for (int k = 4; k >= 0; --k) {  // Horner: p, p', p'' together
    ddp = ddp * x + S(2) * dp;
    dp = dp * x + p;
    p = p * x + c.a[k];
  }
  const S xd = linear_combination(c.v2, c.c2, d.qd);
  row.C = linear_combination(c.q1, c.c1, d.q) - c.y0 - (c.q2.empty() ? c.a[0] : p);
  row.Gdqd = c.q2.empty() ? S(0) : -ddp * xd * xd;
  return c.q2.empty() ? S(0) : dp;
}

}  // namespace treedyn::redmax
