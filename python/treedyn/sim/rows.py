"""The general rows of the C++ contact step (contact/step.hpp's bilateral rows, with bounds on
their impulses): each step, Python hands the step the rows only it has —

* the model's bilateral constraints (loop closures, couplings: treedyn.constraints), J v⁺ = −C/τ
  (Baumgarte with the simulator's stabilization τ), impulses unbounded; with soft constraints, those
  with a softness (Model.set_constraint_softness, MJCF's equalities) are MuJoCo's soft equalities,
  their targets and regularisers the C++ step's (soft.equality_rows);
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
from .constraints import constraint_terms
from .soft import equality_rows

__all__ = ["has_rows", "step_rows", "limit_targets"]


def limit_targets(d, rate, h: float, stabilization: float, slop: float) -> np.ndarray:
    """The targets of unilateral bounds with gaps d (> 0 inside) and gap velocities ``rate``: −d/h
    inside; outside, the gap returns as a critically damped spring–damper of time constant
    τ = max(stabilization, h) stepped implicitly, (max(ḋ, 0) + h (−d − slop)/τ²)/(1 + h/τ)²
    (contact/step.hpp's limit_return)."""
    tau = max(stabilization, h)
    # τ·τ, not τ**2: a Python float's ** raises OverflowError at τ = 1e308 where the product is inf (no spring)
    back = (np.maximum(rate, 0.0) + h * np.maximum(-d - slop, 0.0) / (tau * tau)) / (1.0 + h / tau) ** 2
    return np.where(d >= 0, -d / h, back)


def has_rows(model) -> bool:
    """Whether a step of the model has general rows."""
    T = actuation_terms(model)
    return bool(model.n_constraint_rows or np.any(model.joint_frictionloss) or T.friction.size or T.limited.size)


def step_rows(sim, q, v, h: float):
    """(rows (nb, nv), targets (nb,), bounds (nb, 2), the soft equalities' table or None) of a step from
    (q, v) of length h; with soft constraints the soft equalities' rows come first (soft.equality_rows:
    their targets are the C++ step's)."""
    model = sim.model
    T = actuation_terms(model)
    rows, targets, lo, hi, table = [], [], [], [], None
    if model.n_constraint_rows:
        G, C, bias = (np.asarray(x) for x in constraint_terms(model, q, v))
        order, table = equality_rows(model, C, bias) if sim.soft else (None, None)
        if order is not None:
            G, C = G[order], C[order]
        rows.append(G), targets.append(-C / max(sim.stabilization, h))
        lo.append(np.full(len(C), -np.inf)), hi.append(np.full(len(C), np.inf))
    f = model.joint_frictionloss
    dofs = np.flatnonzero(f)
    if dofs.size:
        E = np.zeros((dofs.size, model.nv))
        E[np.arange(dofs.size), dofs] = 1.0
        rows.append(E), targets.append(np.zeros(dofs.size)), lo.append(-h * f[dofs]), hi.append(h * f[dofs])
    if T.friction.size:
        rows.append(T.tendon_v[T.friction]), targets.append(np.zeros(T.friction.size))
        lo.append(-h * T.frictionloss[T.friction]), hi.append(h * T.frictionloss[T.friction])
    if T.limited.size:
        J = T.tendon_v[T.limited]
        rate = J @ v
        x = T.tendon_q[T.limited] @ q + (h * rate if sim.integrator == "euler" else 0.0)  # L at q̂
        for s, bound in ((1.0, T.range_lo), (-1.0, T.range_hi)):
            d = s * (x - bound)
            near = d <= 4 * h * np.abs(rate) + sim.slop + 0.01 * (T.range_hi - T.range_lo)
            if near.any():
                dn = d[near]
                (
                    rows.append(s * J[near]),
                    targets.append(limit_targets(dn, s * rate[near], h, sim.stabilization, sim.slop)),
                )
                lo.append(np.zeros(dn.size)), hi.append(np.full(dn.size, np.inf))
    if not rows:
        return None
    return (
        np.ascontiguousarray(np.vstack(rows)),
        np.concatenate(targets),
        np.ascontiguousarray(np.column_stack([np.concatenate(lo), np.concatenate(hi)])),
        table,
    )
