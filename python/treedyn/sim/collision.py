"""Contact detection between a model's geoms (issue 14, item 2).

The shapes are ``treedyn.model.shapes``' values; ``model.add_geom`` fixes one to a body or to the
world. :func:`collide` returns the contacts at q: world point (midway between the
two surfaces), unit normal from the first geom towards the second, and depth (> 0: penetration).

Closed forms for every pair with a plane or a sphere and for capsule–capsule (a box on a plane
gives its penetrating corners, a capsule its penetrating cap centres, so resting shapes get
enough points); box–box and box–capsule go to coal (the collision library of the Pinocchio
packages, `pip install coal`), which returns one point per pair.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..model.shapes import Box, Capsule, Plane, Sphere

__all__ = ["Contacts", "collide", "collision_pairs", "geom_pose"]


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
    the world (as MuJoCo's parent filter), the bit masks compatible, not two planes."""
    geoms, parents = model.geoms, model.parents
    out = []
    for i, a in enumerate(geoms):
        for j in range(i + 1, len(geoms)):
            b = geoms[j]
            if a.body == b.body:
                continue
            # a body and its parent (not the world: a robot on its base still touches the ground)
            if (parents[a.body] == b.body and b.body != 0) or (parents[b.body] == a.body and a.body != 0):
                continue
            if not (a.contype & b.conaffinity or b.contype & a.conaffinity):
                continue
            if isinstance(a.shape, Plane) and isinstance(b.shape, Plane):
                continue
            out.append((i, j))
    return out


# ------------------------------------------------------------------------------ closed forms
# each returns a list of (point, normal from the first shape to the second, depth) with depth > 0


def _sphere_sphere(c1, r1, c2, r2):
    d = c2 - c1
    dist = float(np.linalg.norm(d))
    depth = r1 + r2 - dist
    if depth <= 0:
        return []
    n = d / dist if dist > 1e-12 else np.array([0.0, 0.0, 1.0])
    return [(c1 + n * (r1 - 0.5 * depth), n, depth)]


def _plane_points(p0, n, centres, r):
    """Spheres of radius r (r = 0: points) at `centres` against the plane (p0, n)."""
    out = []
    for c in centres:
        dist = float(n @ (c - p0))
        depth = r - dist
        if depth > 0:
            out.append((c - n * (0.5 * (r + dist)), n, depth))
    return out


def _segment_point(a, b, x):
    """The point of segment [a, b] nearest to x."""
    d = b - a
    t = np.clip((x - a) @ d / (d @ d), 0.0, 1.0)
    return a + t * d


def _segment_segment(p1, q1, p2, q2):
    """Nearest points of segments [p1, q1] and [p2, q2] (Ericson, Real-Time Collision Detection §5.1.9)."""
    d1, d2, r = q1 - p1, q2 - p2, p1 - p2
    a, e, f = d1 @ d1, d2 @ d2, d2 @ r
    c, b = d1 @ r, d1 @ d2
    denom = a * e - b * b
    s = np.clip((b * f - c * e) / denom, 0.0, 1.0) if denom > 1e-14 * a * e else 0.0
    t = (b * s + f) / e
    if t < 0.0:
        t, s = 0.0, np.clip(-c / a, 0.0, 1.0)
    elif t > 1.0:
        t, s = 1.0, np.clip((b - c) / a, 0.0, 1.0)
    return p1 + s * d1, p2 + t * d2


def _box_sphere(R, p, h, c, r):
    """Box (world rotation R, centre p, half extents h) against a sphere: normal from box to sphere."""
    x = R.T @ (c - p)
    inside = np.all(np.abs(x) <= h)
    if not inside:
        y = np.clip(x, -h, h)
        d = x - y
        dist = float(np.linalg.norm(d))
        if dist >= r:
            return []
        n = R @ (d / dist)
        depth = r - dist
        return [(c - n * (r - 0.5 * depth), n, depth)]
    k = int(np.argmin(h - np.abs(x)))  # the nearest face
    sgn = 1.0 if x[k] >= 0 else -1.0
    n = R[:, k] * sgn
    depth = r + (h[k] - abs(x[k]))
    return [(c - n * (r - 0.5 * depth), n, depth)]


def _capsule_ends(R, p, shape):
    axis = R[:, 2] * shape.half_length
    return p - axis, p + axis


def _box_corners(R, p, h):
    signs = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], dtype=float)
    return p + (signs * h) @ R.T


def _coal_pair(sa, Ra, pa, sb, Rb, pb):
    try:
        import coal
    except ImportError as e:  # pragma: no cover - coal comes with the test extras
        raise ImportError(
            f"collide: a {type(sa).__name__}–{type(sb).__name__} pair needs coal (pip install coal)"
        ) from e

    def obj(s):
        if isinstance(s, Box):
            return coal.Box(*(2.0 * np.asarray(s.half_extents)))
        if isinstance(s, Capsule):
            return coal.Capsule(s.radius, 2.0 * s.half_length)
        return coal.Sphere(s.radius)

    req, res = coal.CollisionRequest(), coal.CollisionResult()
    if not coal.collide(obj(sa), coal.Transform3s(Ra, pa), obj(sb), coal.Transform3s(Rb, pb), req, res):
        return []
    return [
        (np.array(c.pos), np.array(c.normal), -float(c.penetration_depth))
        for c in res.getContacts()
        if c.penetration_depth < 0
    ]


