"""The coordinate maps between treedyn and a peer that parsed the same file itself
(python/treedyn/tools/peers.py: PeerCoordinates, PinocchioFromFile, MujocoFromFile, example_robot_path).

The maps are checked against the peers' own notion of velocity: along a path q(t), the peer's
velocity (pinocchio.difference, mujoco.mj_differentiatePos) must be T(q) v, and d/dt T(q(t)) v
must be Ṫv. The agreement of the dynamics themselves is in test_io_*.py."""

import numpy as np
import pytest
from conftest import assert_within_rounding
from support.mjcf import CREATURE
from support.urdf import inertial, joint, link, robot

import treedyn as td
from treedyn.io._common import axis_angle_matrix

H = 1e-6
# a planar joint and an unbounded revolute: the two joints whose coordinates Pinocchio parametrises otherwise
PLANAR_AND_UNBOUNDED = robot(
    link("world"),
    link("puck", inertial(2.0, (0.1, 0, 0))),
    link("arm", inertial(1.0, (0.2, 0, 0))),
    joint("slide", "planar", "world", "puck", (0, 0, 0.1), axis=(0, 0, 1)),
    joint("spin", "continuous", "puck", "arm", (0.1, 0, 0), axis=(0, 1, 1)),
)


def _path(model, q, v):
    return lambda t: td.integrate(model, q, v, t)


def test_pinocchio_planar_and_unbounded_velocity_maps():
    pin = pytest.importorskip("pinocchio")
    from treedyn.tools.peers import PinocchioFromFile

    text = PLANAR_AND_UNBOUNDED
    model = td.Model.from_urdf(text)
    peer = PinocchioFromFile(model, text)
    kinds = sorted(str(b[0]) for b in peer.blocks)
    assert kinds == ["angle-cs", "planar"]
    rng = np.random.default_rng(3)
    for _ in range(3):
        q, v = td.random_configuration(model, rng), rng.standard_normal(model.nv)
        path = _path(model, q, v)
        vp = pin.difference(peer.pm, peer.q(path(-H)), peer.q(path(H))) / (2 * H)
        # central differences with H = 1e-6: truncation O(H²·|v|³) ≈ 1e-11, rounding O(u·|q|/H) ≈ 1e-10
        np.testing.assert_allclose(vp, peer.T(q) @ v, rtol=0, atol=1e-6)
        Tdot_v = (peer.T(path(H)) @ v - peer.T(path(-H)) @ v) / (2 * H)
        np.testing.assert_allclose(Tdot_v, peer.Tdot_v(q, v), rtol=0, atol=1e-6)
        assert np.abs(peer.Tdot_v(q, v)).max() > 1e-3  # the planar joint's map does move


def test_mujoco_free_and_ball_velocity_maps():
    mujoco = pytest.importorskip("mujoco")
    from treedyn.tools.peers import MujocoFromFile

    model = td.Model.from_mjcf(CREATURE)
    peer = MujocoFromFile(model, CREATURE)
    rng = np.random.default_rng(4)
    for _ in range(3):
        q, v = td.random_configuration(model, rng), rng.standard_normal(model.nv)
        path = _path(model, q, v)
        vp = np.zeros(peer.nv_peer)
        mujoco.mj_differentiatePos(peer.m, vp, 2 * H, peer.q(path(-H)), peer.q(path(H)))
        # central differences with H = 1e-6: truncation O(H²·|v|³) ≈ 1e-11, rounding O(u·|q|/H) ≈ 1e-10
        np.testing.assert_allclose(vp, peer.T(q) @ v, rtol=0, atol=1e-6)
        Tdot_v = (peer.T(path(H)) @ v - peer.T(path(-H)) @ v) / (2 * H)
        np.testing.assert_allclose(Tdot_v, peer.Tdot_v(q, v), rtol=0, atol=1e-6)


