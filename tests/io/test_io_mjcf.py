"""MJCF loading (python/treedyn/io/mjcf/): bodies, joints, poses, defaults, inertias from geoms,
errors and warnings; and models from a pendulum to a floating creature with ball joints against
MuJoCo's own compiler (mj_fullM, mj_forward)."""

import math
import re
import warnings

import numpy as np
import pytest
from conftest import assert_peer_agrees_at_random_states, assert_within_rounding
from support.mjcf import CREATURE, HUMANOID

import treedyn as td
from treedyn.io._common import IgnoredElementWarning
from treedyn.io._xml import ModelFileError

# Values by hand and values parsed from the files: a handful of roundings each, so n = 1 in
# assert_within_rounding (δ = 64u ≈ 7e-15 relative to the magnitudes summed).

# ------------------------------------------------------------------ models

PENDULUM = """
<mujoco model="pendulum">
  <worldbody>
    <body name="bob" pos="0 0 2">
      <joint name="swing" type="hinge" axis="0 1 0"/>
      <geom type="sphere" pos="0 0 -0.8" size="0.1" mass="1.5"/>
    </body>
  </worldbody>
</mujoco>
"""

CARTPOLE = """
<mujoco model="cartpole">
  <compiler angle="radian"/>
  <option gravity="0 0 -9.81"/>
  <worldbody>
    <geom type="plane" size="5 5 0.1"/>
    <body name="cart" pos="0 0 0.5">
      <joint name="slider" type="slide" axis="1 0 0"/>
      <geom type="box" size="0.2 0.1 0.05" mass="2"/>
      <body name="pole">
        <joint name="hinge" type="hinge" axis="0 1 0"/>
        <geom type="sphere" pos="0 0 0.6" size="0.05" mass="0.5"/>
      </body>
    </body>
  </worldbody>
</mujoco>
"""

ARM = """
<mujoco model="arm">
  <compiler angle="degree" eulerseq="zyx"/>
  <default>
    <joint axis="0 0 1" damping="0"/>
    <geom density="700"/>
    <default class="link">
      <geom type="capsule" size="0.04"/>
      <default class="wrist">
        <joint axis="1 0 0" pos="0 0 0.05"/>
      </default>
    </default>
  </default>
  <worldbody>
    <body name="base" pos="0 0 0.1" euler="0 0 30" childclass="link">
      <geom type="cylinder" size="0.1 0.05" class="main"/>
      <body name="shoulder" pos="0 0 0.1" axisangle="1 1 0 20">
        <joint name="yaw"/>
        <joint name="pitch" axis="0 1 0" pos="0 0 0.05" ref="10"/>
        <geom fromto="0 0 0 0 0 0.4"/>
        <body name="upper" pos="0 0 0.4" xyaxes="0 1 0 -1 0 0.2">
          <joint name="elbow" axis="0 1 1" pos="0.01 0 0"/>
          <geom fromto="0 0 0 0.3 0 0.05"/>
          <geom type="box" size="0.03 0.04 0.05" pos="0.15 0 0" quat="0.9 0.1 0.2 0.3"/>
          <frame pos="0.3 0 0.05" zaxis="1 0 1">
            <body name="forearm" childclass="wrist">
              <joint name="roll"/>
              <joint name="shift" type="slide" axis="0 0 1" ref="0.02"/>
              <inertial pos="0.02 0.01 0.1" mass="0.6" fullinertia="0.004 0.005 0.002 0.0003 -0.0002 0.0001"/>
              <body name="hand" pos="0 0 0.25" euler="10 -20 30">
                <joint name="wrist" class="wrist"/>
                <inertial pos="0 0 0.05" quat="0.7 0.2 -0.1 0.4" mass="0.3" diaginertia="0.0004 0.0005 0.0003"/>
                <body name="tool" pos="0 0 0.1">
                  <geom type="ellipsoid" size="0.02 0.03 0.05" mass="0.1"/>
                </body>
              </body>
            </body>
          </frame>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>
"""


MODELS = {"pendulum": PENDULUM, "cartpole": CARTPOLE, "arm": ARM, "creature": CREATURE, "humanoid": HUMANOID}


def load(xml):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # these models have nothing to ignore or warn about
        return td.Model.from_mjcf(xml)


# ------------------------------------------------------------------ structure, without MuJoCo


def test_pendulum_mass_matrix_and_gravity_torque_by_hand():
    m = load(PENDULUM)
    assert m.body_names == ["world", "bob"] and m.joint_names == ["swing"]
    L, r, mass = 0.8, 0.1, 1.5
    for q in (0.0, 0.4, -2.0):
        qv = np.array([q])
        I = mass * (L * L + 0.4 * r * r)
        assert_within_rounding(td.mass_matrix(m, qv)[0, 0], I, I, 1, what="pendulum M")
        # about +y, the bob at (L sin q, ., -L cos q) weighs m g: torque g m L sin q resists
        assert_within_rounding(
            td.bias_forces(m, qv, np.zeros(1))[0],
            9.81 * mass * L * math.sin(q),
            9.81 * mass * L,
            1,
            what="pendulum gravity",
        )


