// One singularity test for every solver: ABA's pivots D_i = S_iᵀ I^A_i S_i (and the modified ABA's,
// drumwright2012's in the global frame), the Cholesky and LTL pivots of M. A pivot d of coordinate k
// is singular to rounding when
//   d ≤ 8 ε s_k   (ε: the scalar's rounding unit; 1.8e-15 in double, 9.5e-7 in float)
// with s_k the scale of the numbers d was computed from: d is then no larger than the rounding error
// those numbers can leave in it (a few ε each, over the handful of roundings a pivot takes), so it
// carries no digit and q̈ would be noise. A massless ball joint carrying a ball-jointed body leaves
// D ≈ 1e-17 s after cancellation, which "d > 0" took (ABA returned q̈ ≈ 1e17 where the modified ABA
// and Cholesky raised); it is refused. A pivot above the test is well posed however small: an
// ill-conditioned model (ascher-pai-cloutier1996's Table 1, whose light link's Cholesky pivot falls
// to 29 ε of its refined scale in float32 at r = 0.0018, where the paper's CRBM completes with many
// more steps) runs and loses digits as its condition says, as in the paper.
//   A factorisation of M (Cholesky, LTL) computes its pivots from M's entries, themselves rounded:
// s_k = Σ_j w_j² M_jj over the pivot's elimination vector w (cholesky_refined_scale), which M_kk
// (w_k = 1) screens: a pivot above ε^(2/3) M_kk passes at once. ABA computes D_i from the
// articulated inertia I^A_i, whose entries are what cancels: s_k is an upper bound of S_kᵀ I^A_i S_k
// from I^A_i's blocks (pivot_scale). The modified ABA (ascher-pai-cloutier1996 eq. (11)) sums
// S_iᵀ I_i S_i and each child's quadratic form on E, the part of S_i its joint does not free: its
// scale is the same sum with each child's form bounded by its blocks. A child moved by a parallel
// joint has E = 0 and adds nothing: the light link under a heavy one of the paper's Table 2 (float32,
// mass ratios to 1e9), which only the modified ABA keeps, ABA's pivot being lost and refused. ABA
// re-reads a pivot its coarse scale refuses against the magnitudes I^A_i was summed from (aba.hpp,
// aba_refined_scales), its rounding error's own bound, as the screen. Each scale is its factorisation's own: a
// singular model is refused by every solver, and a well-posed one (a straight 10 000-link chain of
// alternating hinges, whose M_kk grow as n³ while ABA's pivots stay O(n)) by none.
#pragma once
#include <array>
#include <cmath>
#include <cstdio>
#include <string>

#include "treedyn/algorithms/data.hpp"

namespace treedyn {

constexpr int PIVOT_ROUNDINGS = 8;  // the rule's multiple of ε
template <class S> inline S pivot_tolerance() { return S(PIVOT_ROUNDINGS) * Eigen::NumTraits<S>::epsilon(); }
// the cheap screen of the factorisations whose first scale is not their pivots' rounding bound (M_kk
// for Cholesky and LTL, the traces of I^A's blocks for ABA): a pivot above ε^(2/3) of it passes; one
// below is decided against the refined scale (cholesky_refined_scale, ltl_refined_scale,
// aba_refined_scales)
template <class S> inline S screen_tolerance() {
  return S(std::pow(double(Eigen::NumTraits<S>::epsilon()), 2.0 / 3.0));
}

// "1.8e-15" for the messages
template <class S> std::string tolerance_text(const S& tol = pivot_tolerance<S>()) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1e", double(tol));
  return text;
}

template <class S> [[noreturn]] void throw_singular(const Model<S>& model, int i) {
  throw SingularJoint("joint of body '" + model.name[i] + "' (" + joint_kind_name(model.kind[i]) +
                      ") has a singular articulated inertia: the bodies it moves have no inertia "
                      "along its motion subspace (a pivot below " +
                      tolerance_text<S>() + " of its scale)");
}

