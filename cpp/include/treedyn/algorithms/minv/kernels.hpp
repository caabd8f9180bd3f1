// Which compiled version of mInv's column loops (minv/columns.hpp; drumwright2012 Alg. 1 lines 5
// and 8-10, Alg. 2 lines 6-10, over ranges of columns) runs: for double and float, AVX2 + FMA when
// the CPU has them and the build compiled them (src/minv_kernels_avx2.cpp), else the portable loops
// (src/minv_kernels.cpp, which chooses once; TREEDYN_MINV_ISA=generic in the environment forces the
// portable ones). Any other scalar (the operation counter) runs the portable loops.
#pragma once
#include "treedyn/algorithms/minv/columns.hpp"  // the portable loops and MinvKernels

namespace treedyn {

template <class S> const MinvKernels<S>& minv_kernels() {
  static constexpr MinvKernels<S> k = generic::column_kernels<S>("generic");
  return k;
}
template <> const MinvKernels<double>& minv_kernels<double>();
template <> const MinvKernels<float>& minv_kernels<float>();

// the loops chosen for double: "avx2+fma" or "generic" (build_info()["minv_kernels"])
const char* minv_isa();

}  // namespace treedyn
