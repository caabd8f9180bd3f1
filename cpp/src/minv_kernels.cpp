// The choice of mInv's column loops for double and float (algorithms/minv/kernels.hpp): the AVX2
// + FMA table of src/minv_kernels_avx2.cpp when the CPU has them (and the build compiled them),
// else the portable one. TREEDYN_MINV_ISA=generic in the environment forces the portable loops
// (to compare the two).
#include <cstdlib>
#include <cstring>

#include "treedyn/algorithms/minv/kernels.hpp"

namespace treedyn {

#if defined(TREEDYN_MINV_AVX2)
namespace avx2 {  // src/minv_kernels_avx2.cpp
extern const MinvKernels<double> kernels_double;
extern const MinvKernels<float> kernels_float;
}  // namespace avx2
#endif

namespace {
bool use_avx2() {
#if defined(TREEDYN_MINV_AVX2)
  const char* env = std::getenv("TREEDYN_MINV_ISA");
  if (env && std::strcmp(env, "generic") == 0) return false;
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

template <class S> const MinvKernels<S>& choose(const MinvKernels<S>* avx2) {
  static constexpr MinvKernels<S> portable = generic::column_kernels<S>("generic");
  return avx2 && use_avx2() ? *avx2 : portable;
}
}  // namespace

template <> const MinvKernels<double>& minv_kernels<double>() {
#if defined(TREEDYN_MINV_AVX2)
  static const MinvKernels<double> k = choose<double>(&avx2::kernels_double);
#else
  static const MinvKernels<double> k = choose<double>(nullptr);
#endif
  return k;
}
template <> const MinvKernels<float>& minv_kernels<float>() {
#if defined(TREEDYN_MINV_AVX2)
  static const MinvKernels<float> k = choose<float>(&avx2::kernels_float);
#else
  static const MinvKernels<float> k = choose<float>(nullptr);
#endif
  return k;
}

const char* minv_isa() { return minv_kernels<double>().isa; }

}  // namespace treedyn
