"""Bilateral constraints for every solver: the model's loop closures and couplings C(q) = 0 kept
at the acceleration level.

The rows, their Jacobian G = ∂C/∂q (in velocity coordinates) and the bias Ġq̇ are the same ones
the RedMax step keeps at the velocity level (cpp/include/treedyn/redmax/constraints.hpp): one
definition, two formulations. Here, with any solver's forward dynamics and ``inverse_inertia``:

    M q̈ + c = τ + Gᵀλ,   G q̈ = γ = −Ġq̇ − 2α G q̇ − α² C      (Baumgarte, time constant 1/α)
    q̈₀ = M⁻¹(τ − c)                                          (the solver's forward dynamics)
    Y = M⁻¹Gᵀ,  A = G Y                                        (the Delassus matrix; Θ(nm) with drumwright)
    A λ = γ − G q̈₀,   q̈ = q̈₀ + Y λ

A is positive semi-definite; rows that are identically zero or dependent on others (a planar
mechanism closed by a spatial joint, a weld doubling a chain) give zero eigenvalues, which are
dropped: λ is the minimum-norm solution and Gᵀλ, all that the motion needs, is unique. The
eigenvalues are compared after a Jacobi scaling (A_ii = 1), so that point rows (metres) and
angular rows (no unit) are judged alike.

Position projection (after a step): Gauss–Newton on C(q) = 0 with the minimum-norm correction
δ = −Gᵀ(GGᵀ)⁺C, q ← q ⊕ δ, halved while it does not reduce max |C| (the M-weighted correction
−Y A⁺ C, an impulse's, moves the light distal links by radians on a long chain and diverges far
from the manifold), stopped as soon as it stalls (model/constraint_projection.py); velocities
by v ← v − Y A⁺ G v, the nearest velocity in the kinetic-energy metric (what a constraint impulse
gives). Constraints that cannot hold together are refused when they are added
(model/constraint_checks.py).
"""

from __future__ import annotations

import numpy as np

from .. import _checks
from ..model.constraint_checks import RedundantConstraintWarning
from ..model.constraint_projection import gauss_newton
from ..model.constraint_projection import min_norm_solve as _delassus_solve
from ..solvers.base import Solver

__all__ = [
    "constraint_terms",
    "constrained_forward_dynamics",
    "constrained_inverse_inertia",
    "project_positions",
    "project_velocities",
    "RedundantConstraintWarning",
]


def constraint_terms(model, q, v):
    """(G (m, nv), C (m,), Ġq̇ (m,)) of the model's active constraints at (q, v): loop closures in
    the order added (their rows: LoopClosure.n_rows), then couplings (one row each)."""
    return model._constraint_system().constraint_terms(q, v)


def _gain(stabilization):
    """α = 1/stabilization (0 for None): the time constant in seconds, a positive finite number."""
    if stabilization is None:
        return 0.0
    alpha = 1.0 / _checks.real(stabilization, "stabilization (a time constant in seconds, or None)", positive=True)
    if not np.isfinite(alpha * alpha):  # α² C in γ: a time constant of 1e-160 s overflows it (a Python ** raised)
        raise ValueError(
            f"stabilization must be at least 1e-150 s (its gain 1/stabilization² overflows), got {stabilization}"
        )
    return alpha


def constrained_forward_dynamics(
    solver: Solver, q, v, tau, f_ext=None, stabilization: float | None = 0.1, return_multipliers: bool = False
):
    """q̈ of the model's tree under its active loop closures and couplings (see the module).

    solver: any solver with ``inverse_inertia`` (drumwright's Θ(nm) M⁻¹Gᵀ by default elsewhere);
    its ``forward_dynamics`` gives the unconstrained q̈₀. stabilization: Baumgarte's time constant
    1/α (s; critically damped, as MuJoCo's solref time constant); None: none, G q̈ = −Ġq̇ only.
    The default, 0.1 s, keeps the error's mode (rate α) inside an explicit Runge–Kutta method's
    stability region (h·α ≲ 1) at the steps an adaptive integrator takes on robots; a stiffer
    time constant forces the step down (0.02 s made Dormand–Prince's steps of 0.06 s amplify
    rounding in a linear coupling from 1e-16 to 2e-9).
    Returns q̈ (nv,), or (q̈, λ) with return_multipliers (Gᵀλ: the constraint's generalized force,
    λ in constraint_terms' row order). Without constraints it is the solver's forward dynamics."""
    if not isinstance(solver, Solver):
        raise TypeError(f"solver must be a treedyn.Solver, got {type(solver).__name__}")
    alpha = _gain(stabilization)
    model = solver.model
    qdd0 = np.asarray(solver.forward_dynamics(q, v, tau, f_ext), dtype=float)
    if qdd0.ndim != 1:
        raise ValueError("constrained_forward_dynamics takes one state, not a batch: q (nq,), v (nv,), tau (nv,)")
    if not model.n_constraint_rows:
        return (qdd0, np.zeros(0)) if return_multipliers else qdd0
    G, C, Gdqd = constraint_terms(model, q, v)
    Y = np.asarray(solver.inverse_inertia(q, np.ascontiguousarray(G.T)), dtype=float).reshape(model.nv, -1)
    gamma = -Gdqd - 2.0 * alpha * (G @ v) - alpha * alpha * C
    lam = _delassus_solve(Y, G, gamma - G @ qdd0)
    qdd = _checks.finite_result(qdd0 + Y @ lam, "constrained_forward_dynamics")  # (an overflow: named, never NaN)
    return (qdd, lam) if return_multipliers else qdd


