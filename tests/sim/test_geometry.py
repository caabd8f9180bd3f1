"""Collision geometry (contact/collision.hpp through python/treedyn/sim/collision.py, the shapes in
model/shapes.py): every pair kind against configurations worked out by hand (exact depths, normals,
points), the closed forms against coal at random poses, the box patches (4 points flat, 8 rotated by
45°, inside both boxes), the pair filters and bad input. Depths and normals of two exact computations
of the same distance agree to rounding (c·u·scale, scale the poses' magnitudes ~1: checked at 1e-9);
coal's GJK/EPA (box–box, box–capsule) stops at its own tolerance, but its depths and normals agreed
with the closed forms to ~5e-11 and 1e-9 on 4000 random poses (measured): checked at 1e-9 too."""

import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import treedyn as td
from treedyn import _core
from treedyn.model.shapes import Geom
from treedyn.sim.collision import SHAPE_KIND, _size, collision_pairs

coal = pytest.importorskip("coal")


def random_rotation(rng):
    q = rng.standard_normal(4)
    x, y, z, w = q / np.linalg.norm(q)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


def coal_shape(s):
    if isinstance(s, td.Sphere):
        return coal.Sphere(s.radius)
    if isinstance(s, td.Capsule):
        return coal.Capsule(s.radius, 2 * s.half_length)
    if isinstance(s, td.Box):
        return coal.Box(*(2 * np.asarray(s.half_extents)))
    return coal.Halfspace(np.array([0.0, 0.0, 1.0]), 0.0)


def coal_deepest(sa, Ra, pa, sb, Rb, pb):
    req, res = coal.CollisionRequest(), coal.CollisionResult()
    coal.collide(coal_shape(sa), coal.Transform3s(Ra, pa), coal_shape(sb), coal.Transform3s(Rb, pb), req, res)
    cs = [c for c in res.getContacts() if c.penetration_depth < 0]
    if not cs:
        return None
    c = min(cs, key=lambda c: c.penetration_depth)
    return -c.penetration_depth, np.array(c.normal)


def pair(sa, Ra, pa, sb, Rb, pb):
    """The contacts of shape a at world pose (Ra, pa) against shape b at (Rb, pb), as [(point,
    normal, depth)]: the two as geoms of the world (_core.collide_geoms, what td.collide calls)."""
    _, _, x, n, d, _ = collide_geoms([sa, sb], [(Ra, pa), (Rb, pb)], [(0, 1)])
    return list(zip(x, n, d))


def collide_geoms(shapes, poses, pairs, friction=None):
    G = len(shapes)
    return _core.collide_geoms(
        np.array([SHAPE_KIND[type(s)] for s in shapes]),
        np.zeros(G, dtype=int),
        np.array([R for R, _ in poses], dtype=float).reshape(G, 3, 3),
        np.array([p for _, p in poses], dtype=float).reshape(G, 3),
        np.array([_size(s) for s in shapes], dtype=float).reshape(G, 3),
        np.ones(G) if friction is None else np.asarray(friction, dtype=float),
        np.array(pairs, dtype=np.int64).reshape(-1, 2),
        np.eye(3)[None],
        np.zeros((1, 3)),
    )


def face_preferred_slack(sa, Ra, pa, sb, Rb, pb, normal):
    """Box–box: when coal's normal is an edge cross within 0.01 rad of a face normal (not on it), the
    face is taken (collision.hpp kFaceCos: a stack must keep its patch), whose overlap is larger by at
    most (Σh_a + Σh_b + |p_b − p_a|)·θ: that bound on the depth, and θ on the normal; else 0."""
    if not (isinstance(sa, td.Box) and isinstance(sb, td.Box)):
        return 0.0
    c = max(np.abs(Ra.T @ normal).max(), np.abs(Rb.T @ normal).max())
    if c >= 1 - 1e-12 or c < math.cos(0.0101):
        return 0.0
    return (sum(sa.half_extents) + sum(sb.half_extents) + np.linalg.norm(pb - pa)) * 0.0101


PAIRS = [
    (td.Sphere(0.3), td.Sphere(0.4), 1e-9),
    (td.Capsule(0.2, 0.3), td.Sphere(0.3), 1e-9),
    (td.Sphere(0.3), td.Capsule(0.2, 0.3), 1e-9),
    (td.Capsule(0.2, 0.4), td.Capsule(0.25, 0.3), 1e-9),
    (td.Box((0.3, 0.2, 0.25)), td.Sphere(0.3), 1e-9),
    (td.Plane(), td.Sphere(0.3), 1e-9),
    (td.Plane(), td.Capsule(0.2, 0.3), 1e-9),
    (td.Plane(), td.Box((0.3, 0.2, 0.25)), 1e-9),
    (td.Box((0.3, 0.2, 0.25)), td.Box((0.2, 0.3, 0.2)), 1e-9),
    (td.Box((0.3, 0.2, 0.25)), td.Capsule(0.2, 0.3), 1e-9),
]


