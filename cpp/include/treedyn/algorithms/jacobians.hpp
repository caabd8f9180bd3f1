// Kinematics beyond body poses: the Jacobian of a frame fixed to a body and its bias J̇q̇, the
// centre of mass and its Jacobian, and the energies (what Pinocchio calls computeFrameJacobian,
// getFrameAcceleration / getFrameClassicalAcceleration with q̈ = 0, centerOfMass,
// jacobianCenterOfMass, computeKineticEnergy and computePotentialEnergy). Rows in treedyn's
// spatial order [angular; linear]. One pass over the bodies up to the frame's body (parents come
// before children), then the path from that body to the root: O(N + depth · nv_j).
#pragma once
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "treedyn/algorithms/kinematics.hpp"

namespace treedyn {

// Coordinates of a frame's velocity (Pinocchio's ReferenceFrame):
//   World              the spatial velocity at the world origin in world axes, [ω; v_O]
//   Local              the frame's own axes at its origin, [ω_f; v_f]
//   LocalWorldAligned  world axes at the frame's origin, [ω; ṗ_f]
enum class Reference : int { World = 0, Local = 1, LocalWorldAligned = 2 };

// the joint pass of bodies 1..last with ^iX_0 (world -> body i) chained by compose
template <class S>
void placements_and_subspaces(const Model<S>& model, Data<S>& data, const S* q, int last, Transform<S>* X0) {
  X0[0] = Transform<S>::identity();
  for (int i = 1; i <= last; ++i) {
    kinematics_step(model, data, i, q);
    X0[i] = compose(data.Xup[i], X0[model.parent[i]]);
  }
}

// A motion m of the frame f (^fX_0 = Xf0) given in world coordinates [ω; v_O] expressed in `ref`
template <class S> Motion<S> in_reference(const Motion<S>& m0, const Transform<S>& Xf0, Reference ref) {
  switch (ref) {
    case Reference::Local:
      return Xf0.apply(m0);
    case Reference::LocalWorldAligned:  // velocity of the frame's origin p: v_O + ω × p (r of ^fX_0 is p)
      return {m0.ang, m0.lin + cross(m0.ang, Xf0.r)};
    default:
      return m0;
  }
}

// J (6 x nv, row-major) of the frame with ^fX_b = Xf on body b: column of coordinate k of joint j
// (an ancestor of b, or b) = S_jk in world coordinates, ^jX_0⁻¹ S_jk, then in `ref`; zero elsewhere
template <class S>
void frame_jacobian(const Model<S>& model, Data<S>& data, std::vector<Transform<S>>& X0, const S* q, int b,
                    const Transform<S>& Xf, Reference ref, S* J) {
  const int nv = model.nv;
  placements_and_subspaces(model, data, q, b, X0.data());
  const Transform<S> Xf0 = compose(Xf, X0[b]);
  std::fill(J, J + 6 * std::size_t(nv), S(0));
  for (int j = b; j > 0; j = model.parent[j])
    for (int k = 0; k < model.nv_i[j]; ++k) {
      const int c = model.v_index[j] + k;
      const Motion<S> col = in_reference(X0[j].inv_apply(data.S[c]), Xf0, ref);
      for (int r = 0; r < 3; ++r) {
        J[r * nv + c] = col.ang[r];
        J[(r + 3) * nv + c] = col.lin[r];
      }
    }
}

// The contact Jacobians, transposed (what the contact impulses act through): contact i pushes body
// b_i with a unit force d_ij at the world point p_i and body a_i with −d_ij (j < m directions: the
// normal and the friction cone's edges). As a wrench at the world origin that force is
// f = [p × d; d], and the generalized force on coordinate c of joint k is s_c · f, s_c = S_c in world
// coordinates (^kX_0⁻¹ S_c): summed over the path from b_i to the root, minus the path from a_i.
// Row c, column i·m + j of J (nv × P·m, row-major): (J_b(p_i) − J_a(p_i))ᵀ d_ij over J's linear rows.
// O(N + Σ_i m·(depth(a_i) + depth(b_i))) after the pass; s0 holds the nv world columns.
template <class S>
void contact_jacobian(const Model<S>& model, Data<S>& data, std::vector<Transform<S>>& X0, std::vector<Motion<S>>& s0,
                      const S* q, int P, const std::int64_t* bodies, const S* points, const S* dirs, int m, S* J) {
  const std::size_t cols = std::size_t(P) * m;
  placements_and_subspaces(model, data, q, model.N, X0.data());
  for (int k = 1; k <= model.N; ++k)
    for (int c = model.v_index[k]; c < model.v_index[k] + model.nv_i[k]; ++c) s0[c] = X0[k].inv_apply(data.S[c]);
  std::fill(J, J + std::size_t(model.nv) * cols, S(0));
  for (int i = 0; i < P; ++i) {
    const Vec3<S> p(points[3 * i], points[3 * i + 1], points[3 * i + 2]);
    for (int j = 0; j < m; ++j) {
      const S* dij = dirs + 3 * (std::size_t(i) * m + j);
      const Vec3<S> d(dij[0], dij[1], dij[2]), pxd = cross(p, d);
      S* col = J + std::size_t(i) * m + j;
      for (int side = 0; side < 2; ++side) {  // a (−), then b (+)
        const S sign = side == 0 ? S(-1) : S(1);
        for (int k = int(bodies[2 * i + side]); k > 0; k = model.parent[k])
          for (int c = model.v_index[k]; c < model.v_index[k] + model.nv_i[k]; ++c)
            col[std::size_t(c) * cols] += sign * (dot(s0[c].ang, pxd) + dot(s0[c].lin, d));
      }
    }
  }
}

// J̇q̇ of the same frame in `ref`: the frame's acceleration at q̈ = 0 without gravity. With v_b, a_b
// from the forward pass of RNEA (a_i = ^iX_λ a_λ + c_J + v_i × S q̇_i) and v_f = Xf v_b, a_f = Xf a_b:
//   Local   a_f (the body-fixed components of a spatial acceleration are d/dt of the velocity's)
//   World   ^fX_0⁻¹ a_f (d/dt of the world-coordinate velocity)
//   LocalWorldAligned  [R ω̇_f; R (a_f,lin + ω_f × v_f,lin)] (the classical acceleration of the
//           origin, R = ^fX_0's Eᵀ)
template <class S>
Motion<S> frame_bias_acceleration(const Model<S>& model, Data<S>& data, std::vector<Transform<S>>& X0, const S* q,
                                  const S* qd, int b, const Transform<S>& Xf, Reference ref) {
  placements_and_subspaces(model, data, q, b, X0.data());
  for (int i = 1; i <= b; ++i) {
    const int p = model.parent[i], vi = model.v_index[i];
    const Motion<S>* Si = data.S.data() + vi;
    const Motion<S> vJ = subspace_times<S>(Si, model.nv_i[i], qd + vi);
    data.v[i] = p > 0 ? data.Xup[i].apply(data.v[p]) + vJ : vJ;
    data.a[i] = (p > 0 ? data.Xup[i].apply(data.a[p]) : Motion<S>::zero()) + joint_bias(model, i, Si, qd + vi) +
                data.v[i].cross(vJ);
  }
  if (b == 0) return Motion<S>::zero();
  const Transform<S> Xf0 = compose(Xf, X0[b]);
  const Motion<S> vf = Xf.apply(data.v[b]), af = Xf.apply(data.a[b]);
  switch (ref) {
    case Reference::Local:
      return af;
    case Reference::LocalWorldAligned: {
      const Vec3<S> lin = af.lin + cross(vf.ang, vf.lin);
      return {mulT(Xf0.E, af.ang), mulT(Xf0.E, lin)};
    }
    default:
      return Xf0.inv_apply(af);
  }
}

// Over the bodies that can move, the subtree sums m_j = Σ m_i and h_j = Σ (m_i p_i + R_i h_i) (world first
// moments) of every body j, from the placements X0. Bodies welded to the world (no moving joint on their path) are
// left out, as Pinocchio leaves out the universe's bodies: a fixed arm's base does not move its centre of mass.
template <class S>
void moving_mass(const Model<S>& model, const std::vector<Transform<S>>& X0, std::vector<S>& msub,
                 std::vector<Vec3<S>>& hsub) {
  msub.assign(model.N + 1, S(0));
  hsub.assign(model.N + 1, Vec3<S>::Zero());
  std::vector<char> moves(model.N + 1, 0);  // a moving joint on the path to the world
  for (int i = 1; i <= model.N; ++i) moves[i] = moves[model.parent[i]] || model.nv_i[i] > 0;
  for (int i = model.N; i >= 1; --i) {  // children first
    const RigidInertia<S>& I = model.I[i];
    if (moves[i]) {
      msub[i] += I.m;
      hsub[i] += I.m * X0[i].r + mulT(X0[i].E, I.h);  // m (p + R c), R = Eᵀ
    }
    msub[model.parent[i]] += msub[i];
    hsub[model.parent[i]] += hsub[i];
  }
}

// The centre of mass c (world) of the bodies that can move and, if Jc is not null, its Jacobian
// (3 x nv, row-major): with the subtree sums m_j and h_j of moving_mass, the column of S_jk = [ω; v_O]
// (world) is (m_j v_O + ω × h_j) / M. Returns their mass M (c = 0 when M = 0 and h = 0). Mass 0 with a
// first moment h ≠ 0 — a simplified model (treedyn.simplify) whose mass went to the world — has no
// centre of mass: std::domain_error.
template <class S>
S center_of_mass(const Model<S>& model, Data<S>& data, std::vector<Transform<S>>& X0, const S* q, S* c, S* Jc) {
  placements_and_subspaces(model, data, q, model.N, X0.data());
  std::vector<S> msub;
  std::vector<Vec3<S>> hsub;
  moving_mass(model, X0, msub, hsub);
  const S M = msub[0];
  if (!(M > S(0)) && hsub[0] != Vec3<S>::Zero())
    throw std::domain_error(
        "center_of_mass: the bodies that move have mass 0 but a first moment h ≠ 0 (a simplified model, "
        "treedyn.simplify, whose mass went to the world): there is no centre of mass; use the model before "
        "simplifying");
  const Vec3<S> com = M > S(0) ? Vec3<S>(hsub[0] / M) : Vec3<S>::Zero();
  for (int r = 0; r < 3; ++r) c[r] = com[r];
  if (!Jc) return M;
  const int nv = model.nv;
  std::fill(Jc, Jc + 3 * std::size_t(nv), S(0));
  if (!(M > S(0))) return M;
  for (int j = 1; j <= model.N; ++j)
    for (int k = 0; k < model.nv_i[j]; ++k) {
      const int col = model.v_index[j] + k;
      const Motion<S> s0 = X0[j].inv_apply(data.S[col]);
      const Vec3<S> Jk = (msub[j] * s0.lin + cross(s0.ang, hsub[j])) / M;
      for (int r = 0; r < 3; ++r) Jc[r * nv + col] = Jk[r];
    }
  return M;
}

// ½ q̇ᵀ M q̇ = ½ Σ v_i · I_i v_i (body velocities by RNEA's forward pass)
template <class S> S kinetic_energy(const Model<S>& model, Data<S>& data, const S* q, const S* qd) {
  S T = S(0);
  for (int i = 1; i <= model.N; ++i) {
    kinematics_step(model, data, i, q);
    const int p = model.parent[i], vi = model.v_index[i];
    const Motion<S> vJ = subspace_times<S>(data.S.data() + vi, model.nv_i[i], qd + vi);
    data.v[i] = p > 0 ? data.Xup[i].apply(data.v[p]) + vJ : vJ;
    T += dot(data.v[i], model.I[i] * data.v[i]);
  }
  return T / S(2);
}

// −g · Σ (m_i p_i + R_i h_i) = −Σ m_i g · c_i over the bodies that can move (world; zero at the world origin):
// from the first moments, which a simplified model's massless bodies have without a centre of mass
template <class S> S potential_energy(const Model<S>& model, Data<S>& data, std::vector<Transform<S>>& X0, const S* q) {
  placements_and_subspaces(model, data, q, model.N, X0.data());
  std::vector<S> msub;
  std::vector<Vec3<S>> hsub;
  moving_mass(model, X0, msub, hsub);
  return -dot(model.gravity, hsub[0]);
}

}  // namespace treedyn
