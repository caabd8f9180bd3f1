"""model.to_mjcf() (python/treedyn/io/mjcf_writer.py): MuJoCo's own compiler, given the text,
builds the same dynamics (M, bias forces, q̈, M⁻¹ within the rounding bounds of conftest), and
treedyn reads it back to the same model; the geoms (shape, pose, friction, contact bits) carry over.

A free joint's coordinates in MJCF are the body's world pose (the body's pos/quat only set the
initial qpos), where treedyn's are relative to the joint's placement: the states compared are the
same physical states, q_mjcf = placement ∘ q for a floating root (`_in_world`).
"""

import numpy as np
import pytest
from conftest import assert_peer_agrees_at_random_states, assert_within_rounding, dynamics_scale

import treedyn as td
from treedyn.scenes import centipede, random_tree


def _in_world(model, q):
    """q with each free joint's pose composed with its placement (what MJCF's free joint holds)."""
    from scipy.spatial.transform import Rotation

    q = np.array(q, dtype=float)
    for j, X, iq in zip(model.joints, model.placements, model.q_indices):
        if isinstance(j, td.Free):
            q[iq : iq + 3] = X.rotation @ q[iq : iq + 3] + X.translation
            R = X.rotation @ Rotation.from_quat(q[iq + 3 : iq + 7]).as_matrix()
            q[iq + 3 : iq + 7] = Rotation.from_matrix(R).as_quat()  # (x, y, z, w), as treedyn's
    return q


def _agree_with_mujoco(model, rng, n=3):
    pytest.importorskip("mujoco")
    from treedyn.tools.peers import MujocoFromFile

    peer = MujocoFromFile(model, model.to_mjcf())
    assert_peer_agrees_at_random_states(
        model, peer, rng, n, what="MuJoCo on to_mjcf()", peer_q=lambda q: _in_world(model, q)
    )


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_trees_agree_with_mujoco(seed):
    # MuJoCo has no universal joint (to_mjcf writes two hinges: two joints where treedyn has one),
    # so the joint-by-joint comparison takes the other kinds; the round trip below covers it
    joints = ("revolute", "prismatic", "spherical", "fixed")
    model = random_tree(12, seed, joints=joints, floating_base=seed % 2 == 1)
    _agree_with_mujoco(model, np.random.default_rng(seed))


def test_centipede_agrees_with_mujoco():
    _agree_with_mujoco(centipede(3).model, np.random.default_rng(5), n=2)


@pytest.mark.parametrize("seed", [0, 3])
def test_round_trip(seed):
    """load_mjcf(to_mjcf(model)): the same M(q) and bias forces at random states (a universal
    joint comes back as two hinges with a massless body between: same coordinates)."""
    model = random_tree(10, seed, floating_base=True)
    back = td.Model.from_mjcf(model.to_mjcf())
    assert back.nq == model.nq and back.nv == model.nv
    rng = np.random.default_rng(seed)
    for _ in range(3):
        q = td.random_configuration(model, rng)
        v = rng.standard_normal(model.nv)
        M = td.mass_matrix(model, q)
        qw = _in_world(model, q)
        assert_within_rounding(td.mass_matrix(back, qw), M, M, model.nv, what="M after the round trip")
        zero = np.zeros(model.nv)
        scale = dynamics_scale(model, q, v, zero, zero, M=M)
        assert_within_rounding(td.bias_forces(back, qw, v), td.bias_forces(model, q, v), scale, model.nv, what="b")


def test_geoms_carry_over():
    model = centipede(2).model
    model.set_geom_softness(0, solref=(0.03, 0.9), solimp=(0.8, 0.9, 0.01, 0.4, 3.0), solmix=2.0)
    back = td.Model.from_mjcf(model.to_mjcf())
    by_name = {h.name: h for h in back.geoms}
    assert sorted(by_name) == sorted(g.name for g in model.geoms)
    for g in model.geoms:
        h = by_name[g.name]
        assert type(g.shape) is type(h.shape) and g.shape == h.shape
        assert model.body_names[g.body] == back.body_names[h.body]
        assert (g.friction, g.contype, g.conaffinity) == (h.friction, h.contype, h.conaffinity)
        assert (g.solref, g.solimp, g.solmix) == (h.solref, h.solimp, h.solmix)
        # poses written with repr(float): the same numbers, up to the quaternion's rounding
        assert np.allclose(g.placement.translation, h.placement.translation, rtol=0, atol=1e-15)
        assert np.allclose(g.placement.rotation, h.placement.rotation, rtol=0, atol=4 * np.finfo(float).eps)