@pytest.mark.parametrize("sa,sb,tol", PAIRS, ids=lambda x: type(x).__name__ if not isinstance(x, float) else "")
def test_deepest_contact_agrees_with_coal(sa, sb, tol):
    rng = np.random.default_rng(7)
    checked = 0
    for _ in range(200):
        Ra, Rb = random_rotation(rng), random_rotation(rng)
        pa, pb = rng.uniform(-0.4, 0.4, 3), rng.uniform(-0.4, 0.4, 3)
        if isinstance(sa, td.Plane):
            Ra, pa = np.eye(3), np.zeros(3)  # coal's half-space is z <= 0 in its frame
        ours = pair(sa, Ra, pa, sb, Rb, pb)
        ref = coal_deepest(sa, Ra, pa, sb, Rb, pb)
        if ref is None or ref[0] < 1e-4:  # touching within coal's tolerance either way
            continue
        assert ours, "coal finds a contact, treedyn none"
        x, n, d = max(ours, key=lambda c: c[2])
        slack = face_preferred_slack(sa, Ra, pa, sb, Rb, pb, ref[1])
        if slack:
            assert ref[0] - tol <= d <= ref[0] + slack
            continue
        assert abs(d - ref[0]) <= tol, (d, ref[0])
        assert abs(np.linalg.norm(n) - 1) <= 1e-12
        if ref[0] > 1e-3 and not isinstance(sa, td.Plane):  # a plane's normal is its own axis
            assert np.abs(n - ref[1]).max() <= max(tol, 1e-6) * 1e3, (n, ref[1])
        checked += 1
    assert checked >= 20


def test_separated_shapes_have_no_contact():
    I = np.eye(3)
    assert pair(td.Sphere(0.3), I, np.zeros(3), td.Sphere(0.3), I, np.array([0.7, 0, 0])) == []
    assert pair(td.Plane(), I, np.zeros(3), td.Box((0.1, 0.1, 0.1)), I, np.array([0, 0, 0.11])) == []
    cap = td.Capsule(0.1, 0.5)
    assert pair(cap, I, np.zeros(3), cap, I, np.array([0.21, 0, 0])) == []


def resting_box(height):
    m = td.Model()
    m.add_body("box", None, td.Free(), inertia=td.Inertia(1.0, (0, 0, 0), np.eye(3) * 0.1))
    m.add_geom(None, td.Plane(), name="ground", friction=0.5)
    m.add_geom("box", td.Box((0.1, 0.2, 0.3)), friction=0.8)
    q = td.neutral(m)
    q[2] = height
    return m, q


def test_a_box_sinking_into_the_ground_touches_at_its_four_lower_corners():
    m, q = resting_box(0.29)
    c = td.collide(m, q)
    assert len(c) == 4
    np.testing.assert_allclose(c.depths, 0.01, atol=1e-15)
    np.testing.assert_allclose(c.normals, [[0, 0, 1]] * 4)
    np.testing.assert_allclose(np.sort(np.abs(c.points[:, :2]), axis=0), [[0.1, 0.2]] * 4)
    np.testing.assert_allclose(c.points[:, 2], -0.005, atol=1e-15)  # midway between the surfaces
    assert (c.bodies == [0, 1]).all() and (c.geoms == [0, 1]).all()
    np.testing.assert_array_equal(c.friction, 0.8)
    assert len(td.collide(m, resting_box(0.31)[1])) == 0


def test_pair_filters():
    m = td.Model()
    m.add_body("a", None, td.Revolute((0, 0, 1)), inertia=td.Inertia(1.0, (0, 0, 0), np.eye(3)))
    m.add_body("b", "a", td.Revolute((0, 0, 1)), inertia=td.Inertia(1.0, (0, 0, 0), np.eye(3)))
    m.add_body("c", "b", td.Revolute((0, 0, 1)), inertia=td.Inertia(1.0, (0, 0, 0), np.eye(3)))
    g = [m.add_geom(x, td.Sphere(1.0)) for x in (None, "a", "a", "b", "c")]
    g.append(m.add_geom("c", td.Sphere(1.0), contype=2, conaffinity=2))
    pairs = set(collision_pairs(m))
    assert (1, 2) not in pairs  # one body
    assert (1, 3) not in pairs and (3, 4) not in pairs  # a body and its parent
    assert (0, 1) in pairs  # the world is nobody's parent here
    assert (1, 4) in pairs  # grandparent
    assert (1, 5) not in pairs and (4, 5) not in pairs  # masks 1 and 2 do not meet
    assert all(isinstance(x, Geom) for x in m.geoms) and [x.body for x in m.geoms] == [0, 1, 1, 2, 3, 3]


