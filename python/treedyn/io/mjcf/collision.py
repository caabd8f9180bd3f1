"""The collision geoms of a body: its sphere, capsule, box and plane ``<geom>``s that collide."""

from __future__ import annotations

import numpy as np

from ...model import Transform
from ...model.shapes import Box, Capsule, Plane, Sphere
from .._common import z_to_vector

__all__ = ["collision_geoms"]


def collision_geoms(r, contents, body):
    """The body's sphere, capsule, box and plane geoms that collide (contype or conaffinity
    non-zero) as (shape, pose in the body frame, add_geom keywords); other types are skipped."""
    out = []
    for _, g, X, cls in (c for c in contents if c[0] == "geom"):
        r.current = g
        a = r.attrs(g, cls)
        kind = a.get("type", "sphere")
        masks = []
        for key in ("contype", "conaffinity"):
            x = float(r.vec(g, key, 1, a, (1,))[0])
            if not (0 <= x < 2**31 and x == int(x)):
                raise r.err(f"geom of body {body!r}: {key}={a.get(key)!r} is not a non-negative integer", g)
            masks.append(int(x))
        contype, conaffinity = masks
        if contype == 0 and conaffinity == 0:
            continue  # visual only
        if kind not in ("sphere", "capsule", "box", "plane"):
            continue  # cylinders, ellipsoids, meshes: not collision shapes yet (documented above)
        size = np.r_[r.vec(g, "size", None, a, (0, 0, 0)), np.zeros(3)][:3]
        pose = r.pose(g, a)
        if "fromto" in a and kind in ("capsule", "box"):
            ft = r.vec(g, "fromto", 6, a)
            d = ft[3:] - ft[:3]
            L = float(np.linalg.norm(d))
            if L < 1e-12:
                raise r.err(f"geom of body {body!r}: fromto has zero length", g)
            pose = Transform(z_to_vector(d), 0.5 * (ft[:3] + ft[3:]))
            size = np.array([size[0], 0.5 * L, 0.0]) if kind == "capsule" else np.array([size[0], size[0], 0.5 * L])
        try:
            shape = {
                "sphere": lambda: Sphere(size[0]),
                "capsule": lambda: Capsule(size[0], size[1]),
                "box": lambda: Box(size),
                "plane": lambda: Plane(),
            }[kind]()
        except (ValueError, TypeError) as e:
            raise r.err(f"{kind} geom of body {body!r}: {e}", g) from None
        kw = {"friction": float(r.vec(g, "friction", None, a, (1.0,))[0]), "contype": contype}
        kw["conaffinity"] = conaffinity
        if a.get("name"):
            kw["name"] = a["name"]
        out.append((shape, X @ pose, kw))
    return out
