// Articulated-body algorithm in link coordinates (RBDA Table 7.1; ascher-pai-cloutier1996 §2,
// eq. (7)): q̈ = FD(q, q̇, τ, f_ext) in O(N), in three passes over the tree.
#pragma once
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "treedyn/algorithms/kinematics.hpp"
#include "treedyn/algorithms/pivots.hpp"

namespace treedyn {

// pass 1 (root to leaves): ^iX_λ, S_i, v_i, c_i = c_J + v_i × v_J, I^A_i = I_i, p^A_i = v ×* I v − f_ext
template <class S>
void aba_forward_pass_1(const Model<S>& model, Data<S>& data, const S* q, const S* qd, const S* fext) {
  for (int i = 1; i <= model.N; ++i) {
    kinematics_step(model, data, i, q);
    const int p = model.parent[i], vi = model.v_index[i];
    const Motion<S>* Si = data.S.data() + vi;
    const Motion<S> vJ = subspace_times<S>(Si, model.nv_i[i], qd + vi);
    data.v[i] = p > 0 ? data.Xup[i].apply(data.v[p]) + vJ : vJ;
    data.c[i] = joint_bias(model, i, Si, qd + vi) + data.v[i].cross(vJ);
    const RigidInertia<S>& I = model.I[i];
    data.IA[i] = ArticulatedInertia<S>::from(I);
    data.pA[i] = cross_force(data.v[i], I * data.v[i]) - external_force(fext, i);
  }
}

// The refined scales of body i's pivots, where the screen (ε^(2/3) of pivot_scale: the traces of I^A_i's
// blocks) refuses them: the magnitudes the entries of I^A_i were summed from, B_i = |I_i| + Σ_children
// |X_c|ᵀ (B_c + |U_c D_c⁻¹ U_cᵀ|) |X_c| (entrywise absolute values: a computed sum's error is within
// γ of the sum of its terms' magnitudes, Higham, "Accuracy and Stability of Numerical Algorithms", §3.1 and
// §4.2, so each entry's rounding is within a few ε of B's), read along |S_k|: |S_k|ᵀ B_i |S_k| (+ the armature), at the
// rounding rule (pivots.hpp). A pivot that is small but exact passes — a long straight chain's axial moment, where the
// traces carry the chain's n³ bending moment into every coordinate — one left by cancellation does not: its magnitudes
// are the terms that cancelled (a massless ball joint carrying a body: D ≈ 1e-17 of them). Called on the pass from the
// leaves (i descending): B is brought up from the last call's body, O(N) over a pass; it allocates, once, on this rare
// path.
template <class S> void aba_refined_scales(const Model<S>& model, Data<S>& data, int i, S* scale) {
  std::vector<Mat6<S>>& B = data.pivot_terms;
  if (data.pivot_from == 0) B.assign(model.N + 1, Mat6<S>::Zero()), data.pivot_from = model.N + 1;
  for (int j = data.pivot_from - 1; j > i; --j) {  // bodies between: complete (their U, D⁻¹ are known), sent up
    B[j] += model.I[j].matrix().cwiseAbs();
    const int nj = model.nv_i[j], vj = model.v_index[j];
    Eigen::Matrix<S, 6, Eigen::Dynamic, 0, 6, 6> U(6, nj);
    for (int b = 0; b < nj; ++b) U.col(b) = data.U[vj + b].vec();
    const Mat6<S> T = B[j] + (U * data.Dinv[j] * U.transpose()).cwiseAbs();
    const Mat6<S> X = data.Xup[j].matrix().cwiseAbs();
    if (model.parent[j] > 0) B[model.parent[j]] += X.transpose() * T * X;
  }
  data.pivot_from = i + 1;
  const Mat6<S> Bi = B[i] + model.I[i].matrix().cwiseAbs();
  for (int k = 0; k < model.nv_i[i]; ++k) {
    const Vec6<S> s = data.S[model.v_index[i] + k].vec().cwiseAbs();
    scale[k] = s.dot(Bi * s) + (model.has_armature ? model.armature[model.v_index[i] + k] : S(0));
  }
}

// backward step, joint part: U_i = I^A_i S_i, D_i = S_iᵀ U_i + diag(armature_i), and D_i⁻¹ (or
// SingularJoint: a pivot below the screen and within the rounding of its refined scale, pivots.hpp)
template <class S> void aba_joint_inertia_step(const Model<S>& model, Data<S>& data, int i) {
  const int vi = model.v_index[i], ni = model.nv_i[i];
  const Motion<S>* Si = data.S.data() + vi;
  Force<S>* Ui = data.U.data() + vi;
  if (ni == 1) {
    Ui[0] = data.IA[i] * Si[0];
    data.D[i](0, 0) = dot(Si[0], Ui[0]);
    if (model.has_armature) data.D[i](0, 0) += model.armature[vi];
  } else if (ni > 1) {
    for (int b = 0; b < ni; ++b) Ui[b] = data.IA[i] * Si[b];
    for (int a = 0; a < ni; ++a)
      for (int b = 0; b < ni; ++b) data.D[i](a, b) = dot(Si[a], Ui[b]);
    for (int a = 0; a < ni && model.has_armature; ++a) data.D[i](a, a) += model.armature[vi + a];
  }
  if constexpr (std::is_floating_point_v<S>) {
    try {
      invert_joint_pivot(model, i, data.IA[i], Si, data.D[i], data.Dinv[i], screen_tolerance<S>());
    } catch (const SingularJoint&) {
      S scale[6];
      aba_refined_scales(model, data, i, scale);
      invert_pivot(model, i, data.D[i], data.Dinv[i], scale);
    }
  } else {  // (traced: the screen's comparisons become the generated code's guards; past them, this kernel)
    invert_joint_pivot(model, i, data.IA[i], Si, data.D[i], data.Dinv[i], screen_tolerance<S>());
  }
}

// backward step, inertia propagation: I^a_i = I^A_i − U_i D_i⁻¹ U_iᵀ (in place: IA[i] holds I^a_i
// afterwards), I^A_λ += ^iX_λᵀ I^a_i ^iX_λ
template <class S> void aba_inertia_propagation_step(const Model<S>& model, Data<S>& data, int i) {
  const int p = model.parent[i], vi = model.v_index[i], ni = model.nv_i[i];
  const Force<S>* Ui = data.U.data() + vi;
  ArticulatedInertia<S>& Ia = data.IA[i];
  if (ni == 1) {
    Ia.subtract_outer(Ui[0], data.Dinv[i](0, 0));
  } else if (ni > 1) {
    Eigen::Matrix<S, 6, Eigen::Dynamic, 0, 6, 6> Um(6, ni);
    for (int b = 0; b < ni; ++b) Um.col(b) = Ui[b].vec();
    Ia = ArticulatedInertia<S>::from_matrix(Ia.matrix() - Um * data.Dinv[i] * Um.transpose());
  }
  if (p > 0) data.IA[p] += data.Xup[i].inv_apply(Ia);
}

// backward step, bias part: u_i = τ_i − S_iᵀ p^A_i,
// p^a_i = p^A_i + I^a_i c_i + U_i D_i⁻¹ u_i = p^A_i + I^A_i c_i + U_i D_i⁻¹ (u_i − U_iᵀ c_i),
// p^A_λ += ^iX_λᵀ p^a_i. with_c = false drops c_i (q̇ = 0, as in M⁻¹ products).
template <class S>
void aba_backward_bias_step(const Model<S>& model, Data<S>& data, int i, const S* tau, bool with_c) {
  const int p = model.parent[i], vi = model.v_index[i], ni = model.nv_i[i];
  const Motion<S>* Si = data.S.data() + vi;
  const Force<S>* Ui = data.U.data() + vi;
  Force<S> pa = data.pA[i];
  if (with_c) pa += data.IA[i] * data.c[i];
  if (ni == 1) {
    data.u[vi] = tau[vi] - dot(Si[0], data.pA[i]);
    const S w = data.u[vi] - (with_c ? dot(data.c[i], Ui[0]) : S(0));
    pa += Ui[0] * (data.Dinv[i](0, 0) * w);
  } else if (ni > 1) {
    Eigen::Matrix<S, Eigen::Dynamic, 1, 0, 6, 1> w(ni);
    for (int k = 0; k < ni; ++k) {
      data.u[vi + k] = tau[vi + k] - dot(Si[k], data.pA[i]);
      w[k] = data.u[vi + k] - (with_c ? dot(data.c[i], Ui[k]) : S(0));
    }
    const Eigen::Matrix<S, Eigen::Dynamic, 1, 0, 6, 1> z = data.Dinv[i] * w;
    for (int k = 0; k < ni; ++k) pa += Ui[k] * z[k];
  }
  if (p > 0) data.pA[p] += data.Xup[i].inv_apply(pa);
}

// pass 3 step (root to leaves): a_i = ^iX_λ a_λ + c_i, q̈_i = D_i⁻¹(u_i − U_iᵀ a_i), a_i += S_i q̈_i
template <class S>
void aba_forward_acceleration_step(const Model<S>& model, Data<S>& data, int i, const Motion<S>& a0, bool with_c,
                                   S* qdd) {
  const int p = model.parent[i], vi = model.v_index[i], ni = model.nv_i[i];
  const Motion<S>* Si = data.S.data() + vi;
  const Force<S>* Ui = data.U.data() + vi;
  Motion<S> a = data.Xup[i].apply(p > 0 ? data.a[p] : a0);
  if (with_c) a += data.c[i];
  if (ni == 1) {
    qdd[vi] = data.Dinv[i](0, 0) * (data.u[vi] - dot(a, Ui[0]));
    a += Si[0] * qdd[vi];
  } else if (ni > 1) {
    Eigen::Matrix<S, Eigen::Dynamic, 1, 0, 6, 1> w(ni);
    for (int k = 0; k < ni; ++k) w[k] = data.u[vi + k] - dot(a, Ui[k]);
    Eigen::Map<Eigen::Matrix<S, Eigen::Dynamic, 1>>(qdd + vi, ni).noalias() = data.Dinv[i] * w;
    a += subspace_times<S>(Si, ni, qdd + vi);
  }
  data.a[i] = a;
}

// inputs: q (nq), qd (nv), tau (nv), fext ((N+1) x 6 or null); output: qdd (nv)
template <class S>
TREEDYN_ENTRY void aba(const Model<S>& model, Data<S>& data, const S* q, const S* qd, const S* tau, const S* fext,
                       S* qdd) {
  aba_forward_pass_1(model, data, q, qd, fext);
  // pass 2 (leaves to root); the bias step reads I^A_i before the propagation turns it into I^a_i
  data.pivot_from = 0;
  for (int i = model.N; i >= 1; --i) {
    aba_joint_inertia_step(model, data, i);
    aba_backward_bias_step(model, data, i, tau, true);
    aba_inertia_propagation_step(model, data, i);
  }
  const Motion<S> a0 = gravity_acceleration(model);
  for (int i = 1; i <= model.N; ++i) aba_forward_acceleration_step(model, data, i, a0, true, qdd);
}

// pass 2's inertia part alone, on data's kinematics (^iX_λ, S_i at q): I^a_i, U_i and D_i⁻¹, M's factors
template <class S> void aba_factor(const Model<S>& model, Data<S>& data) {
  for (int i = 1; i <= model.N; ++i) data.IA[i] = ArticulatedInertia<S>::from(model.I[i]);
  data.pivot_from = 0;
  for (int i = model.N; i >= 1; --i) {
    aba_joint_inertia_step(model, data, i);
    aba_inertia_propagation_step(model, data, i);
  }
}

// Y = M⁻¹ R column by column, from the U_i, D_i⁻¹ already in data: the bias and acceleration
// passes of ABA with q̇ = 0 and no gravity, O(N) per column
template <class S> void aba_solve_columns(const Model<S>& model, Data<S>& data, const S* R, int m, S* Y) {
  const Motion<S> zero = Motion<S>::zero();
  for (int k = 0; k < m; ++k) {
    for (int i = 1; i <= model.N; ++i) data.pA[i] = Force<S>::zero();
    for (int i = model.N; i >= 1; --i) aba_backward_bias_step(model, data, i, R + k * model.nv, false);
    for (int i = 1; i <= model.N; ++i) aba_forward_acceleration_step(model, data, i, zero, false, Y + k * model.nv);
  }
}

// M(q)⁻¹ R for the m columns of R (nv x m, column-major) into Y: the articulated inertias once,
// then per column the two O(N) passes of ABA with q̇ = 0 and no gravity. O(N m).
template <class S>
TREEDYN_ENTRY void aba_inverse_inertia(const Model<S>& model, Data<S>& data, const S* q, const S* R, int m, S* Y) {
  kinematics(model, data, q);
  aba_factor(model, data);
  aba_solve_columns(model, data, R, m, Y);
}

}  // namespace treedyn
