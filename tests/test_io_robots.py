"""Real robots: URDFs of example-robot-data loaded by treedyn and by Pinocchio's own parser agree
on M(q), the bias forces, forward dynamics and M⁻¹ at random states (to 1e-9 relative).

Skipped when pinocchio or example-robot-data is not installed (optional test extras)."""

import warnings

import numpy as np
import pytest
from conftest import assert_peer_agrees_at_random_states, assert_within_rounding

import treedyn as td

pin = pytest.importorskip("pinocchio")
from treedyn.peers import PinocchioFromFile, example_robot_path  # noqa: E402

#: (id, path in example-robot-data's robots folder, floating base, mimic joints, what it covers)
ROBOTS = [
    (
        "panda",
        "panda_description/urdf/panda.urdf",
        False,
        "independent",
        "7-DoF arm, prismatic fingers with an unaligned axis, a <mimic> joint made independent",
    ),
    ("xarm7", "xarm_description/urdf/xarm7.urdf", False, "error", "7-DoF arm, root link 'world'"),
    ("ur5", "ur_description/urdf/ur5_robot.urdf", False, "error", "6-DoF arm, fixed tool frames"),
    (
        "kinova",
        "kinova_description/robots/kinova.urdf",
        False,
        "error",
        "6-DoF arm with continuous joints (Pinocchio: (cos, sin))",
    ),
    ("solo12", "solo_description/robots/solo12.urdf", True, "error", "quadruped, floating base"),
    (
        "anymal-c",
        "anymal_c_simple_description/urdf/anymal.urdf",
        True,
        "error",
        "quadruped, floating base, unaligned axes, physically inconsistent inertias",
    ),
    ("allegro", "allegro_hand_description/urdf/allegro_right_hand.urdf", False, "error", "16-DoF hand"),
    ("talos", "talos_data/robots/talos_reduced.urdf", True, "independent", "humanoid, floating base"),
    (
        "tiago",
        "tiago_description/robots/tiago_no_hand.urdf",
        False,
        "error",
        "mobile manipulator: prismatic torso, continuous wheels",
    ),
    ("ur5-floating", "ur_description/urdf/ur5_robot.urdf", True, "error", "a fixed arm made floating"),
]


def robot_path(relative):
    try:
        return example_robot_path(relative)
    except FileNotFoundError as e:
        pytest.skip(str(e))


def load(relative, floating_base, mimic):
    path = robot_path(relative)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # <gazebo>, <transmission>, inconsistent inertias
        model = td.Model.from_urdf(path, floating_base=floating_base, mimic=mimic)
    return model, PinocchioFromFile(model, path, floating_base)


@pytest.mark.parametrize("relative,floating_base,mimic", [r[1:4] for r in ROBOTS], ids=[r[0] for r in ROBOTS])
def test_robot_agrees_with_pinocchio(relative, floating_base, mimic):
    model, peer = load(relative, floating_base, mimic)
    assert (model.nv, model.nq) == (peer.pm.nv, model.nq) and model.nv == peer.nv_peer
    assert sorted(model.joint_names) == sorted(peer.pm.names[1:])
    assert_peer_agrees_at_random_states(model, peer, np.random.default_rng(2024), n=5, what="Pinocchio")


def test_joint_coordinates_are_found_by_name_not_by_position():
    """Pinocchio numbers Talos' joints in its own order; q_index/v_index locate ours."""
    model, peer = load("talos_data/robots/talos_reduced.urdf", True, "independent")
    ours = [model.v_index(n) for n in model.joint_names]
    theirs = [peer.pm.joints[peer.pm.getJointId(n)].idx_v for n in model.joint_names]
    assert ours == sorted(ours) and theirs != ours  # the two orders differ
    q = td.neutral(model)
    q[model.q_index("arm_left_4_joint")] = -1.2
    qp = peer.q(q)
    assert qp[peer.pm.joints[peer.pm.getJointId("arm_left_4_joint")].idx_q] == -1.2
    assert len(theirs) == len(set(theirs))


def test_continuous_joints_map_to_cos_sin():
    model, peer = load("kinova_description/robots/kinova.urdf", False, "error")
    assert peer.nq_peer > model.nq  # Pinocchio's unbounded joints have 2 coordinates, ours 1
    q = td.random_configuration(model, np.random.default_rng(0))
    qp = peer.q(q)
    for name in model.joint_names:
        j = peer.pm.joints[peer.pm.getJointId(name)]
        if j.nq == 2:
            th = q[model.q_index(name)]
            assert_within_rounding(qp[j.idx_q : j.idx_q + 2], [np.cos(th), np.sin(th)], 1, 1, what=name)


def test_panda_mimic_is_an_error_by_default():
    from treedyn.io._xml import ModelFileError

    path = robot_path("panda_description/urdf/panda.urdf")
    with pytest.raises(ModelFileError, match=r"panda\.urdf, line \d+: joint 'panda_finger_joint2' has a <mimic"):
        td.Model.from_urdf(path)
