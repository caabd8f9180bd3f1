"""Helpers shared by the URDF and MJCF loaders: numbers from attributes, rotations, warnings."""

from __future__ import annotations

import gc
import math
import re
import warnings
from collections import Counter
from contextlib import contextmanager

import numpy as np

from ..model import Inertia

__all__ = [
    "tiny",
    "unit",
    "user_stacklevel",
    "IgnoredElementWarning",
    "InertiaWarning",
    "floats",
    "parse_numbers",
    "quat_to_matrix",
    "axis_angle_matrix",
    "z_to_vector",
    "IgnoredTags",
    "file_inertia",
    "warn_inconsistent_inertias",
    "gc_paused",
]


@contextmanager
def gc_paused():
    """CPython's cyclic garbage collector off for a load, back as it was after it. A load makes
    hundreds of thousands of objects that live on (the element tree, the model) and no cyclic
    garbage; the collector would walk the growing heap again and again: 10-25% of loading a
    50 000-body file (measured)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def user_stacklevel() -> int:
    """The ``stacklevel`` for warnings.warn that points at the first caller outside treedyn."""
    import os
    import sys

    pkg = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(pkg + os.sep):
        frame, level = frame.f_back, level + 1
    return level


class IgnoredElementWarning(UserWarning):
    """Elements or attributes of a model file that treedyn read past. Only used for things that do
    not change M(q), the bias forces or forward dynamics as treedyn defines them, or whose effect
    the message states (e.g. joint damping, which treedyn takes as an input force)."""


class InertiaWarning(UserWarning):
    """Inertias in a model file that no rigid body can have: not positive semi-definite, or
    violating the triangle inequality of principal moments. Many real robot descriptions have
    them; they are kept as written (as Pinocchio and the URDF tools keep them)."""


def file_inertia(mass: float, com, inertia, what: str, inconsistent: list) -> Inertia:
    """An Inertia read from a file. Physically inconsistent rotational inertias are kept as
    written (``what`` is appended to ``inconsistent`` for one warning at the end); a negative or
    non-finite mass, or an asymmetric tensor, is an error (ValueError)."""
    try:
        return Inertia(mass, com, inertia)
    except ValueError as e:
        text = str(e)
        if "positive semi-definite" not in text and "triangle inequality" not in text:
            raise
    inconsistent.append(what)
    return unchecked_inertia(mass, com, inertia)


def unchecked_inertia(mass: float, com, inertia) -> Inertia:
    """An Inertia whose rotational part skips the physical-consistency checks of Inertia()."""
    return Inertia(mass, com, inertia, check=False)


def warn_inconsistent_inertias(source: str, inconsistent: list) -> None:
    if inconsistent:
        shown = ", ".join(inconsistent[:4]) + (", ..." if len(inconsistent) > 4 else "")
        warnings.warn(
            f"{source}: {len(inconsistent)} inertia(s) are not physically consistent (not "
            f"positive semi-definite, or principal moments violating the triangle inequality): "
            f"{shown}; kept as written, as Pinocchio does",
            InertiaWarning,
            stacklevel=user_stacklevel(),
        )


# A number as MJCF and URDF write them (C's strtod and XML Schema's double without Python's
# extensions): ASCII digits with an optional sign, point and exponent; inf and nan are let through
# here so that the callers refuse them with their own message. Python's float() also takes "1_000",
# non-ASCII digits ("１２", "١٢") and surrounding Unicode spaces, which no other tool reads as a
# number. Separators: XML's whitespace (space, tab, CR, LF) only.
_SPACE = "[ \t\n\r]"
# (unambiguous, so that a long bad token costs linear time to refuse: no backtracking)
_NUMBER = r"[+-]?(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|inf(?:inity)?|nan)"
_NUMBER_RE = re.compile(_NUMBER, re.IGNORECASE | re.ASCII)
_NUMBERS_RE = re.compile(rf"{_SPACE}*(?:{_NUMBER}(?:{_SPACE}+{_NUMBER})*)?{_SPACE}*", re.IGNORECASE | re.ASCII)


# texts already read (a file repeats its axes, origins and sizes: "0 0 1" thousands of times);
# short ones only, and at most _MEMO_SIZE of them (the memo is emptied when full)
_MEMO: dict[str, tuple[float, ...]] = {}
_MEMO_SIZE, _MEMO_CHARS = 4096, 128


def parse_numbers(text: str) -> tuple[float, ...]:
    """The whitespace-separated numbers of an attribute, read strictly (see _NUMBER above);
    ValueError naming the first token that is not one."""
    vals = _MEMO.get(text)
    if vals is None:
        vals = _parse_numbers(text)
        if len(text) <= _MEMO_CHARS:
            if len(_MEMO) >= _MEMO_SIZE:
                _MEMO.clear()
            _MEMO[text] = vals
    return vals


def _parse_numbers(text: str) -> tuple[float, ...]:
    if _NUMBERS_RE.fullmatch(text) is None:
        tokens = re.split(f"{_SPACE}+", text.strip(" \t\n\r"))
        bad = next((t for t in tokens if not _NUMBER_RE.fullmatch(t)), text)
        raise ValueError(
            f"{bad!r} is not a number (ASCII digits with an optional sign, decimal point and exponent, "
            f"separated by spaces)"
        )
    return tuple(map(float, text.split()))


def floats(doc, elem, attr: str, n: int | None = None, default=None, what: str = ""):
    """The whitespace-separated numbers of attribute ``attr`` of ``elem`` as a float array (or a
    float when n == 1); ``default`` when absent; a ModelFileError naming the element otherwise."""
    text = elem.get(attr)
    if text is None:
        if default is None:
            raise doc.error(f"{what or f'<{elem.tag}>'}: attribute {attr!r} is missing", elem)
        return default
    try:
        vals = parse_numbers(text)
    except ValueError as e:
        raise doc.error(
            f"{what or f'<{elem.tag}>'}: attribute {attr}={text!r} is not a list of numbers: {e}", elem
        ) from None
    if n is not None and len(vals) != n:
        raise doc.error(
            f"{what or f'<{elem.tag}>'}: attribute {attr}={text!r} must have {n} number{'s' if n > 1 else ''}, "
            f"got {len(vals)}",
            elem,
        )
    if not all(map(math.isfinite, vals)):
        raise doc.error(f"{what or f'<{elem.tag}>'}: attribute {attr}={text!r} contains NaN or inf", elem)
    return vals[0] if n == 1 else np.array(vals)


def _norm(v: np.ndarray) -> float:
    """|v| by math.hypot (it scales: no overflow for huge entries; on 3 or 4 numbers cheaper than numpy)."""
    return math.hypot(*np.ravel(v).tolist())


def tiny(v: np.ndarray) -> bool:
    """|v| < 1e-12."""
    return _norm(v) < 1e-12


def unit(v: np.ndarray) -> np.ndarray:
    """v / |v|; ValueError for v ≈ 0."""
    n = _norm(v)
    if n < 1e-12:
        raise ValueError(f"a direction must not be zero, got {v}")
    return v / n


def quat_to_matrix(q, wxyz: bool = True) -> np.ndarray:
    """Rotation matrix of a (not necessarily normalised) quaternion."""
    q = np.asarray(q, dtype=float)
    if tiny(q):
        raise ValueError("a quaternion must not be zero")
    q = unit(q)
    w, x, y, z = q if wxyz else (q[3], q[0], q[1], q[2])
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )


def matrix_to_quat(R, wxyz: bool = True) -> np.ndarray:
    """The unit quaternion of rotation matrix R, (w, x, y, z) or (x, y, z, w) (Shepperd's method:
    the largest of the four squares first, for accuracy); the inverse of quat_to_matrix."""
    R = np.asarray(R, dtype=float)
    t = np.trace(R)
    k = int(np.argmax([t, R[0, 0], R[1, 1], R[2, 2]]))
    q = np.zeros(4)  # (w, x, y, z)
    if k == 0:
        s = 2.0 * np.sqrt(1.0 + t)
        q[:] = 0.25 * s, (R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s, (R[1, 0] - R[0, 1]) / s
    else:
        i, j, m = k - 1, k % 3, (k + 1) % 3
        s = 2.0 * np.sqrt(1.0 + R[i, i] - R[j, j] - R[m, m])
        q[0] = (R[m, j] - R[j, m]) / s
        q[1 + i] = 0.25 * s
        q[1 + j] = (R[j, i] + R[i, j]) / s
        q[1 + m] = (R[m, i] + R[i, m]) / s
    q /= np.linalg.norm(q)
    return q if wxyz else np.r_[q[1:], q[0]]


def axis_angle_matrix(axis, angle: float) -> np.ndarray:
    """Rodrigues' rotation by ``angle`` about the (normalised) ``axis``."""
    a = np.asarray(axis, dtype=float)
    if tiny(a):
        raise ValueError("a rotation axis must not be zero")
    a = unit(a)
    K = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    return np.eye(3) + math.sin(angle) * K + (1 - math.cos(angle)) * K @ K


