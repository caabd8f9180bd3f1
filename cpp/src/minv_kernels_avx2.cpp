// mInv's column loops (algorithms/minv/columns.hpp) compiled for AVX2 + FMA (this file only; see
// CMakeLists.txt). Nothing else is included, so no inline function compiled here can be picked
// by the linker for code that runs on a CPU without AVX2; the tables are constants (no code of
// this unit runs before src/minv_kernels.cpp has checked the CPU).
#if defined(TREEDYN_MINV_AVX2)
#define TREEDYN_MINV_ISA avx2
#include "treedyn/algorithms/minv/columns.hpp"

namespace treedyn::avx2 {
extern const MinvKernels<double> kernels_double = column_kernels<double>("avx2+fma");
extern const MinvKernels<float> kernels_float = column_kernels<float>("avx2+fma");
}  // namespace treedyn::avx2
#endif