def constrained_inverse_inertia(solver: Solver, q, R) -> np.ndarray:
    """M_c⁻¹ R = (M⁻¹ − Y A⁺ Yᵀ) R, the response to impulses R (nv, m) of the tree under its
    constraints: the velocity change M⁻¹R minus the part the constraint impulses take back
    (G M_c⁻¹ = 0). The contact simulator's contact-space inertia is Rᵀ M_c⁻¹ R."""
    model = solver.model
    R = np.asarray(R, dtype=float)
    W = np.asarray(solver.inverse_inertia(q, R), dtype=float).reshape(R.shape)
    if not model.n_constraint_rows:
        return W
    G, _, _ = constraint_terms(model, q, np.zeros(model.nv))
    Y = np.asarray(solver.inverse_inertia(q, np.ascontiguousarray(G.T)), dtype=float).reshape(model.nv, -1)
    lam = _delassus_solve(Y, G, G @ W.reshape(model.nv, -1))
    return (W.reshape(model.nv, -1) - Y @ lam).reshape(R.shape)


def project_velocities(solver: Solver, q, v) -> np.ndarray:
    """v − Y A⁺ G v: the velocity nearest to v in the kinetic-energy metric with G v = 0."""
    model = solver.model
    v = np.asarray(v, dtype=float)
    if not model.n_constraint_rows:
        return v.copy()
    G, _, _ = constraint_terms(model, q, np.zeros(model.nv))
    Y = np.asarray(solver.inverse_inertia(q, np.ascontiguousarray(G.T)), dtype=float).reshape(model.nv, -1)
    lam = _delassus_solve(Y, G, G @ v)
    return v - Y @ lam


def project_positions(solver: Solver, q, tol: float = 1e-10, max_iterations: int = 20) -> np.ndarray:
    """q moved onto C(q) = 0 by Gauss–Newton with minimum-norm steps (see the module), halved
    while they do not reduce max |C|, until max |C| ≤ tol; returns the new q (q is not modified).
    The steps need only G (the solver gives the model; it is taken for symmetry with
    project_velocities, which needs M⁻¹). tol: ≥ 0, in the rows' units (m, rad); max_iterations:
    ≥ 1. Raises ValueError naming the residual when it does not get there: after max_iterations
    steps (a configuration too far from the constraint manifold), or as soon as it stalls — no
    step reduces max |C|, or 5 steps in a row gain less than 1% each (model/constraint_projection.py):
    the constraints conflict, q sits at a singular configuration, or tol is below the rounding of
    C — so that a large max_iterations never runs on where nothing more can be gained."""
    solver = _checks.instance(solver, Solver, "solver")
    tol = _checks.real(tol, "tol", nonnegative=True)
    max_iterations = _checks.integer(max_iterations, "max_iterations", minimum=1)
    model = solver.model
    q = _checks.vector(q, "q", model.nq)
    if not model.n_constraint_rows:
        return q
    zero = np.zeros(model.nv)
    system = model._constraint_system()

    def terms(x):
        G, C, _ = system.constraint_terms(x, zero)
        return G, C

    out = gauss_newton(model.core, terms, q, tol, max_iterations)
    if out.residual <= tol:
        return out.q
    if out.stalled:
        raise ValueError(
            f"project_positions stalled after {out.steps} Gauss-Newton steps at max |C(q)| = {out.residual:.3g} > "
            f"tol = {tol:.3g} (no progress: the constraints conflict, q is at a singular configuration, or tol is "
            "below the rounding of C)"
        )
    raise ValueError(
        f"project_positions: max |C(q)| = {out.residual:.3g} > tol = {tol:.3g} after {max_iterations} Gauss-Newton "
        "steps (the configuration is too far from where the constraints hold, or they conflict)"
    )