def test_the_parent_filter_passes_over_joint_only_bodies():
    """A thigh on three hip hinges, as an MJCF body with three joints loads (two massless bodies
    without geoms between it and the pelvis): its geoms do not collide with the pelvis's, as in
    MuJoCo (Gymnasium's humanoid: otherwise its butt and thighs overlap at qpos0, a contact no
    impulse can undo), while a massless body with a geom still counts as a body."""
    xml = """<mujoco><worldbody><body name="pelvis"><freejoint/><geom type="capsule" size="0.09 0.07"/>
      <body name="thigh" pos="0 -0.1 -0.04"><joint name="hx" type="hinge" axis="1 0 0"/>
        <joint name="hz" type="hinge" axis="0 0 1"/><joint name="hy" type="hinge" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0 0.01 -0.34" size="0.06"/></body></body></worldbody></mujoco>"""
    m = td.load_mjcf(xml)
    assert m.n_bodies == 5  # world, pelvis, two joint-only bodies, the thigh
    assert collision_pairs(m) == []
    # the second joint-only body gets a geom: a body now, the pelvis's child (its geom: no pair with
    # the pelvis) and the thigh's parent, so the thigh is the pelvis's grandchild: they collide
    m.add_geom(3, td.Sphere(0.05))
    assert collision_pairs(m) == [(0, 1)]


def test_bad_geoms_are_refused():
    m = td.Model()
    m.add_body("a", None, td.Revolute((0, 0, 1)), inertia=td.Inertia(1.0, (0, 0, 0), np.eye(3)))
    with pytest.raises(ValueError, match="Sphere radius must be positive"):
        td.Sphere(-1)
    with pytest.raises(ValueError, match="Box half_extents must be 3 numbers"):
        td.Box((1, 2))
    with pytest.raises(TypeError, match="shape must be one of"):
        m.add_geom("a", "sphere")
    with pytest.raises(ValueError, match="no body named 'z'"):
        m.add_geom("z", td.Sphere(1))
    with pytest.raises(ValueError, match="friction must be finite"):
        m.add_geom("a", td.Sphere(1), friction=np.nan)
    with pytest.raises(TypeError, match="contype"):
        m.add_geom("a", td.Sphere(1), contype=1.5)
    m.add_geom("a", td.Sphere(1), name="s")
    with pytest.raises(ValueError, match="already exists"):
        m.add_geom("a", td.Sphere(1), name="s")
    assert len(m.geoms) == 1


SCENE = """<mujoco><worldbody>
  <geom name="ground" type="plane" size="5 5 .1" friction=".6"/>
  <body name="ball" pos="0 0 .25"><freejoint/><geom type="sphere" size=".3"/></body>
  <body name="rod" pos="1 0 .1" euler="0 80 0"><freejoint/><geom type="capsule" fromto="0 0 -.3 0 0 .3" size=".12"/></body>
  <body name="crate" pos="-1 0 .18" euler="0 0 30"><freejoint/><geom type="box" size=".2 .3 .2"/></body>
  <body name="pair" pos="0 1.5 .5"><freejoint/><geom type="sphere" size=".2" pos=".15 0 0"/>
    <body name="arm" pos="0 0 0"><joint type="hinge" axis="0 0 1"/><geom type="capsule" fromto="-.1 0 0 -.4 0 0" size=".1"/></body>
  </body>
  <body name="other" pos="0.45 1.5 .5"><freejoint/><geom type="sphere" size=".2"/></body>
</worldbody></mujoco>"""


