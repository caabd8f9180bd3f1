// The engine of redmax-direct (float64 only), and its solver whole: bindings/redmax.cpp calls the
// solver's step and inverse inertia, declared extern there. redmax-pcg's: instantiate_redmax_pcg.cpp.
#include "treedyn/engine/engine_impl.hpp"
#include "treedyn/engine/kernels/redmax_direct.hpp"

namespace treedyn {
using redmax::RedMaxDirectKernel;
template class redmax::Direct<double>;
// the pieces of the step both solvers share, declared extern in redmax/step.hpp for the other units
// that include it (instantiate_redmax_pcg.cpp, bindings/redmax.cpp)
namespace redmax {
template void implicit_terms<double>(const System<double>&, Workspace<double>&, const double*, const double*, double,
                                     double);
template void explicit_terms<double>(const System<double>&, Workspace<double>&, const double*, const double*,
                                     const double*, double, double*);
template void constraint_rows<double>(const System<double>&, ConstraintWorkspace<double>&, bool);
template double position_residual<double>(const System<double>&, ConstraintWorkspace<double>&, const double*,
                                          const double*);
template Eigen::VectorXd dual_multipliers<double>(const System<double>&, Workspace<double>&, double,
                                                  StepStats<double>&);
template double velocity_residual<double>(const System<double>&, Workspace<double>&, double);
}  // namespace redmax
template class KernelEngine<RedMaxDirectKernel<double>, double>;
template KernelEngine<RedMaxDirectKernel<double>, double>::KernelEngine(const Model<double>&,
                                                                        const redmax::System<double>&, const bool&);
}  // namespace treedyn
