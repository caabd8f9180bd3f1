// Modified articulated-body algorithm (ascher-pai-cloutier1996 §4, eq. (11)).
//
// ABA forms D_i = S_iᵀ I^A_i S_i from I^A_i = I_i + M̃_i, where M̃_i = Σ_children X_jᵀ Ī_j X_j and
// Ī_j = I^A_j − U_j D_j⁻¹ U_jᵀ is a child's projected inertia. When M̃_i is huge next to I_i
// (a light link carrying a heavy one) the sum loses I_i to rounding and D_i with it. Eq. (11)
// keeps D_i apart:  D_i = S_iᵀ I_i S_i + S_iᵀ M̃_i S_i,  and takes each child's quadratic form on
// E_ij, the part of S_i orthogonal to that child's null space range(X_j⁻¹ S_j) (§4: "E_{k+1} is
// the distance matrix from H*_{k+1} to the subspace S_{k+1}, the null space of M̃_{k+1}"), so the
// cancellation the large terms would suffer never happens: E_ij = 0 exactly for parallel joints.
// Everything else is ABA (aba.hpp); trees are handled child by child.
#pragma once
#include "treedyn/algorithms/aba.hpp"

namespace treedyn {

// D_i = S_iᵀ I_i S_i + D̃_i (eq. (11), second line) + diag(armature_i), with D̃_i accumulated by the
// children; U_i as ABA
template <class S> void aba_modified_joint_step(const Model<S>& model, Data<S>& data, int i) {
  const int vi = model.v_index[i], ni = model.nv_i[i];
  if (ni == 0) return;
  const Motion<S>* Si = data.S.data() + vi;
  Force<S>* Ui = data.U.data() + vi;
  auto& D = data.D[i];
  for (int b = 0; b < ni; ++b) {
    Ui[b] = data.IA[i] * Si[b];
    const Force<S> IS = model.I[i] * Si[b];
    for (int a = 0; a < ni; ++a) D(a, b) = dot(Si[a], IS) + data.Dtilde[i](a, b);
  }
  if (ni > 1) D = (S(0.5) * (D + D.transpose())).eval();  // the two quadratic forms, symmetrised
  for (int a = 0; a < ni && model.has_armature; ++a) D(a, a) += model.armature[vi + a];
  S scale[6];  // the same sum, the children's forms bounded (algorithms/pivots.hpp)
  for (int a = 0; a < ni; ++a)
    scale[a] =
        dot(Si[a], model.I[i] * Si[a]) + data.Dscale[vi + a] + (model.has_armature ? model.armature[vi + a] : S(0));
  invert_pivot(model, i, D, data.Dinv[i], scale);
}

// Ī_i = I^A_i − U_i D_i⁻¹ U_iᵀ in place; M̃ = X_iᵀ Ī_i X_i joins I^A_λ (eq. (11), third line), and
// its quadratic form on E = S_λ − N (NᵀN)⁻¹ NᵀS_λ, N = X_i⁻¹ S_i, joins D̃_λ
template <class S> void aba_modified_propagation_step(const Model<S>& model, Data<S>& data, int i) {
  const int p = model.parent[i], vi = model.v_index[i], ni = model.nv_i[i];
  ArticulatedInertia<S>& Ia = data.IA[i];
  const Force<S>* Ui = data.U.data() + vi;
  if (ni == 1) {
    Ia.subtract_outer_exact(Ui[0], data.D[i](0, 0));
  } else if (ni > 1) {
    Eigen::Matrix<S, 6, Eigen::Dynamic, 0, 6, 6> Um(6, ni);
    for (int b = 0; b < ni; ++b) Um.col(b) = Ui[b].vec();
    Ia = ArticulatedInertia<S>::from_matrix(Ia.matrix() - Um * data.Dinv[i] * Um.transpose());
  }
  if (p == 0) return;
  const ArticulatedInertia<S> Mt = data.Xup[i].inv_apply(Ia);  // M̃ contribution, eq. (11) first line
  data.IA[p] += Mt;
  const int vp = model.v_index[p], np = model.nv_i[p];
  if (np == 0) return;  // a welded parent: its D̃ is never used
  // E: the parent's motion subspace with its components along the null space N removed. With
  // armature N is no null space of Ī_i (Ī_i S_i = U_i D_i⁻¹ armature_i): E stays S_λ, the same form
  // without the projection's accuracy
  Motion<S> E[6];
  for (int a = 0; a < np; ++a) E[a] = data.S[vp + a];
  bool project = true;
  for (int a = 0; a < ni && model.has_armature; ++a) project = project && model.armature[vi + a] == S(0);
  if (project && ni == 1) {
    const Motion<S> n = data.Xup[i].inv_apply(data.S[vi]);
    const S nn = dot(n.ang, n.ang) + dot(n.lin, n.lin);
    for (int a = 0; a < np; ++a) E[a] = E[a] - n * ((dot(n.ang, E[a].ang) + dot(n.lin, E[a].lin)) / nn);
  } else if (project && ni > 1) {
    Eigen::Matrix<S, 6, Eigen::Dynamic, 0, 6, 6> N(6, ni);
    for (int b = 0; b < ni; ++b) N.col(b) = data.Xup[i].inv_apply(data.S[vi + b]).vec();
    const Eigen::LDLT<typename Data<S>::Small> NtN(N.transpose() * N);
    for (int a = 0; a < np; ++a) {
      const Vec6<S> e = E[a].vec();
      const Eigen::Matrix<S, Eigen::Dynamic, 1, 0, 6, 1> c = NtN.solve(N.transpose() * e);
      E[a] = Motion<S>::from(e - N * c);
    }
  }
  for (int a = 0; a < np; ++a) data.Dscale[vp + a] += block_bound(Mt, E[a]);
  for (int b = 0; b < np; ++b) {
    const Force<S> ME = Mt * E[b];
    for (int a = 0; a < np; ++a) data.Dtilde[p](a, b) += dot(E[a], ME);
  }
}

// inputs: q (nq), qd (nv), tau (nv), fext ((N+1) x 6 or null); output: qdd (nv)
template <class S>
TREEDYN_ENTRY void aba_modified(const Model<S>& model, Data<S>& data, const S* q, const S* qd, const S* tau,
                                const S* fext, S* qdd) {
  aba_forward_pass_1(model, data, q, qd, fext);
  for (int i = 1; i <= model.N; ++i) data.Dtilde[i].setZero(model.nv_i[i], model.nv_i[i]);
  data.Dscale.setZero();
  for (int i = model.N; i >= 1; --i) {
    aba_modified_joint_step(model, data, i);
    aba_backward_bias_step(model, data, i, tau, true);
    aba_modified_propagation_step(model, data, i);
  }
  const Motion<S> a0 = gravity_acceleration(model);
  for (int i = 1; i <= model.N; ++i) aba_forward_acceleration_step(model, data, i, a0, true, qdd);
}

// M(q)⁻¹ R (nv x m, column-major) into Y with the modified pivots: as aba_inverse_inertia
template <class S>
TREEDYN_ENTRY void aba_modified_inverse_inertia(const Model<S>& model, Data<S>& data, const S* q, const S* R, int m,
                                                S* Y) {
  kinematics(model, data, q);
  for (int i = 1; i <= model.N; ++i) {
    data.IA[i] = ArticulatedInertia<S>::from(model.I[i]);
    data.Dtilde[i].setZero(model.nv_i[i], model.nv_i[i]);
  }
  data.Dscale.setZero();
  for (int i = model.N; i >= 1; --i) {
    aba_modified_joint_step(model, data, i);
    aba_modified_propagation_step(model, data, i);
  }
  aba_solve_columns(model, data, R, m, Y);
}

}  // namespace treedyn
