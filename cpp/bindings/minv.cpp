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
      "_ltl_rows_update",
      [](const Model<double>& model, py::handle q, py::handle x, int sign) {
        py::ssize_t B;
        auto qa = vector_arg<double>(q, "q", model.nq, "nq", false, B);
        auto xa = vector_arg<double>(x, "x", model.nv, "nv", false, B);
        check_quaternions(model, qa.data(), 1, "q");
        if (sign != 1 && sign != -1) throw py::value_error("sign must be 1 or -1");
        const int nv = model.nv;
        int top = nv - 1;
        while (top >= 0 && xa.data()[top] == 0.0) --top;
        if (top < 0) throw py::value_error("x is zero");
        ChainRows chain;
        chain.build(coordinate_parents(model));
        std::vector<double> xc(chain.len[top]);
        int off = 0;  // non-zeros off the chain
        for (int k = 0; k < nv; ++k) off += xa.data()[k] != 0.0;
        for (int t = 0; t < chain.len[top]; ++t) {
          xc[t] = xa.data()[chain.col[chain.adr[top] + t]];
          off -= xc[t] != 0.0;
        }
        if (off != 0) throw py::value_error("x is not on one chain of the tree");
        Data<double> data(model, true);
        std::vector<double> L(chain.nnz());
        bool ok;
        {
          py::gil_scoped_release release;
          crba(model, data, qa.data());
          ltl_rows_from(data.M, static_cast<const double*>(nullptr), chain, L.data());
          ok = ltl_rows(L.data(), chain) < 0 && ltl_rows_update(L.data(), chain, top, xc.data(), sign);
        }
        py::array_t<double> out({py::ssize_t(nv), py::ssize_t(nv)});
        double* l = out.mutable_data();
        std::fill(l, l + std::size_t(nv) * nv, 0.0);
        for (int k = 0; k < nv; ++k)
          for (int p = 0; p < chain.len[k]; ++p)
            l[std::size_t(k) * nv + chain.col[chain.adr[k] + p]] = L[chain.adr[k] + p];
        return py::make_tuple(out, ok);
      },
      py::arg("model"), py::arg("q"), py::arg("x"), py::arg("sign"),
      "(L, ok): ltl_rows' factor of M(q) (M = LᵀL, L lower) turned into that of M + sign x xᵀ by ltl_rows_update, x "
      "non-zero on one chain of the tree; ok false where a downdate cancelled (L then part-modified).");
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
