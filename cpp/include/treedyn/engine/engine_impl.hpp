// Definitions behind engine/engine.hpp; included only by the instantiation units (src/instantiate_*.cpp).
#pragma once
#include <algorithm>
#include <cstdint>
#include <exception>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "treedyn/algorithms/crba.hpp"
#include "treedyn/algorithms/kinematics.hpp"
#include "treedyn/algorithms/passive.hpp"
#include "treedyn/algorithms/rnea.hpp"
#include "treedyn/engine/engine.hpp"
#include "treedyn/engine/kernels/aba.hpp"
#include "treedyn/engine/kernels/aba_modified.hpp"
#include "treedyn/engine/kernels/cfa.hpp"
#include "treedyn/engine/kernels/crba_cholesky.hpp"
#include "treedyn/engine/kernels/crba_ltl.hpp"
#include "treedyn/engine/kernels/drumwright.hpp"
#include "treedyn/engine/kernels/jsiia.hpp"
#include "treedyn/model/configuration.hpp"
#include "treedyn/support/parallel.hpp"

namespace treedyn {

template <class S> double Engine<S>::accuracy_limit() { return double(oee_backward_error_limit<S>()); }

template <class S>
double Engine<S>::forward_dynamics(const S* q, const S* qd, const S* tau, const S* fext, S* qdd) {
  std::lock_guard<std::mutex> lock(mutex_);
  return run(0, q, qd, tau, fext, qdd);
}

template <class S>
double Engine<S>::forward_dynamics_batch(int B, const S* q, const S* qd, const S* tau, const S* fext, S* qdd) {
  std::lock_guard<std::mutex> lock(mutex_);
  const int nthreads = std::max(1, std::min(max_threads(), B));  // never more threads than items
  ensure_workspaces(nthreads);
  // chunks of consecutive items, claimed by the threads as they come (support/parallel.hpp); every item
  // runs to the end, and the error of the lowest item is the one reported; ω is the worst item's
  const int nchunks = std::min(B, 8 * nthreads);
  std::vector<std::string> errors(nchunks);
  std::vector<double> omegas(nchunks, 0.0);
  parallel_for(nchunks, nthreads, [&](int c, int t) {
    omegas[c] = run_items(t, int(std::int64_t(B) * c / nchunks), int(std::int64_t(B) * (c + 1) / nchunks), q, qd, tau,
                          fext, qdd, errors[c]);
  });
  for (const auto& e : errors)
    if (!e.empty()) throw SingularJoint(e);
  return nchunks ? *std::max_element(omegas.begin(), omegas.end()) : 0.0;
}

template <class S>
double Engine<S>::run_item(int t, int b, const S* q, const S* qd, const S* tau, const S* fext, S* qdd,
                           std::string& error) {
  const int nq = model_.nq, nv = model_.nv, nf = 6 * (model_.N + 1);
  try {
    return run(t, q + std::size_t(b) * nq, qd + std::size_t(b) * nv, tau + std::size_t(b) * nv,
               fext ? fext + std::size_t(b) * nf : nullptr, qdd + std::size_t(b) * nv);
  } catch (const std::exception& e) {
    if (error.empty()) error = "batch item " + std::to_string(b) + ": " + e.what();
    return 0;
  }
}

template <class S>
double Engine<S>::run_items(int t, int b0, int b1, const S* q, const S* qd, const S* tau, const S* fext, S* qdd,
                            std::string& error) {
  double omega = 0;
  for (int b = b0; b < b1; ++b) omega = std::max(omega, run_item(t, b, q, qd, tau, fext, qdd, error));
  return omega;
}

template <class S> double Engine<S>::inverse_inertia(const S* q, const S* R, int m, S* Y) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (model_.nv == 0 || m == 0) return 0;  // nothing to solve (and no Eigen solve on an empty map: UB)
  return run_inverse_inertia(q, R, m, Y);
}

