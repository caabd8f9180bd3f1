// Definitions behind engine.hpp; included only by the instantiation units.
#pragma once
#include <algorithm>
#include <cstdint>
#include <exception>
#include <limits>
#include <stdexcept>
#include <string>

#include "treedyn/algorithms/aba.hpp"
#include "treedyn/algorithms/aba_modified.hpp"
#include "treedyn/algorithms/cfa.hpp"
#include "treedyn/algorithms/crba_cholesky.hpp"
#include "treedyn/algorithms/jsiia.hpp"
#include "treedyn/algorithms/kinematics.hpp"
#include "treedyn/algorithms/ltl.hpp"
#include "treedyn/algorithms/minv.hpp"
#include "treedyn/algorithms/minv_blocked.hpp"
#include "treedyn/engine.hpp"
#include "treedyn/model/configuration.hpp"
#include "treedyn/parallel.hpp"

namespace treedyn {

namespace {
inline bool uses_mass_matrix(Method m) {
  return m == Method::CRBACholesky || m == Method::CRBALTL || m == Method::CRBALTDL;
}
inline bool uses_ltl(Method m) { return m == Method::CRBALTL || m == Method::CRBALTDL; }
}  // namespace

template <class S>
Engine<S>::Engine(const Model<S>& model, Method method) : model_(model), method_(method) {
  if (uses_ltl(method_)) lambda_ = coordinate_parents(model_);
  // one workspace now; the other threads' ones on the first batch that uses them
  ensure_workspaces(1);
}
template <class S> Engine<S>::~Engine() = default;

template <class S> Data<S>& Engine<S>::workspace(int thread) { return *data_[thread]; }

template <class S> void Engine<S>::ensure_workspaces(int n) {
  while (static_cast<int>(data_.size()) < n) {
    data_.emplace_back(new Data<S>(model_, uses_mass_matrix(method_)));
    if (method_ == Method::Drumwright) minv_.emplace_back(new MinvData<S>(model_));
    if (method_ == Method::CFA) cfa_.emplace_back(new CfaData<S>(model_));
    if (method_ == Method::JSIIA) jsiia_.emplace_back(new JsiiaData<S>(model_));
  }
}

// M(q) factored in data (thread 0's): dense LLᵀ, or Featherstone's LTL / LTDL in place
template <class S> void Engine<S>::factorize(Data<S>& data, const S* q) {
  if (method_ == Method::CRBACholesky) {
    factorize_mass_matrix(model_, data, q);
    return;
  }
  crba(model_, data, q);
  if (method_ == Method::CRBALTL)
    ltl(data.M.data(), model_.nv, lambda_.data());
  else
    ltdl(data.M.data(), model_.nv, lambda_.data());
}

template <class S> double Engine<S>::accuracy_limit() { return double(oee_backward_error_limit<S>()); }

template <class S>
double Engine<S>::run(int t, const S* q, const S* qd, const S* tau, const S* fext, S* qdd) {
  Data<S>& data = *data_[t];
  switch (method_) {
    case Method::ABA:
      aba(model_, data, q, qd, tau, fext, qdd);
      return 0;
    case Method::ABAModified:
      aba_modified(model_, data, q, qd, tau, fext, qdd);
      return 0;
    case Method::CRBACholesky:
      crba_cholesky_forward_dynamics(model_, data, q, qd, tau, fext, qdd);
      return 0;
    case Method::CFA:
      return double(cfa(model_, data, *cfa_[t], q, qd, tau, fext, qdd));
    case Method::JSIIA:
      jsiia(model_, data, *jsiia_[t], q, qd, tau, fext, qdd);
      return 0;
    default:
      break;
  }
  // q̈ = M⁻¹(τ − c): the bias c by RNEA, then M⁻¹ applied to one column
  rnea(model_, data, q, qd, static_cast<const S*>(nullptr), fext, data.bias.data());
  for (int k = 0; k < model_.nv; ++k) qdd[k] = tau[k] - data.bias[k];
  if (method_ == Method::Drumwright) {
    MinvData<S>& w = *minv_[t];
    minv_precompute(model_, w, q);
    data.bias = Eigen::Map<const Eigen::Matrix<S, Eigen::Dynamic, 1>>(qdd, model_.nv);
    if (w.floating_base)
      mMultInvFB(model_, w, w.col, data.bias.data(), qdd);
    else
      mMultInv(model_, w, w.col, data.bias.data(), qdd);
    return 0;
  }
  factorize(data, q);
  if (method_ == Method::CRBALTL)
    ltl_solve(data.M.data(), model_.nv, lambda_.data(), qdd);
  else
    ltdl_solve(data.M.data(), model_.nv, lambda_.data(), qdd);
  return 0;
}

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
  const int nq = model_.nq, nv = model_.nv, nf = 6 * (model_.N + 1);
  // chunks of consecutive items, claimed by the threads as they come (parallel.hpp); every item
  // runs to the end, and the error of the lowest item is the one reported; ω is the worst item's
  const int nchunks = std::min(B, 8 * nthreads);
  std::vector<std::string> errors(nchunks);
  std::vector<double> omegas(nchunks, 0.0);
  parallel_for(nchunks, nthreads, [&](int c, int t) {
    for (int b = int(std::int64_t(B) * c / nchunks); b < int(std::int64_t(B) * (c + 1) / nchunks); ++b) {
      try {
        omegas[c] =
            std::max(omegas[c], run(t, q + std::size_t(b) * nq, qd + std::size_t(b) * nv, tau + std::size_t(b) * nv,
                                    fext ? fext + std::size_t(b) * nf : nullptr, qdd + std::size_t(b) * nv));
      } catch (const std::exception& e) {
        if (errors[c].empty()) errors[c] = "batch item " + std::to_string(b) + ": " + e.what();
      }
    }
  });
  for (const auto& e : errors)
    if (!e.empty()) throw SingularJoint(e);
  return nchunks ? *std::max_element(omegas.begin(), omegas.end()) : 0.0;
}

