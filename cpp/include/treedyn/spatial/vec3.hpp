// Hand-written 3-vector and 3x3 kernels. Every operation is spelled out on scalars so that a
// counting scalar counts exactly the multiplications and additions featherstone-part3 counts
// (Eigen's expression templates would be free to reorder them). Storage is Eigen's.
#pragma once
#include <Eigen/Core>

// The few small operations every pass calls per body (transform application, a joint's
// rotation) are always inlined: left to the compiler's unit-wide inlining budget they became
// calls when an unrelated kernel joined the unit (aba +10% on a 100-link chain). Under LTO the
// budget is the whole program's (--param inline-unit-growth, read from the compile options): when
// a change elsewhere made the program smaller, Transform::operator* and compose became calls in
// drumwright's passes (+8% on a 100-link chain); so the products with a transform or an inertia
// are always inlined too
#if defined(__GNUC__)
#define TREEDYN_INLINE __attribute__((always_inline)) inline
#else
#define TREEDYN_INLINE inline
#endif

namespace treedyn {

template <class S> using Vec3 = Eigen::Matrix<S, 3, 1>;
template <class S> using Mat3 = Eigen::Matrix<S, 3, 3>;
template <class S> using Vec6 = Eigen::Matrix<S, 6, 1>;
template <class S> using Mat6 = Eigen::Matrix<S, 6, 6>;

// a x b: 6m + 3a
template <class S> inline Vec3<S> cross(const Vec3<S>& a, const Vec3<S>& b) {
  return Vec3<S>(a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]);
}
// a . b: 3m + 2a
template <class S> inline S dot(const Vec3<S>& a, const Vec3<S>& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
// E v: 9m + 6a
template <class S> inline Vec3<S> mul(const Mat3<S>& E, const Vec3<S>& v) {
  return Vec3<S>(E(0, 0) * v[0] + E(0, 1) * v[1] + E(0, 2) * v[2], E(1, 0) * v[0] + E(1, 1) * v[1] + E(1, 2) * v[2],
                 E(2, 0) * v[0] + E(2, 1) * v[1] + E(2, 2) * v[2]);
}
// E^T v: 9m + 6a
template <class S> inline Vec3<S> mulT(const Mat3<S>& E, const Vec3<S>& v) {
  return Vec3<S>(E(0, 0) * v[0] + E(1, 0) * v[1] + E(2, 0) * v[2], E(0, 1) * v[0] + E(1, 1) * v[1] + E(2, 1) * v[2],
                 E(0, 2) * v[0] + E(1, 2) * v[1] + E(2, 2) * v[2]);
}
// the matrix a x (skew-symmetric)
template <class S> inline Mat3<S> skew(const Vec3<S>& a) {
  Mat3<S> m;
  m << S(0), -a[2], a[1], a[2], S(0), -a[0], -a[1], a[0], S(0);
  return m;
}

// Symmetric 3x3 stored as its lower triangle (xx, yx, yy, zx, zy, zz): lt(I) of featherstone-part3.
template <class S> struct Sym3 {
  S xx, yx, yy, zx, zy, zz;
  static Sym3 zero() { return {S(0), S(0), S(0), S(0), S(0), S(0)}; }
  static Sym3 from(const Mat3<S>& m) { return {m(0, 0), m(1, 0), m(1, 1), m(2, 0), m(2, 1), m(2, 2)}; }
  Mat3<S> full() const {
    Mat3<S> m;
    m << xx, yx, zx, yx, yy, zy, zx, zy, zz;
    return m;
  }
  // I v: 9m + 6a
  Vec3<S> operator*(const Vec3<S>& v) const {
    return Vec3<S>(xx * v[0] + yx * v[1] + zx * v[2], yx * v[0] + yy * v[1] + zy * v[2],
                   zx * v[0] + zy * v[1] + zz * v[2]);
  }
  Sym3 operator+(const Sym3& o) const { return {xx + o.xx, yx + o.yx, yy + o.yy, zx + o.zx, zy + o.zy, zz + o.zz}; }
};

}  // namespace treedyn
