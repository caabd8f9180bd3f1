"""Mass properties of MJCF mesh geoms, computed as MuJoCo's compiler infers them.

Reading: STL (binary and ASCII) and OBJ files through trimesh, MuJoCo's own binary ``.msh`` by
the layout its XML reference gives, or the ``vertex``/``face`` attributes of ``<mesh>``. A file is
read as bytes through the load's budget (treedyn.io._files: a regular file, within
TREEDYN_MAX_MESH_BYTES) and handed to trimesh from memory; an STL that is neither a binary STL (its
length is 84 + 50 × the triangle count in its header) nor text is refused here by name, and text
that is not UTF-8 is read as Latin-1 (its numbers are ASCII), so that trimesh never guesses an
encoding (it needs charset_normalizer for that, an optional dependency). MuJoCo
stores vertices in single precision, so every vertex is rounded to float32 first (a ``0.1`` in the
file is 0.1000000015 to MuJoCo); everything after that is in double precision.

The rules, from MuJoCo's XML reference (``<asset><mesh>``: the list of the compiler's processing
steps and the ``inertia``, ``scale``, ``refpos`` and ``refquat`` attributes), with what the
reference leaves open measured on MuJoCo 4.0 (tests/io/test_io_mesh.py compares every case with
``mujoco.MjModel``'s body_mass, body_ipos and body_inertia):

* placement: v ↦ scale ⊙ Rᵀ(v − refpos), R the rotation of the (normalised) ``refquat``, the
  scale applied last; a scale with an odd number of negative entries mirrors the mesh, and the
  faces are turned over so that they still face outwards.
* ``inertia="legacy"`` (the default, still in 4.0): the union-of-pyramids algorithm with every
  pyramid counted positive, so a non-convex mesh is over-counted. The first apex is the
  area-weighted centroid of the faces; the pyramids on it give a centre c. The pyramids are then
  formed again with their apex at c, and their (absolute) volumes and second moments about c are
  the volume and the inertia: c is where MuJoCo puts the mesh's frame, even though the pyramids
  on c have a slightly different centroid.
* ``inertia="exact"``: the same two passes with signed volumes, which for a closed, consistently
  oriented surface are the exact volume, centre and inertia of the solid whatever the apex. A
  mesh whose faces are not consistently oriented or whose volume is negative is an error (as in
  MuJoCo); an open surface is not (MuJoCo accepts it: its pyramids on the two apexes above).
* ``inertia="convex"``: ``exact`` on the convex hull of all the vertices (qhull, through scipy's
  ConvexHull: the library MuJoCo builds its hulls with).
* ``inertia="shell"``: the mass on the faces with a uniform surface density; ``density`` is then
  mass per area.
* a mesh without faces is its convex hull (for every mode); fewer than 4 vertices, vertices in
  one plane (MuJoCo cannot build their hull), and a volume (or area) below MuJoCo's mjMINVAL = 1e-15
  are errors.
* a geom's mass is density × volume (or area), or its ``mass``; the mesh sits in the geom's frame
  as written in the file (MuJoCo moves the mesh into its principal frame and moves the geom the
  opposite way: the body sees the same thing).
* MuJoCo keeps a mesh's inertia in its principal axes, and finds them with an iteration that stops
  while up to 1e-7 of the inertia is still off the diagonal, then drops that part: up to ~1e-7 of
  a body's inertia, far above rounding. principal_inertia reproduces it (measured on hundreds of
  meshes at random orientations, scales and modes: MuJoCo's inertias to ~1e-15 instead of ~1e-7).
* faces whose doubled area is below mjMINVAL count for nothing, as in MuJoCo.
"""

from __future__ import annotations

import io
import os
from dataclasses import dataclass

import numpy as np

from ._errors import ModelFileError
from ._files import Budget

__all__ = [
    "MESH_INERTIA",
    "MeshError",
    "MassProperties",
    "read_mesh_file",
    "inline_mesh",
    "place_vertices",
    "mass_properties",
    "principal_inertia",
]

