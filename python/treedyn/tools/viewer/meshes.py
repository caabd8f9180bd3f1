"""Triangle meshes of a model's geoms for the 3D viewer (trimesh's primitives, in the geom's frame),
and the colours the viewer draws with."""

from __future__ import annotations

import numpy as np

from ...model.shapes import Box, Capsule, ConvexMesh, Cylinder, Ellipsoid, MeshFile, Plane, Sphere, TriangleMesh

__all__ = [
    "geom_mesh",
    "link_meshes",
    "ground_mesh",
    "shape_radius",
    "rgb_opacity",
    "body_colours",
    "magnitude_colours",
    "quaternion_wxyz",
]

# a body's colour by its depth in the tree (the world's geoms: GROUND); contacts: CONTACT;
# forces: the MAGNITUDE ramp from small (blue) to large (red)
_PALETTE = np.array([(70, 130, 180), (95, 158, 110), (214, 140, 50), (150, 110, 180), (200, 90, 90), (60, 160, 170)])
GROUND = (205, 205, 200)
CONTACT = (220, 30, 30)
FRICTION = (200, 40, 200)
_MAGNITUDE = np.array([(40, 90, 230), (40, 190, 200), (250, 200, 30), (230, 40, 40)], dtype=float)


def geom_mesh(shape) -> tuple[np.ndarray, np.ndarray] | None:
    """(vertices (n, 3), faces (m, 3)) of a shape in its geom frame; None for a Plane (the ground
    is drawn by ground_mesh, finite, where the model moves)."""
    import trimesh

    if isinstance(shape, Plane):
        return None
    if isinstance(shape, Sphere):
        m = trimesh.creation.icosphere(subdivisions=2, radius=shape.radius)
    elif isinstance(shape, Ellipsoid):
        m = trimesh.creation.icosphere(subdivisions=2, radius=1.0)
        m.apply_scale(shape.radii)
    elif isinstance(shape, Box):
        m = trimesh.creation.box(extents=2 * np.asarray(shape.half_extents))
    elif isinstance(shape, Capsule):  # axis z, half_length from the centre to each cap's centre
        m = trimesh.creation.capsule(height=2 * shape.half_length, radius=shape.radius, count=[16, 16])
    elif isinstance(shape, Cylinder):
        m = trimesh.creation.cylinder(radius=shape.radius, height=2 * shape.half_length, sections=24)
    elif isinstance(shape, (ConvexMesh, TriangleMesh)):
        return np.asarray(shape.vertices, dtype=np.float32), np.asarray(shape.faces, dtype=np.uint32)
    elif isinstance(shape, MeshFile):
        return _mesh_file(shape.path, shape.scale)
    else:
        raise TypeError(f"the viewer cannot draw a {type(shape).__name__}")
    return np.asarray(m.vertices, dtype=np.float32), np.asarray(m.faces, dtype=np.uint32)


def link_meshes(model, size: float) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """For each body with mass whose geoms (if any) are smaller than half the way to its children's joints,
    a mesh in its own frame: a rod (capsule) from its origin to each child's joint origin (a leaf:
    to twice its centre of mass), so that a model with few or no geoms (a URDF without meshes, the
    centipede's legs) is seen as its links."""
    import trimesh

    reach = np.zeros(model.n_bodies)  # the size of the body's largest geom or visual
    for g in (*model.geoms, *model.visuals):
        reach[g.body] = max(reach[g.body], shape_radius(g.shape))
    ends: dict[int, list] = {}
    parents, placements, inertias = model.parents, model.placements, model.inertias
    for c in range(1, model.n_bodies):
        ends.setdefault(int(parents[c]), []).append(placements[c].translation)
    out = {}
    for i in range(1, model.n_bodies):
        if inertias[i].mass <= 0:
            continue
        targets = ends.get(i) or ([2 * np.asarray(inertias[i].com)] if inertias[i].has_com else [])
        if reach[i] > 0 and reach[i] >= 0.5 * max((float(np.linalg.norm(e)) for e in targets), default=0.0):
            continue  # its geoms show the body (a small foot ball at the end of a shin does not)
        parts = []
        for e in targets:
            L = float(np.linalg.norm(e))
            if L < 1e-9:
                continue
            r = float(np.clip(0.06 * L, 0.008 * size, 0.025 * size))
            rod = trimesh.creation.capsule(height=L, radius=r, count=[8, 8])
            rod.apply_translation([0.0, 0.0, 0.5 * L])  # from the origin along z, then z turned onto e
            rod.apply_transform(trimesh.geometry.align_vectors([0.0, 0.0, 1.0], np.asarray(e) / L))
            parts.append(rod)
        if not parts:  # (a body with no children, no extent: a ball at its origin)
            parts.append(trimesh.creation.icosphere(subdivisions=1, radius=0.02 * size))
        m = trimesh.util.concatenate(parts)
        out[i] = (np.asarray(m.vertices, dtype=np.float32), np.asarray(m.faces, dtype=np.uint32))
    return out