def z_to_vector(v) -> np.ndarray:
    """The smallest rotation taking the z axis onto the direction of ``v`` (a half turn about x
    when ``v`` points along −z), as MuJoCo orients ``zaxis`` and ``fromto`` frames."""
    v = np.asarray(v, dtype=float)
    if tiny(v):
        raise ValueError("a direction must not be zero")
    v = unit(v)
    axis = np.cross([0.0, 0.0, 1.0], v)
    s = np.linalg.norm(axis)
    if s < 1e-10:
        axis = np.array([1.0, 0.0, 0.0])
    return axis_angle_matrix(axis, math.atan2(s, v[2]))


class IgnoredTags:
    """Counts the elements a loader read past and warns once, in one message, at the end."""

    def __init__(self, source: str):
        self.source = source
        self.counts: Counter = Counter()
        self.notes: list[str] = []

    def add(self, tag: str) -> None:
        self.counts[tag] += 1

    def note(self, message: str) -> None:
        if message not in self.notes:
            self.notes.append(message)

    def warn(self) -> None:
        parts = []
        if self.counts:
            parts.append(
                "ignored "
                + ", ".join(f"<{t}>" + (f" ×{n}" if n > 1 else "") for t, n in sorted(self.counts.items()))
                + " (no effect on treedyn's dynamics)"
            )
        parts += self.notes
        if parts:
            warnings.warn(f"{self.source}: " + "; ".join(parts), IgnoredElementWarning, stacklevel=user_stacklevel())