def test_rejects_non_models():
    with pytest.raises(TypeError, match="treedyn.Model"):
        td.io.to_mjcf("not a model")


@pytest.mark.parametrize("seed", [1, 3])
def test_constraints_carry_over(seed):
    """Ball and weld closures as connect and weld between sites, a quadratic coupling about a
    non-zero reference re-expanded about qpos0 = 0, a tendon coupling, an inactive one: read back,
    the constraints have the same residuals at random configurations."""
    from support.models import closed_tree

    m = closed_tree(seed)
    scalar = [i for i in range(1, m.n_bodies) if type(m.joints[i]) in (td.Revolute, td.Prismatic)]
    q_ref = td.random_configuration(m, np.random.default_rng(seed))
    m.add_coupling({scalar[1]: 2.0, scalar[2]: -0.5}, {scalar[3]: 1.0}, polycoef=(0.1, 0.3, 0.2), reference=q_ref)
    m.add_coupling(scalar[4], None, polycoef=(0.25,), active=False)
    back = td.Model.from_mjcf(m.to_mjcf())  # (the coupling's fixed tendon is read as a tendon too)
    assert len(back.tendons) == 2 and not any(t.stiffness for t in back.tendons)  # (follower, leader)
    assert back.n_constraint_rows == m.n_constraint_rows == 11
    assert [c.active for c in back.couplings] == [True, True, False]
    rng = np.random.default_rng(seed)
    for _ in range(3):
        q = td.random_configuration(m, rng)
        C = m.loop_residual(q)
        # the quadratic's coefficients re-expanded about 0: rounding of |x0|²·|a| on top of the poses'
        assert_within_rounding(back.loop_residual(q), C, 1 + np.abs(q).max() ** 2, m.nv, what="C(q) after to_mjcf")


def test_hinge_closures_have_no_mjcf_equivalent():
    m = random_tree(6, 2, joints=("revolute",))
    m.add_loop_closure(2, 5, td.Revolute((0, 0, 1)))
    with pytest.raises(ValueError, match="loop closure 0 is a Revolute joint.*connect"):
        m.to_mjcf()


def test_matrix_to_quat_inverts_quat_to_matrix():
    """io._common.matrix_to_quat (the writer's orientations, the MJCF reader's free-body qpos0):
    both orders, near the identity and near half turns (Shepperd's other pivots)."""
    from scipy.spatial.transform import Rotation

    from treedyn.io._common import matrix_to_quat, quat_to_matrix

    Rs = list(Rotation.random(50, random_state=2).as_matrix()) + [
        np.diag([1.0, -1, -1]),
        np.diag([-1.0, 1, -1]),
        np.eye(3),
    ]
    for R in Rs:
        for wxyz in (True, False):
            q = matrix_to_quat(R, wxyz)
            assert abs(np.linalg.norm(q) - 1) <= 4e-16
            assert_within_rounding(quat_to_matrix(q, wxyz), R, 1.0, 3, what="R(q(R)) = R")


def test_gymnasiums_ant_written_back_is_the_same_model_to_mujoco(public_models):
    """to_mjcf() of Gymnasium's ant: MuJoCo gets the same nu, timestep, integrator and qpos0, and 1 s
    under random controls on the written file is 1 s on the original, to 1e-6 (measured: 1e-14)."""
    mujoco = pytest.importorskip("mujoco")
    path = public_models["gymnasium"] + "ant.xml"
    m0 = mujoco.MjModel.from_xml_path(path)
    m1 = mujoco.MjModel.from_xml_string(td.load_mjcf(path).to_mjcf())
    assert (m1.nu, m1.opt.timestep, m1.opt.integrator) == (m0.nu, m0.opt.timestep, m0.opt.integrator)
    np.testing.assert_array_equal(m1.qpos0, m0.qpos0)
    np.testing.assert_array_equal(m1.jnt_range, m0.jnt_range)
    d0, d1 = mujoco.MjData(m0), mujoco.MjData(m1)
    rng = np.random.default_rng(0)
    for _ in range(round(1.0 / m0.opt.timestep)):
        d0.ctrl[:] = d1.ctrl[:] = rng.uniform(-1, 1, m0.nu)
        mujoco.mj_step(m0, d0)
        mujoco.mj_step(m1, d1)
    assert np.abs(d1.qpos - d0.qpos).max() < 1e-6 and d0.qpos[2] > 0


