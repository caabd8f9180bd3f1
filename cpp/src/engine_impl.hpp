// Definitions behind engine.hpp; included only by the instantiation units.
#pragma once
#include <algorithm>
#include <cstdint>
#include <exception>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "treedyn/algorithms/kinematics.hpp"
#include "treedyn/engine.hpp"
#include "treedyn/linalg/oee.hpp"
#include "treedyn/model/configuration.hpp"
#include "treedyn/parallel.hpp"
#include "treedyn/solvers/aba.hpp"
#include "treedyn/solvers/aba_modified.hpp"
#include "treedyn/solvers/cfa.hpp"
#include "treedyn/solvers/crba_cholesky.hpp"
#include "treedyn/solvers/crba_ltl.hpp"
#include "treedyn/solvers/drumwright.hpp"
#include "treedyn/solvers/jsiia.hpp"

namespace treedyn {

template <class S> double EngineBase<S>::accuracy_limit() { return double(oee_backward_error_limit<S>()); }

template <template <class> class Kernel, class S> struct Engine<Kernel, S>::State {
  using K = Kernel<S>;
  K kernel;
  Workspaces<typename K::Workspace, S> ws;  // one now; the other threads' on the first batch that uses them
  explicit State(const Model<S>& model) : kernel(model), ws(model) {}
};

template <template <class> class Kernel, class S>
Engine<Kernel, S>::Engine(const Model<S>& model) : EngineBase<S>(model), state_(new State(this->model_)) {}
template <template <class> class Kernel, class S> Engine<Kernel, S>::~Engine() = default;

template <template <class> class Kernel, class S>
double Engine<Kernel, S>::forward_dynamics(const S* q, const S* qd, const S* tau, const S* fext, S* qdd) {
  std::lock_guard<std::mutex> lock(this->mutex_);
  return state_->kernel.forward_dynamics(this->model_, state_->ws[0], q, qd, tau, fext, qdd);
}

template <template <class> class Kernel, class S>
double Engine<Kernel, S>::forward_dynamics_batch(int B, const S* q, const S* qd, const S* tau, const S* fext, S* qdd) {
  std::lock_guard<std::mutex> lock(this->mutex_);
  const Model<S>& model = this->model_;
  const int nthreads = std::max(1, std::min(max_threads(), B));  // never more threads than items
  state_->ws.ensure(nthreads);
  const int nq = model.nq, nv = model.nv, nf = 6 * (model.N + 1);
  // chunks of consecutive items, claimed by the threads as they come (parallel.hpp); every item
  // runs to the end, and the error of the lowest item is the one reported; ω is the worst item's
  const int nchunks = std::min(B, 8 * nthreads);
  std::vector<std::string> errors(nchunks);
  std::vector<double> omegas(nchunks, 0.0);
  const auto& kernel = state_->kernel;
  parallel_for(nchunks, nthreads, [&](int c, int t) {
    auto& w = state_->ws[t];
    for (int b = int(std::int64_t(B) * c / nchunks); b < int(std::int64_t(B) * (c + 1) / nchunks); ++b) {
      try {
        omegas[c] = std::max(
            omegas[c], kernel.forward_dynamics(model, w, q + std::size_t(b) * nq, qd + std::size_t(b) * nv,
                                               tau + std::size_t(b) * nv, fext ? fext + std::size_t(b) * nf : nullptr,
                                               qdd + std::size_t(b) * nv));
      } catch (const std::exception& e) {
        if (errors[c].empty()) errors[c] = "batch item " + std::to_string(b) + ": " + e.what();
      }
    }
  });
  for (const auto& e : errors)
    if (!e.empty()) throw SingularJoint(e);
  return nchunks ? *std::max_element(omegas.begin(), omegas.end()) : 0.0;
}

template <template <class> class Kernel, class S>
double Engine<Kernel, S>::inverse_inertia(const S* q, const S* R, int m, S* Y) {
  std::lock_guard<std::mutex> lock(this->mutex_);
  if (this->model_.nv == 0 || m == 0) return 0;  // nothing to solve (and no Eigen solve on an empty map: UB)
  return state_->kernel.inverse_inertia(this->model_, state_->ws, q, R, m, Y);
}

template <template <class> class Kernel, class S>
bool Engine<Kernel, S>::inverse_mass_matrix(const S* q, S* Minv, double& omega) {
  std::lock_guard<std::mutex> lock(this->mutex_);
  omega = 0;
  if (this->model_.nv == 0) return true;
  return state_->kernel.inverse_mass_matrix(this->model_, state_->ws, q, Minv, omega);
}

template <template <class> class Kernel, class S> void Engine<Kernel, S>::joint_inertias(const S* q, S* D) {
  if constexpr (!Kernel<S>::forms_pivots) {
    EngineBase<S>::joint_inertias(q, D);  // throws: this kernel has no pivots
  } else {
    std::lock_guard<std::mutex> lock(this->mutex_);
    const Model<S>& model = this->model_;
    std::vector<S> zeros(std::size_t(model.nv), S(0)), qdd(std::size_t(model.nv));
    Data<S>& data = state_->ws[0];
    // D_i depends on q only: one forward dynamics at rest leaves the pivots in data.D. A pivot that
    // is not positive stops the pass there: it is reported as it is, the joints nearer the root
    // (never reached) as NaN.
    for (int i = 1; i <= model.N; ++i) data.D[i].setConstant(std::numeric_limits<S>::quiet_NaN());
    try {
      state_->kernel.forward_dynamics(model, data, q, zeros.data(), zeros.data(), static_cast<const S*>(nullptr),
                                      qdd.data());
    } catch (const SingularJoint&) {
    }
    for (int i = 1; i <= model.N; ++i) {
      const int n = model.nv_i[i];
      Eigen::Map<Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic>>(D, n, n) = data.D[i];
      D += n * n;
    }
  }
}

template <class S> void rnea_once(const Model<S>& m, const S* q, const S* qd, const S* qdd, const S* fext, S* tau) {
  Data<S> data(m);
  rnea(m, data, q, qd, qdd, fext, tau);
}
template <class S> void mass_matrix_once(const Model<S>& m, const S* q, S* M) {
  Data<S> data(m, true);
  crba(m, data, q);
  Eigen::Map<Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(M, m.nv, m.nv) = data.M;
}
template <class S> void integrate_once(const Model<S>& m, const S* q, const S* v, S dt, S* qout) {
  integrate(m, q, v, dt, qout);
}

template <class S> void forward_kinematics_once(const Model<S>& m, const S* q, S* R, S* p) {
  std::vector<Transform<S>> X0(std::size_t(m.N) + 1);
  forward_kinematics(m, q, X0.data());
  for (int i = 0; i <= m.N; ++i, R += 9, p += 3)
    for (int r = 0; r < 3; ++r) {
      p[r] = X0[i].r[r];
      for (int c = 0; c < 3; ++c) R[3 * r + c] = X0[i].E(c, r);  // R = Eᵀ
    }
}

#define TREEDYN_INSTANTIATE(S)                                                             \
  template class EngineBase<S>;                                                            \
  template class Engine<AbaKernel, S>;                                                     \
  template class Engine<AbaModifiedKernel, S>;                                             \
  template class Engine<CrbaCholeskyKernel, S>;                                            \
  template class Engine<DrumwrightKernel, S>;                                              \
  template class Engine<CrbaLtlKernel, S>;                                                 \
  template class Engine<CrbaLtdlKernel, S>;                                                \
  template class Engine<CfaKernel, S>;                                                     \
  template class Engine<JsiiaKernel, S>;                                                   \
  template void rnea_once<S>(const Model<S>&, const S*, const S*, const S*, const S*, S*); \
  template void mass_matrix_once<S>(const Model<S>&, const S*, S*);                        \
  template void integrate_once<S>(const Model<S>&, const S*, const S*, S, S*);             \
  template void forward_kinematics_once<S>(const Model<S>&, const S*, S*, S*);

}  // namespace treedyn