def test_mjcf_geoms_collide_as_in_mujoco():
    # the same file in MuJoCo: the same pairs, depths (−dist), normals and points (MuJoCo's box–plane
    # keeps up to 4 corners: the crate's 4 penetrating corners here)
    mujoco = pytest.importorskip("mujoco")
    model = td.load_mjcf(SCENE)
    mm = mujoco.MjModel.from_xml_string(SCENE)
    md = mujoco.MjData(mm)
    mujoco.mj_forward(mm, md)
    # MuJoCo's qpos0 (free bodies start where the file puts them) in treedyn's layout
    q = td.neutral(model)
    moving = [i for i in range(1, model.n_bodies) if model.joints[i].nv > 0]
    assert len(moving) == mm.njnt
    for j, i in enumerate(moving):
        a, b = model.q_indices[i], mm.jnt_qposadr[j]
        if isinstance(model.joints[i], td.Free):
            q[a : a + 3] = mm.qpos0[b : b + 3]
            q[a + 3 : a + 7] = np.roll(mm.qpos0[b + 3 : b + 7], -1)  # (w, x, y, z) -> (x, y, z, w)
        else:
            q[a] = mm.qpos0[b]
    ours = td.collide(model, q)
    theirs = sorted(
        (tuple(c.geom), -c.dist, tuple(c.frame[:3]), tuple(c.pos)) for c in md.contact[: md.ncon] if c.dist < 0
    )
    mine = sorted(
        (tuple(g), d, tuple(n), tuple(x)) for g, d, n, x in zip(ours.geoms, ours.depths, ours.normals, ours.points)
    )
    assert [t[0] for t in mine] == [t[0] for t in theirs]
    for (g, d, n, x), (_, dr, nr, xr) in zip(mine, theirs):
        assert abs(d - dr) <= 1e-9, (g, d, dr)  # closed forms on both sides: rounding
        np.testing.assert_allclose(n, nr, atol=1e-9, err_msg=str(g))
        np.testing.assert_allclose(x, xr, atol=1e-9, err_msg=str(g))
    np.testing.assert_array_equal(ours.friction[ours.geoms[:, 0] == 0], 1.0)  # max(0.6, 1)


def test_urdf_collision_primitives_become_geoms():
    urdf = """<robot name="r"><link name="base"><collision><origin xyz="0 0 .1"/><geometry><box size=".2 .4 .6"/></geometry></collision></link>
    <joint name="j" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 0 1"/>
      <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
    <link name="arm"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial>
      <collision name="tip"><origin xyz=".5 0 0"/><geometry><sphere radius=".1"/></geometry></collision>
      <collision><geometry><mesh filename="arm.stl"/></geometry></collision></link></robot>"""
    model = td.load_urdf(urdf)
    assert [(g.name, g.body, g.shape) for g in model.geoms] == [
        ("base/collision0", 0, td.Box((0.1, 0.2, 0.3))),
        ("arm/tip", 1, td.Sphere(0.1)),
    ]
    np.testing.assert_array_equal(model.geoms[0].placement.translation, [0, 0, 0.1])
    np.testing.assert_array_equal(model.geoms[1].placement.translation, [0.5, 0, 0])


# ------------------------------------------------------------------------------ every pair kind by hand
I3 = np.eye(3)
ALONG_X = np.array([[0.0, 0, 1], [0, 1, 0], [-1, 0, 0]])  # a rotation about y by 90°: local z along world x
ALONG_Y = np.array([[1.0, 0, 0], [0, 0, -1], [0, 1, 0]])  # about x by −90°: local z along world y


def rot_z(angle):
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def rot_x(angle):
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


def rot_y(angle):
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])


def check(contacts, expected, atol=1e-12):
    """contacts [(point, normal, depth)] equal `expected` [(point, normal, depth)] in some order."""
    assert len(contacts) == len(expected), (contacts, expected)
    got = sorted((tuple(np.round(x, 9)), tuple(x), tuple(n), d) for x, n, d in contacts)
    want = sorted((tuple(np.round(x, 9)), tuple(x), tuple(n), d) for x, n, d in expected)
    for (_, x, n, d), (_, xe, ne, de) in zip(got, want):
        np.testing.assert_allclose(x, xe, atol=atol)
        np.testing.assert_allclose(n, ne, atol=atol)
        assert abs(d - de) <= atol, (d, de)


