"""A serial chain of identical links."""

from __future__ import annotations

import numpy as np

from ..model import Free, Inertia, Model, Prismatic, Revolute, Transform


def count(n, message: str) -> int:
    """n as an int, when it is a whole number >= 1; else a ValueError (a TypeError for a non-number)."""
    if not isinstance(n, (int, float, np.integer, np.floating)):
        raise TypeError(f"{message}, got {n!r}")
    if not (np.isfinite(n) and int(n) == n and n >= 1):
        raise ValueError(f"{message}, got {n!r}")
    return int(n)


def chain(
    n: int,
    *,
    joint: str = "revolute",
    length: float = 0.1,
    mass: float = 1.0,
    floating_base: bool = False,
    gravity=(0.0, 0.0, -9.81),
) -> Model:
    """n links of ``length`` and ``mass`` (uniform rods along x), joined by joints about z
    alternating with joints about y so that the chain is spatial, not planar.

    joint: "revolute" or "prismatic". floating_base: the first link floats (a Free joint).
    """
    n = count(n, "a chain needs n >= 1 links")
    if joint not in ("revolute", "prismatic"):
        raise ValueError(f"joint must be 'revolute' or 'prismatic', got {joint!r}")
    model = Model(gravity=gravity)
    rod = Inertia.box(mass, (length, 0.1 * length, 0.1 * length), com=(length / 2, 0, 0))
    parent = None
    for i in range(n):
        axis = (0, 0, 1) if i % 2 == 0 else (0, 1, 0)
        if i == 0 and floating_base:
            j = Free()
        else:
            j = Revolute(axis) if joint == "revolute" else Prismatic(axis)
        place = Transform(translation=(length if i > 0 else 0.0, 0.0, 0.0))
        parent = model.add_body(f"link{i + 1}", parent, j, place, rod)
    return model
