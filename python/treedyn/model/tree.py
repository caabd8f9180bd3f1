"""The model builder: bodies, joints, placements and inertias.

Conventions (see docs/design.md): bodies are numbered 1..N in the order they are added, 0 is the
fixed world; a parent is always added before its children (``parent[i] < i``). Spatial vectors
are ordered [angular; linear].
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import Union

import numpy as np

from .. import _core
from .shapes import SHAPES, Geom

__all__ = [
    "UnknownNameError",
    "Transform",
    "Inertia",
    "Joint",
    "Revolute",
    "Prismatic",
    "Fixed",
    "Universal",
    "Spherical",
    "Free",
    "Model",
]


class UnknownNameError(KeyError, ValueError):
    """A body or joint name the model does not have. A ``KeyError`` (a lookup by name) and a
    ``ValueError`` (a bad argument), so either ``except`` catches it."""

    def __str__(self):  # KeyError would print the message in quotes
        return str(self.args[0]) if self.args else ""


def _vector(x, n: int, what: str, names: str = "") -> np.ndarray:
    """x as a float array of n finite components (TypeError / ValueError naming ``what``)."""
    a = np.asarray(x)
    if a.dtype.kind not in "fiub":
        raise TypeError(f"{what} must be real numbers, got dtype {a.dtype}")
    a = a.astype(float)
    if a.shape != (n,):
        raise ValueError(f"{what} must have {n} components{names}, got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{what} contains NaN or inf: {a}")
    return a


def _vec3(x, what: str) -> np.ndarray:
    return _vector(x, 3, what)


def _mat3(x, what: str) -> np.ndarray:
    a = np.asarray(x)
    if a.dtype.kind not in "fiub":
        raise TypeError(f"{what} must be real numbers, got dtype {a.dtype}")
    a = a.astype(float)
    if a.shape != (3, 3):
        raise ValueError(f"{what} must be a 3x3 matrix, got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{what} contains NaN or inf")
    return a


def _unit(x, what: str) -> np.ndarray:
    a = _vec3(x, what)
    if np.abs(a).max() < 1e-12 and np.linalg.norm(a) < 1e-12:  # (no norm of huge entries: it overflows)
        raise ValueError(f"{what} must be a non-zero direction, got {a}")
    a = a / np.abs(a).max()  # first to O(1): the norm of (1e300, 1e300, 0) must not overflow
    return a / np.linalg.norm(a)


def _frozen(a: np.ndarray) -> np.ndarray:
    """A read-only copy: value objects never share memory with the caller's arrays."""
    a = np.array(a, dtype=float)
    a.flags.writeable = False
    return a


def _key(*arrays) -> tuple:
    """A hashable key equal for equal arrays (-0.0 and 0.0 included: their floats hash alike)."""
    return tuple(tuple(np.ravel(a).tolist()) for a in arrays)


@dataclass(frozen=True, eq=False)
class Transform:
    """A rigid placement: ``x_parent = rotation @ x_child + translation``.

    For a joint, the pose of the joint frame in the parent body's frame (URDF's joint
    ``<origin>``). Internally stored as Plücker (E, r) = (rotationᵀ, translation).

    An immutable value: its arrays are read-only copies of what was passed; equal transforms
    compare and hash equal.

    Made also by ``from_rpy`` (URDF) and ``from_quat`` ((x, y, z, w)), read back by ``rpy``,
    ``quat`` and ``as_matrix()``; ``T1 @ T2`` composes, ``T @ points`` maps points, and
    ``inverse()`` inverts.
    """

    rotation: np.ndarray = field(default_factory=lambda: np.eye(3))
    translation: np.ndarray = field(default_factory=lambda: np.zeros(3))

    def __post_init__(self):
        R = _mat3(self.rotation, "Transform rotation")
        if np.abs(R.T @ R - np.eye(3)).max() > 1e-6 or np.linalg.det(R) < 0:
            raise ValueError("Transform rotation must be a proper rotation matrix (RᵀR = 1, det R = +1)")
        object.__setattr__(self, "rotation", _frozen(R))
        object.__setattr__(self, "translation", _frozen(_vec3(self.translation, "Transform translation")))

    @staticmethod
    def identity() -> Transform:
        return Transform()

    @staticmethod
    def from_rpy(rpy: Sequence[float] = (0, 0, 0), xyz: Sequence[float] = (0, 0, 0)) -> Transform:
        """URDF's fixed-axis roll, pitch, yaw: R = Rz(yaw) Ry(pitch) Rx(roll)."""
        r, p, y = _vec3(rpy, "rpy")
        cr, sr, cp, sp, cy, sy = np.cos(r), np.sin(r), np.cos(p), np.sin(p), np.cos(y), np.sin(y)
        Rx = np.array([[1, 0, 0], [0, cr, -sr], [0, sr, cr]])
        Ry = np.array([[cp, 0, sp], [0, 1, 0], [-sp, 0, cp]])
        Rz = np.array([[cy, -sy, 0], [sy, cy, 0], [0, 0, 1]])
        return Transform(Rz @ Ry @ Rx, xyz)

    @staticmethod
    def from_quat(quat: Sequence[float] = (0, 0, 0, 1), xyz: Sequence[float] = (0, 0, 0)) -> Transform:
        """The rotation of the quaternion (x, y, z, w) (Pinocchio's and SciPy's order, scalar last;
        MuJoCo writes (w, x, y, z)) and the translation xyz. The quaternion is normalised; one whose
        norm is more than 1e-3 away from 1 is refused (ValueError), as the kernels refuse such q."""
        from scipy.spatial.transform import Rotation

        x = _vector(quat, 4, "quat", " (x, y, z, w)")
        n = np.linalg.norm(x)
        if abs(n - 1) > 1e-3:
            raise ValueError(f"quat must be a unit quaternion (x, y, z, w), got {x.tolist()} of norm {n:.6g}")
        return Transform(Rotation.from_quat(x / n).as_matrix(), xyz)

    @property
    def quat(self) -> np.ndarray:
        """The rotation as a unit quaternion (x, y, z, w) with w >= 0 (from_quat's inverse)."""
        from scipy.spatial.transform import Rotation

        q = Rotation.from_matrix(self.rotation).as_quat()
        return -q if q[3] < 0 else q

    @property
    def rpy(self) -> np.ndarray:
        """URDF's roll, pitch, yaw of the rotation (from_rpy's inverse), pitch in [-π/2, π/2]; at
        pitch ±π/2 (gimbal lock) roll and yaw are one angle between them and roll is set to 0."""
        from scipy.spatial.transform import Rotation

        with warnings.catch_warnings():  # SciPy warns at gimbal lock (which the docstring describes)
            warnings.simplefilter("ignore", UserWarning)
            return Rotation.from_matrix(self.rotation).as_euler("xyz")

    def inverse(self) -> Transform:
        """The inverse placement: ``T.inverse() @ T`` is the identity (to rounding)."""
        X = object.__new__(Transform)
        object.__setattr__(X, "rotation", _frozen(self.rotation.T))
        object.__setattr__(X, "translation", _frozen(-(self.rotation.T @ self.translation)))
        return X

    def as_matrix(self) -> np.ndarray:
        """The 4x4 homogeneous matrix [[rotation, translation], [0 0 0 1]] (a new array)."""
        H = np.eye(4)
        H[:3, :3], H[:3, 3] = self.rotation, self.translation
        return H

    def __matmul__(self, other):
        """``T1 @ T2``: the composition (T2 first); ``T @ p``: the point p (3,), or the points (N, 3),
        given in the child frame, in the parent frame: rotation @ p + translation."""
        if isinstance(other, Transform):
            # a product of two checked transforms needs no new checks (file loaders compose thousands)
            X = object.__new__(Transform)
            object.__setattr__(X, "rotation", _frozen(self.rotation @ other.rotation))
            object.__setattr__(X, "translation", _frozen(self.rotation @ other.translation + self.translation))
            return X
        if not isinstance(other, (np.ndarray, list, tuple)):
            return NotImplemented
        p = np.asarray(other)
        if p.dtype.kind not in "fiub":
            raise TypeError(f"Transform @ points: the points must be real numbers, got dtype {p.dtype}")
        if not (p.shape == (3,) or (p.ndim == 2 and p.shape[1] == 3)):
            raise ValueError(f"Transform @ points: need a point (3,) or points (N, 3), got shape {p.shape}")
        p = p.astype(float)
        if not np.all(np.isfinite(p)):
            raise ValueError("Transform @ points: the points contain NaN or inf")
        return p @ self.rotation.T + self.translation

    def __eq__(self, other):
        if not isinstance(other, Transform):
            return NotImplemented
        return np.array_equal(self.rotation, other.rotation) and np.array_equal(self.translation, other.translation)

    def __hash__(self):
        return hash((Transform, _key(self.rotation, self.translation)))

    def __reduce__(self):  # through the constructor: read-only arrays again, the same bits
        return Transform, (self.rotation, self.translation)


