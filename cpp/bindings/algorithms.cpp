// One-shot algorithms on a model: RNEA, bias forces, mass matrix, integrate.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "arrays.hpp"
#include "treedyn/engine.hpp"

namespace py = pybind11;
using namespace treedyn;
using namespace treedyn::py_arrays;
using Arr = py::array_t<double, py::array::c_style>;

namespace {
Arr q_arg(const Model<double>& model, py::handle q) {
  py::ssize_t B;
  Arr a = vector_arg<double>(q, "q", model.nq, "nq", false, B);
  check_quaternions(model, a.data(), 1, "q");
  return a;
}
Arr v_arg(const Model<double>& model, py::handle v, const char* name) {
  py::ssize_t B;
  return vector_arg<double>(v, name, model.nv, "nv", false, B);
}
Arr fext_arg(const Model<double>& model, py::handle f) {
  Arr a = as_real<double>(f, "f_ext");
  if (a.ndim() != 2 || a.shape(0) != model.N + 1 || a.shape(1) != 6)
    throw py::value_error("f_ext must have shape (n_bodies, 6) = (" + std::to_string(model.N + 1) +
                          ", 6) (row 0, the world, is ignored), got " + shape_str(a));
  check_finite<double>(a, "f_ext");
  return a;
}
}  // namespace

void bind_algorithms(py::module_& m) {
  m.def(
      "rnea",
      [](const Model<double>& model, py::handle q, py::handle v, py::handle a, py::object f_ext) {
        Arr qa = q_arg(model, q), va = v_arg(model, v, "v"), aa = v_arg(model, a, "a");
        Arr fa;
        if (!f_ext.is_none()) fa = fext_arg(model, f_ext);
        Arr tau(model.nv);
        {
          py::gil_scoped_release release;
          rnea_once<double>(model, qa.data(), va.data(), aa.data(), f_ext.is_none() ? nullptr : fa.data(),
                            tau.mutable_data());
        }
        check_result<double>(tau, "rnea");
        return tau;
      },
      py::arg("model"), py::arg("q"), py::arg("v"), py::arg("a"), py::arg("f_ext") = py::none());
  m.def(
      "bias_forces",
      [](const Model<double>& model, py::handle q, py::handle v, py::object f_ext) {
        Arr qa = q_arg(model, q), va = v_arg(model, v, "v");
        Arr fa;
        if (!f_ext.is_none()) fa = fext_arg(model, f_ext);
        Arr tau(model.nv);
        {
          py::gil_scoped_release release;
          rnea_once<double>(model, qa.data(), va.data(), nullptr, f_ext.is_none() ? nullptr : fa.data(),
                            tau.mutable_data());
        }
        check_result<double>(tau, "bias_forces");
        return tau;
      },
      py::arg("model"), py::arg("q"), py::arg("v"), py::arg("f_ext") = py::none());
  m.def(
      "mass_matrix",
      [](const Model<double>& model, py::handle q) {
        Arr qa = q_arg(model, q);
        Arr M({model.nv, model.nv});
        {
          py::gil_scoped_release release;
          mass_matrix_once<double>(model, qa.data(), M.mutable_data());
        }
        check_result<double>(M, "mass_matrix");
        return M;
      },
      py::arg("model"), py::arg("q"));
  m.def(
      "forward_kinematics",
      [](const Model<double>& model, py::handle q) {
        Arr qa = q_arg(model, q);
        Arr R({model.N + 1, 3, 3}), p({model.N + 1, 3});
        {
          py::gil_scoped_release release;
          forward_kinematics_once<double>(model, qa.data(), R.mutable_data(), p.mutable_data());
        }
        check_result<double>(R, "forward_kinematics");
        check_result<double>(p, "forward_kinematics");
        return py::make_tuple(R, p);
      },
      py::arg("model"), py::arg("q"), "world rotation (n_bodies, 3, 3) and origin (n_bodies, 3) of every body frame");
  m.def(
      "integrate",
      [](const Model<double>& model, py::handle q, py::handle v, double dt) {
        if (!std::isfinite(dt)) throw py::value_error("dt must be finite");
        Arr qa = q_arg(model, q), va = v_arg(model, v, "v");
        Arr out(model.nq);
        integrate_once<double>(model, qa.data(), va.data(), dt, out.mutable_data());
        check_result<double>(out, "integrate");
        return out;
      },
      py::arg("model"), py::arg("q"), py::arg("v"), py::arg("dt"));
}
