// A convex mesh geom as both collision bindings take it: its hull's vertices (V, 3) in the geom's frame, or a
// (vertices, faces) pair, faces (F, 3) the hull's triangles wound outwards (the polygons MuJoCo's plane–mesh points
// come from: contact/collision.hpp, plane_convex). Every failure is a ValueError that names the entry.
#pragma once
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "arrays.hpp"
#include "treedyn/contact/collision.hpp"

namespace treedyn::py_arrays {

inline void set_mesh(py::handle entry, GeomData& g, const std::string& name) {
  py::handle vertices = entry, faces = py::none();
  if (py::isinstance<py::tuple>(entry)) {
    auto pair = py::reinterpret_borrow<py::tuple>(entry);
    if (pair.size() != 2) throw py::value_error(name + " must be vertices (V, 3) or a (vertices, faces) pair");
    vertices = pair[0], faces = pair[1];
  }
  auto V = as_real<double>(vertices, name.c_str());
  if (V.ndim() != 2 || V.shape(1) != 3 || V.shape(0) < 1)
    throw py::value_error(name + ": a mesh's vertices must be (V, 3), V >= 1, got " + shape_str(V));
  check_finite<double>(V, name.c_str());
  auto verts = std::make_shared<std::vector<Eigen::Vector3d>>(V.shape(0));
  g.radius = 0.0;
  for (py::ssize_t j = 0; j < V.shape(0); ++j) {
    (*verts)[j] = Eigen::Map<const Eigen::Vector3d>(V.data() + 3 * j);
    g.radius = std::max(g.radius, (*verts)[j].norm());
  }
  if (!faces.is_none()) {
    auto F = py::array_t < int, py::array::c_style | py::array::forcecast > ::ensure(faces);
    if (!F || F.ndim() != 2 || F.shape(1) != 3) throw py::value_error(name + ": the faces must be integers (F, 3)");
    for (py::ssize_t k = 0; k < F.size(); ++k)
      if (F.data()[k] < 0 || F.data()[k] >= V.shape(0))
        throw py::value_error(name + ": a face's vertex index is outside [0, " + std::to_string(V.shape(0)) + ")");
    g.polygons = hull_polygons(*verts, F.data(), int(F.shape(0)));
  }
  g.vertices = std::move(verts);
}

}  // namespace treedyn::py_arrays
