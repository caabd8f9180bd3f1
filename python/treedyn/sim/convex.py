"""Contacts of the pairs the C++ collision has no closed form for (a cylinder, an ellipsoid or a
convex mesh against anything): treedyn.sim.collision.collide hands them here.

- A plane against a cylinder, an ellipsoid or a convex mesh: closed forms with several points where
  the shape rests on a face, so that it stands (one point per pair would let it rock). A
  cylinder: on each flat end, the rim's point deepest below the plane and the two rim points 120°
  from it (MuJoCo's mjc_PlaneCylinder takes such a triangle too): a cylinder standing on an end
  rests on 3 points, one lying on its side on the 2 ends' deepest points. An ellipsoid: its support
  point along −n (x = −D²Rᵀn / ‖DRᵀn‖ in its frame, D = diag(radii)). A convex mesh: MuJoCo
  4.0's points (measured against its mj_forward): of the hull's polygons (coplanar triangles
  merged) at its deepest vertex, the one whose normal is nearest −n, its vertices within the
  margin; of more than 4, the deepest a, the farthest from it in the plane b, and the farthest on
  either side of the line ab.
- A sphere against an ellipsoid (its centre outside it): the ellipsoid's point nearest the centre,
  x_i = a_i² y_i/(a_i² + t) with t > 0 the root of Σ (a_i y_i/(a_i² + t))² = 1 (the Lagrange
  condition of min ‖x − y‖ on the surface; the sum decreases and is convex in t, so Newton from
  t = 0 rises to the root monotonically), exact to rounding: a ball resting on the crown of an
  ellipsoid gets a vertical normal (GJK/EPA's is off by ~1e-4 there, and the DeepMind Control
  quadruped's ball rolled off its back).
- Every other pair: coal's GJK/EPA signed distance between the two convex shapes (coal.distance:
  the nearest points, or the deepest ones when they overlap), one point. coal is an optional
  dependency (``pip install 'treedyn[collision]'``): only a model with such a pair needs it.

Each contact as the C++ closed forms give it: the point midway between the surfaces, the normal
from the first geom to the second, the depth plus the pair's margin (kept when > 0: the surfaces
closer than the margin).
"""

from __future__ import annotations

import functools

import numpy as np

from ..model.shapes import Box, Capsule, ConvexMesh, Cylinder, Ellipsoid, Plane, Sphere

__all__ = ["convex_contacts", "coal_shape"]


@functools.lru_cache(maxsize=256)
def _polygons(mesh):
    """A ConvexMesh's faces as MuJoCo keeps them: its triangles merged into polygons (edge neighbours whose unit
    normals' cosine exceeds 1 - 1e-6), numbered by their first triangle: (normals, each polygon's sorted
    vertices, each vertex's polygons) — as contact/collision.hpp's hull_polygons."""
    V, F = mesh.vertices, np.asarray(mesh.faces)
    n = np.cross(V[F[:, 1]] - V[F[:, 0]], V[F[:, 2]] - V[F[:, 0]])
    n /= np.linalg.norm(n, axis=1)[:, None]
    root = list(range(len(F)))

    def find(f):
        while root[f] != f:
            root[f] = root[root[f]]
            f = root[f]
        return f

    edges = sorted((min(a, b), max(a, b), f) for f, t in enumerate(F.tolist()) for a, b in zip(t, t[1:] + t[:1]))
    for e0, e1 in zip(edges, edges[1:]):
        if e0[:2] == e1[:2] and n[e1[2]] @ n[e0[2]] > 1.0 - 1e-6:
            root[find(e1[2])] = find(e0[2])
    ids, normals, members = {}, [], []
    for f, t in enumerate(F.tolist()):
        r = find(f)
        if r not in ids:
            ids[r] = len(members)
            normals.append(n[r])
            members.append(set())
        members[ids[r]].update(t)
    members = [sorted(m) for m in members]
    incident = [[] for _ in range(len(V))]
    for k, m in enumerate(members):
        for v in m:
            incident[v].append(k)
    return np.array(normals), members, incident


