"""MuJoCo's common sensors (treedyn.model.sensors, treedyn.sim.sensors) read from <sensor> and
reported after each step beside mj_step's sensordata: a file written to exercise every kind (a
free torso on two driven legs with feet on the floor: joints, frames, gyro, velocimeter,
accelerometer, touch, force, torque, subtrees), and the DeepMind Control humanoid's and walker's
own sensors; sensor_data's checks."""

import numpy as np
import pytest

import treedyn as td
from treedyn.io import IgnoredElementWarning

mujoco = pytest.importorskip("mujoco")

_KINDS = """
  <jointpos joint="hip_l"/><jointvel joint="knee_r"/>
  <framepos objtype="site" objname="imu"/><framequat objtype="site" objname="imu"/>
  <framexaxis objtype="xbody" objname="shin_l"/><framezaxis objtype="site" objname="foot_r"/>
  <framelinvel objtype="site" objname="imu"/><frameangvel objtype="xbody" objname="thigh_r"/>
  <framepos objtype="body" objname="thigh_l"/><framelinvel objtype="body" objname="shin_r"/>
  <framelinacc objtype="site" objname="foot_l"/><frameangacc objtype="site" objname="imu"/>
  <gyro site="imu"/><velocimeter site="imu"/><accelerometer site="imu"/><accelerometer site="foot_r"/>
  <touch site="foot_l"/><touch site="foot_r"/><touch site="imu"/>
  <force site="hip_r"/><torque site="hip_r"/><force site="foot_l"/><torque site="knee_l"/>
  <subtreecom body="torso"/><subtreelinvel body="torso"/><subtreeangmom body="torso"/><subtreecom body="thigh_l"/>
"""


def _leg(side: str, y: float) -> str:
    return f"""<body name="thigh_{side}" pos="0 {y} -0.1"><joint name="hip_{side}" axis="0 1 0" range="-1 1"/>
        <geom type="capsule" fromto="0 0 0 0 0 -0.3" size="0.04"/>
        <site name="hip_{side}" pos="0.01 0 -0.02" euler="0 0.3 0.2"/>
        <body name="shin_{side}" pos="0 0 -0.3"><joint name="knee_{side}" axis="0 1 0" range="-2 0.2"/>
          <geom type="capsule" fromto="0 0 0 0.05 0 -0.3" size="0.035"/>
          <site name="knee_{side}" pos="0 0 -0.05"/>
          <site name="foot_{side}" type="{"sphere" if side == "l" else "box"}" size="0.06 0.05 0.05" pos="0.05 0 -0.3"/>
        </body></body>"""


TWO_LEGS = f"""<mujoco><option timestep="0.002"/><worldbody><geom type="plane" size="5 5 0.1"/>
  <body name="torso" pos="0 0 0.72"><freejoint name="root"/><geom type="box" size="0.1 0.15 0.1"/>
    <site name="imu" type="ellipsoid" size="0.2 0.2 0.15" pos="0.02 0 0.05" euler="10 0 30"/>
    {_leg("l", 0.1)}{_leg("r", -0.1)}</body></worldbody>
  <actuator><motor joint="hip_l" gear="20"/><motor joint="knee_l" gear="20"/><motor joint="hip_r" gear="20"/>
    <motor joint="knee_r" gear="20"/></actuator>
  <sensor>{_KINDS}</sensor></mujoco>"""


def _beside(xml: str, steps: int, seed: int = 0):
    """Each step's sensordata from both, with the same random controls."""
    m = mujoco.MjModel.from_xml_string(xml) if xml.lstrip().startswith("<") else mujoco.MjModel.from_xml_path(xml)
    d = mujoco.MjData(m)
    model = td.load_mjcf(xml) if xml.lstrip().startswith("<") else td.load_mjcf(xml)
    data = td.ContactSimulator(model, integrator="semi-implicit").data()
    rng = np.random.default_rng(seed)
    ours, theirs = [], []
    for _ in range(steps):
        u = rng.uniform(-0.3, 0.3, m.nu)
        d.ctrl[:], data.ctrl[:] = u, u
        mujoco.mj_step(m, d)
        data.step()
        ours.append(data.sensordata.copy()), theirs.append(d.sensordata.copy())
    return m, model, np.array(ours), np.array(theirs)


def _per_sensor(model, ours, theirs):
    """{kind k: largest difference / (1 + largest reading)} over the run."""
    out, start = {}, 0
    for k, s in enumerate(model.sensors):
        a, b = ours[:, start : start + s.size], theirs[:, start : start + s.size]
        out[f"{k} {s.kind} {s.target}"] = np.abs(a - b).max() / (1 + np.abs(b).max())
        start += s.size
    return out