template <class S> bool Engine<S>::inverse_mass_matrix(const S* q, S* Minv, double& omega) {
  std::lock_guard<std::mutex> lock(mutex_);
  omega = 0;
  if (model_.nv == 0) return true;
  return run_inverse_mass_matrix(q, Minv, omega);
}

template <class K, class S>
template <class... Options>
KernelEngine<K, S>::KernelEngine(const Model<S>& model, const Options&... options)
    : Engine<S>(model), kernel_(this->model_, options...), ws_(this->model_, kernel_), tau_p_(1) {}

// a kernel whose forward dynamics has the joints' springs already (the RedMax kernels': implicit in
// their step) says K::passive_included = true; the engine adds τ_p to τ for every other kernel
template <class K, class = void> struct passive_included : std::false_type {};
template <class K>
struct passive_included<K, std::void_t<decltype(K::passive_included)>> : std::bool_constant<K::passive_included> {};

template <class K, class S>
double KernelEngine<K, S>::run(int t, const S* q, const S* qd, const S* tau, const S* fext, S* qdd) {
  if (!passive_included<K>::value && this->model_.has_springs) {
    std::vector<S>& tp = tau_p_[t];
    tp.resize(std::size_t(this->model_.nv));  // (once: the same size every call)
    add_passive_force(this->model_, q, qd, tau, tp.data());
    tau = tp.data();
  }
  return kernel_.forward_dynamics(this->model_, ws_[t], q, qd, tau, fext, qdd);
}

// a kernel with a block path (forward_dynamics_block) runs blocks of up to K::block items, then
// redoes one by one the items it flags
template <class K, class S, class = void> struct has_block_path : std::false_type {};
template <class K, class S>
struct has_block_path<K, S, std::void_t<decltype(&K::forward_dynamics_block)>> : std::true_type {};

template <class K, class S>
double KernelEngine<K, S>::run_items(int t, int b0, int b1, const S* q, const S* qd, const S* tau, const S* fext,
                                     S* qdd, std::string& error) {
  if constexpr (has_block_path<K, S>::value) {
    if (this->model_.has_springs) return Engine<S>::run_items(t, b0, b1, q, qd, tau, fext, qdd, error);  // τ + τ_p
    const int nq = this->model_.nq, nv = this->model_.nv;
    double omega = 0;
    unsigned char bad[K::block];
    for (int c0 = b0; c0 < b1; c0 += K::block) {
      const int count = std::min(K::block, b1 - c0);
      if (!kernel_.forward_dynamics_block(this->model_, ws_[t], count, q + std::size_t(c0) * nq,
                                          qd + std::size_t(c0) * nv, tau + std::size_t(c0) * nv, fext,
                                          qdd + std::size_t(c0) * nv, bad))
        return Engine<S>::run_items(t, b0, b1, q, qd, tau, fext, qdd, error);
      for (int b = 0; b < count; ++b)
        if (bad[b]) omega = std::max(omega, this->run_item(t, c0 + b, q, qd, tau, fext, qdd, error));
    }
    return omega;
  }
  return Engine<S>::run_items(t, b0, b1, q, qd, tau, fext, qdd, error);
}

// defined here rather than in the class: the vtable that a binding unit emits (pybind11's
// destructor needs it) would otherwise make that unit instantiate every kernel's workspace
template <class K, class S> void KernelEngine<K, S>::ensure_workspaces(int n) {
  ws_.ensure(n);
  if (int(tau_p_.size()) < n) tau_p_.resize(std::size_t(n));
}

template <class K, class S> double KernelEngine<K, S>::run_inverse_inertia(const S* q, const S* R, int m, S* Y) {
  return kernel_.inverse_inertia(this->model_, ws_, q, R, m, Y);
}

