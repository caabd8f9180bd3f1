// The kernel of solver "drumwright" (engine/engine.hpp): drumwright2012's Θ(n²) inverse inertia.
//   forward dynamics   c by RNEA, then q̈ = M⁻¹(τ − c) by one column of Alg. 1 (fixed base) or
//                      Alg. 2 (floating base) after the per-q setup (algorithms/minv/minv.hpp): O(n)
//   inverse_inertia    M⁻¹R, the per-q setup once (shared by the threads), the m columns spread
//                      over the threads: O(nm)
//   inverse_mass_matrix  the full M⁻¹, all columns at once by the blocked passes, the per-q setup
//                      overlapped with the first of them (algorithms/minv/blocked.hpp, mInv_at)
#pragma once
#include <atomic>
#include <memory>
#include <stdexcept>

#include "treedyn/algorithms/minv/blocked.hpp"
#include "treedyn/algorithms/minv/minv.hpp"
#include "treedyn/algorithms/rnea.hpp"
#include "treedyn/support/parallel.hpp"

namespace treedyn {

template <class S> struct DrumwrightKernel {
  struct Workspace {
    Data<S> data;
    MinvData<S> minv;
    std::unique_ptr<MinvBlocked<S>> blocked;  // the full M⁻¹'s scratch, made on first use
    Workspace(const Model<S>& model, const DrumwrightKernel&) : data(model), minv(model) {}
  };
  static constexpr bool full_inverse = true;
  explicit DrumwrightKernel(const Model<S>&) {}

  // one column r -> M⁻¹ r with the setup of `w` and the column scratch `c`
  static void apply(const Model<S>& model, const MinvData<S>& w, typename MinvData<S>::Column& c, const S* r, S* out) {
    if (w.floating_base)
      mMultInvFB(model, w, c, r, out);
    else
      mMultInv(model, w, c, r, out);
  }
  double forward_dynamics(const Model<S>& model, Workspace& w, const S* q, const S* qd, const S* tau, const S* fext,
                          S* qdd) const {
    bias_residual(model, w.data, q, qd, tau, fext, qdd);
    minv_precompute(model, w.minv, q);
    w.data.bias = Eigen::Map<const Eigen::Matrix<S, Eigen::Dynamic, 1>>(qdd, model.nv);
    apply(model, w.minv, w.minv.col, w.data.bias.data(), qdd);
    return 0;
  }
  template <class Pool>
  double inverse_inertia(const Model<S>& model, Pool& ws, const S* q, const S* R, int m, S* Y) const {
    const int nv = model.nv, nthreads = column_threads(m, nv);
    ws.ensure(nthreads);
    MinvData<S>& w = ws[0].minv;  // thread 0's setup, thread t's column scratch
    if (nthreads <= 1) {
      minv_precompute(model, w, q);
      for (int k = 0; k < m; ++k) apply(model, w, w.col, R + std::size_t(k) * nv, Y + std::size_t(k) * nv);
      return 0;
    }
    // the threads share the setup (MinvSetup, algorithms/minv/blocked.hpp: item 0 leads it, the others help),
    // then take columns as they come (each column's operations are the same on any thread)
    MinvSetup<S> setup(model, w, q);
    std::atomic<int> next{0};
    parallel_for(nthreads, nthreads, [&](int c, int t) {
      if (c == 0)
        setup.run();
      else
        setup.help();
      if (!setup.complete()) return;  // the setup threw: parallel_for rethrows its error
      for (int k; (k = next.fetch_add(1)) < m;)
        apply(model, w, ws[t].minv.col, R + std::size_t(k) * nv, Y + std::size_t(k) * nv);
    });
    return 0;
  }
  template <class Pool> bool inverse_mass_matrix(const Model<S>& model, Pool& ws, const S* q, S* Minv,
                                                 double& omega) const {
    Workspace& w = ws[0];
    if (!w.blocked) w.blocked.reset(new MinvBlocked<S>(model));
    // threads split the columns, from 128 columns per thread: below that the kernel takes less
    // than ~50 us and waking a sleeping thread costs what it saves; the per-q setup runs beside
    // the first columns (mInv_at)
    const int nthreads = std::max(1, std::min(max_threads(), model.nv / 128));
    if (!mInv_at(model, w.minv, *w.blocked, q, Minv, nthreads))
      throw std::domain_error(
          "inverse_mass_matrix overflowed to inf/NaN: the inputs are too large for this "
          "precision, or the model is singular");
    omega = 0;
    return true;  // mInv has checked every entry while mirroring the triangle
  }
};

}  // namespace treedyn
