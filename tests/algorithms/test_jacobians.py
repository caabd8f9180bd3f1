"""Frames, Jacobians, J̇q̇, centre of mass and energies (cpp/.../algorithms/jacobians.hpp through
treedyn.algorithms.kinematics) against Pinocchio on
random trees of every joint kind and on real robots, against finite differences, and against the
dynamics (½ q̇ᵀMq̇). Tolerances: two evaluations of the same products over a path of at most n
transforms agree within c·n·u of the magnitudes summed (conftest.assert_within_rounding); finite
differences within their truncation error plus rounding."""

import warnings

import numpy as np
import pytest
from conftest import assert_within_rounding, random_state

import treedyn as td
from treedyn.algorithms.kinematics import _frame
from treedyn.scenes import chain, random_tree

pin = pytest.importorskip("pinocchio")
from treedyn.tools.peers import _build_pinocchio, example_robot_path  # noqa: E402

REFERENCES = {"world": pin.WORLD, "local": pin.LOCAL, "local_world_aligned": pin.LOCAL_WORLD_ALIGNED}


def swap(x):
    """Pinocchio's [linear; angular] rows as treedyn's [angular; linear]."""
    x = np.asarray(x)
    return np.concatenate([x[3:6], x[0:3]], axis=0)


def pinocchio_frame(model, pm, carrier, body, R, p):
    """A Pinocchio frame at the pose (R, p) in treedyn body `body`; returns its id."""
    jid, pose = carrier[body]
    placement = pose * pin.SE3(np.asarray(R), np.asarray(p))
    return pm.addFrame(pin.Frame(f"f{pm.nframes}", jid, placement, pin.FrameType.OP_FRAME))


def frames_of(model, rng):
    """Frames to check: every body, a point on each, and the model's named frames."""
    out = [(b, None) for b in range(1, model.n_bodies)]
    out += [(b, rng.standard_normal(3)) for b in range(1, model.n_bodies, 3)]
    out += [(name, None) for name in model.frames]
    return out


def check_against_pinocchio(model, q, v, frames):
    pm, carrier = _build_pinocchio(model)
    ids = []
    for name, point in frames:
        body, R, p = _frame(model, name, point)
        ids.append(pinocchio_frame(model, pm, carrier, body, R, p))
    pd = pm.createData()
    pin.forwardKinematics(pm, pd, q, v, np.zeros(model.nv))
    pin.computeJointJacobians(pm, pd, q)
    pin.updateFramePlacements(pm, pd)
    n = model.n_bodies
    for (name, point), fid in zip(frames, ids, strict=True):
        X = td.frame_placement(model, q, name, point)
        oMf = pd.oMf[fid]
        scale = 1.0 + np.abs(oMf.translation).max()
        assert_within_rounding(X.rotation, oMf.rotation, 1.0, n, what=f"rotation of {name}")
        assert_within_rounding(X.translation, oMf.translation, scale, n, what=f"origin of {name}")
        for ref, pref in REFERENCES.items():
            J = td.frame_jacobian(model, q, name, point, reference=ref)
            Jp = swap(pin.getFrameJacobian(pm, pd, fid, pref))
            assert_within_rounding(J, Jp, scale, n, what=f"J of {name} ({ref})")
            J_pin_rows = td.frame_jacobian(model, q, name, point, reference=ref, rows="linear-angular")
            np.testing.assert_array_equal(J_pin_rows, swap(J))  # (Pinocchio's row order, the same numbers)
            a = td.frame_bias_acceleration(model, q, v, name, point, reference=ref)
            if ref == "local_world_aligned":
                ap = pin.getFrameClassicalAcceleration(pm, pd, fid, pref).vector
            else:
                ap = pin.getFrameAcceleration(pm, pd, fid, pref).vector
            vscale = scale * (1.0 + np.abs(v).max()) ** 2
            assert_within_rounding(a, swap(ap), vscale, n, what=f"J̇q̇ of {name} ({ref})")
            a_pin_rows = td.frame_bias_acceleration(model, q, v, name, point, reference=ref, rows="linear-angular")
            np.testing.assert_array_equal(a_pin_rows, swap(a))
    c, Jc = td.center_of_mass(model, q, jacobian=True)
    cp = pin.centerOfMass(pm, pd, q)
    Jcp = pin.jacobianCenterOfMass(pm, pd, q)
    scale = 1.0 + max(np.abs(cp).max(), np.abs(pd.oMi[1].translation).max() if pm.njoints > 1 else 0.0)
    assert_within_rounding(c, cp, scale, n, what="centre of mass")
    assert_within_rounding(Jc, Jcp, scale, n, what="centre-of-mass Jacobian")
    T = td.kinetic_energy(model, q, v)
    V = td.potential_energy(model, q)
    Tp = pin.computeKineticEnergy(pm, pd, q, v)
    Vp = pin.computePotentialEnergy(pm, pd, q)
    mass = sum(i.mass for i in model.inertias[1:])  # a bound on the moving mass
    assert_within_rounding(T, Tp, abs(Tp) + mass, n, what="kinetic energy")
    assert_within_rounding(V, Vp, mass * 9.81 * scale, n, what="potential energy")


