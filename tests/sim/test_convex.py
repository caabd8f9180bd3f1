"""Contacts of cylinders, ellipsoids and convex meshes (treedyn.sim.convex through td.collide):
the plane closed forms against the geometry set up (depths known by construction) and coal's
signed distance to a half-space; the other pairs against MuJoCo's mj_forward; margins, condim and
explicit pairs; and the C++ step with such contacts handed from Python (ContactSimulator)."""

import warnings

import numpy as np
import pytest

import treedyn as td
from treedyn.model.shapes import ConvexMesh

coal = pytest.importorskip("coal")


def _rot(axis, angle):
    axis = np.asarray(axis, float) / np.linalg.norm(axis)
    K = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * K @ K


def _on_floor(shape, **kw):
    """A model: a plane at z = 0 and a free body carrying ``shape``; q of the body at rest."""
    model = td.Model()
    model.add_body("b", joint=td.Free(), inertia=td.Inertia(1.0, np.zeros(3), 0.01 * np.eye(3)))
    model.add_geom(0, td.Plane(), name="floor")
    model.add_geom("b", shape, name="shape", **kw)
    return model


def _q(p, R=None):
    from scipy.spatial.transform import Rotation

    R = np.eye(3) if R is None else R
    return np.r_[p, Rotation.from_matrix(R).as_quat()]  # (x, y, z, w): treedyn's free joint


def test_cylinder_standing_on_an_end_rests_on_three_rim_points():
    model = _on_floor(td.Cylinder(0.1, 0.2))
    c = td.collide(model, _q([0.3, -0.2, 0.2 - 0.004]))
    assert len(c) == 3
    np.testing.assert_allclose(c.depths, 0.004, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(c.points[:, :2] - [0.3, -0.2], axis=1), 0.1, atol=1e-12)
    np.testing.assert_allclose(c.normals, np.tile([0, 0, 1.0], (3, 1)))


def test_cylinder_lying_on_its_side_touches_at_both_ends():
    model = _on_floor(td.Cylinder(0.1, 0.2))
    c = td.collide(model, _q([0, 0, 0.1 - 0.003], _rot([1, 0, 0], np.pi / 2)))
    assert len(c) == 2
    np.testing.assert_allclose(c.depths, 0.003, atol=1e-12)
    np.testing.assert_allclose(sorted(c.points[:, 1]), [-0.2, 0.2], atol=1e-12)


@pytest.mark.parametrize(
    "shape", [td.Ellipsoid((0.1, 0.2, 0.3)), td.Cylinder(0.1, 0.25)], ids=["ellipsoid", "cylinder"]
)
def test_plane_depth_is_coals_distance_to_a_half_space(shape):
    rng = np.random.default_rng(4)
    model = _on_floor(shape)
    cs = td.sim.convex.coal_shape(shape)
    for _ in range(10):
        R = _rot(rng.normal(size=3), rng.uniform(0, np.pi))
        p = np.r_[rng.normal(size=2), rng.uniform(0.0, 0.25)]
        req, res = coal.DistanceRequest(), coal.DistanceResult()
        req.enable_signed_distance = True
        half = coal.Halfspace(np.array([0, 0, 1.0]), 0.0)
        dist = coal.distance(half, coal.Transform3s(np.eye(3), np.zeros(3)), cs, coal.Transform3s(R, p), req, res)
        c = td.collide(model, _q(p, R))
        if dist > 1e-9:
            assert len(c) == 0
        elif dist < -1e-9:
            assert c.depths.max() == pytest.approx(-dist, abs=1e-7)


