// The frozen C++ model, filled by the Python builder (treedyn.Model) one body at a time.
#include <pybind11/eigen.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "treedyn/model/configuration.hpp"
#include "treedyn/model/model.hpp"
#include "treedyn/sdk/abi.hpp"

namespace py = pybind11;
using namespace treedyn;

void bind_model(py::module_& m) {
  // the C++ SDK's handoff to plugins (treedyn.sdk, docs/plugins.md): a capsule named after the ABI,
  // holding the model and, as its context, a reference to the Python object that owns it
  m.attr("ABI_VERSION") = TREEDYN_ABI_VERSION;
  m.attr("MODEL_CAPSULE_NAME") = TREEDYN_MODEL_CAPSULE_NAME;
  m.def(
      "model_capsule",
      [](py::object core) {
        const Model<double>& model = core.cast<const Model<double>&>();
        PyObject* capsule =
            PyCapsule_New(const_cast<Model<double>*>(&model), TREEDYN_MODEL_CAPSULE_NAME,
                          [](PyObject* c) { Py_XDECREF(static_cast<PyObject*>(PyCapsule_GetContext(c))); });
        if (!capsule) throw py::error_already_set();
        if (PyCapsule_SetContext(capsule, core.inc_ref().ptr()) != 0) {
          core.dec_ref();
          Py_DECREF(capsule);
          throw py::error_already_set();
        }
        return py::reinterpret_steal<py::object>(capsule);
      },
      py::arg("model"), "a PyCapsule named MODEL_CAPSULE_NAME holding `const treedyn::Model<double>*` (treedyn.sdk)");
  // the layouts, from model/model.hpp: the Python joint and loop-closure classes read them
  m.def(
      "joint_layouts",
      [] {
        py::dict out;
        for (int k = 0; k < n_joint_kinds; ++k) {
          const JointLayout& l = joint_layout(static_cast<JointKind>(k));
          out[l.name] = py::dict(py::arg("kind") = k, py::arg("nq") = l.nq, py::arg("nv") = l.nv,
                                 py::arg("quaternion") = l.quaternion);
        }
        return out;
      },
      "{joint kind name: {kind, nq, nv, quaternion (where a unit quaternion starts in the joint's q; -1: none)}}");
  m.def(
      "loop_layouts",
      [] {
        py::dict out;
        for (int k = 0; k < n_loop_kinds; ++k)
          out[loop_kind_name(static_cast<LoopKind>(k))] =
              py::dict(py::arg("kind") = k, py::arg("rows") = loop_rows(static_cast<LoopKind>(k)));
        return out;
      },
      "{loop-closure kind name: {kind, rows (constraint rows it adds)}}");
  m.def(
      "neutral",
      [](const Model<double>& model) {
        py::array_t<double> q(model.nq);
        neutral_configuration(model, q.mutable_data());
        return q;
      },
      "the neutral configuration: every joint at zero, every quaternion the identity (x, y, z, w) = (0, 0, 0, 1)");

  py::class_<Model<double>>(m, "Model", "Structure-of-arrays model (bodies 1..N, 0 = world); built by treedyn.Model")
      .def(py::init<>())
      .def(
          "add_body",
          [](Model<double>& self, const std::string& name, int parent, int kind, const Eigen::Matrix3d& E,
             const Eigen::Vector3d& r, const Eigen::Vector3d& axis, const Eigen::Vector3d& axis2, double mass,
             const Eigen::Vector3d& com, const Eigen::Matrix3d& Ic) {
            if (kind < 0 || kind > 5) throw py::value_error("unknown joint kind " + std::to_string(kind));
            return self.add_body(name, parent, static_cast<JointKind>(kind), Transform<double>{E, r}, axis, axis2,
                                 RigidInertia<double>::from_mci(mass, com, Ic));
          },
          py::arg("name"), py::arg("parent"), py::arg("kind"), py::arg("E"), py::arg("r"), py::arg("axis"),
          py::arg("axis2"), py::arg("mass"), py::arg("com"), py::arg("inertia"))
      .def(
          "add_body_parameters",
          [](Model<double>& self, const std::string& name, int parent, int kind, const Eigen::Matrix3d& E,
             const Eigen::Vector3d& r, const Eigen::Vector3d& axis, const Eigen::Vector3d& axis2, double m,
             const Eigen::Vector3d& h, const Eigen::Matrix3d& I_O) {
            if (kind < 0 || kind > 5) throw py::value_error("unknown joint kind " + std::to_string(kind));
            // rbi(m, h, Ī) as given, no conversion: a body of a simplified model (treedyn.simplify) may have
            // m = 0 with h ≠ 0, which has no centre of mass
            return self.add_body(name, parent, static_cast<JointKind>(kind), Transform<double>{E, r}, axis, axis2,
                                 RigidInertia<double>{m, h, Sym3<double>::from(I_O)});
          },
          py::arg("name"), py::arg("parent"), py::arg("kind"), py::arg("E"), py::arg("r"), py::arg("axis"),
          py::arg("axis2"), py::arg("m"), py::arg("h"), py::arg("I_O"),
          "add_body with the inertia as featherstone-part3's parameters (mass m, first moment h = m c, rotational "
          "inertia Ī about the body frame's origin), kept exactly")
      .def_readwrite("revision", &Model<double>::revision,
                     "the Python model's revision (set by treedyn.Model on every change)")
      .def_readonly("N", &Model<double>::N)
      .def_readonly("nq", &Model<double>::nq)
      .def_readonly("nv", &Model<double>::nv)
      .def_property(
          "gravity", [](const Model<double>& s) { return Eigen::Vector3d(s.gravity); },
          [](Model<double>& s, const Eigen::Vector3d& g) { s.gravity = g; })
      .def_readonly("parent", &Model<double>::parent)
      .def_property_readonly("last",
                             [](const Model<double>& s) {
                               std::vector<int> out(s.N + 1);
                               for (int i = 0; i <= s.N; ++i) out[i] = s.last(i);
                               return out;
                             })
      .def_readonly("q_index", &Model<double>::q_index)
      .def_readonly("v_index", &Model<double>::v_index)
      .def_readonly("nq_i", &Model<double>::nq_i)
      .def_readonly("nv_i", &Model<double>::nv_i)
      .def_readonly("name", &Model<double>::name)
      .def(
          "set_passive",
          [](Model<double>& self, std::vector<double> armature, std::vector<double> stiffness,
             std::vector<double> damping, std::vector<double> q_rest) {
            try {
              self.set_passive(std::move(armature), std::move(stiffness), std::move(damping), std::move(q_rest));
            } catch (const std::invalid_argument& e) {
              throw py::value_error(e.what());
            }
          },
          py::arg("armature"), py::arg("stiffness"), py::arg("damping"), py::arg("q_rest"),
          "The passive joint terms: armature, stiffness, damping (nv each, finite, >= 0) and the springs' rest "
          "configuration q_rest (nq); every solver's M has the armature, every forward dynamics the force "
          "-stiffness (q - q_rest) - damping v (algorithms/passive.hpp)")
      .def_readonly("armature", &Model<double>::armature)
      .def_readonly("stiffness", &Model<double>::stiffness)
      .def_readonly("damping", &Model<double>::damping)
      .def_readonly("q_rest", &Model<double>::q_rest)
      .def_property_readonly("kind",
                             [](const Model<double>& s) {
                               std::vector<int> k;
                               for (auto x : s.kind) k.push_back(static_cast<int>(x));
                               return k;
                             })
      .def(
          "spatial_inertia",
          [](const Model<double>& s, int i) { return Eigen::Matrix<double, 6, 6>(s.I.at(i).matrix()); },
          "6x6 spatial inertia of body i about its frame origin ([ω; v] order)")
      .def(
          "placement",
          [](const Model<double>& s, int i) {
            return py::make_tuple(Eigen::Matrix3d(s.X_tree.at(i).E), Eigen::Vector3d(s.X_tree.at(i).r));
          },
          "(E, r) of the joint placement of body i");
}