def _spread(V, d, near, n):
    """Four of the points V[near] (distances d) spread over a plane patch (normal n): the deepest a, the farthest
    from it in the plane b, and the farthest on either side of the line ab (the first of equals, as the C++ loop)."""
    a = near[np.argmin(d[near])]
    flat = V[near] - V[a]
    flat -= np.outer(flat @ n, n)
    reach = (flat * flat).sum(axis=1)
    b = near[np.argmax(reach)] if reach.max() > 0 else a
    t = flat @ np.cross(n, flat[np.searchsorted(near, b)])
    left = near[np.argmax(t)] if t.max() > 0 else a
    right = near[np.argmin(t)] if t.min() < 0 else a
    return [a] + [j for j in (b,) if j != a] + [j for j in (left, right) if j not in (a, b)]


def _plane_points(shape, R, p, n, p0, margin):
    """The points of a shape (world pose R, p) within ``margin`` of the plane (normal n through p0)
    or below it: [(point on the shape, signed distance)]."""
    if isinstance(shape, Cylinder):
        a, r = R[:, 2], shape.radius
        u = n - (n @ a) * a
        nu = np.linalg.norm(u)
        e1 = -u / nu if nu > 1e-9 else R[:, 0]  # the end flat on the plane: any rim direction
        e2 = np.cross(a, e1)
        pts = []
        for c in (p - shape.half_length * a, p + shape.half_length * a):
            for phi in (0.0, 2 * np.pi / 3, -2 * np.pi / 3):
                pts.append(c + r * (np.cos(phi) * e1 + np.sin(phi) * e2))
        V = np.array(pts)
    elif isinstance(shape, Ellipsoid):
        D = np.asarray(shape.radii)
        m = D * (R.T @ n)
        V = (p + R @ (-D * m / np.linalg.norm(m)))[None]
    else:  # ConvexMesh: MuJoCo 4.0's points: of the polygons at its deepest vertex, the one facing the plane most,
        # its vertices within the margin, at most 4 spread over it (_spread)
        V = shape.vertices @ R.T + p
        d = (V - p0) @ n
        a = int(np.argmin(d))
        if not d[a] < margin:
            return []
        normals, members, incident = _polygons(shape)
        face = min(incident[a], key=lambda k: normals[k] @ (R.T @ n))
        near = np.array([j for j in members[face] if d[j] < margin])
        chosen = near if len(near) <= 4 else _spread(V, d, near, n)
        return list(zip(V[chosen], d[chosen]))
    d = (V - p0) @ n
    keep = d < margin
    return list(zip(V[keep], d[keep]))


def require_coal(model, pairs) -> None:
    """ImportError naming the extra, before any step, when one of the pairs collided in Python
    (``pairs``) needs coal (neither geom a plane) and coal is not installed."""
    for i, j in pairs:
        a, b = model.geoms[int(i)].shape, model.geoms[int(j)].shape
        if not (isinstance(a, Plane) or isinstance(b, Plane)):
            coal_shape(b if isinstance(a, (Sphere, Capsule, Box)) else a)  # (raises without coal)
            return


def coal_shape(shape):
    """The coal collision object of a treedyn shape (its own frame)."""
    try:
        import coal
    except ImportError:
        raise ImportError(
            f"contact with a {type(shape).__name__} against a shape other than a plane needs coal "
            "(GJK/EPA): pip install 'treedyn[collision]'"
        ) from None
    if isinstance(shape, Sphere):
        return coal.Sphere(shape.radius)
    if isinstance(shape, Capsule):
        return coal.Capsule(shape.radius, 2 * shape.half_length)
    if isinstance(shape, Box):
        return coal.Box(*(2 * np.asarray(shape.half_extents)))
    if isinstance(shape, Cylinder):
        return coal.Cylinder(shape.radius, 2 * shape.half_length)
    if isinstance(shape, Ellipsoid):
        return coal.Ellipsoid(*shape.radii)
    if isinstance(shape, ConvexMesh):
        pts = coal.StdVec_Vec3s()
        for v in shape.vertices:
            pts.append(np.array(v, dtype=float))
        return coal.ConvexBase.convexHull(pts, False, "")
    raise TypeError(f"no coal shape for {type(shape).__name__}")


