"""The C++ narrow phase of cylinders, ellipsoids and convex meshes (cpp/include/treedyn/contact/convex.hpp,
through _core.collide_geoms and the C++ step) against treedyn.sim.convex, the Python reference that
uses coal's GJK/EPA: the same contacts (point, normal, depth) on random poses of every pair kind, apart
within the margin and overlapping; the plane's closed forms point for point; and the DeepMind Control
quadruped, whose cylinders and ellipsoids the step now collides in C++, stepped as before.

Tolerances: both sides stop GJK at a relative gap of 1e-10 and EPA within 1e-10 of the scale on
polytopes; on curved surfaces (cylinders' rims, ellipsoids) EPA's polytope approximates the surface, so
depths and points agree to ~1e-6 of the shapes' size, normals to ~1e-3 rad (coal's own tolerance)."""

import os
import warnings
import zlib

import numpy as np
import pytest

import treedyn as td
from treedyn import _core
from treedyn.model.shapes import ConvexMesh
from treedyn.sim.convex import coal_shape, convex_contacts

pytest.importorskip("coal")

KIND = {td.Plane: 0, td.Sphere: 1, td.Capsule: 2, td.Box: 3, td.Cylinder: 4, td.Ellipsoid: 5, ConvexMesh: 6}


def _size(s):
    if isinstance(s, td.Sphere):
        return (s.radius, 0, 0)
    if isinstance(s, (td.Capsule, td.Cylinder)):
        return (s.radius, s.half_length, 0)
    if isinstance(s, td.Box):
        return tuple(s.half_extents)
    if isinstance(s, td.Ellipsoid):
        return tuple(s.radii)
    return (0, 0, 0)


def cpp_contacts(sa, Ra, pa, sb, Rb, pb, margin=0.0):
    """The C++ narrow phase's contacts of two shapes at world poses: (points, normals a → b, depths)."""
    shapes = (sa, sb)
    meshes = [(np.asarray(s.vertices, float), s.faces) if isinstance(s, ConvexMesh) else None for s in shapes]
    out = _core.collide_geoms(
        np.array([KIND[type(s)] for s in shapes]), np.array([0, 0]), np.stack([Ra, Rb]), np.stack([pa, pb]),
        np.array([_size(s) for s in shapes], float), np.ones(2), np.array([[0, 1]]), np.eye(3)[None],
        np.zeros((1, 3)), np.array([margin / 2, margin / 2]), meshes,
    )  # fmt: skip
    return out[2], out[3], out[4]


def _rotation(rng):
    q = rng.normal(size=4)
    q /= np.linalg.norm(q)
    w, x, y, z = q
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ])  # fmt: skip


CUBE = ConvexMesh.hull(np.array([[x, y, z] for x in (-0.1, 0.1) for y in (-0.12, 0.12) for z in (-0.08, 0.08)]))
GEM = ConvexMesh.hull(np.random.default_rng(7).normal(size=(30, 3)) * 0.1)
SHAPES = {
    "cylinder": td.Cylinder(0.08, 0.12),
    "ellipsoid": td.Ellipsoid((0.1, 0.06, 0.14)),
    "capsule": td.Capsule(0.05, 0.1),
    "sphere": td.Sphere(0.07),
    "box": td.Box((0.08, 0.1, 0.06)),
    "cube": CUBE,
    "gem": GEM,
}
PAIRS = [("cylinder", "capsule"), ("cylinder", "sphere"), ("ellipsoid", "capsule"), ("ellipsoid", "sphere"),
         ("box", "cylinder"), ("cylinder", "cylinder"), ("ellipsoid", "ellipsoid"), ("cube", "box"),
         ("gem", "capsule"), ("gem", "cube"), ("ellipsoid", "gem")]  # fmt: skip


def _touch(ca, Ra, pa, cb, Rb, pb):
    """coal's signed distance of two shapes (coal objects) at world poses."""
    import coal

    req, res = coal.DistanceRequest(), coal.DistanceResult()
    req.enable_signed_distance = True
    return coal.distance(ca, coal.Transform3s(Ra, pa), cb, coal.Transform3s(Rb, pb), req, res)


