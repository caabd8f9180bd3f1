// The compact spatial operations, exposed for tests that compare them with 6x6 matrix algebra.
#include <pybind11/eigen.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <map>
#include <string>

#include "treedyn/spatial/transform.hpp"

namespace py = pybind11;
using namespace treedyn;
using Vec6d = Eigen::Matrix<double, 6, 1>;
using Mat6d = Eigen::Matrix<double, 6, 6>;

void bind_spatial(py::module_& m) {
  m.def(
      "_spatial_check",
      [](const Eigen::Matrix3d& E1, const Eigen::Vector3d& r1, const Eigen::Matrix3d& E2, const Eigen::Vector3d& r2,
         const Vec6d& v, const Vec6d& f, double mass, const Eigen::Vector3d& h, const Eigen::Matrix3d& Ibar,
         const Mat6d& IA) {
        const Transform<double> X1{E1, r1}, X2{E2, r2};
        const Motion<double> mv = Motion<double>::from(v);
        const Force<double> ff = Force<double>::from(f);
        const RigidInertia<double> I{mass, h, Sym3<double>::from(Ibar)};
        std::map<std::string, Eigen::MatrixXd> out;
        out["Xv"] = X1.apply(mv).vec();
        out["X^-1v"] = X1.inv_apply(mv).vec();
        out["X*f"] = X1.apply(ff).vec();
        out["X^Tf"] = X1.inv_apply(ff).vec();
        out["X1X2"] = (X1 * X2).matrix();
        out["Iv"] = (I * mv).vec();
        out["X^TIX"] = X1.inv_apply(I).matrix();
        out["X*IX^-1"] = X1.apply(I).matrix();
        out["X^TIAX"] = X1.inv_apply(ArticulatedInertia<double>::from_matrix(IA)).matrix();
        out["v x m"] = mv.cross(Motion<double>::from(f)).vec();
        out["v x* f"] = cross_force(mv, ff).vec();
        return out;
      },
      "Compact spatial operations on the given values (for tests).");
}
