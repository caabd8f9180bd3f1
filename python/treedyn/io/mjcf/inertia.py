"""A body's inertia: its ``<inertial>``, or the sum of its geoms' (primitives, solid or shell, and
meshes) by ``<compiler inertiafromgeom>``, bounded by ``boundmass``/``boundinertia``/
``balanceinertia``; and ``settotalmass``'s scaling of all the bodies."""

from __future__ import annotations

import math

import numpy as np

from ...model import Inertia, Transform
from .._common import file_inertia, unchecked_inertia, z_to_vector
from .._tree import compose, fold_inertias
from .meshes import mesh_properties
from .reader import ORIENTATIONS

__all__ = ["body_inertia", "scale_total_mass"]

_GEOM_SOLIDS = ("sphere", "ellipsoid", "box", "capsule", "cylinder")


def body_inertia(r, body, name, contents):
    I = _file_body_inertia(r, body, name, contents)
    if not (r.boundmass > 0 or r.boundinertia > 0 or r.balanceinertia):
        return I
    if I is None:
        I = Inertia(0.0, np.zeros(3), np.zeros((3, 3)))
    d, V = np.linalg.eigh(I.inertia)  # principal moments about the centre of mass
    d = np.maximum(d, r.boundinertia)
    if r.balanceinertia and d[0] + d[1] < d[2]:
        d[:] = d.mean()
    return unchecked_inertia(max(I.mass, r.boundmass), I.com, (V * d) @ V.T)


def _file_body_inertia(r, body, name, contents):
    inertials = [c for c in contents if c[0] == "inertial"]
    if len(inertials) > 1:
        raise r.err(f"body {name!r} has more than one <inertial>", inertials[1][1])
    if inertials and r.fromgeom != "true":
        I = _inertial(r, inertials[0][1], name)
        F = inertials[0][2]  # pose of an enclosing <frame> in the body
        return fold_inertias([(I, F)])
    if r.fromgeom == "false":
        return None
    parts = []
    for _, g, X, cls in (c for c in contents if c[0] == "geom"):
        part = _geom_inertia(r, g, X, cls, name)
        if part is not None:
            parts.append(part)
    return fold_inertias(parts) if parts else None


def _inertial(r, e, name):
    r.current = e
    a = e.attrib
    mass = r.num(e, "mass", a)
    pos = r.vec(e, "pos", 3, a, (0, 0, 0))
    if ("diaginertia" in a) == ("fullinertia" in a):
        raise r.err(f"body {name!r} <inertial>: give exactly one of diaginertia and fullinertia", e)
    if "fullinertia" in a:
        if any(k in a for k in ORIENTATIONS):
            raise r.err(f"body {name!r} <inertial>: fullinertia cannot have an orientation", e)
        xx, yy, zz, xy, xz, yz = r.vec(e, "fullinertia", 6, a)
        I = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
    else:
        R = r.rotation(e, a)
        I = R @ np.diag(r.vec(e, "diaginertia", 3, a)) @ R.T
    try:
        return file_inertia(mass, pos, I, f"body {name!r}", r.inconsistent)
    except ValueError as ex:
        raise r.err(f"body {name!r} <inertial>: {ex}", e) from None


def _geom_inertia(r, g, X, cls, body):
    r.current = g
    a = r.attrs(g, cls)
    gname = a.get("name") or "(unnamed)"
    what = f"geom {gname} of body {body!r}"
    group = r.num(g, "group", a, 0)
    if group != int(group):
        raise r.err(f"<geom group={a['group']!r}>: not an integer", g)
    if not r.groups[0] <= group <= r.groups[1]:
        return None
    kind = a.get("type", "sphere")
    explicit_mass = "mass" in a
    mass = r.num(g, "mass", a) if explicit_mass else None
    density = r.num(g, "density", a, 1000.0)
    if (explicit_mass and mass == 0) or (not explicit_mass and density == 0):
        return None
    if kind == "plane":
        raise r.err(f"{what}: a plane can only be in the world body (MuJoCo's rule)", g)
    shell = a.get("shellinertia", "false") == "true"
    if kind == "mesh":
        if shell:  # MuJoCo's rule: "for mesh geoms, inertia should be specified in the mesh asset"
            raise r.err(f"{what}: shellinertia does not apply to a mesh; set inertia='shell' on its <mesh>", g)
        p = mesh_properties(r, g, a, what)  # per unit density, in the mesh's coordinates = the geom's
        m = mass if explicit_mass else density * p.measure
        inertia = file_inertia(m, p.com, (m / p.measure) * p.inertia, what, r.inconsistent)
        return (inertia, compose(X, r.pose(g, a)))
    if kind not in _GEOM_SOLIDS:
        raise r.err(
            f"{what} is a {kind}: treedyn computes inertias of {', '.join(_GEOM_SOLIDS)} and mesh "
            f"only; give body {body!r} an <inertial>",
            g,
        )
    if "mesh" in a:  # MuJoCo fits the primitive to the mesh (fitscale, fitaabb)
        raise r.err(f"{what}: a {kind} fitted to mesh {a['mesh']!r} is not supported; give it a size", g)
    size = r.size3(g, a)
    if "fromto" in a:
        if kind == "sphere":
            raise r.err(f"{what}: fromto does not apply to a sphere", g)
        ft = r.vec(g, "fromto", 6, a)
        d = ft[3:] - ft[:3]
        L = np.linalg.norm(d)
        if L < 1e-12:
            raise r.err(f"{what}: fromto has zero length", g)
        pose = Transform(z_to_vector(d), 0.5 * (ft[:3] + ft[3:]))
        if kind in ("capsule", "cylinder"):
            size = np.array([size[0], 0.5 * L, 0.0])
        else:  # box, ellipsoid: the two transverse sizes are size[0] (as MuJoCo does)
            size = np.array([size[0], size[0], 0.5 * L])
    else:
        pose = r.pose(g, a)
    V, I_unit = (_shell if shell else _solid)(kind, size)  # volume (area), inertia per unit mass
    if V <= 0:
        raise r.err(f"{what}: size {a.get('size')!r} gives a {kind} of zero volume", g)
    m = mass if explicit_mass else density * V
    return (Inertia(m, np.zeros(3), m * I_unit), compose(X, pose))