MESH_INERTIA = ("legacy", "convex", "exact", "shell")
MJMINVAL = 1e-15  # MuJoCo's smallest volume or area of a mesh (mjMINVAL)
EIG_REL = 1e-7  # where MuJoCo's compiler stops looking for a mesh's principal axes (see principal_inertia)
_CONTENT_TYPES = {"model/stl": "stl", "model/obj": "obj", "model/vnd.mujoco.msh": "msh"}


class MeshError(ValueError):
    """A mesh that cannot be read, or whose mass properties MuJoCo refuses to compute."""


@dataclass(frozen=True)
class MassProperties:
    """Volume (area for a shell), centre, and rotational inertia about the centre per unit density,
    all in the mesh's (placed) coordinates."""

    measure: float
    com: np.ndarray
    inertia: np.ndarray


# ------------------------------------------------------------------ reading


def read_mesh_file(path: str, content_type: str | None = None, budget: Budget | None = None):
    """(vertices (n, 3) float64 rounded to float32, faces (m, 3) int or None) of an STL, OBJ or
    MSH file; the type from ``content_type`` (MJCF's attribute) or else the file's extension.
    ASCII STL is read too, which MuJoCo 4.0 refuses ("perhaps this is an ASCII file?"). The file
    is read through ``budget`` (the load's; a new one when None)."""
    kind = _CONTENT_TYPES.get(content_type) if content_type else os.path.splitext(path)[1].lower().lstrip(".")
    if kind not in ("stl", "obj", "msh"):
        raise MeshError(
            f"unknown mesh type {content_type or os.path.splitext(path)[1]!r}: MuJoCo reads STL, OBJ and MSH"
        )
    data = read_mesh_bytes(path, budget)
    if kind == "msh":
        V, F = _read_msh(path, data)
    else:
        V, F = _read_trimesh(path, data, kind)
    return _as_float32(V), F


def read_mesh_bytes(path: str, budget: Budget | None = None) -> bytes:
    """The bytes of a mesh file (a regular file, within the budget); MeshError saying why not."""
    try:
        return (budget or Budget()).read_mesh(path)
    except FileNotFoundError:
        raise MeshError(f"file not found ({path})") from None
    except (OSError, ModelFileError) as e:
        raise MeshError(str(e)) from None


def trimesh_input(path: str, data: bytes, kind: str) -> io.BytesIO:
    """The file's bytes as trimesh should get them: an STL checked to be binary or text, text that
    is not UTF-8 re-encoded from Latin-1 (see the module's docstring); MeshError otherwise."""
    if kind == "stl" and not _binary_stl(data):
        if b"\0" in data[:1024] or not data.lstrip()[:5].lower() == b"solid":
            n = int.from_bytes(data[80:84], "little") if len(data) >= 84 else None
            binary = (
                f"a binary STL whose header counts {n} triangles has {84 + 50 * n} bytes, this file has {len(data)}"
                if n is not None
                else f"a binary STL has at least 84 bytes, this file has {len(data)}"
            )
            raise MeshError(
                f"cannot read {path}: not an STL file: {binary}, and it is not ASCII STL text (starting with 'solid')"
            )
    if kind in ("stl", "obj") and not _binary_stl(data):
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            data = data.decode("latin-1").encode("utf-8")
    return io.BytesIO(data)


def _binary_stl(data: bytes) -> bool:
    """An 80-byte header, a triangle count n, 50 bytes per triangle: exactly 84 + 50 n bytes."""
    return len(data) >= 84 and len(data) == 84 + 50 * int.from_bytes(data[80:84], "little")


