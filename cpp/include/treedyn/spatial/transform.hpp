// Plücker transform plx(E, r) of featherstone-part3: from frame A to frame B, E rotates
// A-coordinates into B-coordinates and r is B's origin in A-coordinates.
//   X = [ E      0 ]      X* = X^{-T} = [ E  -E r× ]
//       [ -E r×  E ]                    [ 0   E    ]
// The 6x6 matrix is never stored; costs in comments are featherstone-part3's table.
#pragma once
#include "treedyn/spatial/articulated_inertia.hpp"

namespace treedyn {

template <class S> struct Transform {
  Mat3<S> E;
  Vec3<S> r;

  static Transform identity() { return {Mat3<S>::Identity(), Vec3<S>::Zero()}; }

  // X v = [E ω; E(v − r × ω)]: 24m + 18a
  TREEDYN_INLINE Motion<S> apply(const Motion<S>& m) const {
    return {mul(E, m.ang), mul(E, Vec3<S>(m.lin - cross(r, m.ang)))};
  }
  // X^{-1} v = [Eᵀω; Eᵀv + r × Eᵀω]: 24m + 18a
  TREEDYN_INLINE Motion<S> inv_apply(const Motion<S>& m) const {
    const Vec3<S> w = mulT(E, m.ang);
    return {w, mulT(E, m.lin) + cross(r, w)};
  }
  // X* f = [E(n − r × f); E f]: 24m + 18a
  TREEDYN_INLINE Force<S> apply(const Force<S>& f) const {
    return {mul(E, Vec3<S>(f.ang - cross(r, f.lin))), mul(E, f.lin)};
  }
  // Xᵀ f = [Eᵀn + r × Eᵀf; Eᵀf]: 24m + 18a
  TREEDYN_INLINE Force<S> inv_apply(const Force<S>& f) const {
    const Vec3<S> fl = mulT(E, f.lin);
    return {mulT(E, f.ang) + cross(r, fl), fl};
  }

  // X1 X2 = plx(E1 E2, r2 + E2ᵀ r1): 33m + 24a. Only two rows of E1 E2 are multiplied out;
  // the third is the cross product of the first two (the rows of a rotation are orthonormal).
  // For products of exact rotations, as X_J(q) X_T in the joint pass; not for long chains of
  // products, where the cross product would amplify the rounding of its rows from one to the next
  // (chains of world-frame transforms use compose below).
  TREEDYN_INLINE Transform operator*(const Transform& X2) const {
    Transform X;
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j) X.E(i, j) = E(i, 0) * X2.E(0, j) + E(i, 1) * X2.E(1, j) + E(i, 2) * X2.E(2, j);
    X.E(2, 0) = X.E(0, 1) * X.E(1, 2) - X.E(0, 2) * X.E(1, 1);
    X.E(2, 1) = X.E(0, 2) * X.E(1, 0) - X.E(0, 0) * X.E(1, 2);
    X.E(2, 2) = X.E(0, 0) * X.E(1, 1) - X.E(0, 1) * X.E(1, 0);
    X.r = X2.r + mulT(X2.E, r);
    return X;
  }
  Transform inverse() const { return {E.transpose(), -mul(E, r)}; }