@pytest.mark.parametrize("points", [60, 400], ids=["scattered", "rounded"])
def test_convex_mesh_on_a_plane_touches_at_mujocos_points(points):
    """A hull sunk into a floor at random poses: the same contact points as mj_forward's on the same hull
    (MuJoCo 4.0: of the hull's polygons at its deepest vertex, the one facing the plane, its vertices below it,
    at most 4), the same depths. Scattered points make hulls of a few dozen vertices; points on an ellipsoid
    make a rounded hull of hundreds (a robot's foot), where the vertices below the plane are many more than
    those MuJoCo keeps."""
    mujoco = pytest.importorskip("mujoco")
    from scipy.spatial.transform import Rotation

    rng = np.random.default_rng(3)
    for trial in range(10):
        P = rng.normal(size=(points, 3))
        if points > 100:
            P /= np.linalg.norm(P, axis=1)[:, None]
        mesh = ConvexMesh.hull(P * [0.1, 0.15, 0.05])
        model = _on_floor(mesh)
        xml = f"""<mujoco><asset><mesh name="m" vertex="{" ".join(f"{x:.17g}" for x in mesh.vertices.ravel())}"/></asset>
          <worldbody><geom type="plane" size="0 0 1"/><body><freejoint/><geom type="mesh" mesh="m"/></body>
          </worldbody></mujoco>"""
        m = mujoco.MjModel.from_xml_string(xml)
        d = mujoco.MjData(m)
        R = Rotation.random(random_state=trial).as_matrix()
        p = np.array([0.1, -0.2, -(mesh.vertices @ R.T)[:, 2].min() - rng.uniform(0.001, 0.01)])
        c = td.collide(model, _q(p, R))
        d.qpos[:3] = p
        d.qpos[3:] = np.roll(Rotation.from_matrix(R).as_quat(), 1)  # (w, x, y, z)
        mujoco.mj_forward(m, d)
        theirs = sorted((tuple(x.pos.round(9)), round(-x.dist, 9)) for x in d.contact[: d.ncon])
        ours = sorted((tuple(x.round(9)), round(depth, 9)) for x, depth in zip(c.points, c.depths))
        assert len(ours) == len(theirs) and np.allclose(
            np.array([x for x, _ in ours]), [x for x, _ in theirs], atol=1e-6
        )
        np.testing.assert_allclose([z for _, z in ours], [z for _, z in theirs], atol=1e-6)


def test_convex_mesh_hull_refuses_flat_points():
    with pytest.raises(ValueError, match="no volume"):
        ConvexMesh.hull([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]])


_MJCF = """<mujoco><worldbody>
  <body name="a" pos="0 0 0"><freejoint/><geom name="ga" type="{ta}" size="{sa}" margin="0.25"/></body>
  <body name="b" pos="{pos}" euler="{euler}"><freejoint/><geom name="gb" type="{tb}" size="{sb}" margin="0.25"/></body>
</worldbody><option gravity="0 0 0"/></mujoco>"""
_PAIRS = [
    ("cylinder", "0.1 0.2", "sphere", "0.15"),
    ("cylinder", "0.1 0.2", "box", "0.1 0.05 0.2"),
    ("ellipsoid", "0.1 0.2 0.15", "capsule", "0.05 0.1"),
    ("ellipsoid", "0.1 0.2 0.15", "sphere", "0.08"),  # (closed form)
    ("sphere", "0.08", "ellipsoid", "0.3 0.1 0.2"),
    ("cylinder", "0.1 0.2", "cylinder", "0.08 0.1"),
]


def _support(kind, size, R, u):
    """The support function (max over the shape of x·u, about its centre) of a shape turned by R."""
    size = np.array([float(x) for x in size.split()] + [0.0] * 3)
    w = R.T @ u
    if kind == "sphere":
        return size[0]
    if kind == "capsule":
        return size[0] + size[1] * abs(w[2])
    if kind == "cylinder":
        return size[0] * np.hypot(w[0], w[1]) + size[1] * abs(w[2])
    if kind == "box":
        return np.abs(w) @ size[:3]
    return np.linalg.norm(size[:3] * w)  # ellipsoid


def _penetration(ta, sa, Ra, pa, tb, sb, Rb, pb):
    """Two overlapping convex shapes' penetration depth: the least overlap of their projections on
    a direction, minimised over the sphere (sampled, then refined by Nelder-Mead)."""
    from scipy.optimize import minimize

    def overlap(angles):
        t, f = angles
        u = np.array([np.sin(t) * np.cos(f), np.sin(t) * np.sin(f), np.cos(t)])
        return _support(ta, sa, Ra, u) + _support(tb, sb, Rb, -u) - u @ (pb - pa)

    rng = np.random.default_rng(0)
    starts = np.c_[np.arccos(rng.uniform(-1, 1, 4000)), rng.uniform(-np.pi, np.pi, 4000)]
    values = np.array([overlap(a) for a in starts])
    return min(
        minimize(overlap, starts[k], method="Nelder-Mead", options={"xatol": 1e-10, "fatol": 1e-12}).fun
        for k in np.argsort(values)[:5]
    )