def _read_trimesh(path, data, kind):
    import trimesh  # the standard mesh reader; imported on the first mesh only

    stream = trimesh_input(path, data, kind)
    try:
        mesh = trimesh.load(stream, file_type=kind, process=False, force="mesh")
    except Exception as e:  # trimesh raises whatever its parsers raise on a damaged file
        raise MeshError(f"cannot read {path}: {type(e).__name__}: {e}") from None
    V = np.asarray(getattr(mesh, "vertices", np.zeros((0, 3))), dtype=np.float64).reshape(-1, 3)
    F = np.asarray(getattr(mesh, "faces", np.zeros((0, 3))), dtype=np.int64).reshape(-1, 3)
    if len(V) == 0:
        raise MeshError(f"cannot read {path}: no vertices found (not a valid {kind.upper()} file?)")
    return V, (F if len(F) else None)


def _read_msh(path, data):
    """MuJoCo's binary mesh: int32 nvertex, nnormal, ntexcoord, nface, then float32 vertices (3 per
    vertex), normals (3 each), texture coordinates (2 each) and int32 faces (3 each)."""
    if len(data) < 16:
        raise MeshError(f"{path}: too short for an MSH header")
    nv, nn, nt, nf = (int(x) for x in np.frombuffer(data[:16], dtype="<i4"))
    if min(nv, nn, nt, nf) < 0 or len(data) != 16 + 4 * (3 * nv + 3 * nn + 2 * nt + 3 * nf):
        raise MeshError(f"{path}: the MSH header ({nv}, {nn}, {nt}, {nf}) does not match the file's size")
    V = np.frombuffer(data, dtype="<f4", count=3 * nv, offset=16).reshape(-1, 3)
    F = np.frombuffer(data, dtype="<i4", count=3 * nf, offset=16 + 4 * (3 * nv + 3 * nn + 2 * nt)).reshape(-1, 3)
    return V.astype(np.float64), (_check_indices(F.astype(np.int64), nv) if nf else None)


def _as_float32(V):
    V = np.asarray(V, dtype=np.float64).reshape(-1, 3)
    with np.errstate(over="ignore"):
        V32 = V.astype(np.float32)
    if not np.all(np.isfinite(V32)):
        raise MeshError("a vertex is not finite (in single precision)")
    return V32.astype(np.float64)


def inline_mesh(vertex, face=None):
    """(vertices, faces or None) from the numbers of MJCF's ``vertex`` and ``face`` attributes."""
    vertex = np.asarray(vertex, dtype=np.float64).reshape(-1)
    if len(vertex) % 3:
        raise MeshError(f"vertex has {len(vertex)} numbers, not a multiple of 3")
    V = _as_float32(vertex.reshape(-1, 3))
    if face is None or np.size(face) == 0:
        return V, None
    F = np.asarray(face, dtype=np.float64).reshape(-1)
    if len(F) % 3 or not np.all(F == np.round(F)):
        raise MeshError(f"face has {len(F)} numbers: it must be triples of integer vertex indices")
    return V, _check_indices(F.astype(np.int64).reshape(-1, 3), len(V))


def _check_indices(F, n):
    bad = F[(F < 0) | (F >= n)]
    if len(bad):
        raise MeshError(f"a face refers to vertex {int(bad[0])}; the mesh has vertices 0..{n - 1}")
    return F


# ------------------------------------------------------------------ placement


def place_vertices(V, F, scale=(1, 1, 1), refpos=(0, 0, 0), rotation=None):
    """MuJoCo's placement of a mesh's vertices: scale ⊙ Rᵀ(v − refpos) (R: ``refquat``'s rotation);
    a mirroring scale turns the faces over so that they keep facing outwards."""
    X = np.asarray(V, dtype=np.float64) - np.asarray(refpos, dtype=np.float64)
    if rotation is not None:
        X = X @ np.asarray(rotation, dtype=np.float64)  # rows: Rᵀ v
    s = np.asarray(scale, dtype=np.float64)
    X = X * s
    if F is not None and np.prod(np.sign(s)) < 0:
        F = F[:, ::-1]
    return X, F


# ------------------------------------------------------------------ mass properties


