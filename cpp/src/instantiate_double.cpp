#include "engine_impl.hpp"

namespace treedyn {
TREEDYN_INSTANTIATE(double)

int max_threads() {
#ifdef TREEDYN_HAS_OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}
void set_threads(int n) {
#ifdef TREEDYN_HAS_OPENMP
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