@pytest.mark.parametrize("seed", range(3))
def test_random_trees_agree_with_pinocchio(model, seed):
    rng = np.random.default_rng(seed)
    q, v, _ = random_state(model, rng)
    check_against_pinocchio(model, q, v, frames_of(model, rng))


@pytest.mark.parametrize(
    "relative,floating_base",
    [
        ("ur_description/urdf/ur5_robot.urdf", False),
        ("solo_description/robots/solo12.urdf", True),
        ("talos_data/robots/talos_reduced.urdf", True),
    ],
    ids=["ur5", "solo12", "talos"],
)
def test_robots_agree_with_pinocchio(relative, floating_base):
    try:
        path = example_robot_path(relative)
    except FileNotFoundError as e:
        pytest.skip(str(e))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = td.Model.from_urdf(path, floating_base=floating_base, mimic="independent")
    assert model.frames, "the URDF's fixed links should be named frames"
    rng = np.random.default_rng(0)
    q, v, _ = random_state(model, rng)
    frames = [(name, None) for name in list(model.frames)[:12]] + [(b, None) for b in range(1, model.n_bodies, 4)]
    check_against_pinocchio(model, q, v, frames)


def test_jacobian_and_bias_are_the_derivatives_of_the_motion():
    # v_f = J q̇ and d/dt (J q̇) = J q̈ + J̇ q̇ along q(t) = q ⊕ t q̇ + ½ t² q̈, by central differences
    # (truncation O(h²)·|d³x|, rounding ~u/h: h = 1e-5 gives ~1e-9 relative; checked at 1e-6)
    model = random_tree(10, 3, floating_base=True)
    rng = np.random.default_rng(5)
    q, v, _ = random_state(model, rng)
    qdd = rng.standard_normal(model.nv)
    h = 1e-5

    def q_at(t):
        return td.integrate(model, q, v * t + 0.5 * qdd * t * t, 1.0)

    for ref in ("world", "local", "local_world_aligned"):
        name, point = model.n_bodies - 1, np.array([0.1, -0.2, 0.3])
        J = td.frame_jacobian(model, q, name, point, reference=ref)
        if ref == "local_world_aligned":  # the linear rows are the velocity of the point
            X1, X0 = (td.frame_placement(model, q_at(t), name, point) for t in (h, -h))
            np.testing.assert_allclose((X1.translation - X0.translation) / (2 * h), (J @ v)[3:], rtol=0, atol=1e-6)
        Jdot_v = td.frame_bias_acceleration(model, q, v, name, point, reference=ref)
        # d/dt of the velocity in `ref` coordinates (local: body-fixed axes; world, aligned: fixed axes)
        vel = [td.frame_jacobian(model, q_at(t), name, point, reference=ref) @ (v + qdd * t) for t in (h, -h)]
        dvdt = (vel[0] - vel[1]) / (2 * h)
        scale = 1.0 + np.abs(dvdt).max()
        assert np.abs(dvdt - (J @ qdd + Jdot_v)).max() <= 1e-6 * scale, ref


