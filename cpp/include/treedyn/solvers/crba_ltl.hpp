// RNEA bias + CRBA mass matrix + Featherstone's (2005) branch-induced-sparsity factorisation
// M = LᵀL (LTDL: M = LᵀDL) and its back-substitutions (algorithms/ltl.hpp) as a solver kernel.
#pragma once
#include <algorithm>
#include <vector>

#include "treedyn/algorithms/crba.hpp"
#include "treedyn/algorithms/ltl.hpp"
#include "treedyn/algorithms/rnea.hpp"
#include "treedyn/solvers/kernel.hpp"

namespace treedyn {

template <class S, bool LTDL> struct CrbaLtlKernelT {
  struct Workspace : Data<S> {
    explicit Workspace(const Model<S>& model) : Data<S>(model, true) {}  // with M
  };
  static constexpr bool forms_pivots = false;
  explicit CrbaLtlKernelT(const Model<S>& model) : lambda(coordinate_parents(model)) {}

  double forward_dynamics(const Model<S>& model, Workspace& w, const S* q, const S* qd, const S* tau, const S* fext,
                          S* qdd) const {
    rnea(model, w, q, qd, static_cast<const S*>(nullptr), fext, w.bias.data());
    for (int k = 0; k < model.nv; ++k) qdd[k] = tau[k] - w.bias[k];  // τ − c
    factorize(model, w, q);
    solve(w.M.data(), model.nv, qdd);
    return 0;
  }
  // M factored once (thread 0's), then the columns claimed by the threads as they come
  double inverse_inertia(const Model<S>& model, Workspaces<Workspace, S>& ws, const S* q, const S* R, int m, S* Y) {
    factorize(model, ws[0], q);
    std::copy(R, R + std::size_t(model.nv) * m, Y);
    solve_columns(model, ws[0], m, Y);
    return 0;
  }
  bool inverse_mass_matrix(const Model<S>& model, Workspaces<Workspace, S>& ws, const S* q, S* Minv, double& omega) {
    omega = 0;
    const int nv = model.nv;
    if (nv == 0) return false;
    factorize(model, ws[0], q);
    std::fill(Minv, Minv + std::size_t(nv) * nv, S(0));
    for (int k = 0; k < nv; ++k) Minv[std::size_t(k) * nv + k] = S(1);
    solve_columns(model, ws[0], nv, Minv);
    return false;
  }

  std::vector<int> lambda;  // λ over coordinates (Featherstone 2005)

 private:
  void factorize(const Model<S>& model, Workspace& w, const S* q) const {
    crba(model, w, q);
    if (LTDL)
      ltdl(w.M.data(), model.nv, lambda.data());
    else
      ltl(w.M.data(), model.nv, lambda.data());
  }
  void solve(const S* H, int nv, S* x, int from = -1) const {
    if (LTDL)
      ltdl_solve(H, nv, lambda.data(), x, from);
    else
      ltl_solve(H, nv, lambda.data(), x, from);
  }
  // the m columns of Y solved in place, each by the same operations whatever the thread
  void solve_columns(const Model<S>& model, const Workspace& w, int m, S* Y) const {
    const int nv = model.nv;
    parallel_for(m, column_threads(m, nv), [&](int k, int) {
      S* y = Y + std::size_t(k) * nv;
      int from = nv - 1;
      while (from >= 0 && y[from] == S(0)) --from;  // the first substitution starts at the last non-zero
      if (from >= 0) solve(w.M.data(), nv, y, from);
    });
  }
};

}  // namespace treedyn
