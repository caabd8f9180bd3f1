// A scalar that records the arithmetic a kernel does, for featherstone-part3's symbolic
// simplification: a kernel run once with Traced<T> on a model whose parameters are constants
// leaves on a Tape the operations that depend on (q, q̇, τ), everything else folded away.
//   - constants fold: c1 ∘ c2 is computed in T, as the kernel would at run time (same bits);
//   - the identities that are exact in IEEE arithmetic fold too: x·0 = 0, x·1 = x, x·(−1) = −x,
//     x ± 0 = x, 0 − x = −x, x/1 = x, −(−x) = x (the "π/2 rotation costs 0m + 0a" of the slides);
//   - equal operations on equal operands are one node (common subexpressions, e.g. a joint's
//     sin and cos used by every entry of its rotation);
//   - a comparison on a traced value is answered from the value at the tracing point and kept as
//     a guard that the generated code checks (a pivot D > 0): the kernel's branches are those of
//     the traced run, and a call where a guard fails is redone by the generic kernel.
// x·0 = 0 is not exact for an infinite or NaN x: the generated code's results are checked finite
// and redone by the generic kernel when not (codegen/generated.hpp).
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include <Eigen/Core>

#include "treedyn/spatial/transform.hpp"

namespace treedyn {

enum class TraceOp : std::uint8_t { Const, Input, Add, Sub, Mul, Div, Neg, Sqrt, Sin, Cos, Abs, Less, LessEq };

struct TraceNode {
  TraceOp op;
  int a = -1, b = -1;  // operand nodes
  double c = 0;        // Const: the value (exact in double for T = float too); Input: its index
};

// Less/LessEq nodes are guards: `expected` holds their value at the tracing point
struct TraceGuard {
  int node;
  bool expected;
};

class Tape {
 public:
  std::vector<TraceNode> nodes;
  std::vector<TraceGuard> guards;
  int input(int index) { return add({TraceOp::Input, -1, -1, double(index)}); }
  int constant(double c) { return add({TraceOp::Const, -1, -1, c}); }
  int op(TraceOp o, int a, int b = -1) {
    if ((o == TraceOp::Add || o == TraceOp::Mul) && b < a) std::swap(a, b);  // commutative: one key
    return add({o, a, b, 0.0});
  }
  // the tape being recorded on this thread (one at a time)
  static Tape*& active() {
    static thread_local Tape* t = nullptr;
    return t;
  }

