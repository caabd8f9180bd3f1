// The joint pass every algorithm starts with: ^iX_λ(i) = X_J(q_i) X_T(i) and S_i.
#pragma once
#include "treedyn/algorithms/data.hpp"

namespace treedyn {

template <class S> inline void kinematics_step(const Model<S>& model, Data<S>& data, int i, const S* q) {
  const S* qi = q + model.q_index[i];
  joint_subspace(model, i, qi, data.S.data() + model.v_index[i]);
  data.Xup[i] = joint_transform(model, i, qi) * model.X_tree[i];
}

template <class S> void kinematics(const Model<S>& model, Data<S>& data, const S* q) {
  for (int i = 1; i <= model.N; ++i) kinematics_step(model, data, i, q);
}

}  // namespace treedyn