def _symmetric(x, what: str) -> np.ndarray:
    """A finite 3x3 matrix that is symmetric to rounding, made exactly symmetric."""
    I = _mat3(x, what)
    if np.abs(I - I.T).max() > 1e-9 * max(1.0, np.abs(I).max()):
        raise ValueError(f"{what} must be symmetric, got\n{I}")
    return 0.5 * (I + I.T)


def _cross_squared(c: np.ndarray) -> np.ndarray:
    """|c|²1 − c cᵀ = −c×c×: the rotational inertia about the origin of a unit point mass at c."""
    return (c @ c) * np.eye(3) - np.outer(c, c)


class Inertia:
    """A body's inertia, in one of two forms, each kept exactly as given:

    ``Inertia(mass, com, inertia)``: mass, centre of mass (body frame) and rotational inertia about
    the centre of mass in body axes (URDF's and Pinocchio's convention). Must be physically valid:
    mass >= 0 and the rotational inertia symmetric positive semi-definite with the triangle
    inequality. ``check=False`` keeps a rotational inertia that fails the physical checks (positive
    semi-definiteness, triangle inequality) as given — some real robot descriptions have such
    inertias and other tools keep them; shapes, finiteness, a mass >= 0 and symmetry are still
    required.

    ``Inertia.from_parameters(mass, first_moment, inertia_origin)``: the inertia parameters (m,
    h = m c, Ī about the body frame's origin), featherstone-part3's rbi(m, h, Ī) and the form the
    C++ model keeps. Only shapes, finiteness, m >= 0 and symmetry are checked: the bodies of a
    simplified model (``td.simplify``) are pieces of a valid tree, not rigid bodies of their own —
    non-physical, and often m = 0 with h ≠ 0, which has no centre of mass.

    Either form has ``mass``, ``first_moment`` and ``inertia_origin``; ``com`` and ``inertia``
    (about the centre of mass) raise ValueError when m = 0 and h ≠ 0. A solver raises
    SingularInertiaError if the mass matrix of the whole tree is not positive definite.

    An immutable value: its arrays are read-only copies of what was passed; inertias given in the
    same form with equal values compare and hash equal."""

    __slots__ = ("mass", "check", "_given", "_a", "_b")  # _given: "mci" (_a, _b = c, I_c) or "parameters" (h, Ī_O)

    def __init__(self, mass: float = 1.0, com=(0.0, 0.0, 0.0), inertia=None, *, check: bool = True):
        m = _mass(mass)
        c = _vec3(com, "Inertia com")
        I = _symmetric(np.eye(3) if inertia is None else inertia, "Inertia inertia")
        scale = max(1.0, np.abs(I).max())
        ev = np.linalg.eigvalsh(I)
        if check and ev.min() < -1e-12 * scale:
            raise ValueError(f"Inertia inertia is not positive semi-definite (eigenvalues {ev})")
        if check and ev[0] + ev[1] < ev[2] - 1e-9 * scale:
            raise ValueError(f"Inertia inertia violates the triangle inequality of principal moments {ev}")
        self._init(m, bool(check), "mci", c, I)

    @classmethod
    def from_parameters(cls, mass: float, first_moment, inertia_origin) -> Inertia:
        """The inertia with mass m, first moment h = m c (body frame) and rotational inertia Ī about
        the body frame's origin (body axes), kept exactly; not checked for physical consistency (see
        the class docstring)."""
        x = object.__new__(cls)
        h = _vec3(first_moment, "Inertia first_moment")
        x._init(_mass(mass), False, "parameters", h, _symmetric(inertia_origin, "Inertia inertia_origin"))
        return x

    def _init(self, m: float, check: bool, given: str, a: np.ndarray, b: np.ndarray) -> None:
        for name, value in (("mass", m), ("check", check), ("_given", given), ("_a", _frozen(a)), ("_b", _frozen(b))):
            object.__setattr__(self, name, value)

    # --- the two forms; rbi(m, h, Ī) with Ī = I_c + m(|c|²1 − ccᵀ) (featherstone-part3, "Iv")
    @property
    def first_moment(self) -> np.ndarray:
        """h = m c, the first moment of mass about the body frame's origin (body frame)."""
        return self._a if self._given == "parameters" else _frozen(self.mass * self._a)

    @property
    def inertia_origin(self) -> np.ndarray:
        """Ī, the rotational inertia about the body frame's origin (body axes)."""
        if self._given == "parameters":
            return self._b
        return _frozen(self._b + self.mass * _cross_squared(self._a))

    @property
    def has_com(self) -> bool:
        """False for m = 0 with h ≠ 0 (a piece of a simplified model): no centre of mass."""
        return self.mass > 0 or not np.any(self.first_moment)

    def _no_com(self, what: str):
        h = self.first_moment.tolist()
        return ValueError(
            f"Inertia.{what}: this inertia has mass 0 and first moment h = {h} ≠ 0 (a body of a simplified model, "
            "td.simplify): it has no centre of mass; read first_moment and inertia_origin instead"
        )

    @property
    def com(self) -> np.ndarray:
        """The centre of mass c = h / m (body frame); the origin when m = 0 and h = 0."""
        if self._given == "mci":
            return self._a
        if self.mass > 0:
            return _frozen(self._a / self.mass)
        if np.any(self._a):
            raise self._no_com("com")
        return _frozen(np.zeros(3))

    @property
    def inertia(self) -> np.ndarray:
        """The rotational inertia about the centre of mass, I_c = Ī − m(|c|²1 − ccᵀ) (body axes)."""
        if self._given == "mci":
            return self._b
        if not self.has_com:
            raise self._no_com("inertia")
        return _frozen(self._b - self.mass * _cross_squared(self.com))

    # --- an immutable value
    def __setattr__(self, name, value):
        raise AttributeError(f"Inertia is immutable: cannot set {name!r}; make a new Inertia instead")

    def __delattr__(self, name):
        raise AttributeError(f"Inertia is immutable: cannot delete {name!r}")

    def __eq__(self, other):
        if not isinstance(other, Inertia):
            return NotImplemented
        return (
            self._given == other._given
            and self.mass == other.mass
            and np.array_equal(self._a, other._a)
            and np.array_equal(self._b, other._b)
        )

    def __hash__(self):
        return hash((Inertia, self._given, self.mass, _key(self._a, self._b)))

    def __reduce__(self):
        if self._given == "parameters":
            return Inertia.from_parameters, (self.mass, self._a, self._b)
        return _unpickle_inertia, (self.mass, self._a, self._b, self.check)

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __repr__(self):
        if self._given == "parameters":
            return f"Inertia.from_parameters(mass={self.mass!r}, first_moment={self._a!r}, inertia_origin={self._b!r})"
        return f"Inertia(mass={self.mass!r}, com={self._a!r}, inertia={self._b!r})"

    @staticmethod
    def box(mass: float, size: Sequence[float], com=(0, 0, 0)) -> Inertia:
        x, y, z = _vec3(size, "box size")
        return Inertia(mass, com, np.diag([y * y + z * z, x * x + z * z, x * x + y * y]) * mass / 12.0)

    @staticmethod
    def cylinder(mass: float, radius: float, length: float, com=(0, 0, 0)) -> Inertia:
        """Solid cylinder with its axis along body z."""
        a = mass * (3 * radius**2 + length**2) / 12.0
        return Inertia(mass, com, np.diag([a, a, 0.5 * mass * radius**2]))

    @staticmethod
    def point(mass: float, com=(0, 0, 0)) -> Inertia:
        return Inertia(mass, com, np.zeros((3, 3)))


