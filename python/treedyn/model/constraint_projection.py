"""The numerical core of the model's constraints C(q) = 0, below the solvers: the rank-revealing
solve of a Delassus-like matrix A = G Y (its dependent rows dropped) and the Gauss–Newton
projection of a configuration onto C(q) = 0, which stops when it stalls.

Both serve two callers: ``treedyn.constraints`` (the accelerations, ``project_positions``) and the
checks a constraint passes when it is added (model/constraint_checks.py), which must not import
the solvers above the model.

Gauss–Newton: the minimum-norm step δ = −Gᵀ(GGᵀ)⁺C, q ← q ⊕ δ, halved while it does not reduce
max |C|. Where the rows conflict (q₁ = q₀ and q₁ = q₀ + 1) it reaches the least-squares point,
where GᵀC = 0 with C ≠ 0, and no step reduces max |C| any more: without a stop it would spend
30 halvings a step for as many steps as it is allowed (10⁷ took hours). It stops as *stalled*
after ``STALL_STEPS`` steps in a row that each cut max |C| by less than 1% while the full step
itself promised less than 1% of ‖C‖₂ to first order (‖C + Gδ‖ > 0.99‖C‖: C lies almost wholly
where G cannot move it). Both are needed: away from the manifold the max-norm line search can
crawl for 40 steps on a plateau and then converge (a ball closure on a 4-link chain: 20 to 130
steps from configurations near the reference), but there the full step still promises its gain.
A step whose halvings all fail is still taken, at 2⁻³⁰ of its length (as before the stall test).
And whatever the steps promise, ``_PLATEAU_STEPS`` = 200 steps without 1% off max |C| stop it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from scipy.linalg import cho_solve

from .. import _core

__all__ = ["RANK_TOLERANCE", "min_norm_solve", "Projection", "gauss_newton", "STALL_STEPS"]

#: the relative size below which an eigenvalue (or a Cholesky pivot) of the scaled Delassus matrix
#: is a redundant row: its entries carry rounding of about nv·u relative, so genuine rows stay far
#: above this
RANK_TOLERANCE = 1e-10

#: consecutive Gauss–Newton steps with less than 1% progress each after which the projection stalls
STALL_STEPS = 5
_PROGRESS = 0.99  # a step "progresses" when max |C| falls below this fraction of what it was
_HALVINGS = 30  # backtracking: a full step far from the manifold can overshoot
#: and, whatever the full steps promise, stalled when max |C| has not fallen by 1% in this many steps
#: (a plateau of the max-norm line search lasted 45 steps before it converged, in the case above)
_PLATEAU_STEPS = 200


def min_norm_solve(Y, G, rhs):
    """λ = A⁺ rhs with A = G Y, its redundant directions dropped; rhs (m,) or (m, k).
    Cholesky of the Jacobi-scaled A when its pivots stay above the rank tolerance (15x faster than
    the eigendecomposition at m = 90); a dependent row shows as a vanishing pivot (zero in exact
    arithmetic, rounding-sized here), and then the eigendecomposition drops it. The eigenvalues
    are compared after the scaling (A_ii = 1), so that point rows (metres) and angular rows (no
    unit) are judged alike."""
    A = G @ Y
    A = 0.5 * (A + A.T)
    d = np.sqrt(np.clip(np.diag(A), 0.0, None))
    live = d > 0  # an identically zero row has no direction at all
    s = np.where(live, 1.0 / np.where(live, d, 1.0), 0.0)
    As = A * s[:, None] * s[None, :]
    rhs = np.asarray(rhs, dtype=float)
    sr = s.reshape((-1,) + (1,) * (rhs.ndim - 1))
    try:
        L = np.linalg.cholesky(As[np.ix_(live, live)])
        if np.diag(L).min(initial=1.0) ** 2 > RANK_TOLERANCE:
            lam = np.zeros_like(rhs)
            lam[live] = cho_solve((L, True), (sr * rhs)[live])
            return sr * lam
    except np.linalg.LinAlgError:  # not positive definite: a dependent row
        pass
    w, V = np.linalg.eigh(As)
    keep = w > RANK_TOLERANCE * max(w.max(initial=0.0), 0.0)
    c = V[:, keep].T @ (sr * rhs)
    w_keep = w[keep].reshape((-1,) + (1,) * (rhs.ndim - 1))
    return sr * (V[:, keep] @ (c / w_keep))


class Projection(NamedTuple):
    """Where Gauss–Newton left q: the configuration, max |C| there, the steps taken, and whether
    it stopped because it stalled (no progress: conflicting rows, or a singular configuration)."""

    q: np.ndarray
    residual: float
    steps: int
    stalled: bool


def _largest(C) -> float:
    """max |C| (NaN where C has one: an overflow never looks like progress)."""
    return float(np.abs(C).max(initial=0.0)) if np.all(np.isfinite(C)) else float("nan")


def gauss_newton(core, terms: Callable, q: np.ndarray, tol: float, max_iterations: int) -> Projection:
    """Gauss–Newton (see the module) on C(q) = 0 from q until max |C| ≤ tol, a stall, or
    max_iterations steps. core: the C++ model (its ⊕); terms(q) -> (G (m, nv), C (m,)). An
    overflow (a configuration flung far out) is no progress: NaN, then a stall, without numpy's
    warnings."""
    with np.errstate(over="ignore", invalid="ignore"):
        return _gauss_newton(core, terms, q, tol, max_iterations)


def _gauss_newton(core, terms, q, tol, max_iterations) -> Projection:
    G, C = terms(q)
    r = _largest(C)
    slow = 0
    mark, since = r, 0  # max |C| PLATEAU_STEPS ago at most, and the steps since
    for step_count in range(max_iterations):
        if r <= tol:
            return Projection(q, r, step_count, False)
        step = -(G.T @ min_norm_solve(G.T, G, C))  # the smallest δ (in joint coordinates) with G δ = −C
        # no gain even to first order: C has (nearly) no part that G can move, a least-squares point
        # of conflicting rows or a singular configuration (NaN: an overflow, hopeless too)
        hopeless = not np.linalg.norm(C + G @ step) <= _PROGRESS * np.linalg.norm(C)
        for _halving in range(_HALVINGS):
            q_new = _core.integrate(core, q, step, 1.0)
            G_new, C_new = terms(q_new)
            r_new = _largest(C_new)
            if r_new < r:
                break
            step = 0.5 * step
        slow = slow + 1 if hopeless and not r_new <= _PROGRESS * r else 0
        if r_new < r or np.isfinite(r_new):  # (the smallest step even without a gain: it leaves a singular q)
            q, G, C, r = q_new, G_new, C_new, r_new
        mark, since = (r, 0) if r <= _PROGRESS * mark else (mark, since + 1)
        if (slow >= STALL_STEPS or since >= _PLATEAU_STEPS) and not r <= tol:
            return Projection(q, r, step_count + 1, True)
    return Projection(q, r, max_iterations, False)
