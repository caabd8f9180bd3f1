// The C++ side of a solver: a frozen copy of the model, a kernel (one algorithm, solvers/*.hpp),
// one workspace per thread, and the entry points the bindings call with raw pointers (no Python
// object ever reaches a kernel). EngineBase is what every solver shares (the model, the lock, the
// entry points); Engine<Kernel, S> adds one kernel. Declarations only: the engines are defined in
// src/engine_impl.hpp and instantiated for double and float in src/instantiate_*.cpp, so that the
// bindings never compile a kernel.
#pragma once
#include <memory>
#include <mutex>
#include <stdexcept>

#include "treedyn/model/model.hpp"

namespace treedyn {

// the kernels (one per algorithm, cpp/include/treedyn/solvers/)
template <class S> struct AbaKernel;                  // solvers/aba.hpp
template <class S> struct AbaModifiedKernel;          // solvers/aba_modified.hpp
template <class S> struct CrbaCholeskyKernel;         // solvers/crba_cholesky.hpp
template <class S> struct DrumwrightKernel;           // solvers/drumwright.hpp
template <class S, bool LTDL> struct CrbaLtlKernelT;  // solvers/crba_ltl.hpp
template <class S> using CrbaLtlKernel = CrbaLtlKernelT<S, false>;
template <class S> using CrbaLtdlKernel = CrbaLtlKernelT<S, true>;
template <class S> struct CfaKernel;    // solvers/cfa.hpp
template <class S> struct JsiiaKernel;  // solvers/jsiia.hpp

template <class S> class EngineBase {
 public:
  explicit EngineBase(const Model<S>& model) : model_(model) {}
  virtual ~EngineBase() = default;
  const Model<S>& model() const { return model_; }

  // forward_dynamics, its batch, inverse_inertia and inverse_mass_matrix return ω: for cfa the
  // error indicator of its iterative refinements (the componentwise backward error of A F_c = −Bτ,
  // or the relative error estimated to be left, cfa.hpp; the worst over a batch or the columns),
  // 0 for the other kernels. Above accuracy_limit() the result is not vouched for (the bindings warn).
  static double accuracy_limit();
  // q (nq), qd (nv), tau (nv), fext ((N+1) x 6 or null) -> qdd (nv)
  virtual double forward_dynamics(const S* q, const S* qd, const S* tau, const S* fext, S* qdd) = 0;
  // B problems stored one after the other; spread over the threads (parallel.hpp)
  virtual double forward_dynamics_batch(int B, const S* q, const S* qd, const S* tau, const S* fext, S* qdd) = 0;
  // M(q)⁻¹ R, R and Y nv x m column-major
  virtual double inverse_inertia(const S* q, const S* R, int m, S* Y) = 0;
  // the full M(q)⁻¹, nv x nv (symmetric: row- and column-major alike). Returns true when the
  // kernel has checked that every entry is finite (drumwright: while mirroring the triangle)
  virtual bool inverse_mass_matrix(const S* q, S* Minv, double& omega) = 0;
  // ABA and modified ABA: the joint-space pivots D_i = S_iᵀ I^A_i S_i at q (q̇ = 0), each nv_i x nv_i,
  // column-major, one after the other (Σ nv_i² numbers)
  virtual void joint_inertias(const S*, S*) {
    throw std::invalid_argument("joint_inertias: only the ABA solvers form the pivots D_i");
  }

 protected:
  Model<S> model_;
  std::mutex mutex_;  // one call at a time per engine (the batch spreads itself over the threads)
};

// one kernel's engine: per-thread workspaces, batching, locking (src/engine_impl.hpp)
template <template <class> class Kernel, class S> class Engine final : public EngineBase<S> {
 public:
  explicit Engine(const Model<S>& model);
  ~Engine() override;
  double forward_dynamics(const S* q, const S* qd, const S* tau, const S* fext, S* qdd) override;
  double forward_dynamics_batch(int B, const S* q, const S* qd, const S* tau, const S* fext, S* qdd) override;
  double inverse_inertia(const S* q, const S* R, int m, S* Y) override;
  bool inverse_mass_matrix(const S* q, S* Minv, double& omega) override;
  void joint_inertias(const S* q, S* D) override;

 private:
  struct State;  // the kernel and its workspaces
  std::unique_ptr<State> state_;
};

// one-shot kernels (allocate a workspace per call; for convenience functions, not hot loops)
template <class S> void rnea_once(const Model<S>& m, const S* q, const S* qd, const S* qdd, const S* fext, S* tau);
template <class S> void mass_matrix_once(const Model<S>& m, const S* q, S* M);
template <class S> void integrate_once(const Model<S>& m, const S* q, const S* v, S dt, S* qout);
// world rotation R (N+1 x 3 x 3, row-major) and origin p (N+1 x 3) of every body frame
template <class S> void forward_kinematics_once(const Model<S>& m, const S* q, S* R, S* p);

bool has_openmp();

}  // namespace treedyn