Z, X = np.array([0.0, 0, 1]), np.array([1.0, 0, 0])
s2 = math.sqrt(2)
HAND = {
    # plane z = 0; a sphere of radius 0.5 at height 0.4: 0.1 deep, midway at z = −0.05
    "plane-sphere": (td.Plane(), I3, np.zeros(3), td.Sphere(0.5), I3, [0.3, 0.2, 0.4], [([0.3, 0.2, -0.05], Z, 0.1)]),
    # a capsule lying along x: both cap centres 0.02 deep
    "plane-capsule": (
        td.Plane(),
        I3,
        np.zeros(3),
        td.Capsule(0.1, 0.5),
        ALONG_X,
        [0, 0, 0.08],
        [([-0.5, 0, -0.01], Z, 0.02), ([0.5, 0, -0.01], Z, 0.02)],
    ),
    # a capsule standing: its lower cap only
    "plane-capsule-upright": (
        td.Plane(),
        I3,
        np.zeros(3),
        td.Capsule(0.1, 0.5),
        I3,
        [0, 0, 0.58],
        [([0, 0, -0.01], Z, 0.02)],
    ),
    # a box tilted 45° about x, its lowest edge 0.01 deep: the edge's 2 corners
    "plane-box-edge": (
        td.Plane(),
        I3,
        np.zeros(3),
        td.Box((0.3, 0.5, 0.5)),
        rot_x(math.pi / 4),
        [0, 0, 0.5 * s2 - 0.01],
        [([-0.3, 0, -0.005], Z, 0.01), ([0.3, 0, -0.005], Z, 0.01)],
    ),
    "sphere-sphere": (td.Sphere(0.5), I3, np.zeros(3), td.Sphere(0.4), I3, [0.8, 0, 0], [([0.45, 0, 0], X, 0.1)]),
    # the sphere beside the capsule's segment, then beyond its end
    "sphere-capsule": (
        td.Sphere(0.3),
        I3,
        [0.4, 0, 0.5],
        td.Capsule(0.2, 1.0),
        I3,
        np.zeros(3),
        [([0.15, 0, 0.5], -X, 0.1)],
    ),
    "sphere-capsule-end": (
        td.Sphere(0.2),
        I3,
        [0, 0, 1.3],
        td.Capsule(0.2, 1.0),
        I3,
        np.zeros(3),
        [([0, 0, 1.15], -Z, 0.1)],
    ),
    # outside the box, nearest its edge (1, 1, z): distance 0.5 along (0.6, 0.8, 0), midway between
    # (1, 1) and the sphere's (0.94, 0.92)
    "sphere-box-edge": (
        td.Sphere(0.6),
        I3,
        [1.3, 1.4, 0.2],
        td.Box((1, 1, 1)),
        I3,
        np.zeros(3),
        [([0.97, 0.96, 0.2], [-0.6, -0.8, 0], 0.1)],
    ),
    # the centre inside the box, 0.1 from its +x face: depth r + 0.1, midway between x = 0.7 and 1
    "sphere-box-inside": (
        td.Sphere(0.2),
        I3,
        [0.9, 0.1, 0],
        td.Box((1, 1, 1)),
        I3,
        np.zeros(3),
        [([0.85, 0.1, 0], -X, 0.3)],
    ),
    # crossing at right angles: the segments' nearest points (0, 0, 0) and (0, 0, 0.35)
    "capsule-capsule-crossing": (
        td.Capsule(0.2, 1.0),
        ALONG_X,
        np.zeros(3),
        td.Capsule(0.2, 1.0),
        ALONG_Y,
        [0, 0, 0.35],
        [([0, 0, 0.175], Z, 0.05)],
    ),
    # parallel, overlapping on x ∈ [−0.5, 1]: the overlap's ends
    "capsule-capsule-parallel": (
        td.Capsule(0.2, 1.0),
        ALONG_X,
        np.zeros(3),
        td.Capsule(0.2, 1.0),
        ALONG_X,
        [0.5, 0, 0.35],
        [([-0.5, 0, 0.175], Z, 0.05), ([1.0, 0, 0.175], Z, 0.05)],
    ),
    # lying on the box's top face (z = 1): 2 points, normals capsule → box
    "capsule-box-lying": (
        td.Capsule(0.1, 0.5),
        ALONG_X,
        [0, 0.3, 1.08],
        td.Box((1, 1, 1)),
        I3,
        np.zeros(3),
        [([-0.5, 0.3, 0.99], -Z, 0.02), ([0.5, 0.3, 0.99], -Z, 0.02)],
    ),
    # hanging over the edge x = 1: the part over the face, x ∈ [0.3, 1]
    "capsule-box-overhang": (
        td.Capsule(0.1, 0.5),
        ALONG_X,
        [0.8, 0, 1.08],
        td.Box((1, 1, 1)),
        I3,
        np.zeros(3),
        [([0.3, 0, 0.99], -Z, 0.02), ([1.0, 0, 0.99], -Z, 0.02)],
    ),
    "capsule-box-upright": (
        td.Capsule(0.1, 0.5),
        I3,
        [0.2, 0, 1.58],
        td.Box((1, 1, 1)),
        I3,
        np.zeros(3),
        [([0.2, 0, 0.99], -Z, 0.02)],
    ),
    # the segment itself 0.1 inside the top face: depth r + 0.1 at both ends
    "capsule-box-inside": (
        td.Capsule(0.1, 0.5),
        ALONG_X,
        [0, 0, 0.9],
        td.Box((1, 1, 1)),
        I3,
        np.zeros(3),
        [([-0.5, 0, 0.9], -Z, 0.2), ([0.5, 0, 0.9], -Z, 0.2)],
    ),
    # a small box resting flat on a big one, 0.01 deep: its 4 bottom corners
    "box-box-flat": (
        td.Box((1, 1, 0.5)),
        I3,
        np.zeros(3),
        td.Box((0.5, 0.25, 0.5)),
        I3,
        [0.2, 0.1, 0.99],
        [([0.2 + sx * 0.5, 0.1 + sy * 0.25, 0.495], Z, 0.01) for sx in (-1, 1) for sy in (-1, 1)],
    ),
    # the same size, aligned: still exactly the 4 corners
    "box-box-aligned": (
        td.Box((1, 1, 0.5)),
        I3,
        np.zeros(3),
        td.Box((1, 1, 0.5)),
        I3,
        [0, 0, 0.99],
        [([sx, sy, 0.495], Z, 0.01) for sx in (-1, 1) for sy in (-1, 1)],
    ),
    # rotated by 45° about z: the octagon where the two squares overlap
    "box-box-45": (
        td.Box((1, 1, 0.5)),
        I3,
        np.zeros(3),
        td.Box((1, 1, 0.5)),
        rot_z(math.pi / 4),
        [0, 0, 0.99],
        [([sx * 1, sy * (s2 - 1), 0.495], Z, 0.01) for sx in (-1, 1) for sy in (-1, 1)]
        + [([sx * (s2 - 1), sy * 1, 0.495], Z, 0.01) for sx in (-1, 1) for sy in (-1, 1)],
    ),
    # a's top edge along x (a turned 45° about x) across b's bottom edge along y (b turned about y)
    "box-box-edges": (
        td.Box((0.5, 0.5, 0.5)),
        rot_x(math.pi / 4),
        np.zeros(3),
        td.Box((0.5, 0.5, 0.5)),
        rot_y(math.pi / 4),
        [0, 0, s2 - 0.01],
        [([0, 0, 0.5 * s2 - 0.005], Z, 0.01)],
    ),
}
HAND["capsule-box-edge"] = (  # 0.1 deep: radius 0.6 at distance 0.5 from the edge, the segment across it
    td.Capsule(0.6, 0.5),
    np.array([[0.0, -0.6, 0.8], [0, -0.8, -0.6], [1, 0, 0]]),  # local z along (0.8, −0.6, 0)
    [1.3, 1.4, 0.2],
    td.Box((1, 1, 1)),
    I3,
    np.zeros(3),
    [([0.97, 0.96, 0.2], [-0.6, -0.8, 0], 0.1)],
)


