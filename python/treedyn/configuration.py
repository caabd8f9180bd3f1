"""Configurations: the neutral one, random ones, and q ⊕ v dt on the joints' manifolds."""

from __future__ import annotations

import numpy as np

from . import _core
from .model import _JOINT_LAYOUTS, Free, Model, Prismatic, Revolute, Spherical, Universal

__all__ = ["neutral", "random_configuration", "integrate"]


def neutral(model: Model) -> np.ndarray:
    """q with every joint at zero and every quaternion the identity (x, y, z, w) = (0, 0, 0, 1)."""
    if not isinstance(model, Model):
        raise TypeError(f"model must be a treedyn.Model, got {type(model).__name__}")
    return _core.neutral(model.core)


def random_configuration(model: Model, rng=None, *, angle=np.pi, distance=1.0) -> np.ndarray:
    """A random q: angles uniform in [-angle, angle], displacements and floating-base positions
    uniform in [-distance, distance], quaternions uniform on SO(3). A limited coordinate
    (model.set_joint_limits) is uniform inside its limits: in [lower, upper] when both are
    finite; with one side unbounded, in the part of [-angle, angle] (or [-distance, distance])
    within the limit, or, when none of it is, in the interval of that width from the bound
    inwards. The same draws from rng as without limits, one per coordinate."""
    if not isinstance(model, Model):
        raise TypeError(f"model must be a treedyn.Model, got {type(model).__name__}")
    for name, x in (("angle", angle), ("distance", distance)):
        # the uniform draw spans 2x: its width must stay finite
        if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, float, np.integer, np.floating)):
            raise TypeError(f"random_configuration: {name} must be a real number, got {type(x).__name__}")
        if not (0 <= x <= 1e300):
            raise ValueError(f"random_configuration: {name} must be finite, >= 0 and <= 1e300, got {x}")
    rng = np.random.default_rng(rng)
    q = np.empty(model.nq)
    lower, upper = model.lower_position_limit, model.upper_position_limit
    for j, k in zip(model.joints, model.q_indices):
        if isinstance(j, (Revolute, Prismatic)) and (lower[k] > -np.inf or upper[k] < np.inf):
            q[k] = _uniform_within(rng, lower[k], upper[k], angle if isinstance(j, Revolute) else distance)
        elif isinstance(j, (Revolute, Universal)):
            q[k : k + j.nq] = rng.uniform(-angle, angle, j.nq)
        elif isinstance(j, Prismatic):
            q[k] = rng.uniform(-distance, distance)
        elif isinstance(j, Spherical):
            q[k : k + 4] = _random_quaternion(rng)
        elif isinstance(j, Free):
            q[k : k + 3] = rng.uniform(-distance, distance, 3)
            q[k + 3 : k + 7] = _random_quaternion(rng)
    return q


def quaternion_slices(model: Model):
    """[(slice of q holding a quaternion, joint name)] for the spherical and free joints."""
    out = []
    for j, k, name in zip(model.joints, model.q_indices, model.body_joint_names):
        s = _JOINT_LAYOUTS[type(j).__name__.lower()]["quaternion"]
        if s >= 0:
            out.append((slice(k + s, k + s + 4), name))
    return out


def _uniform_within(rng, lower: float, upper: float, width: float) -> float:
    """One uniform draw in [lower, upper] if both are finite, else in [lower, upper] ∩ [-width,
    width] (see random_configuration), computed from the midpoint and half-width so that a span
    wider than the largest double (limits of ±1e308) does not overflow, and clipped to the limits
    against the rounding of mid + half·u."""
    lo, hi = (lower, upper) if np.isfinite(lower) and np.isfinite(upper) else (max(lower, -width), min(upper, width))
    if lo > hi:  # the default interval misses the limits: take its width from the finite bound
        lo, hi = (lower, min(upper, lower + 2 * width)) if lower > width else (max(lower, upper - 2 * width), upper)
    mid, half = 0.5 * lo + 0.5 * hi, 0.5 * hi - 0.5 * lo
    return float(np.clip(mid + half * rng.uniform(-1.0, 1.0), lower, upper))


def _random_quaternion(rng) -> np.ndarray:
    x = rng.standard_normal(4)
    return x / np.linalg.norm(x)


def integrate(model: Model, q, v, dt: float) -> np.ndarray:
    """q ⊕ v·dt: vector joints add, quaternions turn by the body-frame angular velocity, a free
    joint moves along the SE(3) screw exp(dt·[v; ω]) (Pinocchio's convention). Returns a new q."""
    if not isinstance(model, Model):
        raise TypeError(f"model must be a treedyn.Model, got {type(model).__name__}")
    if isinstance(dt, (bool, np.bool_)) or not isinstance(dt, (int, float, np.integer, np.floating)):
        raise TypeError(f"integrate: dt must be a real number, got {type(dt).__name__}")
    return _core.integrate(model.core, q, v, float(dt))
