#include <algorithm>
#include <atomic>
#include <thread>

#ifdef TREEDYN_HAS_OPENMP
#include <omp.h>
#endif

#include "treedyn/engine/engine_impl.hpp"

// The shared engine and the one-shot kernels, for both scalars; the solvers' engines are in the units
// made from instantiate_kernels.cpp.in. And the thread count.
namespace treedyn {
TREEDYN_INSTANTIATE_ENGINE(double)
TREEDYN_INSTANTIATE_ENGINE(float)

// The thread count of the pool (support/parallel.hpp) that runs every parallel loop, for the whole process:
// td.set_num_threads's, else OpenMP's default (OMP_NUM_THREADS, else the CPUs) when built with
// OpenMP, else the hardware's threads. (treedyn runs no OpenMP region of its own: the count is not
// passed to OpenMP, where it would change the calling thread's count for other libraries.)
static std::atomic<int> threads_set{0};  // 0: the default
int max_threads() {
  const int n = threads_set.load(std::memory_order_relaxed);
  if (n > 0) return n;
#ifdef TREEDYN_HAS_OPENMP
  return omp_get_max_threads();
#else
  return std::max(1, int(std::thread::hardware_concurrency()));
#endif
}
void set_threads(int n) { threads_set.store(n, std::memory_order_relaxed); }
bool has_openmp() {
#ifdef TREEDYN_HAS_OPENMP
  return true;
#else
  return false;
#endif
}
}  // namespace treedyn
