"""MuJoCo's condim 4 and 6 (torsional and rolling friction: step.hpp's angular pyramid edges, the
Delassus operators' angular rows) stepped beside mj_step on small files written for them: a ball
rolling on rolling friction, a ball spinning on torsional friction, a box sliding and turning, the same
through an explicit <pair> and through geom priority; the cones that do not model them say so."""

import numpy as np
import pytest

import treedyn as td

mujoco = pytest.importorskip("mujoco")


def _ball(condim: int, friction: str, qvel: str, cone: str = "pyramidal", pair: str = "") -> str:
    return f"""<mujoco><option cone="{cone}"/><worldbody><geom name="floor" type="plane" size="5 5 0.1"/>
    <body name="ball" pos="0 0 0.1"><freejoint/>
      <geom name="ball" type="sphere" size="0.1" mass="1" condim="{condim}" friction="{friction}"/></body>
    </worldbody>{pair}<keyframe><key name="start" qvel="{qvel}"/></keyframe></mujoco>"""


ROLLING = _ball(6, "1 0.005 0.02", "1 0 0 0 10 0")  # rolling at 1 m/s, rolling friction 0.02
SPINNING = _ball(4, "1 0.05 0.0001", "0 0 0 0 0 20")  # spinning about the vertical at 20 rad/s
BOX = """<mujoco><worldbody><geom type="plane" size="5 5 0.1" friction="0.6 0.02 0.001"/>
    <body pos="0 0 0.05"><freejoint/><geom type="box" size="0.2 0.1 0.05" mass="2" condim="6"/></body>
    </worldbody><keyframe><key name="start" qvel="1.5 0.3 0 0 0 6"/></keyframe></mujoco>"""
# a condim-3 ball made rolling by its pair with the floor (MuJoCo's five friction numbers)
PAIR = _ball(
    3,
    "1",
    "1 0 0 0 10 0",
    pair='<contact><pair geom1="floor" geom2="ball" condim="6" friction="1 1 0.005 0.02 0.02"/></contact>',
)
# priority: the floor's condim and coefficients, not the larger of the two
PRIORITY = ROLLING.replace('size="5 5 0.1"/>', 'size="5 5 0.1" priority="1" condim="4" friction="1 0.02 0"/>')


def _follow(xml: str, seconds: float = 0.5, **kw):
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    mujoco.mj_resetDataKeyframe(m, d, 0)
    data = td.ContactSimulator(td.load_mjcf(xml), **kw).data("start")
    pos = vel = 0.0
    for _ in range(round(seconds / m.opt.timestep)):
        mujoco.mj_step(m, d)
        data.step()
        pos = max(pos, np.abs(data.q[:3] - d.qpos[:3]).max())  # (the centre; the angular velocity, body frame in both)
        vel = max(vel, np.abs(data.v[3:] - d.qvel[3:]).max())
    return pos, vel, d, data


SOLVERS = [{"contact_solver": "auto"}, {"contact_solver": "admm", "delassus": "tree"}]
SOLVERS += [{"contact_solver": "admm", "delassus": "dense"}]


@pytest.mark.parametrize("kw", SOLVERS, ids=["newton", "admm-tree", "admm-dense"])
def test_a_ball_on_rolling_friction_slows_as_in_mujoco(kw):
    """condim 6, rolling friction 0.02: MuJoCo's ball slows from 1 m/s to a third in 0.5 s; ours follows it
    (Newton to rounding, ADMM on either operator to its tolerance) — without rolling friction it would keep its
    speed."""
    contact_solver = kw["contact_solver"]
    pos, vel, d, data = _follow(ROLLING, **kw)
    assert d.qvel[0] < 0.6 and data.v[4] * 0.1 < 0.6  # (slowed: rolling friction acts)
    assert pos < (1e-9 if contact_solver == "auto" else 1e-4), pos
    assert vel < (1e-8 if contact_solver == "auto" else 1e-3), vel


@pytest.mark.parametrize("kw", SOLVERS, ids=["newton", "admm-tree", "admm-dense"])
def test_a_ball_on_torsional_friction_stops_spinning_as_in_mujoco(kw):
    """condim 4, torsional friction 0.05: the ball spun at 20 rad/s about the vertical is braked as
    MuJoCo brakes it, within 1e-2 rad/s (Newton: to rounding)."""
    contact_solver = kw["contact_solver"]
    pos, vel, d, data = _follow(SPINNING, **kw)
    assert d.qvel[5] < 15 and data.v[5] < 15
    assert vel < (1e-8 if contact_solver == "auto" else 1e-2), vel


def test_a_box_sliding_and_turning_on_condim_6_follows_mj_step():
    """A box thrown sideways with a spin on its face (four contacts, each 5 pyramid edge pairs)."""
    pos, vel, d, data = _follow(BOX, seconds=1.0)
    assert np.abs(d.qvel).max() < 0.5  # (it has come nearly to rest in MuJoCo too)
    assert pos < 1e-6 and vel < 1e-5, (pos, vel)


@pytest.mark.parametrize("xml", [PAIR, PRIORITY], ids=["pair", "priority"])
def test_a_pairs_own_condim_and_coefficients_are_taken(xml):
    pos, vel, d, data = _follow(xml)
    assert pos < 1e-9 and vel < 1e-8, (pos, vel)


def test_condim_4_and_6_are_read_and_checked():
    model = td.load_mjcf(ROLLING)
    ball = model.geoms[1]
    assert (ball.condim, ball.friction, ball.torsional_friction, ball.rolling_friction) == (6, 1.0, 0.005, 0.02)
    floor = td.load_mjcf(ROLLING.replace('size="5 5 0.1"/>', 'size="5 5 0.1" friction="0.7"/>')).geoms[0]
    assert (floor.friction, floor.torsional_friction, floor.rolling_friction) == (0.7, 0.005, 0.0001)
    for bad in ('friction="1 0.1 0.1 0.1"', 'friction="1 -0.1"'):
        with pytest.raises(td.ModelFileError, match="friction"):
            td.load_mjcf(ROLLING.replace('friction="1 0.005 0.02"', bad))
    b = td.Model()
    body = b.add_body("ball", None, td.Free(), inertia=td.Inertia(1.0, (0, 0, 0), 0.004 * np.eye(3)))
    g = b.add_geom(body, td.Sphere(0.1), friction=(0.8, 0.01), condim=6)
    assert (b.geoms[g].friction, b.geoms[g].torsional_friction, b.geoms[g].rolling_friction) == (0.8, 0.01, 0.0001)
    for bad in ((1, 2, 3, 4), (1, -1), "a"):
        with pytest.raises((ValueError, TypeError), match="geom friction"):
            b.add_geom(body, td.Sphere(0.1), friction=bad)


@pytest.mark.parametrize("kw", [{"soft": False}, {"soft": True, "friction_edges": 0}])
def test_the_cones_without_torsion_say_so(kw):
    """Hard contacts and the elliptic cone take sliding friction only: said, not silent."""
    with pytest.warns(td.SimulationWarning, match="condim 4 and 6"):
        td.ContactSimulator(td.load_mjcf(ROLLING), **kw)
