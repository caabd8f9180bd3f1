// One-shot algorithms on a model: RNEA, bias forces, mass matrix, integrate. rnea, mass_matrix
// and integrate also take a batch (a leading axis B): rnea and mass_matrix spread its items over
// the thread pool (support/parallel.hpp), one Data per thread, and a single call is a batch of one, so an
// item's result is the single call's bit for bit.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "arrays.hpp"
#include "treedyn/algorithms/crba.hpp"
#include "treedyn/algorithms/passive.hpp"
#include "treedyn/algorithms/rnea.hpp"
#include "treedyn/engine/engine.hpp"

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

// q and the vectors of nv that go with it ((name, object, array to fill) each): all single or all batches of
// one size B; returns B (-1: single). Unit quaternions checked in every item.
py::ssize_t batch_args(const Model<double>& model, py::handle q, Arr& qa,
                       std::initializer_list<std::tuple<const char*, py::handle, Arr*>> vectors) {
  py::ssize_t B;
  qa = vector_arg<double>(q, "q", model.nq, "nq", true, B);
  std::string shapes = shape_str(qa), names = "q";
  bool same = true;
  for (const auto& [name, obj, out] : vectors) {
    py::ssize_t Bx;
    *out = vector_arg<double>(obj, name, model.nv, "nv", true, Bx);
    same = same && Bx == B;
    shapes += ", " + shape_str(*out);
    names += std::string(", ") + name;
  }
  if (!same)
    throw py::value_error(names + " must all be single vectors or batches of the same size, got shapes " + shapes);
  check_quaternions(model, qa.data(), B >= 0 ? B : 1, "q");
  return B;
}

// f_ext of one item (n_bodies, 6) or of a batch (B, n_bodies, 6)
Arr fext_batch_arg(const Model<double>& model, py::handle f, py::ssize_t B) {
  if (B < 0) return fext_arg(model, f);
  Arr a = as_real<double>(f, "f_ext");
  if (a.ndim() != 3 || a.shape(0) != B || a.shape(1) != model.N + 1 || a.shape(2) != 6)
    throw py::value_error("f_ext must have shape (B, n_bodies, 6) with B = " + std::to_string(B) + " and n_bodies = " +
                          std::to_string(model.N + 1) + " (row 0, the world, is ignored), got " + shape_str(a));
  check_finite<double>(a, "f_ext");
  return a;
}

// item(b, data) for b in [0, B), in chunks of consecutive items over the pool's threads, one
// Data per thread (made before the loop: nothing is allocated per item)
template <class Item> void for_items(const Model<double>& model, int B, bool mass_matrix, const Item& item) {
  const int nthreads = std::max(1, std::min(max_threads(), B));
  std::vector<std::unique_ptr<Data<double>>> data;
  for (int t = 0; t < nthreads; ++t) data.emplace_back(new Data<double>(model, mass_matrix));
  const int nchunks = std::min(B, 8 * nthreads);
  parallel_for(nchunks, nthreads, [&](int c, int t) {
    const int b0 = int(std::int64_t(B) * c / nchunks), b1 = int(std::int64_t(B) * (c + 1) / nchunks);
    for (int b = b0; b < b1; ++b) item(b, *data[t]);
  });
}
}  // namespace

void bind_algorithms(py::module_& m) {
  m.def(
      "rnea",
      [](const Model<double>& model, py::handle q, py::handle v, py::handle a, py::object f_ext) {
        Arr qa, va, aa, fa;
        const py::ssize_t Bq = batch_args(model, q, qa, {{"v", v, &va}, {"a", a, &aa}});
        if (!f_ext.is_none()) fa = fext_batch_arg(model, f_ext, Bq);
        const int B = Bq >= 0 ? int(Bq) : 1, nq = model.nq, nv = model.nv, nf = 6 * (model.N + 1);
        Arr tau = Bq >= 0 ? new_array<double>(Bq, nv) : new_array<double>(nv);
        if (B == 0) return tau;
        const double *qp = qa.data(), *vp = va.data(), *ap = aa.data(), *fp = f_ext.is_none() ? nullptr : fa.data();
        double* out = tau.mutable_data();
        {
          py::gil_scoped_release release;
          for_items(model, B, false, [&](int b, Data<double>& data) {
            const std::size_t k = b;
            rnea(model, data, qp + k * nq, vp + k * nv, ap + k * nv, fp ? fp + k * nf : nullptr, out + k * nv);
            if (model.has_springs)  // τ = M q̈ + c − τ_p: inverse dynamics of the forward dynamics with τ_p
              add_passive_force(model, qp + k * nq, vp + k * nv, out + k * nv, out + k * nv, -1.0);
          });
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
        Arr qa;
        const py::ssize_t Bq = batch_args(model, q, qa, {});
        const int B = Bq >= 0 ? int(Bq) : 1, nq = model.nq, nv = model.nv;
        Arr M = Bq >= 0 ? Arr({Bq, py::ssize_t(nv), py::ssize_t(nv)}) : Arr({nv, nv});
        if (B == 0) return M;
        const double* qp = qa.data();
        double* out = M.mutable_data();
        {
          py::gil_scoped_release release;
          for_items(model, B, true, [&](int b, Data<double>& data) {
            crba_root_axes(model, data, qp + std::size_t(b) * nq);
            Eigen::Map<Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(
                out + std::size_t(b) * nv * nv, nv, nv) = data.M;
          });
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
        Arr qa, va;
        const py::ssize_t Bq = batch_args(model, q, qa, {{"v", v, &va}});
        const py::ssize_t B = Bq >= 0 ? Bq : 1;
        Arr out = Bq >= 0 ? new_array<double>(Bq, model.nq) : new_array<double>(model.nq);
        for (py::ssize_t b = 0; b < B; ++b)
          integrate_once<double>(model, qa.data() + b * model.nq, va.data() + b * model.nv, dt,
                                 out.mutable_data() + b * model.nq);
        check_result<double>(out, "integrate");
        return out;
      },
      py::arg("model"), py::arg("q"), py::arg("v"), py::arg("dt"));
}
