// A scalar that counts its multiplications and additions (subtractions count as additions,
// negation is free, as in featherstone-part3's and drumwright2012's tables). Used by the tests
// that check operation counts; never in production kernels.
#pragma once
#include <Eigen/Core>
#include <cmath>

namespace treedyn {

struct OpCount {
  long m = 0, a = 0, d = 0;  // multiplications, additions, divisions
};

struct Counted {
  double x = 0.0;
  static OpCount& count() {
    static thread_local OpCount c;
    return c;
  }
  Counted() = default;
  Counted(double v) : x(v) {}  // NOLINT: implicit, like a built-in scalar
  // explicit, so that a kernel's std::isfinite(static_cast<double>(D)) compiles and nothing
  // converts silently (an implicit conversion would let arithmetic escape the count)
  explicit operator double() const { return x; }
  Counted operator-() const { return Counted(-x); }
  friend Counted operator+(Counted a, Counted b) {
    ++count().a;
    return a.x + b.x;
  }
  friend Counted operator-(Counted a, Counted b) {
    ++count().a;
    return a.x - b.x;
  }
  friend Counted operator*(Counted a, Counted b) {
    ++count().m;
    return a.x * b.x;
  }
  friend Counted operator/(Counted a, Counted b) {
    ++count().d;
    return a.x / b.x;
  }
  Counted& operator+=(Counted b) { return *this = *this + b; }
  Counted& operator-=(Counted b) { return *this = *this - b; }
  Counted& operator*=(Counted b) { return *this = *this * b; }
  Counted& operator/=(Counted b) { return *this = *this / b; }
  friend bool operator<(Counted a, Counted b) { return a.x < b.x; }
  friend bool operator>(Counted a, Counted b) { return a.x > b.x; }
  friend bool operator<=(Counted a, Counted b) { return a.x <= b.x; }
  friend bool operator>=(Counted a, Counted b) { return a.x >= b.x; }
  friend bool operator==(Counted a, Counted b) { return a.x == b.x; }
  friend bool operator!=(Counted a, Counted b) { return a.x != b.x; }
};
// square roots, sines and cosines are not multiplications or additions: not counted (the tables
// count neither; the kinematics' sin/cos are reported apart when they matter)
inline Counted sqrt(Counted a) { return std::sqrt(a.x); }
inline Counted abs(Counted a) { return std::abs(a.x); }
inline Counted sin(Counted a) { return std::sin(a.x); }
inline Counted cos(Counted a) { return std::cos(a.x); }
inline bool isfinite(Counted a) { return std::isfinite(a.x); }

}  // namespace treedyn

namespace Eigen {
template <> struct NumTraits<treedyn::Counted> : NumTraits<double> {
  typedef treedyn::Counted Real;
  typedef treedyn::Counted NonInteger;
  typedef treedyn::Counted Nested;
  enum {
    IsComplex = 0,
    IsInteger = 0,
    IsSigned = 1,
    RequireInitialization = 1,
    ReadCost = 1,
    AddCost = 1,
    MulCost = 1
  };
};
}  // namespace Eigen
