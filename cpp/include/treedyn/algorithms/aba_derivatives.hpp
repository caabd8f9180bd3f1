// Analytic derivatives of forward dynamics (carpentier-mansard2018, §V): q̈ = ABA(q, q̇, τ, f_ext)
// satisfies RNEA(q, q̇, q̈, f_ext) = τ, so at q̈
//   ∂q̈/∂q = −M⁻¹ ∂τ/∂q,   ∂q̈/∂q̇ = −M⁻¹ ∂τ/∂q̇,   ∂q̈/∂τ = M⁻¹
// with ∂τ/∂(q, q̇) from rnea_derivatives.hpp at (q, q̇, q̈) and the full M⁻¹ from drumwright2012's
// Θ(n²) inverse (minv_blocked.hpp). The two products are dense, O(n³); the rest is O(n²).
#pragma once
#include <stdexcept>
#include <vector>

#include "treedyn/algorithms/aba.hpp"
#include "treedyn/algorithms/minv.hpp"
#include "treedyn/algorithms/minv_blocked.hpp"
#include "treedyn/algorithms/rnea_derivatives.hpp"

namespace treedyn {

// C = −A B for row-major n x n matrices by a loop written for this CPU: AVX2 + FMA for double when
// the CPU has them (src/instantiate_derivatives.cpp); false when there is none (Eigen's product)
bool neg_product_fast(int n, const double* A, const double* B, double* C);
template <class S> inline bool neg_product_fast(int, const S*, const S*, S*) { return false; }

template <class S> struct AbaDerivativesData {
  Data<S> data;                 // ABA's
  RneaDerivativesData<S> rnea;  // the derivatives of τ
  MinvData<S> minv;             // M⁻¹'s per-q setup
  MinvBlocked<S> blocked;       // and its column scratch
  std::vector<S> qdd, dtau_dq, dtau_dv;
  explicit AbaDerivativesData(const Model<S>& model)
      : data(model),
        rnea(model),
        minv(model),
        blocked(model),
        qdd(model.nv),
        dtau_dq(std::size_t(model.nv) * model.nv),
        dtau_dv(std::size_t(model.nv) * model.nv) {}
};

// outputs, row-major nv x nv: dq = ∂q̈/∂q, dv = ∂q̈/∂q̇, Minv = M⁻¹ (= ∂q̈/∂τ); qdd (nv) if not null
template <class S>
TREEDYN_ENTRY void aba_derivatives(const Model<S>& model, AbaDerivativesData<S>& w, const S* q, const S* qd,
                                   const S* tau, const S* fext, S* dq, S* dv, S* Minv, S* qdd = nullptr) {
  using RowMajor = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const int nv = model.nv;
  if (nv == 0) return;
  aba(model, w.data, q, qd, tau, fext, w.qdd.data());
  rnea_derivatives(model, w.rnea, q, qd, w.qdd.data(), fext, w.dtau_dq.data(), w.dtau_dv.data(),
                   static_cast<S*>(nullptr));
  if (!mInv_at(model, w.minv, w.blocked, q, Minv, 1))
    throw std::domain_error(
        "aba_derivatives: M⁻¹ overflowed to inf/NaN: the inputs are too large for this precision, or the "
        "model is singular");
  if (neg_product_fast(nv, Minv, w.dtau_dq.data(), dq) && neg_product_fast(nv, Minv, w.dtau_dv.data(), dv)) {
    // (done: the portable build's Eigen product runs at SSE2 width, half of what the CPU can)
  } else {
    const Eigen::Map<const RowMajor> Mi(Minv, nv, nv);
    Eigen::Map<RowMajor>(dq, nv, nv).noalias() = -(Mi * Eigen::Map<const RowMajor>(w.dtau_dq.data(), nv, nv));
    Eigen::Map<RowMajor>(dv, nv, nv).noalias() = -(Mi * Eigen::Map<const RowMajor>(w.dtau_dv.data(), nv, nv));
  }
  if (qdd) std::copy(w.qdd.begin(), w.qdd.end(), qdd);
}

}  // namespace treedyn
