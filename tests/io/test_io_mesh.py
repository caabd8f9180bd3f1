"""MJCF mesh inertias (python/treedyn/io/mesh.py and its use in io/mjcf/): small meshes written
here as binary and ASCII STL, OBJ (with quadrilaterals), MSH and inline vertices, each compared
with MuJoCo's compiled model of the same file (body_mass, body_ipos, body_inertia/body_iquat) and
through treedyn.peers.MujocoFromFile (M, bias forces, q̈, M⁻¹) at random states."""

import os
import struct
import warnings

import numpy as np
import pytest
from conftest import assert_peer_agrees_at_random_states, assert_within_rounding, rounding_bound

import treedyn as td
from treedyn.io._common import quat_to_matrix
from treedyn.io._xml import ModelFileError
from treedyn.io.mesh import EIG_REL, principal_inertia

mujoco = pytest.importorskip("mujoco")
pytest.importorskip("trimesh")

# ------------------------------------------------------------------ meshes and their files


def box(a, b, c):
    """A box of half-sizes (a, b, c) centred on the origin: 8 vertices (index 4x + 2y + z), 6
    quadrilaterals counter-clockwise seen from outside."""
    V = np.array([[x, y, z] for x in (-a, a) for y in (-b, b) for z in (-c, c)], dtype=float)
    Q = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
    return V, Q


def tetrahedron(a, b, c):
    V = np.array([[0, 0, 0], [a, 0, 0], [0, b, 0], [0, 0, c]], dtype=float)
    return V, [(0, 2, 1), (0, 1, 3), (0, 3, 2), (1, 2, 3)]


def thin_l(w=0.2, arm=2.0, h=0.5):
    """An L-shaped prism (arms of length ``arm`` and width ``w``, height h), not convex: its convex
    hull, its volume and legacy's over-count (the area-weighted centroid of its faces lies outside
    it, so pyramids on it overlap) all differ."""
    poly = np.array([[0, 0], [arm, 0], [arm, w], [w, w], [w, arm], [0, arm]], dtype=float)
    n = len(poly)
    V = np.vstack([np.c_[poly, np.zeros(n)], np.c_[poly, np.full(n, h)]])
    F = []
    for i, j, k in ((0, 1, 2), (0, 2, 3), (0, 3, 4), (0, 4, 5)):  # the L's fan from its corner
        F += [(i, k, j), (i + n, j + n, k + n)]
    for i in range(n):
        j = (i + 1) % n
        F += [(i, j, j + n), (i, j + n, i + n)]
    return V, F


def open_box(a, b, c):
    """A box without its top face: an open surface, for inertia="shell"."""
    V, Q = box(a, b, c)
    return V, [q for q in Q if q != (1, 5, 7, 3)]


def triangles(F):
    return [t for f in F for t in ([f] if len(f) == 3 else [(f[0], f[k], f[k + 1]) for k in range(1, len(f) - 1)])]


def write_stl(path, V, F):
    """Binary STL: an 80-byte header, the triangle count, then per triangle a (zero) normal, three
    float32 vertices and a 2-byte attribute."""
    T = triangles(F)
    with open(path, "wb") as f:
        f.write(b"treedyn test mesh".ljust(80, b" ") + struct.pack("<I", len(T)))
        for t in T:
            f.write(struct.pack("<12fH", 0, 0, 0, *np.asarray(V, dtype=float)[list(t)].ravel(), 0))


def write_ascii_stl(path, V, F):
    V32 = np.asarray(V, dtype=np.float32)
    lines = ["solid treedyn"]
    for t in triangles(F):
        lines += ["  facet normal 0 0 0", "    outer loop"]
        lines += [f"      vertex {' '.join(repr(float(x)) for x in V32[i])}" for i in t]
        lines += ["    endloop", "  endfacet"]
    open(path, "w").write("\n".join(lines + ["endsolid treedyn", ""]))


def write_obj(path, V, F):
    lines = ["v " + " ".join(repr(float(x)) for x in v) for v in np.asarray(V, dtype=float)]
    lines += ["f " + " ".join(str(i + 1) for i in f) for f in F]  # polygons as written (quads stay)
    open(path, "w").write("\n".join(lines) + "\n")


