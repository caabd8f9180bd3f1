// The generator of featherstone-part3's symbolic simplification (src/codegen_aba.cpp): the C++
// source of ABA specialised to a model, and its operation counts. treedyn/codegen.py compiles it.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "treedyn/codegen/generated.hpp"

namespace py = pybind11;
using namespace treedyn;

void bind_codegen(py::module_& m) {
  m.def(
      "_generate_aba_source",
      [](const Model<double>& model, bool single) {
        GeneratedInfo info;
        std::string source;
        {
          py::gil_scoped_release release;
          source = generate_aba_source(model, single, info);
        }
        py::dict counts;
        counts["multiplications"] = info.multiplications;
        counts["additions"] = info.additions;
        counts["divisions"] = info.divisions;
        counts["square_roots"] = info.square_roots;
        counts["sines_cosines"] = info.sines_cosines;
        counts["guards"] = info.guards;
        counts["traced_nodes"] = info.traced_nodes;
        return py::make_tuple(source, counts);
      },
      py::arg("model"), py::arg("single") = false,
      "(C++ source, operation counts) of ABA forward dynamics specialised to the model (float32 when single).");
  m.def(
      "_generic_aba_op_counts",
      [](const Model<double>& model) {
        const GeneratedInfo c = generic_aba_op_counts(model);
        py::dict counts;
        counts["multiplications"] = c.multiplications;
        counts["additions"] = c.additions;
        counts["divisions"] = c.divisions;
        return counts;
      },
      py::arg("model"), "Operation counts of the generic ABA kernel on the model (the counting scalar).");
}