// M's pivot of coordinate k below its share of M_kk: SingularJoint naming the joint that owns k
template <class S> [[noreturn]] void throw_singular_coordinate(const Model<S>& model, int k,
                                                               const char* factorisation) {
  int i = 1;
  while (i < model.N && !(k >= model.v_index[i] && k < model.v_index[i] + model.nv_i[i])) ++i;
  throw SingularJoint(std::string("the mass matrix M(q) is not positive definite (singular to rounding): the ") +
                      factorisation + " pivot of coordinate " + std::to_string(k) + " (joint of body '" +
                      model.name[i] + "', " + joint_kind_name(model.kind[i]) + ") is below " + tolerance_text<S>() +
                      " of M_kk: the bodies it moves have no inertia along its motion subspace");
}

// s_k for the motion subspace column s = (ω, v) of coordinate k on I^A = [A B; Bᵀ C] (the joint's
// body or global frame): sᵀI^A s = ωᵀAω + 2ωᵀBv + vᵀCv ≤ |ω|² tr A + 2|ω||v| ‖B‖_F + |v|² tr C
// (tr ≥ λ_max for a positive semidefinite block), + the armature. Each block in its own units: a
// slider's scale is a mass, a hinge's a moment of inertia
template <class S> inline S block_bound(const ArticulatedInertia<S>& IA, const Motion<S>& s) {
  using std::sqrt;
  const S w2 = s.ang.squaredNorm(), v2 = s.lin.squaredNorm();
  S scale = S(0);
  // only the blocks s reaches: a slider far out along a prismatic chain (q = 1e300) has an infinite
  // rotational block its own pivot never sees (and the generated code skips, as it skips 0 · A)
  if (v2 > S(0)) scale += v2 * IA.C.trace();
  if (w2 > S(0)) scale += w2 * IA.A.trace();
  if (w2 > S(0) && v2 > S(0)) scale += S(2) * sqrt(w2 * v2 * IA.B.squaredNorm());
  return scale;
}
template <class S> inline S pivot_scale(const Model<S>& model, const ArticulatedInertia<S>& IA, const Motion<S>& s,
                                        int k) {
  return model.has_armature ? block_bound(IA, s) + model.armature[k] : block_bound(IA, s);
}

// D⁻¹ from a joint-space pivot D (scale s), positive definite, or the joint is singular: SingularJoint
// names it. One DoF: 1/D
template <class S> inline void check_pivot(const Model<S>& model, int i, const S& D, const S& scale, const S& tol) {
  if (!(D > tol * scale) || !std::isfinite(static_cast<double>(D))) throw_singular(model, i);
}
template <class S>
inline S invert_pivot(const Model<S>& model, int i, const S& D, const S& scale, const S& tol = pivot_tolerance<S>()) {
  check_pivot(model, i, D, scale, tol);
  return S(1) / D;
}
// n_i DoF (n_i x n_i): by LLᵀ when n_i > 1, written out (Eigen's LLT also estimates the matrix
// norm, comparisons that would become guards of the generated code, codegen/traced.hpp); scale: the
// n_i coordinates' s_k
template <class S, class Mat>
void invert_pivot(const Model<S>& model, int i, const Mat& D, Mat& Dinv, const S* scale,
                  const S& tol = pivot_tolerance<S>()) {
  const int ni = int(D.rows());
  if (ni == 1) {
    Dinv(0, 0) = invert_pivot(model, i, S(D(0, 0)), scale[0], tol);
  } else if (ni > 1) {
    using std::sqrt;
    Mat L = D;  // D = L Lᵀ, column by column (the lower triangle)
    for (int k = 0; k < ni; ++k) {
      S d = L(k, k);
      for (int j = 0; j < k; ++j) d -= L(k, j) * L(k, j);
      check_pivot(model, i, d, scale[k], tol);
      L(k, k) = sqrt(d);
      for (int r = k + 1; r < ni; ++r) {
        S x = L(r, k);
        for (int j = 0; j < k; ++j) x -= L(r, j) * L(k, j);
        L(r, k) = x / L(k, k);
      }
    }
    for (int c = 0; c < ni; ++c) {  // column c of D⁻¹: L y = e_c, then Lᵀ x = y
      for (int r = 0; r < ni; ++r) {
        S y = r == c ? S(1) : S(0);
        for (int j = 0; j < r; ++j) y -= L(r, j) * Dinv(j, c);
        Dinv(r, c) = y / L(r, r);
      }
      for (int r = ni - 1; r >= 0; --r) {
        S x = Dinv(r, c);
        for (int j = r + 1; j < ni; ++j) x -= L(j, r) * Dinv(j, c);
        Dinv(r, c) = x / L(r, r);
      }
    }
  }
}

