// Contact detection (treedyn/contact/collision.hpp) for treedyn.sim.collision.collide: the geoms as
// arrays (kind, body, placement, size, friction, margin), the candidate pairs and the bodies' world poses in;
// the contacts as arrays out. Inputs are checked (dtype, shape, range, finiteness); the pairs' loop
// runs with the GIL released.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>
#include <vector>

#include "arrays.hpp"
#include "meshes.hpp"
#include "treedyn/contact/collision.hpp"

namespace py = pybind11;
using namespace treedyn;
using namespace treedyn::py_arrays;

namespace {

using Ints = py::array_t<std::int64_t, py::array::c_style>;
using Reals = py::array_t<double, py::array::c_style>;

Ints int_arg(py::handle obj, const char* name) {
  py::array a;
  try {
    a = py::array::ensure(obj);
  } catch (...) {
  }
  if (!a || (a.dtype().kind() != 'i' && a.dtype().kind() != 'u'))
    throw py::type_error(
        std::string(name) + " must be an integer array, got " +
        (a ? "dtype " + std::string(py::str(a.dtype())) : std::string(py::str(py::type::of(obj).attr("__name__")))));
  return py::array_t < std::int64_t, py::array::c_style | py::array::forcecast > ::ensure(a);
}

// shape (n0[, 3[, 3]]): trailing = the number of trailing axes of length 3
void check_shape(const py::array& a, const char* name, py::ssize_t n0, int trailing, const char* expected) {
  bool ok = a.ndim() == 1 + trailing && (n0 < 0 || a.shape(0) == n0);
  for (int k = 1; ok && k <= trailing; ++k) ok = a.shape(k) == 3;
  if (!ok)
    throw py::value_error(std::string(name) + " must have shape " + expected +
                          (n0 >= 0 ? " with " + std::to_string(n0) + " rows" : std::string()) + ", got " +
                          shape_str(a));
}

Reals real_arg(py::handle obj, const char* name, py::ssize_t n0, int trailing, const char* expected) {
  auto a = as_real<double>(obj, name);
  check_shape(a, name, n0, trailing, expected);
  check_finite<double>(a, name);
  return a;
}

py::tuple collide_geoms(py::handle kinds_, py::handle bodies_, py::handle rotations_, py::handle translations_,
                        py::handle sizes_, py::handle friction_, py::handle pairs_, py::handle body_rotations_,
                        py::handle body_positions_, py::handle margins_, py::handle meshes_) {
  const Ints kinds = int_arg(kinds_, "kinds");
  check_shape(kinds, "kinds", -1, 0, "(G,)");
  const py::ssize_t G = kinds.shape(0);
  const Ints bodies = int_arg(bodies_, "bodies");
  check_shape(bodies, "bodies", G, 0, "(G,)");
  const Reals rotations = real_arg(rotations_, "rotations", G, 2, "(G, 3, 3)");
  const Reals translations = real_arg(translations_, "translations", G, 1, "(G, 3)");
  const Reals sizes = real_arg(sizes_, "sizes", G, 1, "(G, 3)");
  const Reals friction = real_arg(friction_, "friction", G, 0, "(G,)");
  const Ints pairs = int_arg(pairs_, "pairs");
  if (!(pairs.ndim() == 2 && pairs.shape(1) == 2))
    throw py::value_error("pairs must have shape (K, 2), got " + shape_str(pairs));
  const Reals body_R = real_arg(body_rotations_, "body_rotations", -1, 2, "(N+1, 3, 3)");
  const py::ssize_t nb = body_R.shape(0);
  if (nb < 1) throw py::value_error("body_rotations must have at least one row (the world)");
  const Reals body_p = real_arg(body_positions_, "body_positions", nb, 1, "(N+1, 3)");
  Reals margins;
  if (!margins_.is_none()) {
    margins = real_arg(margins_, "margins", G, 0, "(G,)");
    for (py::ssize_t k = 0; k < G; ++k)
      if (!(margins.data()[k] >= 0))
        throw py::value_error("margins[" + std::to_string(k) + "] = " + std::to_string(margins.data()[k]) +
                              " is negative");
  }

  std::vector<GeomData> geoms(G);
  for (py::ssize_t k = 0; k < G; ++k) {
    const std::int64_t kind = kinds.data()[k], body = bodies.data()[k];
    if (kind < 0 || kind > 6)
      throw py::value_error("kinds[" + std::to_string(k) + "] = " + std::to_string(kind) +
                            " is not a shape (0 plane, 1 sphere, 2 capsule, 3 box, 4 cylinder, 5 ellipsoid, 6 mesh)");
    if (body < 0 || body >= nb)
      throw py::value_error("bodies[" + std::to_string(k) + "] = " + std::to_string(body) + " is not a body (0 to " +
                            std::to_string(nb - 1) + ")");
    GeomData& g = geoms[k];
    g.kind = ShapeKind(kind);
    g.body = int(body);
    g.R = Eigen::Map<const Eigen::Matrix<double, 3, 3, Eigen::RowMajor>>(rotations.data() + 9 * k);
    g.p = Eigen::Map<const Eigen::Vector3d>(translations.data() + 3 * k);
    g.size = Eigen::Map<const Eigen::Vector3d>(sizes.data() + 3 * k);
    g.friction = friction.data()[k];
    g.margin = margins_.is_none() ? 0.0 : margins.data()[k];
    if (g.kind == ShapeKind::Mesh) {  // its vertices (V, 3) in its frame: meshes[k]
      if (meshes_.is_none()) throw py::value_error("kinds[" + std::to_string(k) + "] is a mesh: give meshes");
      set_mesh(meshes_.cast<py::sequence>()[k], g, "meshes[" + std::to_string(k) + "]");
    }
  }
  const py::ssize_t K = pairs.shape(0);
  const std::int64_t* pr = pairs.data();
  for (py::ssize_t k = 0; k < 2 * K; ++k)
    if (pr[k] < 0 || pr[k] >= G)
      throw py::value_error("pairs[" + std::to_string(k / 2) + "] names geom " + std::to_string(pr[k]) +
                            ", not one of 0 to " + std::to_string(G - 1));

  std::vector<ContactPoint> found;
  {
    py::gil_scoped_release release;
    using RowMat = Eigen::Map<const Eigen::Matrix<double, 3, 3, Eigen::RowMajor>>;
    auto pose = [&](const GeomData& g, Eigen::Matrix3d& R, Eigen::Vector3d& p) {
      const RowMat Rb(body_R.data() + 9 * g.body);
      R = Rb * g.R;
      p = Rb * g.p + Eigen::Map<const Eigen::Vector3d>(body_p.data() + 3 * g.body);
    };
    Eigen::Matrix3d Ra, Rb;
    Eigen::Vector3d pa, pb;
    for (py::ssize_t k = 0; k < K; ++k) {
      const int ia = int(pr[2 * k]), ib = int(pr[2 * k + 1]);
      pose(geoms[ia], Ra, pa);
      pose(geoms[ib], Rb, pb);
      collide_pair(geoms[ia], ia, Ra, pa, geoms[ib], ib, Rb, pb, found);
    }
  }

  const py::ssize_t C = py::ssize_t(found.size());
  auto g = new_array<std::int64_t>(C, 2), b = new_array<std::int64_t>(C, 2);
  auto x = new_array<double>(C, 3), n = new_array<double>(C, 3);
  auto d = new_array<double>(C), f = new_array<double>(C);
  std::int64_t *gp = g.mutable_data(), *bp = b.mutable_data();
  double *xp = x.mutable_data(), *np_ = n.mutable_data(), *dp = d.mutable_data(), *fp = f.mutable_data();
  for (py::ssize_t k = 0; k < C; ++k) {
    const ContactPoint& c = found[k];
    for (int r = 0; r < 2; ++r) gp[2 * k + r] = c.geom[r], bp[2 * k + r] = c.body[r];
    for (int r = 0; r < 3; ++r) xp[3 * k + r] = c.point[r], np_[3 * k + r] = c.normal[r];
    dp[k] = c.depth;
    fp[k] = c.friction;
  }
  return py::make_tuple(g, b, x, n, d, f);
}

}  // namespace

