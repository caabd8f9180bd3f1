"""The ``<asset><mesh>`` pass: the mesh assets by name, each mesh's mass properties (per unit
density; ``treedyn.io.mesh``), read once and only when a body's inertia needs them, and each
mesh's convex hull (``treedyn.ConvexMesh``), read once and only when a mesh geom collides."""

from __future__ import annotations

import os

from .._common import quat_to_matrix
from .._files import regular_file_problem
from ..mesh import MESH_INERTIA, MeshError, inline_mesh, mass_properties, place_vertices, read_mesh_file

__all__ = ["mesh_assets", "mesh_properties", "mesh_hull", "mesh_surface"]


def mesh_assets(r, root):
    """{name: (<mesh> element, its attributes over its default class)} of <asset><mesh>; a mesh
    without a name is named after its file without folder and extension (MuJoCo's rule)."""
    out = {}
    for sec in (e for e in root if e.tag == "asset"):
        for e in (e for e in sec if e.tag == "mesh"):
            r.current = e
            a = r.attrs(e, "main")
            name = a.get("name") or os.path.splitext(os.path.basename(a.get("file", "")))[0]
            if not name:
                raise r.err("a <mesh> needs a name or a file", e)
            if name in out:
                raise r.err(f"two meshes are named {name!r}", e)
            problem = regular_file_problem(_mesh_path(r, a["file"])) if "file" in a else None
            if problem:  # not found: MuJoCo's error too; a FIFO or a device would block or never end
                what = "not found" if problem == "not found" else f"is {problem}, not a regular file"
                raise r.err(f"mesh {name!r}: file {a['file']!r} {what} ({_mesh_path(r, a['file'])})", e)
            out[name] = (e, a)
    for sec in (e for e in root if e.tag == "asset"):  # materials' colours, for the visual geoms
        for e in (e for e in sec if e.tag == "material" and e.get("name")):
            a = r.attrs(e, "main")
            if "rgba" in a:
                r.materials[a["name"]] = r.vec(e, "rgba", 4, a)
    r.mesh_properties = {}  # name -> MassProperties, read when a body's inertia needs it
    r.mesh_hulls = {}  # name -> ConvexMesh, read when a mesh geom collides
    return out


def _mesh_path(r, fn):
    return fn if os.path.isabs(fn) else os.path.join(r.doc.base_dir, r.meshdir, fn)


def _mesh_name(r, g, a, what):
    """The <asset><mesh> a geom names, or the error that says it has none."""
    name = a.get("mesh")
    if name not in r.meshes:
        raise r.err(f"{what}: " + (f"no <mesh name={name!r}> in <asset>" if name else "no mesh attribute"), g)
    return name


def _asset(r, name):
    """(its element, its attributes, how errors name it) of a mesh asset."""
    e, m = r.meshes[name]
    r.current = e
    return e, m, f"mesh {name!r}" + (f" (file {m['file']!r})" if "file" in m else "")


def mesh_properties(r, g, a, what):
    """The mass properties (per unit density) of the mesh a geom refers to, read once."""
    name = _mesh_name(r, g, a, what)
    if name not in r.mesh_properties:
        e, m, where = _asset(r, name)
        try:
            r.mesh_properties[name] = _read_mesh(r, e, m, where)
        except MeshError as ex:
            raise r.err(f"{where}: {ex}", e) from None
    return r.mesh_properties[name]


def mesh_hull(r, g, a, what):
    """The convex hull (ConvexMesh, in the mesh geom's frame: the file's vertices placed by scale,
    refpos, refquat) of the mesh a geom refers to, read once; MuJoCo collides a mesh geom by its
    hull too."""
    from ...model.shapes import ConvexMesh

    name = _mesh_name(r, g, a, what)
    if name not in r.mesh_hulls:
        e, m, where = _asset(r, name)
        try:
            V, _ = _placed_mesh(r, e, m, where)
            r.mesh_hulls[name] = ConvexMesh.hull(V)
        except (MeshError, ValueError) as ex:
            raise r.err(f"{where}: {ex}", e) from None
    return r.mesh_hulls[name]


def mesh_surface(r, g, a, what):
    """(vertices, faces) of the mesh a geom refers to, placed as MuJoCo places them (its hull's
    frame), read once: what td.view draws for a mesh geom that only shows."""
    name = _mesh_name(r, g, a, what)
    surfaces = r.__dict__.setdefault("mesh_surfaces", {})
    if name not in surfaces:
        e, m, where = _asset(r, name)
        try:
            V, F = _placed_mesh(r, e, m, where)
            if F is None:  # (vertices only: MuJoCo makes the hull)
                from ...model.shapes import ConvexMesh

                hull = ConvexMesh.hull(V)
                V, F = hull.vertices, hull.faces
            surfaces[name] = (V, F)
        except (MeshError, ValueError) as ex:
            raise r.err(f"{where}: {ex}", e) from None
    return surfaces[name]


def _read_mesh(r, e, m, where):
    mode = m.get("inertia", "legacy")  # MuJoCo's default, still legacy in 4.0
    if mode not in MESH_INERTIA:
        raise r.err(f"{where}: inertia={mode!r} must be one of {', '.join(MESH_INERTIA)}", e)
    if mode == "convex" and m.get("maxhullvert", "-1").strip() != "-1":
        raise r.err(f"{where}: maxhullvert with inertia='convex' is not supported", e)
    return mass_properties(*_placed_mesh(r, e, m, where), mode)


def _placed_mesh(r, e, m, where):
    """The mesh's vertices and faces as MuJoCo places them (scale, refpos, refquat), read and placed once a load
    (its inertia, hull and drawn surface share them: read-only)."""
    placed = r.__dict__.setdefault("placed_meshes", {})
    if id(e) not in placed:
        V, F = _place_mesh(r, e, m, where)
        for x in (V, F):
            if x is not None:
                x.setflags(write=False)
        placed[id(e)] = (e, V, F)  # (e kept: its id stays its own while the load runs)
    return placed[id(e)][1:]


def _place_mesh(r, e, m, where):
    for attr in ("builtin", "plugin"):
        if attr in m:
            raise r.err(f"{where}: a mesh made by {attr}= is not supported; give it a file or vertices", e)
    if "file" in m:
        if "vertex" in m:
            raise r.err(f"{where}: give either a file or vertex, not both", e)
        V, F = read_mesh_file(_mesh_path(r, m["file"]), m.get("content_type"), r.budget)
    elif "vertex" in m:
        V, F = inline_mesh(r.vec(e, "vertex", None, m), r.vec(e, "face", None, m, ()))
    else:
        raise r.err(f"{where}: a mesh needs a file or vertex", e)
    R = quat_to_matrix(r.vec(e, "refquat", 4, m, (1, 0, 0, 0)))
    scale, refpos = r.vec(e, "scale", 3, m, (1, 1, 1)), r.vec(e, "refpos", 3, m, (0, 0, 0))
    return place_vertices(V, F, scale, refpos, R)
