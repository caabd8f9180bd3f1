// Joint kinematics in one place, so that no algorithm branches on the joint kind:
// X_J (joint frame -> body frame), the motion subspace S (6 x nv_i, body coordinates),
// and the velocity-product term c_J = S̊ q̇ (RBDA §4.4; non-zero only for the universal joint).
//
// Coordinates (Pinocchio's layout): revolute / prismatic: angle or displacement about / along
// `axis`; universal: (q1, q2), rotation about axis then about the rotated axis2; spherical: unit
// quaternion (x, y, z, w), velocity = body angular velocity; free: (p, quaternion (x, y, z, w)),
// velocity = (linear, angular) velocity of the body frame in body coordinates.
#pragma once
#include <cmath>

#include "treedyn/model/model.hpp"

namespace treedyn {

// rotation of a frame turned by θ about the unit vector a (Rodrigues: R = a aᵀ + c(1 − a aᵀ) + s a×),
// with the products of a's components formed first: for a coordinate axis they are 0 and 1, and
// the generated code (codegen/traced.hpp) keeps only c and s — the diagonal entry along the axis
// is exactly 1, where (1 − c) + c would not be
template <class S> TREEDYN_INLINE Mat3<S> axis_angle(const Vec3<S>& a, S theta) {
  using std::cos;
  using std::sin;
  const S c = cos(theta), s = sin(theta), t = S(1) - c;
  const S xx = a[0] * a[0], yy = a[1] * a[1], zz = a[2] * a[2], xy = a[0] * a[1], xz = a[0] * a[2], yz = a[1] * a[2];
  Mat3<S> R;
  R << xx + c * (S(1) - xx), t * xy - s * a[2], t * xz + s * a[1], t * xy + s * a[2], yy + c * (S(1) - yy),
      t * yz - s * a[0], t * xz - s * a[1], t * yz + s * a[0], zz + c * (S(1) - zz);
  return R;
}
// rotation of the quaternion (x, y, z, w); exact for unit quaternions, normalises the others
template <class S> inline Mat3<S> quat_rotation(const S* q) {
  const S x = q[0], y = q[1], z = q[2], w = q[3];
  const S s = S(2) / (x * x + y * y + z * z + w * w);
  Mat3<S> R;
  R << S(1) - s * (y * y + z * z), s * (x * y - z * w), s * (x * z + y * w), s * (x * y + z * w),
      S(1) - s * (x * x + z * z), s * (y * z - x * w), s * (x * z - y * w), s * (y * z + x * w),
      S(1) - s * (x * x + y * y);
  return R;
}

// X_J(q): joint frame -> body frame. E = Rᵀ for the body's rotation R relative to the joint frame.
template <class S> inline Transform<S> joint_transform(const Model<S>& model, int i, const S* q) {
  const Vec3<S>& a = model.axis[i];
  switch (model.kind[i]) {
    case JointKind::Revolute:
      return {axis_angle<S>(a, q[0]).transpose(), Vec3<S>::Zero()};
    case JointKind::Prismatic:
      return {Mat3<S>::Identity(), a * q[0]};
    case JointKind::Universal:
      return {(axis_angle<S>(a, q[0]) * axis_angle<S>(model.axis2[i], q[1])).transpose(), Vec3<S>::Zero()};
    case JointKind::Spherical:
      return {quat_rotation<S>(q).transpose(), Vec3<S>::Zero()};
    case JointKind::Free:
      return {quat_rotation<S>(q + 3).transpose(), Vec3<S>(q[0], q[1], q[2])};
    default:
      return Transform<S>::identity();
  }
}

// S_i: its nv_i columns written to Si[0..nv_i)
template <class S> inline void joint_subspace(const Model<S>& model, int i, const S* q, Motion<S>* Si) {
  const Vec3<S>& a = model.axis[i];
  const Vec3<S> zero = Vec3<S>::Zero();
  switch (model.kind[i]) {
    case JointKind::Revolute:
      Si[0] = {a, zero};
      break;
    case JointKind::Prismatic:
      Si[0] = {zero, a};
      break;
    case JointKind::Universal:
      // ω = R2ᵀ a1 q̇1 + a2 q̇2 in body coordinates
      Si[0] = {axis_angle<S>(model.axis2[i], q[1]).transpose() * a, zero};
      Si[1] = {model.axis2[i], zero};
      break;
    case JointKind::Spherical:
      for (int k = 0; k < 3; ++k) Si[k] = {Vec3<S>::Unit(k), zero};
      break;
    case JointKind::Free:  // v = (linear, angular); motion order is [ω; v]
      for (int k = 0; k < 3; ++k) Si[k] = {zero, Vec3<S>::Unit(k)};
      for (int k = 0; k < 3; ++k) Si[3 + k] = {Vec3<S>::Unit(k), zero};
      break;
    default:
      break;
  }
}

// Ṡ_i x: the time derivative of S_i (at the joint rate q̇) applied to x (baxter2019 eq. (2.34));
// non-zero only for the universal joint, where d(R2ᵀ a1)/dt = −q̇2 a2 × R2ᵀ a1
template <class S>
inline Motion<S> joint_subspace_rate(const Model<S>& model, int i, const Motion<S>* Si, const S* qd, const S* x) {
  if (model.kind[i] != JointKind::Universal) return Motion<S>::zero();
  return {cross<S>(model.axis2[i], Si[0].ang) * (-qd[1] * x[0]), Vec3<S>::Zero()};
}

// c_J = S̊ q̇ (RBDA §4.4)
template <class S> inline Motion<S> joint_bias(const Model<S>& model, int i, const Motion<S>* Si, const S* qd) {
  return joint_subspace_rate(model, i, Si, qd, qd);
}

}  // namespace treedyn
