// What the kernels share: the per-thread workspace pool, and M⁻¹ as M⁻¹R with R = 1 for the
// kernels without a dedicated full inverse. A kernel (one per algorithm, the files beside this one)
// is a struct with
//   struct Workspace { explicit Workspace(const Model<S>&); ... };      per thread
//   explicit Kernel(const Model<S>&);                                    constants of the algorithm
//   double forward_dynamics(model, Workspace&, q, qd, tau, fext, qdd) const;   thread-safe
//   double inverse_inertia(model, Workspaces<Workspace, S>&, q, R, m, Y);
//   bool inverse_mass_matrix(model, Workspaces<Workspace, S>&, q, Minv, omega);
//   static constexpr bool forms_pivots;   (true: void joint_inertias(model, Workspace&, q, D) const)
// and Engine<Kernel, S> (src/engine_impl.hpp) adds the threads, the batches and the lock.
#pragma once
#include <Eigen/Core>
#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "treedyn/model/model.hpp"
#include "treedyn/parallel.hpp"

namespace treedyn {

template <class W, class S> class Workspaces {
 public:
  explicit Workspaces(const Model<S>& model) : model_(model) { ensure(1); }
  // the other threads' workspaces are made on the first call that uses them
  void ensure(int n) {
    while (static_cast<int>(w_.size()) < n) w_.emplace_back(new W(model_));
  }
  W& operator[](int t) { return *w_[t]; }

 private:
  const Model<S>& model_;
  std::vector<std::unique_ptr<W>> w_;
};

// threads for m independent columns of n coordinates: never more than the columns, and one when
// the whole job is too small to pay for waking the others
inline int column_threads(int m, int nv) {
  if (std::int64_t(m) * nv * nv < 20000) return 1;
  return std::max(1, std::min(max_threads(), m));
}

// the full M⁻¹ by the kernel's own inverse_inertia applied to the identity
template <class K, class W, class S>
double minv_by_columns(K& kernel, const Model<S>& model, Workspaces<W, S>& ws, const S* q, S* Minv) {
  const int nv = model.nv;
  if (nv == 0) return 0;
  const Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic> I =
      Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic>::Identity(nv, nv);
  return kernel.inverse_inertia(model, ws, q, I.data(), nv, Minv);
}

}  // namespace treedyn
