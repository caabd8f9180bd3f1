// The engines behind the built-in solvers, for float64 and float32. Inputs are checked and
// converted once to the engine's scalar; the kernels run with the GIL released.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <pybind11/stl.h>
#include <stdexcept>

#include "arrays.hpp"
#include "treedyn/engine/engine.hpp"
#include "treedyn/engine/kernels/aba.hpp"
#include "treedyn/engine/kernels/aba_modified.hpp"
#include "treedyn/engine/kernels/cfa.hpp"
#include "treedyn/engine/kernels/crba_cholesky.hpp"
#include "treedyn/engine/kernels/crba_ltl.hpp"
#include "treedyn/engine/kernels/drumwright.hpp"
#include "treedyn/engine/kernels/jsiia.hpp"

namespace py = pybind11;
using namespace treedyn;
using namespace treedyn::py_arrays;

namespace {

template <class S> const char* dtype_name() { return sizeof(S) == sizeof(float) ? "float32" : "float64"; }

// (q, v, tau) as every solver checks them: real arrays of shape (n,) or (B, n) alike, finite, unit
// quaternions; returns the batch size (-1: single vectors). Solver.check_inputs calls it too.
template <class S>
py::ssize_t state_args(const Model<S>& model, py::handle q, py::handle v, py::handle tau,
                       py::array_t<S, py::array::c_style>& qa, py::array_t<S, py::array::c_style>& va,
                       py::array_t<S, py::array::c_style>& ta) {
  py::ssize_t Bq, Bv, Bt;
  qa = vector_arg<S>(q, "q", model.nq, "nq", true, Bq);
  va = vector_arg<S>(v, "v", model.nv, "nv", true, Bv);
  ta = vector_arg<S>(tau, "tau", model.nv, "nv", true, Bt);
  if (Bq != Bv || Bq != Bt)
    throw py::value_error("q, v and tau must all be single vectors or batches of the same size, got shapes " +
                          shape_str(qa) + ", " + shape_str(va) + ", " + shape_str(ta));
  check_quaternions(model, qa.data(), Bq >= 0 ? Bq : 1, "q");
  return Bq;
}

template <class S> py::tuple check_state(const Model<double>& model, py::handle q, py::handle v, py::handle tau) {
  auto qa = no_array<S>(), va = no_array<S>(), ta = no_array<S>();
  const py::ssize_t B = state_args<S>(model.template cast<S>(), q, v, tau, qa, va, ta);
  // fresh copies: the caller's arrays are never handed back to be written to
  return py::make_tuple(qa.attr("copy")(), va.attr("copy")(), ta.attr("copy")(), B >= 0);
}

template <class S> py::object forward_dynamics(Engine<S>& self, py::handle q, py::handle v, py::handle tau,
                                               py::object f_ext, py::object out_obj) {
  const Model<S>& model = self.model();
  auto qa = no_array<S>(), va = no_array<S>(), ta = no_array<S>();
  const py::ssize_t Bq = state_args<S>(model, q, v, tau, qa, va, ta);
  const bool batch = Bq >= 0;
  const py::ssize_t B = batch ? Bq : 1;  // items; a batch may be empty
  auto fa = no_array<S>();
  if (!f_ext.is_none()) {
    fa = as_real<S>(f_ext, "f_ext");
    const bool ok = batch ? (fa.ndim() == 3 && fa.shape(0) == B && fa.shape(1) == model.N + 1 && fa.shape(2) == 6)
                          : (fa.ndim() == 2 && fa.shape(0) == model.N + 1 && fa.shape(1) == 6);
    if (!ok)
      throw py::value_error(
          std::string("f_ext must have shape ") +
          (batch ? "(B, n_bodies, 6) with B = " + std::to_string(B) + " and" : std::string("(n_bodies, 6) with")) +
          " n_bodies = " + std::to_string(model.N + 1) + " (row 0, the world, is ignored), got " + shape_str(fa));
    check_finite<S>(fa, "f_ext");
  }
  const S* fp = f_ext.is_none() ? nullptr : fa.data();
  auto out = no_array<S>();
  if (out_obj.is_none()) {
    out = batch ? new_array<S>(B, model.nv) : new_array<S>(model.nv);
  } else {
    const std::vector<py::ssize_t> shape =
        batch ? std::vector<py::ssize_t>{B, py::ssize_t(model.nv)} : std::vector<py::ssize_t>{py::ssize_t(model.nv)};
    out = out_arg<S>(out_obj, shape, {{"q", q}, {"v", v}, {"tau", tau}, {"f_ext", f_ext}});
  }
  S* o = out.mutable_data();
  if (B == 0) return std::move(out);  // an empty batch: (0, nv)
  double omega = 0;
  try {
    py::gil_scoped_release release;
    if (batch)
      omega = self.forward_dynamics_batch(int(B), qa.data(), va.data(), ta.data(), fp, o);
    else
      omega = self.forward_dynamics(qa.data(), va.data(), ta.data(), fp, o);
  } catch (const SingularJoint&) {
    explain_overflow<S>(model, qa.data(), B, "forward dynamics");
    throw;
  }
  check_result<S>(o, out.size(), "forward dynamics");
  warn_if_inaccurate(omega, Engine<S>::accuracy_limit(), "forward dynamics", dtype_name<S>());
  return std::move(out);
}

template <class S> py::object inverse_inertia(Engine<S>& self, py::handle q, py::handle R, py::object out_obj) {
  const Model<S>& model = self.model();
  py::ssize_t B;
  auto qa = vector_arg<S>(q, "q", model.nq, "nq", false, B);
  check_quaternions(model, qa.data(), 1, "q");
  auto Ra = as_real<S>(R, "R");
  if (!((Ra.ndim() == 1 || Ra.ndim() == 2) && Ra.shape(0) == model.nv))
    throw py::value_error("R must have shape (nv,) or (nv, m) with nv = " + std::to_string(model.nv) + ", got " +
                          shape_str(Ra));
  check_finite<S>(Ra, "R");
  const int m = Ra.ndim() == 1 ? 1 : int(Ra.shape(1));
  const std::vector<py::ssize_t> shape = Ra.ndim() == 1 ? std::vector<py::ssize_t>{py::ssize_t(model.nv)}
                                                        : std::vector<py::ssize_t>{py::ssize_t(model.nv), m};
  py::array_t<S, py::array::c_style> out =
      out_obj.is_none() ? py::array_t<S, py::array::c_style>(shape) : out_arg<S>(out_obj, shape, {{"q", q}, {"R", R}});
  S* o = out.mutable_data();
  // the kernel works on columns (column-major R and Y): one column is its own row-major array; more
  // are copied to column-major and the result back to row-major (C)
  using ColMajor = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic>;
  ColMajor Rc, Y;
  if (m > 1) {
    Rc = Eigen::Map<const Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(Ra.data(), model.nv, m);
    Y.resize(model.nv, m);
  }
  double omega = 0;
  try {
    py::gil_scoped_release release;
    omega = self.inverse_inertia(qa.data(), m > 1 ? Rc.data() : Ra.data(), m, m > 1 ? Y.data() : o);
    if (m > 1) Eigen::Map<Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(o, model.nv, m) = Y;
  } catch (const SingularJoint&) {
    explain_overflow<S>(model, qa.data(), 1, "inverse_inertia");
    throw;
  }
  check_result<S>(o, out.size(), "inverse_inertia");
  warn_if_inaccurate(omega, Engine<S>::accuracy_limit(), "inverse_inertia", dtype_name<S>());
  return std::move(out);
}

template <class S> py::object inverse_mass_matrix(Engine<S>& self, py::handle q, py::object out_obj) {
  const Model<S>& model = self.model();
  py::ssize_t B;
  auto qa = vector_arg<S>(q, "q", model.nq, "nq", false, B);
  check_quaternions(model, qa.data(), 1, "q");
  const std::vector<py::ssize_t> shape{py::ssize_t(model.nv), py::ssize_t(model.nv)};
  py::array_t<S, py::array::c_style> out =
      out_obj.is_none() ? py::array_t<S, py::array::c_style>(shape) : out_arg<S>(out_obj, shape, {{"q", q}});
  S* o = out.mutable_data();
  bool checked;
  double omega = 0;
  try {
    py::gil_scoped_release release;
    checked = self.inverse_mass_matrix(qa.data(), o, omega);
  } catch (const SingularJoint&) {
    explain_overflow<S>(model, qa.data(), 1, "inverse_mass_matrix");
    throw;
  }
  if (!checked) check_result<S>(o, out.size(), "inverse_mass_matrix");
  warn_if_inaccurate(omega, Engine<S>::accuracy_limit(), "inverse_mass_matrix", dtype_name<S>());
  return std::move(out);
}

// the pivots D_i at q, one (nv_i, nv_i) array per moving joint
template <class K, class S> py::list joint_inertias_py(KernelEngine<K, S>& self, py::handle q) {
  const Model<S>& model = self.model();
  py::ssize_t B;
  auto qa = vector_arg<S>(q, "q", model.nq, "nq", false, B);
  check_quaternions(model, qa.data(), 1, "q");
  std::size_t total = 0;
  for (int i = 1; i <= model.N; ++i) total += std::size_t(model.nv_i[i]) * model.nv_i[i];
  std::vector<S> D(total);
  {
    py::gil_scoped_release release;
    joint_inertias(self, qa.data(), D.data());
  }
  py::list out;
  const S* d = D.data();
  for (int i = 1; i <= model.N; ++i) {
    const int n = model.nv_i[i];
    if (n == 0) continue;
    py::array_t<S> a({py::ssize_t(n), py::ssize_t(n)});
    Eigen::Map<Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(a.mutable_data(), n, n) =
        Eigen::Map<const Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic>>(d, n, n);
    out.append(a);
    d += n * n;
  }
  return out;
}

// M(q) by CRBA in the engine's precision
template <class S> py::array_t<S> engine_mass_matrix(Engine<S>& self, py::handle q) {
  const Model<S>& model = self.model();
  py::ssize_t B;
  auto qa = vector_arg<S>(q, "q", model.nq, "nq", false, B);
  check_quaternions(model, qa.data(), 1, "q");
  py::array_t<S> M({py::ssize_t(model.nv), py::ssize_t(model.nv)});
  {
    py::gil_scoped_release release;
    mass_matrix_once<S>(model, qa.data(), M.mutable_data());
  }
  check_result<S>(M, "mass_matrix");
  return M;
}

// The Python exception for the C++ exception in flight, as pybind11's dispatcher raises it:
// module.cpp's registered SingularJoint → treedyn.SingularInertiaError, then pybind11's table for
// the standard exceptions (tests/solvers/test_solvers.py checks them through forward_dynamics).
void raise_current_exception() {
  try {
    throw;
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (const py::builtin_exception& e) {
    e.set_error();
  } catch (const SingularJoint& e) {
    static const py::handle singular =
        py::object(py::module_::import("treedyn._core").attr("SingularInertiaError")).release();
    PyErr_SetString(singular.ptr(), e.what());
  } catch (const std::bad_alloc&) {
    PyErr_NoMemory();
  } catch (const std::domain_error& e) {  // pybind11's table of standard exceptions from here on
    PyErr_SetString(PyExc_ValueError, e.what());
  } catch (const std::invalid_argument& e) {
    PyErr_SetString(PyExc_ValueError, e.what());
  } catch (const std::length_error& e) {
    PyErr_SetString(PyExc_ValueError, e.what());
  } catch (const std::out_of_range& e) {
    PyErr_SetString(PyExc_IndexError, e.what());
  } catch (const std::range_error& e) {
    PyErr_SetString(PyExc_ValueError, e.what());
  } catch (const std::overflow_error& e) {
    PyErr_SetString(PyExc_OverflowError, e.what());
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  } catch (...) {
    PyErr_SetString(PyExc_RuntimeError, "unknown C++ exception");
  }
}

// forward_dynamics(q, v, tau, f_ext=None, *, out=None) as a CPython vectorcall method: pybind11's
// dispatcher (argument vectors, defaults, overloads) costs ~0.2 µs a call, a fifth of the forward
// dynamics of a 6-joint arm; parsing the five arguments here costs a few ns
template <class S> PyObject* forward_dynamics_call(PyObject* self, PyObject* const* args, Py_ssize_t nargs,
                                                   PyObject* kwnames) {
  static const char* names[] = {"q", "v", "tau", "f_ext", "out"};
  PyObject* a[5] = {nullptr, nullptr, nullptr, Py_None, Py_None};
  if (nargs > 4) {
    PyErr_Format(PyExc_TypeError,
                 "forward_dynamics() takes from 3 to 4 positional arguments but %zd were given "
                 "(out is keyword-only)",
                 nargs);
    return nullptr;
  }
  for (Py_ssize_t k = 0; k < nargs; ++k) a[k] = args[k];
  const Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  for (Py_ssize_t j = 0; j < nkw; ++j) {
    PyObject* key = PyTuple_GET_ITEM(kwnames, j);
    int k = 0;
    while (k < 5 && PyUnicode_CompareWithASCIIString(key, names[k]) != 0) ++k;
    if (k == 5) {
      PyErr_Format(PyExc_TypeError, "forward_dynamics() got an unexpected keyword argument '%U'", key);
      return nullptr;
    }
    if (k < nargs) {
      PyErr_Format(PyExc_TypeError, "forward_dynamics() got multiple values for argument '%s'", names[k]);
      return nullptr;
    }
    a[k] = args[nargs + j];
  }
  for (int k = 0; k < 3; ++k)
    if (!a[k]) {
      PyErr_Format(PyExc_TypeError, "forward_dynamics() missing required argument '%s'", names[k]);
      return nullptr;
    }
  try {
    Engine<S>& engine = py::cast<Engine<S>&>(py::handle(self));
    return forward_dynamics<S>(engine, a[0], a[1], a[2], py::reinterpret_borrow<py::object>(a[3]),
                               py::reinterpret_borrow<py::object>(a[4]))
        .release()
        .ptr();
  } catch (...) {
    raise_current_exception();
    return nullptr;
  }
}

// what every solver's engine offers
template <class S> void bind_engine(py::module_& m, const char* name) {
  static PyMethodDef forward_dynamics_def = {
      "forward_dynamics", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&forward_dynamics_call<S>)),
      METH_FASTCALL | METH_KEYWORDS,
      "forward_dynamics(q, v, tau, f_ext=None, *, out=None): q̈, (nv,) or (B, nv) for a batch"};
  py::class_<Engine<S>> cls(m, name, "The C++ side of a built-in solver (one subclass per algorithm)");
  cls.attr("forward_dynamics") = py::reinterpret_steal<py::object>(
      PyDescr_NewMethod(reinterpret_cast<PyTypeObject*>(cls.ptr()), &forward_dynamics_def));
  cls.def("inverse_inertia", &inverse_inertia<S>, py::arg("q"), py::arg("R"), py::kw_only(),
          py::arg("out") = py::none())
      .def("mass_matrix", &engine_mass_matrix<S>, py::arg("q"), "M(q) by CRBA in the engine's precision.")
      .def("inverse_mass_matrix", &inverse_mass_matrix<S>, py::arg("q"), py::kw_only(), py::arg("out") = py::none(),
           "The full M(q)⁻¹ (nv, nv), into out if given (checked by out_arg: bindings/arrays.hpp).");
}