def test_cartpole_mass_matrix_by_hand():
    m = load(CARTPOLE)
    assert m.joint_names == ["slider", "hinge"] and m.body_names == ["world", "cart", "pole"]
    mc, mp, l, r = 2.0, 0.5, 0.6, 0.05
    for th in (0.0, 0.7, 2.5):
        M = td.mass_matrix(m, np.array([0.3, th]))
        # pole about +y: the bob at (l sin θ, ., l cos θ) relative to the cart
        expected = [[mc + mp, mp * l * math.cos(th)], [mp * l * math.cos(th), mp * (l * l + 0.4 * r * r)]]
        assert_within_rounding(M, expected, mc + mp, 1, what="cartpole M")


def test_bodies_joints_frames_and_coordinates():
    m = load(CREATURE)
    assert m.joint_names[:3] == ["root", "tail_slide", "fl_hip"]
    assert m.joint_names[-1] == "ball_free"
    assert m.body_names[:4] == ["world", "torso", "tail", "fl_thigh"]
    # several joints in one body: massless bodies "<body>#<joint>" then the body itself
    i = m.body_index("bl_thigh#bl_hip_x")
    assert m.body_names[i + 1] == "bl_thigh" and m.parents[i + 1] == i
    # a body without joints is merged; its frame is kept
    assert "br_foot" not in m.body_names and m.frames["br_foot"][0] == "br_shin"
    # a ball joint off the body origin: treedyn's body frame sits on the joint
    body, X = m.frames["fl_thigh"]
    assert body == "fl_thigh"
    assert_within_rounding(X.translation, [0, 0, -0.02], 0.02, 1, what="frame translation")
    # q: free (7), slide (1), ball (4), hinge (1), ...
    assert m.q_index("root") == 0 and m.q_index("tail_slide") == 7 and m.q_index("fl_hip") == 8
    assert m.v_index("fl_hip") == 7 and m.v_index("fl_knee") == 10
    assert isinstance(m.joints[m.body_index("fl_thigh")], td.Spherical)
    assert m.joint_limits == {"br_knee": (-1.0, 1.0)}


def test_unnamed_bodies_and_joints_get_mujocos_ids():
    xml = """<mujoco><worldbody>
      <body><joint/><geom size="0.1"/>
        <body name="named"><joint/><joint name="j"/><geom size="0.1"/></body>
        <body><joint type="slide"/><geom size="0.1"/></body>
      </body></worldbody></mujoco>"""
    m = load(xml)
    assert m.body_names == ["world", "body1", "named#joint1", "named", "body3"]
    assert m.joint_names == ["joint0", "joint1", "j", "joint3"]


def test_defaults_childclass_and_explicit_attributes():
    m = load(ARM)
    axes = {n: m.joints[m._joint_index[n]].axis for n in m.joint_names}
    assert_within_rounding(axes["yaw"], [0, 0, 1], 1, 1, what="yaw")  # main class
    assert_within_rounding(axes["pitch"], [0, 1, 0], 1, 1, what="pitch")  # explicit
    assert_within_rounding(axes["roll"], [1, 0, 0], 1, 1, what="roll")  # childclass "wrist"
    assert_within_rounding(axes["elbow"], np.array([0, 1, 1]) / math.sqrt(2), 1, 1, what="elbow")


def test_hinge_ref_is_the_coordinate_of_the_pose_in_the_file():
    """With ref = 30°, the pendulum hangs straight down (no gravity torque) at q = 30°."""
    xml = PENDULUM.replace('type="hinge"', 'type="hinge" ref="30"')
    m = load(xml)
    mgl = 9.81 * 1.5 * 0.8
    assert_within_rounding(td.bias_forces(m, np.array([math.radians(30)]), np.zeros(1))[0], 0, mgl, 1, what="ref")
    assert_within_rounding(
        td.bias_forces(m, np.zeros(1), np.zeros(1))[0], mgl * math.sin(-math.radians(30)), mgl, 1, what="ref, q = 0"
    )
    slide = CARTPOLE.replace('type="slide" axis="1 0 0"', 'type="slide" axis="0 0 2" ref="0.25"')
    ms = load(slide)
    # the cart is at its file position at q = 0.25: its height then is 0.5, at q = 0 it is 0.25
    body, X = ms.frames["cart"]
    E, r = ms._cpp.placement(ms.body_index("cart"))
    assert_within_rounding(r, [0, 0, 0.25], 0.5, 1, what="slide ref")


