// Articulated-body inertia: a symmetric 6x6 [A B; Bᵀ C] in the [ω; v] order, kept as its three
// 3x3 blocks (A and C symmetric).
#pragma once
#include "treedyn/spatial/rigid_inertia.hpp"

namespace treedyn {

template <class S> struct ArticulatedInertia {
  Mat3<S> A, B, C;

  static ArticulatedInertia zero() { return {Mat3<S>::Zero(), Mat3<S>::Zero(), Mat3<S>::Zero()}; }
  static ArticulatedInertia from(const RigidInertia<S>& I) {
    return {I.I.full(), skew<S>(I.h), Mat3<S>::Identity() * I.m};
  }
  ArticulatedInertia& operator+=(const ArticulatedInertia& o) {
    A += o.A;
    B += o.B;
    C += o.C;
    return *this;
  }
  // I v = [A ω + B v; Bᵀ ω + C v]
  TREEDYN_INLINE Force<S> operator*(const Motion<S>& v) const {
    return {A * v.ang + B * v.lin, B.transpose() * v.ang + C * v.lin};
  }
  // I − U Uᵀ / D for a 1-DoF joint (U a force, D a scalar): Featherstone's I^a = I^A − U D⁻¹ Uᵀ
  void subtract_outer(const Force<S>& U, S Dinv) {
    const Vec3<S> Un = U.ang * Dinv, Uf = U.lin * Dinv;
    A.noalias() -= Un * U.ang.transpose();
    B.noalias() -= Un * U.lin.transpose();
    C.noalias() -= Uf * U.lin.transpose();
  }
  // the same with U Uᵀ / D formed as U (Uᵀ / D): exact when U is parallel to a coordinate axis
  // (ascher-pai-cloutier1996 Example 2's m₁ − m₁²/m₁ = 0), where multiplying by a rounded D⁻¹ is not
  void subtract_outer_exact(const Force<S>& U, S D) {
    const Vec3<S> Un = U.ang / D, Uf = U.lin / D;
    A.noalias() -= U.ang * Un.transpose();
    B.noalias() -= U.ang * Uf.transpose();
    C.noalias() -= U.lin * Uf.transpose();
  }
  Mat6<S> matrix() const {
    Mat6<S> M;
    M << A, B, B.transpose(), C;
    return M;
  }
  static ArticulatedInertia from_matrix(const Mat6<S>& M) {
    return {M.template topLeftCorner<3, 3>(), M.template topRightCorner<3, 3>(), M.template bottomRightCorner<3, 3>()};
  }
};

}  // namespace treedyn
