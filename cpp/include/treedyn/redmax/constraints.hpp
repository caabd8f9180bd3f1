// Loop-closing constraints G q̇ = 0 (baxter2019 §2.2.5). Each row is a position function C(q)
// of the two frames and G = ∂C/∂q is its exact velocity Jacobian, built as a pair of body
// "wrenches" (w_a, w_b) with Ċ = w_a·φ_a + w_b·φ_b, then taken to joint space by Jᵀ (Alg. 3):
//   point rows:  C = e_kᵀ (x_B − x_A), k = x, y, z (world axes)
//   hinge rows:  C = (R_A u)ᵀ(R_B a), C = (R_A w)ᵀ(R_B a), with u, w ⟂ a fixed in frame A
//   universal:   C = (R_A a1)ᵀ(R_B a2) − a1ᵀa2
// Rows that vanish identically (a planar mechanism's out-of-plane rows) are kept: the dual
// solve drops them by rank (see step.hpp).
#pragma once
#include "treedyn/redmax/forces.hpp"

namespace treedyn::redmax {

template <class S> struct LoopRow {
  Force<S> wa, wb;  // Ċ = wa·φ_a + wb·φ_b
  S C;              // the position error
};

// a unit vector perpendicular to a, and a third completing a right-handed frame
template <class S> inline void perpendiculars(const Vec3<S>& a, Vec3<S>& u, Vec3<S>& w) {
  const Vec3<S> t = std::abs(a[0]) < S(0.9) ? Vec3<S>::UnitX() : Vec3<S>::UnitY();
  u = cross(a, t).normalized();
  w = cross(a, u);
}

// the rows of loop closure c at the poses in d, written to rows[0 .. loop_rows(c.kind))
template <class S> void loop_closure_rows(const LoopClosure<S>& c, const Data<S>& d, LoopRow<S>* rows) {
  const Transform<S>& Xa = d.X0[c.a];
  const Transform<S>& Xb = d.X0[c.b];
  const Vec3<S> dx = world_point(Xb, c.pb) - world_point(Xa, c.pa);
  for (int k = 0; k < 3; ++k) {  // point rows
    const Vec3<S> e = Vec3<S>::Unit(k);
    rows[k].wa = point_wrench(Xa, c.pa, Vec3<S>(-e));
    rows[k].wb = point_wrench(Xb, c.pb, e);
    rows[k].C = dx[k];
  }
  const Mat3<S> RA = Xa.E.transpose() * c.Ra, RB = Xb.E.transpose() * c.Rb;  // frame axes, world
  auto angular = [&](LoopRow<S>& row, const Vec3<S>& uA, const Vec3<S>& vB, S c0) {
    // d/dt (uA·vB) = ω_A·(uA × vB) + ω_B·(vB × uA), ω_world·m = ω_body·(E m)
    const Vec3<S> m = cross(uA, vB);
    row.wa = {mul(Xa.E, m), Vec3<S>::Zero()};
    row.wb = {mul(Xb.E, Vec3<S>(-m)), Vec3<S>::Zero()};
    row.C = dot(uA, vB) - c0;
  };
  if (c.kind == LoopKind::Hinge) {
    Vec3<S> u, w;
    perpendiculars<S>(c.axis, u, w);
    const Vec3<S> aB = RB * c.axis;
    angular(rows[3], Vec3<S>(RA * u), aB, S(0));
    angular(rows[4], Vec3<S>(RA * w), aB, S(0));
  } else if (c.kind == LoopKind::Universal) {
    angular(rows[3], Vec3<S>(RA * c.axis), Vec3<S>(RB * c.axis2), dot(c.axis, c.axis2));
  }
}

}  // namespace treedyn::redmax
