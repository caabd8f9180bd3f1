#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/warnings.h>

#include <Eigen/Core>
#include <map>
#include <string>

#include "treedyn/engine/engine.hpp"

namespace py = pybind11;
namespace treedyn {
std::map<std::string, std::pair<long, long>> spatial_op_counts();
const char* minv_isa();
}  // namespace treedyn
void bind_model(py::module_& m);
void bind_algorithms(py::module_& m);
void bind_kinematics(py::module_& m);
void bind_solvers64(py::module_& m);
void bind_solvers32(py::module_& m);
void bind_spatial(py::module_& m);
void bind_minv(py::module_& m);
void bind_linalg(py::module_& m);
void bind_contact(py::module_& m);
void bind_collision(py::module_& m);
void bind_redmax(py::module_& m);
void bind_codegen(py::module_& m);
void bind_derivatives(py::module_& m);

static py::dict build_info() {
  py::dict d;
  d["openmp"] = treedyn::has_openmp();
#ifdef _OPENMP
  d["openmp_version"] = _OPENMP;
#else
  d["openmp_version"] = py::none();
#endif
  d["max_threads"] = treedyn::max_threads();
  d["simd"] = std::string(Eigen::SimdInstructionSetsInUse());
#ifdef TREEDYN_MARCH_NATIVE
  d["march_native"] = true;
#else
  d["march_native"] = false;
#endif
  d["eigen_version"] = std::to_string(EIGEN_WORLD_VERSION) + "." + std::to_string(EIGEN_MAJOR_VERSION) + "." +
                       std::to_string(EIGEN_MINOR_VERSION);
  d["eigen_dir"] = std::string(TREEDYN_EIGEN_DIR);
  d["scalar_types"] = py::make_tuple("float64", "float32");
  d["minv_kernels"] = std::string(treedyn::minv_isa());  // drumwright's M⁻¹ column loops
#if defined(__clang__)
  d["compiler"] = std::string("clang ") + __clang_version__;
#elif defined(__GNUC__)
  d["compiler"] = std::string("gcc ") + __VERSION__;
#else
  d["compiler"] = std::string("unknown");
#endif
  return d;
}

PYBIND11_MODULE(_core, m) {
  m.doc() = "treedyn's C++ kernels (spatial algebra, RNEA, CRBA, ABA)";
  py::register_exception<treedyn::SingularJoint>(m, "SingularInertiaError", PyExc_ValueError);
  py::warnings::new_warning_type(m, "AccuracyWarning", PyExc_RuntimeWarning);
  m.def("build_info", &build_info, "What this build has: OpenMP, SIMD, Eigen version, scalar types.");
  m.def("get_num_threads", &treedyn::max_threads, "Threads the kernels use for batches and columns.");
  m.def(
      "set_num_threads",
      [](int n) {
        if (n < 1) throw py::value_error("the number of threads must be >= 1, got " + std::to_string(n));
        treedyn::set_threads(n);
      },
      py::arg("n"), "Set the number of threads (ignored by a build without OpenMP).");
  m.def("_spatial_op_counts", &treedyn::spatial_op_counts,
        "{operation: (multiplications, additions)} of the compact spatial arithmetic.");
  bind_model(m);
  bind_algorithms(m);
  bind_kinematics(m);
  bind_solvers64(m);
  bind_solvers32(m);
  bind_spatial(m);
  bind_minv(m);
  bind_linalg(m);
  bind_contact(m);
  bind_collision(m);
  bind_redmax(m);
  bind_codegen(m);
  bind_derivatives(m);
}
