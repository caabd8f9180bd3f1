// mInv's column loops (algorithms/minv_columns.hpp) compiled for AVX2 + FMA (this file only; see
// CMakeLists.txt). Nothing else is included, so no inline function compiled here can be picked
// by the linker for code that runs on a CPU without AVX2. src/minv_kernels.cpp chooses at run time.
#if defined(TREEDYN_MINV_AVX2)
#define TREEDYN_MINV_ISA avx2
#include "treedyn/algorithms/minv_columns.hpp"

namespace treedyn {
namespace avx2 {
// the loops' addresses, in the order of MinvKernels (minv.hpp)
#define TREEDYN_AVX2_TABLE(S)                                                                              \
  void* minv_avx2_table_##S[] = {                                                                          \
      (void*)&impulse_columns<S, 1>,  (void*)&impulse_columns<S, 2>,  (void*)&impulse_columns<S, 3>,       \
      (void*)&impulse_columns<S, 6>,  (void*)&velocity_columns<S, 1>, (void*)&velocity_columns<S, 2>,      \
      (void*)&velocity_columns<S, 3>, (void*)&velocity_columns<S, 6>, (void*)&impulse_columns_pair<S>,     \
      (void*)&velocity_columns_pair<S>, (void*)&cross_row<S>,         (void*)&cross_col<S>,                \
      (void*)&base_columns<S>,        (void*)&mirror_block<S>};
TREEDYN_AVX2_TABLE(double)
TREEDYN_AVX2_TABLE(float)
}  // namespace avx2
}  // namespace treedyn
#endif