def _mass(mass) -> float:
    m = float(mass)
    if not np.isfinite(m) or m < 0:
        raise ValueError(f"Inertia mass must be finite and >= 0, got {mass}")
    return m


def _unpickle_inertia(mass, com, inertia, check):
    return Inertia(mass, com, inertia, check=check)


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


ParentRef = Union[None, str, int]  # noqa: UP007 (a runtime alias: X | None needs Python 3.10 objects)


def _nonneg(x, n: int, what: str) -> np.ndarray:
    a = np.array(x, dtype=float).reshape(-1)
    if a.size == 1:
        a = np.full(n, a[0])
    if a.shape != (n,):
        raise ValueError(f"{what} must be a scalar or {n} values, got shape {np.shape(x)}")
    if not np.all(np.isfinite(a)) or np.any(a < 0):
        raise ValueError(f"{what} must be finite and >= 0, got {x}")
    return a


def _field_values(x) -> tuple:
    """A dataclass's field values, not copied (dataclasses.astuple copies them deeply)."""
    return tuple(getattr(x, f.name) for f in fields(x))


def _unpickle_frozen(cls, values):
    """A frozen dataclass of the model (Spring, LoopClosure) with its arrays read-only again."""
    return cls(*(_frozen(v) if isinstance(v, np.ndarray) else v for v in values))


@dataclass(frozen=True)
class Spring:
    """A point-to-point spring–damper (see Model.add_spring)."""

    body_a: int
    point_a: np.ndarray
    body_b: int
    point_b: np.ndarray
    stiffness: float
    damping: float
    rest_length: float

    def __reduce__(self):
        return _unpickle_frozen, (type(self), _field_values(self))


_LOOP_ROWS = {l["kind"]: l["rows"] for l in _LOOP_LAYOUTS.values()}


@dataclass(frozen=True)
class LoopClosure:
    """A loop-closing joint (see Model.add_loop_closure)."""

    body_a: int
    placement_a: Transform
    body_b: int
    placement_b: Transform
    joint: Joint
    kind: int
    axis: np.ndarray
    axis2: np.ndarray
    active: bool = True

    @property
    def n_rows(self) -> int:
        return _LOOP_ROWS[self.kind]

    def __reduce__(self):
        return _unpickle_frozen, (type(self), _field_values(self))


@dataclass(frozen=True)
class Coupling:
    """A coupling of joint coordinates (see Model.add_coupling): L_f(q) − y0 = p(L_l(q) − x0) with
    p(x) = Σ_k polycoef[k] x^k and L(q) = Σ coef·q over (joint index, coef) pairs."""

    follower: tuple
    leader: tuple
    polycoef: tuple
    y0: float
    x0: float
    active: bool = True

    n_rows = 1


# The file readers behind Model.from_urdf / from_mjcf (and the writer of to_mjcf): treedyn.io registers them on import (the
# loaders depend on the model, never the reverse)
_FILE_READERS: dict = {}


