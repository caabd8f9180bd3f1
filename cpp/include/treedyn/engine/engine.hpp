// The C++ side of a solver. Engine<S> is what every solver shares — a frozen copy of the model,
// one lock, the batch loop over the threads — and KernelEngine<K, S> puts one algorithm in it:
// K is a kernel type (engine/kernels/*.hpp, one file per solver) with its per-thread Workspace and
//   double forward_dynamics(model, Workspace&, q, qd, tau, fext, qdd) const;  // returns ω
//   double inverse_inertia(model, Workspaces<K, S>&, q, R, m, Y) const;      // R, Y column-major
//   bool inverse_mass_matrix(model, Workspaces<K, S>&, q, Minv, double& ω) const;
// (ω: cfa's error indicator, 0 elsewhere; inverse_mass_matrix returns true when it has checked
// every entry finite). Adding a solver = its algorithm (algorithms/), its kernel file
// (engine/kernels/, included by engine_impl.hpp), one line in its instantiation group
// (engine_impl.hpp), one binding line. Declarations only here: the engines are instantiated in
// src/instantiate_*.cpp, so that a binding unit compiles no kernel. No Python object ever reaches
// a kernel.
#pragma once
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "treedyn/algorithms/data.hpp"
#include "treedyn/support/parallel.hpp"  // max_threads

namespace treedyn {

template <class S> class Engine {
 public:
  explicit Engine(const Model<S>& model) : model_(model) {}
  virtual ~Engine() = default;
  const Model<S>& model() const { return model_; }

  // Above accuracy_limit() an ω returned below is not vouched for (the bindings warn)
  static double accuracy_limit();
  // q (nq), qd (nv), tau (nv), fext ((N+1) x 6 or null) -> qdd (nv); the model's passive joint
  // force τ_p(q, qd) joins tau (algorithms/passive.hpp), but in a kernel that has it already (RedMax)
  double forward_dynamics(const S* q, const S* qd, const S* tau, const S* fext, S* qdd);
  // B problems stored one after the other; spread over the threads (support/parallel.hpp)
  double forward_dynamics_batch(int B, const S* q, const S* qd, const S* tau, const S* fext, S* qdd);
  // M(q)⁻¹ R, R and Y nv x m column-major
  double inverse_inertia(const S* q, const S* R, int m, S* Y);
  // the full M(q)⁻¹, nv x nv (symmetric: row- and column-major alike)
  bool inverse_mass_matrix(const S* q, S* Minv, double& omega);

 protected:
  // the kernel's entry points, called with the lock held; thread t's workspace exists
  virtual double run(int t, const S* q, const S* qd, const S* tau, const S* fext, S* qdd) = 0;
  // items b0..b1-1 of a batch on thread t (every item runs; the first error is kept in `error`):
  // one by one, unless the kernel has a block path (the generated ABA's lanes)
  virtual double run_items(int t, int b0, int b1, const S* q, const S* qd, const S* tau, const S* fext, S* qdd,
                           std::string& error);
  double run_item(int t, int b, const S* q, const S* qd, const S* tau, const S* fext, S* qdd, std::string& error);
  virtual double run_inverse_inertia(const S* q, const S* R, int m, S* Y) = 0;
  virtual bool run_inverse_mass_matrix(const S* q, S* Minv, double& omega) = 0;
  virtual void ensure_workspaces(int n) = 0;
  Model<S> model_;
  std::mutex mutex_;
};

// one workspace per thread, made on first use
template <class K, class S> class Workspaces {
 public:
  using W = typename K::Workspace;
  Workspaces(const Model<S>& model, const K& kernel) : model_(model), kernel_(kernel) {
    ensure(1);
    first_ = ws_[0].get();
  }
  W& operator[](int t) { return *ws_[t]; }
  W& first() const { return *first_; }  // thread 0's: made with the engine, never moves
  void ensure(int n) {
    while (static_cast<int>(ws_.size()) < n) ws_.emplace_back(new W(model_, kernel_));
  }

 private:
  const Model<S>& model_;
  const K& kernel_;
  std::vector<std::unique_ptr<W>> ws_;
  W* first_;
};

template <class K, class S> class KernelEngine final : public Engine<S> {
 public:
  // the kernel is made from the engine's copy of the model and the options
  template <class... Options> explicit KernelEngine(const Model<S>& model, const Options&... options);
  const K& kernel() const { return kernel_; }
  // thread 0's workspace, for the entry points a kernel adds (which hold lock() around its use,
  // or, for the RedMax solvers, whose workspace is a whole solver, take that solver's own lock)
  typename K::Workspace& workspace() const { return ws_.first(); }
  std::unique_lock<std::mutex> lock() { return std::unique_lock<std::mutex>(this->mutex_); }

 private:
  double run(int t, const S* q, const S* qd, const S* tau, const S* fext, S* qdd) override;
  double run_items(int t, int b0, int b1, const S* q, const S* qd, const S* tau, const S* fext, S* qdd,
                   std::string& error) override;
  double run_inverse_inertia(const S* q, const S* R, int m, S* Y) override;
  bool run_inverse_mass_matrix(const S* q, S* Minv, double& omega) override;
  void ensure_workspaces(int n) override;  // (out of the class: a binding unit must not make workspaces)
  const K kernel_;
  Workspaces<K, S> ws_;
  std::vector<std::vector<S>> tau_p_;  // per thread: τ + τ_p (algorithms/passive.hpp), nv
};

// ABA solvers: the pivots D_i = S_iᵀ I^A_i S_i at q (q̇ = 0), each nv_i x nv_i, column-major, one
// after the other (Σ nv_i² numbers)
template <class K, class S> void joint_inertias(KernelEngine<K, S>& engine, const S* q, S* D);

// one-shot kernels (allocate a workspace per call; for convenience functions, not hot loops)
template <class S> void rnea_once(const Model<S>& m, const S* q, const S* qd, const S* qdd, const S* fext, S* tau);
template <class S> void mass_matrix_once(const Model<S>& m, const S* q, S* M);
template <class S> void integrate_once(const Model<S>& m, const S* q, const S* v, S dt, S* qout);
// world rotation R (N+1 x 3 x 3, row-major) and origin p (N+1 x 3) of every body frame
template <class S> void forward_kinematics_once(const Model<S>& m, const S* q, S* R, S* p);

bool has_openmp();

}  // namespace treedyn
