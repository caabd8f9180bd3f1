"""treedyn.inverse_kinematics: damped least squares with joint limits, several targets, restarts —
on a robot's arm (example-robot-data's Panda, its limits), a floating tree with two position targets,
and a target out of reach."""

import numpy as np
import pytest

import treedyn as td
from treedyn.scenes.random_tree import random_tree


def _panda():
    from treedyn.peers import example_robot_path

    try:
        path = example_robot_path("panda_description/urdf/panda.urdf")
    except FileNotFoundError as e:  # (example-robot-data, a test extra)
        pytest.skip(str(e))
    return td.Model.from_urdf(path)


def test_an_arm_reaches_poses_within_its_limits():
    """10 poses of the hand from random configurations inside the limits: each reached to 1e-10 (metres
    and radians) from the neutral start (with random restarts where a start ends in a local minimum),
    inside the joint limits."""
    model = _panda()
    lo, hi = model.lower_position_limit, model.upper_position_limit
    rng = np.random.default_rng(0)
    for _ in range(10):
        target = td.frame_placement(model, rng.uniform(lo, hi), "panda_hand")
        r = td.inverse_kinematics(model, {"panda_hand": target})
        assert r.success and r.residual <= 1e-10
        assert np.all(r.q >= lo) and np.all(r.q <= hi)
        X = td.frame_placement(model, r.q, "panda_hand")
        np.testing.assert_allclose(X.translation, target.translation, atol=1e-9)
        np.testing.assert_allclose(X.rotation, target.rotation, atol=1e-9)


def test_several_targets_on_a_floating_tree():
    """Two bodies' positions and a third's pose, from one random configuration of a floating tree (free,
    ball and hinge joints: the quaternions integrate as the Jacobian says)."""
    rng = np.random.default_rng(1)
    scene = random_tree(8, rng, floating_base=True, joints=("revolute", "spherical"))
    model = getattr(scene, "model", scene)
    q = td.random_configuration(model, rng)
    names = model.body_names
    targets = {
        names[3]: td.frame_placement(model, q, 3).translation,
        names[6]: td.frame_placement(model, q, 6).translation,
    }
    targets[names[8]] = td.frame_placement(model, q, 8)
    r = td.inverse_kinematics(model, targets)
    assert r.success, r.residual
    for name, target in targets.items():
        X = td.frame_placement(model, r.q, name)
        p = target.translation if isinstance(target, td.Transform) else target
        np.testing.assert_allclose(X.translation, p, atol=1e-9)


def test_a_target_out_of_reach_is_said():
    """A target 10 m away from a ~1 m arm: the nearest configuration, success False, the residual about
    the distance left."""
    model = _panda()
    r = td.inverse_kinematics(model, {"panda_hand": [10.0, 0.0, 0.5]}, restarts=2)
    assert not r.success and 8.0 < r.residual < 10.0
    assert np.all(r.q >= model.lower_position_limit) and np.all(r.q <= model.upper_position_limit)


def test_bad_targets_are_named():
    model = td.scenes.chain(3)
    model = getattr(model, "model", model)
    with pytest.raises(TypeError, match="non-empty dict"):
        td.inverse_kinematics(model, [])
    with pytest.raises(ValueError, match="Transform or 3 numbers"):
        td.inverse_kinematics(model, {model.body_names[3]: [1.0, 2.0]})
    with pytest.raises(td.UnknownNameError):
        td.inverse_kinematics(model, {"nope": [0.0, 0.0, 1.0]})
