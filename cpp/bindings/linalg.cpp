// Structured linear solvers of yang-wu-pan (linalg/oee.hpp: block tri-diagonal by odd-even
// elimination; linalg/scan.hpp: block bi-diagonal by parallel scan), numpy in, numpy out, for float64 and float32.
// Inputs are checked (dtype, shape, finiteness), never written to; the kernels run with the GIL released.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "arrays.hpp"
#include "treedyn/linalg/oee.hpp"

namespace treedyn {
// the kernels for each block size (fixed k <= 6, the sizes of spatial algebra; dynamic beyond), one
// unit per solver and scalar (src/linalg_kernels.cpp.in): ω, the backward error after refinement
template <class S> S oee_dispatch(int n, int k, int m, const S* D, const S* U, const S* R, S* X);
template <class S> void scan_dispatch(int n, int k, int m, const S* A, const S* b, S* x);
}  // namespace treedyn

namespace py = pybind11;
using namespace treedyn;
using namespace treedyn::py_arrays;

namespace {

// R of shape (n, k) (m = 1) or (n, k, m)
template <class S> py::array_t<S, py::array::c_style> rhs_arg(py::handle R, const char* name, py::ssize_t n,
                                                              py::ssize_t k, const char* expected, int& m) {
  auto Ra = as_real<S>(R, name);
  const bool ok = (Ra.ndim() == 2 || Ra.ndim() == 3) && Ra.shape(0) == n && Ra.shape(1) == k;
  if (!ok)
    throw py::value_error(std::string(name) + " must have shape " + expected + " = (" + std::to_string(n) + ", " +
                          std::to_string(k) + "[, m]), got " + shape_str(Ra));
  check_finite<S>(Ra, name);
  m = Ra.ndim() == 2 ? 1 : int(Ra.shape(2));
  return Ra;
}

// a stack of `count` square (k, k) blocks
template <class S> py::array_t<S, py::array::c_style> blocks_arg(py::handle X, const char* name, py::ssize_t count,
                                                                 py::ssize_t k, const char* expected) {
  auto a = as_real<S>(X, name);
  if (!(a.ndim() == 3 && a.shape(0) == count && a.shape(1) == k && a.shape(2) == k))
    throw py::value_error(std::string(name) + " must have shape " + expected + " = (" + std::to_string(count) + ", " +
                          std::to_string(k) + ", " + std::to_string(k) + "), got " + shape_str(a));
  check_finite<S>(a, name);
  return a;
}

template <class S> py::array_t<S> solve_block_tridiagonal(py::handle D, py::handle U, py::handle R) {
  auto Da = as_real<S>(D, "D");
  if (!(Da.ndim() == 3 && Da.shape(0) >= 1 && Da.shape(1) >= 1 && Da.shape(1) == Da.shape(2)))
    throw py::value_error("D must have shape (n, k, k) with n >= 1, k >= 1, got " + shape_str(Da));
  const py::ssize_t n = Da.shape(0), k = Da.shape(1);
  check_finite<S>(Da, "D");
  auto Ua = blocks_arg<S>(U, "U", n - 1, k, "(n-1, k, k)");
  int m;
  auto Ra = rhs_arg<S>(R, "R", n, k, "(n, k) or (n, k, m)", m);
  py::array_t<S> X(std::vector<py::ssize_t>(Ra.shape(), Ra.shape() + Ra.ndim()));
  S* x = X.mutable_data();
  std::string error;
  S omega = 0;
  {
    py::gil_scoped_release release;
    try {
      omega = oee_dispatch<S>(int(n), int(k), m, Da.data(), Ua.data(), Ra.data(), x);
    } catch (const NotPositiveDefinite& e) {
      error = e.what();
    }
  }
  if (!error.empty()) throw py::value_error(error);
  check_result<S>(X, "solve_block_tridiagonal");
  warn_if_inaccurate(omega, oee_backward_error_limit<S>(), "solve_block_tridiagonal",
                     sizeof(S) == sizeof(float) ? "float32" : "float64");
  return X;
}

// x_0 = b_0, x_i = A_{i-1} x_{i-1} + b_i
template <class S> py::array_t<S> solve_block_bidiagonal(py::handle A, py::handle b) {
  auto ba = as_real<S>(b, "b");
  if (!((ba.ndim() == 2 || ba.ndim() == 3) && ba.shape(0) >= 1 && ba.shape(1) >= 1))
    throw py::value_error("b must have shape (n, k) or (n, k, m) with n >= 1, k >= 1, got " + shape_str(ba));
  check_finite<S>(ba, "b");
  const py::ssize_t n = ba.shape(0), k = ba.shape(1);
  const int m = ba.ndim() == 2 ? 1 : int(ba.shape(2));
  auto Aa = blocks_arg<S>(A, "A", n - 1, k, "(n-1, k, k)");
  py::array_t<S> x(std::vector<py::ssize_t>(ba.shape(), ba.shape() + ba.ndim()));
  S* xp = x.mutable_data();
  {
    py::gil_scoped_release release;
    scan_dispatch<S>(int(n), int(k), m, Aa.data(), ba.data(), xp);
  }
  check_result<S>(x, "solve_block_bidiagonal");
  return x;
}

}  // namespace

void bind_linalg(py::module_& m) {
  m.def("_solve_block_tridiagonal_f64", &solve_block_tridiagonal<double>, py::arg("D"), py::arg("U"), py::arg("R"));
  m.def("_solve_block_tridiagonal_f32", &solve_block_tridiagonal<float>, py::arg("D"), py::arg("U"), py::arg("R"));
  m.def("_solve_block_bidiagonal_f64", &solve_block_bidiagonal<double>, py::arg("A"), py::arg("b"));
  m.def("_solve_block_bidiagonal_f32", &solve_block_bidiagonal<float>, py::arg("A"), py::arg("b"));
}