 private:
  struct Key {
    TraceOp op;
    int a, b;
    std::uint64_t c;
    bool operator==(const Key& k) const { return op == k.op && a == k.a && b == k.b && c == k.c; }
  };
  struct Hash {
    std::size_t operator()(const Key& k) const {
      std::uint64_t h = std::uint64_t(k.op) * 0x9E3779B97F4A7C15ull;
      h ^= (std::uint64_t(std::uint32_t(k.a)) + 0x7F4A7C15ull + (h << 6) + (h >> 2));
      h ^= (std::uint64_t(std::uint32_t(k.b)) + 0x9E3779B9ull + (h << 6) + (h >> 2));
      h ^= (k.c + (h << 6) + (h >> 2));
      return std::size_t(h);
    }
  };
  std::unordered_map<Key, int, Hash> memo_;
  int add(const TraceNode& n) {
    std::uint64_t bits;
    std::memcpy(&bits, &n.c, sizeof bits);
    const Key k{n.op, n.a, n.b, bits};
    const auto it = memo_.find(k);
    if (it != memo_.end()) return it->second;
    nodes.push_back(n);
    memo_.emplace(k, int(nodes.size()) - 1);
    return int(nodes.size()) - 1;
  }
};

template <class T> struct Traced {
  int id = -1;  // a node of the active tape, or -1: the constant v
  T v = T(0);   // the constant, or the value at the tracing point (comparisons, static_cast)

  Traced() = default;
  template <class U, class = std::enable_if_t<std::is_arithmetic_v<U>>>
  Traced(U x) : v(T(x)) {}  // NOLINT: implicit, like a built-in scalar
  static Traced node(int id, T v) {
    Traced t;
    t.id = id;
    t.v = v;
    return t;
  }
  bool constant() const { return id < 0; }
  bool is(T c) const { return id < 0 && v == c; }
  int ref() const { return id >= 0 ? id : Tape::active()->constant(double(v)); }
  // the value at the tracing point (explicit: nothing converts silently)
  explicit operator double() const { return double(v); }

  Traced operator-() const {
    if (constant()) return Traced(-v);
    const TraceNode& n = Tape::active()->nodes[id];
    if (n.op == TraceOp::Neg) return node(n.a, -v);  // −(−x) = x
    return node(Tape::active()->op(TraceOp::Neg, id), -v);
  }
  friend Traced operator+(const Traced& a, const Traced& b) {
    if (a.constant() && b.constant()) return Traced(a.v + b.v);
    if (a.is(T(0))) return b;
    if (b.is(T(0))) return a;
    return node(Tape::active()->op(TraceOp::Add, a.ref(), b.ref()), a.v + b.v);
  }
  friend Traced operator-(const Traced& a, const Traced& b) {
    if (a.constant() && b.constant()) return Traced(a.v - b.v);
    if (b.is(T(0))) return a;
    if (a.is(T(0))) return -b;
    return node(Tape::active()->op(TraceOp::Sub, a.ref(), b.ref()), a.v - b.v);
  }
  friend Traced operator*(const Traced& a, const Traced& b) {
    if (a.constant() && b.constant()) return Traced(a.v * b.v);
    if (a.is(T(0)) || b.is(T(0))) return Traced(T(0));
    if (a.is(T(1))) return b;
    if (b.is(T(1))) return a;
    if (a.is(T(-1))) return -b;
    if (b.is(T(-1))) return -a;
    return node(Tape::active()->op(TraceOp::Mul, a.ref(), b.ref()), a.v * b.v);
  }
  friend Traced operator/(const Traced& a, const Traced& b) {
    if (a.constant() && b.constant()) return Traced(a.v / b.v);
    if (b.is(T(1))) return a;
    if (a.is(T(0)) && !b.constant()) {  // 0/x = 0 but for x = 0 or NaN, which a guard or the finite
      return Traced(T(0));              // check of the results catches
    }
    return node(Tape::active()->op(TraceOp::Div, a.ref(), b.ref()), a.v / b.v);
  }
  Traced& operator+=(const Traced& b) { return *this = *this + b; }
  Traced& operator-=(const Traced& b) { return *this = *this - b; }
  Traced& operator*=(const Traced& b) { return *this = *this * b; }
  Traced& operator/=(const Traced& b) { return *this = *this / b; }

  // comparisons: answered at the tracing point; a guard when a traced value is involved
  static bool compare(TraceOp op, const Traced& a, const Traced& b) {
    const bool r = op == TraceOp::Less ? a.v < b.v : a.v <= b.v;
    if (!(a.constant() && b.constant()))
      Tape::active()->guards.push_back({Tape::active()->op(op, a.ref(), b.ref()), r});
    return r;
  }
  friend bool operator<(const Traced& a, const Traced& b) { return compare(TraceOp::Less, a, b); }
  friend bool operator>(const Traced& a, const Traced& b) { return compare(TraceOp::Less, b, a); }
  friend bool operator<=(const Traced& a, const Traced& b) { return compare(TraceOp::LessEq, a, b); }
  friend bool operator>=(const Traced& a, const Traced& b) { return compare(TraceOp::LessEq, b, a); }
  friend bool operator==(const Traced& a, const Traced& b) { return compare(TraceOp::LessEq, a, b) && b <= a; }
  friend bool operator!=(const Traced& a, const Traced& b) { return !(a == b); }
};

template <class T, TraceOp op, class F> Traced<T> traced_unary(const Traced<T>& a, F f) {
  if (a.constant()) return Traced<T>(f(a.v));
  return Traced<T>::node(Tape::active()->op(op, a.id), f(a.v));
}
template <class T> Traced<T> sqrt(const Traced<T>& a) {
  return traced_unary<T, TraceOp::Sqrt>(a, [](T x) { return std::sqrt(x); });
}
template <class T> Traced<T> sin(const Traced<T>& a) {
  return traced_unary<T, TraceOp::Sin>(a, [](T x) { return std::sin(x); });
}
template <class T> Traced<T> cos(const Traced<T>& a) {
  return traced_unary<T, TraceOp::Cos>(a, [](T x) { return std::cos(x); });
}
template <class T> Traced<T> abs(const Traced<T>& a) {
  return traced_unary<T, TraceOp::Abs>(a, [](T x) { return std::abs(x); });
}
// a traced value is finite as far as the trace knows: the generated code checks its results
template <class T> bool isfinite(const Traced<T>& a) { return !a.constant() || std::isfinite(a.v); }

// ^iX_λ = X_J(q) X_T kept as its two factors and applied one after the other: multiplied out,
// the product of a joint rotation and a constant X_T is a full matrix; apart, a constant X_T that
// is a permutation or a pure translation folds to a few operations, and so does a rotation about
// a coordinate axis (featherstone-part3's symbolic simplification)
template <class T> struct SplitTransform {
  Transform<Traced<T>> J, T_;  // X = J T_
  Motion<Traced<T>> apply(const Motion<Traced<T>>& m) const { return J.apply(T_.apply(m)); }
  Force<Traced<T>> inv_apply(const Force<Traced<T>>& f) const { return T_.inv_apply(J.inv_apply(f)); }
  ArticulatedInertia<Traced<T>> inv_apply(const ArticulatedInertia<Traced<T>>& I) const {
    return T_.inv_apply(J.inv_apply(I));
  }
};
template <class T> struct ParentTransform<Traced<T>> {
  using type = SplitTransform<T>;
  static type make(const Transform<Traced<T>>& XJ, const Transform<Traced<T>>& XT) { return {XJ, XT}; }
};

}  // namespace treedyn

namespace Eigen {
template <class T> struct NumTraits<treedyn::Traced<T>> : NumTraits<T> {
  typedef treedyn::Traced<T> Real;
  typedef treedyn::Traced<T> NonInteger;
  typedef treedyn::Traced<T> Nested;
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
