// The C++ side of a solver: a frozen copy of the model, one workspace per thread, and the
// entry points the bindings call with raw pointers (no Python object ever reaches a kernel).
// Declarations only: the kernels are instantiated for double and float in src/instantiate_*.cpp.
#pragma once
#include <memory>
#include <mutex>
#include <vector>

#include "treedyn/algorithms/data.hpp"

namespace treedyn {

enum class Method : int { ABA = 0, CRBACholesky = 1 };

template <class S> class Engine {
 public:
  Engine(const Model<S>& model, Method method);
  ~Engine();
  const Model<S>& model() const { return model_; }
  Method method() const { return method_; }

  // q (nq), qd (nv), tau (nv), fext ((N+1) x 6 or null) -> qdd (nv)
  void forward_dynamics(const S* q, const S* qd, const S* tau, const S* fext, S* qdd);
  // B problems stored one after the other; spread over the OpenMP threads
  void forward_dynamics_batch(int B, const S* q, const S* qd, const S* tau, const S* fext, S* qdd);
  // M(q)⁻¹ R, R and Y nv x m column-major
  void inverse_inertia(const S* q, const S* R, int m, S* Y);

 private:
  Data<S>& workspace(int thread);
  void run(Data<S>& data, const S* q, const S* qd, const S* tau, const S* fext, S* qdd);
  Model<S> model_;
  Method method_;
  std::vector<std::unique_ptr<Data<S>>> data_;
  std::mutex mutex_;
};

// one-shot kernels (allocate a workspace per call; for convenience functions, not hot loops)
template <class S> void rnea_once(const Model<S>& m, const S* q, const S* qd, const S* qdd, const S* fext, S* tau);
template <class S> void mass_matrix_once(const Model<S>& m, const S* q, S* M);
template <class S> void integrate_once(const Model<S>& m, const S* q, const S* v, S dt, S* qout);

int max_threads();
void set_threads(int n);
bool has_openmp();

}  // namespace treedyn
