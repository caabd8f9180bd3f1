// The derivatives' batch loops (engine/derivatives.hpp) for float64 and float32: items claimed by the
// pool's threads (support/parallel.hpp), one workspace per thread made on first use and kept; every item
// runs, and the error of the lowest failing item is the one reported, as the engines do
// (engine/engine_impl.hpp).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "treedyn/algorithms/aba_derivatives.hpp"
#include "treedyn/algorithms/rnea_derivatives.hpp"
#include "treedyn/engine/derivatives.hpp"
#include "treedyn/support/parallel.hpp"

#if defined(TREEDYN_MINV_AVX2)
#include <immintrin.h>
#endif

namespace treedyn {

const char* minv_isa();  // src/minv_kernels.cpp: "generic" when TREEDYN_MINV_ISA=generic or no AVX2

#if defined(TREEDYN_MINV_AVX2)
namespace {
// the lanes 0 .. m−1 of 4 (1 ≤ m ≤ 4) for AVX2's masked loads and stores
__attribute__((target("avx2,fma"))) inline __m256i tail_mask(int m) {
  return _mm256_set_epi64x(m > 3 ? -1 : 0, m > 2 ? -1 : 0, m > 1 ? -1 : 0, -1);
}

// C = −A B (row-major n x n): 4 rows x 8 columns of C held in registers while k runs over A's
// columns (one broadcast of A_ik and two loads of B's row k feed 8 FMAs), then a 4-column and a
// masked tail; the last rows one at a time. With `rows`, k runs only over the rows of B that are not zero in the
// columns of the tile (ProductRows): the terms left out are exact zeros, so C is the same to the bit. Compiled for AVX2
// + FMA by the attribute alone, called only when the CPU has them.
__attribute__((target("avx2,fma"))) void neg_product_avx2(int n, const double* A, const double* B, double* C,
                                                          const ProductRows* rows) {
  const std::size_t ld = n;
  const __m256d zero = _mm256_setzero_pd();
  const bool all = rows == nullptr || rows->at.empty();
  int i = 0;
  for (; i + 4 <= n; i += 4) {
    const double *a0 = A + i * ld, *a1 = a0 + ld, *a2 = a1 + ld, *a3 = a2 + ld;
    double* c = C + i * ld;
    int j = 0, t = 0;  // t: the tile
    for (; j + 8 <= n; j += 8, ++t) {
      __m256d c00 = zero, c01 = zero, c10 = zero, c11 = zero, c20 = zero, c21 = zero, c30 = zero, c31 = zero;
      const int* kk = all ? nullptr : rows->k.data() + rows->at[t];
      const int m = all ? n : rows->at[t + 1] - rows->at[t];
      for (int r = 0; r < m; ++r) {
        const int k = all ? r : kk[r];
        const double* b = B + k * ld + j;
        const __m256d b0 = _mm256_loadu_pd(b), b1 = _mm256_loadu_pd(b + 4);
        __m256d a = _mm256_broadcast_sd(a0 + k);
        c00 = _mm256_fmadd_pd(a, b0, c00);
        c01 = _mm256_fmadd_pd(a, b1, c01);
        a = _mm256_broadcast_sd(a1 + k);
        c10 = _mm256_fmadd_pd(a, b0, c10);
        c11 = _mm256_fmadd_pd(a, b1, c11);
        a = _mm256_broadcast_sd(a2 + k);
        c20 = _mm256_fmadd_pd(a, b0, c20);
        c21 = _mm256_fmadd_pd(a, b1, c21);
        a = _mm256_broadcast_sd(a3 + k);
        c30 = _mm256_fmadd_pd(a, b0, c30);
        c31 = _mm256_fmadd_pd(a, b1, c31);
      }
      _mm256_storeu_pd(c + j, _mm256_sub_pd(zero, c00));
      _mm256_storeu_pd(c + j + 4, _mm256_sub_pd(zero, c01));
      _mm256_storeu_pd(c + ld + j, _mm256_sub_pd(zero, c10));
      _mm256_storeu_pd(c + ld + j + 4, _mm256_sub_pd(zero, c11));
      _mm256_storeu_pd(c + 2 * ld + j, _mm256_sub_pd(zero, c20));
      _mm256_storeu_pd(c + 2 * ld + j + 4, _mm256_sub_pd(zero, c21));
      _mm256_storeu_pd(c + 3 * ld + j, _mm256_sub_pd(zero, c30));
      _mm256_storeu_pd(c + 3 * ld + j + 4, _mm256_sub_pd(zero, c31));
    }
    for (; j + 4 <= n; j += 4, ++t) {
      __m256d c0 = zero, c1 = zero, c2 = zero, c3 = zero;
      const int* kk = all ? nullptr : rows->k.data() + rows->at[t];
      const int m = all ? n : rows->at[t + 1] - rows->at[t];
      for (int r = 0; r < m; ++r) {
        const int k = all ? r : kk[r];
        const __m256d b0 = _mm256_loadu_pd(B + k * ld + j);
        c0 = _mm256_fmadd_pd(_mm256_broadcast_sd(a0 + k), b0, c0);
        c1 = _mm256_fmadd_pd(_mm256_broadcast_sd(a1 + k), b0, c1);
        c2 = _mm256_fmadd_pd(_mm256_broadcast_sd(a2 + k), b0, c2);
        c3 = _mm256_fmadd_pd(_mm256_broadcast_sd(a3 + k), b0, c3);
      }
      _mm256_storeu_pd(c + j, _mm256_sub_pd(zero, c0));
      _mm256_storeu_pd(c + ld + j, _mm256_sub_pd(zero, c1));
      _mm256_storeu_pd(c + 2 * ld + j, _mm256_sub_pd(zero, c2));
      _mm256_storeu_pd(c + 3 * ld + j, _mm256_sub_pd(zero, c3));
    }
    if (j < n) {  // the last n − j < 4 columns, masked
      const __m256i mask = tail_mask(n - j);
      __m256d c0 = zero, c1 = zero, c2 = zero, c3 = zero;
      for (int k = 0; k < n; ++k) {
        const __m256d b0 = _mm256_maskload_pd(B + k * ld + j, mask);
        c0 = _mm256_fmadd_pd(_mm256_broadcast_sd(a0 + k), b0, c0);
        c1 = _mm256_fmadd_pd(_mm256_broadcast_sd(a1 + k), b0, c1);
        c2 = _mm256_fmadd_pd(_mm256_broadcast_sd(a2 + k), b0, c2);
        c3 = _mm256_fmadd_pd(_mm256_broadcast_sd(a3 + k), b0, c3);
      }
      _mm256_maskstore_pd(c + j, mask, _mm256_sub_pd(zero, c0));
      _mm256_maskstore_pd(c + ld + j, mask, _mm256_sub_pd(zero, c1));
      _mm256_maskstore_pd(c + 2 * ld + j, mask, _mm256_sub_pd(zero, c2));
      _mm256_maskstore_pd(c + 3 * ld + j, mask, _mm256_sub_pd(zero, c3));
    }
  }
  for (; i < n; ++i) {  // the last n − i < 4 rows, one at a time, 4 columns at once
    const double* a = A + i * ld;
    for (int j = 0; j < n; j += 4) {
      const __m256i mask = tail_mask(std::min(4, n - j));
      __m256d c0 = zero;
      for (int k = 0; k < n; ++k)
        c0 = _mm256_fmadd_pd(_mm256_broadcast_sd(a + k), _mm256_maskload_pd(B + k * ld + j, mask), c0);
      _mm256_maskstore_pd(C + i * ld + j, mask, _mm256_sub_pd(zero, c0));
    }
  }
}
}  // namespace
#endif

namespace {
#if defined(TREEDYN_MINV_AVX2)
bool use_avx2() {
  static const bool avx2 = std::string(minv_isa()) != "generic";  // the M⁻¹ loops' choice, the same test
  return avx2;
}

// rnea_derivatives_upper / _lower (rnea_derivatives.hpp) inlined into functions compiled for AVX2 +
// FMA, called only when the CPU has them
template <class S>
__attribute__((target("avx2,fma"))) void upper_avx2(const S* Y, int nv, const S* sk, int c0, int c1, S* dqk, S* dvk,
                                                    S* Mk) {
  rnea_derivatives_upper(Y, nv, sk, c0, c1, dqk, dvk, Mk);
}
template <class S>
__attribute__((target("avx2,fma"))) void lower_avx2(const S* Z, int nv, const S* Ys, const S* Bts, int k0, int k1,
                                                    S* dqc, S* dvc, S* Mc) {
  rnea_derivatives_lower(Z, nv, Ys, Bts, k0, k1, dqc, dvc, Mc);
}
#endif
}  // namespace

#if defined(TREEDYN_MINV_AVX2)
bool rnea_derivatives_upper_fast(const double* Y, int nv, const double* sk, int c0, int c1, double* dqk, double* dvk,
                                 double* Mk) {
  if (!use_avx2()) return false;
  upper_avx2(Y, nv, sk, c0, c1, dqk, dvk, Mk);
  return true;
}
bool rnea_derivatives_upper_fast(const float* Y, int nv, const float* sk, int c0, int c1, float* dqk, float* dvk,
                                 float* Mk) {
  if (!use_avx2()) return false;
  upper_avx2(Y, nv, sk, c0, c1, dqk, dvk, Mk);
  return true;
}
bool rnea_derivatives_lower_fast(const double* Z, int nv, const double* Ys, const double* Bts, int k0, int k1,
                                 double* dqc, double* dvc, double* Mc) {
  if (!use_avx2()) return false;
  lower_avx2(Z, nv, Ys, Bts, k0, k1, dqc, dvc, Mc);
  return true;
}
bool rnea_derivatives_lower_fast(const float* Z, int nv, const float* Ys, const float* Bts, int k0, int k1, float* dqc,
                                 float* dvc, float* Mc) {
  if (!use_avx2()) return false;
  lower_avx2(Z, nv, Ys, Bts, k0, k1, dqc, dvc, Mc);
  return true;
}
#else
bool rnea_derivatives_upper_fast(const double*, int, const double*, int, int, double*, double*, double*) {
  return false;
}
bool rnea_derivatives_upper_fast(const float*, int, const float*, int, int, float*, float*, float*) { return false; }
bool rnea_derivatives_lower_fast(const double*, int, const double*, const double*, int, int, double*, double*,
                                 double*) {
  return false;
}
bool rnea_derivatives_lower_fast(const float*, int, const float*, const float*, int, int, float*, float*, float*) {
  return false;
}
#endif

bool neg_product_fast(int n, const double* A, const double* B, double* C, const ProductRows* rows) {
#if defined(TREEDYN_MINV_AVX2)
  if (use_avx2() && n >= 8) {
    neg_product_avx2(n, A, B, C, rows);
    return true;
  }
#else
  (void)n, (void)A, (void)B, (void)C, (void)rows;
#endif
  return false;
}

namespace {

// run(workspace, b) for b in [0, B), with the workspaces ws (one per thread, made from the model)
template <class W, class S, class Run>
void run_batch(const Model<S>& model, std::vector<std::unique_ptr<W>>& ws, int B, Run run) {
  const int nthreads = std::max(1, std::min(max_threads(), B));
  if (int(ws.size()) < nthreads) ws.resize(nthreads);
  if (nthreads == 1) {  // one thread: no pool, errors as they are (batch items named)
    if (!ws[0]) ws[0].reset(new W(model));
    for (int b = 0; b < B; ++b) try {
        run(*ws[0], b);
      } catch (const SingularJoint& e) {
        if (B == 1) throw;
        throw SingularJoint("batch item " + std::to_string(b) + ": " + e.what());
      } catch (const std::domain_error& e) {
        if (B == 1) throw;
        throw std::domain_error("batch item " + std::to_string(b) + ": " + e.what());
      }
    return;
  }
  const int nchunks = std::min(B, 8 * nthreads);
  std::vector<std::string> errors(nchunks);
  std::vector<char> singular(nchunks, 0);
  parallel_for(nchunks, nthreads, [&](int c, int t) {
    if (!ws[t]) ws[t].reset(new W(model));
    const int b0 = int(std::int64_t(B) * c / nchunks), b1 = int(std::int64_t(B) * (c + 1) / nchunks);
    for (int b = b0; b < b1; ++b) try {
        run(*ws[t], b);
      } catch (const std::exception& e) {
        if (errors[c].empty()) {
          errors[c] = "batch item " + std::to_string(b) + ": " + e.what();
          singular[c] = dynamic_cast<const SingularJoint*>(&e) != nullptr;
        }
      }
  });
  for (int c = 0; c < nchunks; ++c)
    if (!errors[c].empty()) {
      if (singular[c]) throw SingularJoint(errors[c]);
      throw std::domain_error(errors[c]);
    }
}

}  // namespace

template <class S> Derivatives<S>::Derivatives(const Model<S>& model) : model_(model) {}
template <class S> Derivatives<S>::~Derivatives() = default;
template <class S> void Derivatives<S>::reset(const Model<S>& model) {
  std::lock_guard<std::mutex> lock(mutex_);
  model_ = model;
  rnea_ws_.clear();
  aba_ws_.clear();
}

template <class S>
void Derivatives<S>::rnea(int B, const S* q, const S* qd, const S* qdd, const S* fext, S* dq, S* dv, S* M) {
  std::lock_guard<std::mutex> lock(mutex_);
  const Model<S>& model = model_;
  const std::size_t nq = model.nq, nv = model.nv, nf = 6 * std::size_t(model.N + 1), n2 = nv * nv;
  run_batch(model, rnea_ws_, B, [&](RneaDerivativesData<S>& w, int b) {
    rnea_derivatives(model, w, q + b * nq, qd + b * nv, qdd + b * nv, fext ? fext + b * nf : nullptr, dq + b * n2,
                     dv + b * n2, M ? M + b * n2 : nullptr);
  });
}

template <class S>
void Derivatives<S>::aba(int B, const S* q, const S* qd, const S* tau, const S* fext, S* dq, S* dv, S* Minv) {
  std::lock_guard<std::mutex> lock(mutex_);
  const Model<S>& model = model_;
  const std::size_t nq = model.nq, nv = model.nv, nf = 6 * std::size_t(model.N + 1), n2 = nv * nv;
  run_batch(model, aba_ws_, B, [&](AbaDerivativesData<S>& w, int b) {
    aba_derivatives(model, w, q + b * nq, qd + b * nv, tau + b * nv, fext ? fext + b * nf : nullptr, dq + b * n2,
                    dv + b * n2, Minv + b * n2);
  });
}

template class Derivatives<double>;
template class Derivatives<float>;

}  // namespace treedyn