def _everything() -> td.Model:
    """A model with one of each thing the writer writes."""
    m = td.Model()
    base = m.add_body(
        "base", None, td.Free(), td.Transform(np.eye(3), [0, 0, 1]), td.Inertia(2.0, (0, 0, 0), 0.02 * np.eye(3))
    )
    arm = m.add_body(
        "arm",
        base,
        td.Revolute([0, 1, 0]),
        td.Transform(np.eye(3), [0.2, 0, 0]),
        td.Inertia(0.5, (0.1, 0, 0), 0.001 * np.eye(3)),
    )
    m.add_geom(base, td.Cylinder(0.1, 0.05), name="hub", friction=(0.8, 0.01, 0.001), condim=6, margin=0.002)
    m.add_geom(arm, td.Ellipsoid((0.1, 0.03, 0.02)), name="blade")
    tip = np.array([[0, 0, 0], [0.1, 0, 0], [0, 0.1, 0], [0, 0, 0.1]])
    m.add_geom(arm, td.ConvexMesh(tip, np.array([[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])), name="tip")
    m.add_geom(None, td.Plane(), name="floor")
    m.set_joint_spring("arm", stiffness=3.0, damping=0.2, rest=[0.1])
    m.set_joint_armature("arm", 0.05)
    m.set_joint_limits("arm", -1.0, 1.2)
    m.set_joint_frictionloss("arm", 0.1)
    m.add_tendon("t", {"arm": 2.0}, stiffness=1.0, range=(-1, 1))
    m.add_actuator("servo", "arm", gear=2.0, gain=(5.0,), bias=(0.0, -5.0, -0.5), ctrlrange=(-1, 1), forcerange=(-3, 3))
    m.add_actuator("slow", "t", "tendon", dynamics="filter", time_constant=0.05)
    m.exclude_contact("base", "arm")
    m.add_contact_pair("tip", "floor", condim=4, friction=(0.7, 0.02))
    m.timestep, m.integrator, m.friction_cone, m.impratio = 0.004, "implicitfast", "elliptic", 2.0
    m.keyframes["up"] = td.Keyframe(
        "up",
        0.5,
        np.r_[0.1, 0, 0.5, 0, 0, np.sin(0.2), np.cos(0.2), 0.3],
        np.arange(7.0),
        np.zeros(1),
        np.array([0.2, -0.1]),
    )
    return m


def test_everything_the_model_has_reaches_mujoco():
    mujoco = pytest.importorskip("mujoco")
    model = _everything()
    m = mujoco.MjModel.from_xml_string(model.to_mjcf())
    assert (m.opt.timestep, m.opt.impratio, m.nu, m.ntendon, m.npair, m.nexclude, m.nkey) == (0.004, 2.0, 2, 1, 1, 1, 1)
    assert m.opt.integrator == mujoco.mjtIntegrator.mjINT_IMPLICITFAST and m.opt.cone == mujoco.mjtCone.mjCONE_ELLIPTIC
    j = m.joint("arm")
    assert (j.damping[0], j.stiffness[0], j.armature[0], j.frictionloss[0]) == (0.2, 3.0, 0.05, 0.1)
    assert m.qpos_spring[7] == 0.1  # (springref)
    np.testing.assert_array_equal(j.range, [-1.0, 1.2])
    assert m.geom("hub").condim[0] == 6 and np.allclose(m.geom("hub").friction, [0.8, 0.01, 0.001])
    assert m.actuator("slow").dyntype[0] == mujoco.mjtDyn.mjDYN_FILTER and m.actuator("slow").dynprm[0] == 0.05
    # the keyframe, in MuJoCo's layout: the base's world pose (its placement z = 1 composed), its world velocity
    layout = td.mujoco_layout(model)
    key = model.keyframes["up"]
    qpos, qvel = layout.qpos(key.q), layout.qvel(key.q, key.v)
    qpos[2] += 1.0
    np.testing.assert_allclose(m.key_qpos[0], qpos, atol=1e-15)
    np.testing.assert_allclose(m.key_qvel[0], qvel, atol=1e-15)
    np.testing.assert_allclose(m.key_ctrl[0], key.ctrl)
    # the servo's force at the key, by hand: l = gear q = 0.6, l̇ = gear v = 12, 5 u − 5 l − 0.5 l̇ = −8, clamped
    # to −3, times the gear on the joint; the filter's force is its activation, 0
    d = mujoco.MjData(m)
    mujoco.mj_resetDataKeyframe(m, d, 0)
    mujoco.mj_forward(m, d)
    np.testing.assert_allclose(d.actuator_force, [-3.0, 0.0], atol=1e-12)
    assert d.qfrc_actuator[6] == pytest.approx(-6.0)


def test_what_mjcf_cannot_say_is_named():
    model = _everything()
    model.add_sensor("jointpos", "arm")
    with pytest.warns(UserWarning, match="not written.*1 sensor"):
        model.to_mjcf()
