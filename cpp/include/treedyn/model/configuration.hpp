// Configuration-space operations: q ⊕ v dt on the joints' manifolds.
#pragma once
#include <algorithm>
#include <cmath>

#include "treedyn/model/joint.hpp"

namespace treedyn {

// quaternion (x, y, z, w) of the rotation by the vector w (angle |w| about w/|w|)
template <class S> inline Eigen::Matrix<S, 4, 1> quat_exp(const Vec3<S>& w) {
  using std::cos;
  using std::sin;
  using std::sqrt;
  const S th = sqrt(dot(w, w));
  const S k = th > S(1e-8) ? sin(th / 2) / th : S(0.5) - th * th / S(48);
  Eigen::Matrix<S, 4, 1> out;
  out << w * k, cos(th / 2);
  return out;
}
// Hamilton product a ⊗ b of (x, y, z, w) quaternions
template <class S> inline Eigen::Matrix<S, 4, 1> quat_mul(const S* a, const Eigen::Matrix<S, 4, 1>& b) {
  const Vec3<S> av(a[0], a[1], a[2]), bv = b.template head<3>();
  Eigen::Matrix<S, 4, 1> out;
  out << bv * a[3] + av * b[3] + cross(av, bv), a[3] * b[3] - dot(av, bv);
  return out / out.norm();
}

// the neutral configuration: every joint at zero, every quaternion the identity (0, 0, 0, 1)
template <class S> void neutral_configuration(const Model<S>& model, S* q) {
  std::fill(q, q + model.nq, S(0));
  for (int i = 1; i <= model.N; ++i) {
    const int k = joint_layout(model.kind[i]).quaternion;
    if (k >= 0) q[model.q_index[i] + k + 3] = S(1);
  }
}

// x = q_i ⊖ rest_i for joint i (nv_i values; q and rest: the joint's own coordinates): the
// difference of the coordinates for 1-DoF and universal joints, the rotation vector of rest⁻¹ q for
// a spherical joint (the shorter way round); a free joint's is left zero (its springs take damping only)
template <class S> void joint_displacement(JointKind kind, const S* q, const S* rest, S* x) {
  using std::atan2;
  using std::sqrt;
  if (kind == JointKind::Spherical) {
    const Eigen::Matrix<S, 4, 1> b(q[0], q[1], q[2], q[3]);
    const S conj_rest[4] = {-rest[0], -rest[1], -rest[2], rest[3]};
    const auto r = quat_mul(conj_rest, b);
    Vec3<S> v = r.template head<3>();
    S w = r[3];
    if (w < S(0)) {
      v = -v;
      w = -w;
    }
    const S sn = sqrt(dot(v, v));
    const Vec3<S> theta = sn > S(1e-12) ? Vec3<S>(v * (S(2) * atan2(sn, w) / sn)) : Vec3<S>(v * S(2));
    for (int k = 0; k < 3; ++k) x[k] = theta[k];
  } else if (kind == JointKind::Free) {
    for (int k = 0; k < 6; ++k) x[k] = S(0);
  } else {
    for (int k = 0; k < joint_nv(kind); ++k) x[k] = q[k] - rest[k];
  }
}

// qout = q ⊕ v dt. Body-frame velocities: a quaternion moves by right multiplication; a free
// joint moves along the screw exp(dt [v; ω]) of SE(3), as Pinocchio's integrate does.
template <class S> void integrate(const Model<S>& model, const S* q, const S* v, S dt, S* qout) {
  using std::cos;
  using std::sin;
  using std::sqrt;
  for (int i = 1; i <= model.N; ++i) {
    const S* qi = q + model.q_index[i];
    const S* vi = v + model.v_index[i];
    S* qo = qout + model.q_index[i];
    switch (model.kind[i]) {
      case JointKind::Spherical: {
        const auto r = quat_mul(qi, quat_exp<S>(Vec3<S>(vi[0], vi[1], vi[2]) * dt));
        for (int k = 0; k < 4; ++k) qo[k] = r[k];
        break;
      }
      case JointKind::Free: {
        const Vec3<S> vl = Vec3<S>(vi[0], vi[1], vi[2]) * dt, w = Vec3<S>(vi[3], vi[4], vi[5]) * dt;
        const S th = sqrt(dot(w, w));
        // p_delta = V(w) vl, V = 1 + (1 − cos θ)/θ² w× + (θ − sin θ)/θ³ w×²
        S b, c;
        if (th > S(1e-6)) {
          // 1 − cos θ = 2 sin²(θ/2): 1 − cos θ itself cancels (an error of u/θ² in b, 3e5·u at θ = 1e-5)
          const S sinc = sin(th / 2) / (th / 2);
          b = sinc * sinc / 2;
          c = (th - sin(th)) / (th * th * th);  // its cancellation costs u|v| at most: c multiplies θ²
        } else {
          b = S(0.5) - th * th / S(24);
          c = S(1) / S(6) - th * th / S(120);
        }
        const Vec3<S> wv = cross(w, vl);
        const Vec3<S> dp = vl + wv * b + cross(w, wv) * c;
        const Vec3<S> p = Vec3<S>(qi[0], qi[1], qi[2]) + quat_rotation<S>(qi + 3) * dp;
        const auto r = quat_mul(qi + 3, quat_exp<S>(w));
        for (int k = 0; k < 3; ++k) qo[k] = p[k];
        for (int k = 0; k < 4; ++k) qo[3 + k] = r[k];
        break;
      }
      default:
        for (int k = 0; k < model.nq_i[i]; ++k) qo[k] = qi[k] + vi[k] * dt;
    }
  }
}

}  // namespace treedyn
