// Inverse inertia helpers: Featherstone's LTL / LTDL factors (for tests) and the operation counts
// of the inverse inertia kernels (drumwright2012 Tables 1 and 2).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <map>
#include <string>
#include <tuple>

#include "arrays.hpp"
#include "treedyn/algorithms/crba.hpp"
#include "treedyn/algorithms/ltl.hpp"

namespace py = pybind11;
using namespace treedyn;
using namespace treedyn::py_arrays;

namespace treedyn {
std::map<std::string, std::tuple<long, long, long>> minv_op_counts(int n);
}

void bind_minv(py::module_& m) {
  m.def(
      "_ltl_factor",
      [](const Model<double>& model, py::handle q, bool ltdl) {
        py::ssize_t B;
        auto qa = vector_arg<double>(q, "q", model.nq, "nq", false, B);
        check_quaternions(model, qa.data(), 1, "q");
        Data<double> data(model, true);
        const int nv = model.nv;
        const std::vector<int> lambda = coordinate_parents(model);
        {
          py::gil_scoped_release release;
          crba(model, data, qa.data());
          if (ltdl)
            treedyn::ltdl(data.M.data(), nv, lambda.data());
          else
            treedyn::ltl(data.M.data(), nv, lambda.data());
        }
        // L(k, j) is data[k nv + j] (row-major): keep j <= k
        py::array_t<double> L({py::ssize_t(nv), py::ssize_t(nv)});
        double* l = L.mutable_data();
        for (int k = 0; k < nv; ++k)
          for (int j = 0; j < nv; ++j) l[k * nv + j] = j <= k ? data.M.data()[std::size_t(k) * nv + j] : 0.0;
        return py::make_tuple(L, lambda);
      },
      py::arg("model"), py::arg("q"), py::arg("ltdl") = false,
      "(L, lambda) of Featherstone's LTL (M = LᵀL) or LTDL (M = LᵀDL, D on L's diagonal) of M(q).");
  m.def(
      "_minv_op_counts",
      [](int n) {
        if (n < 1 || n > 400) throw py::value_error("n must be in 1..400, got " + std::to_string(n));
        py::gil_scoped_release release;
        return treedyn::minv_op_counts(n);
      },
      py::arg("n"),
      "{stage: (multiplications, additions, divisions)} of M⁻¹ for a chain of n revolute joints, counted "
      "with the counting scalar (drumwright2012 Tables 1 and 2).");
}
