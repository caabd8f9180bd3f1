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

// rotation of a frame turned by θ about the unit vector a (Rodrigues)
template <class S> inline Mat3<S> axis_angle(const Vec3<S>& a, S theta) {
  using std::cos; using std::sin;
  const S c = cos(theta), s = sin(theta), t = S(1) - c;
  Mat3<S> R;
  R << t * a[0] * a[0] + c, t * a[0] * a[1] - s * a[2], t * a[0] * a[2] + s * a[1],
       t * a[0] * a[1] + s * a[2], t * a[1] * a[1] + c, t * a[1] * a[2] - s * a[0],
       t * a[0] * a[2] - s * a[1], t * a[1] * a[2] + s * a[0], t * a[2] * a[2] + c;
  return R;
}
// rotation of the quaternion (x, y, z, w); exact for unit quaternions, normalises the others
template <class S> inline Mat3<S> quat_rotation(const S* q) {
  const S x = q[0], y = q[1], z = q[2], w = q[3];
  const S s = S(2) / (x * x + y * y + z * z + w * w);
  Mat3<S> R;
  R << S(1) - s * (y * y + z * z), s * (x * y - z * w), s * (x * z + y * w),
       s * (x * y + z * w), S(1) - s * (x * x + z * z), s * (y * z - x * w),
       s * (x * z - y * w), s * (y * z + x * w), S(1) - s * (x * x + y * y);
  return R;
}

// X_J(q): joint frame -> body frame. E = Rᵀ for the body's rotation R relative to the joint frame.
template <class S> inline Transform<S> joint_transform(const Model<S>& model, int i, const S* q) {
  const Vec3<S>& a = model.axis[i];
  switch (model.kind[i]) {
    case JointKind::Revolute: return {axis_angle<S>(a, q[0]).transpose(), Vec3<S>::Zero()};
    case JointKind::Prismatic: return {Mat3<S>::Identity(), a * q[0]};
    case JointKind::Universal:
      return {(axis_angle<S>(a, q[0]) * axis_angle<S>(model.axis2[i], q[1])).transpose(), Vec3<S>::Zero()};
    case JointKind::Spherical: return {quat_rotation<S>(q).transpose(), Vec3<S>::Zero()};
    case JointKind::Free: return {quat_rotation<S>(q + 3).transpose(), Vec3<S>(q[0], q[1], q[2])};
    default: return Transform<S>::identity();
  }
}

// S_i (6 x nv_i) written into the columns of `Sblk`
template <class S, class Block>
inline void joint_subspace(const Model<S>& model, int i, const S* q, Block&& Sblk) {
  const Vec3<S>& a = model.axis[i];
  switch (model.kind[i]) {
    case JointKind::Revolute: Sblk.col(0) << a, Vec3<S>::Zero(); break;
    case JointKind::Prismatic: Sblk.col(0) << Vec3<S>::Zero(), a; break;
    case JointKind::Universal: {
      // ω = R2ᵀ a1 q̇1 + a2 q̇2 in body coordinates
      const Vec3<S>& a2 = model.axis2[i];
      Sblk.col(0) << axis_angle<S>(a2, q[1]).transpose() * a, Vec3<S>::Zero();
      Sblk.col(1) << a2, Vec3<S>::Zero();
      break;
    }
    case JointKind::Spherical:
      Sblk.setZero();
      Sblk.template topRows<3>().setIdentity();
      break;
    case JointKind::Free:  // v = (linear, angular); motion order is [ω; v]
      Sblk.setZero();
      Sblk.template block<3, 3>(0, 3).setIdentity();
      Sblk.template block<3, 3>(3, 0).setIdentity();
      break;
    default: break;
  }
}

// c_J = S̊ q̇: for the universal joint d(R2ᵀ a1)/dq2 = −a2 × R2ᵀ a1, so c_J = [−q̇1 q̇2 a2 × S1; 0]
template <class S, class Block>
inline Motion<S> joint_bias(const Model<S>& model, int i, const Block& Si, const S* qd) {
  if (model.kind[i] != JointKind::Universal) return Motion<S>::zero();
  const Vec3<S> s1 = Si.col(0).template head<3>();
  return {cross<S>(model.axis2[i], s1) * (-qd[0] * qd[1]), Vec3<S>::Zero()};
}

}  // namespace treedyn