def test_kinetic_energy_is_half_v_m_v_and_batches_equal_items():
    model = random_tree(12, 8)
    rng = np.random.default_rng(2)
    q, v, _ = random_state(model, rng)
    M = td.mass_matrix(model, q)
    assert_within_rounding(td.kinetic_energy(model, q, v), 0.5 * v @ M @ v, np.abs(v) @ np.abs(M) @ np.abs(v), 12)
    Q = np.stack([td.random_configuration(model, rng) for _ in range(5)])
    J = td.frame_jacobian(model, Q, 7, reference="local")
    c, Jc = td.center_of_mass(model, Q, jacobian=True)
    assert J.shape == (5, 6, model.nv) and c.shape == (5, 3) and Jc.shape == (5, 3, model.nv)
    for b in range(5):
        np.testing.assert_array_equal(J[b], td.frame_jacobian(model, Q[b], 7, reference="local"))
        np.testing.assert_array_equal(c[b], td.center_of_mass(model, Q[b]))
    assert td.frame_jacobian(model, Q[:0], 7).shape == (0, 6, model.nv)


def test_world_frame_and_columns_outside_the_path_are_zero():
    model = random_tree(9, 4)
    q = td.random_configuration(model, np.random.default_rng(0))
    assert not td.frame_jacobian(model, q, 0).any()
    for b in range(1, model.n_bodies):
        J = td.frame_jacobian(model, q, b)
        path, i = set(), b
        while i > 0:
            path.update(range(model.v_indices[i], model.v_indices[i] + model.joints[i].nv))
            i = model.parents[i]
        outside = [k for k in range(model.nv) if k not in path]
        assert not J[:, outside].any()


def test_bad_inputs_name_the_problem():
    model = chain(3)
    q = td.neutral(model)
    with pytest.raises(td.UnknownNameError, match="no body or frame named 'nope'"):
        td.frame_jacobian(model, q, "nope")
    with pytest.raises(ValueError, match="reference must be one of"):
        td.frame_jacobian(model, q, 1, reference="global")
    with pytest.raises(ValueError, match="point must be 3 finite"):
        td.frame_jacobian(model, q, 1, point=[0, np.nan, 0])
    with pytest.raises(ValueError, match="no body 9"):
        td.frame_jacobian(model, q, 9)
    with pytest.raises(ValueError, match="q"):
        td.frame_jacobian(model, q[:-1], 1)
    with pytest.raises(ValueError, match="v"):
        td.frame_bias_acceleration(model, q, np.full(model.nv, np.inf), 1)
    with pytest.raises(TypeError, match="model must be a treedyn.Model"):
        td.center_of_mass("chain", q)
    qq = q.copy()
    td.frame_jacobian(model, qq, 2)
    np.testing.assert_array_equal(qq, q)


def test_bodies_welded_to_the_world_are_not_in_the_centre_of_mass():
    # a fixed arm's base: by hand, the centre of mass is the one moving body's (Pinocchio's convention)
    m = td.Model()
    m.add_body("base", None, td.Fixed(), inertia=td.Inertia(5.0, (0, 0, 1), np.eye(3)))
    m.add_body("link", "base", td.Revolute((0, 0, 1)), inertia=td.Inertia(2.0, (1, 0, 0), np.eye(3)))
    q = np.array([np.pi / 2])
    c, Jc = td.center_of_mass(m, q, jacobian=True)
    np.testing.assert_allclose(c, [0, 1, 0], atol=1e-15)
    np.testing.assert_allclose(Jc[:, 0], [-1, 0, 0], atol=1e-15)  # ċ = ω × c for ω = ẑ
    assert td.potential_energy(m, q) == 0.0  # the moving body's centre is at height 0


def test_pinocchio_row_order_is_an_option_and_bad_values_are_named():
    """rows="linear-angular" gives Pinocchio's [linear; angular] rows, batched too (the rows axis is -2 of a
    (B, 6, nv) stack); another value is a ValueError naming the two."""
    model = chain(5)
    Q = np.random.default_rng(3).uniform(-1, 1, (4, model.nq))
    J = td.frame_jacobian(model, Q, 5, reference="local")
    Jl = td.frame_jacobian(model, Q, 5, reference="local", rows="linear-angular")
    np.testing.assert_array_equal(Jl[:, :3], J[:, 3:])
    np.testing.assert_array_equal(Jl[:, 3:], J[:, :3])
    with pytest.raises(ValueError, match="'angular-linear', 'linear-angular'"):
        td.frame_jacobian(model, Q[0], 5, rows="linear")