template <class K, class S> bool KernelEngine<K, S>::run_inverse_mass_matrix(const S* q, S* Minv, double& omega) {
  if constexpr (K::full_inverse) {
    return kernel_.inverse_mass_matrix(this->model_, ws_, q, Minv, omega);
  } else {  // the kernel's own inverse_inertia applied to 1
    const int nv = this->model_.nv;
    const Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic> I =
        Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic>::Identity(nv, nv);
    omega = kernel_.inverse_inertia(this->model_, ws_, q, I.data(), nv, Minv);
    return false;
  }
}

template <class K, class S> void joint_inertias(KernelEngine<K, S>& engine, const S* q, S* D) {
  const auto held = engine.lock();
  engine.kernel().joint_inertias(engine.model(), engine.workspace(), q, D);
}

template <class S> void rnea_once(const Model<S>& m, const S* q, const S* qd, const S* qdd, const S* fext, S* tau) {
  Data<S> data(m);
  rnea(m, data, q, qd, qdd, fext, tau);
}
template <class S> void mass_matrix_once(const Model<S>& m, const S* q, S* M) {
  Data<S> data(m, true);
  crba_root_axes(m, data, q);
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

// Explicit instantiations for the scalar S, in groups, one group a unit (cpp/src/instantiate_engine.cpp
// and the units CMakeLists.txt makes from cpp/src/instantiate_kernels.cpp.in): the shared engine and
// the one-shot kernels, then the solvers' engines. Adding a solver: one line in its group.
#define TREEDYN_INSTANTIATE_ENGINE(S)                                                      \
  template class Engine<S>;                                                                \
  template void rnea_once<S>(const Model<S>&, const S*, const S*, const S*, const S*, S*); \
  template void mass_matrix_once<S>(const Model<S>&, const S*, S*);                        \
  template void integrate_once<S>(const Model<S>&, const S*, const S*, S, S*);             \
  template void forward_kinematics_once<S>(const Model<S>&, const S*, S*, S*);
#define TREEDYN_INSTANTIATE_aba(S)                                                           \
  template class KernelEngine<AbaKernel<S>, S>;                                              \
  template class KernelEngine<AbaModifiedKernel<S>, S>;                                      \
  template KernelEngine<AbaKernel<S>, S>::KernelEngine(const Model<S>&);                     \
  template KernelEngine<AbaKernel<S>, S>::KernelEngine(const Model<S>&, const std::string&); \
  template KernelEngine<AbaModifiedKernel<S>, S>::KernelEngine(const Model<S>&);             \
  template void joint_inertias(KernelEngine<AbaKernel<S>, S>&, const S*, S*);                \
  template void joint_inertias(KernelEngine<AbaModifiedKernel<S>, S>&, const S*, S*);
#define TREEDYN_INSTANTIATE_crba(S)                                               \
  template class KernelEngine<CrbaCholeskyKernel<S>, S>;                          \
  template class KernelEngine<CrbaLtlKernel<S>, S>;                               \
  template KernelEngine<CrbaCholeskyKernel<S>, S>::KernelEngine(const Model<S>&); \
  template KernelEngine<CrbaLtlKernel<S>, S>::KernelEngine(const Model<S>&, const bool&);
#define TREEDYN_INSTANTIATE_drumwright(S)              \
  template class KernelEngine<DrumwrightKernel<S>, S>; \
  template KernelEngine<DrumwrightKernel<S>, S>::KernelEngine(const Model<S>&);
// (and cfa's block size of treedyn.linalg.solve_block_tridiagonal, linalg_kernels.cpp.in: its
// elimination is instantiated here already)
#define TREEDYN_INSTANTIATE_cfa(S)                                         \
  template class KernelEngine<CfaKernel<S>, S>;                            \
  template class KernelEngine<JsiiaKernel<S>, S>;                          \
  template KernelEngine<CfaKernel<S>, S>::KernelEngine(const Model<S>&);   \
  template KernelEngine<JsiiaKernel<S>, S>::KernelEngine(const Model<S>&); \
  template S oee_solve_once<S, 5>(int, int, int, const S*, const S*, const S*, S*);

}  // namespace treedyn
