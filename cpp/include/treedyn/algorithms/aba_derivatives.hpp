// Analytic derivatives of forward dynamics (carpentier-mansard2018, §V): q̈ = ABA(q, q̇, τ, f_ext)
// satisfies RNEA(q, q̇, q̈, f_ext) = τ, so at q̈
//   ∂q̈/∂q = −M⁻¹ ∂τ/∂q,   ∂q̈/∂q̇ = −M⁻¹ ∂τ/∂q̇,   ∂q̈/∂τ = M⁻¹.
// One pass pair computes what ABA, ∂τ and M⁻¹ share, in the one inertial frame per tree of
// rnea_derivatives.hpp and minv/minv.hpp (world axes, origin at the tree's root):
//   1. root to leaves: ^iX_0, s_k, v_i, c_i = Σ ṡ_k q̇_k, I_i, h_i, p^A_i = v_i ×* h_i − f_ext,i
//      (rnea_derivatives_velocity_step), Î^A_i = I_i;
//   2. leaves to root: drumwright2012's eq. (7) (minv_articulated_inertia_step: Î^Aŝ, (ŝᵀÎ^Aŝ)⁻¹,
//      Ũ = Î^Aŝ(ŝᵀÎ^Aŝ)⁻¹, Î^a_i = Î^A_i − Ũ ŝᵀÎ^A, Î^A_λ += Î^a_i) and ABA's bias (RBDA Table 7.1):
//      u_i = τ_i − ŝᵀp^A_i, p^A_λ += p^A_i + Î^a_i c_i + Ũ u_i;
//   3. root to leaves: q̈_i = (ŝᵀÎ^Aŝ)⁻¹(u_i − (Î^Aŝ)ᵀ(a_λ + c_i)), then a_i, Ψ̇, Ψ̈ and f_i
//      (rnea_derivatives_acceleration_step); a floating base (Alg. 2 of minv/minv.hpp) takes
//      a_1 = Î^A_0⁻¹(ŝ⁻ᵀτ_base − p^A_1);
//   4. leaves to root: ∂τ/∂(q, q̇) at q̈ (rnea_derivatives_backward_step).
// Then M⁻¹'s two column passes (mInv) on the articulated inertias of pass 2, and the two dense
// products −M⁻¹ ∂τ/∂(q, q̇), O(n³); the rest is O(n²).
#pragma once
#include <stdexcept>
#include <vector>

#include "treedyn/algorithms/minv/blocked.hpp"
#include "treedyn/algorithms/minv/minv.hpp"
#include "treedyn/algorithms/rnea_derivatives.hpp"

