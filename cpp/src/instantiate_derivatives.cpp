// The derivatives' batch loops (derivatives.hpp) for float64 and float32: items claimed by the
// pool's threads (parallel.hpp), one workspace per thread made on first use and kept; every item
// runs, and the error of the lowest failing item is the one reported, as the engines do
// (engine_impl.hpp).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "treedyn/algorithms/aba_derivatives.hpp"
#include "treedyn/algorithms/rnea_derivatives.hpp"
#include "treedyn/derivatives.hpp"
#include "treedyn/parallel.hpp"

namespace treedyn {
namespace {

// run(workspace, b) for b in [0, B), with the workspaces ws (one per thread, made from the model)
template <class W, class S, class Run>
void run_batch(const Model<S>& model, std::vector<std::unique_ptr<W>>& ws, int B, Run run) {
  const int nthreads = std::max(1, std::min(max_threads(), B));
  if (int(ws.size()) < nthreads) ws.resize(nthreads);
  if (nthreads == 1) {  // one thread: no pool, errors as they are (batch items named)
    if (!ws[0]) ws[0].reset(new W(model));
    for (int b = 0; b < B; ++b) try {
        run(*ws[0], b);
      } catch (const SingularJoint& e) {
        if (B == 1) throw;
        throw SingularJoint("batch item " + std::to_string(b) + ": " + e.what());
      } catch (const std::domain_error& e) {
        if (B == 1) throw;
        throw std::domain_error("batch item " + std::to_string(b) + ": " + e.what());
      }
    return;
  }
  const int nchunks = std::min(B, 8 * nthreads);
  std::vector<std::string> errors(nchunks);
  std::vector<char> singular(nchunks, 0);
  parallel_for(nchunks, nthreads, [&](int c, int t) {
    if (!ws[t]) ws[t].reset(new W(model));
    const int b0 = int(std::int64_t(B) * c / nchunks), b1 = int(std::int64_t(B) * (c + 1) / nchunks);
    for (int b = b0; b < b1; ++b) try {
        run(*ws[t], b);
      } catch (const std::exception& e) {
        if (errors[c].empty()) {
          errors[c] = "batch item " + std::to_string(b) + ": " + e.what();
          singular[c] = dynamic_cast<const SingularJoint*>(&e) != nullptr;
        }
      }
  });
  for (int c = 0; c < nchunks; ++c)
    if (!errors[c].empty()) {
      if (singular[c]) throw SingularJoint(errors[c]);
      throw std::domain_error(errors[c]);
    }
}

}  // namespace

template <class S> Derivatives<S>::Derivatives(const Model<S>& model) : model_(model) {}
template <class S> Derivatives<S>::~Derivatives() = default;
template <class S> void Derivatives<S>::reset(const Model<S>& model) {
  std::lock_guard<std::mutex> lock(mutex_);
  model_ = model;
  rnea_ws_.clear();
  aba_ws_.clear();
}

template <class S>
void Derivatives<S>::rnea(int B, const S* q, const S* qd, const S* qdd, const S* fext, S* dq, S* dv, S* M) {
  std::lock_guard<std::mutex> lock(mutex_);
  const Model<S>& model = model_;
  const std::size_t nq = model.nq, nv = model.nv, nf = 6 * std::size_t(model.N + 1), n2 = nv * nv;
  run_batch(model, rnea_ws_, B, [&](RneaDerivativesData<S>& w, int b) {
    rnea_derivatives(model, w, q + b * nq, qd + b * nv, qdd + b * nv, fext ? fext + b * nf : nullptr, dq + b * n2,
                     dv + b * n2, M ? M + b * n2 : nullptr);
  });
}

template <class S>
void Derivatives<S>::aba(int B, const S* q, const S* qd, const S* tau, const S* fext, S* dq, S* dv, S* Minv) {
  std::lock_guard<std::mutex> lock(mutex_);
  const Model<S>& model = model_;
  const std::size_t nq = model.nq, nv = model.nv, nf = 6 * std::size_t(model.N + 1), n2 = nv * nv;
  run_batch(model, aba_ws_, B, [&](AbaDerivativesData<S>& w, int b) {
    aba_derivatives(model, w, q + b * nq, qd + b * nv, tau + b * nv, fext ? fext + b * nf : nullptr, dq + b * n2,
                    dv + b * n2, Minv + b * n2);
  });
}

template class Derivatives<double>;
template class Derivatives<float>;

}  // namespace treedyn
