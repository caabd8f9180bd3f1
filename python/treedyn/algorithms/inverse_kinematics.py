"""Inverse kinematics: a configuration q that puts frames where they are asked to be.

``inverse_kinematics(model, {frame: target, ...}, q0)``: each target a pose (a td.Transform: position
and orientation) or a position (3 numbers); frames as treedyn.frame_placement takes them (a body, a
named frame: an MJCF site, a URDF link merged by a fixed joint). Several targets are stacked into one
least-squares problem, weighted by ``weights`` (per frame). Damped least squares (Levenberg-Marquardt):

    e = [log(R* Rᵀ); p* − p]   per target (world axes; a position target has the lower half only)
    Δ = Jᵀ (J Jᵀ + λ² 1)⁻¹ e,  J the frames' Jacobians (treedyn.frame_jacobian, "local_world_aligned")
    q ← q ⊕ Δ (treedyn.integrate), then each coordinate clamped into its joint limits; a coordinate
    held at a limit that Δ would push past is left out of J (its column dropped, Δ solved again)

with λ halved after a step that lowers |e| and the step retried with λ doubled after one that does
not, so that it is Gauss-Newton near a solution and gradient descent far from one. Stops when |e| is
below ``tolerance`` (metres and radians) or after ``max_iterations``; an unreachable target ends at
the nearest configuration found, with ``success`` False and the residual saying by how much.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import _checks as C
from ..model import Model, Transform
from .configuration import integrate, neutral, random_configuration
from .kinematics import _frame, frame_jacobian, frame_placement

__all__ = ["inverse_kinematics", "IKResult"]


@dataclass(frozen=True)
class IKResult:
    """q: the configuration found; success: every target met to the tolerance; residual: |e| at q
    (metres and radians, weighted); iterations: the steps taken."""

    q: np.ndarray
    success: bool
    residual: float
    iterations: int


def _rotation_log(R) -> np.ndarray:
    """The rotation vector of R (angle · axis), accurate near 0 and near π."""
    c = np.clip((np.trace(R) - 1.0) / 2.0, -1.0, 1.0)
    w = np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])
    angle = np.arccos(c)
    if angle < 1e-6:
        return 0.5 * w
    if np.pi - angle < 1e-6:  # (w vanishes: the axis from the symmetric part)
        B = 0.5 * (R + np.eye(3))
        axis = B[np.argmax(np.diag(B))]
        return angle * axis / np.linalg.norm(axis)
    return angle / (2.0 * np.sin(angle)) * w


def _targets(model: Model, targets) -> list:
    if not isinstance(targets, dict) or not targets:
        raise TypeError("inverse_kinematics: targets must be a non-empty dict {frame: Transform or position}")
    out = []
    for frame, target in targets.items():
        if isinstance(target, Transform):
            out.append((frame, np.asarray(target.rotation, dtype=float), np.asarray(target.translation, dtype=float)))
        else:
            p = C.array(target, f"inverse_kinematics: the target of frame {frame!r}")
            if p.shape != (3,):
                raise ValueError(f"inverse_kinematics: the target of frame {frame!r} must be a Transform or 3 numbers")
            out.append((frame, None, p))
        _frame(model, frame, None)  # (an unknown frame: its error now)
    return out


def inverse_kinematics(
    model: Model,
    targets: dict,
    q0=None,
    *,
    weights: dict | None = None,
    tolerance: float = 1e-10,
    max_iterations: int = 200,
    damping: float = 1e-3,
    restarts: int = 10,
    rng=None,
) -> IKResult:
    """A configuration putting each frame at its target (see the module). q0: where to start (default:
    the neutral configuration); weights: {frame: weight} (default 1); damping: λ's start; restarts: from
    how many random configurations (treedyn.random_configuration, within the limits; ``rng`` a seed or a
    numpy Generator, default 0) to start again where a start ends in a local minimum — the best found is
    returned."""
    C.instance(model, Model, "model")
    goals = _targets(model, targets)
    q = neutral(model) if q0 is None else C.array(q0, "q0", (model.nq,)).copy()
    tolerance = C.real(tolerance, "tolerance", positive=True)
    max_iterations = C.integer(max_iterations, "max_iterations", minimum=0)
    lam = C.real(damping, "damping", positive=True)
    restarts = C.integer(restarts, "restarts", minimum=0)
    rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(0 if rng is None else rng)
    lo, hi = model.lower_position_limit, model.upper_position_limit
    best = _solve(model, goals, np.clip(q, lo, hi), weights or {}, tolerance, max_iterations, lam)
    for _ in range(restarts):
        if best.success:
            break
        start = np.clip(random_configuration(model, rng), lo, hi)
        r = _solve(model, goals, start, weights or {}, tolerance, max_iterations, lam)
        best = r if r.residual < best.residual else best
    return best


def _solve(model, goals, q, weights, tolerance, max_iterations, lam) -> IKResult:
    """Damped least squares from q (the module)."""
    lo, hi = model.lower_position_limit, model.upper_position_limit

    def error(q):
        rows, jac = [], []
        for frame, R_t, p_t in goals:
            X = frame_placement(model, q, frame)
            J = frame_jacobian(model, q, frame, reference="local_world_aligned")
            w = float(weights.get(frame, 1.0))
            if R_t is not None:
                rows.append(w * _rotation_log(R_t @ np.asarray(X.rotation).T))
                jac.append(w * J[:3])
            rows.append(w * (p_t - np.asarray(X.translation)))
            jac.append(w * J[3:])
        return np.concatenate(rows), np.vstack(jac)

    # the limited scalar coordinates: velocity index -> configuration index
    scalar = [(model.v_indices[i], model.q_indices[i]) for i, j in enumerate(model.joints) if j.nq == j.nv == 1]
    limited = [(iv, iq) for iv, iq in scalar if np.isfinite(lo[iq]) or np.isfinite(hi[iq])]

    def dls(q, J, e):
        """The damped least-squares step, without the coordinates held at a limit it would push past
        (their columns dropped and the step solved again: a projected step that still moves the rest)."""
        J = J.copy()
        for _ in range(len(limited) + 1):
            step = J.T @ np.linalg.solve(J @ J.T + lam * lam * np.eye(len(e)), e)
            held = [
                iv for iv, iq in limited if (q[iq] <= lo[iq] and step[iv] < 0) or (q[iq] >= hi[iq] and step[iv] > 0)
            ]
            held = [iv for iv in held if J[:, iv].any()]
            if not held:
                return step
            J[:, held] = 0.0
        return step

    e, J = error(q)
    it = 0
    while np.linalg.norm(e) > tolerance and it < max_iterations:
        it += 1
        step = dls(q, J, e)
        trial = np.clip(integrate(model, q, step, 1.0), lo, hi)
        e_trial, J_trial = error(trial)
        if np.linalg.norm(e_trial) < np.linalg.norm(e):
            q, e, J, lam = trial, e_trial, J_trial, max(lam / 2.0, 1e-12)
        else:
            lam *= 4.0
            if lam > 1e8:  # (no step lowers |e|: a local minimum, or a target out of reach)
                break
    residual = float(np.linalg.norm(e))
    return IKResult(q, residual <= tolerance, residual, it)
