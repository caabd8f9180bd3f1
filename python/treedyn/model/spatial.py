"""Spatial value types: ``Transform`` (a rigid motion, rotation E and translation r) and ``Inertia``
(mass, centre of mass, rotational inertia), immutable values with read-only arrays."""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np


def _vector(x, n: int, what: str, names: str = "") -> np.ndarray:
    """x as a float array of n finite components (TypeError / ValueError naming ``what``)."""
    a = np.asarray(x)
    if a.dtype.kind not in "fiub":
        raise TypeError(f"{what} must be real numbers, got dtype {a.dtype}")
    a = a.astype(float)
    if a.shape != (n,):
        raise ValueError(f"{what} must have {n} components{names}, got shape {a.shape}")
    if not all(map(math.isfinite, a.tolist())):  # (Python floats: cheaper than numpy on a few numbers)
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
    if not all(map(math.isfinite, a.ravel().tolist())):
        raise ValueError(f"{what} contains NaN or inf")
    return a


def _unit(x, what: str) -> np.ndarray:
    a = _vec3(x, what)
    n = math.hypot(*a.tolist())  # |a| (math.hypot scales: no overflow for huge entries)
    if n < 1e-12:
        raise ValueError(f"{what} must be a non-zero direction, got {a}")
    return a / n


def _frozen(a: np.ndarray) -> np.ndarray:
    """A read-only copy: value objects never share memory with the caller's arrays."""
    a = np.array(a, dtype=float)
    a.flags.writeable = False
    return a


def _freeze(a: np.ndarray) -> np.ndarray:
    """``a`` itself made read-only: for an array just made here (no caller holds it), which
    ``_frozen`` would copy once more."""
    a.flags.writeable = False
    return a


def _det3(R: np.ndarray) -> float:
    """det R of a 3x3 matrix by the triple product, in Python floats (np.linalg.det costs more
    than the rest of a Transform's checks, and file loaders make hundreds of thousands)."""
    (a, b, c), (d, e, f), (g, h, i) = R.tolist()
    return a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g)


_EYE3 = _freeze(np.eye(3))


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
        R = _mat3(self.rotation, "Transform rotation")  # (a new array: frozen as it is)
        if np.abs(R.T @ R - _EYE3).max() > 1e-6 or _det3(R) < 0:
            raise ValueError("Transform rotation must be a proper rotation matrix (RᵀR = 1, det R = +1)")
        object.__setattr__(self, "rotation", _freeze(R))
        object.__setattr__(self, "translation", _freeze(_vec3(self.translation, "Transform translation")))

    @classmethod
    def _proper(cls, rotation: np.ndarray, translation: np.ndarray, *, fresh: bool = False) -> Transform:
        """A Transform without the checks, for a rotation that is proper by construction (a product
        of checked rotations, Rodrigues' formula of a finite axis and angle) and a finite
        translation: the file loaders make several per body, and the checks cost most of one.
        fresh: the arrays are new float arrays no caller holds (they are frozen, not copied)."""
        X = object.__new__(cls)
        keep = _freeze if fresh else _frozen
        object.__setattr__(X, "rotation", keep(rotation))
        object.__setattr__(X, "translation", keep(translation))
        return X

    @classmethod
    def _translation(cls, translation: np.ndarray) -> Transform:
        """The pure translation by a finite ``translation`` (copied), without the checks; its rotation
        is one shared read-only identity (a Transform's arrays are never written)."""
        X = object.__new__(cls)
        object.__setattr__(X, "rotation", _EYE3)
        object.__setattr__(X, "translation", _frozen(translation))
        return X

    @staticmethod
    def identity() -> Transform:
        return Transform()

    @staticmethod
    def from_rpy(rpy: Sequence[float] = (0, 0, 0), xyz: Sequence[float] = (0, 0, 0)) -> Transform:
        """URDF's fixed-axis roll, pitch, yaw: R = Rz(yaw) Ry(pitch) Rx(roll)."""
        r, p, y = _vec3(rpy, "rpy").tolist()
        xyz = _vec3(xyz, "xyz")
        cr, sr, cp, sp, cy, sy = math.cos(r), math.sin(r), math.cos(p), math.sin(p), math.cos(y), math.sin(y)
        # Rz Ry Rx multiplied out (in Python floats: numpy's overhead on 3x3 matrices is most of the time)
        R = [
            [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
            [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
            [-sp, cp * sr, cp * cr],
        ]
        return Transform._proper(np.array(R), xyz)

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
            R, p = self.rotation @ other.rotation, self.rotation @ other.translation + self.translation
            return Transform._proper(R, p, fresh=True)
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
    """A finite 3x3 matrix that is symmetric to rounding, made exactly symmetric (a new array)."""
    I = _mat3(x, what)
    (_, a, b), (c, _, d), (e, f, _) = I.tolist()
    if a == c and b == e and d == f:  # symmetric already (most are): I itself, a copy made by _mat3
        return I
    if np.abs(I - I.T).max() > 1e-9 * max(1.0, np.abs(I).max()):
        raise ValueError(f"{what} must be symmetric, got\n{I}")
    return 0.5 * (I + I.T)


def _check_physical(I: np.ndarray) -> None:
    """ValueError unless the symmetric I is positive semi-definite with principal moments that
    satisfy the triangle inequality (to rounding). A diagonal I (most files' inertias) is its own
    eigenvalues: no eigensolver then."""
    rows = I.tolist()
    scale = max(1.0, *map(abs, rows[0]), *map(abs, rows[1]), *map(abs, rows[2]))
    (a, b, c), (_, d, e), (_, _, f) = rows
    ev = sorted((a, d, f)) if b == c == e == 0.0 else np.linalg.eigvalsh(I)
    if ev[0] < -1e-12 * scale:
        raise ValueError(f"Inertia inertia is not positive semi-definite (eigenvalues {ev})")
    if ev[0] + ev[1] < ev[2] - 1e-9 * scale:
        raise ValueError(f"Inertia inertia violates the triangle inequality of principal moments {ev}")


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
        if check:
            _check_physical(I)
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
        """(a, b: arrays just made by the caller, frozen as they are)"""
        for name, value in (("mass", m), ("check", check), ("_given", given), ("_a", _freeze(a)), ("_b", _freeze(b))):
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
    if not math.isfinite(m) or m < 0:
        raise ValueError(f"Inertia mass must be finite and >= 0, got {mass}")
    return m


def _unpickle_inertia(mass, com, inertia, check):
    return Inertia(mass, com, inertia, check=check)
