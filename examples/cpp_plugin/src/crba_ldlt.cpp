// An example treedyn solver plugin in C++, built on treedyn's headers alone (docs/plugins.md):
// q̈ = M(q)⁻¹(τ − c(q, q̇, f_ext)) with the bias c by treedyn's RNEA, M by its CRBA, and M = PᵀLDLᵀP
// factorised by Eigen's LDLT (a Cholesky without square roots, with symmetric pivoting).
//
// The model arrives as treedyn's capsule (treedyn.sdk.model_capsule), checked against the ABI this
// file was compiled for, and is copied once: the solver is frozen at construction, as treedyn's own.
// The kernels run with the GIL released; one mutex guards the workspace, so one solver may be
// shared between threads (the Python class sets thread_safe = True).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <Eigen/Cholesky>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>

#include "treedyn/algorithms/crba.hpp"
#include "treedyn/algorithms/rnea.hpp"
#include "treedyn/sdk/abi.hpp"
#include "treedyn/sdk/capsule.hpp"

namespace py = pybind11;
using treedyn::Data;
using treedyn::Model;

class CrbaLdlt {
 public:
  using VecX = Eigen::VectorXd;
  using RowMat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

  explicit CrbaLdlt(const Model<double>& model) : model_(model), data_(model_, true), ldlt_(model_.nv) {}

  const Model<double>& model() const { return model_; }

  // B problems: q (B, nq), qd and tau (B, nv), fext (B, N + 1, 6) or null; q̈ into qdd (B, nv)
  void forward_dynamics(int B, const double* q, const double* qd, const double* tau, const double* fext, double* qdd) {
    std::lock_guard<std::mutex> hold(lock_);
    const int nq = model_.nq, nv = model_.nv, nf = 6 * (model_.N + 1);
    for (int b = 0; b < B; ++b) {
      const double* qb = q + b * nq;
      treedyn::rnea(model_, data_, qb, qd + b * nv, static_cast<const double*>(nullptr), fext ? fext + b * nf : nullptr,
                    data_.bias.data());  // c = RNEA(q, q̇, 0, f_ext)
      factorize(qb);
      Eigen::Map<VecX> x(qdd + b * nv, nv);
      x = Eigen::Map<const VecX>(tau + b * nv, nv) - data_.bias;
      ldlt_.solveInPlace(x);
    }
  }

  // Y = M(q)⁻¹ R for R (nv, m), both row-major
  void inverse_inertia(const double* q, const double* R, int m, double* Y) {
    std::lock_guard<std::mutex> hold(lock_);
    factorize(q);
    Eigen::Map<RowMat> out(Y, model_.nv, m);
    out = Eigen::Map<const RowMat>(R, model_.nv, m);
    ldlt_.solveInPlace(out);
  }

 private:
  void factorize(const double* q) {
    treedyn::crba(model_, data_, q);  // data_.M, both triangles
    ldlt_.compute(data_.M);           // no allocation: sized in the constructor
    // M is symmetric positive definite for a physical model: a pivot that is not positive means a
    // joint that moves no inertia (a std::domain_error: pybind11 raises ValueError)
    if (ldlt_.info() != Eigen::Success || !(ldlt_.vectorD().array() > 0).all())
      throw std::domain_error(
          "the mass matrix M(q) is not positive definite (an LDLT pivot is <= 0): some joint moves bodies "
          "without inertia along its motion subspace");
  }

  Model<double> model_;  // a copy: the caller's model may change (gravity) or go away
  Data<double> data_;    // treedyn's workspace, with the mass matrix
  Eigen::LDLT<Eigen::MatrixXd> ldlt_;
  std::mutex lock_;
};

using Array = py::array_t<double, py::array::c_style>;

static void expect_shape(const Array& a, std::initializer_list<py::ssize_t> shape, const char* name) {
  bool ok = a.ndim() == py::ssize_t(shape.size());
  int k = 0;
  for (py::ssize_t n : shape) ok = ok && a.shape(k++) == n;
  if (!ok) throw py::value_error(std::string(name) + " has the wrong shape for this model");
}

PYBIND11_MODULE(_crba_ldlt, m) {
  m.doc() = "example treedyn plugin: CRBA + Eigen LDLT forward dynamics on treedyn's headers";
  m.attr("TREEDYN_ABI_VERSION") = TREEDYN_ABI_VERSION;
  m.attr("MODEL_CAPSULE_NAME") = TREEDYN_MODEL_CAPSULE_NAME;
  py::register_exception<treedyn::AbiMismatch>(m, "AbiMismatch", PyExc_RuntimeError);

  // the arrays come checked from the Python class (treedyn.Solver.check_inputs); the shapes are
  // checked again here, so that a direct call cannot read past an array
  py::class_<CrbaLdlt>(m, "CrbaLdlt")
      .def(py::init([](py::capsule model) { return new CrbaLdlt(treedyn::model_from_capsule(model.ptr())); }),
           py::arg("model_capsule"))
      .def(
          "forward_dynamics",
          [](CrbaLdlt& self, const Array& q, const Array& qd, const Array& tau, std::optional<Array> fext, Array qdd) {
            const Model<double>& model = self.model();
            const py::ssize_t B = q.ndim() == 2 ? q.shape(0) : -1;
            expect_shape(q, {B, model.nq}, "q");
            expect_shape(qd, {B, model.nv}, "v");
            expect_shape(tau, {B, model.nv}, "tau");
            expect_shape(qdd, {B, model.nv}, "out");
            if (fext) expect_shape(*fext, {B, model.N + 1, 6}, "f_ext");
            if (!qdd.writeable()) throw py::value_error("out must be writeable");
            const double* f = fext ? fext->data() : nullptr;
            double* out = qdd.mutable_data();
            py::gil_scoped_release release;
            self.forward_dynamics(int(B), q.data(), qd.data(), tau.data(), f, out);
          },
          py::arg("q"), py::arg("v"), py::arg("tau"), py::arg("f_ext"), py::arg("out").noconvert(),
          "q̈ into out for B problems: q (B, nq), v and tau (B, nv), f_ext (B, n_bodies, 6) or None, out (B, nv)")
      .def(
          "inverse_inertia",
          [](CrbaLdlt& self, const Array& q, const Array& R) {
            const Model<double>& model = self.model();
            expect_shape(q, {model.nq}, "q");
            if (R.ndim() != 2 || R.shape(0) != model.nv) throw py::value_error("R must have shape (nv, m)");
            Array Y({R.shape(0), R.shape(1)});
            const int m = int(R.shape(1));
            double* y = Y.mutable_data();
            {
              py::gil_scoped_release release;
              self.inverse_inertia(q.data(), R.data(), m, y);
            }
            return Y;
          },
          py::arg("q"), py::arg("R"), "M(q)⁻¹ R for R (nv, m)");
}