@pytest.mark.parametrize("case", list(HAND))
def test_every_pair_kind_by_hand(case):
    sa, Ra, pa, sb, Rb, pb, expected = HAND[case]
    pa, pb = np.asarray(pa, float), np.asarray(pb, float)
    expected = [(np.asarray(x, float), np.asarray(n, float), d) for x, n, d in expected]
    check(pair(sa, Ra, pa, sb, Rb, pb), expected)
    # swapped: the same points and depths, normals from the new first geom (flipped)
    check(pair(sb, Rb, pb, sa, Ra, pa), [(x, -n, d) for x, n, d in expected])


def test_separated_and_parallel_planes_give_nothing():
    assert pair(td.Plane(), I3, np.zeros(3), td.Plane(), I3, np.array([0, 0, -1.0])) == []
    assert pair(td.Box((1, 1, 1)), I3, np.zeros(3), td.Box((1, 1, 1)), rot_z(0.3), np.array([0, 0, 2.01])) == []
    assert pair(td.Capsule(0.1, 0.5), ALONG_X, np.array([0, 0, 1.11]), td.Box((1, 1, 1)), I3, np.zeros(3)) == []
    assert pair(td.Sphere(0.2), I3, np.array([1.2, 1.2, 0]), td.Box((1, 1, 1)), I3, np.zeros(3)) == []


# ------------------------------------------------------------------------------ box patches against coal
def inside_box(x, R, p, h, tol):
    return bool(np.all(np.abs(R.T @ (x - p)) <= np.asarray(h) + tol))


def random_boxes(rng):
    ha, hb = rng.uniform(0.1, 0.6, 3), rng.uniform(0.1, 0.6, 3)
    Ra, Rb = random_rotation(rng), random_rotation(rng)
    pa, pb = rng.uniform(-0.5, 0.5, 3), rng.uniform(-0.5, 0.5, 3)
    return td.Box(tuple(ha)), Ra, pa, td.Box(tuple(hb)), Rb, pb