def test_every_kind_reads_as_mujocos_sensordata():
    """0.6 s of a torso falling onto its driven legs (landing, feet sliding): every sensor within 1e-8
    of MuJoCo's (relative to its largest reading; measured: 1e-12), the touches and forces of the
    contacts included — and the feet do touch, the touch sensors read."""
    m, model, ours, theirs = _beside(TWO_LEGS, 300)
    assert ours.shape == theirs.shape == (300, m.nsensordata)
    worst = _per_sensor(model, ours, theirs)
    assert max(worst.values()) < 1e-8, {k: v for k, v in worst.items() if v >= 1e-8}
    touch = [k for k, s in enumerate(model.sensors) if s.kind == "touch"]
    assert (theirs[:, [sum(s.size for s in model.sensors[:k]) for k in touch[:2]]] > 1).any()


@pytest.mark.parametrize("name", ["humanoid", "walker"])
def test_the_dm_control_suites_sensors(public_models, name):
    """A public file's own sensors (the humanoid: subtree, accelerometer, velocimeter, gyro, touch,
    force, torque; the walker: subtreelinvel) over 0.2 s beside MuJoCo's, to 1e-8 relative (measured:
    1e-11): with joint damping, MuJoCo's qacc is recovered from the Euler step's implicit damping."""
    path = public_models["dm_control"] + f"{name}.xml"
    m, model, ours, theirs = _beside(str(path), 100)
    assert ours.shape == theirs.shape
    worst = _per_sensor(model, ours, theirs)
    assert max(worst.values()) < 1e-8, {k: v for k, v in worst.items() if v >= 1e-8}


def test_sensor_data_checks_its_inputs():
    model = td.load_mjcf(TWO_LEGS)
    q, v = td.State.initial(model).q, np.zeros(model.nv)
    with pytest.raises(ValueError, match="accelerometer.*need the acceleration"):
        td.sensor_data(model, q, v)
    with pytest.raises(ValueError, match="a must have shape"):
        td.sensor_data(model, q, v, np.zeros(3))
    x = td.sensor_data(model, q, v, np.zeros(model.nv))  # (no contacts: the touches read 0)
    assert x.shape == (sum(s.size for s in model.sensors),) and np.all(np.isfinite(x))
    with pytest.raises(ValueError, match="sensor kind"):
        model.add_sensor("rangefinder", "imu")
    with pytest.raises(td.UnknownNameError):
        model.add_sensor("jointpos", "nope")
    with pytest.raises(ValueError, match="needs its zone"):
        model.add_sensor("touch", "imu")
    with pytest.raises(ValueError, match="not a hinge or slide"):
        model.add_sensor("jointpos", "root")
    with pytest.warns(IgnoredElementWarning, match="rangefinder"):
        td.load_mjcf(TWO_LEGS.replace("<sensor>", '<sensor><rangefinder site="imu"/>'))
    data = td.ContactSimulator(model).data()
    with pytest.raises(ValueError, match="step first"):
        _ = data.sensordata


@pytest.mark.parametrize(
    "zone",
    [
        td.Sphere(0.3),
        td.Ellipsoid((0.2, 0.4, 0.3)),
        td.Box((0.2, 0.4, 0.3)),
        td.Cylinder(0.3, 0.4),
        td.Capsule(0.2, 0.4),
    ],
    ids=lambda z: type(z).__name__,
)
def test_a_touch_zone_is_met_where_the_ray_enters_it(zone):
    """The touch test (the ray o + t d, t >= 0, meets the solid) against the ray sampled densely: a
    ray it says meets the zone enters the zone grown by 0.1 %, one it says misses stays out of the
    zone shrunk by 0.1 % (rays from outside and inside, aimed near it)."""
    from treedyn.sim.sensors import _ray_meets

    def inside(x, s):  # (the zone scaled by s)
        if isinstance(zone, td.Sphere):
            return np.linalg.norm(x, axis=-1) <= s * zone.radius
        if isinstance(zone, td.Ellipsoid):
            return np.linalg.norm(x / (s * np.array(zone.radii)), axis=-1) <= 1
        if isinstance(zone, td.Box):
            return (np.abs(x) <= s * np.array(zone.half_extents)).all(axis=-1)
        radial = np.hypot(x[..., 0], x[..., 1])
        if isinstance(zone, td.Cylinder):
            return (radial <= s * zone.radius) & (np.abs(x[..., 2]) <= s * zone.half_length)
        z = np.clip(x[..., 2], -s * zone.half_length, s * zone.half_length)
        return np.hypot(radial, x[..., 2] - z) <= s * zone.radius

    rng = np.random.default_rng(1)
    t = np.linspace(0, 4, 40001)[:, None]
    met = 0
    for _ in range(300):
        o = rng.uniform(-1, 1, 3)
        d = rng.uniform(-0.5, 0.5, 3) - o
        d /= np.linalg.norm(d)
        if _ray_meets(zone, o, d):
            met += 1
            assert inside(o + t * d, 1.001).any(), (o, d)
        else:
            assert not inside(o + t * d, 0.999).any(), (o, d)
    assert 30 < met < 290
