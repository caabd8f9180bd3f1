"""The state of one MJCF load, and the value readers every pass uses.

A ``Reader`` holds the document, where each element came from (file and line, for errors), what
the passes have found so far (compiler settings, default classes, mesh assets, joint limits, ...),
and reads attribute values the MJCF way: lists of numbers (``vec``), angles in the compiler's unit
(``angle``), orientations and poses (``rotation``, ``pose``), an element's attributes over its
default class (``attrs``). The passes (``treedyn.io.mjcf``'s modules) are functions of a Reader.
"""

from __future__ import annotations

import math

import numpy as np

from ...model import Transform
from .._common import IgnoredTags, axis_angle_matrix, parse_numbers, quat_to_matrix, unit, z_to_vector
from .._files import Budget
from .._tree import IDENTITY, shift
from .._xml import ModelFileError

__all__ = ["Reader", "ORIENTATIONS"]

ORIENTATIONS = ("quat", "axisangle", "euler", "xyaxes", "zaxis")


class Reader:
    def __init__(self, doc, budget=None):
        self.doc = doc
        self.budget = budget or Budget()  # what the load may still read (treedyn.io._files)
        self.where: dict = {}  # id(element) -> the included document it came from (else: doc)
        self.ignored = IgnoredTags(doc.source)
        self.inconsistent: list[str] = []
        self.limits: dict[str, tuple[float, float]] = {}
        self.passive: dict[str, tuple] = {}  # joint name -> (kind, {attribute: value}) (bodies._passive)
        self.qpos0: dict = {}  # joint name -> MuJoCo's qpos0: hinge/slide ref, a free body's pose
        self.body_names: dict[int, str] = {}  # id(<body> element) -> its name (given or made)
        self.materials: dict = {}  # <asset><material> name -> its rgba (meshes.mesh_assets)
        self.current = doc.root  # the element being read, for errors the checks did not foresee
        # set by the passes: <compiler> (options.read_compiler), default classes (defaults), mesh
        # assets (meshes), fixed tendons and sites (equality)
        self.defaults: dict = {}

    # ------------------------------------------------------------------ errors
    def err(self, message: str, elem=None) -> ModelFileError:
        """The error naming the file and line of ``elem`` (the main file's or an include's)."""
        if elem is None:
            return ModelFileError(message, self.doc.source)
        return self.where.get(id(elem), self.doc).error(message, elem)

    def locate(self, doc):
        """Remember that the elements of ``doc`` (an included file) come from it, for errors."""
        for e in doc.root.iter():
            self.where[id(e)] = doc

    # ------------------------------------------------------------------ defaults
    def attrs(self, elem, cls):
        """The element's attributes over its default class's (its own class, else ``cls``)."""
        name = elem.get("class", cls)
        if name not in self.defaults:
            raise self.err(f"<{elem.tag}> uses default class {name!r}, which is not defined", elem)
        a = dict(self.defaults[name].get(elem.tag, {}))
        a.update(elem.attrib)
        return a

    # ------------------------------------------------------------------ numbers and poses
    def vec(self, elem, key, n, attrs=None, default=None):
        """The numbers of attribute ``key`` (of ``attrs``, else the element's) as a float array: n
        of them (any number for None), finite; ``default`` when absent (an error if None)."""
        text = (attrs if attrs is not None else elem.attrib).get(key)
        if text is None:
            if default is None:
                raise self.err(f"<{elem.tag}> has no {key!r} attribute", elem)
            return np.array(default, dtype=float)
        return np.array(self._numbers(elem, key, text, n), dtype=float)

    def num(self, elem, key, attrs=None, default=None, n=1) -> float:
        """The first number of attribute ``key`` as a float (read as ``vec`` reads it, without the
        array: several per body, in the loader's hot path)."""
        text = (attrs if attrs is not None else elem.attrib).get(key)
        if text is None:
            if default is None:
                raise self.err(f"<{elem.tag}> has no {key!r} attribute", elem)
            return float(default)
        return self._numbers(elem, key, text, n)[0]

    def _numbers(self, elem, key, text, n) -> list:
        try:
            vals = parse_numbers(text)
        except ValueError as e:
            raise self.err(f"<{elem.tag} {key}={text!r}>: not a list of numbers: {e}", elem) from None
        if n is not None and len(vals) != n:
            raise self.err(f"<{elem.tag} {key}={text!r}>: expected {n} numbers, got {len(vals)}", elem)
        if not all(map(math.isfinite, vals)):
            raise self.err(f"<{elem.tag} {key}={text!r}>: NaN or inf", elem)
        return vals

    def limited(self, elem, attrs, key: str, what: str):
        """A (lower, upper) range by MuJoCo's rule for <key>limited (auto: limited when range[0] <
        range[1] under autolimits), or None."""
        limited = attrs.get(key.replace("range", "limited"), "auto")
        lo, hi = self.vec(elem, key, 2, attrs, (0.0, 0.0))
        if limited == "true" or (limited == "auto" and lo < hi and self.autolimits == "true"):
            if not lo < hi:
                raise self.err(
                    f"{what}: {key} {attrs.get(key, '0 0')!r} must have range[0] < range[1] when limited", elem
                )
            return (float(lo), float(hi))
        return None

    def size3(self, elem, attrs):
        """A geom's ``size``: up to 3 numbers, padded with zeros to 3."""
        size = np.zeros(3)
        v = self.vec(elem, "size", None, attrs, (0, 0, 0))[:3]
        size[: len(v)] = v
        return size

    def angle(self, x):
        return x * math.pi / 180.0 if self.deg else x

    def rotation(self, elem, attrs=None, allowed=ORIENTATIONS):
        a = elem.attrib if attrs is None else attrs
        given = [k for k in allowed if k in a]
        if len(given) > 1:
            raise self.err(f"<{elem.tag}> has more than one orientation ({', '.join(given)})", elem)
        if not given:
            return np.eye(3)
        k = given[0]
        try:
            if k == "quat":
                return quat_to_matrix(self.vec(elem, k, 4, a))
            if k == "axisangle":
                v = self.vec(elem, k, 4, a)
                return axis_angle_matrix(v[:3], self.angle(v[3]))
            if k == "euler":
                return self.euler(self.vec(elem, k, 3, a))
            if k == "xyaxes":
                v = self.vec(elem, k, 6, a)
                x = unit(v[:3])
                y = unit(v[3:] - (v[3:] @ x) * x)
                return np.column_stack([x, y, np.cross(x, y)])
            return z_to_vector(self.vec(elem, k, 3, a))
        except (ValueError, ZeroDivisionError, FloatingPointError) as e:
            raise self.err(f"<{elem.tag} {k}={a[k]!r}>: {e}", elem) from None

    def euler(self, angles):
        R = np.eye(3)
        for ch, ang in zip(self.eulerseq, angles):
            axis = np.eye(3)["xyz".index(ch.lower())]
            Ri = axis_angle_matrix(axis, self.angle(ang))
            R = R @ Ri if ch.islower() else Ri @ R  # lower case: axes that move with the frame
        return R

    def pose(self, elem, attrs=None) -> Transform:
        a = elem.attrib if attrs is None else attrs
        if not any(k in a for k in ORIENTATIONS):  # a translation (most bodies): no rotation to clean up
            return shift(self.vec(elem, "pos", 3, a)) if "pos" in a else IDENTITY
        R = self.rotation(elem, a)
        U, _, Vt = np.linalg.svd(R)  # re-orthonormalise what the user typed
        return Transform(U @ Vt, self.vec(elem, "pos", 3, a, (0, 0, 0)))