def test_box_box_against_coal_at_random_poses():
    # coal's box–box is GJK/EPA: its depth and normal agree to ~5e-11 (measured), checked at 1e-9, but
    # where an edge cross within 0.01 rad of a face normal is the deepest axis (face_preferred_slack; a
    # few % of random poses). A patch point
    # lies midway between an incident point (inside both boxes) and its projection on the reference
    # face, so within depth/2 of the incident box (exactly inside it when the faces are parallel:
    # test_box_resting_on_a_box_has_a_patch_inside_both)
    rng = np.random.default_rng(11)
    touching = near_face = 0
    for _ in range(1000):
        sa, Ra, pa, sb, Rb, pb = random_boxes(rng)
        ours = pair(sa, Ra, pa, sb, Rb, pb)
        ref = coal_deepest(sa, Ra, pa, sb, Rb, pb)
        if ref is not None and ref[0] < 1e-5:  # touching within coal's tolerance either way
            continue
        assert bool(ours) == (ref is not None), (ours, ref)
        if not ours:
            continue
        touching += 1
        depths = np.array([d for _, _, d in ours])
        assert len(ours) <= 8 and (depths > 0).all()
        n = ours[0][1]
        assert all(np.array_equal(c[1], n) for c in ours)  # one normal for the patch
        assert abs(np.linalg.norm(n) - 1) <= 1e-12
        slack = face_preferred_slack(sa, Ra, pa, sb, Rb, pb, ref[1])
        if slack:
            near_face += 1
            assert ref[0] - 1e-9 <= depths.max() <= ref[0] + slack  # the normal: another axis's
        else:
            assert abs(depths.max() - ref[0]) <= 1e-9, (depths.max(), ref[0])
            if ref[0] > 1e-3:
                np.testing.assert_allclose(n, ref[1], atol=1e-9)
        for x, _, d in ours:
            assert inside_box(x, Ra, pa, sa.half_extents, 1e-9 + d / 2 + slack)
            assert inside_box(x, Rb, pb, sb.half_extents, 1e-9 + d / 2 + slack)
    assert touching >= 300 and near_face <= 0.05 * touching


@settings(max_examples=200, deadline=None)
@given(
    st.floats(0.1, 2.0),
    st.floats(0.1, 2.0),
    st.floats(-math.pi, math.pi),
    st.floats(-0.9, 0.9),
    st.floats(-0.9, 0.9),
    st.floats(1e-4, 0.05),
)
@example(1.0, 1.0, 1e-12, 0.0, 0.0, 0.03125)  # flush sides turned by rounding: once gave 6 points one way, 4 the other
def test_box_resting_on_a_box_has_a_patch_inside_both(wa, wb, angle, fx, fy, depth):
    # b sits on a's top face (z = 0.5), `depth` into it, turned about z, its centre over the face:
    # every point within both boxes, all at that depth, normal +z; >= 3 points (it resists tipping)
    sa, sb = td.Box((wa, 1.0, 0.5)), td.Box((wb, 0.7, 0.25))
    Rb, pb = rot_z(angle), np.array([fx * wa, fy * 1.0, 0.75 - depth])
    got = pair(sa, I3, np.zeros(3), sb, Rb, pb)
    assert 3 <= len(got) <= 8
    for p, n, d in got:
        np.testing.assert_allclose(n, Z, atol=1e-15)
        assert abs(d - depth) <= 1e-12
        assert abs(p[2] - (0.5 - depth / 2)) <= 1e-12
        assert inside_box(p, I3, np.zeros(3), sa.half_extents, 1e-9)
        assert inside_box(p, Rb, pb, sb.half_extents, 1e-9)
    flipped = pair(sb, Rb, pb, sa, I3, np.zeros(3))
    assert len(flipped) == len(got) and all(np.allclose(n, -Z, atol=1e-15) for _, n, _ in flipped)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(sorted(HAND)), st.integers(0, 2**32 - 1))
def test_swapped_order_flips_the_normals(case, seed):
    # at random poses of each pair of shapes: (b, a) gives (a, b)'s points and depths, normals negated
    sa, _, _, sb, _, _, _ = HAND[case]
    rng = np.random.default_rng(seed)
    Ra, Rb = random_rotation(rng), random_rotation(rng)
    pa, pb = rng.uniform(-0.5, 0.5, 3), rng.uniform(-0.5, 0.5, 3)
    ab, ba = pair(sa, Ra, pa, sb, Rb, pb), pair(sb, Rb, pb, sa, Ra, pa)
    check(ba, [(x, -n, d) for x, n, d in ab], atol=1e-12)
    for _, n, d in ab:
        assert d > 0 and abs(np.linalg.norm(n) - 1) <= 1e-12