@pytest.mark.parametrize("ta,sa,tb,sb", _PAIRS)
def test_coal_pairs_agree_with_mujoco_apart_and_with_support_functions_overlapping(ta, sa, tb, sb):
    """Apart (within the pair's margin, 0.25 + 0.25): the distance MuJoCo's mj_forward reports (its own GJK);
    overlapping (shallow): the penetration depth from the shapes' support functions (MuJoCo's
    cylinder contacts are not the least translation, measured: 0.013 against 0.049 for a box)."""
    mujoco = pytest.importorskip("mujoco")
    rng = np.random.default_rng(7)
    apart = overlapping = 0
    for _ in range(60):
        u = rng.normal(size=3)
        pos = u / np.linalg.norm(u) * rng.uniform(0.1, 0.4)
        euler = rng.uniform(-90, 90, size=3)
        xml = _MJCF.format(ta=ta, sa=sa, tb=tb, sb=sb, pos=" ".join(map(str, pos)), euler=" ".join(map(str, euler)))
        m = mujoco.MjModel.from_xml_string(xml)
        d = mujoco.MjData(m)
        mujoco.mj_forward(m, d)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = td.Model.from_mjcf(xml)
        q = np.r_[m.qpos0[:3], m.qpos0[4:7], m.qpos0[3], m.qpos0[7:10], m.qpos0[11:14], m.qpos0[10]]
        c = td.collide(model, q)
        assert len(c) == 1  # within the margin
        dist = 0.5 - c.depths[0]
        if dist > 1e-4:
            theirs = min(x.dist for x in d.contact[: d.ncon])
            assert dist == pytest.approx(theirs, abs=1e-6), (pos, euler)
            apart += 1
        elif -0.03 < dist < -1e-4:  # shallow (EPA's depth of a deep overlap of curved shapes is coarse)
            Ra, Rb = d.geom_xmat[0].reshape(3, 3), d.geom_xmat[1].reshape(3, 3)
            depth = _penetration(ta, sa, Ra, d.geom_xpos[0], tb, sb, Rb, d.geom_xpos[1])
            assert -dist == pytest.approx(depth, abs=1e-6), (pos, euler)
            overlapping += 1
    assert apart >= 3 and overlapping >= 3


def test_a_ball_on_an_ellipsoids_crown_gets_its_vertical_normal():
    """The closed form's nearest point (no GJK/EPA round-off): a ball on the crown of an ellipsoid
    is pushed straight up, at the depth the radii give; off the crown, its normal is the ellipsoid's
    (∝ x/a², checked against the gradient of the implicit surface) and the nearest point is the
    nearest of many surface samples."""
    from treedyn.model.shapes import Ellipsoid, Sphere
    from treedyn.sim.convex import convex_contacts, ellipsoid_nearest

    E, S, I = Ellipsoid((0.3, 0.27, 0.2)), Sphere(0.15), np.eye(3)
    ((x, n, d),) = convex_contacts(E, I, np.zeros(3), S, I, np.array([0.0, 0.0, 0.349]), 0.0)
    assert n.tolist() == [0.0, 0.0, 1.0] and x[:2].tolist() == [0.0, 0.0]
    assert d == pytest.approx(0.001, abs=1e-15)
    ((_, n2, d2),) = convex_contacts(S, I, np.array([0.0, 0.0, 0.349]), E, I, np.zeros(3), 0.0)
    assert n2.tolist() == [0.0, 0.0, -1.0] and d2 == d
    rng = np.random.default_rng(3)
    a = np.array([0.3, 0.27, 0.2])
    u = rng.normal(size=(20000, 3))
    surface = a * u / np.linalg.norm(u, axis=1)[:, None]
    for _ in range(20):
        y = rng.normal(size=3)
        y *= rng.uniform(1.05, 3.0) / np.linalg.norm(y / a)  # outside
        x = ellipsoid_nearest(a, y)
        assert (x / a) @ (x / a) == pytest.approx(1.0, abs=1e-14)
        grad = x / a**2
        assert np.cross(grad, y - x) == pytest.approx(np.zeros(3), abs=1e-12)  # y − x along the normal
        assert np.linalg.norm(y - x) <= np.linalg.norm(surface - y, axis=1).min() + 1e-12
    assert ellipsoid_nearest(a, np.array([0.1, 0.0, 0.0])) is None  # inside: GJK/EPA's


def test_margin_touches_before_the_surfaces_and_rests_at_it():
    # C++ closed form (sphere) and Python path (cylinder): the depth reported is depth + margin
    for shape, h in ((td.Sphere(0.1), 0.1), (td.Cylinder(0.1, 0.1), 0.1)):
        model = _on_floor(shape, margin=0.01)
        c = td.collide(model, _q([0, 0, h + 0.004]))
        assert len(c) >= 1
        np.testing.assert_allclose(c.depths, 0.006, atol=1e-12)
        assert len(td.collide(model, _q([0, 0, h + 0.011]))) == 0