// one algorithm's engine: `name`64 and `name`32, made from a model and the kernel's options
template <class K, class S, class... Options>
py::class_<KernelEngine<K, S>, Engine<S>> bind_kernel(py::module_& m, const std::string& name, const char* doc) {
  py::class_<KernelEngine<K, S>, Engine<S>> cls(m, (name + (sizeof(S) == sizeof(float) ? "32" : "64")).c_str(), doc);
  cls.def(py::init([](const Model<double>& model, const Options&... options) {
    return new KernelEngine<K, S>(model.template cast<S>(), options...);
  }));
  return cls;
}

template <class S> void bind_kernels(py::module_& m) {
  const char* pivots = "The pivots D_i = S_iᵀ I^A_i S_i at q, one (nv_i, nv_i) array per moving joint.";
  bind_kernel<AbaKernel<S>, S, std::string>(
      m, "ABA", "aba: Featherstone's articulated-body algorithm (with a generated kernel's library, or \"\")")
      .def("joint_inertias", &joint_inertias_py<AbaKernel<S>, S>, py::arg("q"), pivots);
  bind_kernel<AbaModifiedKernel<S>, S>(m, "ABAModified", "aba-modified: ascher-pai-cloutier1996 eq. (11)")
      .def("joint_inertias", &joint_inertias_py<AbaModifiedKernel<S>, S>, py::arg("q"), pivots);
  bind_kernel<CrbaCholeskyKernel<S>, S>(m, "CRBACholesky", "crba-cholesky: RNEA + CRBA + dense LLᵀ");
  bind_kernel<DrumwrightKernel<S>, S>(m, "Drumwright", "drumwright: drumwright2012's Θ(n²) inverse inertia");
  bind_kernel<CrbaLtlKernel<S>, S, bool>(m, "CRBALTL", "crba-ltl: RNEA + CRBA + LᵀL (ltdl: LᵀDL)");
  bind_kernel<CfaKernel<S>, S>(m, "CFA", "cfa-oee: the constraint force algorithm with odd-even elimination");
  bind_kernel<JsiiaKernel<S>, S>(m, "JSIIA", "jsiia: joint space inertia inversion by scan");
}

}  // namespace

// one scalar a unit (solvers.cpp: float64, solvers32.cpp: float32), so that the two compile side by side
#ifndef TREEDYN_BIND_FLOAT32
void bind_solvers64(py::module_& m) {
  m.def("check_state", &check_state<double>, py::arg("model"), py::arg("q"), py::arg("v"), py::arg("tau"),
        "(q, v, tau, batch) checked as every solver checks them, as fresh float64 arrays");
  bind_engine<double>(m, "Engine64");
  bind_kernels<double>(m);
}
#else
void bind_solvers32(py::module_& m) {
  m.def("check_state32", &check_state<float>, py::arg("model"), py::arg("q"), py::arg("v"), py::arg("tau"),
        "(q, v, tau, batch) checked as every solver checks them, as fresh float32 arrays");
  bind_engine<float>(m, "Engine32");
  bind_kernels<float>(m);
}
#endif
