// Which compiled version of mInv's column loops runs: AVX2 + FMA when the CPU has them (and the
// build compiled them), else the portable one. TREEDYN_MINV_ISA=generic in the environment forces
// the portable loops (to compare the two).
#include <cstdlib>
#include <cstring>

#include "treedyn/algorithms/minv.hpp"

namespace treedyn {

#if defined(TREEDYN_MINV_AVX2)
namespace avx2 {
extern void* minv_avx2_table_double[];
extern void* minv_avx2_table_float[];
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

template <class S> MinvKernels<S> from_table(void** t, const char* isa) {
  using Imp = decltype(MinvKernels<S>::impulse[0]);
  using Vel = decltype(MinvKernels<S>::velocity[0]);
  MinvKernels<S> k;
  for (int j = 0; j < 4; ++j) {
    k.impulse[j] = reinterpret_cast<Imp>(t[j]);
    k.velocity[j] = reinterpret_cast<Vel>(t[4 + j]);
  }
  k.impulse_pair = reinterpret_cast<decltype(k.impulse_pair)>(t[8]);
  k.velocity_pair = reinterpret_cast<decltype(k.velocity_pair)>(t[9]);
  k.cross = reinterpret_cast<decltype(k.cross)>(t[10]);
  k.cross_col = reinterpret_cast<decltype(k.cross_col)>(t[11]);
  k.base = reinterpret_cast<decltype(k.base)>(t[12]);
  k.mirror = reinterpret_cast<decltype(k.mirror)>(t[13]);
  k.isa = isa;
  return k;
}

template <class S> MinvKernels<S> choose(void** avx2_table) {
  if (avx2_table && use_avx2()) return from_table<S>(avx2_table, "avx2+fma");
  return TREEDYN_MINV_KERNEL_TABLE(S, generic);
}
}  // namespace

template <> const MinvKernels<double>& minv_kernels<double>() {
#if defined(TREEDYN_MINV_AVX2)
  static const MinvKernels<double> k = choose<double>(avx2::minv_avx2_table_double);
#else
  static const MinvKernels<double> k = choose<double>(nullptr);
#endif
  return k;
}
template <> const MinvKernels<float>& minv_kernels<float>() {
#if defined(TREEDYN_MINV_AVX2)
  static const MinvKernels<float> k = choose<float>(avx2::minv_avx2_table_float);
#else
  static const MinvKernels<float> k = choose<float>(nullptr);
#endif
  return k;
}

const char* minv_isa() { return minv_kernels<double>().isa; }

}  // namespace treedyn
