// The derivatives' batch loops (derivatives.hpp) for float64 and float32: items claimed by the
// pool's threads (parallel.hpp), one workspace per thread; every item runs, and the error of the
// lowest failing item is the one reported, as the engines do (engine_impl.hpp).
#include <algorithm>
#include <cstddef>
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

// run(workspace, b) for b in [0, B); W made from the model, one per thread
template <class W, class S, class Run> void run_batch(const Model<S>& model, int B, Run run) {
  if (B == 1) {  // one state: no pool, errors as they are
    W w(model);
    run(w, 0);
    return;
  }
  const int nthreads = std::max(1, std::min(max_threads(), B));
  std::vector<std::unique_ptr<W>> ws(nthreads);
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

template <class S>
void rnea_derivatives_batch(const Model<S>& model, int B, const S* q, const S* qd, const S* qdd, const S* fext, S* dq,
                            S* dv, S* M) {
  const std::size_t nq = model.nq, nv = model.nv, nf = 6 * std::size_t(model.N + 1), n2 = nv * nv;
  run_batch<RneaDerivativesData<S>>(model, B, [&](RneaDerivativesData<S>& w, int b) {
    rnea_derivatives(model, w, q + b * nq, qd + b * nv, qdd + b * nv, fext ? fext + b * nf : nullptr, dq + b * n2,
                     dv + b * n2, M ? M + b * n2 : nullptr);
  });
}

template <class S>
void aba_derivatives_batch(const Model<S>& model, int B, const S* q, const S* qd, const S* tau, const S* fext, S* dq,
                           S* dv, S* Minv) {
  const std::size_t nq = model.nq, nv = model.nv, nf = 6 * std::size_t(model.N + 1), n2 = nv * nv;
  run_batch<AbaDerivativesData<S>>(model, B, [&](AbaDerivativesData<S>& w, int b) {
    aba_derivatives(model, w, q + b * nq, qd + b * nv, tau + b * nv, fext ? fext + b * nf : nullptr, dq + b * n2,
                    dv + b * n2, Minv + b * n2);
  });
}

#define TREEDYN_INSTANTIATE_DERIVATIVES(S)                                                                           \
  template void rnea_derivatives_batch<S>(const Model<S>&, int, const S*, const S*, const S*, const S*, S*, S*, S*); \
  template void aba_derivatives_batch<S>(const Model<S>&, int, const S*, const S*, const S*, const S*, S*, S*, S*);
TREEDYN_INSTANTIATE_DERIVATIVES(double)
TREEDYN_INSTANTIATE_DERIVATIVES(float)

}  // namespace treedyn