def write_msh(path, V, F):
    """MuJoCo's binary mesh: nvertex, nnormal, ntexcoord, nface, then the vertices and faces."""
    T = np.asarray(triangles(F), dtype="<i4")
    with open(path, "wb") as f:
        f.write(np.array([len(V), 0, 0, len(T)], dtype="<i4").tobytes())
        f.write(np.asarray(V, dtype="<f4").tobytes() + T.tobytes())


WRITERS = {"stl": write_stl, "obj": write_obj, "msh": write_msh}


def inline(V, F=None):
    """The vertex (and face) attributes of an inline <mesh>."""
    out = 'vertex="' + "  ".join(" ".join(repr(float(x)) for x in v) for v in V) + '"'
    return out + (' face="' + "  ".join(" ".join(map(str, t)) for t in triangles(F)) + '"' if F else "")


def model_file(tmp_path, asset, geoms, extra=""):
    path = tmp_path / "model.xml"
    path.write_text(
        f"<mujoco>{extra}<asset>{asset}</asset><worldbody>"
        f'<body name="b" pos="0.1 -0.2 0.3"><joint axis="0.3 1 0.2"/>{geoms}'
        f'<body name="c" pos="0.2 0 0"><joint type="ball"/><geom type="capsule" size="0.02 0.1"/></body>'
        "</body></worldbody></mujoco>"
    )
    return str(path)


# ------------------------------------------------------------------ comparing with MuJoCo


def mujoco_spatial_inertia(m, body):
    """MuJoCo's compiled body inertia as a 6×6 spatial inertia about the body frame's origin."""
    R = quat_to_matrix(m.body_iquat[body])
    mass, c = m.body_mass[body], m.body_ipos[body]
    cx = np.array([[0, -c[2], c[1]], [c[2], 0, -c[0]], [-c[1], c[0], 0]])
    Ic = R @ np.diag(m.body_inertia[body]) @ R.T
    return np.block([[Ic - mass * cx @ cx, mass * cx], [-mass * cx, mass * np.eye(3)]])


def cancellation(V, F):
    """Σ|v_i| / |Σ v_i| over the pyramids from the vertices' mean to the faces: how much larger
    the magnitudes summed are than the signed volume (1 for a convex mesh)."""
    T = np.asarray(V, dtype=float)[np.asarray(triangles(F))] - np.mean(V, axis=0)
    vol = np.einsum("ij,ij->i", T[:, 0], np.cross(T[:, 1], T[:, 2]))
    return float(np.abs(vol).sum() / abs(vol.sum()))


