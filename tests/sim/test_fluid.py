"""MuJoCo's inertia-box fluid forces in the C++ step (contact/fluid.hpp): Gymnasium's swimmer, driven, against
mj_step; a falling box against the closed form of its drag; the fluid read from MJCF and checked."""

import os

import numpy as np
import pytest

import treedyn as td

mujoco = pytest.importorskip("mujoco")


def test_the_swimmer_swims_as_in_mujoco(public_models):
    """Gymnasium's swimmer (density 4000, viscosity 0.1, RK4) under random controls for 2 s: its root within
    1e-6 m of mj_step's (the issue's bar: 1 cm), and it swims (moves more than 1 cm)."""
    path = os.path.join(public_models["gymnasium"], "swimmer.xml")
    m = mujoco.MjModel.from_xml_path(path)
    d = mujoco.MjData(m)
    model = td.load_mjcf(path)
    assert model.fluid == (m.opt.density, m.opt.viscosity, (0.0, 0.0, 0.0)) and m.opt.density > 0
    data = td.ContactSimulator(model).data()
    rng = np.random.default_rng(0)
    worst = 0.0
    for k in range(int(round(2 / m.opt.timestep))):
        if k % 10 == 0:
            d.ctrl[:] = data.ctrl[:] = rng.uniform(-1, 1, m.nu)
        mujoco.mj_step(m, d)
        data.step()
        worst = max(worst, np.abs(data.q - d.qpos).max())
    assert worst < 1e-6 and np.hypot(*d.qpos[:2]) > 0.01


def test_a_falling_box_meets_its_drag():
    """A free box falling in a viscous, dense fluid (no rotation): u̇ = −g − (3π d η u + ½ ρ b_x b_y |u| u)/m
    along z; after 1 s at h = 1e-4 its speed is the ODE's (RK4 here) to the step's O(h)."""
    xml = """<mujoco><option density="1000" viscosity="0.5" timestep="0.0001"/><worldbody>
      <body pos="0 0 10"><freejoint/><geom type="box" size="0.1 0.2 0.3" mass="5"/></body></worldbody></mujoco>"""
    model = td.load_mjcf(xml)
    data = td.ContactSimulator(model).data()
    data.step(10000)
    b = np.array([0.2, 0.4, 0.6])  # (the box's dimensions: its inertia's equivalent box)
    rho, eta, mass, g = 1000.0, 0.5, 5.0, 9.81

    def du(u):  # (along z, u < 0)
        return -g - (3 * np.pi * b.mean() * eta * u + 0.5 * rho * b[0] * b[1] * abs(u) * u) / mass

    u, h = 0.0, 1e-3
    for _ in range(1000):  # (RK4: its error ~h⁴, far below the step's O(h) one)
        k1 = du(u)
        k2 = du(u + h / 2 * k1)
        k3 = du(u + h / 2 * k2)
        k4 = du(u + h * k3)
        u += h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    vz = data.v[2]  # (no rotation: the body frame is the world's)
    assert abs(vz - u) < 2e-3 * abs(u) and abs(u) < 0.9 * g  # (the drag matters: 1 s of free fall is 9.81)


def test_the_fluid_is_read_and_checked():
    model = td.load_mjcf('<mujoco><option density="1.2" viscosity="1e-5" wind="1 0 0"/><worldbody/></mujoco>')
    assert model.fluid == (1.2, 1e-5, (1.0, 0.0, 0.0))
    with pytest.raises(ValueError, match="density"):
        model.fluid = (-1.0, 0.0, (0, 0, 0))
    with pytest.raises(ValueError, match="C\\+\\+ step"):
        td.ContactSimulator(model, 0.01, contact_solver="proxqp")
