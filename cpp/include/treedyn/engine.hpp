// The C++ side of a solver: a frozen copy of the model, one workspace per thread, and the
// entry points the bindings call with raw pointers (no Python object ever reaches a kernel).
// Declarations only: the kernels are instantiated for double and float in src/instantiate_*.cpp.
#pragma once
#include <memory>
#include <mutex>
#include <vector>

#include "treedyn/algorithms/data.hpp"
#include "treedyn/parallel.hpp"  // max_threads

namespace treedyn {

enum class Method : int {
  ABA = 0,
  CRBACholesky = 1,
  Drumwright = 2,
  CRBALTL = 3,
  CRBALTDL = 4,
  ABAModified = 5,
  CFA = 6,
  JSIIA = 7
};

template <class S> struct MinvData;     // algorithms/minv.hpp
template <class S> struct MinvBlocked;  // algorithms/minv.hpp
template <class S> struct CfaData;      // algorithms/cfa.hpp
template <class S> struct JsiiaData;    // algorithms/jsiia.hpp

template <class S> class Engine {
 public:
  Engine(const Model<S>& model, Method method);
  ~Engine();
  const Model<S>& model() const { return model_; }
  Method method() const { return method_; }

  // forward_dynamics, its batch, inverse_inertia and inverse_mass_matrix return ω: for cfa the
  // error indicator of its iterative refinements (the componentwise backward error of A F_c = −Bτ,
  // or the relative error estimated to be left, cfa.hpp; the worst over a batch or the columns),
  // 0 for the other methods. Above accuracy_limit() the result is not vouched for (the bindings warn).
  static double accuracy_limit();
  // q (nq), qd (nv), tau (nv), fext ((N+1) x 6 or null) -> qdd (nv)
  double forward_dynamics(const S* q, const S* qd, const S* tau, const S* fext, S* qdd);
  // B problems stored one after the other; spread over the threads (parallel.hpp)
  double forward_dynamics_batch(int B, const S* q, const S* qd, const S* tau, const S* fext, S* qdd);
  // M(q)⁻¹ R, R and Y nv x m column-major; the columns are spread over the threads
  // (never more threads than columns) for drumwright and crba-ltl; cfa solves A F_c = −B R for all
  // columns at once by OEE (eq. (17)), jsiia a dense Cholesky solve of its scanned M
  double inverse_inertia(const S* q, const S* R, int m, S* Y);
  // the full M(q)⁻¹, nv x nv (symmetric: row- and column-major alike). Returns true when the
  // kernel has checked that every entry is finite (drumwright: while mirroring the triangle)
  bool inverse_mass_matrix(const S* q, S* Minv, double& omega);
  // ABA and modified ABA: the joint-space pivots D_i = S_iᵀ I^A_i S_i at q (q̇ = 0), each nv_i x nv_i,
  // column-major, one after the other (Σ nv_i² numbers)
  void joint_inertias(const S* q, S* D);

 private:
  Data<S>& workspace(int thread);
  void ensure_workspaces(int n);
  void factorize(Data<S>& data, const S* q);
  void solve_columns(const S* R, int m, S* Y, int nthreads);
  double run(int thread, const S* q, const S* qd, const S* tau, const S* fext, S* qdd);
  Model<S> model_;
  Method method_;
  std::vector<std::unique_ptr<Data<S>>> data_;
  std::vector<std::unique_ptr<MinvData<S>>> minv_;    // drumwright: one per thread
  std::vector<std::unique_ptr<CfaData<S>>> cfa_;      // cfa: one per thread
  std::vector<std::unique_ptr<JsiiaData<S>>> jsiia_;  // jsiia: one per thread
  std::unique_ptr<MinvBlocked<S>> blocked_;           // drumwright's full M⁻¹ (made on first use)
  std::vector<int> lambda_;                           // crba-ltl: λ over coordinates
  std::mutex mutex_;
};

// one-shot kernels (allocate a workspace per call; for convenience functions, not hot loops)
template <class S> void rnea_once(const Model<S>& m, const S* q, const S* qd, const S* qdd, const S* fext, S* tau);
template <class S> void mass_matrix_once(const Model<S>& m, const S* q, S* M);
template <class S> void integrate_once(const Model<S>& m, const S* q, const S* v, S dt, S* qout);
// world rotation R (N+1 x 3 x 3, row-major) and origin p (N+1 x 3) of every body frame
template <class S> void forward_kinematics_once(const Model<S>& m, const S* q, S* R, S* p);

bool has_openmp();

}  // namespace treedyn
