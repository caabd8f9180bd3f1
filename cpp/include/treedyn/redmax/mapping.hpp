// The reduced-to-maximal mapping q̇_m = J q̇_r (baxter2019 §2.2.2): O(n) products with J, J̇ and
// Jᵀ by tree traversals (Alg. 2, 3), and the explicit fill of J and J̇ (Alg. 1, for tests only).
//
// Maximal velocities are the body twists φ_i in body coordinates ([ω; v], Featherstone's order),
// so a row block of J is body i and ^iAd_p of the thesis is our ^iX_p (Data::Xup): eq. (2.20) is
//   φ_i = ^iX_p φ_p + S_i q̇_i,
// and the time derivative of ^iX_p is −(S_i q̇_i)× ^iX_p (RBDA §2.11), which gives J̇.
#pragma once
#include <vector>

#include "treedyn/algorithms/data.hpp"  // subspace_times
#include "treedyn/redmax/system.hpp"

namespace treedyn::redmax {

template <class S> struct Data {
  using VecX = Eigen::Matrix<S, Eigen::Dynamic, 1>;
  std::vector<Transform<S>> Xup;  // N+1: ^iX_p, parent -> body i
  std::vector<Transform<S>> X0;   // N+1: ^iX_0, world -> body i (E = R_iᵀ, r = p_i)
  std::vector<Motion<S>> Ssub;    // nv: the columns of S_i (body coordinates)
  VecX q;                         // nq: the configuration of the poses
  VecX qd;                        // nv: the joint rates J̇ is taken at
  std::vector<Motion<S>> phi;     // N+1: body twists J q̇
  std::vector<Motion<S>> Jdqd;    // N+1: J̇ q̇
  std::vector<Motion<S>> y, z;    // N+1: scratch of the products
  std::vector<Force<S>> alpha;    // N+1: scratch of Jᵀ (Alg. 3's α)

  explicit Data(const Model<S>& m)
      : Xup(m.N + 1, Transform<S>::identity()),
        X0(m.N + 1, Transform<S>::identity()),
        Ssub(m.nv, Motion<S>::zero()),
        q(VecX::Zero(m.nq)),
        qd(VecX::Zero(m.nv)),
        phi(m.N + 1, Motion<S>::zero()),
        Jdqd(m.N + 1, Motion<S>::zero()),
        y(m.N + 1, Motion<S>::zero()),
        z(m.N + 1, Motion<S>::zero()),
        alpha(m.N + 1, Force<S>::zero()) {}
};

// Alg. 2, lines 2 and 5: y = J x (y_i body twists); x has nv entries
template <class S> void J_times(const Model<S>& m, const Data<S>& d, const S* x, Motion<S>* y) {
  y[0] = Motion<S>::zero();
  for (int i = 1; i <= m.N; ++i) {
    y[i] = d.Xup[i].apply(y[m.parent[i]]);                                                             // line 5
    if (m.nv_i[i]) y[i] += subspace_times(d.Ssub.data() + m.v_index[i], m.nv_i[i], x + m.v_index[i]);  // line 2
  }
}

// Alg. 2: y = J x and z = J̇ x at the rates d.qd; line 6 with ^iẊ_p y_p = −v_J × (^iX_p y_p)
template <class S> void Jdot_times(const Model<S>& m, const Data<S>& d, const S* x, Motion<S>* y, Motion<S>* z) {
  y[0] = z[0] = Motion<S>::zero();
  for (int i = 1; i <= m.N; ++i) {
    const Motion<S> Xy = d.Xup[i].apply(y[m.parent[i]]);
    z[i] = d.Xup[i].apply(z[m.parent[i]]);
    y[i] = Xy;
    if (!m.nv_i[i]) continue;
    const int vi = m.v_index[i], n = m.nv_i[i];
    const Motion<S>* Si = d.Ssub.data() + vi;
    const Motion<S> vJ = subspace_times(Si, n, d.qd.data() + vi);
    y[i] += subspace_times(Si, n, x + vi);                                           // line 2
    z[i] += joint_subspace_rate(m, i, Si, d.qd.data() + vi, x + vi) - vJ.cross(Xy);  // lines 3, 6
  }
}

// Alg. 3: x = Jᵀ y for body forces y (N+1, body coordinates); alpha: scratch of N+1
template <class S> void JT_times(const Model<S>& m, const Data<S>& d, const Force<S>* y, S* x, Force<S>* alpha) {
  for (int i = 0; i <= m.N; ++i) alpha[i] = y[i];
  for (int i = m.N; i >= 1; --i) {  // children come after their parent: α_i is complete here
    const Motion<S>* Si = d.Ssub.data() + m.v_index[i];
    for (int k = 0; k < m.nv_i[i]; ++k) x[m.v_index[i] + k] = dot(Si[k], alpha[i]);  // line 7
    alpha[m.parent[i]] += d.Xup[i].inv_apply(alpha[i]);                              // lines 4, 6
  }
}

// x += Jᵀ y for a single body force y on body i: Alg. 3 along i's path to the root only, O(depth)
template <class S> void JT_path(const Model<S>& m, const Data<S>& d, int i, Force<S> y, S* x) {
  for (; i >= 1; i = m.parent[i]) {
    const Motion<S>* Si = d.Ssub.data() + m.v_index[i];
    for (int k = 0; k < m.nv_i[i]; ++k) x[m.v_index[i] + k] += dot(Si[k], y);  // line 7
    y = d.Xup[i].inv_apply(y);                                                 // lines 4, 6
  }
}

// The joint pass: ^iX_p, S_i and the world poses at q; then φ = J q̇ and J̇ q̇ at q̇.
template <class S> void kinematics(const Model<S>& m, Data<S>& d, const S* q, const S* qd) {
  for (int i = 1; i <= m.N; ++i) {
    const S* qi = q + m.q_index[i];
    joint_subspace(m, i, qi, d.Ssub.data() + m.v_index[i]);
    d.Xup[i] = joint_transform(m, i, qi) * m.X_tree[i];
    d.X0[i] = compose(d.Xup[i], d.X0[m.parent[i]]);  // (world poses: the full 3x3 product)
  }
  for (int k = 0; k < m.nq; ++k) d.q[k] = q[k];
  for (int k = 0; k < m.nv; ++k) d.qd[k] = qd[k];
  Jdot_times(m, d, d.qd.data(), d.phi.data(), d.Jdqd.data());
}

// Alg. 1: J and J̇ filled explicitly, (6N x nv), row block i−1 for body i. O(n²): tests only.
template <class S, class Mat> void fill_J(const Model<S>& m, const Data<S>& d, Mat& J, Mat& Jdot) {
  J.setZero(6 * m.N, m.nv);
  Jdot.setZero(6 * m.N, m.nv);
  for (int i = 1; i <= m.N; ++i) {
    const int p = m.parent[i], vi = m.v_index[i];
    const Motion<S>* Si = d.Ssub.data() + vi;
    const Motion<S> vJ = subspace_times(Si, m.nv_i[i], d.qd.data() + vi);
    for (int k = 0; k < m.nv_i[i]; ++k) {  // lines 2-3
      S e[6] = {0, 0, 0, 0, 0, 0};
      e[k] = S(1);
      J.template block<6, 1>(6 * (i - 1), vi + k) = Si[k].vec();
      Jdot.template block<6, 1>(6 * (i - 1), vi + k) = joint_subspace_rate(m, i, Si, d.qd.data() + vi, e).vec();
    }
    for (int a = p; a > 0; a = m.parent[a])  // lines 4-9: the ancestors' columns
      for (int k = 0; k < m.nv_i[a]; ++k) {
        const int c = m.v_index[a] + k;
        const Motion<S> Jp = Motion<S>::from(J.template block<6, 1>(6 * (p - 1), c));
        const Motion<S> Jdp = Motion<S>::from(Jdot.template block<6, 1>(6 * (p - 1), c));
        const Motion<S> XJ = d.Xup[i].apply(Jp);
        J.template block<6, 1>(6 * (i - 1), c) = XJ.vec();                                       // line 6
        Jdot.template block<6, 1>(6 * (i - 1), c) = (d.Xup[i].apply(Jdp) - vJ.cross(XJ)).vec();  // line 7
      }
  }
}

}  // namespace treedyn::redmax
