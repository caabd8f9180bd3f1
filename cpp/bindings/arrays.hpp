// Checking what the user hands over before a kernel sees it: dtype, shape, finiteness, unit
// quaternions. Every failure is a Python exception that names the argument. Inputs are never
// written to: a conversion makes a private copy.
#pragma once
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/warnings.h>

#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "treedyn/engine/engine.hpp"
#include "treedyn/model/model.hpp"

namespace treedyn::py_arrays {
namespace py = pybind11;

inline std::string shape_str(const py::array& a) {
  std::string s = "(";
  for (py::ssize_t k = 0; k < a.ndim(); ++k) s += (k ? ", " : "") + std::to_string(a.shape(k));
  return s + (a.ndim() == 1 ? ",)" : ")");
}

// a real array of scalar S, C-contiguous; refuses complex, object, string and other dtypes
template <class S> py::array_t<S, py::array::c_style> as_real(py::handle obj, const char* name) {
  using Exact = py::array_t<S, py::array::c_style>;
  if (Exact::check_(obj)) return py::reinterpret_borrow<Exact>(obj);  // fast path: nothing to convert
  py::array a;
  try {
    a = py::array::ensure(obj);
  } catch (...) {
  }
  if (!a)
    throw py::type_error(std::string(name) + " must be a numeric array, got " +
                         std::string(py::str(py::type::of(obj).attr("__name__"))));
  const char kind = a.dtype().kind();
  if (kind != 'f' && kind != 'i' && kind != 'u' && kind != 'b')
    throw py::type_error(std::string(name) + " must be a real numeric array, got dtype " +
                         std::string(py::str(a.dtype())));
  return py::array_t < S, py::array::c_style | py::array::forcecast > ::ensure(a);
}

template <class S> void check_finite(const py::array_t<S, py::array::c_style>& a, const char* name) {
  const S* p = a.data();
  const py::ssize_t size = a.size();
  for (py::ssize_t k = 0; k < size; ++k)
    if (!std::isfinite(static_cast<double>(p[k])))
      throw py::value_error(std::string(name) + " contains NaN or inf (at flat index " + std::to_string(k) + ")");
}

// a result must be finite: overflow (huge inputs, float32 range) is reported, never returned;
// this one for a result written into the caller's array (out=) too
template <class S> void check_result(const S* p, py::ssize_t size, const char* what) {
  for (py::ssize_t k = 0; k < size; ++k)
    if (!std::isfinite(static_cast<double>(p[k])))
      throw py::value_error(std::string(what) + " overflowed to inf/NaN (at flat index " + std::to_string(k) +
                            "): the inputs are too large for this precision, or the model is singular");
}

// (the size read once: array_t::size() multiplies the shape out on every call, a third of a TALOS
// derivatives call when it stood in the loop's condition)
template <class S> void check_result(const py::array_t<S>& a, const char* what) {
  check_result(a.data(), a.size(), what);
}

// the bytes [lo, hi) an array's elements may occupy (numpy's may_share_memory bounds); lo = hi
// for an empty array
inline void byte_bounds(const py::array& a, const char*& lo, const char*& hi) {
  lo = hi = static_cast<const char*>(a.data());
  if (a.size() == 0) return;
  for (py::ssize_t k = 0; k < a.ndim(); ++k) {
    const py::ssize_t step = a.strides(k) * (a.shape(k) - 1);
    (step < 0 ? lo : hi) += step;
  }
  hi += a.itemsize();
}

// out=: the caller's array that receives a result of shape `shape`, written in place and returned
// (no fresh allocation, no page faults on every call). It must be a numpy array of exactly the
// solver's dtype and that shape, C-contiguous and writeable, and share no memory with the inputs
// (`inputs`: name and object; objects that are not arrays cannot alias it). Errors name `out`.
template <class S>
py::array_t<S, py::array::c_style> out_arg(py::handle out, const std::vector<py::ssize_t>& shape,
                                           std::initializer_list<std::pair<const char*, py::handle>> inputs) {
  if (!py::isinstance<py::array>(out))
    throw py::type_error("out must be a numpy.ndarray, got " +
                         std::string(py::str(py::type::of(out).attr("__name__"))));
  const auto a = py::reinterpret_borrow<py::array>(out);
  if (!a.dtype().equal(py::dtype::of<S>()))
    throw py::type_error(std::string("out must have dtype ") + (sizeof(S) == sizeof(float) ? "float32" : "float64") +
                         " (the solver's), got " + std::string(py::str(a.dtype())));
  bool same = a.ndim() == py::ssize_t(shape.size());
  for (std::size_t k = 0; same && k < shape.size(); ++k) same = a.shape(k) == shape[k];
  if (!same) {
    std::string want = "(";
    for (std::size_t k = 0; k < shape.size(); ++k) want += (k ? ", " : "") + std::to_string(shape[k]);
    throw py::value_error("out must have shape " + want + (shape.size() == 1 ? ",)" : ")") + " (the result's), got " +
                          shape_str(a));
  }
  if (!(a.flags() & py::array::c_style)) throw py::value_error("out must be C-contiguous");
  if (!a.writeable()) throw py::value_error("out must be writeable");
  const char *lo, *hi;
  byte_bounds(a, lo, hi);
  for (const auto& [name, obj] : inputs) {
    if (lo == hi || !py::isinstance<py::array>(obj)) continue;
    const char *ilo, *ihi;
    byte_bounds(py::reinterpret_borrow<py::array>(obj), ilo, ihi);
    if (ilo < hi && lo < ihi)
      throw py::value_error(std::string("out must not share memory with the input ") + name +
                            " (it is written while the inputs are read)");
  }
  return py::reinterpret_borrow<py::array_t<S, py::array::c_style>>(out);
}

// an array_t that holds nothing yet, to be assigned: array_t's default constructor makes a numpy
// array of size 0 (five of them were 0.3 µs of every forward dynamics call)
template <class S> py::array_t<S, py::array::c_style> no_array() {
  return py::reinterpret_steal<py::array_t<S, py::array::c_style>>(py::handle());
}

// a new C-contiguous array of S, uninitialised, shape (n0,) or (n0, n1) (n1 < 0: one axis):
// numpy's constructor called directly (py::array_t's builds shape and stride vectors on the heap
// first: 60 ns of a 1 µs forward dynamics call on a 6-joint arm)
template <class S> py::array_t<S, py::array::c_style> new_array(py::ssize_t n0, py::ssize_t n1 = -1) {
  auto& api = py::detail::npy_api::get();
  Py_intptr_t dims[2] = {n0, n1};
  PyObject* descr = api.PyArray_DescrFromType_(py::detail::npy_format_descriptor<S>::value);
  PyObject* a = api.PyArray_NewFromDescr_(api.PyArray_Type_, descr, n1 < 0 ? 1 : 2, dims, nullptr, nullptr, 0, nullptr);
  if (!a) throw py::error_already_set();
  return py::reinterpret_steal<py::array_t<S, py::array::c_style>>(a);
}

inline std::string number(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  return buf;
}

// Called while handling a SingularJoint raised at q (count configurations): if M(q) is not finite
// for one of them, the coordinates overflowed (a prismatic q of 1e300 squares to inf) and the
// pivot was not singular but inf/NaN: raise a ValueError that says so. Otherwise return (the
// caller rethrows the SingularJoint). Only on the error path: allocates M.
template <class S> void explain_overflow(const Model<S>& model, const S* q, py::ssize_t count, const char* what) {
  std::vector<S> M(std::size_t(model.nv) * model.nv);
  for (py::ssize_t b = 0; b < count; ++b) {
    const S* qb = q + b * model.nq;
    mass_matrix_once<S>(model, qb, M.data());
    bool finite = true;
    for (S x : M) finite = finite && std::isfinite(static_cast<double>(x));
    if (finite) continue;
    int k = 0;
    for (int j = 1; j < model.nq; ++j)
      if (std::abs(static_cast<double>(qb[j])) > std::abs(static_cast<double>(qb[k]))) k = j;
    throw py::value_error(std::string(what) + ": the inputs overflowed: M(q) is not finite at q" +
                          (count > 1 ? " (batch item " + std::to_string(b) + ")" : std::string()) +
                          ", whose largest coordinate is q[" + std::to_string(k) + "] = " + number(qb[k]) +
                          ": too large for this precision (not a singular inertia)");
  }
}

// treedyn.AccuracyWarning (a RuntimeWarning) when an iteratively refined solve ended with an error
// indicator omega (a componentwise backward error, or an estimated relative error left) above
// limit: the result is returned but not vouched for.
// Call with the GIL held; a warnings filter set to "error" turns it into an exception.
inline void warn_if_inaccurate(double omega, double limit, const char* what, const char* dtype) {
  if (!(omega > limit)) return;
  char num[64];
  std::snprintf(num, sizeof num, "%.2g > %.2g", omega, limit);
  py::warnings::warn(
      (std::string(what) + ": iterative refinement did not converge (error indicator " + num + " in " + dtype +
       "); the result may be inaccurate. The system is too ill-conditioned for this "
       "precision (e.g. link masses or inertias many orders of magnitude apart): use float64, or a "
       "solver without the constraint-force system such as 'aba'")
          .c_str(),
      py::module_::import("treedyn._core").attr("AccuracyWarning"), 2);
}

// a vector of length n, or a batch (B, n) when batch_ok; sets B (-1 for a single vector: a batch
// may be empty, B = 0)
template <class S>
py::array_t<S, py::array::c_style> vector_arg(py::handle obj, const char* name, py::ssize_t n, const char* nname,
                                              bool batch_ok, py::ssize_t& B) {
  auto a = as_real<S>(obj, name);
  const bool single = a.ndim() == 1 && a.shape(0) == n;
  const bool batch = batch_ok && a.ndim() == 2 && a.shape(1) == n;
  if (!single && !batch)
    throw py::value_error(std::string(name) + " must have shape (" + nname + ",) = (" + std::to_string(n) + ",)" +
                          (batch_ok ? " or (B, " + std::to_string(n) + ")" : std::string()) + ", got " + shape_str(a));
  check_finite<S>(a, name);
  B = single ? -1 : a.shape(0);
  return a;
}

// every quaternion in q (one configuration or a batch) must be a unit quaternion, to 1e-3
template <class S> void check_quaternions(const Model<S>& model, const S* q, py::ssize_t count, const char* name) {
  for (py::ssize_t b = 0; b < count; ++b)
    for (int i = 1; i <= model.N; ++i) {
      const int off = joint_layout(model.kind[i]).quaternion;  // model/model.hpp
      if (off < 0) continue;
      const S* x = q + b * model.nq + model.q_index[i] + off;
      const double n2 = double(x[0]) * x[0] + double(x[1]) * x[1] + double(x[2]) * x[2] + double(x[3]) * x[3];
      if (std::abs(std::sqrt(n2) - 1.0) > 1e-3)
        throw py::value_error(std::string(name) + ": the quaternion of joint '" + model.name[i] + "' (q[" +
                              std::to_string(model.q_index[i] + off) + ":" +
                              std::to_string(model.q_index[i] + off + 4) + "]) has norm " +
                              std::to_string(std::sqrt(n2)) + ", not 1");
    }
}

}  // namespace treedyn::py_arrays
