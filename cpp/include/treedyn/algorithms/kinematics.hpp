// The joint pass every algorithm starts with: ^iX_λ(i) = X_J(q_i) X_T(i) and S_i.
#pragma once
#include "treedyn/algorithms/data.hpp"

namespace treedyn {

template <class S> inline void kinematics_step(const Model<S>& model, Data<S>& data, int i, const S* q) {
  const S* qi = q + model.q_index[i];
  joint_subspace(model, i, qi, data.S.data() + model.v_index[i]);
  data.Xup[i] = ParentTransform<S>::make(joint_transform(model, i, qi), model.X_tree[i]);
}

template <class S> void kinematics(const Model<S>& model, Data<S>& data, const S* q) {
  for (int i = 1; i <= model.N; ++i) kinematics_step(model, data, i, q);
}

// Forward kinematics, the base stage of frame placements, Jacobians and contact: ^iX_0 (world ->
// body i; E = R_iᵀ and r = p_i, the body frame's world rotation and origin) of every body,
// ^iX_0 = ^iX_λ ^λX_0 chained from the root by compose (exact products, spatial/transform.hpp)
template <class S> void forward_kinematics(const Model<S>& model, const S* q, Transform<S>* X0) {
  X0[0] = Transform<S>::identity();
  for (int i = 1; i <= model.N; ++i) {
    const Transform<S> Xup = joint_transform(model, i, q + model.q_index[i]) * model.X_tree[i];
    X0[i] = compose(Xup, X0[model.parent[i]]);
  }
}

}  // namespace treedyn