def test_gravity_option_and_flag():
    assert list(load(CREATURE).gravity) == [0.5, -0.3, -9.81]
    off = PENDULUM.replace("<worldbody>", '<option><flag gravity="disable"/></option><worldbody>')
    assert list(load(off).gravity) == [0, 0, 0]
    assert list(load(PENDULUM).gravity) == [0, 0, -9.81]


@pytest.mark.parametrize(
    "compiler",
    [
        'boundmass="0.5"',
        'boundinertia="0.02"',
        'balanceinertia="true"',
        'boundmass="0.3" boundinertia="0.001" balanceinertia="true"',
    ],
)
def test_mass_and_inertia_bounds_are_mujocos(compiler):
    """<compiler boundmass boundinertia balanceinertia>: on a tiny sphere off its joint, a light
    thin rod and an inertial that breaks the triangle inequality, as MuJoCo's compiler applies them."""
    pytest.importorskip("mujoco")
    from treedyn.tools.peers import MujocoFromFile

    diag = "0.001 0.001 0.005" if "balance" in compiler else "0.001 0.002 0.0025"  # MuJoCo refuses A + B < C
    xml = f"""<mujoco><compiler {compiler}/><worldbody>
      <body name="a"><joint type="hinge" axis="0 1 0"/><geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.005"/>
        <body name="b" pos="0.4 0 0"><joint type="hinge" axis="1 0 0"/><geom size="0.003" pos="0 0.01 0"/>
          <body name="c" pos="0 0.1 0"><joint type="hinge" axis="0 0 1"/>
            <inertial pos="0.1 0 0" mass="0.2" diaginertia="{diag}" euler="10 20 30"/></body>
        </body></body></worldbody></mujoco>"""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the unbalanced inertial, when it is kept
        model = td.Model.from_mjcf(xml)
    peer = MujocoFromFile(model, xml)
    assert_peer_agrees_at_random_states(model, peer, np.random.default_rng(5), what="MuJoCo")


def test_inertia_from_geoms_settings():
    base = """<mujoco><compiler {}/><worldbody><body><joint axis="0 0 1"/>
      <inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/>
      <geom type="sphere" size="0.1" pos="0.5 0 0" mass="2"/>
      <geom type="sphere" size="0.1" pos="0.5 0 0" mass="3" group="4"/>
      </body></worldbody></mujoco>"""
    Mzz = lambda xml: td.mass_matrix(load(xml), np.zeros(1))[0, 0]  # noqa: E731
    sphere = lambda mass: mass * (0.25 + 0.4 * 0.01)  # noqa: E731
    assert_within_rounding(Mzz(base.format("")), 1.0, 1.0, 1, what="auto")  # <inertial>
    assert_within_rounding(
        Mzz(base.format('inertiafromgeom="true"')), sphere(5), sphere(5), 1, what="geoms"
    )  # groups 0-5
    assert_within_rounding(
        Mzz(base.format('inertiafromgeom="true" inertiagrouprange="0 3"')), sphere(2), sphere(2), 1, what="group range"
    )
    assert_within_rounding(Mzz(base.format('settotalmass="2"')), 2.0, 2.0, 1, what="settotalmass")  # scaled by 2 / 1


def test_include_is_relative_to_the_including_file(tmp_path):
    (tmp_path / "parts").mkdir()
    (tmp_path / "parts" / "leg.xml").write_text(
        '<mujoco><body name="leg" pos="0 0 -0.2"><joint name="knee"/><geom size="0.05"/></body></mujoco>'
    )
    (tmp_path / "robot.xml").write_text(
        '<mujoco><worldbody><body name="hip"><joint name="hip"/><geom size="0.1"/>'
        '<include file="parts/leg.xml"/></body></worldbody></mujoco>'
    )
    m = td.Model.from_mjcf(str(tmp_path / "robot.xml"))
    assert m.joint_names == ["hip", "knee"] and m.parents[2] == 1


def test_euler_sequences():
    """xyz (moving axes) is R = Rx Ry Rz; XYZ (fixed axes) is R = Rz Ry Rx."""
    from treedyn.io._common import axis_angle_matrix as aa

    a = (20.0, -35.0, 50.0)
    Rx, Ry, Rz = (aa(e, math.radians(t)) for e, t in zip(np.eye(3), a))
    for seq, R in (("xyz", Rx @ Ry @ Rz), ("XYZ", Rz @ Ry @ Rx)):
        xml = (
            f'<mujoco><compiler eulerseq="{seq}"/><worldbody><body euler="{a[0]} {a[1]} {a[2]}">'
            '<joint/><geom size="0.1"/></body></worldbody></mujoco>'
        )
        E, r = load(xml)._cpp.placement(1)
        assert_within_rounding(np.asarray(E).T, R, 1, 3, what=seq)  # three rotations composed


# ------------------------------------------------------------------ warnings and errors


