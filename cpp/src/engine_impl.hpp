// Definitions behind engine.hpp; included only by the instantiation units.
#pragma once
#include <algorithm>
#include <exception>
#include <string>

#include "treedyn/algorithms/aba.hpp"
#include "treedyn/algorithms/crba_cholesky.hpp"
#include "treedyn/engine.hpp"
#include "treedyn/model/configuration.hpp"

#ifdef TREEDYN_HAS_OPENMP
#include <omp.h>
#endif

namespace treedyn {

template <class S>
Engine<S>::Engine(const Model<S>& model, Method method) : model_(model), method_(method) {
  // one workspace now; the other threads' ones on the first batch that uses them
  data_.emplace_back(new Data<S>(model_, method_ == Method::CRBACholesky));
}
template <class S> Engine<S>::~Engine() = default;

template <class S> Data<S>& Engine<S>::workspace(int thread) {
  return *data_[thread];
}

template <class S>
void Engine<S>::run(Data<S>& data, const S* q, const S* qd, const S* tau, const S* fext, S* qdd) {
  if (method_ == Method::ABA) aba(model_, data, q, qd, tau, fext, qdd);
  else crba_cholesky_forward_dynamics(model_, data, q, qd, tau, fext, qdd);
}

template <class S>
void Engine<S>::forward_dynamics(const S* q, const S* qd, const S* tau, const S* fext, S* qdd) {
  std::lock_guard<std::mutex> lock(mutex_);
  run(workspace(0), q, qd, tau, fext, qdd);
}

template <class S>
void Engine<S>::forward_dynamics_batch(int B, const S* q, const S* qd, const S* tau, const S* fext, S* qdd) {
  std::lock_guard<std::mutex> lock(mutex_);
  const int nthreads = std::max(1, std::min(max_threads(), B));  // never more threads than items
  while (static_cast<int>(data_.size()) < nthreads)
    data_.emplace_back(new Data<S>(model_, method_ == Method::CRBACholesky));
  const int nq = model_.nq, nv = model_.nv, nf = 6 * (model_.N + 1);
  // exceptions must not leave an OpenMP region: keep the one of the lowest item, rethrow after
  std::string error;
  int error_item = B;
#ifdef TREEDYN_HAS_OPENMP
#pragma omp parallel for schedule(static) num_threads(nthreads) if (nthreads > 1)
#endif
  for (int b = 0; b < B; ++b) {
#ifdef TREEDYN_HAS_OPENMP
    const int t = omp_get_thread_num();
#else
    const int t = 0;
#endif
    try {
      run(*data_[t], q + b * nq, qd + b * nv, tau + b * nv, fext ? fext + b * nf : nullptr, qdd + b * nv);
    } catch (const std::exception& e) {
#ifdef TREEDYN_HAS_OPENMP
#pragma omp critical(treedyn_batch_error)
#endif
      if (b < error_item) {
        error_item = b;
        error = "batch item " + std::to_string(b) + ": " + e.what();
      }
    }
  }
  if (error_item < B) throw SingularJoint(error);
}

template <class S> void Engine<S>::inverse_inertia(const S* q, const S* R, int m, S* Y) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (method_ == Method::ABA) aba_inverse_inertia(model_, workspace(0), q, R, m, Y);
  else crba_cholesky_inverse_inertia(model_, workspace(0), q, R, m, Y);
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

#define TREEDYN_INSTANTIATE(S)                                                                     \
  template class Engine<S>;                                                                        \
  template void rnea_once<S>(const Model<S>&, const S*, const S*, const S*, const S*, S*);          \
  template void mass_matrix_once<S>(const Model<S>&, const S*, S*);                                \
  template void integrate_once<S>(const Model<S>&, const S*, const S*, S, S*);

}  // namespace treedyn
