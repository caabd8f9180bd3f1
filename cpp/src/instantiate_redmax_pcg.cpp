// The engine of redmax-pcg (float64 only), and its solver whole (see instantiate_redmax.cpp).
#include "treedyn/engine/engine_impl.hpp"
#include "treedyn/engine/kernels/redmax_pcg.hpp"

namespace treedyn {
using redmax::RedMaxPcgKernel;
template class redmax::Pcg<double>;
template class KernelEngine<RedMaxPcgKernel<double>, double>;
template KernelEngine<RedMaxPcgKernel<double>, double>::KernelEngine(const Model<double>&,
                                                                     const redmax::System<double>&, const double&,
                                                                     const int&);
}  // namespace treedyn