def test_stacked_boxes_and_a_capsule_on_a_box_in_a_model():
    m = td.Model()
    inertia = td.Inertia(1.0, (0, 0, 0), np.eye(3) * 0.1)
    for name in ("low", "high", "rod"):
        m.add_body(name, None, td.Free(), inertia=inertia)
    m.add_geom("low", td.Box((0.5, 0.5, 0.5)), friction=0.3)
    m.add_geom("high", td.Box((0.5, 0.5, 0.5)), friction=0.7)
    m.add_geom("rod", td.Capsule(0.05, 0.2))
    q = td.neutral(m)
    q[0:3] = (0, 0, 0)
    q[7:10] = (0, 0, 0.99)  # on the low box, 0.01 deep
    q[14:17] = (3, 0, 0)  # away
    c = td.collide(m, q)
    assert len(c) == 4 and (c.geoms == [0, 1]).all() and (c.bodies == [1, 2]).all()
    np.testing.assert_allclose(c.normals, [[0, 0, 1]] * 4, atol=1e-15)
    np.testing.assert_allclose(c.depths, 0.01, atol=1e-12)
    np.testing.assert_array_equal(c.friction, 0.7)
    # turned 45° about z (quaternion x, y, z, w): 8 points
    q[10:14] = (0, 0, math.sin(math.pi / 8), math.cos(math.pi / 8))
    assert len(td.collide(m, q)) == 8
    # the capsule lying along x on the high box (top z = 1.49): 2 points
    q[14:17] = (0, 0, 1.49 + 0.04)
    q[17:21] = (0, math.sin(math.pi / 4), 0, math.cos(math.pi / 4))
    c = td.collide(m, q, pairs=[(1, 2)])
    assert len(c) == 2 and (c.geoms == [1, 2]).all()
    np.testing.assert_allclose(np.sort(c.points[:, 0]), [-0.2, 0.2], atol=1e-12)
    np.testing.assert_allclose(c.depths, 0.01, atol=1e-12)


def test_collide_geoms_refuses_bad_input():
    good = dict(
        kinds=np.array([0, 1]),
        bodies=np.array([0, 0]),
        rotations=np.stack([I3, I3]),
        translations=np.zeros((2, 3)),
        sizes=np.array([[0, 0, 0], [0.5, 0, 0]], dtype=float),
        friction=np.ones(2),
        pairs=np.array([[0, 1]]),
        body_rotations=np.eye(3)[None],
        body_positions=np.zeros((1, 3)),
    )
    g, b, x, n, d, f = _core.collide_geoms(**good)
    assert g.dtype == np.int64 and g.shape == (1, 2) and x.shape == (1, 3) and d.shape == (1,)
    for key, value, error, match in [
        ("kinds", np.array([0, 7]), ValueError, r"kinds\[1\] = 7 is not a shape"),
        ("kinds", np.array([0, 6]), ValueError, r"kinds\[1\] is a mesh: give meshes"),
        ("kinds", np.array([0.0, 1.0]), TypeError, "kinds must be an integer array"),
        ("bodies", np.array([0, 1]), ValueError, r"bodies\[1\] = 1 is not a body"),
        ("bodies", np.array([0]), ValueError, r"bodies must have shape \(G,\) with 2 rows"),
        ("rotations", np.zeros((2, 3)), ValueError, r"rotations must have shape \(G, 3, 3\)"),
        ("translations", np.full((2, 3), np.nan), ValueError, "translations contains NaN"),
        ("sizes", np.zeros((3, 3)), ValueError, "sizes must have shape"),
        ("friction", np.ones(3), ValueError, "friction must have shape"),
        ("pairs", np.array([0, 1]), ValueError, r"pairs must have shape \(K, 2\)"),
        ("pairs", np.array([[0, 2]]), ValueError, r"pairs\[0\] names geom 2"),
        ("body_rotations", np.zeros((0, 3, 3)), ValueError, "at least one row"),
        ("body_positions", np.zeros((2, 3)), ValueError, "body_positions must have shape"),
    ]:
        with pytest.raises(error, match=match):
            _core.collide_geoms(**{**good, key: value})


@pytest.mark.parametrize("tilt", [0.0, 1e-4, 1e-3, 5e-3])
def test_a_turned_and_slightly_tilted_box_on_a_box_keeps_its_patch(tilt):
    # b turned 0.3 rad about z on a, tilted by `tilt` (as a step leaves it): the edge crosses a_x × b_x
    # are then `tilt` from the face normal, with an overlap smaller by O(h·tilt); a single edge point
    # there let a simulated stack twist. The face patch stays: 8 points, normal a's +z
    a, b = td.Box((0.25, 0.25, 0.25)), td.Box((0.25, 0.25, 0.25))
    Rb = rot_z(0.3) @ rot_x(tilt)
    got = pair(a, I3, np.zeros(3), b, Rb, np.array([0, 0, 0.5 - 1e-3 - 0.25 * tilt]))
    assert len(got) == 8
    for _, n, d in got:
        np.testing.assert_array_equal(n, Z)
        assert 0 < d <= 1e-3 + 0.5 * tilt + 1e-12