def test_what_is_not_modelled_is_said_once():
    """The joints' passive attributes, the actuators and the fluid are read; what is not modelled (sensors,
    gravity compensation) is said in one warning."""
    xml = CARTPOLE.replace('type="slide" axis="1 0 0"', 'type="slide" axis="1 0 0" damping="0.1" armature="0.01"')
    xml = xml.replace("</mujoco>", '<actuator><motor joint="slider"/></actuator><sensor/></mujoco>')
    xml = xml.replace("<worldbody>", '<option density="1.2"/><worldbody>', 1)
    xml = xml.replace('<body name="cart"', '<body name="cart" gravcomp="1"', 1)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        model = td.Model.from_mjcf(xml)
    msgs = [str(x.message) for x in w if issubclass(x.category, IgnoredElementWarning)]
    assert len(msgs) == 1
    assert "gravcomp" in msgs[0] and "density" not in msgs[0] and "damping" not in msgs[0]
    assert model.fluid == (1.2, 0.0, (0.0, 0.0, 0.0))
    assert model.armature[model.v_index("slider")] == 0.01 and model.joint_damping[model.v_index("slider")] == 0.1
    assert model.actuator_names == ["actuator0"]


def body(inner):
    return f'<mujoco><worldbody><body name="b"><joint name="j"/>{inner}</body></worldbody></mujoco>'


ERRORS = {
    "malformed": (
        "<mujoco>\n<worldbody>\n<body>\n</worldbody>\n</mujoco>",
        ["malformed XML", "mismatched tag", "line 4"],
    ),
    "not-mujoco": ("<robot/>", ["root element is <robot>", "<mujoco>"]),
    "equality": (
        '<mujoco><worldbody/><equality><weld body1="a"/></equality></mujoco>',
        ["<weld>", "no body named 'a'"],
    ),
    "equality-flex": (
        '<mujoco><worldbody/><equality><flex flex="f"/></equality></mujoco>',
        ["<equality><flex>", "not supported"],
    ),
    "nested-free": (
        body('<geom size="0.1"/><body name="c"><freejoint/><geom size="0.1"/></body>'),
        ["free joint", "top-level"],
    ),
    "joint-type": (
        body('<geom size="0.1"/><body name="c"><joint name="s" type="screw"/><geom size="1"/></body>'),
        ["joint 's' has type 'screw'"],
    ),
    "mesh-undeclared": (
        body('<geom name="shell" type="mesh" mesh="m"/>'),
        ["geom shell of body 'b'", "no <mesh name='m'> in <asset>"],
    ),
    "hfield-inertia": (
        body('<geom name="h" type="hfield" hfield="t"/>'),
        ["geom h of body 'b' is a hfield", "give body 'b' an <inertial>"],
    ),
    "unknown-class": (body('<geom class="nope" size="0.1"/>'), ["default class 'nope'", "not defined"]),
    "two-orientations": (body('<geom size="0.1" quat="1 0 0 0" euler="0 0 0"/>'), ["more than one orientation"]),
    "composite": (body('<composite type="rope"/>'), ["<composite> is not supported"]),
    "plane": (body('<geom type="plane" size="1 1 1"/>'), ["plane can only be in the world body"]),
    "bad-number": (body('<geom size="0.1 x"/>'), ["size='0.1 x'", "not a list of numbers"]),
    "world-joint": (
        "<mujoco><worldbody><joint/></worldbody></mujoco>",
        ["<joint> in <worldbody>", "the world cannot move"],
    ),
    "two-inertials": (
        body('<inertial mass="1" diaginertia="1 1 1"/><inertial mass="1" diaginertia="1 1 1"/>'),
        ["more than one <inertial>"],
    ),
    "inertial-both": (
        body('<inertial mass="1" diaginertia="1 1 1" fullinertia="1 1 1 0 0 0"/>'),
        ["exactly one of diaginertia and fullinertia"],
    ),
    "include-missing": (body('<include file="nowhere.xml"/>'), ["<include file='nowhere.xml'>", "not found"]),
    "global": ('<mujoco><compiler coordinate="global"/><worldbody/></mujoco>', ["coordinate='global'"]),
    "zero-axis": (
        body('<geom size="0.1"/><body name="c"><joint name="z" axis="0 0 0"/><geom size="1"/></body>'),
        ["joint 'z' has a zero axis"],
    ),
    "duplicate-body": (
        '<mujoco><worldbody><body name="a"/><body name="a"/></worldbody></mujoco>',
        ["two bodies are named 'a'"],
    ),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors_name_the_problem_the_file_and_the_line(tmp_path, case):
    text, expected = ERRORS[case]
    path = tmp_path / f"{case}.xml"
    path.write_text(text)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ModelFileError) as e:
            td.Model.from_mjcf(str(path))
    msg = str(e.value)
    assert msg.startswith(str(path)) and isinstance(e.value, ValueError), msg
    if case != "global":
        assert e.value.line is not None and f"line {e.value.line}:" in msg
    for part in expected:
        assert part in msg, (part, msg)


