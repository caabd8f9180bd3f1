// The engine of redmax-direct (float64 only), and its solver whole: bindings/redmax.cpp calls the
// solver's step and inverse inertia, declared extern there. redmax-pcg's: instantiate_redmax_pcg.cpp.
#include "treedyn/engine_impl.hpp"
#include "treedyn/redmax/direct.hpp"

namespace treedyn {
using redmax::RedMaxDirectKernel;
template class redmax::Direct<double>;
// the steps' terms, which bindings/redmax.cpp also calls
template void redmax::implicit_terms<double>(const redmax::System<double>&, redmax::Workspace<double>&, const double*,
                                             const double*, double, double);
template void redmax::constraint_rows<double>(const redmax::System<double>&, redmax::ConstraintWorkspace<double>&,
                                              bool);
template class KernelEngine<RedMaxDirectKernel<double>, double>;
template KernelEngine<RedMaxDirectKernel<double>, double>::KernelEngine(const Model<double>&,
                                                                        const redmax::System<double>&, const bool&);
}  // namespace treedyn
