// Frames, Jacobians, centre of mass and energies (algorithms/jacobians.hpp), float64, one
// configuration or a batch (B, nq) looped in C++ with the GIL released.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "arrays.hpp"
#include "treedyn/algorithms/jacobians.hpp"

namespace py = pybind11;
using namespace treedyn;
using namespace treedyn::py_arrays;
using Arr = py::array_t<double, py::array::c_style>;

namespace {

// q as one configuration or a batch: (array, B), B = -1 for one
std::pair<Arr, py::ssize_t> qs_arg(const Model<double>& model, py::handle q) {
  py::ssize_t B;
  Arr a = vector_arg<double>(q, "q", model.nq, "nq", true, B);
  check_quaternions(model, a.data(), B >= 0 ? B : 1, "q");
  return {a, B};
}

int body_arg(const Model<double>& model, int b) {
  if (b < 0 || b > model.N)
    throw py::value_error("no body " + std::to_string(b) + " (bodies are 0.." + std::to_string(model.N) + ")");
  return b;
}

Reference reference_arg(int r) {
  if (r < 0 || r > 2) throw py::value_error("reference must be 0 (world), 1 (local) or 2 (local_world_aligned)");
  return static_cast<Reference>(r);
}

// ^fX_b from the frame's pose in its body: rotation R (frame axes in body coordinates) and origin p
Transform<double> frame_arg(py::handle R, py::handle p) {
  py::ssize_t B;
  Arr Ra = as_real<double>(R, "rotation"), pa = vector_arg<double>(p, "translation", 3, "3", false, B);
  if (Ra.ndim() != 2 || Ra.shape(0) != 3 || Ra.shape(1) != 3)
    throw py::value_error("rotation must have shape (3, 3), got " + shape_str(Ra));
  check_finite<double>(Ra, "rotation");
  Transform<double> X;
  for (int r = 0; r < 3; ++r) {
    X.r[r] = pa.data()[r];
    for (int c = 0; c < 3; ++c) X.E(r, c) = Ra.data()[3 * c + r];  // E = Rᵀ
  }
  return X;
}

// an output of shape `shape` per configuration, (B, *shape) for a batch
Arr out_arr(py::ssize_t B, std::vector<py::ssize_t> shape) {
  if (B >= 0) shape.insert(shape.begin(), B);
  return Arr(shape);
}

}  // namespace

