"""MuJoCo's qpos/qvel/qacc/qfrc of a treedyn model (treedyn.algorithms.layout.MujocoLayout) and
StepData's qpos/qvel: a MuJoCo user's arrays go in and come out in MuJoCo's layout, both ways,
and a step from them is mj_step's."""

import numpy as np
import pytest

import treedyn as td

mujoco = pytest.importorskip("mujoco")

# a free body carrying a ball joint and a hinge, in the air, colliding with nothing, no damping
XML = """<mujoco><option timestep="0.002"/><default><geom contype="0" conaffinity="0"/></default><worldbody>
  <body name="base" pos="0 0 2"><freejoint/><geom type="box" size="0.2 0.1 0.05" mass="3"/>
    <body name="arm" pos="0.2 0 0"><joint name="shoulder" type="ball"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03" mass="0.5"/>
      <body name="hand" pos="0.3 0 0"><joint name="elbow" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.02" mass="0.3"/></body></body></body>
  </worldbody><actuator><motor joint="elbow"/></actuator></mujoco>"""


def _random_mujoco_state(m, rng):
    d = mujoco.MjData(m)
    d.qpos[:] = m.qpos0
    d.qpos[3:7] = rng.normal(size=4)
    d.qpos[7:11] = rng.normal(size=4)
    d.qpos[11] = rng.uniform(-1, 1)
    mujoco.mj_normalizeQuat(m, d.qpos)
    d.qvel[:] = rng.normal(size=m.nv)
    return d


def test_a_mujoco_state_goes_in_and_comes_out_unchanged():
    m = mujoco.MjModel.from_xml_string(XML)
    model = td.load_mjcf(XML)
    layout = td.mujoco_layout(model)
    rng = np.random.default_rng(0)
    for _ in range(5):
        d = _random_mujoco_state(m, rng)
        q, v = layout.state(d.qpos, d.qvel)
        np.testing.assert_allclose(layout.qpos(q), d.qpos, rtol=0, atol=1e-15)
        np.testing.assert_allclose(layout.qvel(q, v), d.qvel, rtol=0, atol=1e-15)
        assert np.abs(q - d.qpos).max() > 0.1  # (the layouts do differ: the quaternions' order)
        data = td.ContactSimulator(model).data()
        data.qpos, data.qvel = d.qpos, d.qvel
        np.testing.assert_allclose(data.qpos, d.qpos, rtol=0, atol=1e-15)
        np.testing.assert_allclose(data.qvel, d.qvel, rtol=0, atol=1e-15)


def test_a_step_from_mujocos_arrays_is_mj_steps():
    """300 steps from a random MuJoCo state with random controls, in MuJoCo's layout throughout."""
    m = mujoco.MjModel.from_xml_string(XML)
    model = td.load_mjcf(XML)
    d = _random_mujoco_state(m, np.random.default_rng(1))
    data = td.ContactSimulator(model).data()
    data.qpos, data.qvel = d.qpos, d.qvel
    rng = np.random.default_rng(2)
    for _ in range(300):
        u = rng.uniform(-1, 1, m.nu)
        d.ctrl[:], data.ctrl[:] = u, u
        mujoco.mj_step(m, d)
        data.step()
    np.testing.assert_allclose(data.qpos, d.qpos, rtol=0, atol=1e-10)
    np.testing.assert_allclose(data.qvel, d.qvel, rtol=0, atol=1e-9)


def test_accelerations_and_forces_map_as_mujocos():
    """layout.qacc of treedyn's forward dynamics is MuJoCo's qacc; a generalized force given to
    MuJoCo as layout.qfrc(q, τ) moves it as τ moves treedyn (and layout.tau inverts it)."""
    m = mujoco.MjModel.from_xml_string(XML)
    model = td.load_mjcf(XML)
    layout = td.mujoco_layout(model)
    rng = np.random.default_rng(3)
    solver = td.make_solver("aba", model)
    for _ in range(5):
        d = _random_mujoco_state(m, rng)
        q, v = layout.state(d.qpos, d.qvel)
        tau = rng.normal(size=model.nv)
        d.qfrc_applied[:] = layout.qfrc(q, tau)
        mujoco.mj_forward(m, d)
        a = solver.forward_dynamics(q, v, tau)
        np.testing.assert_allclose(layout.qacc(q, v, a), d.qacc, rtol=0, atol=1e-10 * (1 + np.abs(d.qacc).max()))
        np.testing.assert_allclose(layout.tau(q, layout.qfrc(q, tau)), tau, rtol=0, atol=1e-14)


def test_bad_arrays_are_refused():
    data = td.ContactSimulator(td.load_mjcf(XML)).data()
    with pytest.raises(ValueError, match="qpos must have shape"):
        data.qpos = np.zeros(3)
    with pytest.raises(ValueError, match="qvel"):
        data.qvel = np.full(data.v.size, np.nan)
    with pytest.raises(TypeError, match="model"):
        td.mujoco_layout("ant.xml")
