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
