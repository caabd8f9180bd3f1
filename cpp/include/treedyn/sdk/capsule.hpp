// For plugins: the model treedyn hands over (treedyn.sdk.model_capsule), checked against the ABI this
// plugin was compiled for. Python's C API only (no pybind11): any binding library can call it.
#pragma once
#include <Python.h>

#include <stdexcept>
#include <string>

#include "treedyn/model/model.hpp"
#include "treedyn/sdk/abi.hpp"

namespace treedyn {

// Thrown when the capsule comes from a treedyn of another ABI (a std::runtime_error: pybind11 raises
// it as a Python RuntimeError carrying the message).
struct AbiMismatch : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The model inside `capsule`, valid for as long as the capsule lives (it holds a reference to the
// treedyn model). Call with the GIL held. Throws AbiMismatch, naming both ABIs, when the capsule was
// made by a treedyn with another TREEDYN_ABI_VERSION or standard library, and std::invalid_argument
// when `capsule` is not a treedyn model capsule at all.
inline const Model<double>& model_from_capsule(PyObject* capsule) {
  if (!PyCapsule_CheckExact(capsule))
    throw std::invalid_argument("expected the capsule of treedyn.sdk.model_capsule(model), got a " +
                                std::string(Py_TYPE(capsule)->tp_name));
  const char* name = PyCapsule_GetName(capsule);
  const std::string got = name ? name : "(unnamed)";
  if (got != TREEDYN_MODEL_CAPSULE_NAME) {
    if (got.rfind("treedyn.Model<double>;", 0) != 0)
      throw std::invalid_argument("expected the capsule of treedyn.sdk.model_capsule(model), got a capsule named '" +
                                  got + "'");
    throw AbiMismatch("this plugin was built against treedyn's C++ ABI '" TREEDYN_MODEL_CAPSULE_NAME
                      "' but the installed treedyn provides '" +
                      got + "': rebuild the plugin against the installed treedyn (docs/plugins.md)");
  }
  auto* model = static_cast<const Model<double>*>(PyCapsule_GetPointer(capsule, TREEDYN_MODEL_CAPSULE_NAME));
  if (!model) {
    PyErr_Clear();
    throw std::invalid_argument("the treedyn model capsule holds no model");
  }
  return *model;
}

}  // namespace treedyn