@pytest.mark.parametrize("a,b", PAIRS, ids=[f"{a}-{b}" for a, b in PAIRS])
def test_cpp_pairs_agree_with_coal(a, b):
    """Random relative poses from deep overlap to apart within a 2 cm margin (coal's contact as the reference):
    - the same pairs touch (clear of the margin's edge);
    - apart: the same distance, and the contact's two witnesses on the two surfaces;
    - overlapping: B moved by the depth along the normal just touches A (a separating translation, so the
      depth is at least the true penetration), and the depth is no larger than coal's (so it is within
      coal's of the truth, where coal's is a separating translation too; EPA on a curved surface stops
      within its tolerance, and where coal's EPA stops on a worse face the C++ one may be smaller)."""
    sa, sb = SHAPES[a], SHAPES[b]
    ca, cb = coal_shape(sa), coal_shape(sb)
    point = coal_shape(td.Sphere(1e-12))
    rng = np.random.default_rng(zlib.crc32(f"{a}-{b}".encode()))
    margin, apart, overlapping = 0.02, 0, 0
    for _ in range(100):
        Ra, Rb = _rotation(rng), _rotation(rng)
        pa = rng.normal(size=3) * 0.05
        pb = pa + rng.normal(size=3) / np.sqrt(3) * rng.uniform(0.05, 0.3)
        ref = convex_contacts(sa, Ra, pa, sb, Rb, pb, margin, (ca, cb))
        x, n, d = cpp_contacts(sa, Ra, pa, sb, Rb, pb, margin)
        if not ref or ref[0][2] < 1e-5:  # (apart beyond the margin, or at its edge)
            assert len(d) == 0 or d[0] < 1e-4
            continue
        assert len(d) == 1
        delta, ref_delta = d[0] - margin, ref[0][2] - margin  # the depth (minus the distance when apart)
        if ref_delta < -1e-6:
            assert delta == pytest.approx(ref_delta, abs=1e-6)  # (GJK's |v| bounds the distance from above: coal
            # stops at 1e-6, the C++ one at 1e-10 relative)
            for p_surface, shape, R, p in (
                (x[0] + 0.5 * delta * n[0], ca, Ra, pa),
                (x[0] - 0.5 * delta * n[0], cb, Rb, pb),
            ):
                assert abs(_touch(point, np.eye(3), p_surface, shape, R, p)) < 1e-6
            apart += 1
        elif ref_delta > 1e-6:
            assert abs(_touch(ca, Ra, pa, cb, Rb, pb + delta * n[0])) < 2e-6
            if abs(_touch(ca, Ra, pa, cb, Rb, pb + ref_delta * ref[0][1])) < 2e-6:  # (coal's a separating one too)
                assert delta <= ref_delta + 2e-6
            overlapping += 1
    assert apart >= 3 and overlapping >= 10  # (the poses reach both often enough to test them)


@pytest.mark.parametrize("name", ["cylinder", "ellipsoid", "cube", "gem"])
def test_cpp_plane_points_are_the_references(name):
    """The plane's closed forms: the same points, normals and depths as treedyn.sim.convex's, to rounding."""
    s = SHAPES[name]
    rng = np.random.default_rng(5)
    for _ in range(20):
        R = _rotation(rng)
        p = np.array([0.1, -0.2, rng.uniform(-0.05, 0.15)])
        ref = convex_contacts(td.Plane(), np.eye(3), np.zeros(3), s, R, p, 0.01)
        x, n, d = cpp_contacts(td.Plane(), np.eye(3), np.zeros(3), s, R, p, 0.01)
        assert len(d) == len(ref)
        for (rx, rn, rd), xk, nk, dk in zip(ref, x, n, d):
            assert (
                np.allclose(xk, rx, atol=1e-12)
                and np.allclose(nk, rn, atol=1e-15)
                and dk == pytest.approx(rd, abs=1e-12)
            )


def test_the_quadruped_has_no_pair_left_to_python(public_models):
    """The DeepMind Control quadruped (cylinders, ellipsoids): every pair collided in C++ and a second of
    random controls stepped (its agreement with mj_step is tests/sim/test_mujoco_suite.py's)."""
    path = os.path.join(public_models["dm_control"], "quadruped.xml")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = td.load_mjcf(path)
    sim = td.ContactSimulator(model)
    sim.engine()
    assert sim._other_pairs == []
    state, rng = td.State.initial(model), np.random.default_rng(0)
    for _ in range(int(round(1.0 / sim.dt))):
        out = sim.step(state, ctrl=rng.uniform(-1, 1, model.nu))
    assert np.all(np.isfinite(state.q)) and out.n_contacts > 0
