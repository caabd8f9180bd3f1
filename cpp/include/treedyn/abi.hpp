// The former path of treedyn/sdk/abi.hpp (TREEDYN_ABI_VERSION, TREEDYN_MODEL_CAPSULE_NAME), kept so that
// plugins written against it still compile: header paths are stable within an ABI version
// (docs/plugins.md, "ABI versioning"). It goes with the next TREEDYN_ABI_VERSION.
#pragma once
#include "treedyn/sdk/abi.hpp"