def test_mujoco_free_joint_pose_is_the_body_pose():
    """q of a free joint is the body's pose in the world: MuJoCo's xpos/xquat after mapping."""
    mujoco = pytest.importorskip("mujoco")
    from treedyn.tools.peers import MujocoFromFile

    model = td.Model.from_mjcf(CREATURE)
    peer = MujocoFromFile(model, CREATURE)
    q = td.random_configuration(model, np.random.default_rng(0))
    d = peer.d
    d.qpos[:] = peer.q(q)
    mujoco.mj_kinematics(peer.m, d)
    k = model.q_index("ball_free")
    b = mujoco.mj_name2id(peer.m, mujoco.mjtObj.mjOBJ_BODY, "ball")
    # MuJoCo copies the position and normalises the quaternion: a few roundings (n = 4 terms)
    assert_within_rounding(d.xpos[b], q[k : k + 3], q[k : k + 3], 1, what="xpos")
    assert_within_rounding(d.xquat[b], [q[k + 6], *q[k + 3 : k + 6]], 1, 4, what="xquat")


def test_unknown_joint_name_is_reported():
    pytest.importorskip("pinocchio")
    from treedyn.tools.peers import PinocchioFromFile

    text = robot(link("a"), link("b", inertial(1.0)), joint("j", "continuous", "a", "b", axis=(0, 0, 1)))
    other = text.replace('name="j"', 'name="k"')
    with pytest.raises(ValueError, match="no joint named 'j'"):
        PinocchioFromFile(td.Model.from_urdf(text), other)


def test_example_robot_path():
    from treedyn.tools.peers import example_robot_path

    try:
        path = example_robot_path("ur_description/urdf/ur5_robot.urdf")
    except FileNotFoundError:
        pytest.skip("example-robot-data is not installed")
    assert path.endswith("ur5_robot.urdf")
    with pytest.raises(FileNotFoundError, match="no_robot.urdf"):
        example_robot_path("no_robot.urdf")


def test_axis_angle_matrix_is_a_rotation_about_the_axis():
    a = np.array([1.0, 2.0, -0.5])
    R = axis_angle_matrix(a, 0.7)
    # Rodrigues' formula and 3-term products: within rounding of |R||Rᵀ| and |R||a|
    assert_within_rounding(R @ R.T, np.eye(3), np.abs(R) @ np.abs(R.T), 3, what="R Rᵀ = 1")
    assert_within_rounding(R @ a, a, np.abs(R) @ np.abs(a), 3, what="R a = a")
    assert_within_rounding(np.trace(R), 1 + 2 * np.cos(0.7), 3, 3, what="trace")


def _check_block_maps(model, peer, rng):
    """apply_T is T(q) x (Tᵀ x with transpose) without forming T — the same products, to rounding
    of |T||x| — and from_peer inverts q and v_peer = T v (angles come back modulo 2π, so q is
    compared through the peer's own coordinates)."""
    for _ in range(3):
        q, v = td.random_configuration(model, rng), rng.standard_normal(model.nv)
        T = peer.T(q)
        assert_within_rounding(peer.apply_T(q, v), T @ v, np.abs(T) @ np.abs(v), 3, what="T v")
        w = rng.standard_normal(peer.nv_peer)
        assert_within_rounding(peer.apply_T(q, w, transpose=True), T.T @ w, np.abs(T.T) @ np.abs(w), 3, what="Tᵀ w")
        q_back, v_back = peer.from_peer(peer.q(q), T @ v)
        assert_within_rounding(peer.q(q_back), peer.q(q), peer.q(q), 8, what="q")
        assert_within_rounding(v_back, v, np.abs(T.T) @ np.abs(T) @ np.abs(v), 3, what="v")


def test_block_maps_pinocchio_planar_and_unbounded():
    pytest.importorskip("pinocchio")
    from treedyn.tools.peers import PinocchioFromFile

    text = PLANAR_AND_UNBOUNDED
    model = td.Model.from_urdf(text)
    _check_block_maps(model, PinocchioFromFile(model, text), np.random.default_rng(8))


def test_block_maps_mujoco_free_and_ball():
    pytest.importorskip("mujoco")
    from treedyn.tools.peers import MujocoFromFile

    model = td.Model.from_mjcf(CREATURE)
    _check_block_maps(model, MujocoFromFile(model, CREATURE), np.random.default_rng(9))