def assert_mesh_body_is_mujocos(path, faces, kappa=1.0, what="mesh", n_states=2, body=True):
    """Body "b"'s mass, centre and inertia equal MuJoCo's compiled ones, and M, b, q̈, M⁻¹ agree.

    Tolerance: every entry of a mesh's volume, first and second moments is a sum over its m faces
    of products of a few vertex coordinates (relative to a point near the mesh), and MuJoCo and
    treedyn sum the same terms: each carries |error| ≤ γ_{m+4} times the sum of the magnitudes
    summed (Higham §3.1), which is the result's own magnitude times κ = Σ|pyramid| / |Σ pyramid|
    (1 for a convex mesh, legacy and shell; > 1 for the signed pyramids of a non-convex mesh).
    The principal-axes iteration both apply (treedyn.io.mesh.principal_inertia) is a few 3×3
    products, and the 6×6 spatial inertia the parallel-axis term: c·n·u with n = m + 4, scale κ|I|.
    body=False: only M, b, q̈, M⁻¹ (treedyn merges a jointless child into "b", MuJoCo does not)."""
    m = mujoco.MjModel.from_xml_path(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = td.Model.from_mjcf(path)
    if body:
        ref = mujoco_spatial_inertia(m, 1)
        mine = np.asarray(model._cpp.spatial_inertia(model.body_index("b")))
        assert_within_rounding(mine, ref, kappa * np.abs(ref), faces + 4, what=f"{what}: body inertia")
    from treedyn.tools.peers import MujocoFromFile

    assert_peer_agrees_at_random_states(
        model, MujocoFromFile(model, path), np.random.default_rng(faces), n=n_states, what=f"{what}: MuJoCo"
    )
    return m, model


# ------------------------------------------------------------------ files and formats

SHAPES = {
    "box": (box(0.05, 0.1, 0.15), "box"),
    "tetrahedron": (tetrahedron(0.1, 0.13, 0.17), "tet"),
}


@pytest.mark.parametrize("fmt", ["stl", "obj", "msh"])
@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_mesh_files_give_mujocos_inertia(tmp_path, shape, fmt):
    """Binary STL (float32 vertices), OBJ (the box's faces as quadrilaterals: triangulated by
    trimesh as by MuJoCo) and MSH, with a geom pose and the default (legacy) inertia."""
    (V, F), name = SHAPES[shape]
    WRITERS[fmt](tmp_path / f"{name}.{fmt}", V, F)
    path = model_file(
        tmp_path,
        f'<mesh file="{name}.{fmt}"/>',
        f'<geom type="mesh" mesh="{name}" pos="0.02 0.03 -0.01" euler="10 20 30"/>',
    )
    assert_mesh_body_is_mujocos(path, len(triangles(F)), what=f"{shape}.{fmt}")


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_ascii_stl_is_the_binary_stls_mesh(tmp_path, shape):
    """MuJoCo 4.0 refuses ASCII STL ("perhaps this is an ASCII file?"); treedyn reads it (trimesh)
    into the mesh MuJoCo compiles from the same float32 vertices in binary STL."""
    (V, F), name = SHAPES[shape]
    write_stl(tmp_path / "binary.stl", V, F)
    write_ascii_stl(tmp_path / "ascii.stl", V, F)
    geom = f'<geom type="mesh" mesh="{name}" density="321"/>'
    binary = model_file(tmp_path, f'<mesh name="{name}" file="binary.stl"/>', geom)
    with pytest.raises(ValueError, match="ASCII"):
        mujoco.MjModel.from_xml_string(open(binary).read().replace("binary.stl", str(tmp_path / "ascii.stl")))
    m, _ = assert_mesh_body_is_mujocos(binary, len(triangles(F)), what=f"{shape} binary")
    ascii_path = tmp_path / "ascii.xml"
    ascii_path.write_text(open(binary).read().replace("binary.stl", "ascii.stl"))
    model = td.Model.from_mjcf(str(ascii_path))
    ref = mujoco_spatial_inertia(m, 1)
    mine = np.asarray(model._cpp.spatial_inertia(model.body_index("b")))
    # the same float32 vertices, the same computation: a handful of roundings apart (n = faces + 4)
    assert_within_rounding(mine, ref, np.abs(ref), len(triangles(F)) + 4, what=f"{shape} ascii")


def test_inline_vertices_and_faces_are_rounded_to_single_precision(tmp_path):
    """MuJoCo keeps mesh vertices in float32: 0.1 in the file is 0.10000000149 (a 1.5e-8 relative
    change of the volume, far above rounding), and treedyn rounds them the same way."""
    V, F = tetrahedron(0.1, 0.1, 0.1)
    path = model_file(
        tmp_path, f'<mesh name="t" {inline(V, F)} inertia="exact"/>', '<geom type="mesh" mesh="t" density="1"/>'
    )
    m, model = assert_mesh_body_is_mujocos(path, 4, what="inline tetrahedron")
    v32 = float(np.float32(0.1)) ** 3 / 6
    assert m.body_mass[1] == pytest.approx(v32, rel=rounding_bound(4)) and abs(v32 / (0.1**3 / 6) - 1) > 1e-8


def test_a_mesh_without_faces_is_its_convex_hull(tmp_path):
    rng = np.random.default_rng(3)
    V = rng.standard_normal((20, 3)) * [0.1, 0.06, 0.03]
    path = model_file(tmp_path, f'<mesh name="cloud" {inline(V)}/>', '<geom type="mesh" mesh="cloud"/>')
    # the hull's faces (qhull, in MuJoCo and through scipy): at most 2·20 − 4 triangles
    assert_mesh_body_is_mujocos(path, 36, what="point cloud")


# ------------------------------------------------------------------ the inertia modes


@pytest.mark.parametrize("mode", [None, "legacy", "exact", "convex", "shell"])
def test_inertia_modes_of_a_non_convex_mesh_are_mujocos(tmp_path, mode):
    V, F = thin_l()
    write_stl(tmp_path / "l.stl", V, F)
    attr = f' inertia="{mode}"' if mode else ""
    path = model_file(
        tmp_path, f'<mesh name="l" file="l.stl" scale="0.1 0.1 0.1"{attr}/>', '<geom type="mesh" mesh="l"/>'
    )
    kappa = cancellation(V, F) if mode in ("exact", "convex") else 1.0
    m, _ = assert_mesh_body_is_mujocos(path, len(F) + 8, kappa, what=f"L {mode}")  # + 8: the hull's faces
    # what each mode means: the exact volume of the L (float32 sizes), its hull, legacy's over-count
    w = float(np.float32(0.2))
    exact = 1000 * (2 * w * 2 - w * w) * 0.5 * 1e-3
    hull = 1000 * (2 * 2 - 0.5 * (2 - w) ** 2) * 0.5 * 1e-3
    mass = m.body_mass[1]  # body "b" carries only its own geoms (the capsule is in its child "c")
    expected = {"exact": exact, "convex": hull}.get(mode)
    if expected is not None:  # the volume formula from the same float32 w: γ_m·κ of the sum
        assert mass == pytest.approx(expected, rel=kappa * rounding_bound(len(F) + 8))
    elif mode != "shell":
        assert exact * 1.5 < mass < hull  # legacy (the default): pyramids on a point outside the L overlap


def test_shell_of_an_open_surface_is_mujocos(tmp_path):
    V, F = open_box(0.05, 0.1, 0.15)
    write_obj(tmp_path / "cup.obj", V, F)
    path = model_file(
        tmp_path, '<mesh file="cup.obj" inertia="shell"/>', '<geom type="mesh" mesh="cup" density="2.5"/>'
    )
    m, _ = assert_mesh_body_is_mujocos(path, 10, what="open box shell")
    area = 2 * (0.1 * 0.3 + 0.2 * 0.3) + 0.1 * 0.2  # four walls and the bottom
    # the file's float32 sizes (each within 2⁻²⁴ relative of the decimal) multiply in pairs
    assert m.body_mass[1] == pytest.approx(2.5 * area, rel=2 * 2.0**-24 + rounding_bound(10))


def test_mesh_default_class_sets_the_inertia_mode(tmp_path):
    V, F = thin_l()
    write_stl(tmp_path / "l.stl", V, F)
    extra = '<default><mesh inertia="convex"/><default class="s"><mesh inertia="shell"/></default></default>'
    path = model_file(
        tmp_path,
        '<mesh name="l" file="l.stl" scale="0.1 0.1 0.1"/><mesh name="ls" class="s" file="l.stl" scale="0.1 0.1 0.1"/>',
        '<geom type="mesh" mesh="l"/><geom type="mesh" mesh="ls" pos="0 0 0.1" density="3"/>',
        extra,
    )
    assert_mesh_body_is_mujocos(path, len(F) + 8, cancellation(V, F), what="default classes")


# ------------------------------------------------------------------ placement, pose and mass


@pytest.mark.parametrize(
    "attrs",
    [
        'scale="0.3 0.7 1.9"',
        'scale="-0.3 0.7 1.9"',  # mirrored: the faces are turned over
        'refpos="0.3 -0.1 0.05"',
        'refquat="0.9 0.1 0.2 0.3"',
        'refpos="0.3 -0.1 0.05" refquat="0.9 0.1 0.2 0.3" scale="0.05 0.06 0.07"',
    ],
)
def test_scale_refpos_refquat_are_mujocos(tmp_path, attrs):
    V, F = thin_l()
    write_stl(tmp_path / "l.stl", V, F)
    path = model_file(tmp_path, f'<mesh name="l" file="l.stl" {attrs}/>', '<geom type="mesh" mesh="l" density="7"/>')
    assert_mesh_body_is_mujocos(path, len(F), what=attrs)


@pytest.mark.parametrize("welded", [False, True])
def test_geom_pose_mass_and_other_geoms_are_mujocos(tmp_path, welded):
    """mass= instead of a density, a geom pose, two geoms of one mesh, a primitive beside them;
    and a jointless child body (merged into its parent by treedyn) with a mesh of its own."""
    V, F = thin_l()
    write_stl(tmp_path / "l.stl", V, F)
    Vt, Ft = tetrahedron(0.1, 0.13, 0.17)
    write_obj(tmp_path / "t.obj", Vt, Ft)
    geoms = (
        '<geom type="mesh" mesh="l" mass="2.5" pos="0.1 0 0" quat="0.8 0.3 0.1 0.2"/>'
        '<geom type="mesh" mesh="l" density="300" pos="0 0.1 0" euler="30 -40 50"/>'
        '<geom type="box" size="0.02 0.03 0.04"/>'
    )
    if welded:
        geoms += '<body name="welded" pos="0 0 0.2" euler="0 90 0"><geom type="mesh" mesh="t" pos="0 0.01 0"/></body>'
    path = model_file(tmp_path, '<mesh name="l" file="l.stl" scale="0.1 0.1 0.1"/><mesh file="t.obj"/>', geoms)
    assert_mesh_body_is_mujocos(path, len(F) + 4, what="several geoms", body=not welded)


def exact_inertia(V, F):
    """The rotational inertia about its centre of a closed mesh of unit density (signed tetrahedra
    from the origin), independently of treedyn.io.mesh: (mass, centre, inertia)."""
    T = np.asarray(V, dtype=float)[np.asarray(triangles(F))]
    vol = np.einsum("ij,ij->i", T[:, 0], np.cross(T[:, 1], T[:, 2])) / 6
    s = T.sum(axis=1)
    mass, c = vol.sum(), (vol @ s) / (4 * vol.sum())
    C = (np.einsum("n,nji,njk->ik", vol, T, T) + np.einsum("n,ni,nk->ik", vol, s, s)) / 20 - mass * np.outer(c, c)
    return mass, c, np.trace(C) * np.eye(3) - C


def test_principal_axes_are_mujocos_at_random_orientations(tmp_path):
    """MuJoCo keeps a mesh's inertia in principal axes that it finds to EIG_REL = 1e-7 only (what
    is left off the diagonal is dropped): at random orientations MuJoCo's inertia is up to ~1e-7
    off the exact one, far above rounding, and treedyn (principal_inertia) reproduces it."""
    V, F = thin_l()
    V = V.astype(np.float32).astype(float)  # as written to the STL
    write_stl(tmp_path / "l.stl", V, F)
    rng = np.random.default_rng(5)
    off = []
    for mode in ("exact", "legacy", "shell", "convex", "exact", "exact", "exact", "exact"):
        q = rng.standard_normal(4)
        q_text = " ".join(repr(float(x)) for x in q)
        path = model_file(
            tmp_path,
            f'<mesh name="l" file="l.stl" inertia="{mode}" refquat="{q_text}" scale="0.1 0.1 0.1"/>',
            '<geom type="mesh" mesh="l"/>',
        )
        kappa = cancellation(V, F) if mode in ("exact", "convex") else 1.0
        m, _ = assert_mesh_body_is_mujocos(path, len(F) + 8, kappa, what=f"{mode} at {q_text}", n_states=1)
        if mode == "exact":
            R = quat_to_matrix(q)
            _, _, I = exact_inertia(0.1 * V @ R, F)
            Rm = quat_to_matrix(m.body_iquat[1])
            I_mj = Rm @ np.diag(m.body_inertia[1]) @ Rm.T / 1000  # density 1000
            off.append(float(np.abs(I_mj - I).max() / np.abs(I).max()))
            assert np.abs(principal_inertia(I) - I_mj).max() <= rounding_bound(len(F)) * kappa * np.abs(I).max()
    # what MuJoCo drops: at most the entries it leaves off the diagonal, each < EIG_REL·max Iᵢᵢ,
    # turned back by the principal axes (≤ 3 entries per row); above rounding in some case
    assert max(off) <= 3 * EIG_REL and max(off) > rounding_bound(len(F)) * kappa, off


# ------------------------------------------------------------------ shellinertia of primitives


@pytest.mark.parametrize(
    "geom",
    [
        'type="sphere" size="0.11"',
        'type="box" size="0.05 0.08 0.13" euler="10 20 30"',
        'type="cylinder" size="0.04 0.15" mass="2"',
        'type="capsule" size="0.04 0.15" density="321"',
        'type="capsule" fromto="0.1 0 0 0.2 0.3 -0.1" size="0.03"',
        'type="ellipsoid" size="0.05 0.08 0.13" quat="0.8 0.3 0.1 0.2"',
    ],
)
def test_shellinertia_of_primitives_is_mujocos(geom):
    xml = f'<mujoco><worldbody><body name="b"><joint/><geom {geom} shellinertia="true"/></body></worldbody></mujoco>'
    m = mujoco.MjModel.from_xml_string(xml)
    model = td.Model.from_mjcf(xml)
    ref = mujoco_spatial_inertia(m, 1)
    mine = np.asarray(model._cpp.spatial_inertia(1))
    if "ellipsoid" in geom:
        # MuJoCo's ellipsoid shell is the difference of two solids 1e-6 apart in size: each rounded
        # to a few u of its magnitude, the difference to a few u·(size / 1e-6) of its own (Higham
        # §1.7, cancellation), in MuJoCo and here: c·u·size/t with the largest size 0.13
        assert_within_rounding(mine, ref, np.abs(ref) * 0.13 / 1e-6, 1, what=geom)
    else:  # closed forms: a handful of roundings
        assert_within_rounding(mine, ref, np.abs(ref), 3, what=geom)


# ------------------------------------------------------------------ paths


def test_mesh_paths_follow_meshdir_assetdir_and_the_main_file(tmp_path):
    """Mesh files are found in <compiler meshdir> (else assetdir) relative to the main file's
    folder, also for a mesh declared in an included file of another folder (MuJoCo's rules)."""
    V, F = box(0.05, 0.1, 0.15)
    os.makedirs(tmp_path / "meshes")
    os.makedirs(tmp_path / "parts" / "meshes")
    write_stl(tmp_path / "meshes" / "box.stl", V, F)
    write_stl(tmp_path / "parts" / "meshes" / "box.stl", *box(0.3, 0.3, 0.3))  # must not be found
    (tmp_path / "parts" / "assets.xml").write_text('<mujoco><asset><mesh file="box.stl"/></asset></mujoco>')
    main = tmp_path / "main.xml"
    for compiler in ('meshdir="meshes"', 'assetdir="meshes"', 'meshdir="meshes" assetdir="parts"'):
        main.write_text(
            f'<mujoco><compiler {compiler}/><include file="parts/assets.xml"/><worldbody><body name="b">'
            '<joint/><geom type="mesh" mesh="box"/></body></worldbody></mujoco>'
        )
        m = mujoco.MjModel.from_xml_path(str(main))
        model = td.Model.from_mjcf(str(main))
        # three float32 sizes (each within 2⁻²⁴ relative of the decimal) multiply
        assert m.body_mass[1] == pytest.approx(1000 * 0.1 * 0.2 * 0.3, rel=3 * 2.0**-24 + rounding_bound(12))
        assert model.inertias[1].mass == pytest.approx(m.body_mass[1], rel=rounding_bound(12))


# ------------------------------------------------------------------ errors


def _body(geom, asset=""):
    return f'<mujoco><asset>{asset}</asset>\n<worldbody>\n<body name="b">\n<joint/>\n{geom}\n</body>\n</worldbody>\n</mujoco>'


TET = inline(*tetrahedron(0.1, 0.1, 0.1))
ERRORS = {
    "missing-file": (
        _body('<geom type="mesh" mesh="m"/>', '<mesh name="m" file="nowhere.stl"/>'),
        ["mesh 'm'", "'nowhere.stl' not found", "line 1"],
    ),
    "unreadable-file": (
        _body('<geom type="mesh" mesh="bad"/>', '<mesh file="bad.stl"/>'),
        ["mesh 'bad' (file 'bad.stl')", "cannot read", "line 1"],
    ),
    "unknown-type": (
        _body('<geom type="mesh" mesh="m"/>', '<mesh name="m" file="m.ply"/>'),
        ["mesh 'm' (file 'm.ply')", "STL, OBJ and MSH"],
    ),
    "shellinertia-on-mesh": (
        _body('<geom type="mesh" mesh="m" shellinertia="true"/>', f'<mesh name="m" {TET}/>'),
        ["shellinertia does not apply to a mesh", "inertia='shell'", "line 5"],
    ),
    "inertia-value": (
        _body('<geom type="mesh" mesh="m"/>', f'<mesh name="m" {TET} inertia="solid"/>'),
        ["inertia='solid'", "legacy, convex, exact, shell"],
    ),
    "too-few-vertices": (
        _body('<geom type="mesh" mesh="m"/>', '<mesh name="m" vertex="0 0 0 1 0 0 0 1 0"/>'),
        ["3 vertices", "at least 4"],
    ),
    "flat": (
        _body('<geom type="mesh" mesh="m"/>', '<mesh name="m" vertex="0 0 0 1 0 0 0 1 0 1 1 0"/>'),
        ["one plane"],
    ),
    "misoriented": (
        _body(
            '<geom type="mesh" mesh="m"/>',
            '<mesh name="m" vertex="0 0 0 .1 0 0 0 .1 0 0 0 .1" face="0 1 2 0 3 1 0 2 3 1 3 2" inertia="exact"/>',
        ),
        ["volume is negative", "turned inwards"],
    ),
    "inconsistent": (
        _body(
            '<geom type="mesh" mesh="m"/>',
            '<mesh name="m" vertex="0 0 0 .1 0 0 0 .1 0 0 0 .1" face="0 2 1 0 1 3 0 3 2 1 3 2" inertia="exact"/>',
        ),
        ["not consistently oriented", "inertia='exact'"],
    ),
    "fitted-primitive": (
        _body('<geom type="box" mesh="m"/>', f'<mesh name="m" {TET}/>'),
        ["a box fitted to mesh 'm' is not supported", "line 5"],
    ),
    "bad-face": (
        _body('<geom type="mesh" mesh="m"/>', '<mesh name="m" vertex="0 0 0 1 0 0 0 1 0 0 0 1" face="0 1 7"/>'),
        ["refers to vertex 7"],
    ),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_mesh_errors_name_the_mesh_the_file_and_the_line(tmp_path, case):
    text, expected = ERRORS[case]
    (tmp_path / "bad.stl").write_bytes(b"not an STL file, far too short")
    (tmp_path / "m.ply").write_text("ply\n")
    path = tmp_path / f"{case}.xml"
    path.write_text(text)
    with pytest.raises(ModelFileError) as e:
        td.Model.from_mjcf(str(path))
    msg = str(e.value)
    assert msg.startswith(f"{path}, line ") and e.value.line is not None, msg
    for part in expected:
        assert part in msg, (part, msg)
    if case in ("missing-file", "unreadable-file", "shellinertia-on-mesh", "misoriented", "flat", "too-few-vertices"):
        with pytest.raises(ValueError):  # MuJoCo refuses these too
            mujoco.MjModel.from_xml_path(str(path))


def test_a_mesh_is_read_only_when_an_inertia_needs_it(tmp_path):
    """A body with an <inertial> does not read its meshes (their file must still exist, as MuJoCo
    requires): a damaged visual mesh does not stop the load."""
    (tmp_path / "bad.stl").write_bytes(b"not an STL file, far too short")
    path = tmp_path / "m.xml"
    path.write_text(
        _body(
            '<inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/><geom type="mesh" mesh="bad"/>',
            '<mesh file="bad.stl"/>',
        )
    )
    assert td.Model.from_mjcf(str(path)).inertias[1].mass == 1.0