// D_i⁻¹ of joint i, D_i = S_iᵀ I^A_i S_i (+ armature), motion subspace columns Si, against the
// blocks' bound (pivot_scale) at tol
template <class S, class Mat>
void invert_joint_pivot(const Model<S>& model, int i, const ArticulatedInertia<S>& IA, const Motion<S>* Si,
                        const Mat& D, Mat& Dinv, const S& tol = pivot_tolerance<S>()) {
  S scale[6];
  const int vi = model.v_index[i];
  for (int k = 0; k < model.nv_i[i]; ++k) scale[k] = pivot_scale(model, IA, Si[k], vi + k);
  invert_pivot(model, i, D, Dinv, scale, tol);
}

// The refined scale of a dense Cholesky pivot d_k = L_kk² (M = L Lᵀ): d_k is M's quadratic form on
// w = (−L_<ᵀ⁻¹ l_k, 1) (l_k: row k of L left of the diagonal, L_<: the leading k x k block), so M's
// own rounding (each entry a few ε of its row's and column's magnitudes) reaches d_k through
// s_k = Σ_j w_j² M_jj ≥ M_kk. M_kk alone understates it where coordinate k is eliminated against
// heavier ones: an exactly massless ball joint under a ball-jointed body leaves d_k within ±54 ε of
// M_kk (noise), within ±8 ε of s_k; Table 1's light link at r = 0.0018 stays at 29 ε of s_k. O(k²),
// only for a pivot the screen refuses
template <class S, class Llt, class MatX> S cholesky_refined_scale(const Llt& llt, const MatX& M, int k) {
  const auto& L = llt.matrixLLT();
  Eigen::Matrix<S, Eigen::Dynamic, 1> w = L.row(k).head(k).transpose();
  L.topLeftCorner(k, k).template triangularView<Eigen::Lower>().transpose().solveInPlace(w);
  return M(k, k) + (w.array().square() * M.diagonal().head(k).array()).sum();
}

// a dense factorisation's pivots d_k = L_kk² against their scales (the floating base's 6 x 6 on its
// articulated inertia: base_scales; otherwise M's diagonal as a screen, then the refined scale above):
// the index of the first singular one, or −1
template <class S, class Llt, class MatX> int singular_pivot(const Llt& llt, const MatX& M, const S* scale = nullptr) {
  const S tol = pivot_tolerance<S>(), screen = screen_tolerance<S>();
  const auto& L = llt.matrixLLT();
  const bool failed = llt.info() != Eigen::Success;
  for (int k = 0; k < M.rows(); ++k) {
    // Eigen stops at a non-positive pivot leaving that column as it was: there, d recomputed
    const S d = failed ? S(M(k, k) - L.row(k).head(k).squaredNorm()) : S(L(k, k) * L(k, k));
    if (!(d > S(0)) || !std::isfinite(static_cast<double>(d))) return k;
    if (scale) {
      if (!(d > tol * scale[k])) return k;
    } else if (!(d > screen * M(k, k)) && !(d > tol * cholesky_refined_scale<S>(llt, M, k))) {
      return k;
    }
  }
  return failed ? 0 : -1;
}

// the scales of a floating base's 6 x 6 pivots [ω; v] on the whole mechanism's articulated inertia:
// its blocks' traces (block_bound of a unit column)
template <class S> std::array<S, 6> base_scales(const ArticulatedInertia<S>& IA) {
  const S a = IA.A.trace(), c = IA.C.trace();
  return {a, a, a, c, c, c};
}

}  // namespace treedyn
