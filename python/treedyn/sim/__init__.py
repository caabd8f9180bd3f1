"""The simulation layer: time stepping over the solvers — ``simulate`` (ODE integrators), contact
(collision, the contact step), loop-closure and coupling constraints, and the derivatives of a
step. Imports only the solvers layer and below."""
