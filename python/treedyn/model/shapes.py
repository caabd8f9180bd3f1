"""Collision shapes: immutable values a model's geoms are made of.

:class:`Sphere`, :class:`Capsule` (axis z, ``half_length`` from the centre to each cap's centre),
:class:`Box` (``half_extents``), :class:`Plane` (the placement's z axis is the normal, the
half-space below it solid), :class:`Cylinder` (axis z, ``half_length`` from the centre to each
flat end, as MuJoCo's size), :class:`Ellipsoid` (``radii`` along x, y, z) and :class:`ConvexMesh`
(the vertices of a convex hull, with its triangles; ``ConvexMesh.hull`` makes one from any points
or mesh by trimesh's convex hull, as MuJoCo collides a mesh geom by its hull). ``model.add_geom`` fixes one to a body or to the world as a
:class:`Geom`; contact detection between them is ``treedyn.sim.collision``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import _checks as C

__all__ = [
    "Sphere",
    "Capsule",
    "Box",
    "Plane",
    "Cylinder",
    "Ellipsoid",
    "ConvexMesh",
    "TriangleMesh",
    "MeshFile",
    "Visual",
    "VISUAL_SHAPES",
    "checked_rgba",
    "Geom",
    "ContactPair",
    "SHAPES",
    "CONDIM",
]


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


@dataclass(frozen=True)
class Cylinder:
    radius: float
    half_length: float

    def __post_init__(self):
        object.__setattr__(self, "radius", _positive(self.radius, "Cylinder radius"))
        object.__setattr__(self, "half_length", _positive(self.half_length, "Cylinder half_length"))


@dataclass(frozen=True)
class Ellipsoid:
    radii: tuple

    def __post_init__(self):
        r = np.asarray(self.radii)
        if r.shape != (3,):
            raise ValueError(f"Ellipsoid radii must be 3 numbers, got {self.radii!r}")
        object.__setattr__(self, "radii", tuple(_positive(x, "Ellipsoid radii") for x in r))


def _triangles(mesh, kind: str, n_min: int, m_min: int) -> None:
    """Check and freeze a mesh's ``vertices`` (n >= n_min, 3), finite, and ``faces`` (m >= m_min,
    3) indices of them: read-only copies."""
    V = np.array(mesh.vertices, dtype=float)
    F = np.array(mesh.faces, dtype=np.int64)
    if V.ndim != 2 or V.shape[1] != 3 or len(V) < n_min or not np.all(np.isfinite(V)):
        raise ValueError(f"{kind} vertices must be finite, of shape (n >= {n_min}, 3), got shape {V.shape}")
    if F.ndim != 2 or F.shape[1] != 3 or len(F) < m_min or F.min() < 0 or F.max() >= len(V):
        raise ValueError(f"{kind} faces must be (m >= {m_min}, 3) indices of its {len(V)} vertices")
    V.flags.writeable = F.flags.writeable = False
    object.__setattr__(mesh, "vertices", V)
    object.__setattr__(mesh, "faces", F)


@dataclass(frozen=True, eq=False)
class ConvexMesh:
    """A convex polyhedron: ``vertices`` (n, 3), the hull's own, in the geom's frame, and its
    outward-wound ``faces`` (m, 3) vertex indices. Compared by identity (its arrays are large)."""

    vertices: np.ndarray
    faces: np.ndarray

    def __post_init__(self):
        _triangles(self, "ConvexMesh", 4, 4)

    @classmethod
    def hull(cls, points) -> ConvexMesh:
        """The convex hull of ``points`` (n, 3) (or of a trimesh.Trimesh's vertices), by trimesh
        (Qhull). ImportError naming the extra when trimesh is not installed; ValueError when the
        points span no volume."""
        try:
            import trimesh
        except ImportError:
            raise ImportError(
                "a mesh collision shape needs trimesh for its convex hull: pip install 'treedyn[collision]'"
            ) from None
        P = np.asarray(getattr(points, "vertices", points), dtype=float)
        if P.ndim != 2 or P.shape[1] != 3 or len(P) < 4:
            raise ValueError(f"ConvexMesh.hull needs (n >= 4, 3) points, got shape {P.shape}")
        try:
            h = trimesh.convex.convex_hull(P)
        except Exception as e:  # Qhull's errors: flat or degenerate point sets
            raise ValueError(f"ConvexMesh.hull: the points span no volume ({type(e).__name__})") from None
        if h.volume <= 0 or len(h.faces) < 4:
            raise ValueError("ConvexMesh.hull: the points span no volume")
        return cls(np.asarray(h.vertices), np.asarray(h.faces))


@dataclass(frozen=True, eq=False)
class TriangleMesh:
    """A surface to draw (not to collide: any shape, convex or not): ``vertices`` (n, 3) in the
    visual's frame and ``faces`` (m, 3) vertex indices. Compared by identity."""

    vertices: np.ndarray
    faces: np.ndarray

    def __post_init__(self):
        _triangles(self, "TriangleMesh", 3, 1)


@dataclass(frozen=True)
class MeshFile:
    """A mesh file to draw (STL, OBJ, DAE, ... read by trimesh when drawn, not when loaded): its
    absolute ``path`` and the ``scale`` along x, y, z applied to its vertices (a URDF's <mesh>)."""

    path: str
    scale: tuple = (1.0, 1.0, 1.0)

    def __post_init__(self):
        if not isinstance(self.path, str) or not self.path:
            raise TypeError(f"MeshFile path must be a non-empty string, got {self.path!r}")
        s = np.asarray(self.scale, dtype=float)
        if s.shape != (3,) or not np.all(np.isfinite(s)) or np.any(s == 0):
            raise ValueError(f"MeshFile scale must be 3 finite non-zero numbers, got {self.scale!r}")
        object.__setattr__(self, "scale", tuple(float(x) for x in s))


@dataclass(frozen=True)
class Visual:
    """What a body looks like (``Model.add_visual``; drawn by td.view, never collided): a shape
    (Sphere, Capsule, Box, Cylinder, Ellipsoid, ConvexMesh, TriangleMesh or MeshFile) fixed to a
    body (index; 0: the world) at ``placement`` (a treedyn.Transform in the body's frame), in the
    colour ``rgba`` (4 numbers in [0, 1]) or None (the viewer's colour for the body)."""

    name: str
    body: int
    shape: object
    placement: object
    rgba: tuple | None = None


SHAPES = (Sphere, Capsule, Box, Plane, Cylinder, Ellipsoid, ConvexMesh)
VISUAL_SHAPES = (Sphere, Capsule, Box, Cylinder, Ellipsoid, ConvexMesh, TriangleMesh, MeshFile)
#: MuJoCo's contact dimensionalities: 1 frictionless, 3 sliding friction; 4 (torsional) and 6
#: (rolling) are kept but act as 3 (treedyn models sliding friction only)
CONDIM = (1, 3, 4, 6)


DEFAULT_SOLREF = (0.02, 1.0)  # MuJoCo's default solref (time constant, damping ratio) and solimp
DEFAULT_SOLIMP = (0.9, 0.95, 0.001, 0.5, 2.0)  # (d0, dmax, width, midpoint, power)


@dataclass(frozen=True)
class Geom:
    """A shape fixed to a body (index; 0 is the world) at ``placement`` (a treedyn.Transform in the
    body's frame). ``contype``/``conaffinity``: MuJoCo's bit masks (a pair collides when
    ``a.contype & b.conaffinity or b.contype & a.conaffinity``). ``condim``: MuJoCo's (1:
    frictionless; 3: sliding friction; 4: and torsional; 6: and rolling, ``torsional_friction``,
    ``rolling_friction``: MuJoCo's pyramidal soft cone); a pair takes the larger condim and the larger
    coefficients (of two priorities, the higher one's: ``priority``). ``margin``: a pair (the sum of the two margins, as MuJoCo 4.0 adds them) touches when its surfaces are
    closer than it and rests at that distance (MuJoCo's dist − margin). ``rgba``: its colour in the
    viewer (an MJCF geom's rgba or material), no part of the dynamics. ``solref``, ``solimp``,
    ``solmix``: MuJoCo's soft-contact parameters, used by ContactSimulator(soft=True)
    (Model.set_geom_softness; docs/contact.md)."""

    name: str
    body: int
    shape: object
    placement: object
    friction: float = 1.0
    contype: int = 1
    conaffinity: int = 1
    condim: int = 3
    margin: float = 0.0
    rgba: tuple | None = None  # its colour in td.view (4 numbers in [0, 1]; None: the viewer's)
    # MuJoCo's soft contact parameters (ContactSimulator(soft=True)): solref, solimp, solmix
    solref: tuple = DEFAULT_SOLREF
    solimp: tuple = DEFAULT_SOLIMP
    solmix: float = 1.0
    # the point (body frame) whose translational inverse inertia weighs this geom's soft contacts: its
    # file body's centre of mass (MuJoCo's body_invweight0; a welded body merged into its parent
    # keeps its own); None: the body's centre of mass
    weight_point: tuple | None = None
    # MuJoCo's priority: of a pair's two geoms, the higher one's condim, friction, solref, solimp are the pair's
    priority: int = 0
    # MuJoCo's torsional (condim 4, 6) and rolling (condim 6) friction coefficients, its defaults; a pair takes
    # the larger of each
    torsional_friction: float = 0.005
    rolling_friction: float = 0.0001


def checked_rgba(rgba, what: str) -> tuple | None:
    """rgba as a tuple of 4 floats in [0, 1] (None stays None); ValueError naming ``what``."""
    if rgba is None:
        return None
    x = C.array(rgba, what, (4,))
    if np.any(x < 0) or np.any(x > 1):
        raise ValueError(f"{what} must be 4 numbers in [0, 1], got {x.tolist()}")
    return tuple(x.tolist())


def friction_triple(friction, what: str, rest: tuple) -> tuple:
    """(sliding, torsional, rolling) from a coefficient or 1 to 3 of them (MuJoCo's geom friction),
    each finite and >= 0, the missing ones ``rest``; ValueError/TypeError naming ``what``."""
    x = np.atleast_1d(C.array(friction, what, finite=False))
    if x.ndim != 1 or not 1 <= len(x) <= 3:
        raise ValueError(f"{what} must be a number or 1 to 3 numbers (sliding, torsional, rolling), got {friction!r}")
    if not np.all(np.isfinite(x)) or np.any(x < 0):
        raise ValueError(f"{what} must be finite and >= 0, got {x.tolist()}")
    out = tuple(float(v) for v in x) + tuple(rest[len(x) - 1 :])
    return out[0], out[1], out[2]


@dataclass(frozen=True)
class ContactPair:
    """An explicit candidate pair of geoms (indices), colliding whatever the filters, with its own
    friction, margin and condim where not None (MJCF's <contact><pair>; Model.add_contact_pair)."""

    geom1: int
    geom2: int
    friction: float | None = None
    margin: float | None = None
    condim: int | None = None
    solref: tuple | None = None  # (ContactSimulator(soft=True)); None: MuJoCo's defaults, as a <pair>'s
    solimp: tuple | None = None
    torsional_friction: float | None = None  # (condim 4, 6; None: the geoms' larger)
    rolling_friction: float | None = None  # (condim 6)
