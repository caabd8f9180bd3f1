// The engines of the RedMax solvers (float64 only), apart from the others to spread the build.
#include "treedyn/engine_impl.hpp"
#include "treedyn/redmax/direct.hpp"
#include "treedyn/redmax/pcg.hpp"

namespace treedyn {
using redmax::RedMaxDirectKernel;
using redmax::RedMaxPcgKernel;
template class KernelEngine<RedMaxDirectKernel<double>, double>;
template class KernelEngine<RedMaxPcgKernel<double>, double>;
template KernelEngine<RedMaxDirectKernel<double>, double>::KernelEngine(const Model<double>&,
                                                                        const redmax::System<double>&, const bool&);
template KernelEngine<RedMaxPcgKernel<double>, double>::KernelEngine(const Model<double>&,
                                                                     const redmax::System<double>&, const double&,
                                                                     const int&);
}  // namespace treedyn
