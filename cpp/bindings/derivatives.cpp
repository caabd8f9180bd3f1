// The analytic derivatives of the dynamics: rnea_derivatives (∂τ/∂q, ∂τ/∂q̇, M) and aba_derivatives
// (∂q̈/∂q, ∂q̈/∂q̇, M⁻¹), float64 and float32, single states or batches (a leading axis B). Inputs
// are checked as the solvers check them (arrays.hpp); the kernels run with the GIL released.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <optional>
#include <string>

#include "arrays.hpp"
#include "treedyn/derivatives.hpp"

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
template <class S>
py::tuple derivatives(const Model<double>& model64, py::handle q, py::handle v, py::handle x, py::handle f_ext,
                      bool forward) {
  std::optional<Model<S>> cast;  // float32: the model in single precision, made per call (O(n))
  if constexpr (!std::is_same_v<S, double>) cast.emplace(model64.template cast<S>());
  const Model<S>& model = [&]() -> const Model<S>& {
    if constexpr (std::is_same_v<S, double>)
      return model64;
    else
      return *cast;
  }();
  const char* what = forward ? "aba_derivatives" : "rnea_derivatives";
  auto qa = no_array<S>(), va = no_array<S>(), xa = no_array<S>(), fa = no_array<S>();
  const py::ssize_t Bq = state_args<S>(model, q, v, x, forward ? "tau" : "a", f_ext, qa, va, xa, fa);
  const bool batch = Bq >= 0;
  const py::ssize_t B = batch ? Bq : 1, nv = model.nv;
  const std::vector<py::ssize_t> shape = batch ? std::vector<py::ssize_t>{B, nv, nv} : std::vector<py::ssize_t>{nv, nv};
  Arr<S> dq(shape), dv(shape), third(shape);
  if (B == 0 || nv == 0) return py::make_tuple(dq, dv, third);
  const S* fp = f_ext.is_none() ? nullptr : fa.data();
  try {
    py::gil_scoped_release release;
    if (forward)
      aba_derivatives_batch<S>(model, int(B), qa.data(), va.data(), xa.data(), fp, dq.mutable_data(), dv.mutable_data(),
                               third.mutable_data());
    else
      rnea_derivatives_batch<S>(model, int(B), qa.data(), va.data(), xa.data(), fp, dq.mutable_data(),
                                dv.mutable_data(), third.mutable_data());
  } catch (const SingularJoint&) {
    explain_overflow<S>(model, qa.data(), B, what);
    throw;
  } catch (const std::domain_error& e) {
    throw py::value_error(e.what());
  }
  check_result<S>(dq, what);
  check_result<S>(dv, what);
  check_result<S>(third, what);
  return py::make_tuple(dq, dv, third);
}

}  // namespace

void bind_derivatives(py::module_& m) {
  m.def(
      "rnea_derivatives",
      [](const Model<double>& model, py::handle q, py::handle v, py::handle a, py::handle f_ext, bool float32) {
        return float32 ? derivatives<float>(model, q, v, a, f_ext, false)
                       : derivatives<double>(model, q, v, a, f_ext, false);
      },
      py::arg("model"), py::arg("q"), py::arg("v"), py::arg("a"), py::arg("f_ext") = py::none(),
      py::arg("float32") = false, "(∂τ/∂q, ∂τ/∂v, M) of τ = RNEA(q, v, a, f_ext), single or batched");
  m.def(
      "aba_derivatives",
      [](const Model<double>& model, py::handle q, py::handle v, py::handle tau, py::handle f_ext, bool float32) {
        return float32 ? derivatives<float>(model, q, v, tau, f_ext, true)
                       : derivatives<double>(model, q, v, tau, f_ext, true);
      },
      py::arg("model"), py::arg("q"), py::arg("v"), py::arg("tau"), py::arg("f_ext") = py::none(),
      py::arg("float32") = false, "(∂q̈/∂q, ∂q̈/∂v, M⁻¹) of q̈ = ABA(q, v, tau, f_ext), single or batched");
}
