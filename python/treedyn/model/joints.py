"""Joint kinds: immutable values that know their coordinates (nq, nv) from the C++ model's one table
of joint layouts (model/model.hpp), and the loop-closure layouts."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .. import _core
from .spatial import _frozen, _key, _unit

_JOINT_LAYOUTS = _core.joint_layouts()  # {name: {kind, nq, nv, quaternion}}: model/model.hpp
_LOOP_LAYOUTS = _core.loop_layouts()  # {name: {kind, rows}}


def _layout(name: str) -> tuple:
    """(kind, nq, nv) of a joint kind, from the C++ table."""
    l = _JOINT_LAYOUTS[name]
    return l["kind"], l["nq"], l["nv"]


class Joint:
    """Base of the joint kinds. ``nq``/``nv``: coordinates it adds to q and v.

    Joints are immutable values: their axes are read-only copies, assigning an attribute raises
    AttributeError, and two joints of the same kind with the same axes compare and hash equal.
    """

    __slots__ = ()
    _fields: tuple = ()
    kind, nq, nv = _layout("fixed")

    def _set(self, **fields):
        for name, value in fields.items():
            object.__setattr__(self, name, _frozen(value))

    def __setattr__(self, name, value):
        args = ", ".join(self._fields)
        raise AttributeError(
            f"{type(self).__name__} joints are immutable: cannot set {name!r}; "
            f"make a new joint ({type(self).__name__}({args})) instead"
        )

    def __delattr__(self, name):
        raise AttributeError(f"{type(self).__name__} joints are immutable: cannot delete {name!r}")

    def _axes(self):
        return np.zeros(3), np.zeros(3)

    def _values(self) -> tuple:
        return tuple(getattr(self, f) for f in self._fields)

    def __eq__(self, other):
        if not isinstance(other, Joint):
            return NotImplemented
        return type(self) is type(other) and all(np.array_equal(a, b) for a, b in zip(self._values(), other._values()))

    def __hash__(self):
        return hash((type(self), _key(*self._values())))

    def __reduce__(self):  # the axes as stored: normalising a unit axis again may change its last bit
        return _unpickle_joint, (type(self), self._values())

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __repr__(self):
        args = ", ".join(f"{f}={getattr(self, f).tolist()}" for f in self._fields)
        return f"{type(self).__name__}({args})"


def _unpickle_joint(cls, values):
    j = object.__new__(cls)
    j._set(**dict(zip(cls._fields, values)))
    return j


class Fixed(Joint):
    """Welds the body to its parent (no coordinates)."""

    __slots__ = ()


class Revolute(Joint):
    """Rotation by an angle about ``axis`` (in the joint frame; normalised)."""

    __slots__ = ("axis",)
    _fields = ("axis",)
    kind, nq, nv = _layout("revolute")

    def __init__(self, axis: Sequence[float] = (0, 0, 1)):
        self._set(axis=_unit(axis, "Revolute axis"))

    def _axes(self):
        return self.axis, np.zeros(3)


class Prismatic(Joint):
    """Translation along ``axis`` (in the joint frame; normalised)."""

    __slots__ = ("axis",)
    _fields = ("axis",)
    kind, nq, nv = _layout("prismatic")

    def __init__(self, axis: Sequence[float] = (0, 0, 1)):
        self._set(axis=_unit(axis, "Prismatic axis"))

    def _axes(self):
        return self.axis, np.zeros(3)


class Universal(Joint):
    """Rotation by q1 about ``axis1`` then by q2 about ``axis2`` (axis2 turned by the first
    rotation). The axes must not be parallel."""

    __slots__ = ("axis1", "axis2")
    _fields = ("axis1", "axis2")
    kind, nq, nv = _layout("universal")

    def __init__(self, axis1: Sequence[float] = (1, 0, 0), axis2: Sequence[float] = (0, 1, 0)):
        a1, a2 = _unit(axis1, "Universal axis1"), _unit(axis2, "Universal axis2")
        if np.linalg.norm(np.cross(a1, a2)) < 1e-6:
            raise ValueError("Universal axis1 and axis2 must not be parallel")
        self._set(axis1=a1, axis2=a2)

    def _axes(self):
        return self.axis1, self.axis2


class Spherical(Joint):
    """Ball joint: q is a unit quaternion (x, y, z, w); v is the body's angular velocity in
    body coordinates."""

    __slots__ = ()
    kind, nq, nv = _layout("spherical")


class Free(Joint):
    """Floating base: q = (position, unit quaternion (x, y, z, w)); v = (linear, angular)
    velocity of the body frame in body coordinates (Pinocchio's free-flyer layout)."""

    __slots__ = ()
    kind, nq, nv = _layout("free")