def test_error_in_an_included_file_names_that_file(tmp_path):
    (tmp_path / "part.xml").write_text('<mujoco>\n<body name="p">\n<joint type="screw"/>\n</body>\n</mujoco>')
    (tmp_path / "main.xml").write_text('<mujoco><worldbody><include file="part.xml"/></worldbody></mujoco>')
    with pytest.raises(ModelFileError) as e:
        td.Model.from_mjcf(str(tmp_path / "main.xml"))
    assert str(e.value).startswith(f"{tmp_path / 'part.xml'}, line 3:")


def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="MJCF file not found.*nope.xml"):
        td.Model.from_mjcf(str(tmp_path / "nope.xml"))


# ------------------------------------------------------------------ against MuJoCo


@pytest.mark.parametrize("name", sorted(MODELS))
def test_models_agree_with_mujoco(name):
    pytest.importorskip("mujoco")
    from treedyn.tools.peers import MujocoFromFile

    model = load(MODELS[name])
    peer = MujocoFromFile(model, MODELS[name])
    assert peer.nv_peer == model.nv and peer.m.njnt == len(model.joint_names)
    assert_peer_agrees_at_random_states(model, peer, np.random.default_rng(7), what="MuJoCo")


@pytest.mark.parametrize(
    "kind,attrs",
    [
        ("sphere", 'size="0.11"'),
        ("ellipsoid", 'size="0.05 0.08 0.13" quat="0.8 0.3 0.1 0.2"'),
        ("box", 'size="0.05 0.08 0.13" euler="10 20 30" mass="2.5"'),
        ("capsule", 'size="0.04 0.15" density="321"'),
        ("cylinder", 'size="0.04 0.15" xyaxes="0 1 0 -1 0 0"'),
        ("capsule", 'fromto="0.1 0 0 0.2 0.3 -0.1" size="0.03"'),
        ("cylinder", 'fromto="0 0 0.2 0 0 -0.2" size="0.03"'),
        ("box", 'fromto="0 0 0 0.2 0.2 0" size="0.03"'),
        ("ellipsoid", 'fromto="0 0 0 0 0.2 0" size="0.03"'),
    ],
)
def test_geom_inertias_are_mujocos(kind, attrs):
    """The body inertia inferred from one geom equals MuJoCo's compiled (mass, ipos, iquat, inertia)."""
    mujoco = pytest.importorskip("mujoco")
    from treedyn.io._common import quat_to_matrix

    xml = (
        f'<mujoco><worldbody><body><joint/><geom type="{kind}" pos="0.1 -0.2 0.05" {attrs}/>'
        "</body></worldbody></mujoco>"
    )
    if "fromto" in attrs:
        xml = xml.replace('pos="0.1 -0.2 0.05" ', "")
    m = load(xml)
    mj = mujoco.MjModel.from_xml_string(xml)
    R = quat_to_matrix(mj.body_iquat[1])
    mass, c = mj.body_mass[1], mj.body_ipos[1]
    cx = np.array([[0, -c[2], c[1]], [c[2], 0, -c[0]], [-c[1], c[0], 0]])
    I6 = np.block([[R @ np.diag(mj.body_inertia[1]) @ R.T - mass * cx @ cx, mass * cx], [-mass * cx, mass * np.eye(3)]])
    # MuJoCo's principal axes and moments, turned back: 3x3 products of the geom's inertia
    assert_within_rounding(np.asarray(m._cpp.spatial_inertia(1)), I6, I6, 3, what=f"{kind} inertia")


def test_joints_and_inertials_inside_frames_agree_with_mujoco():
    """MuJoCo allows <joint> and <inertial> in a <frame>: their pos and axis are in the frame."""
    pytest.importorskip("mujoco")
    from treedyn.tools.peers import MujocoFromFile

    xml = """<mujoco><worldbody>
      <body name="a" pos="0 0 1">
        <frame pos="0 0.1 0.2" euler="0 90 30">
          <joint name="h" axis="1 0 0" pos="0.1 0 0"/>
          <inertial pos="0.1 0.2 0" quat="0.9 0.1 0.2 0" mass="1.3" diaginertia="0.01 0.02 0.025"/>
        </frame>
        <body name="b" pos="0.2 0 0">
          <frame euler="40 0 0"><joint name="s" type="slide" axis="0 1 1"/><joint name="k" pos="0 0 0.1"/>
            <frame pos="0.1 0 0"><geom type="box" size="0.05 0.1 0.02"/></frame></frame>
        </body>
      </body></worldbody></mujoco>"""
    model = load(xml)
    assert model.joint_names == ["h", "s", "k"]
    assert_peer_agrees_at_random_states(model, MujocoFromFile(model, xml), np.random.default_rng(2), what="MuJoCo")


