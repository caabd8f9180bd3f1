"""Configurations: the neutral one, random ones, and q ⊕ v dt on the joints' manifolds."""
from __future__ import annotations

import numpy as np

from . import _core
from .model import Free, Model, Prismatic, Revolute, Spherical, Universal

__all__ = ["neutral", "random_configuration", "integrate"]


def neutral(model: Model) -> np.ndarray:
    """q with every joint at zero and every quaternion the identity (x, y, z, w) = (0, 0, 0, 1)."""
    q = np.zeros(model.nq)
    for i, j in enumerate(model.joints):
        if isinstance(j, Spherical):
            q[model._cpp.q_index[i] + 3] = 1.0
        elif isinstance(j, Free):
            q[model._cpp.q_index[i] + 6] = 1.0
    return q


def random_configuration(model: Model, rng=None, *, angle=np.pi, distance=1.0) -> np.ndarray:
    """A random q: angles uniform in [-angle, angle], displacements and floating-base positions
    uniform in [-distance, distance], quaternions uniform on SO(3)."""
    angle, distance = _bound(angle, "angle"), _bound(distance, "distance")
    rng = np.random.default_rng(rng)
    q = np.empty(model.nq)
    for i, j in enumerate(model.joints):
        k = model._cpp.q_index[i]
        if isinstance(j, (Revolute, Universal)):
            q[k:k + j.nq] = rng.uniform(-angle, angle, j.nq)
        elif isinstance(j, Prismatic):
            q[k] = rng.uniform(-distance, distance)
        elif isinstance(j, Spherical):
            q[k:k + 4] = _random_quaternion(rng)
        elif isinstance(j, Free):
            q[k:k + 3] = rng.uniform(-distance, distance, 3)
            q[k + 3:k + 7] = _random_quaternion(rng)
    return q


def _bound(x, name: str) -> float:
    """A half-width of a sampling interval: a number in [0, 1e300] (wider ranges overflow numpy's
    uniform sampler, and no joint has use for them)."""
    try:
        x = float(x)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a number, got {x!r}") from None
    if not 0.0 <= x <= 1e300:
        raise ValueError(f"{name} must be a finite number in [0, 1e300], got {x}")
    return x


def quaternion_slices(model: Model):
    """[(slice of q holding a quaternion, joint name)] for the spherical and free joints."""
    out = []
    for i, j in enumerate(model.joints):
        k = model._cpp.q_index[i]
        if isinstance(j, Spherical):
            out.append((slice(k, k + 4), model._joint_names[i]))
        elif isinstance(j, Free):
            out.append((slice(k + 3, k + 7), model._joint_names[i]))
    return out


def _random_quaternion(rng) -> np.ndarray:
    x = rng.standard_normal(4)
    return x / np.linalg.norm(x)


def integrate(model: Model, q, v, dt: float) -> np.ndarray:
    """q ⊕ v·dt: vector joints add, quaternions turn by the body-frame angular velocity, a free
    joint moves along the SE(3) screw exp(dt·[v; ω]) (Pinocchio's convention). Returns a new q."""
    if not isinstance(model, Model):
        raise TypeError(f"model must be a treedyn.Model, got {type(model).__name__}")
    return _core.integrate(model._cpp, q, v, float(dt))
