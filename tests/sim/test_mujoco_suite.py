"""The MuJoCo-suite check (issue 30, deliverable 5): the Gymnasium and dm_control locomotion models,
loaded with their armature, damping, stiffness, actuators and tendons, simulated by
td.ContactSimulator at the file's time step from the file's qpos0 beside MuJoCo on the same file.

MuJoCo's contacts and limits are soft; it is run here with them stiff (solref's time constant at
2h, the stiffest MuJoCo recommends), so that the two models differ by the contact model's
compliance only where they must (docs/contact.md, "MuJoCo's models"). The files come from the
pinned wheels (tests/conftest.py's public_models fixture).
"""

import os
import warnings

import numpy as np
import pytest

import treedyn as td

mujoco = pytest.importorskip("mujoco")

LOCOMOTION = [
    ("gymnasium", "ant"), ("gymnasium", "humanoid"), ("gymnasium", "hopper"), ("gymnasium", "walker2d"),
    ("gymnasium", "half_cheetah"), ("gymnasium", "swimmer"), ("dm_control", "quadruped"),
    ("dm_control", "walker"), ("dm_control", "cheetah"), ("dm_control", "humanoid"),
]  # fmt: skip
IDS = [f"{p}-{m}" for p, m in LOCOMOTION]


def _path(public_models, package, name):
    return os.path.join(public_models[package], f"{name}.xml")


def mujoco_run(path, t_end, ctrl=None):
    """MuJoCo's run with stiff contacts and limits: (model, data at t_end, qpos every step)."""
    m = mujoco.MjModel.from_xml_path(path)
    d = mujoco.MjData(m)
    h = m.opt.timestep
    m.geom_solref[:, 0] = 2 * h
    m.jnt_solref[:, 0] = 2 * h
    if m.npair:
        m.pair_solref[:, 0] = 2 * h
    out = []
    for _ in range(int(round(t_end / h))):
        if ctrl is not None:
            d.ctrl[:] = ctrl(d.time)
        mujoco.mj_step(m, d)
        out.append(d.qpos.copy())
    return m, d, np.array(out)


def treedyn_run(path, t_end, ctrl=None):
    """treedyn's run: (model, final state, trajectory)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", td.io.IgnoredElementWarning)
        model = td.load_mjcf(path)
    sim = td.ContactSimulator(model)
    state = td.State.initial(model)
    traj = sim.run(state, t_end, ctrl=None if ctrl is None else (lambda t, q, v: ctrl(t)))
    return model, state, traj


def root_height(m, qpos, model, q):
    """(MuJoCo's, treedyn's) root height: a free joint's z, or a planar model's rootz slide."""
    for j in range(m.njnt):
        name = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, j)
        a = m.jnt_qposadr[j]
        if m.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE:
            return qpos[a + 2], q[model.q_index(name) + 2]
        if name == "rootz":
            return qpos[a], q[model.q_index(name)]
    return None


def hinge_angles(m, qpos, model, q):
    """{hinge name: (MuJoCo's, treedyn's) angle}."""
    out = {}
    for j in range(m.njnt):
        if m.jnt_type[j] == mujoco.mjtJoint.mjJNT_HINGE:
            name = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, j)
            out[name] = (qpos[m.jnt_qposadr[j]], q[model.q_index(name)])
    return out
