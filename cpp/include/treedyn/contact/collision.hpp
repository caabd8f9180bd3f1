// Contact detection in C++: the closed forms the contact step runs itself (plane–sphere so far: the
// centipede's feet); every other pair's contacts come from treedyn.sim.collision (coal) through the
// step's `extra` contacts. Box patches and the capsule pairs are to come here (docs/contact.md).
#pragma once
#include <Eigen/Core>
#include <vector>
namespace treedyn {
enum class ShapeKind : int { Plane = 0, Sphere = 1, Capsule = 2, Box = 3 };
struct GeomData {
  ShapeKind kind;
  int body;
  Eigen::Matrix3d R;
  Eigen::Vector3d p;
  Eigen::Vector3d size;
  double friction;
};
struct ContactPoint {
  int geom[2];
  int body[2];
  Eigen::Vector3d point, normal;
  double depth, friction;
};
inline void collide_pair(const GeomData& a, int ia, const Eigen::Matrix3d& Ra, const Eigen::Vector3d& pa,
                         const GeomData& b, int ib, const Eigen::Matrix3d& Rb, const Eigen::Vector3d& pb,
                         std::vector<ContactPoint>& out) {
  if (a.kind == ShapeKind::Plane && b.kind == ShapeKind::Sphere) {
    const Eigen::Vector3d n = Ra.col(2);
    const double dist = n.dot(pb - pa), depth = b.size[0] - dist;
    if (depth > 0)
      out.push_back({{ia, ib},
                     {a.body, b.body},
                     pb - n * (0.5 * (b.size[0] + dist)),
                     n,
                     depth,
                     std::max(a.friction, b.friction)});
  } else if (b.kind == ShapeKind::Plane && a.kind == ShapeKind::Sphere) {
    const std::size_t k = out.size();
    collide_pair(b, ib, Rb, pb, a, ia, Ra, pa, out);
    for (std::size_t j = k; j < out.size(); ++j) {
      std::swap(out[j].geom[0], out[j].geom[1]);
      std::swap(out[j].body[0], out[j].body[1]);
      out[j].normal = -out[j].normal;
    }
  }
}
}  // namespace treedyn