def mass_properties(V, F, mode: str = "legacy") -> MassProperties:
    """The volume (area), centre and inertia per unit density of a placed mesh, by MuJoCo's rules
    for ``inertia=mode`` (see the module's docstring)."""
    if mode not in MESH_INERTIA:
        raise MeshError(f"inertia={mode!r}: must be one of {', '.join(MESH_INERTIA)}")
    V = np.asarray(V, dtype=np.float64)
    if len(V) < 4:
        raise MeshError(f"{len(V)} vertices: a mesh needs at least 4")
    _check_not_flat(V)
    if F is None or mode == "convex":
        F = convex_hull(V)
    T = V[F]
    T = T[2.0 * _areas(T) >= MJMINVAL]  # tiny faces (a repeated vertex: no orientation) count for nothing
    if len(T) == 0 or _areas(T).sum() < MJMINVAL:
        raise MeshError(f"the mesh's surface area is too small (MuJoCo's limit is {MJMINVAL:g})")
    if mode == "exact":
        _check_oriented(V, F)
    p = _shell(T) if mode == "shell" else _solid(T, absolute=mode == "legacy")
    return MassProperties(p.measure, p.com, principal_inertia(p.inertia))


def convex_hull(V):
    """The faces of the convex hull of V, turned to face outwards (scipy's qhull gives the facets'
    outward normals but not a winding)."""
    from scipy.spatial import ConvexHull, QhullError

    try:
        hull = ConvexHull(V)
    except QhullError as e:
        raise MeshError(f"cannot compute the convex hull of the vertices: {str(e).splitlines()[0]}") from None
    F = hull.simplices.copy()
    T = V[F]
    n = np.cross(T[:, 1] - T[:, 0], T[:, 2] - T[:, 0])
    inward = np.einsum("ij,ij->i", n, hull.equations[:, :3]) < 0
    F[inward] = F[inward][:, ::-1]
    return F


def _check_not_flat(V):
    """MuJoCo computes every mesh's convex hull and refuses vertices that lie in one plane."""
    X = V - V.mean(axis=0)
    size = float(np.abs(X).max())
    s = np.linalg.svd(X, compute_uv=False)
    if size == 0 or s[-1] <= 1e-12 * s[0]:
        raise MeshError("the vertices lie in one plane (MuJoCo cannot build their convex hull): use a primitive geom")


def _check_oriented(V, F):
    """Every edge of a consistently oriented surface is walked once in each direction, so a
    directed edge that appears twice means two neighbouring faces disagree (MuJoCo's check for
    inertia="exact"). Vertices at the same position are one vertex (STL repeats them per face)."""
    _, ids = np.unique(V, axis=0, return_inverse=True)
    G = ids.reshape(-1)[F]
    G = G[(G[:, 0] != G[:, 1]) & (G[:, 1] != G[:, 2]) & (G[:, 0] != G[:, 2])]
    E = np.concatenate([G[:, [0, 1]], G[:, [1, 2]], G[:, [2, 0]]])
    uniq, counts = np.unique(E, axis=0, return_counts=True)
    if np.any(counts > 1):
        a, b = uniq[np.argmax(counts > 1)]
        raise MeshError(
            f"the faces are not consistently oriented (two faces walk the edge between vertices at "
            f"{V[ids == a][0]} and {V[ids == b][0]} the same way), which inertia='exact' requires"
        )


def _areas(T):
    return 0.5 * np.linalg.norm(np.cross(T[:, 1] - T[:, 0], T[:, 2] - T[:, 0]), axis=1)


def _pyramids(T, apex, absolute):
    """Volumes of the pyramids (tetrahedra) from ``apex`` to each face, the sums of their corners
    relative to the apex (the apex itself is 0), and the corners: the centroid of one is s/4."""
    P = T - apex
    vol = np.einsum("ij,ij->i", P[:, 0], np.cross(P[:, 1], P[:, 2])) / 6.0
    return (np.abs(vol) if absolute else vol), P.sum(axis=1), P