class Model:
    """A tree of rigid bodies, built body by body.

    >>> model = Model(gravity=(0, 0, -9.81))
    >>> b1 = model.add_body("link1", parent=None, joint=Revolute((0, 0, 1)),
    ...                     inertia=Inertia(1.0, (0, 0, 0.05), np.diag([1e-2, 1e-2, 5e-3])))

    ``n_bodies``, ``body_names`` and ``parents`` include the world as body 0
    (``parents[0] == -1``), as MuJoCo's and Pinocchio's models do.
    """

    def __init__(self, gravity: Sequence[float] = (0.0, 0.0, -9.81)):
        self._cpp = _core.Model()
        self._joints: list[Joint] = [Fixed()]
        self._joint_names: list[str] = [""]
        self._index: dict[str, int] = {"world": 0}
        self._joint_index: dict[str, int] = {}
        self._placements: list[Transform] = [Transform()]
        self._inertias: list[Inertia] = [Inertia(mass=0.0, com=(0, 0, 0), inertia=np.zeros((3, 3)))]
        self._frames: dict[str, tuple] = {}
        self._geoms: list = []  # geometry.Geom, in the order added
        self._joint_limits: dict[int, tuple[float, float]] = {}  # body index -> (lower, upper), see set_joint_limits
        self.gravity = gravity
        # RedMax terms (baxter2019 §2): used by the redmax-* solvers' implicit step
        self._joint_springs: dict[int, tuple] = {}
        self._body_damping: dict[int, np.ndarray] = {}
        self._springs: list[Spring] = []
        self._point_forces: list[tuple] = []
        self._moving_forces: list[tuple] = []
        self._loops: list[LoopClosure] = []
        self._couplings: list[Coupling] = []
        self._constraints_cache = None  # (key, the C++ system of the active constraints)
        self.baumgarte: float | None = None
        # the configuration the file describes (MJCF's qpos0); None: the neutral configuration
        self.reference_configuration: np.ndarray | None = None

    # ----------------------------------------------------------------- building
    def add_body(
        self,
        name: str,
        parent: ParentRef = None,
        joint: Joint | None = None,
        placement: Transform | None = None,
        inertia: Inertia | None = None,
        joint_name: str | None = None,
    ) -> int:
        """Add a body hinged to ``parent`` by ``joint``; returns its index (1..N).

        parent: None or "world" (the fixed world), a body name, or an index returned by add_body.
        placement: pose of the joint frame in the parent body's frame (default: identity).
        inertia: the body's inertia (default: 1 kg, unit inertia at the origin).
        joint_name: defaults to the body name.
        """
        if not isinstance(name, str) or not name:
            raise TypeError(f"body name must be a non-empty string, got {name!r}")
        if name in self._index:
            raise ValueError(f"a body named {name!r} already exists")
        p = self._parent_index(parent, name)
        joint = Revolute() if joint is None else joint
        if not isinstance(joint, Joint):
            raise TypeError(f"joint of body {name!r} must be a treedyn joint (Revolute(), Free(), ...), got {joint!r}")
        if isinstance(joint, Free) and p != 0:
            raise ValueError(f"body {name!r}: a Free joint must connect to the world (floating base)")
        placement = Transform() if placement is None else placement
        if not isinstance(placement, Transform):
            raise TypeError(f"placement of body {name!r} must be a treedyn.Transform, got {type(placement).__name__}")
        inertia = Inertia() if inertia is None else inertia
        if not isinstance(inertia, Inertia):
            raise TypeError(f"inertia of body {name!r} must be a treedyn.Inertia, got {type(inertia).__name__}")
        jname = name if joint_name is None else str(joint_name)
        if joint.nv and jname in self._joint_index:
            raise ValueError(f"a joint named {jname!r} already exists")
        a1, a2 = joint._axes()
        # each form of the inertia goes to C++ as given: (m, c, I_c) converted there as always, (m, h, Ī_O) as is
        add = self._cpp.add_body_parameters if inertia._given == "parameters" else self._cpp.add_body
        i = add(
            name,
            p,
            joint.kind,
            placement.rotation.T,
            placement.translation,
            a1,
            a2,
            inertia.mass,
            inertia._a,
            inertia._b,
        )
        self._index[name] = i
        self._joints.append(joint)
        self._joint_names.append(jname)
        self._placements.append(placement)
        self._inertias.append(inertia)
        if joint.nv:
            self._joint_index[jname] = i
        return i

    def add_frame(self, name: str, body: ParentRef, placement: Transform | None = None) -> None:
        """Name a frame fixed to ``body`` (a body name or index; 0/"world"/None: the world) at
        ``placement`` (its pose in the body frame, default identity): a URDF link merged into its
        parent by a fixed joint, an MJCF site. ``model.frames[name] = (body name, placement)``."""
        if not isinstance(name, str) or not name:
            raise TypeError(f"frame name must be a non-empty string, got {name!r}")
        if name in self._frames:
            raise ValueError(f"a frame named {name!r} already exists")
        b = self._body_ref(body, f"frame {name!r}")
        placement = Transform() if placement is None else placement
        if not isinstance(placement, Transform):
            raise TypeError(f"placement of frame {name!r} must be a treedyn.Transform, got {type(placement).__name__}")
        self._frames[name] = (self.body_names[b], placement)

    def _parent_index(self, parent: ParentRef, child: str) -> int:
        if parent is None or (isinstance(parent, str) and parent == "world"):
            return 0
        if isinstance(parent, (int, np.integer)) and not isinstance(parent, bool):
            if not 0 <= int(parent) <= self._cpp.N:
                raise ValueError(
                    f"parent of {child!r}: there is no body {int(parent)} "
                    f"(bodies are 0..{self._cpp.N}; add parents before children)"
                )
            return int(parent)
        if isinstance(parent, str):
            if parent not in self._index:
                raise ValueError(f"parent of {child!r}: no body named {parent!r} (add parents before children)")
            return self._index[parent]
        raise TypeError(f"parent of {child!r} must be None, 'world', a body name or index, got {parent!r}")

    # ----------------------------------------------------------------- files
    @classmethod
    def from_urdf(cls, path_or_xml, floating_base: bool = False, package_dirs=None, *, mimic: str = "couple") -> Model:
        """Load a URDF file, or URDF text (a string starting with '<'): treedyn.io.load_urdf.

        floating_base: hinge the root link to the world by a free joint named "root_joint".
        package_dirs: where ``package://`` meshes live (only checked, with a warning for missing
            ones, when given: meshes play no part in the dynamics).
        mimic: "couple" (a <mimic> joint follows its leader: a coupling constraint),
        "independent" (an ordinary joint) or "error" (a <mimic> joint is an error).
        Fixed joints are merged into their parent body (``model.frames`` says where each link
        went); joints are numbered depth-first, children in file order: use q_index/v_index.
        """
        return _FILE_READERS["urdf"](path_or_xml, floating_base=floating_base, package_dirs=package_dirs, mimic=mimic)

    @classmethod
    def from_mjcf(cls, path_or_xml) -> Model:
        """Load an MJCF (MuJoCo XML) file, or MJCF text (a string starting with '<'):
        treedyn.io.load_mjcf (the supported subset and the q/v layout are described there)."""
        return _FILE_READERS["mjcf"](path_or_xml)

    def to_mjcf(self, name: str = "treedyn") -> str:
        """The model as MJCF text, for MuJoCo (treedyn.io.to_mjcf: bodies, joints, inertias, geoms,
        gravity)."""
        return _FILE_READERS["to_mjcf"](self, name)

    # ----------------------------------------------------------------- queries
    @property
    def gravity(self) -> np.ndarray:
        return np.array(self._cpp.gravity)

    @gravity.setter
    def gravity(self, g):
        self._cpp.gravity = _vec3(g, "gravity")

    @property
    def nq(self) -> int:
        return self._cpp.nq

    @property
    def nv(self) -> int:
        return self._cpp.nv

    @property
    def n_bodies(self) -> int:
        """Number of bodies, the world (body 0) included."""
        return self._cpp.N + 1

    @property
    def body_names(self) -> list[str]:
        return list(self._cpp.name)

    @property
    def parents(self) -> np.ndarray:
        """parents[i] is the parent of body i; parents[0] = -1 (the world has none)."""
        return np.array(self._cpp.parent, dtype=int)

    @property
    def joints(self) -> list[Joint]:
        return list(self._joints)

    @property
    def joint_names(self) -> list[str]:
        """Names of the joints that move (nv > 0), in coordinate order."""
        return [self._joint_names[i] for i in range(1, self._cpp.N + 1) if self._joints[i].nv]

    @property
    def joint_kinds(self) -> list[str]:
        """The kind of each body's joint ("revolute", "free", ...; body 0, the world: "fixed")."""
        return [type(j).__name__.lower() for j in self._joints]

    @property
    def body_joint_names(self) -> list[str]:
        """The name of each body's joint (body 0, the world: "")."""
        return list(self._joint_names)

    @property
    def q_indices(self) -> np.ndarray:
        """Where each body's joint coordinates start in q (n_bodies,); a joint has joints[i].nq of them."""
        return np.array(self._cpp.q_index, dtype=int)

    @property
    def v_indices(self) -> np.ndarray:
        """Where each body's joint velocity coordinates start in v (n_bodies,)."""
        return np.array(self._cpp.v_index, dtype=int)

    @property
    def placements(self) -> list[Transform]:
        """The pose of each joint frame in its parent body's frame (body 0: identity)."""
        return list(self._placements)

    @property
    def inertias(self) -> list[Inertia]:
        """Each body's inertia (body 0, the world: zero)."""
        return list(self._inertias)

    def with_inertias(self, inertias: Sequence[Inertia]) -> Model:
        """A new model like this one — bodies, names, joints, placements, frames, geoms, joint limits,
        springs, damping, forces, loop closures, couplings, gravity, reference configuration — but
        with body i's inertia ``inertias[i]`` (one per body, the world's first: it must be zero, the
        world does not move). This model is not changed. ``td.simplify`` builds its model so."""
        inertias = list(inertias)
        if len(inertias) != self.n_bodies:
            raise ValueError(f"with_inertias: need {self.n_bodies} inertias (the world's first), got {len(inertias)}")
        for i, I in enumerate(inertias):
            if not isinstance(I, Inertia):
                raise TypeError(f"with_inertias: inertias[{i}] must be a treedyn.Inertia, got {type(I).__name__}")
        w = inertias[0]
        if w.mass or np.any(w.first_moment) or np.any(w.inertia_origin):
            raise ValueError("with_inertias: inertias[0] is the world's and must be zero")
        bodies, rest = self._parts()
        bodies = [(*b[:4], I, b[5]) for b, I in zip(bodies, inertias[1:])]
        return _rebuild_model(self.gravity, bodies, copy.deepcopy(rest))

    # what a model is made of: the add_body arguments of its bodies (the C++ model is built from
    # them) and every other attribute, whatever it is (those the file readers add included)
    _REBUILT = frozenset({"_cpp", "_joints", "_joint_names", "_index", "_joint_index", "_placements", "_inertias"})

    def _parts(self) -> tuple[list, dict]:
        names, parents = self.body_names, self.parents.tolist()
        bodies = [
            (names[i], parents[i], self._joints[i], self._placements[i], self._inertias[i], self._joint_names[i])
            for i in range(1, self.n_bodies)
        ]
        rest = {k: v for k, v in self.__dict__.items() if k not in self._REBUILT and k != "_constraints_cache"}
        return bodies, rest

    def __reduce__(self):
        """A model pickles as what it is made of (bodies, joints, placements, inertias, frames, geoms,
        limits, springs, damping, forces, loop closures, couplings, gravity, reference
        configuration, ...); unpickling rebuilds the C++ model body by body, to the same bits.
        copy.deepcopy goes the same way."""
        bodies, rest = self._parts()
        return _rebuild_model, (self.gravity, bodies, rest)

    def __copy__(self):  # a model shares no mutable state with its copy
        return copy.deepcopy(self)

    @property
    def core(self) -> _core.Model:
        """The C++ model (treedyn._core.Model) the kernels and solver engines run on: the one
        accessor for code that hands the model to C++; read it, never modify it."""
        return self._cpp

    def add_geom(
        self,
        body: ParentRef,
        shape,
        placement: Transform | None = None,
        friction: float = 1.0,
        name: str | None = None,
        contype: int = 1,
        conaffinity: int = 1,
    ) -> int:
        """Fix a collision shape (td.Sphere, Capsule, Box, Plane) to ``body`` (a body name or
        index; None/0/"world": the world) at ``placement`` (its pose in the body frame); returns
        its index in ``model.geoms``. ``friction``: Coulomb coefficient (a pair uses the larger);
        ``contype``/``conaffinity``: MuJoCo's collision bit masks. treedyn.collide finds contacts."""
        if not isinstance(shape, SHAPES):
            raise TypeError(f"shape must be one of td.Sphere, Capsule, Box, Plane, got {type(shape).__name__}")
        b = self._body_ref(body, "geom")
        placement = Transform() if placement is None else placement
        if not isinstance(placement, Transform):
            raise TypeError(f"geom placement must be a treedyn.Transform, got {type(placement).__name__}")
        try:
            friction = float(friction)
        except (TypeError, ValueError):
            raise TypeError(f"geom friction must be a number, got {friction!r}") from None
        if not (np.isfinite(friction) and friction >= 0):
            raise ValueError(f"geom friction must be finite and >= 0, got {friction}")
        for mask, what in ((contype, "contype"), (conaffinity, "conaffinity")):
            if isinstance(mask, bool) or not isinstance(mask, (int, np.integer)) or mask < 0:
                raise TypeError(f"geom {what} must be a non-negative integer bit mask, got {mask!r}")
        name = f"geom{len(self._geoms)}" if name is None else name
        if not isinstance(name, str) or not name:
            raise TypeError(f"geom name must be a non-empty string, got {name!r}")
        if any(g.name == name for g in self._geoms):
            raise ValueError(f"a geom named {name!r} already exists")
        self._geoms.append(Geom(name, b, shape, placement, friction, int(contype), int(conaffinity)))
        return len(self._geoms) - 1

    @property
    def geoms(self) -> tuple:
        """The collision geoms (treedyn.model.shapes.Geom: name, body index, shape, placement,
        friction, contype, conaffinity), in the order added."""
        return tuple(self._geoms)

    @property
    def frames(self) -> dict:
        """Named frames: {name: (body name, pose in that body's frame)} (see add_frame)."""
        return dict(self._frames)

    def body_index(self, name: str) -> int:
        if name not in self._index:
            raise UnknownNameError(f"no body named {name!r}")
        return self._index[name]

    def _joint_body(self, name: str) -> int:
        if name not in self._joint_index:
            raise UnknownNameError(f"no moving joint named {name!r}; joints are {self.joint_names}")
        return self._joint_index[name]

    def q_index(self, name: str) -> int:
        """Where the coordinates of joint ``name`` start in q."""
        return self._cpp.q_index[self._joint_body(name)]

    def v_index(self, name: str) -> int:
        """Where the coordinates of joint ``name`` start in v."""
        return self._cpp.v_index[self._joint_body(name)]

    @property
    def has_floating_base(self) -> bool:
        return any(isinstance(j, Free) for j in self._joints)

    @property
    def is_chain(self) -> bool:
        """True when every body's parent is the body before it (an unbranched chain)."""
        return all(p == i - 1 for i, p in enumerate(self._cpp.parent) if i > 0)

    # ----------------------------------------------------------------- springs, forces, loop closures
    # The terms of the RedMax step (baxter2019 eq. (2.13)); the redmax-* solvers use them, the
    # rigid-body solvers (aba, ...) compute the dynamics of the bare tree.

    def _body_ref(self, body: ParentRef, what: str) -> int:
        """The index of ``body`` (None or "world": 0, a name, an index); ``what`` names it in errors."""
        if body is None or (isinstance(body, str) and body == "world"):
            return 0
        if isinstance(body, (int, np.integer)) and not isinstance(body, bool):
            if not 0 <= int(body) <= self._cpp.N:
                raise ValueError(f"{what}: there is no body {int(body)} (bodies are 0..{self._cpp.N})")
            return int(body)
        if isinstance(body, str):
            if body not in self._index:
                names = self.body_names
                shown = ", ".join(repr(n) for n in names[:8]) + (", ..." if len(names) > 8 else "")
                raise ValueError(f"{what}: no body named {body!r} (bodies: {shown})")
            return self._index[body]
        raise TypeError(f"{what} must be None, 'world', a body name or index, got {body!r}")

    def set_joint_spring(self, joint: str | int, stiffness=0.0, damping=0.0, rest=None) -> None:
        """A spring–damper on a moving joint (K_r, D_r and f_r of eq. (2.13)): the generalized
        force −stiffness (q − rest) − damping q̇, per velocity coordinate.

        joint: its name or its body's index. stiffness, damping: a scalar or one value per
        velocity coordinate of the joint, >= 0. rest: the joint's rest coordinates (nq of the
        joint; default zero, or the identity quaternion). A spherical joint's spring acts on the
        rotation vector of rest⁻¹ q; a free joint takes damping only.
        """
        if isinstance(joint, str):
            if joint not in self._joint_index:
                what = "the world has no joint" if joint == "world" else f"no moving joint is named {joint!r}"
                raise ValueError(f"joint spring: {what}; joints are {self.joint_names}")
            i = self._joint_index[joint]
        else:
            i = self._body_ref(joint, "joint spring")
        jt = self._joints[i]
        if i == 0:
            raise ValueError("joint spring: body 0 is the world, which has no joint")
        if jt.nv == 0:
            raise ValueError(f"joint spring: the joint of body {self.body_names[i]!r} is fixed (no coordinates)")
        k = _nonneg(stiffness, jt.nv, "joint spring stiffness")
        d = _nonneg(damping, jt.nv, "joint spring damping")
        if isinstance(jt, Free) and np.any(k):
            raise ValueError("joint spring: a free joint takes damping only (no stiffness)")
        if rest is None:
            rest = np.zeros(jt.nq)
            if isinstance(jt, Spherical):
                rest[3] = 1.0
            elif isinstance(jt, Free):
                rest[6] = 1.0
        rest = np.array(rest, dtype=float).reshape(-1)
        if rest.shape != (jt.nq,) or not np.all(np.isfinite(rest)):
            raise ValueError(f"joint spring: rest must be {jt.nq} finite joint coordinates, got {rest}")
        self._joint_springs[i] = (k, d, rest)

    # --- joint limits: model data like the springs; td.ContactSimulator keeps them as unilateral
    #     constraints with the contacts, td.random_configuration draws inside them
    def set_joint_limits(self, joint: str | int, lower=-np.inf, upper=np.inf) -> None:
        """Position limits lower ≤ q ≤ upper on a revolute (radians) or prismatic (metres) joint.

        joint: its name or its body's index. lower, upper: real numbers, lower ≤ upper (equal:
        the joint is locked); -inf / +inf leaves that side free, and both infinite removes the
        joint's limits. Setting them again replaces them.

        Refused, with the reason: the world and fixed joints (no coordinate); universal joints
        (two angles, which would need a pair each: model the joint as two revolute joints, as
        ``to_mjcf`` writes it, to limit them); spherical and free joints (a quaternion: a bound
        on its components is no bound on the rotation, and a cone on the rotation angle, MJCF's
        ball ``range``, is not a box on q).

        ``td.ContactSimulator`` keeps the limits as unilateral constraints solved with the
        contacts; ``td.random_configuration`` draws inside them. ``joint_limits``,
        ``lower_position_limit`` and ``upper_position_limit`` read them back.
        """
        what = "joint limits"
        if isinstance(joint, str):
            if joint not in self._joint_index:
                found = "the world has no joint" if joint == "world" else f"no moving joint is named {joint!r}"
                raise UnknownNameError(f"{what}: {found}; joints are {self.joint_names}")
            i = self._joint_index[joint]
        else:
            i = self._body_ref(joint, what)
        if i == 0:
            raise ValueError(f"{what}: body 0 is the world, which has no joint")
        jt, name = self._joints[i], self._joint_names[i]
        if not isinstance(jt, (Revolute, Prismatic)):
            why = {
                Fixed: "is fixed (no coordinate to limit)",
                Universal: "is universal: its two angles would need a pair of limits each (model it as two "
                "revolute joints to limit them)",
                Spherical: "is spherical: its coordinates are a quaternion, whose components bound no rotation",
                Free: "is free: its coordinates include a quaternion, whose components bound no rotation",
            }[type(jt)]
            raise ValueError(
                f"{what}: joint {name or self.body_names[i]!r} {why}; limits are for revolute and prismatic joints"
            )
        bounds = []
        for x, side in ((lower, "lower"), (upper, "upper")):
            if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, float, np.integer, np.floating)):
                raise TypeError(f"{what} of {name!r}: {side} must be a real number, got {x!r}")
            if np.isnan(x):
                raise ValueError(f"{what} of {name!r}: {side} is NaN")
            bounds.append(float(x))
        lo, hi = bounds
        if not lo <= hi or lo == np.inf or hi == -np.inf:
            raise ValueError(
                f"{what} of {name!r}: need lower <= upper, lower < +inf and upper > -inf, got ({lo}, {hi})"
            )
        if lo == -np.inf and hi == np.inf:
            self._joint_limits.pop(i, None)
        else:
            self._joint_limits[i] = (lo, hi)

    @property
    def joint_limits(self) -> dict:
        """{joint name: (lower, upper)} of the limited joints, in coordinate order (a copy: change
        them with set_joint_limits); a side without a bound is -inf or +inf."""
        return {self._joint_names[i]: self._joint_limits[i] for i in sorted(self._joint_limits)}

    @property
    def lower_position_limit(self) -> np.ndarray:
        """(nq,) the lower limit of each coordinate of q, -inf where there is none (quaternions and
        free joints included): Pinocchio's ``lowerPositionLimit``, but unlimited is -inf rather
        than the largest double. A read-only copy: set limits with set_joint_limits."""
        return self._position_limits(0, -np.inf)

    @property
    def upper_position_limit(self) -> np.ndarray:
        """(nq,) the upper limit of each coordinate of q, +inf where there is none (see
        lower_position_limit)."""
        return self._position_limits(1, np.inf)

    def _position_limits(self, side: int, unlimited: float) -> np.ndarray:
        out = np.full(self.nq, unlimited)
        for i, bounds in self._joint_limits.items():
            out[self._cpp.q_index[i]] = bounds[side]
        out.flags.writeable = False
        return out

    def set_body_damping(self, body: ParentRef, damping) -> None:
        """Viscous damping of a body's twist (D_m of eq. (2.13), body coordinates, [ω; v]):
        a scalar d (d·1₆), 6 diagonal values, or a symmetric positive semi-definite 6x6 matrix."""
        i = self._body_ref(body, "body damping")
        if i == 0:
            raise ValueError(f"body damping: body {body!r} is the world, which does not move")
        D = np.array(damping, dtype=float)
        if D.ndim == 0 or D.shape == (6,):
            D = np.eye(6) * D
        if D.shape != (6, 6) or not np.all(np.isfinite(D)):
            raise ValueError(f"body damping must be a scalar, 6 values or a 6x6 matrix, got shape {D.shape}")
        if not np.allclose(D, D.T) or np.linalg.eigvalsh(0.5 * (D + D.T)).min() < -1e-12 * max(1.0, np.abs(D).max()):
            raise ValueError("body damping must be symmetric positive semi-definite")
        self._body_damping[i] = 0.5 * (D + D.T)

    def add_spring(
        self,
        body_a: ParentRef,
        point_a,
        body_b: ParentRef,
        point_b,
        stiffness: float,
        damping: float = 0.0,
        rest_length: float | None = None,
        q=None,
    ) -> int:
        """A spring–damper between a point of body a and a point of body b (body coordinates):
        force stiffness·(l − rest_length) + damping·l̇ along the line between them (stiffness in
        force per length; the RedMax scenes' k per unit strain is k/L). rest_length: default the
        distance at configuration q (default the neutral one). Returns the spring's index.
        Its stiffness couples the two bodies (K_m off the block diagonal, eq. (2.39)–(2.41)).
        """
        a, b = self._body_ref(body_a, "spring body_a"), self._body_ref(body_b, "spring body_b")
        if a == b:
            raise ValueError(f"spring: body_a and body_b are the same body ({self.body_names[a]!r})")
        xa, xb = _frozen(_vec3(point_a, "spring point_a")), _frozen(_vec3(point_b, "spring point_b"))
        k = float(_nonneg(stiffness, 1, "spring stiffness")[0])
        d = float(_nonneg(damping, 1, "spring damping")[0])
        if rest_length is None:
            R, p = self.body_poses(q)
            rest_length = float(np.linalg.norm((R[b] @ xb + p[b]) - (R[a] @ xa + p[a])))
        L = float(_nonneg(rest_length, 1, "spring rest_length")[0])
        self._springs.append(Spring(a, xa, b, xb, k, d, L))
        return len(self._springs) - 1

    def add_point_force(self, body: ParentRef, point, force) -> None:
        """A constant force (world coordinates) applied at a point of a body (body coordinates)."""
        i = self._body_ref(body, "point force")
        if i == 0:
            raise ValueError(f"point force: body {body!r} is the world, which does not move")
        self._point_forces.append((i, _vec3(point, "point force point"), _vec3(force, "point force")))

    def add_moving_force(self, force, path, duration: float) -> None:
        """A constant force (world coordinates) whose point of application moves at constant
        speed along ``path`` — a list of (body, start, end) segments in body coordinates — from
        t = 0 to t = duration; then it has left the path and stops acting (a car crossing a deck).
        """
        f = _vec3(force, "moving force")
        if not path:
            raise ValueError("moving force: the path needs at least one (body, start, end) segment")
        segs = []
        for k, seg in enumerate(path):
            if len(seg) != 3:
                raise ValueError(f"moving force: path segment {k} must be (body, start, end), got {seg!r}")
            segs.append(
                (
                    self._body_ref(seg[0], f"moving force segment {k}"),
                    _vec3(seg[1], f"moving force segment {k} start"),
                    _vec3(seg[2], f"moving force segment {k} end"),
                )
            )
        T = float(duration)
        if not (np.isfinite(T) and T > 0):
            raise ValueError(f"moving force: duration must be positive, got {duration!r}")
        self._moving_forces.append((f, segs, T))

    def add_loop_closure(
        self,
        body_a: ParentRef,
        body_b: ParentRef,
        joint: Joint,
        placement_a: Transform | None = None,
        placement_b: Transform | None = None,
        q=None,
        active: bool = True,
    ) -> int:
        """Close a loop: a joint between a frame on body a and a frame on body b, kept by the
        constraint C(q) = 0. The constraint rows follow from the joint: Spherical (the frame origins
        coincide: 3 rows; MJCF's connect), Revolute(axis) (and the axis, given in the frames'
        coordinates, stays common: 5 rows), Universal(axis1, axis2) (and axis1 of frame a keeps its
        angle to axis2 of frame b: 4 rows), Fixed() (and the frames keep their orientation: 6 rows;
        MJCF's weld). placement_a / placement_b: the frame in body a / b coordinates (default
        identity / the frame that coincides with frame a at configuration q, default the model's
        reference configuration). An inactive closure is kept in the model but not enforced.
        Returns the loop's index.

        One definition, two formulations: the redmax-* solvers keep it at the velocity level in
        their implicit step (G q̇ = −βC, baxter2019 §2.2.5, β = ``model.baumgarte``, None: 1/h);
        ``td.simulate``, ``td.ContactSimulator`` and ``td.constrained_forward_dynamics`` keep it
        at the acceleration level with any solver (treedyn.constraints).
        """
        a, b = self._body_ref(body_a, "loop closure body_a"), self._body_ref(body_b, "loop closure body_b")
        if a == b:
            raise ValueError("loop closure: body_a and body_b are the same body")
        kinds = {
            Spherical: _LOOP_LAYOUTS["ball"]["kind"],
            Revolute: _LOOP_LAYOUTS["hinge"]["kind"],
            Universal: _LOOP_LAYOUTS["universal"]["kind"],
            Fixed: _LOOP_LAYOUTS["weld"]["kind"],
        }
        if type(joint) not in kinds:
            raise ValueError(
                "loop closure: the joint must be Spherical(), Revolute(axis), Universal(axis1, axis2) or Fixed(), "
                f"got {joint!r}"
            )
        pa = Transform() if placement_a is None else placement_a
        if placement_b is None:
            R, p = self.body_poses(self.reference_configuration if q is None else q)
            world_R, world_p = R[a] @ pa.rotation, R[a] @ pa.translation + p[a]
            placement_b = Transform(rotation=R[b].T @ world_R, translation=R[b].T @ (world_p - p[b]))
        for t, nm in ((pa, "placement_a"), (placement_b, "placement_b")):
            if not isinstance(t, Transform):
                raise TypeError(f"loop closure {nm} must be a treedyn.Transform, got {type(t).__name__}")
        a1, a2 = joint._axes()
        self._loops.append(LoopClosure(a, pa, b, placement_b, joint, kinds[type(joint)], a1, a2, bool(active)))
        return len(self._loops) - 1

    def add_coupling(self, follower, leader=None, polycoef=(0.0, 1.0), reference=None, active: bool = True) -> int:
        """Couple joint coordinates: L_f(q) − y0 = p(L_l(q) − x0), p(x) = a0 + a1 x + … + a4 x⁴
        (``polycoef`` = (a0, a1, ...), at most 5), one constraint row kept like a loop closure.

        follower / leader: a joint (name or body index) of one coordinate (revolute or prismatic),
        or a dict {joint: coefficient} for a fixed linear combination Σ c·q (a MuJoCo fixed
        tendon). leader None: L_f(q) = y0 + a0. (x0, y0) = (L_l, L_f) at the configuration
        ``reference`` (default zeros: then a URDF mimic joint q_f = m·q_l + o is polycoef (o, m);
        MJCF's joint and tendon equalities pass qpos0). An inactive coupling is kept but not
        enforced. Returns the coupling's index."""

        def terms(x, what):
            items = x.items() if isinstance(x, dict) else [(x, 1.0)]
            out = []
            for j, c in items:
                i = j if isinstance(j, (int, np.integer)) and not isinstance(j, bool) else self._joint_body(j)
                if not 0 < i < self.n_bodies or type(self._joints[i]) not in (Revolute, Prismatic):
                    kind = type(self._joints[i]).__name__ if 0 <= i < self.n_bodies else "no such joint"
                    raise ValueError(f"coupling {what}: {j!r} is {kind}; couplings join revolute and prismatic joints")
                c = float(c)
                if not np.isfinite(c):
                    raise ValueError(f"coupling {what}: the coefficient of {j!r} is {c}")
                out.append((int(i), c))
            return tuple(out)

        f = terms(follower, "follower")
        if not f:
            raise ValueError("coupling: the follower has no joint")
        lead = () if leader is None else terms(leader, "leader")
        try:
            a = np.array(polycoef, dtype=float).reshape(-1)
        except (TypeError, ValueError):
            a = np.array([np.nan])
        if not 1 <= a.size <= 5 or not np.all(np.isfinite(a)):
            raise ValueError(f"coupling: polycoef must be 1 to 5 finite numbers (a0 .. a4), got {polycoef!r}")
        y0 = x0 = 0.0
        if reference is not None:
            try:
                q = np.asarray(reference, dtype=float)
                _core.forward_kinematics(self._cpp, q)  # checks its shape and values
            except (TypeError, ValueError) as e:
                raise ValueError(f"coupling: reference must be a configuration (nq = {self.nq},): {e}") from None
            qi = self._cpp.q_index
            y0 = sum(c * q[qi[i]] for i, c in f)
            x0 = sum(c * q[qi[i]] for i, c in lead)
        self._couplings.append(Coupling(f, lead, tuple(a), float(y0), float(x0), bool(active)))
        return len(self._couplings) - 1

    @property
    def couplings(self) -> list[Coupling]:
        return list(self._couplings)

    @property
    def n_constraint_rows(self) -> int:
        """The rows of C(q) that are enforced: the active loop closures' and couplings'."""
        return sum(c.n_rows for c in self._loops + self._couplings if c.active)

    def constraint_residual(self, q=None) -> float:
        """max |C(q)| over the active loop closures and couplings at q (default: the reference
        configuration); 0.0 without constraints."""
        q = self._reference_q() if q is None else q
        _core.forward_kinematics(self._cpp, q)  # checks q
        if not self.n_constraint_rows:
            return 0.0
        return float(np.abs(self._constraint_system().loop_rows(q)[1]).max())

    @property
    def force_elements(self) -> list[str]:
        """The terms this model carries beyond the tree ("joint springs", "body damping", "springs",
        "point forces", "moving forces", "loop closures", "couplings"): the solvers with the
        "springs" capability (redmax-*) include them in their step; every solver's
        forward_dynamics computes the tree alone (loop closures and couplings are kept by
        td.constrained_forward_dynamics, td.simulate and td.ContactSimulator)."""
        terms = {
            "joint springs": self._joint_springs,
            "body damping": self._body_damping,
            "springs": self._springs,
            "point forces": self._point_forces,
            "moving forces": self._moving_forces,
            "loop closures": self._loops,
            "couplings": self._couplings,
        }
        return [name for name, items in terms.items() if items]

    @property
    def springs(self) -> list[Spring]:
        return list(self._springs)

    @property
    def loop_closures(self) -> list[LoopClosure]:
        return list(self._loops)

    def body_poses(self, q=None):
        """World rotation (n_bodies, 3, 3) and origin (n_bodies, 3) of every body frame at q
        (default: the neutral configuration): treedyn.forward_kinematics."""
        return _core.forward_kinematics(self._cpp, _core.neutral(self._cpp) if q is None else q)

    def loop_residual(self, q=None) -> np.ndarray:
        """C(q), the residuals of the active loop closures and then couplings at q (default: the
        reference configuration), their rows one after the other (n_rows each; zero when every
        constraint holds). Empty without constraints."""
        q = self._reference_q() if q is None else q
        if not self.n_constraint_rows:
            _core.forward_kinematics(self._cpp, q)  # checks q all the same
            return np.zeros(0)
        return np.asarray(self._constraint_system().loop_rows(q)[1])

    def _reference_q(self) -> np.ndarray:
        return _core.neutral(self._cpp) if self.reference_configuration is None else self.reference_configuration

    def _constraint_system(self):
        """The C++ RedMax system of the tree and its active constraints only (what C(q), G and
        Ġq̇ need), made once and remade when bodies or constraints change."""
        key = (self.n_bodies, tuple(map(id, self._loops)), tuple(map(id, self._couplings)))
        if self._constraints_cache is None or self._constraints_cache[0] != key:
            self._constraints_cache = (key, self._loop_system())
        return self._constraints_cache[1]

    def _loop_system(self):
        """A new C++ RedMax system of the tree and its active loop closures and couplings."""
        sys = _core.RedMaxSystem(self._cpp)
        for c in self._loops:
            if c.active:
                sys.add_loop(
                    c.body_a,
                    c.placement_a.rotation,
                    c.placement_a.translation,
                    c.body_b,
                    c.placement_b.rotation,
                    c.placement_b.translation,
                    c.kind,
                    c.axis,
                    c.axis2,
                )
        for c in self._couplings:
            if c.active:
                sys.add_coupling(
                    [i for i, _ in c.follower],
                    [x for _, x in c.follower],
                    [i for i, _ in c.leader],
                    [x for _, x in c.leader],
                    list(c.polycoef),
                    c.y0,
                    c.x0,
                )
        return sys

    def _redmax_system(self):
        """The C++ RedMax system: a frozen copy of the tree with its springs, forces and loops."""
        sys = self._loop_system()
        k_r, d_r, q_rest = np.array(sys.k_r), np.array(sys.d_r), np.array(sys.q_rest)
        for i, (k, d, rest) in self._joint_springs.items():
            vi, qi = self._cpp.v_index[i], self._cpp.q_index[i]
            k_r[vi : vi + len(k)], d_r[vi : vi + len(d)], q_rest[qi : qi + len(rest)] = k, d, rest
        sys.k_r, sys.d_r, sys.q_rest = k_r, d_r, q_rest
        for i, D in self._body_damping.items():
            sys.set_body_damping(i, D)
        for s in self._springs:
            sys.add_spring(s.body_a, s.point_a, s.body_b, s.point_b, s.stiffness, s.damping, s.rest_length)
        for i, x, f in self._point_forces:
            sys.add_point_force(i, x, f)
        for f, segs, T in self._moving_forces:
            sys.add_moving_force(f, [s[0] for s in segs], [s[1] for s in segs], [s[2] for s in segs], T)
        sys.baumgarte = -1.0 if self.baumgarte is None else float(self.baumgarte)
        return sys

    def __repr__(self):
        return f"treedyn.Model(n_bodies={self.n_bodies}, nq={self.nq}, nv={self.nv})"

    def __str__(self):
        """The tree as a table (``describe()``: at most 40 bodies, the middle left out beyond)."""
        return self.describe()

    def describe(self, max_bodies: int | None = 40) -> str:
        """The tree as text, what ``print(model)`` shows: a header with the totals (bodies, nq, nv,
        total mass, gravity), then one line per body — index, name indented by its depth in the
        tree (two spaces a level, at most 8 levels: deeper bodies show their depth as ``[d]``),
        parent, joint kind and name (with the axis of a revolute or prismatic joint, the axes of
        a universal one), its slice of q and v, and its mass.

        max_bodies: with more bodies than this (the world counted), the first two thirds and the
        last third of max_bodies are shown and a line says how many were left out between them;
        None shows every body."""
        if max_bodies is not None and (
            isinstance(max_bodies, bool) or not isinstance(max_bodies, (int, np.integer)) or max_bodies < 2
        ):
            raise ValueError(f"describe: max_bodies must be None or an integer >= 2, got {max_bodies!r}")
        n, parents, qi, vi = self.n_bodies, self.parents, self.q_indices, self.v_indices
        depth = [0] * n
        for i in range(1, n):
            depth[i] = depth[parents[i]] + 1
        names = self.body_names

        def axis(a):
            return "(" + ", ".join(f"{x:.4g}" for x in np.asarray(a) + 0.0) + ")"  # + 0.0: no -0

        def span(start, count, letter):
            return "" if count == 0 else f"{letter}[{start}]" if count == 1 else f"{letter}[{start}:{start + count}]"

        def row(i):
            j = self._joints[i]
            indent = "  " * min(depth[i], 8) + (f"[{depth[i]}] " if depth[i] > 8 else "")
            if i == 0:
                return [str(i), names[0], "", "", "", "", ""]
            joint = type(j).__name__.lower()
            if j.nv:
                joint += f" {self._joint_names[i]!r}"
            if isinstance(j, (Revolute, Prismatic)):
                joint += f" axis {axis(j.axis)}"
            elif isinstance(j, Universal):
                joint += f" axes {axis(j.axis1)} {axis(j.axis2)}"
            mass = f"{self._inertias[i].mass:.4g} kg"
            return [
                str(i),
                indent + names[i],
                names[parents[i]],
                joint,
                span(qi[i], j.nq, "q"),
                span(vi[i], j.nv, "v"),
                mass,
            ]

        shown = list(range(n))
        cut = None
        if max_bodies is not None and n > max_bodies:
            head = (2 * max_bodies) // 3
            cut = (head, n - (max_bodies - head))
            shown = list(range(head)) + list(range(cut[1], n))
        rows = [["#", "body", "parent", "joint", "q", "v", "mass"]] + [row(i) for i in shown]
        widths = [max(len(r[c]) for r in rows) for c in range(7)]

        def fmt(r):
            cells = [r[0].rjust(widths[0])] + [r[c].ljust(widths[c]) for c in range(1, 6)] + [r[6].rjust(widths[6])]
            return "  ".join(cells).rstrip()

        mass = sum(I.mass for I in self._inertias)
        g = ", ".join(f"{x:.4g}" for x in self.gravity + 0.0)
        lines = [
            f"treedyn.Model: {n} bod{'y' if n == 1 else 'ies'} (the world and {n - 1} more), nq = {self.nq}, nv = {self.nv}, "
            f"total mass {mass:.6g} kg, gravity ({g}) m/s²",
            fmt(rows[0]),
        ]
        for k, r in enumerate(rows[1:]):
            if cut is not None and k == cut[0]:
                lines.append(
                    f"... {cut[1] - cut[0]} bodies left out ({cut[0]} to {cut[1] - 1}): model.describe(None) shows all"
                )
            lines.append(fmt(r))
        return "\n".join(lines)


def _rebuild_model(gravity, bodies, rest) -> Model:
    """The model of Model._parts (unpickling, copies, with_inertias)."""
    out = Model(gravity)
    for b in bodies:
        out.add_body(*b)
    out.__dict__.update(rest)
    return out