def ellipsoid_nearest(radii, y):
    """The point of the ellipsoid x·diag(radii)⁻²·x = 1 nearest y (its frame), for y outside it
    (the module's docstring); None for y inside or on it."""
    a2 = np.asarray(radii, dtype=float) ** 2
    w = a2 * np.asarray(y, dtype=float) ** 2  # (a_i y_i)²
    if w @ (1.0 / a2**2) <= 1.0:
        return None
    t = 0.0
    for _ in range(100):
        s = a2 + t
        F, dF = w @ s**-2 - 1.0, -2.0 * (w @ s**-3)
        step = -F / dF
        t += step
        if step <= 4 * np.finfo(float).eps * t:
            break
    return a2 * y / (a2 + t)


def _sphere_ellipsoid(sphere, Rs, ps, ellipsoid, Re, pe, margin):
    """[(point, normal ellipsoid → sphere, margin − distance)], or None where the sphere's centre
    is inside the ellipsoid (then GJK/EPA)."""
    y = Re.T @ (ps - pe)
    x = ellipsoid_nearest(ellipsoid.radii, y)
    if x is None:
        return None
    n = Re @ (x / np.asarray(ellipsoid.radii, dtype=float) ** 2)
    n /= np.linalg.norm(n)
    xw = Re @ x + pe
    dist = float(n @ (ps - xw)) - sphere.radius
    if dist >= margin:
        return []
    return [(xw + 0.5 * dist * n, n, margin - dist)]  # midway: the sphere's surface is at xw + dist n


def convex_contacts(shape_a, Ra, pa, shape_b, Rb, pb, margin, coal_objects=None):
    """[(point, normal a → b, depth + margin)] of two shapes at their world poses (the module's
    docstring). coal_objects: (coal shape of a, of b), made here when None."""
    out = []
    if isinstance(shape_a, Plane) or isinstance(shape_b, Plane):
        flip = isinstance(shape_b, Plane)
        (Rp, pp), (shape, R, p) = ((Rb, pb), (shape_a, Ra, pa)) if flip else ((Ra, pa), (shape_b, Rb, pb))
        n = Rp[:, 2]
        for x, d in _plane_points(shape, R, p, n, pp, margin):
            out.append((x - 0.5 * d * n, -n if flip else n, margin - d))
        return out
    for flip, (s1, R1, p1, s2, R2, p2) in enumerate(
        ((shape_a, Ra, pa, shape_b, Rb, pb), (shape_b, Rb, pb, shape_a, Ra, pa))
    ):
        if isinstance(s1, Ellipsoid) and isinstance(s2, Sphere):
            found = _sphere_ellipsoid(s2, R2, p2, s1, R1, p1, margin)
            if found is not None:
                return [(x, -n if flip else n, d) for x, n, d in found]
    ca, cb = coal_objects if coal_objects is not None else (coal_shape(shape_a), coal_shape(shape_b))
    import coal

    req, res = coal.DistanceRequest(), coal.DistanceResult()
    req.enable_signed_distance = True
    dist = coal.distance(ca, coal.Transform3s(Ra, pa), cb, coal.Transform3s(Rb, pb), req, res)
    if dist < margin:
        x = 0.5 * (np.asarray(res.getNearestPoint1()) + np.asarray(res.getNearestPoint2()))
        normal = np.asarray(res.normal, dtype=float)
        out.append((x, normal / np.linalg.norm(normal), margin - dist))
    return out
