"""Robots whose collision geoms are convex meshes, brought as a MuJoCo user brings them: example-robot-data's
URDFs imported by MuJoCo's own compiler onto a floor with position servos and implicitfast
(treedyn.tools.peers.example_robot_mjcf), stepped by td.StepData and by mj_step from the same file.

Their feet rest on MuJoCo 4.0's plane–mesh points (contact/collision.hpp): of the hull's polygons at the
deepest vertex, the one facing the floor, its vertices below it, at most 4; their joints clamp the servos'
total force (the URDF's effort limit, which MuJoCo's import makes each joint's actuatorfrcrange)."""

import warnings

import numpy as np
import pytest

import treedyn as td
from treedyn.tools.peers import MESH_ROBOTS, example_robot_mjcf

mujoco = pytest.importorskip("mujoco")


def _pair(name, folder):
    try:
        path = example_robot_mjcf(MESH_ROBOTS[name], str(folder))
    except FileNotFoundError as e:  # (example-robot-data is a test extra: absent only outside them)
        pytest.skip(str(e))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (the visual-only parts MuJoCo's import leaves: IgnoredElementWarning)
        model = td.load_mjcf(path)
    m = mujoco.MjModel.from_xml_path(path)
    return m, mujoco.MjData(m), td.ContactSimulator(model).data()


def _run(m, d, data, steps, rng=None):
    """Both stepped side by side (new set points every 0.1 s when rng is given): the largest root and hinge
    differences, and the largest difference in contact counts."""
    root = hinge = counts = 0.0
    for k in range(steps):
        if rng is not None and k % 50 == 0:
            d.ctrl[:] = data.ctrl[:] = rng.uniform(-0.2, 0.2, m.nu)
        mujoco.mj_step(m, d)
        data.step()
        root = max(root, np.abs(data.q[:3] - d.qpos[:3]).max())
        hinge = max(hinge, np.abs(data.q[7:] - d.qpos[7:]).max())
        counts = max(counts, abs(data.n_contacts - d.ncon))
    return root, hinge, counts


def test_the_file_is_a_mujoco_users(tmp_path):
    """A free root placed 2 mm above the floor, a servo on every hinge, implicitfast; the robot's geoms touch
    the floor only; treedyn reads the same joints and actuators."""
    m, d, data = _pair("solo12", tmp_path)
    assert m.jnt_type[0] == mujoco.mjtJoint.mjJNT_FREE and m.nu == 12 and data.model.nu == 12
    assert m.opt.integrator == mujoco.mjtIntegrator.mjINT_IMPLICITFAST and data.integrator == "implicitfast"
    mujoco.mj_forward(m, d)
    assert d.ncon == 0 and (m.geom_type == mujoco.mjtGeom.mjGEOM_MESH).sum() == 17
    assert np.isfinite(data.model.joint_actuator_force_range[6:]).all()  # (the URDF's effort limits)


def test_solo12_stands_where_mujoco_stands(tmp_path):
    """1 s from 2 mm above the floor under zero set points: the root within 1e-4 m and the hinges within 1e-3
    rad of mj_step's on the way (measured: 4e-5 m, 7e-5 rad while the feet land, where a foot's equally deep
    vertices are taken in another order), standing at its height within 1e-8 m after 1 s (measured 1e-10 m),
    the same number of contacts every step (16 at rest: four per foot)."""
    m, d, data = _pair("solo12", tmp_path)
    root, hinge, counts = _run(m, d, data, 500)
    assert root < 1e-4 and hinge < 1e-3 and counts == 0
    assert abs(data.q[2] - d.qpos[2]) < 1e-8 and d.ncon == data.n_contacts == 16


def test_go2_steps_as_mujoco_under_changing_set_points(tmp_path):
    """1 s of random set points every 0.1 s: the root within 1e-5 m and the hinges within 1e-4 rad of mj_step's
    (measured: 3e-7 m, 1e-6 rad); its calves start outside their range (a violated limit MuJoCo pushes out) and
    its servos saturate at the joints' force limits."""
    m, d, data = _pair("go2", tmp_path)
    root, hinge, counts = _run(m, d, data, 500, np.random.default_rng(0))
    assert root < 1e-5 and hinge < 1e-4 and counts == 0


def test_talos_stands_as_mujoco_stands(tmp_path):
    """TALOS under zero set points for 1 s stands at MuJoCo's height within 5 mm (measured 2.4 mm): its soles'
    polygons are MuJoCo's up to how near-coplanar triangles are merged (MuJoCo groups them by their normals'
    angles rounded to 0.01 rad in the mesh's inertial frame; here: edge neighbours within 0.08 degrees), which
    changes which sole vertices hold it on some steps."""
    m, d, data = _pair("talos", tmp_path)
    root, _, counts = _run(m, d, data, 500)
    assert abs(data.q[2] - d.qpos[2]) < 5e-3 and root < 1e-2 and counts <= 4
    assert data.q[2] > 1.0 and d.qpos[2] > 1.0  # (standing, both)
