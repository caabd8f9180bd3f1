"""The algorithms layer: functions of one model and one state, thin over ``treedyn._core`` —
dynamics (RNEA, CRBA, bias forces), kinematics (frames, Jacobians, energies), configurations
(integrate, difference, neutral, random), the derivatives of the dynamics, the structured linear
solvers, and the ``State`` a stepper advances. Imports only the model layer and below."""
