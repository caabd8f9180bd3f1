// drumwright2012's Θ(n²) inverse inertia (algorithms/minv.hpp, minv_blocked.hpp) as a solver
// kernel: q̈ = M⁻¹(τ − c) with the bias c by RNEA and M⁻¹ applied by Alg. 1 / 2; M⁻¹R column by
// column over the threads; the full M⁻¹ all columns at once (mInv).
#pragma once
#include <memory>
#include <stdexcept>

#include "treedyn/algorithms/minv.hpp"
#include "treedyn/algorithms/minv_blocked.hpp"
#include "treedyn/algorithms/rnea.hpp"
#include "treedyn/solvers/kernel.hpp"

namespace treedyn {

template <class S> struct DrumwrightKernel {
  struct Workspace {
    Data<S> data;
    MinvData<S> minv;
    explicit Workspace(const Model<S>& model) : data(model), minv(model) {}
  };
  static constexpr bool forms_pivots = false;
  explicit DrumwrightKernel(const Model<S>&) {}

  double forward_dynamics(const Model<S>& model, Workspace& w, const S* q, const S* qd, const S* tau, const S* fext,
                          S* qdd) const {
    rnea(model, w.data, q, qd, static_cast<const S*>(nullptr), fext, w.data.bias.data());
    for (int k = 0; k < model.nv; ++k) w.data.bias[k] = tau[k] - w.data.bias[k];  // τ − c
    minv_precompute(model, w.minv, q);
    apply(model, w.minv, w.minv.col, w.data.bias.data(), qdd);
    return 0;
  }
  // the per-q quantities once (thread 0's), then the columns claimed by the threads as they come
  double inverse_inertia(const Model<S>& model, Workspaces<Workspace, S>& ws, const S* q, const S* R, int m, S* Y) {
    const int nv = model.nv, nthreads = column_threads(m, nv);
    ws.ensure(nthreads);
    minv_precompute(model, ws[0].minv, q);
    parallel_for(m, nthreads, [&](int k, int t) {
      apply(model, ws[0].minv, ws[t].minv.col, R + std::size_t(k) * nv, Y + std::size_t(k) * nv);
    });
    return 0;
  }
  bool inverse_mass_matrix(const Model<S>& model, Workspaces<Workspace, S>& ws, const S* q, S* Minv, double& omega) {
    omega = 0;
    minv_precompute(model, ws[0].minv, q);
    if (!blocked_) blocked_.reset(new MinvBlocked<S>(model));
    // threads split the columns, from 128 columns per thread: below that the kernel takes less
    // than ~50 us and waking a sleeping thread (tens of us in a VM) costs what it saves
    const int nthreads = std::max(1, std::min(max_threads(), model.nv / 128));
    if (!mInv(model, ws[0].minv, *blocked_, Minv, nthreads))
      throw std::domain_error(
          "inverse_mass_matrix overflowed to inf/NaN: the inputs are too large for this "
          "precision, or the model is singular");
    return true;
  }

 private:
  // M⁻¹ r by Alg. 1 (fixed base) or Alg. 2 (floating base)
  static void apply(const Model<S>& model, const MinvData<S>& w, typename MinvData<S>::Column& c, const S* r, S* out) {
    if (w.floating_base)
      mMultInvFB(model, w, c, r, out);
    else
      mMultInv(model, w, c, r, out);
  }
  std::unique_ptr<MinvBlocked<S>> blocked_;  // the full M⁻¹'s workspace, made on first use
};

}  // namespace treedyn
