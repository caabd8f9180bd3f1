// The analytic derivatives of the dynamics: rnea_derivatives (∂τ/∂q, ∂τ/∂q̇, M) and aba_derivatives
// (∂q̈/∂q, ∂q̈/∂q̇, M⁻¹), float64 and float32, single states or batches (a leading axis B). Inputs
// are checked as the solvers check them (arrays.hpp); the kernels run with the GIL released.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <string>

#include "arrays.hpp"
#include "treedyn/engine/derivatives.hpp"

namespace py = pybind11;
using namespace treedyn;
using namespace treedyn::py_arrays;

namespace {

template <class S> using Arr = py::array_t<S, py::array::c_style>;

// (q, v, x) as the solvers check them: shapes (n,) or (B, n) alike, finite, unit quaternions;
// f_ext (n_bodies, 6) or (B, n_bodies, 6). Returns B (-1: single vectors).
template <class S>
py::ssize_t state_args(const Model<S>& model, py::handle q, py::handle v, py::handle x, const char* xname,
                       py::handle f_ext, Arr<S>& qa, Arr<S>& va, Arr<S>& xa, Arr<S>& fa) {
  py::ssize_t Bq, Bv, Bx;
  qa = vector_arg<S>(q, "q", model.nq, "nq", true, Bq);
  va = vector_arg<S>(v, "v", model.nv, "nv", true, Bv);
  xa = vector_arg<S>(x, xname, model.nv, "nv", true, Bx);
  if (Bq != Bv || Bq != Bx)
    throw py::value_error(std::string("q, v and ") + xname +
                          " must all be single vectors or batches of the same size, got shapes " + shape_str(qa) +
                          ", " + shape_str(va) + ", " + shape_str(xa));
  const bool batch = Bq >= 0;
  check_quaternions(model, qa.data(), batch ? Bq : 1, "q");
  if (!f_ext.is_none()) {
    fa = as_real<S>(f_ext, "f_ext");
    const bool ok = batch ? (fa.ndim() == 3 && fa.shape(0) == Bq && fa.shape(1) == model.N + 1 && fa.shape(2) == 6)
                          : (fa.ndim() == 2 && fa.shape(0) == model.N + 1 && fa.shape(1) == 6);
    if (!ok)
      throw py::value_error(
          std::string("f_ext must have shape ") +
          (batch ? "(B, n_bodies, 6) with B = " + std::to_string(Bq) + " and" : std::string("(n_bodies, 6) with")) +
          " n_bodies = " + std::to_string(model.N + 1) + " (row 0, the world, is ignored), got " + shape_str(fa));
    check_finite<S>(fa, "f_ext");
  }
  return Bq;
}

// (d/dq, d/dv, third) of τ = RNEA(q, v, x) (third: M) or of q̈ = ABA(q, v, x) (third: M⁻¹)
// a new C-contiguous array of S, uninitialised, shape (n0, n1, n2), or (n1, n2) when n0 < 0: numpy's
// constructor called directly (arrays.hpp, new_array)
template <class S> Arr<S> new_matrices(py::ssize_t n0, py::ssize_t n1, py::ssize_t n2) {
  auto& api = py::detail::npy_api::get();
  Py_intptr_t dims[3] = {n0, n1, n2};
  PyObject* descr = api.PyArray_DescrFromType_(py::detail::npy_format_descriptor<S>::value);
  PyObject* a = api.PyArray_NewFromDescr_(api.PyArray_Type_, descr, n0 < 0 ? 2 : 3, n0 < 0 ? dims + 1 : dims, nullptr,
                                          nullptr, 0, nullptr);
  if (!a) throw py::error_already_set();
  return py::reinterpret_steal<Arr<S>>(a);
}

// whether p[0, n) is finite, in one vectorisable sweep: x − x is 0 for a finite x and NaN for inf
// or NaN, summed in eight lanes (check_result, which names the entry, runs only when it is not)
template <class S> bool all_finite(const S* p, py::ssize_t n) {
  S lane[8] = {};
  py::ssize_t k = 0;
  for (; k + 8 <= n; k += 8)
    for (int j = 0; j < 8; ++j) lane[j] += p[k + j] - p[k + j];
  for (; k < n; ++k) lane[0] += p[k] - p[k];
  S sum = 0;
  for (int j = 0; j < 8; ++j) sum += lane[j];
  return sum == S(0);
}

template <class S>
py::tuple derivatives(Derivatives<S>& self, const Model<double>& now, py::handle q, py::handle v, py::handle x,
                      py::handle f_ext, bool forward) {
  // the model as it is now: the copy is remade when the model has grown, its gravity was set or its
  // passive terms (the only changes a treedyn.Model allows after a body is added)
  if (now.N != self.model().N || now.gravity.template cast<S>() != self.model().gravity ||
      !self.model().same_passive(now))
    self.reset(now.template cast<S>());
  const Model<S>& model = self.model();
  const char* what = forward ? "aba_derivatives" : "rnea_derivatives";
  auto qa = no_array<S>(), va = no_array<S>(), xa = no_array<S>(), fa = no_array<S>();
  const py::ssize_t Bq = state_args<S>(model, q, v, x, forward ? "tau" : "a", f_ext, qa, va, xa, fa);
  const bool batch = Bq >= 0;
  const py::ssize_t B = batch ? Bq : 1, nv = model.nv;
  Arr<S> dq = new_matrices<S>(batch ? B : -1, nv, nv), dv = new_matrices<S>(batch ? B : -1, nv, nv),
         third = new_matrices<S>(batch ? B : -1, nv, nv);
  if (B == 0 || nv == 0) return py::make_tuple(dq, dv, third);
  const S* fp = f_ext.is_none() ? nullptr : fa.data();
  const py::ssize_t size = B * nv * nv;
  bool finite = true;
  try {
    py::gil_scoped_release release;
    if (forward)
      self.aba(int(B), qa.data(), va.data(), xa.data(), fp, dq.mutable_data(), dv.mutable_data(), third.mutable_data());
    else
      self.rnea(int(B), qa.data(), va.data(), xa.data(), fp, dq.mutable_data(), dv.mutable_data(),
                third.mutable_data());
    finite = all_finite(dq.data(), size) && all_finite(dv.data(), size) && all_finite(third.data(), size);
  } catch (const SingularJoint&) {
    explain_overflow<S>(model, qa.data(), B, what);
    throw;
  } catch (const std::domain_error& e) {
    throw py::value_error(e.what());
  }
  if (!finite) {  // the entry named
    check_result<S>(dq.data(), size, what);
    check_result<S>(dv.data(), size, what);
    check_result<S>(third.data(), size, what);
  }
  return py::make_tuple(dq, dv, third);
}

template <class S> void bind_engine(py::module_& m, const char* name) {
  py::class_<Derivatives<S>>(m, name,
                             "The analytic derivatives of one model's dynamics, its workspaces kept between calls")
      .def(py::init([](const Model<double>& model) { return new Derivatives<S>(model.template cast<S>()); }),
           py::arg("model"))
      .def(
          "rnea",
          [](Derivatives<S>& self, const Model<double>& model, py::handle q, py::handle v, py::handle a,
             py::handle f_ext) { return derivatives<S>(self, model, q, v, a, f_ext, false); },
          py::arg("model"), py::arg("q"), py::arg("v"), py::arg("a"), py::arg("f_ext") = py::none(),
          "(∂τ/∂q, ∂τ/∂v, M) of τ = RNEA(q, v, a, f_ext), single or batched")
      .def(
          "aba",
          [](Derivatives<S>& self, const Model<double>& model, py::handle q, py::handle v, py::handle tau,
             py::handle f_ext) { return derivatives<S>(self, model, q, v, tau, f_ext, true); },
          py::arg("model"), py::arg("q"), py::arg("v"), py::arg("tau"), py::arg("f_ext") = py::none(),
          "(∂q̈/∂q, ∂q̈/∂v, M⁻¹) of q̈ = ABA(q, v, tau, f_ext), single or batched");
}

}  // namespace

void bind_derivatives(py::module_& m) {
  bind_engine<double>(m, "Derivatives64");
  bind_engine<float>(m, "Derivatives32");
}