@pytest.mark.parametrize("seq", ["xyz", "XYZ", "zyx", "ZXZ", "yXy"])
def test_euler_sequences_agree_with_mujoco(seq):
    pytest.importorskip("mujoco")
    from treedyn.tools.peers import MujocoFromFile

    xml = ARM.replace('eulerseq="zyx"', f'eulerseq="{seq}"')
    model = load(xml)
    assert_peer_agrees_at_random_states(model, MujocoFromFile(model, xml), np.random.default_rng(1), n=2, what="MuJoCo")


def random_mjcf(n, seed):
    """A random MJCF tree: free or jointed top-level bodies; 0-3 joints per body (hinge, slide,
    ball last, as MuJoCo requires) at random anchors with random axes and refs; every orientation
    form; geoms of every solid type, sizes or fromto, density or mass; <inertial>s; frames;
    welded bodies; default classes; unnamed bodies and joints; degrees or radians."""
    rng = np.random.default_rng(seed)
    radian = bool(seed % 2)
    ang = 1.0 if radian else 180.0 / math.pi
    f = lambda a: " ".join(f"{x:.9g}" for x in np.atleast_1d(a))  # noqa: E731

    def orient():
        k = rng.integers(6)
        return [
            "",
            f' quat="{f(rng.standard_normal(4))}"',
            f' euler="{f(rng.uniform(-1, 1, 3) * ang)}"',
            f' axisangle="{f(rng.standard_normal(3))} {rng.uniform(-3, 3) * ang:.9g}"',
            f' xyaxes="{f(rng.standard_normal(6))}"',
            f' zaxis="{f(rng.standard_normal(3))}"',
        ][k]

    def geom():
        k = rng.integers(6)
        pos = f' pos="{f(rng.uniform(-0.1, 0.1, 3))}"'
        return [
            f'<geom type="sphere" size="{rng.uniform(0.04, 0.1):.4g}"{pos}/>',
            f'<geom type="box" size="{f(rng.uniform(0.04, 0.1, 3))}"{pos}{orient()}/>',
            f'<geom type="capsule" fromto="{f(rng.uniform(-0.2, 0.2, 6))}" size="{rng.uniform(0.03, 0.05):.4g}"/>',
            f'<geom type="cylinder" size="{f(rng.uniform(0.04, 0.1, 2))}" mass="{rng.uniform(0.3, 1):.4g}"{orient()}/>',
            f'<geom type="ellipsoid" size="{f(rng.uniform(0.04, 0.1, 3))}"{pos}{orient()}/>',
            f'<geom class="c1"{pos}{orient()}/>',
        ][k]

    def joints():
        kinds = list(rng.choice(["hinge", "slide", "default", "class"], size=int(rng.integers(0, 3)), replace=False))
        if rng.random() < 0.3:
            kinds.append("ball")
        out = []
        for t in kinds:
            nm = f' name="j{rng.integers(1 << 30)}"' if rng.random() < 0.8 else ""
            pos = f' pos="{f(rng.uniform(-0.1, 0.1, 3))}"'
            out.append(
                {
                    "ball": f'<joint{nm} type="ball"{pos}/>',
                    "default": f'<joint{nm}{pos} ref="{rng.uniform(-1, 1) * ang:.6g}"/>',
                    "class": f'<joint{nm} class="c1" ref="{rng.uniform(-0.3, 0.3):.4g}"/>',
                    "hinge": f'<joint{nm} type="hinge" axis="{f(rng.standard_normal(3))}"{pos} '
                    f'ref="{rng.uniform(-1, 1) * ang:.6g}"/>',
                    "slide": f'<joint{nm} type="slide" axis="{f(rng.standard_normal(3))}" ref="0.1"/>',
                }[t]
            )
        return out

    lines = [
        f'<mujoco model="random{seed}"><compiler angle="{"radian" if radian else "degree"}"/>',
        '<default><joint axis="0 1 0"/><geom density="800"/>'
        '<default class="c1"><joint type="slide" axis="1 0 0"/><geom type="box" size="0.05 0.06 0.07"/>'
        "</default></default>",
        "<worldbody>",
    ]
    depth = 0
    for i in range(n):
        while depth and rng.random() < 0.3:
            lines.append("</body>")
            depth -= 1
        nm = f' name="b{i}"' if rng.random() < 0.9 else ""
        framed = depth and rng.random() < 0.2
        if framed:
            lines.append(f'<frame pos="{f(rng.uniform(-0.2, 0.2, 3))}"{orient()}>')
        lines.append(f'<body{nm} pos="{f(rng.uniform(-0.3, 0.3, 3))}"{orient()}>')
        if depth == 0 and rng.random() < 0.5:
            lines.append("<freejoint/>")
        else:
            lines += joints()
        lines += [geom() for _ in range(rng.integers(1, 3))]
        if rng.random() < 0.2:
            lines.append(
                f'<inertial pos="{f(rng.uniform(-0.1, 0.1, 3))}" mass="{rng.uniform(0.3, 2):.4g}" '
                f'diaginertia="{f(rng.uniform(0.01, 0.02, 3))}"{orient()}/>'
            )
        if framed:  # a leaf body placed through a frame
            lines.append("</body></frame>")
        else:
            depth += 1
    lines += ["</body>"] * depth + ["</worldbody></mujoco>"]
    return "\n".join(lines)


