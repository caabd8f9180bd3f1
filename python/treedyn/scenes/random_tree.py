"""Random kinematic trees with random placements, axes and inertias, for cross-checks."""

from __future__ import annotations

import numpy as np

from ..model import Fixed, Free, Inertia, Model, Prismatic, Revolute, Spherical, Transform, Universal
from .chain import count

JOINT_KINDS = ("revolute", "prismatic", "universal", "spherical", "fixed")


def _rotation(rng) -> np.ndarray:
    Q, R = np.linalg.qr(rng.standard_normal((3, 3)))
    Q = Q @ np.diag(np.sign(np.diag(R)))
    return Q if np.linalg.det(Q) > 0 else -Q


def random_inertia(rng, mass_range=(0.5, 2.0)) -> Inertia:
    m = rng.uniform(*mass_range)
    R = _rotation(rng)
    # principal moments that satisfy the triangle inequality with room to spare
    d = rng.uniform(1.0, 1.9, 3) * m * 0.05
    return Inertia(m, rng.uniform(-0.2, 0.2, 3), R @ np.diag(d) @ R.T)


def random_tree(
    n: int,
    rng=None,
    *,
    joints=JOINT_KINDS,
    floating_base: bool = False,
    branching: float = 0.5,
    gravity=(0.0, 0.0, -9.81),
) -> Model:
    """n bodies in depth-first order; body i's parent is the previous body or, with probability
    ``branching``, one of its few nearest ancestors (0 gives a chain, 1 a bushy tree). Joint kinds are drawn from ``joints``; axes are random directions.
    A fixed joint is never drawn for a leaf-most body so that every joint moves some inertia.
    """
    rng = np.random.default_rng(rng)
    n = count(n, "a tree needs n >= 1 bodies")
    if isinstance(joints, str) or not len(joints):
        raise ValueError(f"joints must be a non-empty sequence of joint kinds {JOINT_KINDS}, got {joints!r}")
    for k in joints:
        if k not in JOINT_KINDS:
            raise ValueError(f"unknown joint kind {k!r}; kinds are {JOINT_KINDS}")
    model = Model(gravity=gravity)
    path = [0]  # the last body added and its ancestors: where depth-first order allows a parent
    for i in range(1, n + 1):
        if i == 1 or rng.uniform() >= branching:
            parent = path[-1]
        else:  # branch off one of the last body's few nearest ancestors
            lo = 1 if floating_base else 0
            choices = path[max(lo, len(path) - 6) :]
            parent = choices[int(rng.integers(len(choices)))]
        del path[path.index(parent) + 1 :]
        path.append(i)
        if i == 1 and floating_base:
            joint = Free()
        else:
            kind = joints[int(rng.integers(len(joints)))]
            axis = rng.standard_normal(3)
            joint = {
                "revolute": lambda: Revolute(axis),
                "prismatic": lambda: Prismatic(axis),
                "universal": lambda: Universal(*_two_axes(rng)),
                "spherical": Spherical,
                "fixed": Fixed,
            }[kind]()
        place = Transform(_rotation(rng), rng.uniform(-0.5, 0.5, 3))
        model.add_body(f"body{i}", parent, joint, place, random_inertia(rng))
    return model


def _two_axes(rng):
    a = rng.standard_normal(3)
    b = np.cross(a, rng.standard_normal(3))
    return a, b