// the m columns of Y (holding R on entry for crba-ltl) solved independently, claimed by the
// threads as they come: each column is computed by the same operations whatever the thread
template <class S> void Engine<S>::solve_columns(const S* R, int m, S* Y, int nthreads) {
  const int nv = model_.nv;
  parallel_for(m, nthreads, [&](int k, int t) {
    S* y = Y + std::size_t(k) * nv;
    if (method_ == Method::Drumwright) {
      const MinvData<S>& w = *minv_[0];
      auto& col = minv_[t]->col;
      if (w.floating_base)
        mMultInvFB(model_, w, col, R + std::size_t(k) * nv, y);
      else
        mMultInv(model_, w, col, R + std::size_t(k) * nv, y);
    } else {
      int from = nv - 1;
      while (from >= 0 && y[from] == S(0)) --from;  // the first substitution starts at the last non-zero
      if (from < 0) return;
      if (method_ == Method::CRBALTL)
        ltl_solve(data_[0]->M.data(), nv, lambda_.data(), y, from);
      else
        ltdl_solve(data_[0]->M.data(), nv, lambda_.data(), y, from);
    }
  });
}

// threads for m independent columns of n coordinates: never more than the columns, and one when
// the whole job is too small to pay for waking the others
inline int column_threads(int m, int nv) {
  if (std::int64_t(m) * nv * nv < 20000) return 1;
  return std::max(1, std::min(max_threads(), m));
}