def _pair(sa, Ra, pa, sb, Rb, pb):
    """Contacts of shape a (world pose Ra, pa) against shape b, normals from a to b."""
    if isinstance(sb, Plane) or (isinstance(sa, Sphere) and not isinstance(sb, (Sphere, Plane))):
        return [(x, -n, d) for x, n, d in _pair(sb, Rb, pb, sa, Ra, pa)]  # b first, normals flipped
    if isinstance(sa, Plane):
        n, p0 = Ra[:, 2], pa
        if isinstance(sb, Sphere):
            return _plane_points(p0, n, [pb], sb.radius)
        if isinstance(sb, Capsule):
            return _plane_points(p0, n, _capsule_ends(Rb, pb, sb), sb.radius)
        return _plane_points(p0, n, _box_corners(Rb, pb, np.asarray(sb.half_extents)), 0.0)
    if isinstance(sa, Sphere):  # sb is a sphere
        return _sphere_sphere(pa, sa.radius, pb, sb.radius)
    if isinstance(sb, Sphere):
        if isinstance(sa, Capsule):
            return _sphere_sphere(_segment_point(*_capsule_ends(Ra, pa, sa), pb), sa.radius, pb, sb.radius)
        return _box_sphere(Ra, pa, np.asarray(sa.half_extents), pb, sb.radius)
    if isinstance(sa, Capsule) and isinstance(sb, Capsule):
        x, y = _segment_segment(*_capsule_ends(Ra, pa, sa), *_capsule_ends(Rb, pb, sb))
        return _sphere_sphere(x, sa.radius, y, sb.radius)
    return _coal_pair(sa, Ra, pa, sb, Rb, pb)


def geom_pose(geom, R, p) -> tuple[np.ndarray, np.ndarray]:
    """The world rotation and position of a geom, from the bodies' world poses (R, p) at q."""
    Rb, X = R[geom.body], geom.placement
    return Rb @ np.asarray(X.rotation), Rb @ np.asarray(X.translation) + p[geom.body]


def collide(model, q, pairs=None) -> Contacts:
    """The contacts between the model's geoms at q (see the module's docstring). pairs: the geom
    index pairs to test (default: collision_pairs(model); a stepper computes them once)."""
    from .._core import forward_kinematics

    if not hasattr(model, "geoms") or not hasattr(model, "core"):
        raise TypeError(f"model must be a treedyn.Model, got {type(model).__name__}")
    R, p = forward_kinematics(model.core, q)
    geoms = model.geoms
    pairs = collision_pairs(model) if pairs is None else pairs
    pose = [None] * len(geoms)
    rows, balls = [], []  # balls: (plane, sphere) pairs, done together below

    def world(i):
        if pose[i] is None:
            pose[i] = geom_pose(geoms[i], R, p)
        return pose[i]

    for i, j in pairs:
        a, b = geoms[i], geoms[j]
        if isinstance(a.shape, Plane) and isinstance(b.shape, Sphere):
            balls.append((i, j, 1.0))
            continue
        if isinstance(b.shape, Plane) and isinstance(a.shape, Sphere):
            balls.append((j, i, -1.0))
            continue
        for x, n, d in _pair(a.shape, *world(i), b.shape, *world(j)):
            rows.append((i, j, a.body, b.body, x, n, d, max(a.friction, b.friction)))
    out = _rows(rows)
    if balls:
        out = _concat(out, _plane_spheres(geoms, R, p, balls))
    return out


def _plane_spheres(geoms, R, p, balls) -> Contacts:
    """Every (plane, sphere) pair at once; sign −1 when the sphere is the pair's first geom."""
    plane, ball, sign = (np.array(x) for x in zip(*balls))
    pb = np.array([geoms[i].body for i in plane])
    sb = np.array([geoms[j].body for j in ball])
    n = np.einsum("bij,bj->bi", R[pb], np.array([np.asarray(geoms[i].placement.rotation)[:, 2] for i in plane]))
    p0 = np.einsum("bij,bj->bi", R[pb], np.array([geoms[i].placement.translation for i in plane])) + p[pb]
    c = np.einsum("bij,bj->bi", R[sb], np.array([geoms[j].placement.translation for j in ball])) + p[sb]
    r = np.array([geoms[j].shape.radius for j in ball])
    dist = np.einsum("bi,bi->b", n, c - p0)
    depth = r - dist
    hit = depth > 0
    first = np.where(sign > 0, plane, ball)[hit]
    second = np.where(sign > 0, ball, plane)[hit]
    mu = np.array([max(geoms[i].friction, geoms[j].friction) for i, j in zip(first, second)])
    return Contacts(
        geoms=np.stack([first, second], axis=1).astype(int),
        bodies=np.array([[geoms[i].body, geoms[j].body] for i, j in zip(first, second)], dtype=int).reshape(-1, 2),
        points=(c - n * (0.5 * (r + dist))[:, None])[hit],
        normals=(n * sign[:, None])[hit],
        depths=depth[hit],
        friction=mu.reshape(-1),
    )


def _rows(rows) -> Contacts:
    if not rows:
        z = np.zeros((0, 3))
        return Contacts(np.zeros((0, 2), int), np.zeros((0, 2), int), z, z.copy(), np.zeros(0), np.zeros(0))
    return Contacts(
        geoms=np.array([r[:2] for r in rows], dtype=int),
        bodies=np.array([r[2:4] for r in rows], dtype=int),
        points=np.array([r[4] for r in rows], dtype=float),
        normals=np.array([r[5] for r in rows], dtype=float),
        depths=np.array([r[6] for r in rows], dtype=float),
        friction=np.array([r[7] for r in rows], dtype=float),
    )


def _concat(a: Contacts, b: Contacts) -> Contacts:
    if not len(a):
        return b
    return Contacts(
        *(
            np.concatenate([x, y])
            for x, y in zip(
                (a.geoms, a.bodies, a.points, a.normals, a.depths, a.friction),
                (b.geoms, b.bodies, b.points, b.normals, b.depths, b.friction),
            )
        )
    )
