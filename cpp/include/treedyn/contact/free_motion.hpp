// The contact step's free motion q̈ = M⁻¹(τ − c) by the route MuJoCo takes (mj_fwdAcceleration on mj_crb's M
// and mj_factorM's sparse factor): c by RNEA at q̈ = 0, M by CRBA in the root body's axes, M = LᵀL on the
// tree's compact rows (algorithms/ltl.hpp) and its two back-substitutions. Where Newton solves the step it
// needs M anyway (its Hessian M + JᵀDJ), so the free motion costs RNEA and a sparse factor where ABA costs
// its three passes on top of CRBA.
//   Each pivot is held to the screen of the scale of the inertia its joint carries, the composite inertia
// I^c_i: I^A_i ⪯ I^c_i, so its blocks bound the articulated inertia's, and the screen refuses every pivot that
// ABA's screen refuses (algorithms/pivots.hpp; LTL's pivot of a one-coordinate joint is ABA's D_i) and perhaps
// a few more. The caller then takes ABA, whose test decides: the step refuses what ABA refuses.
#pragma once
#include <vector>

#include "treedyn/algorithms/crba.hpp"
#include "treedyn/algorithms/ltl.hpp"
#include "treedyn/algorithms/pivots.hpp"
#include "treedyn/algorithms/rnea.hpp"

namespace treedyn {

// inputs: q, v, τ; kin: its ^iX_λ, S_i at q on return (RNEA's), mass: M at q (CRBA; Data(model, true)); chain:
// the tree's compact rows; L, scale: workspaces. Output: q̈. false (q̈ unfinished) where a pivot is below its scale.
inline bool crba_ltl_free_motion(const Model<double>& model, Data<double>& kin, Data<double>& mass,
                                 const ChainRows& chain, std::vector<double>& L, std::vector<double>& scale,
                                 const double* q, const double* v, const double* tau, double* qdd) {
  bias_residual(model, kin, q, v, tau, static_cast<const double*>(nullptr), qdd);  // q̈ ← τ − c
  mass.Xup = kin.Xup, mass.S = kin.S;
  crba_root_axes_from_kinematics(model, mass);  // M, and I^c_i in body i's coordinates
  L.resize(chain.nnz()), scale.resize(model.nv);
  for (int i = 1; i <= model.N; ++i) {
    if (model.nv_i[i] == 0) continue;
    const ArticulatedInertia<double> Ic = ArticulatedInertia<double>::from(mass.Ic[i]);
    for (int k = model.v_index[i]; k < model.v_index[i] + model.nv_i[i]; ++k)
      scale[k] = pivot_scale(model, Ic, kin.S[k], k);
  }
  ltl_rows_from(mass.M, static_cast<const double*>(nullptr), chain, L.data());
  if (ltl_rows(L.data(), chain, scale.data()) >= 0) return false;
  ltl_rows_solve(L.data(), chain, qdd);  // q̈ = M⁻¹(τ − c)
  return true;
}

}  // namespace treedyn
