"""Contact detection between a model's geoms (issue 14, item 2).

The shapes are ``treedyn.model.shapes``' values; ``model.add_geom`` fixes one to a body or to the
world. :func:`collide` returns the contacts at q: world point (midway between the
two surfaces), unit normal from the first geom towards the second, and depth (> 0: penetration).

Every pair of shapes but plane–plane has a closed form in C++ (``contact/collision.hpp``, the code
the C++ contact step runs too; ``_core.collide_geoms`` here): a plane touches each penetrating
sphere, cap centre or box corner (a box resting on a face: 4 points); sphere–sphere, –capsule and
–box and crossing capsules touch at their nearest points; parallel overlapping capsules at the
overlap's 2 ends, a capsule lying along a box's face at its 2 ends over the face; box–box by
separating axes, a face axis giving a patch (the incident face clipped to the reference face: up to
8 points, so that a stack of boxes resists tipping and twisting), an edge axis one point.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import _core
from ..model.cache import cached
from ..model.shapes import Box, Capsule, Plane, Sphere

__all__ = ["Contacts", "collide", "collision_pairs", "geom_pose"]

#: the shapes' codes in the C++ collision (contact/collision.hpp ShapeKind)
SHAPE_KIND = {Plane: 0, Sphere: 1, Capsule: 2, Box: 3}


@dataclass(frozen=True)
class Contacts:
    """Contacts at one configuration, one row each."""

    geoms: np.ndarray  # (k, 2) geom indices (a, b)
    bodies: np.ndarray  # (k, 2) their bodies
    points: np.ndarray  # (k, 3) world points midway between the surfaces
    normals: np.ndarray  # (k, 3) unit normals from a towards b
    depths: np.ndarray  # (k,) penetration depths (> 0)
    friction: np.ndarray  # (k,) the pair's friction coefficient: max of the two (MuJoCo's rule)

    def __len__(self) -> int:
        return len(self.depths)


def collision_pairs(model) -> list[tuple[int, int]]:
    """The geom pairs that may touch: different bodies, neither the other's parent unless that is
    the world (as MuJoCo's parent filter), the bit masks compatible, not two planes. A body's parent
    here is its link's: the joint-only bodies between (massless, no geom: a multi-joint MJCF body's
    or a URDF's chain of joints, as the loaders split them) are passed over, so a thigh on three
    hip hinges does not touch the pelvis it hangs from, as in MuJoCo."""
    geoms, parents = model.geoms, model.parents
    has_geom = np.zeros(model.n_bodies, dtype=bool)
    has_geom[[g.body for g in geoms]] = True
    joint_only = [not has_geom[i] and model.inertias[i].mass == 0.0 for i in range(model.n_bodies)]

    def link_parent(i):
        p = parents[i]
        while p > 0 and joint_only[p]:
            p = parents[p]
        return p

    out = []
    for i, a in enumerate(geoms):
        for j in range(i + 1, len(geoms)):
            b = geoms[j]
            if a.body == b.body:
                continue
            # a body and its parent (not the world: a robot on its base still touches the ground)
            if (link_parent(a.body) == b.body and b.body != 0) or (link_parent(b.body) == a.body and a.body != 0):
                continue
            if not (a.contype & b.conaffinity or b.contype & a.conaffinity):
                continue
            if isinstance(a.shape, Plane) and isinstance(b.shape, Plane):
                continue
            out.append((i, j))
    return out


def _size(shape) -> tuple[float, float, float]:
    """A shape's sizes as contact/collision.hpp's GeomData takes them."""
    if isinstance(shape, Sphere):
        return (shape.radius, 0.0, 0.0)
    if isinstance(shape, Capsule):
        return (shape.radius, shape.half_length, 0.0)
    if isinstance(shape, Box):
        return tuple(shape.half_extents)
    return (0.0, 0.0, 0.0)


def _geom_arrays(model, _key) -> tuple:
    """The geoms as _core.collide_geoms takes them (kinds, bodies, rotations, translations, sizes,
    friction), made once per model revision (model/cache.py), read-only."""
    geoms = model.geoms
    G = len(geoms)
    out = (
        np.array([SHAPE_KIND[type(g.shape)] for g in geoms], dtype=np.int64),
        np.array([g.body for g in geoms], dtype=np.int64),
        np.array([np.asarray(g.placement.rotation, dtype=float) for g in geoms]).reshape(G, 3, 3),
        np.array([np.asarray(g.placement.translation, dtype=float) for g in geoms]).reshape(G, 3),
        np.array([_size(g.shape) for g in geoms], dtype=float).reshape(G, 3),
        np.array([g.friction for g in geoms], dtype=float),
    )
    for a in out:
        a.flags.writeable = False
    return out


def _default_pairs(model, _key) -> np.ndarray:
    pairs = np.array(collision_pairs(model), dtype=np.int64).reshape(-1, 2)
    pairs.flags.writeable = False
    return pairs


def geom_pose(geom, R, p) -> tuple[np.ndarray, np.ndarray]:
    """The world rotation and position of a geom, from the bodies' world poses (R, p) at q."""
    Rb, X = R[geom.body], geom.placement
    return Rb @ np.asarray(X.rotation), Rb @ np.asarray(X.translation) + p[geom.body]


def collide(model, q, pairs=None) -> Contacts:
    """The contacts between the model's geoms at q (see the module's docstring), pair by pair in the
    order of ``pairs``. pairs: the geom index pairs to test (default: collision_pairs(model), kept
    with the model; a stepper computes them once)."""
    if not hasattr(model, "geoms") or not hasattr(model, "core"):
        raise TypeError(f"model must be a treedyn.Model, got {type(model).__name__}")
    R, p = _core.forward_kinematics(model.core, q)
    if pairs is None:
        pairs = cached(model, "pairs", _default_pairs)
    else:
        pairs = np.asarray(pairs, dtype=np.int64)
        if pairs.size == 0:
            pairs = pairs.reshape(0, 2)
    return Contacts(*_core.collide_geoms(*cached(model, "geoms", _geom_arrays), pairs, R, p))
