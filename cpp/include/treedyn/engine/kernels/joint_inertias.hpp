// What the ABA kernels' joint_inertias share (solver.joint_inertias(q) in Python).
#pragma once
#include <cstddef>
#include <limits>
#include <vector>

#include "treedyn/algorithms/data.hpp"

namespace treedyn {

// The pivots D_i = S_iᵀ I^A_i S_i at q (q̇ = 0) left in data.D by forward dynamics `fd` at rest,
// each nv_i x nv_i column-major, one after the other. A pivot that is not positive stops the pass
// there: it is reported as it is, the joints nearer the root (never reached) as NaN.
template <class S, class FD> void joint_inertias(const Model<S>& model, Data<S>& data, const S* q, S* D, FD fd) {
  std::vector<S> zeros(std::size_t(model.nv), S(0)), qdd(std::size_t(model.nv));
  for (int i = 1; i <= model.N; ++i) data.D[i].setConstant(std::numeric_limits<S>::quiet_NaN());
  try {
    fd(model, data, q, zeros.data(), zeros.data(), static_cast<const S*>(nullptr), qdd.data());
  } catch (const SingularJoint&) {
  }
  for (int i = 1; i <= model.N; ++i) {
    const int n = model.nv_i[i];
    Eigen::Map<Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic>>(D, n, n) = data.D[i];
    D += n * n;
  }
}

}  // namespace treedyn