namespace treedyn {

// The rows k of ∂τ/∂(q, q̇) that may be non-zero in each tile of columns of the product with M⁻¹ (8
// columns from 0, then 4, as the product's loop takes them): τ_k depends on q_j, q̇_j only when
// the joints of k and j are one the other's ancestor or the same. Empty for a chain (every row).
struct ProductRows {
  std::vector<int> k, at;  // tile t: k[at[t]], ..., k[at[t + 1] − 1]
  template <class S> explicit ProductRows(const Model<S>& model) {
    const int n = model.nv;
    std::vector<int> lo(n), hi(n);  // coordinate j's joint's subtree: the coordinates [lo, hi)
    for (int i = 1; i <= model.N; ++i)
      for (int a = 0; a < model.nv_i[i]; ++a)
        lo[model.v_index[i] + a] = model.v_index[i], hi[model.v_index[i] + a] = subtree_v_end(model, i);
    const auto related = [&](int k, int j) { return (j >= lo[k] && j < hi[k]) || (k >= lo[j] && k < hi[j]); };
    bool sparse = false;
    for (int k = 0; k < n && !sparse; ++k)
      for (int j = 0; j < n && !sparse; ++j) sparse = !related(k, j);
    if (!sparse) return;
    at.push_back(0);
    for (int j0 = 0, w = 8; j0 + w <= n || (w == 8 && j0 + 4 <= n); j0 += w) {
      if (j0 + w > n) w = 4;
      for (int k = 0; k < n; ++k) {
        bool any = false;
        for (int j = j0; j < j0 + w; ++j) any = any || related(k, j);
        if (any) this->k.push_back(k);
      }
      at.push_back(int(this->k.size()));
    }
  }
};

// C = −A B for row-major n x n matrices by a loop written for this CPU: AVX2 + FMA for double when
// the CPU has them (src/instantiate_derivatives.cpp), B's zero rows in a tile of columns left out
// (rows, or null); false when there is none (Eigen's product)
bool neg_product_fast(int n, const double* A, const double* B, double* C, const ProductRows* rows);
template <class S> inline bool neg_product_fast(int, const S*, const S*, S*, const ProductRows*) { return false; }

// C = −A B for small row-major n x n matrices: C's row i as a sum of B's rows
template <class S> inline void neg_product_small(int n, const S* __restrict A, const S* __restrict B, S* __restrict C) {
  for (int i = 0; i < n; ++i) {
    S* c = C + std::size_t(i) * n;
    for (int j = 0; j < n; ++j) c[j] = S(0);
    for (int k = 0; k < n; ++k) {
      const S a = A[std::size_t(i) * n + k];
      const S* b = B + std::size_t(k) * n;
      for (int j = 0; j < n; ++j) c[j] -= a * b[j];
    }
  }
}

template <class S> struct AbaDerivativesData {
  RneaDerivativesData<S> d;  // the frame, the motions and the derivatives' terms (rnea_derivatives.hpp)
  MinvData<S> minv;          // Î^A, ŝ, Î^Aŝ, Ũ, (ŝᵀÎ^Aŝ)⁻¹ (minv/minv.hpp)
  MinvBlocked<S> blocked;    // M⁻¹'s column scratch
  ProductRows rows;          // ∂τ's non-zero rows per tile of the products' columns
  std::vector<Force<S>> pA;  // p^A_i
  std::vector<S> u, qdd, dtau_dq, dtau_dv, tau_p;  // (tau_p: τ + τ_p, algorithms/passive.hpp)
  explicit AbaDerivativesData(const Model<S>& model)
      : d(model),
        minv(model),
        blocked(model),
        rows(model),
        pA(model.N + 1, Force<S>::zero()),
        u(model.nv),
        qdd(model.nv),
        dtau_dq(std::size_t(model.nv) * model.nv),
        dtau_dv(std::size_t(model.nv) * model.nv),
        tau_p(model.nv) {}
};

// pass 2 at body i, ABA's bias (after minv_articulated_inertia_step turned Î^A_i into Î^a_i):
// u_i = τ_i − ŝᵀp^A_i, p^A_λ += p^A_i + Î^a_i c_i + Ũ_i u_i
template <class S> TREEDYN_DERIVATIVES_STEP void aba_derivatives_bias_step(const Model<S>& model,
                                                                           AbaDerivativesData<S>& w, int i,
                                                                           const S* tau) {
  const int p = model.parent[i], vi = model.v_index[i], ni = model.nv_i[i];
  const MinvData<S>& m = w.minv;
  Force<S> pa = w.pA[i] + m.IA[i] * w.d.a[i];  // (d.a holds c_i until pass 3)
  for (int k = 0; k < ni; ++k) {
    w.u[vi + k] = tau[vi + k] - dot(m.s[vi + k], w.pA[i]);
    pa += m.Ut[vi + k] * w.u[vi + k];
  }
  if (p > 0) w.pA[p] += pa;
}

// pass 1 at body i, after rnea_derivatives_velocity_step: M⁻¹'s setup takes the frame, the axes
// and Î^A_i = I_i from it, ABA's bias p^A_i = v_i ×* h_i − f_ext,i
template <class S> TREEDYN_DERIVATIVES_STEP void aba_derivatives_minv_step(const Model<S>& model,
                                                                           AbaDerivativesData<S>& w, int i) {
  const RneaDerivativesData<S>& d = w.d;
  MinvData<S>& m = w.minv;
  m.X0[i] = d.X0[i];
  for (int k = model.v_index[i]; k < model.v_index[i] + model.nv_i[i]; ++k) m.s[k] = d.s[k];
  m.IA[i] = ArticulatedInertia<S>::from(d.Ic[i]);
  w.pA[i] = d.F[i];
}

// pass 2 at body i: drumwright2012's eq. (7) (minv_articulated_inertia_step, its calls inlined
// here), then ABA's bias
template <class S>
TREEDYN_DERIVATIVES_STEP void aba_derivatives_inertia_step(const Model<S>& model, AbaDerivativesData<S>& w, int i,
                                                           const S* tau) {
  minv_articulated_inertia_step(model, w.minv, i);
  aba_derivatives_bias_step(model, w, i, tau);
}

// pass 3 at body i ≥ first: q̈_i = (ŝᵀÎ^Aŝ)⁻¹(u_i − (Î^Aŝ)ᵀ(a_λ + c_i))
template <class S> TREEDYN_DERIVATIVES_STEP void aba_derivatives_qdd_step(const Model<S>& model,
                                                                          AbaDerivativesData<S>& w, int i) {
  const int p = model.parent[i], vi = model.v_index[i], ni = model.nv_i[i];
  const MinvData<S>& m = w.minv;
  const Motion<S> a = (p > 0 ? w.d.a[p] : gravity_acceleration(model)) + w.d.a[i];
  if (ni == 1) {
    w.qdd[vi] = m.Dinv[i](0, 0) * (w.u[vi] - dot(a, m.IAs[vi]));
  } else if (ni > 1) {
    S e[6];
    for (int b = 0; b < ni; ++b) e[b] = w.u[vi + b] - dot(a, m.IAs[vi + b]);
    for (int r = 0; r < ni; ++r) {
      S x = 0;
      for (int b = 0; b < ni; ++b) x += m.Dinv[i](r, b) * e[b];
      w.qdd[vi + r] = x;
    }
  }
}

// pass 3 at a floating base (body 1, free, carrying the tree): its joint force is ŝ⁻ᵀτ_base, so
// a_1 = Î^A_0⁻¹(ŝ⁻ᵀτ_base − p^A_1) and q̈_base = ŝ⁻¹(a_1 − a_0 − c_1)
template <class S> void aba_derivatives_base_step(const Model<S>& model, AbaDerivativesData<S>& w, const S* tau) {
  const MinvData<S>& m = w.minv;
  const Motion<S> a1 = mul6(m.IA0inv, base_impulse(m, tau) - w.pA[1]);
  base_coordinates(m, a1 - gravity_acceleration(model) - w.d.a[1], w.qdd.data());
}

// outputs, row-major nv x nv: dq = ∂q̈/∂q, dv = ∂q̈/∂q̇, Minv = M⁻¹ (= ∂q̈/∂τ); qdd (nv) if not null
template <class S>
TREEDYN_ENTRY void aba_derivatives(const Model<S>& model, AbaDerivativesData<S>& w, const S* q, const S* qd,
                                   const S* tau, const S* fext, S* dq, S* dv, S* Minv, S* qdd = nullptr) {
  using RowMajor = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const int nv = model.nv;
  if (nv == 0) return;
  RneaDerivativesData<S>& d = w.d;
  MinvData<S>& m = w.minv;
  if (model.has_springs) {  // q̈ = M⁻¹(τ + τ_p − c): its partials are −M⁻¹ those of M q̈ + c − τ_p
    add_passive_force(model, q, qd, tau, w.tau_p.data());
    tau = w.tau_p.data();
  }
  for (int i = 1; i <= model.N; ++i) {  // pass 1
    rnea_derivatives_velocity_step(model, d, i, q, qd, fext);
    aba_derivatives_minv_step(model, w, i);
  }
  for (int i = model.N; i >= m.first; --i) aba_derivatives_inertia_step(model, w, i, tau);  // pass 2
  if (m.floating_base) {  // Î^A_0⁻¹ by the written-out LLᵀ of ABA's pivots (Eigen's solve of a 6 x 6 cost more)
    const Mat6<S> IA0 = m.IA[1].matrix();
    invert_pivot(model, 1, IA0, m.IA0inv, base_scales(m.IA[1]).data());
    aba_derivatives_base_step(model, w, tau);
    rnea_derivatives_acceleration_step(model, d, 1, qd, w.qdd.data());
  }
  for (int i = m.first; i <= model.N; ++i) {  // pass 3
    aba_derivatives_qdd_step(model, w, i);
    rnea_derivatives_acceleration_step(model, d, i, qd, w.qdd.data());
  }
  S *tq = w.dtau_dq.data(), *tv = w.dtau_dv.data();
  if (!d.dense) {
    std::fill(tq, tq + std::size_t(nv) * nv, S(0));
    std::fill(tv, tv + std::size_t(nv) * nv, S(0));
  }
  for (int i = model.N; i >= 1; --i) rnea_derivatives_backward_step(model, d, i, tq, tv, static_cast<S*>(nullptr));
  if (model.has_springs) add_passive_partials(model, q, tq, tv);
  if (!mInv(model, m, w.blocked, Minv, 1))
    throw std::domain_error(
        "aba_derivatives: M⁻¹ overflowed to inf/NaN: the inputs are too large for this precision, or the "
        "model is singular");
  if (neg_product_fast(nv, Minv, tq, dq, &w.rows) && neg_product_fast(nv, Minv, tv, dv, &w.rows)) {
    // (done: the portable build's Eigen product runs at SSE2 width, half of what the CPU can)
  } else if (nv < 8) {  // (Eigen's product of dynamic-size matrices costs more than the loop here)
    neg_product_small(nv, Minv, tq, dq);
    neg_product_small(nv, Minv, tv, dv);
  } else {
    const Eigen::Map<const RowMajor> Mi(Minv, nv, nv);
    Eigen::Map<RowMajor>(dq, nv, nv).noalias() = -(Mi * Eigen::Map<const RowMajor>(tq, nv, nv));
    Eigen::Map<RowMajor>(dv, nv, nv).noalias() = -(Mi * Eigen::Map<const RowMajor>(tv, nv, nv));
  }
  if (qdd) std::copy(w.qdd.begin(), w.qdd.end(), qdd);
}

}  // namespace treedyn
