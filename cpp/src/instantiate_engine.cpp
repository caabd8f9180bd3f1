#include <atomic>

#include "treedyn/engine_impl.hpp"

// The shared engine and the one-shot kernels, for both scalars; the solvers' engines are in the units
// made from instantiate_kernels.cpp.in. And the thread count.
namespace treedyn {
TREEDYN_INSTANTIATE_ENGINE(double)
TREEDYN_INSTANTIATE_ENGINE(float)

// omp_set_num_threads sets the calling thread's count only: a count set from Python's main thread
// would not reach calls from a ThreadPoolExecutor. The count is kept here, for every thread.
static std::atomic<int> threads_set{0};  // 0: OpenMP's default
int max_threads() {
#ifdef TREEDYN_HAS_OPENMP
  const int n = threads_set.load(std::memory_order_relaxed);
  return n > 0 ? n : omp_get_max_threads();
#else
  return 1;
#endif
}
void set_threads(int n) {
#ifdef TREEDYN_HAS_OPENMP
  threads_set.store(n, std::memory_order_relaxed);
  omp_set_num_threads(n);
#else
  (void)n;
#endif
}
bool has_openmp() {
#ifdef TREEDYN_HAS_OPENMP
  return true;
#else
  return false;
#endif
}
}  // namespace treedyn
