#include "treedyn/engine_impl.hpp"

namespace treedyn {
TREEDYN_INSTANTIATE(float)
}  // namespace treedyn
