// The float32 engines' bindings: solvers.cpp compiled for the other scalar, in a unit of its own.
#define TREEDYN_BIND_FLOAT32 1
#include "solvers.cpp"