def scale_total_mass(r, nodes):
    if r.totalmass <= 0:
        return
    total = sum(n.inertia.mass for n in nodes[1:] if n.inertia is not None)
    if total <= 0:
        return
    s = r.totalmass / total
    for n in nodes[1:]:
        if n.inertia is not None:
            I = n.inertia
            n.inertia = file_inertia(I.mass * s, I.com, I.inertia * s, f"body {n.name!r}", [])


_ELLIPSOID_SHELL = 1e-6  # MuJoCo's thickness for an ellipsoid's shell inertia (measured)


def _shell(kind, size):
    """(area, inertia about the centre per unit mass) of a MuJoCo geom with shellinertia="true":
    the mass spread evenly over its surface (a cylinder's end discs included). An ellipsoid's area
    is Thomsen's approximation 4π((aᵖbᵖ + aᵖcᵖ + bᵖcᵖ)/3)^(1/p), p = 1.6075, and its inertia per
    unit mass that of the solid ellipsoid (a + t, b + t, c + t) minus (a, b, c), t = 1e-6 (in the
    model's length unit), both as in MuJoCo 4.0 (measured: tests/io/test_io_mesh.py; the difference
    cancels all but ~t/a of the digits, in MuJoCo as here)."""
    if kind == "sphere":
        r = size[0]
        return 4.0 * math.pi * r * r, np.eye(3) * (2.0 / 3.0) * r * r
    if kind == "ellipsoid":
        a, b, c = size
        p = 1.6075
        area = 4.0 * math.pi * (((a * b) ** p + (a * c) ** p + (b * c) ** p) / 3.0) ** (1.0 / p)
        t = _ELLIPSOID_SHELL  # a shell of this thickness outside the surface
        outer, inner = np.array([a, b, c]) + t, np.array([a, b, c])
        volume = np.prod(outer) - np.prod(inner)  # ∝ the shell's volume (4π/3 cancels)
        I = [np.prod(e) * (e[j] ** 2 + e[k] ** 2) for e in (outer, inner) for j, k in ((1, 2), (0, 2), (0, 1))]
        return area, np.diag(np.subtract(I[:3], I[3:])) / (5.0 * volume)
    if kind == "box":  # the pair of faces normal to axis k lies at ±size[k]
        s2 = np.asarray(size, dtype=float) ** 2
        A = 8.0 * np.array([size[1] * size[2], size[0] * size[2], size[0] * size[1]])  # both faces of a pair
        I = np.zeros(3)
        for k in range(3):
            for i in range(3):
                j = 3 - i - k  # for i ≠ k: the third axis
                I[i] += A[k] * ((s2.sum() - s2[k]) / 3.0 if i == k else s2[k] + s2[j] / 3.0)
        return A.sum(), np.diag(I) / A.sum()
    r, h = size[0], size[1]
    side = 4.0 * math.pi * r * h  # the lateral surface, length 2h
    if kind == "cylinder":
        disc = math.pi * r * r
        area = side + 2.0 * disc
        ixx = side * (r * r / 2.0 + h * h / 3.0) + 2.0 * disc * (r * r / 4.0 + h * h)
        return area, np.diag([ixx, ixx, side * r * r + disc * r * r]) / area
    # capsule: two hemispherical shells (centroid r/2 from the flat face, 2/3 m r² about the
    # sphere's centre), their centres at ±h
    caps = 4.0 * math.pi * r * r
    area = side + caps
    ixx = side * (r * r / 2.0 + h * h / 3.0) + caps * (2.0 / 3.0 * r * r + h * h + h * r)
    return area, np.diag([ixx, ixx, side * r * r + caps * 2.0 / 3.0 * r * r]) / area


def _solid(kind, size):
    """(volume, inertia about the centre per unit mass, principal axes = geom axes) of a MuJoCo
    geom. Capsule: a cylinder of half-length h with two hemispherical caps, mass shared by volume;
    a cap's inertia about the centre by the parallel-axis theorem from its own centre of mass
    (3r/8 from its flat face)."""
    if kind == "sphere":
        r = size[0]
        return 4.0 / 3.0 * math.pi * r**3, np.eye(3) * 0.4 * r * r
    if kind == "ellipsoid":
        a, b, c = size
        return 4.0 / 3.0 * math.pi * a * b * c, np.diag([b * b + c * c, a * a + c * c, a * a + b * b]) / 5.0
    if kind == "box":
        a, b, c = size
        return 8.0 * a * b * c, np.diag([b * b + c * c, a * a + c * c, a * a + b * b]) / 3.0
    r, h = size[0], size[1]
    if kind == "cylinder":
        t = r * r / 4.0 + h * h / 3.0
        return 2.0 * math.pi * r * r * h, np.diag([t, t, r * r / 2.0])
    # capsule
    v_cyl, v_caps = 2.0 * math.pi * r * r * h, 4.0 / 3.0 * math.pi * r**3
    V = v_cyl + v_caps
    H = 2.0 * h
    ixx = v_cyl * (H * H / 12.0 + r * r / 4.0) + v_caps * (0.4 * r * r + H * H / 4.0 + 3.0 * H * r / 8.0)
    izz = v_cyl * r * r / 2.0 + v_caps * 0.4 * r * r
    return V, np.diag([ixx, ixx, izz]) / V