def test_condim_one_is_frictionless_and_an_explicit_pair_has_its_own_friction():
    model = _on_floor(td.Sphere(0.1), condim=1, friction=0.8)
    assert td.collide(model, _q([0, 0, 0.09])).friction.tolist() == [1.0]  # the floor's condim 3 and friction 1
    model = _on_floor(td.Sphere(0.1), condim=1, friction=0.8)
    model.add_geom(0, td.Plane(), td.Transform(np.eye(3), [0, 0, -1]), name="f1", condim=1)
    c = td.collide(model, _q([0, 0, -0.91]), pairs=[(1, 2)])
    assert c.friction.tolist() == [0.0]
    model.add_contact_pair("floor", "shape", friction=0.3, margin=0.05)
    c = td.collide(model, _q([0, 0, 0.14]), pairs=[(0, 1)])
    assert c.friction.tolist() == [0.3] and c.depths == pytest.approx([0.01])


def test_contact_off_and_excludes_leave_no_pairs():
    from treedyn.sim.collision import collision_pairs

    model = _on_floor(td.Sphere(0.1))
    assert collision_pairs(model) == [(0, 1)]
    model.exclude_contact("b", "world")
    assert collision_pairs(model) == []
    model.add_contact_pair("shape", "floor")
    assert collision_pairs(model) == [(1, 0)]
    model.contact_enabled = False
    assert collision_pairs(model) == []


@pytest.mark.parametrize("shape", [td.Cylinder(0.1, 0.05), "mesh"], ids=["cylinder", "mesh"])
def test_a_flat_shape_dropped_on_the_floor_stands_still(shape):
    import trimesh

    if shape == "mesh":
        shape = ConvexMesh.hull(trimesh.creation.cylinder(radius=0.1, height=0.1, sections=24))
    model = _on_floor(shape)
    sim = td.ContactSimulator(model, 1e-3)
    state = td.State(_q([0, 0, 0.06]), np.zeros(6))
    deepest = 0.0
    for _ in range(1000):
        step = sim.step(state)
        deepest = max(deepest, step.contacts.depths.max(initial=0))
    assert abs(state.q[2] - 0.05) < 1e-3 and deepest < 1e-3
    z = td.Transform.from_quaternion(state.q[3:7]).rotation[:, 2] if hasattr(td.Transform, "from_quaternion") else None
    assert np.linalg.norm(state.v) < 1e-3
    if z is not None:
        assert z[2] > 0.9999


def test_simulator_warns_about_bodies_that_touch_nothing():
    from treedyn.sim.result import SimulationWarning

    model = _on_floor(td.Sphere(0.1))
    model.add_body(
        "c", parent="b", joint=td.Revolute([0, 0, 1]), inertia=td.Inertia(1.0, np.zeros(3), 0.01 * np.eye(3))
    )
    with pytest.warns(SimulationWarning, match="'c'"):
        td.ContactSimulator(model, 1e-3)
    model._drop_geom("collision 'x': mesh 'x.stl' not found")
    with pytest.warns(SimulationWarning, match="x.stl"):
        td.ContactSimulator(model, 1e-3)


def test_coal_is_needed_by_the_python_reference_alone(monkeypatch):
    """Without coal, the C++ step collides an ellipsoid with the floor and with a capsule itself
    (contact/convex.hpp); treedyn.sim.convex, the Python reference behind td.collide, refuses the
    ellipsoid–capsule pair, naming the extra, and a plane–ellipsoid pair (a closed form) needs no coal."""
    import sys

    m = td.Model()
    m.add_geom(0, td.Plane())
    m.add_body("e", None, td.Free(), inertia=td.Inertia(1.0, (0, 0, 0), np.eye(3) * 0.01))
    m.add_geom("e", td.Ellipsoid((0.1, 0.2, 0.3)))
    m.add_body("c", None, td.Free(), inertia=td.Inertia(1.0, (0, 0, 0), np.eye(3) * 0.01))
    m.add_geom("c", td.Capsule(0.05, 0.1))
    monkeypatch.setitem(sys.modules, "coal", None)  # import coal raises ImportError
    q = np.r_[0, 0, 0.29, 0, 0, 0, 1.0, 0, 0, 0.73, 0, 0, 0, 1.0]  # the capsule 1 cm into the ellipsoid
    s = td.State(q.copy(), np.zeros(12))
    assert td.ContactSimulator(m, 1e-3).step(s).n_contacts == 2  # the floor's and the capsule's
    assert len(td.collide(m, q, pairs=[(0, 1)])) == 1
    with pytest.raises(ImportError, match=r"treedyn\[collision\]"):
        td.collide(m, q, pairs=[(1, 2)])
