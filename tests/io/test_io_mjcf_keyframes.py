"""MJCF's <keyframe> (treedyn.io.mjcf.keyframes) and the options' defaults: keys in treedyn's
coordinates against MuJoCo's own reading of the same key (mj_resetDataKeyframe), MuJoCo's defaults
where a key or the file is silent, and the keys MuJoCo refuses."""

import numpy as np
import pytest

import treedyn as td

mujoco = pytest.importorskip("mujoco")

_FILE = """<mujoco><worldbody><geom type="plane" size="2 2 0.1"/>
<body name="base" pos="0 0 0.5"><freejoint name="root"/><geom type="box" size="0.2 0.1 0.05" pos="0.05 0 0"/>
  <body name="ball" pos="0.2 0 0"><joint name="b" type="ball"/><geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.03"/>
    <body name="tip" pos="0.2 0 0"><joint name="h" axis="0 1 0" ref="10"/><geom type="sphere" size="0.04"/></body>
  </body></body></worldbody>
<actuator><motor name="m" joint="h"/><adhesion name="not-modelled" body="tip" ctrlrange="0 1"/><position name="p" joint="h" kp="5"/></actuator>
<keyframe>
  <key name="moving" time="1.5" qpos="0.1 0.2 0.7 0.9238795 0 0.3826834 0  0.7071068 0.7071068 0 0  0.3"
       qvel="1 -2 0.5 0.3 -0.2 0.1  0.4 0.5 -0.6  2" ctrl="0.5 0.7 -0.25"/>
  <key/>
</keyframe></mujoco>"""


def test_a_key_is_mujocos_state_in_treedyns_coordinates():
    """q, v of the key mapped by treedyn.peers' MuJoCo map equal MuJoCo's reading of it; the free joint's
    velocity is the same motion (world-axes linear velocity ↔ body axes); ctrl keeps the loaded actuators."""
    from treedyn.peers import MujocoFromFile

    with pytest.warns(td.io.IgnoredElementWarning, match="adhesion"):
        model = td.load_mjcf(_FILE)
    m = mujoco.MjModel.from_xml_string(_FILE)
    d = mujoco.MjData(m)
    mujoco.mj_resetDataKeyframe(m, d, 0)
    key = model.keyframes["moving"]
    assert key.time == 1.5 and model.actuator_names == ["m", "p"]
    assert np.array_equal(key.ctrl, [0.5, -0.25])
    cmap = MujocoFromFile(model, _FILE)
    assert np.allclose(cmap.q(key.q), d.qpos, atol=1e-7)
    assert np.allclose(cmap.apply_T(key.q, key.v), d.qvel, atol=1e-12)
    state = key.state()
    assert state.t == 1.5 and np.array_equal(state.q, key.q) and state.q is not key.q


def test_a_silent_key_is_qpos0_at_rest():
    model = td.load_mjcf(_FILE)
    key = model.keyframes["key1"]
    assert np.array_equal(key.q, model.reference_configuration)
    assert key.time == 0 and not key.v.any() and not key.ctrl.any() and key.ctrl.shape == (2,)


def test_sim_data_starts_from_a_key_with_its_controls():
    model = td.load_mjcf(_FILE)
    sim = td.ContactSimulator(model)
    d = sim.data("moving")
    key = model.keyframes["moving"]
    assert np.array_equal(d.q, key.q) and np.array_equal(d.v, key.v) and np.array_equal(d.ctrl, key.ctrl)
    assert d.time == 1.5
    with pytest.raises(ValueError, match="no keyframe 'home'.*moving"):
        sim.data("home")


def test_the_timestep_is_mujocos_default_where_the_file_is_silent():
    model = td.load_mjcf(_FILE)
    assert model.timestep == mujoco.MjModel.from_xml_string(_FILE).opt.timestep == 0.002
    assert td.ContactSimulator(model).dt == 0.002


def test_a_short_key_is_padded_as_mujoco_pads_it():
    """A key with fewer values than the model takes the rest from qpos0 and zeros, as MuJoCo does."""
    short = _FILE.replace("<key/>", '<key qpos="0.3 0 0.6" qvel="1 2" ctrl="0.5"/>')
    model = td.load_mjcf(short)
    m = mujoco.MjModel.from_xml_string(short)
    from treedyn.peers import MujocoFromFile

    key, cmap = model.keyframes["key1"], MujocoFromFile(model, short)
    assert np.allclose(cmap.q(key.q), m.key_qpos[1], atol=1e-12)
    assert np.allclose(cmap.apply_T(key.q, key.v), m.key_qvel[1], atol=1e-12)
    assert np.array_equal(key.ctrl, m.key_ctrl[1][[0, 2]])


@pytest.mark.parametrize(
    "key, what",
    [
        (f'qpos="{" 0" * 13}"', "qpos has 13 values"),
        (f'qvel="{" 0" * 11}"', "qvel has 11 values"),
        ('ctrl="1 2 3 4"', "ctrl has 4 values"),
    ],
)
def test_a_long_key_is_refused_as_mujoco_refuses_it(key, what):
    bad = _FILE.replace("<key/>", f"<key {key}/>")
    with pytest.raises(ValueError):
        mujoco.MjModel.from_xml_string(bad)
    with pytest.raises(td.ModelFileError, match=what):
        td.load_mjcf(bad)