def _second_moment(weights, P, s, k):
    """Σ w ∫ x xᵀ over simplices of k + 1 corners P (rows) per unit weight: for a simplex of
    dimension k with corners p_j, ∫ x xᵀ = measure/((k + 1)(k + 2)) · (Σ p_j p_jᵀ + s sᵀ), s = Σ p_j."""
    C = np.einsum("n,nji,njk->ik", weights, P, P) + np.einsum("n,ni,nk->ik", weights, s, s)
    return C / ((k + 1) * (k + 2))


def _inertia(C):
    """Rotational inertia from the second moment C = ∫ x xᵀ: tr(C)·1 − C."""
    return np.trace(C) * np.eye(3) - C


def _solid(T, absolute):
    areas = _areas(T)
    apex = (areas @ T.mean(axis=1)) / areas.sum()  # area-weighted centroid of the faces
    vol, s, _ = _pyramids(T, apex, absolute)
    V = vol.sum()
    if V < 0:
        raise MeshError(f"the mesh's volume is negative ({V:.3g}): its faces are turned inwards")
    if V < MJMINVAL:
        raise MeshError(f"the mesh's volume {V:.3g} is too small (MuJoCo's limit is {MJMINVAL:g}); try inertia='shell'")
    c = apex + (vol @ s) / (4.0 * V)
    vol, s, P = _pyramids(T, c, absolute)  # again, on c: the volume and the inertia about c
    return MassProperties(float(vol.sum()), c, _inertia(_second_moment(vol, P, s, 3)))


def _shell(T):
    areas = _areas(T)
    A = areas.sum()
    c = (areas @ T.mean(axis=1)) / A
    P = T - c
    return MassProperties(float(A), c, _inertia(_second_moment(areas, P, P.sum(axis=1), 2)))


# ------------------------------------------------------------------ principal axes as MuJoCo keeps them


def principal_inertia(I):
    """A mesh's inertia as MuJoCo 4.0's compiler keeps it: MuJoCo turns the mesh into its principal
    axes, found by an iteration that stops early, and keeps only the diagonal it reached. Measured
    (tests/io/test_io_mesh.py, on meshes at random orientations and scales): its result is that of the
    classical Jacobi iteration (Golub & Van Loan, Matrix Computations, 4th ed., §8.5.2: rotate away
    the largest off-diagonal entry, ties going to the first of (0,1), (0,2), (1,2)) stopped as soon
    as the largest off-diagonal entry is below EIG_REL = 1e-7 times the largest diagonal entry of I.
    The result is Q diag(QᵀIQ) Qᵀ: what is left off the diagonal, up to 1e-7 of I, is dropped. A
    body's inertia summed from several geoms, and ``fullinertia``, are not truncated (measured)."""
    A = 0.5 * (np.asarray(I, dtype=np.float64) + np.asarray(I, dtype=np.float64).T)
    tol = EIG_REL * float(np.abs(np.diag(A)).max())
    Q, D = np.eye(3), A
    for _ in range(100):  # quadratic convergence: a handful of rotations
        D = Q.T @ A @ Q
        a01, a02, a12 = abs(D[0, 1]), abs(D[0, 2]), abs(D[1, 2])
        p, q = (0, 1) if a01 > a02 and a01 > a12 else ((0, 2) if a02 > a12 else (1, 2))
        if abs(D[p, q]) < tol or D[p, q] == 0:
            break
        tau = (D[q, q] - D[p, p]) / (2.0 * D[p, q])
        t = (1.0 if tau >= 0 else -1.0) / (abs(tau) + np.sqrt(1.0 + tau * tau))  # the smaller root
        c = 1.0 / np.sqrt(1.0 + t * t)
        J = np.eye(3)
        J[p, p] = J[q, q] = c
        J[p, q], J[q, p] = t * c, -t * c
        Q = Q @ J
    return (Q * np.diag(D)) @ Q.T
