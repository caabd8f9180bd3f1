"""The general rows of the C++ contact step (contact/rows.hpp makes them each step, in C++: step.hpp's
bilateral rows, with bounds on their impulses; set_rows hands it the model's terms, engine.py) —

* the model's bilateral constraints (loop closures, couplings: treedyn.constraints), J v⁺ = −C/τ
  (Baumgarte with the simulator's stabilization τ), impulses unbounded; with soft constraints, those
  with a softness (Model.set_constraint_softness, MJCF's equalities) are MuJoCo's soft equalities,
  their targets and regularisers the C++ step's (soft.equality_weights gives their Â);
* dry friction on a joint coordinate or a fixed tendon (MuJoCo's ``frictionloss`` f): the row e_i
  (or the tendon's J), J v⁺ = 0 with the impulse bounded, |λ| ≤ h f — the largest impulse the
  friction force can give in the step, so that a joint sticks while its load stays below f and
  slides against f otherwise (maximum dissipation, as a contact's friction);
* a fixed tendon's limits: s J v⁺ ≥ b with λ ≥ 0, the joint limits' targets (docs/contact.md, "Joint
  limits and the model's constraints": −d/h inside, a critically damped return when violated),
  for the bounds within reach (d ≤ 4h |J v| + slop + 1 % of the range).
"""

from __future__ import annotations

import numpy as np

from ..model.actuation import actuation_terms

__all__ = ["has_rows", "limit_targets"]


def limit_targets(d, rate, h: float, stabilization: float, slop: float) -> np.ndarray:
    """The targets of unilateral bounds with gaps d (> 0 inside) and gap velocities ``rate``: −d/h
    inside; outside, the gap returns as a critically damped spring–damper of time constant
    τ = max(stabilization, h) stepped implicitly, (max(ḋ, 0) + h (−d − slop)/τ²)/(1 + h/τ)²
    (contact/rows.hpp's limit_target; the Python solvers' limits: contact.py)."""
    tau = max(stabilization, h)
    # τ·τ, not τ**2: a Python float's ** raises OverflowError at τ = 1e308 where the product is inf (no spring)
    back = (np.maximum(rate, 0.0) + h * np.maximum(-d - slop, 0.0) / (tau * tau)) / (1.0 + h / tau) ** 2
    return np.where(d >= 0, -d / h, back)


def has_rows(model) -> bool:
    """Whether a step of the model has general rows."""
    T = actuation_terms(model)
    return bool(model.n_constraint_rows or np.any(model.joint_frictionloss) or T.friction.size or T.limited.size)