void bind_collision(py::module_& m) {
  m.def(
      "collide_geoms", &collide_geoms, py::arg("kinds"), py::arg("bodies"), py::arg("rotations"),
      py::arg("translations"), py::arg("sizes"), py::arg("friction"), py::arg("pairs"), py::arg("body_rotations"),
      py::arg("body_positions"), py::arg("margins") = py::none(), py::arg("meshes") = py::none(),
      "The contacts of the geom pairs (K, 2) at the bodies' world poses (contact/collision.hpp, contact/convex.hpp): "
      "geoms (G,) as kinds (0 plane, 1 sphere, 2 capsule, 3 box, 4 cylinder (r, half length), 5 ellipsoid (radii), 6 "
      "convex mesh: meshes[k], its hull's vertices (V, 3) in its frame or a (vertices, faces (F, 3)) pair), bodies, "
      "placements (rotations (G, 3, 3), "
      "translations (G, 3)), sizes (G, 3) and friction (G,); body_rotations (N+1, 3, 3), body_positions "
      "(N+1, 3); margins (G,) or None (0): a pair (the sum of its two margins) touches where its surfaces are closer "
      "than it, "
      "its depth + margin reported. Returns (geoms (C, 2), bodies (C, 2), points (C, 3), normals (C, 3), depths (C,), "
      "friction (C,)), normals from a pair's first geom to its second.");
}