template <class S> double Engine<S>::inverse_inertia(const S* q, const S* R, int m, S* Y) {
  std::lock_guard<std::mutex> lock(mutex_);
  const int nv = model_.nv;
  if (nv == 0 || m == 0) return 0;  // nothing to solve (and no Eigen solve on an empty map: UB)
  switch (method_) {
    case Method::ABA:
      aba_inverse_inertia(model_, workspace(0), q, R, m, Y);
      return 0;
    case Method::CFA:
      return double(cfa_inverse_inertia(model_, workspace(0), *cfa_[0], q, R, m, Y));
    case Method::ABAModified:
      aba_modified_inverse_inertia(model_, workspace(0), q, R, m, Y);
      return 0;
    case Method::CRBACholesky:
      crba_cholesky_inverse_inertia(model_, workspace(0), q, R, m, Y);
      return 0;
    case Method::JSIIA:
      jsiia_inverse_inertia(model_, workspace(0), *jsiia_[0], q, R, m, Y);
      return 0;
    case Method::Drumwright: {
      const int nthreads = column_threads(m, nv);
      ensure_workspaces(nthreads);
      minv_precompute(model_, *minv_[0], q);
      solve_columns(R, m, Y, nthreads);
      return 0;
    }
    default: {
      factorize(workspace(0), q);
      std::copy(R, R + std::size_t(nv) * m, Y);
      solve_columns(Y, m, Y, column_threads(m, nv));
      return 0;
    }
  }
}

template <class S> void Engine<S>::joint_inertias(const S* q, S* D) {
  if (method_ != Method::ABA && method_ != Method::ABAModified)
    throw std::invalid_argument("joint_inertias: only the ABA solvers form the pivots D_i");
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<S> zeros(std::size_t(model_.nv), S(0)), qdd(std::size_t(model_.nv));
  Data<S>& data = workspace(0);
  // D_i depends on q only: one forward dynamics at rest leaves the pivots in data.D. A pivot that
  // is not positive stops the pass there: it is reported as it is, the joints nearer the root
  // (never reached) as NaN.
  for (int i = 1; i <= model_.N; ++i) data.D[i].setConstant(std::numeric_limits<S>::quiet_NaN());
  try {
    if (method_ == Method::ABA)
      aba(model_, data, q, zeros.data(), zeros.data(), static_cast<const S*>(nullptr), qdd.data());
    else
      aba_modified(model_, data, q, zeros.data(), zeros.data(), static_cast<const S*>(nullptr), qdd.data());
  } catch (const SingularJoint&) {
  }
  for (int i = 1; i <= model_.N; ++i) {
    const int n = model_.nv_i[i];
    Eigen::Map<Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic>>(D, n, n) = data.D[i];
    D += n * n;
  }
}

template <class S> bool Engine<S>::inverse_mass_matrix(const S* q, S* Minv, double& omega) {
  const int nv = model_.nv;
  omega = 0;
  if (method_ != Method::Drumwright) {  // the solver's own inverse_inertia applied to 1
    Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic> I =
        Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic>::Identity(nv, nv);
    if (method_ == Method::ABA || method_ == Method::ABAModified || method_ == Method::CFA ||
        method_ == Method::JSIIA) {
      omega = inverse_inertia(q, I.data(), nv, Minv);
      return false;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    factorize(workspace(0), q);
    if (method_ == Method::CRBACholesky) {
      workspace(0).llt.solveInPlace(I);
      std::copy(I.data(), I.data() + std::size_t(nv) * nv, Minv);
    } else {
      std::copy(I.data(), I.data() + std::size_t(nv) * nv, Minv);
      solve_columns(Minv, nv, Minv, column_threads(nv, nv));
    }
    return false;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  minv_precompute(model_, *minv_[0], q);
  if (!blocked_) blocked_.reset(new MinvBlocked<S>(model_));
  // threads split the columns, from 128 columns per thread: below that the kernel takes less
  // than ~50 us and waking a sleeping OpenMP thread (tens of us in a VM) costs what it saves
  const int nthreads = std::max(1, std::min(max_threads(), nv / 128));
  if (!mInv(model_, *minv_[0], *blocked_, Minv, nthreads))
    throw std::domain_error(
        "inverse_mass_matrix overflowed to inf/NaN: the inputs are too large for this "
        "precision, or the model is singular");
  return true;
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
  template class Engine<S>;                                                                \
  template void rnea_once<S>(const Model<S>&, const S*, const S*, const S*, const S*, S*); \
  template void mass_matrix_once<S>(const Model<S>&, const S*, S*);                        \
  template void integrate_once<S>(const Model<S>&, const S*, const S*, S, S*);             \
  template void forward_kinematics_once<S>(const Model<S>&, const S*, S*, S*);

}  // namespace treedyn