def shape_radius(shape) -> float:
    """The radius of a ball about the geom's origin that holds the shape (0 for a plane)."""
    if isinstance(shape, Sphere):
        return shape.radius
    if isinstance(shape, (Capsule, Cylinder)):
        return shape.half_length + shape.radius
    if isinstance(shape, Box):
        return float(np.linalg.norm(shape.half_extents))
    if isinstance(shape, Ellipsoid):
        return max(shape.radii)
    if isinstance(shape, (ConvexMesh, TriangleMesh)):
        return float(np.linalg.norm(shape.vertices, axis=1).max())
    if isinstance(shape, MeshFile):
        return np.inf  # (unknown until read: taken to show its body)
    return 0.0


_FILES: dict = {}  # (path, scale) -> (vertices, faces), or the reason it could not be read


def _mesh_file(path: str, scale: tuple):
    """A mesh file's triangles (trimesh; a scene's meshes concatenated), scaled; read once per
    process. ValueError naming the file when it cannot be read (the viewer leaves it out)."""
    import trimesh

    key = (path, tuple(scale))
    if key not in _FILES:
        try:
            m = trimesh.load(path, force="mesh")
            V = np.asarray(m.vertices, dtype=float) * np.asarray(scale)
            F = np.asarray(m.faces)
            _FILES[key] = (V.astype(np.float32), F.astype(np.uint32)) if len(F) else "it has no triangles"
        except Exception as e:  # trimesh's readers raise many kinds (a .dae without pycollada: ImportError)
            _FILES[key] = f"{type(e).__name__}: {e}"
    if isinstance(_FILES[key], str):
        raise ValueError(f"cannot draw {path} ({_FILES[key]})")
    return _FILES[key]


def rgb_opacity(rgba) -> tuple[tuple[int, int, int], float | None]:
    """A visual's rgba (in [0, 1]) as viser's colour (0..255) and opacity (None when opaque)."""
    r, g, b, a = rgba
    return (int(round(255 * r)), int(round(255 * g)), int(round(255 * b))), (None if a >= 1 else float(a))


def ground_mesh(half_size: float) -> tuple[np.ndarray, np.ndarray]:
    """A square of side 2·half_size in a plane geom's xy plane (its normal: z), a little below it
    so that the grid drawn on it stays visible."""
    s = float(half_size)
    V = np.array([(-s, -s, -1e-3), (s, -s, -1e-3), (s, s, -1e-3), (-s, s, -1e-3)], dtype=np.float32)
    return V, np.array([(0, 1, 2), (0, 2, 3)], dtype=np.uint32)


def body_colours(model) -> list[tuple[int, int, int]]:
    """Each body's colour: one per depth in the tree (neighbours differ), the world's GROUND."""
    depth = [0] * model.n_bodies
    for i, p in enumerate(model.parents.tolist()[1:], start=1):  # (parents come first)
        depth[i] = depth[p] + 1
    return [GROUND] + [tuple(int(c) for c in _PALETTE[(d - 1) % len(_PALETTE)]) for d in depth[1:]]


def magnitude_colours(x: np.ndarray, top: float) -> np.ndarray:
    """(k, 3) uint8 colours of magnitudes x on the ramp 0..top (blue, cyan, yellow, red)."""
    s = np.clip(np.asarray(x, dtype=float) / max(top, 1e-300), 0.0, 1.0) * (len(_MAGNITUDE) - 1)
    i = np.minimum(s.astype(int), len(_MAGNITUDE) - 2)
    f = (s - i)[:, None]
    return ((1 - f) * _MAGNITUDE[i] + f * _MAGNITUDE[i + 1]).astype(np.uint8)


def quaternion_wxyz(R: np.ndarray) -> np.ndarray:
    """The unit quaternion (w, x, y, z) of rotation matrices R (..., 3, 3) (viser's convention)."""
    from scipy.spatial.transform import Rotation

    xyzw = Rotation.from_matrix(np.asarray(R, dtype=float).reshape(-1, 3, 3)).as_quat()
    out = xyzw[:, [3, 0, 1, 2]]
    return out.reshape(np.shape(R)[:-2] + (4,))