  // Xᵀ I X: a rigid inertia in B-coordinates expressed in A-coordinates. 52m + 52a.
  //   y = Eᵀh, h' = y + m r, Ī_A = EᵀĪE − r×y× − h'×r×  (rotate, then translate by r)
  RigidInertia<S> inv_apply(const RigidInertia<S>& I) const {
    const Vec3<S> y = mulT(E, I.h);  // 9m + 6a
    const Vec3<S> hp = y + r * I.m;  // 3m + 3a
    // Y = EᵀĪE on the lower triangle, with Ī shifted by s = Ī_zz so that its zz entry vanishes
    // (a multiple of 1 commutes with E), and Y_zz from the trace, which rotation keeps.
    const S s = I.I.zz;
    const S xx = I.I.xx - s, yy = I.I.yy - s;             // 2a
    const S e1x = E(0, 0), e1y = E(1, 0), e1z = E(2, 0);  // columns e1, e2, e3 of E
    const S e2x = E(0, 1), e2y = E(1, 1), e2z = E(2, 1);
    const S e3x = E(0, 2), e3y = E(1, 2), e3z = E(2, 2);
    const S w1x = xx * e1x + I.I.yx * e1y + I.I.zx * e1z;  // w1 = (Ī − s1) e1: 8m + 5a
    const S w1y = I.I.yx * e1x + yy * e1y + I.I.zy * e1z;
    const S w1z = I.I.zx * e1x + I.I.zy * e1y;
    const S w2x = xx * e2x + I.I.yx * e2y + I.I.zx * e2z;  // w2 = (Ī − s1) e2: 8m + 5a
    const S w2y = I.I.yx * e2x + yy * e2y + I.I.zy * e2z;
    const S w2z = I.I.zx * e2x + I.I.zy * e2y;
    const S Y11 = e1x * w1x + e1y * w1y + e1z * w1z;  // 5 dot products: 15m + 10a
    const S Y21 = e2x * w1x + e2y * w1y + e2z * w1z;
    const S Y31 = e3x * w1x + e3y * w1y + e3z * w1z;
    const S Y22 = e2x * w2x + e2y * w2y + e2z * w2z;
    const S Y32 = e3x * w2x + e3y * w2y + e3z * w2z;
    const S Y33 = (xx + yy) - Y11 - Y22;  // trace: 3a
    // − r×y× − h'×r× = −(y rᵀ + r h'ᵀ) + (r·z)1 with z = y + h'; its diagonal is Σ_{k≠i} r_k z_k
    const Vec3<S> z = y + hp;                                      // 3a
    const S px = r[0] * z[0], py = r[1] * z[1], pz = r[2] * z[2];  // 3m
    RigidInertia<S> out;
    out.m = I.m;
    out.h = hp;
    out.I.xx = (Y11 + s) + (py + pz);  // diagonal: 3 x 3a
    out.I.yy = (Y22 + s) + (px + pz);
    out.I.zz = (Y33 + s) + (px + py);
    out.I.yx = Y21 - (y[1] * r[0] + r[1] * hp[0]);  // off-diagonal: 3 x (2m + 2a)
    out.I.zx = Y31 - (y[2] * r[0] + r[2] * hp[0]);
    out.I.zy = Y32 - (y[2] * r[1] + r[2] * hp[1]);
    return out;
  }
  // X* I X^{-1}: a rigid inertia in A-coordinates expressed in B-coordinates
  RigidInertia<S> apply(const RigidInertia<S>& I) const { return inverse().inv_apply(I); }

  // Xᵀ I X for an articulated inertia [A B; Bᵀ C]: rotate the blocks, then translate by r:
  //   B'' = B' + r× C', A'' = A' − B' r× + r× B''ᵀ, C'' = C'
  ArticulatedInertia<S> inv_apply(const ArticulatedInertia<S>& I) const {
    ArticulatedInertia<S> out;
    const Mat3<S> Et = E.transpose();
    const Mat3<S> Ar = Et * I.A * E, Br = Et * I.B * E;
    out.C.noalias() = Et * I.C * E;
    const Mat3<S> rx = skew<S>(r);
    out.B = Br + rx * out.C;
    out.A = Ar - Br * rx + rx * out.B.transpose();
    return out;
  }

  Mat6<S> matrix() const {
    Mat6<S> X;
    X << E, Mat3<S>::Zero(), -E * skew<S>(r), E;
    return X;
  }
};

// ^iX_λ = X_J(q) X_T as the kernels keep it (Data::Xup): multiplied out, 33m once, after which
// every use is one transform. Traced scalars keep the two factors instead (codegen/traced.hpp).
template <class S> struct ParentTransform {
  using type = Transform<S>;
  static type make(const Transform<S>& XJ, const Transform<S>& XT) { return XJ * XT; }
};

// X1 X2 with all nine entries of E1 E2 multiplied out (36m + 27a), for chains of products such as
// the world poses ^iX_0 = ^iX_λ ^λX_0 down a branch. operator*'s 33m product takes the third row
// as the cross product of the first two, which is exact for rotations but, chained down a long
// branch, amplifies rounding by about 4/3 per link: ^iX_0 of a 400-link chain would no longer be
// a rotation. Each entry is summed left to right (the same bits wherever it is used).
template <class S> TREEDYN_INLINE Transform<S> compose(const Transform<S>& X1, const Transform<S>& X2) {
  Transform<S> X;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) X.E(i, j) = X1.E(i, 0) * X2.E(0, j) + X1.E(i, 1) * X2.E(1, j) + X1.E(i, 2) * X2.E(2, j);
  X.r = X2.r + mulT(X2.E, X1.r);
  return X;
}

}  // namespace treedyn
