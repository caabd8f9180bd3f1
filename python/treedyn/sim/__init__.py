"""The simulation layer: time stepping over the solvers. One step core (``step``: check the state,
dynamics, one switch on the named integrator, check the result; the loop of the fixed-step
drivers) and one result family (``result``: SimulationResult and its ContactTrajectory and
SolverStepTrajectory), shared by ``simulate`` (the ODE integrators), ``contact`` (collision, the
contact step), loop-closure and coupling ``constraints``, the derivatives of a step and the
``treedyn simulate`` command. Imports only the solvers layer and below."""
