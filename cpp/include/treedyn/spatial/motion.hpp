// Spatial motion [ω; v] and force [n; f] vectors (Featherstone's order) and their cross products.
#pragma once
#include "treedyn/spatial/vec3.hpp"

namespace treedyn {

template <class S> struct Motion {
  Vec3<S> ang, lin;  // ω, v
  static Motion zero() { return {Vec3<S>::Zero(), Vec3<S>::Zero()}; }
  static Motion from(const Vec6<S>& x) { return {x.template head<3>(), x.template tail<3>()}; }
  Vec6<S> vec() const {
    Vec6<S> x;
    x << ang, lin;
    return x;
  }
  Motion operator+(const Motion& o) const { return {ang + o.ang, lin + o.lin}; }
  Motion operator-(const Motion& o) const { return {ang - o.ang, lin - o.lin}; }
  Motion operator*(S s) const { return {ang * s, lin * s}; }
  Motion& operator+=(const Motion& o) {
    ang += o.ang;
    lin += o.lin;
    return *this;
  }
  // v x m (motion cross product): [ω x m_ω; ω x m_v + v x m_ω]
  Motion cross(const Motion& m) const {
    return {treedyn::cross(ang, m.ang), treedyn::cross(ang, m.lin) + treedyn::cross(lin, m.ang)};
  }
};

template <class S> struct Force {
  Vec3<S> ang, lin;  // n, f
  static Force zero() { return {Vec3<S>::Zero(), Vec3<S>::Zero()}; }
  static Force from(const Vec6<S>& x) { return {x.template head<3>(), x.template tail<3>()}; }
  Vec6<S> vec() const {
    Vec6<S> x;
    x << ang, lin;
    return x;
  }
  Force operator+(const Force& o) const { return {ang + o.ang, lin + o.lin}; }
  Force operator-(const Force& o) const { return {ang - o.ang, lin - o.lin}; }
  Force operator*(S s) const { return {ang * s, lin * s}; }
  Force& operator+=(const Force& o) {
    ang += o.ang;
    lin += o.lin;
    return *this;
  }
  Force& operator-=(const Force& o) {
    ang -= o.ang;
    lin -= o.lin;
    return *this;
  }
};

// v x* f (force cross product): [ω x n + v x f; ω x f]
template <class S> inline Force<S> cross_force(const Motion<S>& v, const Force<S>& f) {
  return {cross(v.ang, f.ang) + cross(v.lin, f.lin), cross(v.ang, f.lin)};
}
// m . f (power)
template <class S> inline S dot(const Motion<S>& m, const Force<S>& f) { return dot(m.ang, f.ang) + dot(m.lin, f.lin); }

}  // namespace treedyn
