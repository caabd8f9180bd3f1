// The kernel of solver "aba" (engine/engine.hpp); with a library generated for the model (its path,
// codegen/generated.hpp: featherstone-part3's symbolic simplification), calls without f_ext run
// the generated code, and the generic passes of algorithms/aba.hpp only redo what it flags (a guard failed, a
// result not finite), so that errors are the generic kernel's
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "treedyn/algorithms/aba.hpp"
#include "treedyn/codegen/generated.hpp"
#include "treedyn/engine/kernels/joint_inertias.hpp"

namespace treedyn {

template <class S> struct AbaKernel {
  struct Workspace {
    Data<S> data;
    std::vector<S> scratch;                                           // the generated code's, one robot
    std::unique_ptr<S[], void (*)(void*)> lanes{nullptr, std::free};  // and W robots, 64-byte aligned
    Workspace(const Model<S>& model, const AbaKernel& k) : data(model) {
      if (!k.generated) return;
      scratch.resize(std::size_t(k.generated->scratch()));
      const std::size_t bytes = std::size_t(k.generated->scratch()) * k.generated->lanes() * sizeof(S);
      lanes.reset(static_cast<S*>(std::aligned_alloc(64, (bytes + 63) / 64 * 64)));
      if (!lanes) throw std::bad_alloc();
    }
  };
  static constexpr bool full_inverse = false;  // M⁻¹ = inverse_inertia(1)
  static constexpr int block = 256;            // robots per call of the generated batch code
  std::shared_ptr<const GeneratedAba<S>> generated;

  explicit AbaKernel(const Model<S>& model, const std::string& library = "") {
    if (!library.empty()) generated = std::make_shared<const GeneratedAba<S>>(library, model);
  }
  static bool all_finite(const S* x, int n) {
    for (int k = 0; k < n; ++k)
      if (!std::isfinite(static_cast<double>(x[k]))) return false;
    return true;
  }
  double forward_dynamics(const Model<S>& model, Workspace& w, const S* q, const S* qd, const S* tau, const S* fext,
                          S* qdd) const {
    if (generated && !fext && generated->forward_dynamics(q, qd, tau, qdd, w.scratch.data()) == 0 &&
        all_finite(qdd, model.nv))
      return 0;
    aba(model, w.data, q, qd, tau, fext, qdd);
    return 0;
  }
  // robots b = 0..count-1 (at most `block`) by the generated code, W at a time; bad[b] = 1 for
  // the robots to redo one by one. False (nothing done) without generated code or with f_ext.
  bool forward_dynamics_block(const Model<S>& model, Workspace& w, int count, const S* q, const S* qd, const S* tau,
                              const S* fext, S* qdd, unsigned char* bad) const {
    if (!generated || fext) return false;
    generated->forward_dynamics_batch(count, q, qd, tau, qdd, bad, w.lanes.get());
    for (int b = 0; b < count; ++b) bad[b] = bad[b] || !all_finite(qdd + std::size_t(b) * model.nv, model.nv);
    return true;
  }
  template <class Pool>
  double inverse_inertia(const Model<S>& model, Pool& ws, const S* q, const S* R, int m, S* Y) const {
    aba_inverse_inertia(model, ws[0].data, q, R, m, Y);
    return 0;
  }
  void joint_inertias(const Model<S>& model, Workspace& w, const S* q, S* D) const {
    // a lambda, not &aba<S>: an address taken would keep aba out of line in forward_dynamics too
    treedyn::joint_inertias(model, w.data, q, D, [](auto&&... a) { aba(a...); });
  }
};

}  // namespace treedyn
