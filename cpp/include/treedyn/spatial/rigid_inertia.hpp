// Rigid-body inertia rbi(m, h, lt(Ī)) of featherstone-part3: mass m, first moment h = m c, and the
// rotational inertia Ī about the frame's origin (not the centre of mass), lower triangle only.
//   I = [ Ī   h× ]
//       [ -h×  m1 ]
#pragma once
#include "treedyn/spatial/motion.hpp"

namespace treedyn {

template <class S> struct RigidInertia {
  S m;
  Vec3<S> h;
  Sym3<S> I;  // Ī about the origin

  static RigidInertia zero() { return {S(0), Vec3<S>::Zero(), Sym3<S>::zero()}; }
  // from mass, centre of mass c and inertia Ic about c (body axes): Ī = Ic + m c×c×ᵀ
  static RigidInertia from_mci(S m, const Vec3<S>& c, const Mat3<S>& Ic) {
    Mat3<S> cx = skew<S>(c);
    return {m, c * m, Sym3<S>::from(Ic - m * cx * cx)};
  }
  RigidInertia operator+(const RigidInertia& o) const { return {m + o.m, h + o.h, I + o.I}; }
  RigidInertia& operator+=(const RigidInertia& o) {
    *this = *this + o;
    return *this;
  }

  // I v = [Ī ω + h × v; m v − h × ω]: 24m + 18a (featherstone-part3, "Iv")
  TREEDYN_INLINE Force<S> operator*(const Motion<S>& v) const {
    return {I * v.ang + cross(h, v.lin), v.lin * m - cross(h, v.ang)};
  }
  Mat6<S> matrix() const {
    Mat6<S> M;
    M << I.full(), skew<S>(h), -skew<S>(h), Mat3<S>::Identity() * m;
    return M;
  }
};

}  // namespace treedyn