@pytest.mark.parametrize("seed", range(12))
def test_random_mjcf_trees_agree_with_mujoco(seed):
    mujoco = pytest.importorskip("mujoco")
    from treedyn.tools.peers import MujocoFromFile

    xml = random_mjcf(14, seed)
    model = load(xml)
    mj = mujoco.MjModel.from_xml_string(xml)
    assert (mj.nv, mj.njnt) == (model.nv, len(model.joint_names))
    assert_peer_agrees_at_random_states(
        model, MujocoFromFile(model, xml), np.random.default_rng(seed), n=3, what="MuJoCo"
    )


def test_armature_damping_and_stiffness_agree_with_mujoco():
    """The joints' armature (in M), damping and stiffness (in q̈) are read and agree with MuJoCo's
    M and qacc (passive forces on), on bodies MuJoCo treats as 'simple'."""
    pytest.importorskip("mujoco")
    from treedyn.tools.peers import MujocoFromFile

    xml = """<mujoco><worldbody>
      <body name="puck" pos="0 0 1"><joint name="lift" type="slide" armature="1" damping="3"/>
        <joint name="turn" axis="0 1 0" armature="0.5" stiffness="2"/><geom type="box" size=".1 .2 .3"/></body>
      <body name="wheel"><joint name="spin" axis="1 0 0" armature="0.25"/><geom type="cylinder" size=".2 .05"/></body>
    </worldbody></mujoco>"""
    model = td.Model.from_mjcf(xml)
    assert np.array_equal(model.armature, [1.0, 0.5, 0.25])
    assert np.array_equal(model.joint_damping, [3.0, 0, 0]) and np.array_equal(model.joint_stiffness, [0, 2.0, 0])
    peer = MujocoFromFile(model, xml)
    if hasattr(peer.m, "dof_simplenum"):
        assert peer.m.dof_simplenum.any()  # MuJoCo treats these bodies as simple
    assert_peer_agrees_at_random_states(model, peer, np.random.default_rng(3), what="MuJoCo")


def _mujoco_testdata():
    mujoco = pytest.importorskip("mujoco")
    import os

    path = os.path.join(os.path.dirname(mujoco.__file__), "testdata", "model.xml")
    if not os.path.isfile(path):
        pytest.skip("mujoco/testdata/model.xml is not shipped with this MuJoCo")
    return path


def test_mujocos_own_test_model_agrees_with_mujoco():
    """MuJoCo's test model (springs, armature, gravcomp, fluid, tendons, actuators, sensors,
    default classes, fromto boxes and cylinders, several free bodies, a body whose only geom is a
    mesh given by its vertices, a weld equality), whole."""
    from treedyn.tools.peers import MujocoFromFile

    path = _mujoco_testdata()
    assert 'type="mesh" mesh="icosahedron"' in open(path).read()  # the mesh body stays
    with pytest.warns(IgnoredElementWarning) as w:
        model = td.Model.from_mjcf(path)
    msg = str(w[0].message)
    for part in ("gravcomp", "ellipsoid fluid model"):  # (armature, springs, tendons, most actuators are read)
        assert part in msg, part
    assert model.armature.any() and model.joint_stiffness.any() and model.nu > 0
    assert model.nv == 43 and model.n_constraint_rows == 6  # the weld
    assert model.constraint_residual() <= 1e-12  # it holds at qpos0, as MuJoCo defines it
    assert_peer_agrees_at_random_states(model, MujocoFromFile(model, path), np.random.default_rng(11), what="MuJoCo")


# (compiler, joint attributes) -> the limits MuJoCo's compiler gives (mjCJoint::Compile): "auto"
# (the default) limits when range[0] < range[1], hinge ranges in <compiler angle> units, slide in
# metres; an error message part when it refuses the file; None when the joint is not limited
LIMIT_CASES = [
    ("", 'type="hinge" range="-30 60"', (-math.pi / 6, math.pi / 3)),  # degrees by default
    ('angle="radian"', 'type="hinge" range="-0.5 0.6"', (-0.5, 0.6)),
    ("", 'type="slide" range="-0.1 0.2"', (-0.1, 0.2)),  # a length: never converted
    ("", 'type="hinge" range="1 -1"', None),  # auto and range[0] > range[1]: silently unlimited
    ("", 'type="hinge" range="0 0"', None),  # "0 0" is no range
    ("", 'type="hinge" limited="false" range="-10 10"', None),
    ('autolimits="false"', 'type="hinge" limited="true" range="-10 10"', (-math.pi / 18, math.pi / 18)),
    ('autolimits="false"', 'type="hinge"', None),
    ('autolimits="false"', 'type="hinge" range="-10 10"', "has a range but no limited attribute"),
    ("", 'type="hinge" limited="true" range="10 -10"', "range[0] must be smaller than range[1]"),
    ("", 'type="hinge" limited="true"', "range '0 0': range[0] must be smaller"),
    ("", 'type="hinge" limited="yes" range="0 1"', "limited='yes' must be 'true', 'false' or 'auto'"),
    ('autolimits="no"', 'type="hinge"', "autolimits='no'"),
]


