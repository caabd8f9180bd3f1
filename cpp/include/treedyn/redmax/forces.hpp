// The forces of the RedMax step (baxter2019 §2.2.4) and their implicit terms:
//   f_m  body forces: Coriolis ad(φ)ᵀ M φ (eq. (2.9)), gravity, point forces, spring forces;
//   K_m, D_m  the maximal stiffness and damping: 6x6 blocks per body plus, per spring, the 12x12
//        block of eq. (2.39)–(2.41) that couples its two bodies;
//   f_r, K_r, D_r  the joint springs and dampers.
// Damping forces are not in f: the step treats them fully implicitly (hD q̇^{k+1} on the left of
// eq. (2.13)). The stiffness is the symmetric part of the force Jacobian with respect to body
// displacements E ← E exp([δ]) — the Hessian of the potential in that chart, so K_m is symmetric.
#pragma once
#include <algorithm>
#include <cmath>

#include "treedyn/model/configuration.hpp"
#include "treedyn/redmax/mapping.hpp"

namespace treedyn::redmax {

template <class S> using Mat12 = Eigen::Matrix<S, 12, 12>;
template <class S> using Mat3x6 = Eigen::Matrix<S, 3, 6>;

// the wrench in body coordinates of a world force F at body point x: Γᵀ Rᵀ F (eq. (2.35)),
// Γ = [−x×  1] mapping twists to point velocities (body coordinates)
template <class S> inline Force<S> point_wrench(const Transform<S>& X0, const Vec3<S>& x, const Vec3<S>& F) {
  const Vec3<S> f = mul(X0.E, F);
  return {cross(x, f), f};
}
// R Γ: body twist -> world velocity of body point x
template <class S> inline Mat3x6<S> point_jacobian(const Transform<S>& X0, const Vec3<S>& x) {
  Mat3x6<S> G;
  G << -X0.E.transpose() * skew<S>(x), X0.E.transpose();
  return G;
}
template <class S> inline Vec3<S> world_point(const Transform<S>& X0, const Vec3<S>& x) {
  return X0.r + X0.E.transpose() * x;
}

// One spring: its wrenches on a and b (elastic part), its 12x12 stiffness K (symmetric) and
// damping D, in the bodies' coordinates ([δ_a; δ_b]); returns the potential ½k(l − L)².
template <class S> struct SpringTerms {
  Force<S> wa, wb;
  Mat12<S> K, D;
  S V, l;
};

template <class S>
SpringTerms<S> spring_terms(const Spring<S>& s, const Transform<S>& X0a, const Transform<S>& X0b) {
  SpringTerms<S> out;
  const Vec3<S> dx = world_point(X0b, s.xb) - world_point(X0a, s.xa);  // Δx = x_b − x_a
  const S l = dx.norm();
  out.l = l;
  out.V = S(0.5) * s.k * (l - s.L) * (l - s.L);
  Vec3<S> n = Vec3<S>::Zero();
  Mat3<S> P = Mat3<S>::Identity() * s.k;  // ∂F_a/∂Δx
  if (l > S(1e-12)) {
    // k [(1 − L/l)(1 − nnᵀ) + nnᵀ]; a compressed spring (l < L) would have a negative stiffness
    // across its line, which makes M̃_r indefinite: it is dropped (clamped at 0), as implicit
    // cloth and rod solvers do — the force itself stays exact
    n = dx / l;
    const Mat3<S> nn = n * n.transpose();
    P = s.k * (std::max(S(1) - s.L / l, S(0)) * (Mat3<S>::Identity() - nn) + nn);
  }
  const Vec3<S> Fa = n * (s.k * (l - s.L));  // pulls a towards b when stretched
  out.wa = point_wrench(X0a, s.xa, Fa);      // eq. (2.39)
  out.wb = point_wrench(X0b, s.xb, Vec3<S>(-Fa));
  Eigen::Matrix<S, 3, 12> G;  // [δ_a; δ_b] -> Δẋ
  G << -point_jacobian(X0a, s.xa), point_jacobian(X0b, s.xb);
  out.K.noalias() = -G.transpose() * P * G;  // material part of eq. (2.41)
  // geometric part: ∂(Rᵀ F)/∂ω = [Rᵀ F] (eq. (2.38)) at fixed F, symmetrised
  const Force<S>* w[2] = {&out.wa, &out.wb};
  const Vec3<S>* x[2] = {&s.xa, &s.xb};
  for (int k = 0; k < 2; ++k) {
    const Mat3<S> fx = skew<S>(w[k]->lin), A = skew<S>(*x[k]) * fx;
    out.K.template block<3, 3>(6 * k, 6 * k) += S(0.5) * (A + A.transpose());
    out.K.template block<3, 3>(6 * k + 3, 6 * k) += S(0.5) * fx;
    out.K.template block<3, 3>(6 * k, 6 * k + 3) += S(0.5) * fx.transpose();
  }
  const Eigen::Matrix<S, 12, 1> u = G.transpose() * n;  // l̇ = uᵀ [φ_a; φ_b]
  out.D.noalias() = s.d * u * u.transpose();
  return out;
}

// eq. (2.37): the stiffness of a constant world force F at body point x — the force Jacobian
// [[x×][RᵀF]×, 0; [RᵀF]×, 0] (its wrench turns with the body) — symmetrised like the springs'
template <class S> inline Mat6<S> point_force_stiffness(const Transform<S>& X0, const Vec3<S>& x, const Vec3<S>& F) {
  const Mat3<S> fx = skew<S>(mul(X0.E, F)), A = skew<S>(x) * fx;
  Mat6<S> K = Mat6<S>::Zero();
  K.template block<3, 3>(0, 0) = S(0.5) * (A + A.transpose());
  K.template block<3, 3>(3, 0) = S(0.5) * fx;
  K.template block<3, 3>(0, 3) = S(0.5) * fx.transpose();
  return K;
}

// f_r = −k (q ⊖ q_rest) per joint coordinate (joint_displacement: a spherical joint's rotation
// vector); the spring terms are the tree's (Model's stiffness and q_rest)
template <class S> void joint_spring_forces(const System<S>& sys, const S* q, S* fr) {
  const Model<S>& m = sys.tree;
  for (int i = 1; i <= m.N; ++i) {
    const int vi = m.v_index[i];
    if (m.nv_i[i] == 0) continue;  // (a fixed joint: nothing, and its q_index may be one past q's end)
    joint_displacement(m.kind[i], q + m.q_index[i], m.q_rest.data() + m.q_index[i], fr + vi);
    for (int k = 0; k < m.nv_i[i]; ++k) fr[vi + k] *= -m.stiffness[vi + k];
  }
}

// Body forces f_m at time t (body coordinates), from the kinematics in d: Coriolis, gravity,
// constant and moving point forces (the springs' come with their blocks: spring_terms_all). With
// `damping`, also the damping forces −D φ (for explicit use: forward dynamics); the implicit
// step leaves them out.
template <class S> void maximal_forces(const System<S>& sys, const Data<S>& d, S t, bool damping, Force<S>* fm) {
  const Model<S>& m = sys.tree;
  fm[0] = Force<S>::zero();
  for (int i = 1; i <= m.N; ++i) {
    const Force<S> Mphi = m.I[i] * d.phi[i];
    fm[i] = Force<S>::zero() - cross_force(d.phi[i], Mphi);  // ad(φ)ᵀ M φ, eq. (2.9)
    const Vec3<S> g = mul(d.X0[i].E, m.gravity);             // gravity at the centre of mass
    fm[i] += Force<S>{cross(m.I[i].h, g), g * m.I[i].m};
    if (damping) fm[i] -= Force<S>::from(sys.D_m[i] * d.phi[i].vec());
  }
  for (const auto& p : sys.point_forces) fm[p.body] += point_wrench(d.X0[p.body], p.x, p.f);
  for (const auto& mf : sys.moving_forces) {
    Vec3<S> x;
    const int b = mf.at(t, x);
    if (b >= 0) fm[b] += point_wrench(d.X0[b], x, mf.f);
  }
  fm[0] = Force<S>::zero();  // the world takes what is applied to it
}

// The implicit maximal terms of eq. (2.14) for time step h, but the springs' (spring_terms_all):
// per body A_i = M_i + h D_i − h² K_ii with K_ii the point forces' eq. (2.37). Bodies fixed to the
// world get blocks too; nothing reads them.
template <class S>
void implicit_blocks(const System<S>& sys, const Data<S>& d, S t, S h, Mat6<S>* A) {
  const Model<S>& m = sys.tree;
  for (int i = 0; i <= m.N; ++i) A[i] = m.I[i].matrix() + h * sys.D_m[i];
  for (const auto& p : sys.point_forces) A[p.body] -= h * h * point_force_stiffness(d.X0[p.body], p.x, p.f);
  for (const auto& mf : sys.moving_forces) {
    Vec3<S> x;
    const int b = mf.at(t, x);
    if (b >= 0) A[b] -= h * h * point_force_stiffness(d.X0[b], x, mf.f);
  }
}

// The springs, each evaluated once: their elastic wrenches (and with `damping` their damping
// forces) added to f_m, and their blocks h D_s − h² K_s added to the diagonal blocks A of their
// bodies and written to their coupling blocks C_s = (h D_s − h² K_s)_{ab}.
template <class S>
void spring_terms_all(const System<S>& sys, const Data<S>& d, S h, bool damping, Force<S>* fm, Mat6<S>* A, Mat6<S>* C) {
  for (size_t k = 0; k < sys.springs.size(); ++k) {
    const Spring<S>& s = sys.springs[k];
    const SpringTerms<S> st = spring_terms(s, d.X0[s.a], d.X0[s.b]);
    fm[s.a] += st.wa;
    fm[s.b] += st.wb;
    if (damping) {
      Eigen::Matrix<S, 12, 1> phi;
      phi << d.phi[s.a].vec(), d.phi[s.b].vec();
      const Eigen::Matrix<S, 12, 1> fd = -(st.D * phi);
      fm[s.a] += Force<S>::from(fd.template head<6>());
      fm[s.b] += Force<S>::from(fd.template tail<6>());
    }
    const Mat12<S> B = h * st.D - h * h * st.K;
    if (s.a == s.b) {  // both ends on one body: all four blocks land on it
      A[s.a] += B.template block<6, 6>(0, 0) + B.template block<6, 6>(6, 6) + B.template block<6, 6>(0, 6) +
                B.template block<6, 6>(6, 0);
      C[k].setZero();
      continue;
    }
    A[s.a] += B.template block<6, 6>(0, 0);
    A[s.b] += B.template block<6, 6>(6, 6);
    C[k] = B.template block<6, 6>(0, 6);
  }
  fm[0] = Force<S>::zero();
}

// the 6-column "force" matrices of a 6x6 block moved from body i to its parent: ^iX_pᵀ F
template <class S> inline Eigen::Matrix<S, 6, Eigen::Dynamic, 0, 6, 6> to_parent(
    const Transform<S>& X, const Eigen::Matrix<S, 6, Eigen::Dynamic, 0, 6, 6>& F) {
  Eigen::Matrix<S, 6, Eigen::Dynamic, 0, 6, 6> out(6, F.cols());
  for (int c = 0; c < F.cols(); ++c) out.col(c) = X.inv_apply(Force<S>::from(F.col(c))).vec();
  return out;
}

}  // namespace treedyn::redmax
