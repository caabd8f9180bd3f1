// The kernel of solver "crba-ltl" (engine/engine.hpp): c by RNEA, M by CRBA factored in place as LᵀL
// (ltdl: LᵀDL), q̈ = M⁻¹(τ − c) by the back-substitutions; M⁻¹R column by column over the threads
#pragma once
#include <algorithm>
#include <cstddef>
#include <vector>

#include "treedyn/algorithms/crba.hpp"
#include "treedyn/algorithms/ltl.hpp"
#include "treedyn/algorithms/rnea.hpp"
#include "treedyn/support/parallel.hpp"

namespace treedyn {

template <class S> struct CrbaLtlKernel {
  struct Workspace {
    Data<S> data;
    Workspace(const Model<S>& model, const CrbaLtlKernel&) : data(model, true) {}
  };
  static constexpr bool full_inverse = true;
  const bool use_ltdl;
  const std::vector<int> lambda;  // λ over coordinates
  CrbaLtlKernel(const Model<S>& model, bool ltdl) : use_ltdl(ltdl), lambda(coordinate_parents(model)) {}

  void factorize(const Model<S>& model, Data<S>& data, const S* q) const {
    crba(model, data, q);
    data.u = data.M.diagonal();  // (u: ABA's, free here) M_kk, the pivots' scales (pivots.hpp)
    const int bad = use_ltdl ? ltdl(data.M.data(), model.nv, lambda.data(), data.u.data())
                             : ltl(data.M.data(), model.nv, lambda.data(), data.u.data());
    if (bad >= 0) throw_singular_coordinate(model, bad, use_ltdl ? "LTDL" : "LTL");
  }
  void solve(const Data<S>& data, int nv, S* x, int from = -1) const {
    if (use_ltdl)
      ltdl_solve(data.M.data(), nv, lambda.data(), x, from);
    else
      ltl_solve(data.M.data(), nv, lambda.data(), x, from);
  }
  double forward_dynamics(const Model<S>& model, Workspace& w, const S* q, const S* qd, const S* tau, const S* fext,
                          S* qdd) const {
    bias_residual(model, w.data, q, qd, tau, fext, qdd);
    factorize(model, w.data, q);
    solve(w.data, model.nv, qdd);
    return 0;
  }
  // the m columns of Y (R on entry) solved in place, claimed by the threads as they come: each
  // column by the same operations whatever the thread
  void solve_columns(const Model<S>& model, const Data<S>& data, S* Y, int m) const {
    const int nv = model.nv;
    parallel_for(m, column_threads(m, nv), [&](int k, int) {
      S* y = Y + std::size_t(k) * nv;
      int from = nv - 1;
      while (from >= 0 && y[from] == S(0)) --from;  // the first substitution starts at the last non-zero
      if (from >= 0) solve(data, nv, y, from);
    });
  }
  template <class Pool>
  double inverse_inertia(const Model<S>& model, Pool& ws, const S* q, const S* R, int m, S* Y) const {
    factorize(model, ws[0].data, q);
    std::copy(R, R + std::size_t(model.nv) * m, Y);
    solve_columns(model, ws[0].data, Y, m);
    return 0;
  }
  template <class Pool> bool inverse_mass_matrix(const Model<S>& model, Pool& ws, const S* q, S* Minv,
                                                 double& omega) const {
    factorize(model, ws[0].data, q);
    Eigen::Map<Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic>>(Minv, model.nv, model.nv).setIdentity();
    solve_columns(model, ws[0].data, Minv, model.nv);
    omega = 0;
    return false;
  }
};

}  // namespace treedyn
