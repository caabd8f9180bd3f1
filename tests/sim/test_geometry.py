"""Collision geometry (python/treedyn/sim/collision.py, the shapes in model/shapes.py): the closed forms against coal at random poses,
configurations by hand (a box resting on a plane, a floating sphere), the pair filters and bad
input. Depths and normals of two exact computations of the same distance agree to rounding
(c·u·scale, scale the poses' magnitudes ~1: checked at 1e-9); coal's GJK/EPA for non-spheres
stops at its own tolerance (1e-6 default), checked at 1e-5."""

import numpy as np
import pytest

import treedyn as td
from treedyn.model.shapes import Geom
from treedyn.sim.collision import _pair, collision_pairs

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


PAIRS = [
    (td.Sphere(0.3), td.Sphere(0.4), 1e-9),
    (td.Capsule(0.2, 0.3), td.Sphere(0.3), 1e-9),
    (td.Sphere(0.3), td.Capsule(0.2, 0.3), 1e-9),
    (td.Capsule(0.2, 0.4), td.Capsule(0.25, 0.3), 1e-9),
    (td.Box((0.3, 0.2, 0.25)), td.Sphere(0.3), 1e-9),
    (td.Plane(), td.Sphere(0.3), 1e-9),
    (td.Plane(), td.Capsule(0.2, 0.3), 1e-9),
    (td.Plane(), td.Box((0.3, 0.2, 0.25)), 1e-9),
    (td.Box((0.3, 0.2, 0.25)), td.Box((0.2, 0.3, 0.2)), 1e-5),
    (td.Box((0.3, 0.2, 0.25)), td.Capsule(0.2, 0.3), 1e-5),
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
        ours = _pair(sa, Ra, pa, sb, Rb, pb)
        ref = coal_deepest(sa, Ra, pa, sb, Rb, pb)
        if ref is None or ref[0] < 1e-4:  # touching within coal's tolerance either way
            continue
        assert ours, "coal finds a contact, treedyn none"
        x, n, d = max(ours, key=lambda c: c[2])
        assert abs(d - ref[0]) <= tol, (d, ref[0])
        assert abs(np.linalg.norm(n) - 1) <= 1e-12
        if ref[0] > 1e-3 and not isinstance(sa, td.Plane):  # a plane's normal is its own axis
            assert np.abs(n - ref[1]).max() <= max(tol, 1e-6) * 1e3, (n, ref[1])
        checked += 1
    assert checked >= 20


def test_separated_shapes_have_no_contact():
    I = np.eye(3)
    assert _pair(td.Sphere(0.3), I, np.zeros(3), td.Sphere(0.3), I, np.array([0.7, 0, 0])) == []
    assert _pair(td.Plane(), I, np.zeros(3), td.Box((0.1, 0.1, 0.1)), I, np.array([0, 0, 0.11])) == []
    cap = td.Capsule(0.1, 0.5)
    assert _pair(cap, I, np.zeros(3), cap, I, np.array([0.21, 0, 0])) == []


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
