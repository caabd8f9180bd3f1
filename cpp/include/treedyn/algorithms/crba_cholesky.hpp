// Forward dynamics by the classical O(N³) route (drumwright2012 §6 baseline):
// c = RNEA(q, q̇, 0), M = CRBA(q), M = L Lᵀ (dense Cholesky), q̈ = M⁻¹(τ − c).
#pragma once
#include <string>

#include "treedyn/algorithms/crba.hpp"
#include "treedyn/algorithms/pivots.hpp"
#include "treedyn/algorithms/rnea.hpp"

namespace treedyn {

template <class S> void factorize_mass_matrix(const Model<S>& model, Data<S>& data, const S* q) {
  crba(model, data, q);
  data.llt.compute(data.M);
  const int bad = singular_pivot<S>(data.llt, data.M);
  if (bad >= 0) throw_singular_coordinate(model, bad, "Cholesky");
}

// inputs: q, qd, tau, fext (or null); output: qdd. data must have with_mass_matrix.
template <class S>
TREEDYN_ENTRY void crba_cholesky_forward_dynamics(const Model<S>& model, Data<S>& data, const S* q, const S* qd,
                                                  const S* tau, const S* fext, S* qdd) {
  rnea(model, data, q, qd, static_cast<const S*>(nullptr), fext, data.bias.data());
  factorize_mass_matrix(model, data, q);
  Eigen::Map<Eigen::Matrix<S, Eigen::Dynamic, 1>> out(qdd, model.nv);
  out = Eigen::Map<const Eigen::Matrix<S, Eigen::Dynamic, 1>>(tau, model.nv) - data.bias;
  data.llt.solveInPlace(out);
}

// M(q)⁻¹ R (nv x m, column-major) into Y
template <class S>
TREEDYN_ENTRY void crba_cholesky_inverse_inertia(const Model<S>& model, Data<S>& data, const S* q, const S* R, int m,
                                                 S* Y) {
  factorize_mass_matrix(model, data, q);
  Eigen::Map<Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic>> out(Y, model.nv, m);
  out = Eigen::Map<const Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic>>(R, model.nv, m);
  data.llt.solveInPlace(out);
}

}  // namespace treedyn
