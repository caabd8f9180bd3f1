"""Collision shapes: immutable values a model's geoms are made of.

:class:`Sphere`, :class:`Capsule` (axis z, ``half_length`` from the centre to each cap's centre),
:class:`Box` (``half_extents``) and :class:`Plane` (the placement's z axis is the normal, the
half-space below it solid). ``model.add_geom`` fixes one to a body or to the world as a
:class:`Geom`; contact detection between them is ``treedyn.sim.collision``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import _checks as C

__all__ = ["Sphere", "Capsule", "Box", "Plane", "Geom", "SHAPES"]


def _positive(x, what: str) -> float:
    return C.real(x, what, positive=True)


@dataclass(frozen=True)
class Sphere:
    radius: float

    def __post_init__(self):
        object.__setattr__(self, "radius", _positive(self.radius, "Sphere radius"))


@dataclass(frozen=True)
class Capsule:
    radius: float
    half_length: float

    def __post_init__(self):
        object.__setattr__(self, "radius", _positive(self.radius, "Capsule radius"))
        object.__setattr__(self, "half_length", _positive(self.half_length, "Capsule half_length"))


@dataclass(frozen=True)
class Box:
    half_extents: tuple

    def __post_init__(self):
        h = np.asarray(self.half_extents)
        if h.shape != (3,):
            raise ValueError(f"Box half_extents must be 3 numbers, got {self.half_extents!r}")
        object.__setattr__(self, "half_extents", tuple(_positive(x, "Box half_extents") for x in h))


@dataclass(frozen=True)
class Plane:
    pass


SHAPES = (Sphere, Capsule, Box, Plane)


@dataclass(frozen=True)
class Geom:
    """A shape fixed to a body (index; 0 is the world) at ``placement`` (a treedyn.Transform in the
    body's frame). ``contype``/``conaffinity``: MuJoCo's bit masks (a pair collides when
    ``a.contype & b.conaffinity or b.contype & a.conaffinity``)."""

    name: str
    body: int
    shape: object
    placement: object
    friction: float = 1.0
    contype: int = 1
    conaffinity: int = 1