void bind_kinematics(py::module_& m) {
  m.def(
      "frame_jacobian",
      [](const Model<double>& model, py::handle q, int body, py::handle R, py::handle p, int reference) {
        auto [qa, B] = qs_arg(model, q);
        const int b = body_arg(model, body);
        const Transform<double> Xf = frame_arg(R, p);
        const Reference ref = reference_arg(reference);
        Arr J = out_arr(B, {6, model.nv});
        {
          py::gil_scoped_release release;
          Data<double> data(model);
          std::vector<Transform<double>> X0(model.N + 1);
          for (py::ssize_t k = 0; k < std::max<py::ssize_t>(B, 1) && B != 0; ++k)
            frame_jacobian(model, data, X0, qa.data() + k * model.nq, b, Xf, ref,
                           J.mutable_data() + k * 6 * std::size_t(model.nv));
        }
        check_result<double>(J, "frame_jacobian");
        return J;
      },
      py::arg("model"), py::arg("q"), py::arg("body"), py::arg("rotation"), py::arg("translation"),
      py::arg("reference"));
  m.def(
      "contact_jacobian",
      [](const Model<double>& model, py::handle q, py::handle bodies, py::handle points, py::handle dirs) {
        py::ssize_t B;
        Arr qa = vector_arg<double>(q, "q", model.nq, "nq", false, B);
        check_quaternions(model, qa.data(), 1, "q");
        auto ba = py::array_t < std::int64_t, py::array::c_style | py::array::forcecast > ::ensure(bodies);
        Arr pa = as_real<double>(points, "points"), da = as_real<double>(dirs, "directions");
        if (!ba || ba.ndim() != 2 || ba.shape(1) != 2) throw py::value_error("bodies must be integers of shape (P, 2)");
        const py::ssize_t P = ba.shape(0);
        if (pa.ndim() != 2 || pa.shape(0) != P || pa.shape(1) != 3)
          throw py::value_error("points must have shape (P, 3) = (" + std::to_string(P) + ", 3), got " + shape_str(pa));
        if (da.ndim() != 3 || da.shape(0) != P || da.shape(2) != 3)
          throw py::value_error("directions must have shape (P, m, 3) with P = " + std::to_string(P) + ", got " +
                                shape_str(da));
        check_finite<double>(pa, "points");
        check_finite<double>(da, "directions");
        for (py::ssize_t k = 0; k < 2 * P; ++k)
          if (ba.data()[k] < 0 || ba.data()[k] > model.N)
            throw py::value_error("bodies: no body " + std::to_string(ba.data()[k]) + " (bodies are 0.." +
                                  std::to_string(model.N) + ")");
        const int m = int(da.shape(1));
        Arr J({py::ssize_t(model.nv), P * m});
        {
          py::gil_scoped_release release;
          Data<double> data(model);
          std::vector<Transform<double>> X0(model.N + 1);
          std::vector<Motion<double>> s0(model.nv);
          contact_jacobian(model, data, X0, s0, qa.data(), int(P), ba.data(), pa.data(), da.data(), m,
                           J.mutable_data());
        }
        check_result<double>(J, "contact_jacobian");
        return J;
      },
      py::arg("model"), py::arg("q"), py::arg("bodies"), py::arg("points"), py::arg("directions"));
  m.def(
      "frame_bias_acceleration",
      [](const Model<double>& model, py::handle q, py::handle v, int body, py::handle R, py::handle p, int reference) {
        py::ssize_t B;
        Arr qa = vector_arg<double>(q, "q", model.nq, "nq", false, B);
        check_quaternions(model, qa.data(), 1, "q");
        Arr va = vector_arg<double>(v, "v", model.nv, "nv", false, B);
        const int b = body_arg(model, body);
        const Transform<double> Xf = frame_arg(R, p);
        const Reference ref = reference_arg(reference);
        Arr out(6);
        {
          py::gil_scoped_release release;
          Data<double> data(model);
          std::vector<Transform<double>> X0(model.N + 1);
          const Motion<double> a = frame_bias_acceleration(model, data, X0, qa.data(), va.data(), b, Xf, ref);
          for (int r = 0; r < 3; ++r) {
            out.mutable_data()[r] = a.ang[r];
            out.mutable_data()[r + 3] = a.lin[r];
          }
        }
        check_result<double>(out, "frame_bias_acceleration");
        return out;
      },
      py::arg("model"), py::arg("q"), py::arg("v"), py::arg("body"), py::arg("rotation"), py::arg("translation"),
      py::arg("reference"));
  m.def(
      "center_of_mass",
      [](const Model<double>& model, py::handle q, bool jacobian) {
        auto [qa, B] = qs_arg(model, q);
        Arr c = out_arr(B, {3});
        Arr J = jacobian ? out_arr(B, {3, model.nv}) : Arr();
        {
          py::gil_scoped_release release;
          Data<double> data(model);
          std::vector<Transform<double>> X0(model.N + 1);
          for (py::ssize_t k = 0; k < std::max<py::ssize_t>(B, 1) && B != 0; ++k)
            center_of_mass(model, data, X0, qa.data() + k * model.nq, c.mutable_data() + 3 * k,
                           jacobian ? J.mutable_data() + k * 3 * std::size_t(model.nv) : nullptr);
        }
        check_result<double>(c, "center_of_mass");
        if (!jacobian) return py::object(c);
        check_result<double>(J, "center_of_mass");
        return py::object(py::make_tuple(c, J));
      },
      py::arg("model"), py::arg("q"), py::arg("jacobian") = false);
  m.def(
      "kinetic_energy",
      [](const Model<double>& model, py::handle q, py::handle v) {
        py::ssize_t B;
        Arr qa = vector_arg<double>(q, "q", model.nq, "nq", false, B);
        check_quaternions(model, qa.data(), 1, "q");
        Arr va = vector_arg<double>(v, "v", model.nv, "nv", false, B);
        double T;
        {
          py::gil_scoped_release release;
          Data<double> data(model);
          T = kinetic_energy(model, data, qa.data(), va.data());
        }
        if (!std::isfinite(T)) throw py::value_error("kinetic_energy overflowed to inf/NaN: the inputs are too large");
        return T;
      },
      py::arg("model"), py::arg("q"), py::arg("v"));
  m.def(
      "potential_energy",
      [](const Model<double>& model, py::handle q) {
        py::ssize_t B;
        Arr qa = vector_arg<double>(q, "q", model.nq, "nq", false, B);
        check_quaternions(model, qa.data(), 1, "q");
        double V;
        {
          py::gil_scoped_release release;
          Data<double> data(model);
          std::vector<Transform<double>> X0(model.N + 1);
          V = potential_energy(model, data, X0, qa.data());
        }
        if (!std::isfinite(V))
          throw py::value_error("potential_energy overflowed to inf/NaN: the inputs are too large");
        return V;
      },
      py::arg("model"), py::arg("q"));
}
