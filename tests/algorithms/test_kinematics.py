"""Forward kinematics (cpp/include/treedyn/algorithms/kinematics.hpp, td.forward_kinematics):
against 4x4 homogeneous products composed here from the model's public structure, and against
the RedMax mapping's world poses (an independent traversal)."""

import numpy as np
import pytest
from conftest import assert_within_rounding

import treedyn as td
from treedyn.scenes import random_tree


def _rot(axis, angle):
    a = np.asarray(axis, float)
    K = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    return np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * K @ K


def _quat(x):
    x, y, z, w = np.asarray(x, float) / np.linalg.norm(x)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


def _homogeneous(R, p):
    T = np.eye(4)
    T[:3, :3], T[:3, 3] = R, p
    return T


def _joint_motion(joint, qi):
    """The body frame in the joint frame, as the joint kinds' docstrings define it."""
    kind = type(joint).__name__
    if kind == "Revolute":
        return _homogeneous(_rot(joint.axis, qi[0]), np.zeros(3))
    if kind == "Prismatic":
        return _homogeneous(np.eye(3), joint.axis * qi[0])
    if kind == "Universal":
        return _homogeneous(_rot(joint.axis1, qi[0]) @ _rot(joint.axis2, qi[1]), np.zeros(3))
    if kind == "Spherical":
        return _homogeneous(_quat(qi), np.zeros(3))
    if kind == "Free":
        return _homogeneous(_quat(qi[3:7]), qi[:3])
    return np.eye(4)


def _reference(model, q):
    T = [np.eye(4)]
    for i in range(1, model.n_bodies):
        j, k, X = model.joints[i], model.q_indices[i], model.placements[i]
        T.append(T[model.parents[i]] @ _homogeneous(X.rotation, X.translation) @ _joint_motion(j, q[k : k + j.nq]))
    return np.array([t[:3, :3] for t in T]), np.array([t[:3, 3] for t in T])


@pytest.mark.parametrize("seed", range(6))
def test_forward_kinematics_is_the_product_of_the_joint_motions(seed):
    model = random_tree(12, seed)
    if seed % 2:
        fb = td.Model()
        fb.add_body("base", joint=td.Free(), inertia=td.Inertia(2.0, (0, 0, 0), np.eye(3)))
        for i in range(1, model.n_bodies):
            p = model.parents[i]
            fb.add_body(
                model.body_names[i],
                parent="base" if p == 0 else model.body_names[p],
                joint=model.joints[i],
                placement=model.placements[i],
                inertia=model.inertias[i],
            )
        model = fb
    q = td.random_configuration(model, np.random.default_rng(seed))
    R, p = td.forward_kinematics(model, q)
    R_ref, p_ref = _reference(model, q)
    depth = model.n_bodies  # a product of at most n_bodies 4x4 factors, each entry a 3-term sum
    assert R.shape == (model.n_bodies, 3, 3) and p.shape == (model.n_bodies, 3)
    assert_within_rounding(R, R_ref, 1.0, 3 * depth, what="R")
    assert_within_rounding(p, p_ref, np.abs(p_ref).max() + 1.0, 3 * depth, what="p")
    # the RedMax mapping's own traversal gives the same poses
    R2, p2 = td._core.RedMaxSystem(model.core).body_poses(q)
    assert_within_rounding(R, R2, 1.0, 3 * depth, what="R vs RedMax")
    assert model.body_poses(q)[0].tolist() == R.tolist()


def test_forward_kinematics_checks_its_input():
    model = random_tree(4, 0)
    with pytest.raises(ValueError, match="q"):
        td.forward_kinematics(model, np.zeros(model.nq + 1))
    with pytest.raises(ValueError, match="q"):
        td.forward_kinematics(model, np.full(model.nq, np.nan))
    with pytest.raises(TypeError, match="model"):
        td.forward_kinematics("model", np.zeros(model.nq))