@pytest.mark.parametrize("compiler, attrs, expected", LIMIT_CASES)
def test_joint_limits_follow_mujocos_limited_and_autolimits_rules(compiler, attrs, expected):
    xml = (
        f'<mujoco><compiler {compiler}/><worldbody><body><joint name="j" {attrs}/><geom size="0.1"/>'
        "</body></worldbody></mujoco>"
    )
    mujoco = None
    try:
        import mujoco
    except ImportError:
        pass
    if isinstance(expected, str):
        with pytest.raises(ModelFileError, match=re.escape(expected)):
            td.Model.from_mjcf(xml)
        if mujoco is not None:  # MuJoCo refuses it too
            with pytest.raises(ValueError):
                mujoco.MjModel.from_xml_string(xml)
        return
    model = load(xml)
    got = model.joint_limits.get("j")
    if expected is None:
        assert got is None
    else:
        assert_within_rounding(got, expected, 1, 1, what="limits in radians or metres")  # one product by π/180
    if mujoco is not None:
        m = mujoco.MjModel.from_xml_string(xml)
        assert bool(m.jnt_limited[0]) == (got is not None)
        if got is not None:
            assert_within_rounding(got, m.jnt_range[0], 1, 1, what="MuJoCo's jnt_range")


def test_a_ball_joints_range_is_said_not_to_be_modelled():
    xml = '<mujoco><worldbody><body><joint name="b" type="ball" range="0 45"/><geom size="0.1"/></body></worldbody></mujoco>'
    with pytest.warns(IgnoredElementWarning, match="ball joint 'b': its range .* is not modelled"):
        model = td.Model.from_mjcf(xml)
    assert model.joint_limits == {}


def test_geoms_that_only_show_are_visuals_with_their_colours():
    """contype = conaffinity = 0: not a collision geom but a visual (what td.view draws), coloured by
    its rgba or its material's; a mesh as its surface placed as the hull is. A collision geom keeps
    its colour for the viewer too."""
    xml = """<mujoco><asset><material name="blue" rgba="0 0 1 1"/>
      <mesh name="tet" vertex="0 0 0  1 0 0  0 1 0  0 0 1"/></asset>
      <worldbody><body name="b"><joint type="hinge"/><geom size="0.1" mass="1" rgba="0 1 0 1"/>
        <geom type="capsule" fromto="0 0 0 0 0 0.4" size="0.02" contype="0" conaffinity="0" material="blue"/>
        <geom type="mesh" mesh="tet" contype="0" conaffinity="0" rgba="1 0 0 0.5" name="shell" mass="0"/>
      </body></worldbody></mujoco>"""
    model = td.Model.from_mjcf(xml)
    assert len(model.geoms) == 1 and model.geoms[0].rgba == (0.0, 1.0, 0.0, 1.0)  # (a collision geom's colour too)
    rod, shell = model.visuals
    assert rod.body == 1 and rod.shape == td.Capsule(0.02, 0.2) and rod.rgba == (0.0, 0.0, 1.0, 1.0)
    np.testing.assert_allclose(rod.placement.translation, [0, 0, 0.2], atol=1e-15)
    assert shell.name == "shell" and isinstance(shell.shape, td.TriangleMesh) and shell.rgba == (1.0, 0.0, 0.0, 0.5)
    assert shell.shape.faces.shape == (4, 3)


@pytest.mark.parametrize(
    "inner, message",
    [
        ('<joint springdamper="-1 1"/>', "springdamper='-1 1': when given, both must be positive"),
        ('<joint springdamper="1 -1"/>', "springdamper='1 -1'"),
        ('<joint name="j"/>', "tendon 'nope', does not exist"),
    ],
)
def test_what_mujoco_refuses_is_refused(inner, message):
    """Files MuJoCo's compiler refuses are refused here too, naming the element."""
    import mujoco

    act = '<actuator><motor tendon="nope"/></actuator>' if "nope" in message else ""
    xml = f'<mujoco><worldbody><body><geom size="0.1"/>{inner}</body></worldbody>{act}</mujoco>'
    with pytest.raises(ValueError):
        mujoco.MjModel.from_xml_string(xml)
    with pytest.raises(td.ModelFileError, match=message):
        td.load_mjcf(xml)
