// Operation counts of the compact spatial arithmetic, measured with the counting scalar
// (featherstone-part3's table: Xv, X*f, X1X2, Iv, XᵀIX).
#include <map>
#include <string>
#include <utility>

#include <Eigen/Geometry>

#include "treedyn/spatial/counting.hpp"
#include "treedyn/spatial/transform.hpp"

namespace treedyn {

namespace {
using C = Counted;
template <class F> std::pair<long, long> measure(F&& f) {
  Counted::count() = OpCount{};
  f();
  const OpCount c = Counted::count();
  return {c.m, c.a};
}
Vec3<C> vec(double a, double b, double c) { return Vec3<C>(C(a), C(b), C(c)); }
}  // namespace

std::map<std::string, std::pair<long, long>> spatial_op_counts() {
  const Mat3<double> Ed = Eigen::AngleAxisd(0.3, Eigen::Vector3d(1, 2, 3).normalized()).toRotationMatrix();
  Mat3<C> E;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) E(i, j) = C(Ed(i, j));
  const Transform<C> X{E, vec(0.1, -0.2, 0.3)}, X2{E.transpose(), vec(0.4, 0.5, -0.6)};
  const Motion<C> v{vec(1, 2, 3), vec(4, 5, 6)};
  const Force<C> f{vec(-1, 2, -3), vec(4, -5, 6)};
  const RigidInertia<C> I{C(2.0), vec(0.1, 0.2, 0.3), {C(1.0), C(0.1), C(2.0), C(0.2), C(0.3), C(3.0)}};
  std::map<std::string, std::pair<long, long>> out;
  out["Xv"] = measure([&] {
    volatile auto r = X.apply(v).lin[0].x;
    (void)r;
  });
  out["X^-1v"] = measure([&] {
    volatile auto r = X.inv_apply(v).lin[0].x;
    (void)r;
  });
  out["X*f"] = measure([&] {
    volatile auto r = X.apply(f).lin[0].x;
    (void)r;
  });
  out["X^Tf"] = measure([&] {
    volatile auto r = X.inv_apply(f).lin[0].x;
    (void)r;
  });
  out["X1X2"] = measure([&] {
    volatile auto r = (X * X2).r[0].x;
    (void)r;
  });
  out["Iv"] = measure([&] {
    volatile auto r = (I * v).lin[0].x;
    (void)r;
  });
  out["X^TIX"] = measure([&] {
    volatile auto r = X.inv_apply(I).I.xx.x;
    (void)r;
  });
  return out;
}

}  // namespace treedyn
