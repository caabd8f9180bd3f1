"""URDF loading (python/treedyn/io/urdf.py): structure, inertias, naming, errors, warnings, and
random trees written as URDF against Pinocchio's own parser."""

import warnings

import numpy as np
import pytest
from conftest import assert_agrees_with_peer, assert_below, assert_within_rounding, rounding_bound
from support.urdf import ARM, inertial, joint, link, robot

import treedyn as td
from treedyn.io._common import IgnoredElementWarning, InertiaWarning
from treedyn.io._tree import MassWarning
from treedyn.io._xml import ModelFileError
from treedyn.io.urdf import MissingMeshWarning

# Values by hand and values parsed from the files: a handful of roundings each, so n = 1 in
# assert_within_rounding (δ = 64u ≈ 7e-15 relative to the magnitudes summed).


# ------------------------------------------------------------------ structure and naming


def test_bodies_joints_and_coordinates_follow_the_tree_depth_first():
    m = td.Model.from_urdf(ARM)
    # the root link is the world; the fixed joint merged "tool" into l1; depth-first, file order
    assert m.body_names == ["world", "l1", "l2", "l3", "wheel"]
    assert list(m.parents) == [-1, 0, 1, 2, 1]
    assert m.joint_names == ["j1", "j2", "j3", "jw"]
    assert (m.nq, m.nv) == (4, 4)  # a continuous joint has one angle coordinate
    assert [m.q_index(n) for n in m.joint_names] == [0, 1, 2, 3]
    assert [m.v_index(n) for n in m.joint_names] == [0, 1, 2, 3]
    assert isinstance(m.joints[1], td.Revolute) and isinstance(m.joints[3], td.Prismatic)
    # axes are normalised, any direction is allowed
    assert_within_rounding(m.joints[1].axis, [0, 0, 1], 1, 1, what="axis 1")
    assert_within_rounding(m.joints[2].axis, np.array([1, 1, 0]) / np.sqrt(2), 1, 1, what="axis 2, normalised")
    assert m.joint_limits == {"j1": (-1.5, 2.0), "j3": (0.0, 0.1)}
    assert m.source == "<URDF string>"


def test_merged_links_stay_findable_in_frames():
    m = td.Model.from_urdf(ARM)
    assert m.frames["base"][0] == "world" and m.frames["l1"][0] == "l1"
    body, X = m.frames["tool"]
    assert body == "l1"
    assert_within_rounding(X.translation, [0.2, 0, 0], 0.2, 1, what="translation")
    assert_within_rounding(X.rotation, td.Transform.from_rpy((0.3, 0, 0)).rotation, 1, 1, what="rotation")
    # the child of the merged link hangs from l1 with the composed placement
    E, r = m.core.placement(m.body_index("l2"))
    assert_within_rounding(r, [0.2, 0, 0] + X.rotation @ [0, 0, 0.1], 0.3, 1, what="composed placement")


def test_fixed_joint_folds_inertia_at_the_right_pose():
    """A revolute joint about z carrying a point mass at 0.3 m and, through a rotated fixed joint, a
    point mass at 0.5 m plus a rod whose inertia is about the rotated axes: M is their sum."""
    urdf = robot(
        link("base"),
        link("a", inertial(2.0, (0.3, 0, 0), diag=(0, 0, 0))),
        link("b", inertial(1.5, (0, 0.2, 0), (0, 0, 0), diag=(0.02, 0.0, 0.02))),
        joint("j", "revolute", "base", "a", axis=(0, 0, 1)),
        # b's frame: 0.5 m along x of a, turned by 90° about x, so b's y axis is a's z axis
        joint("weld", "fixed", "a", "b", (0.5, 0, 0), (np.pi / 2, 0, 0)),
    )
    m = td.Model.from_urdf(urdf)
    assert m.nv == 1 and m.body_names == ["world", "a"]
    # b's com: (0.5, 0, 0) + Rx(90°)(0, 0.2, 0) = (0.5, 0, 0.2): distance to the z axis 0.5;
    # its rod inertia (0.02 about b's x and z) is 0.02 about a's x and y, 0 about a's z
    expected = 2.0 * 0.3**2 + 1.5 * 0.5**2 + 0.0
    for q in (0.0, 1.0, -2.5):
        assert_within_rounding(td.mass_matrix(m, np.array([q]))[0, 0], expected, expected, 1, what="merged M")


def test_inertial_frame_rotation_and_offset():
    rpy, xyz, diag = (0.3, -0.2, 0.9), (0.1, -0.05, 0.2), (0.01, 0.02, 0.025)
    m = td.Model.from_urdf(
        robot(
            link("base"), link("a", inertial(1.7, xyz, rpy, diag)), joint("j", "revolute", "base", "a", axis=(0, 0, 1))
        )
    )
    R = td.Transform.from_rpy(rpy).rotation
    Ic = R @ np.diag(diag) @ R.T
    c = np.array(xyz)
    cx = np.array([[0, -c[2], c[1]], [c[2], 0, -c[0]], [-c[1], c[0], 0]])
    I6 = np.asarray(m.core.spatial_inertia(1))
    assert np.array_equal(I6[3:, 3:], 1.7 * np.eye(3))
    # about the body origin: 3-term products of the rotated inertia and the offset
    assert_within_rounding(
        I6[:3, :3], Ic - 1.7 * cx @ cx, np.abs(Ic) + 1.7 * np.abs(cx) @ np.abs(cx), 3, what="rotational block"
    )
    assert_within_rounding(I6[:3, 3:], 1.7 * cx, 1.7 * np.abs(cx), 1, what="coupling block")


def test_path_and_string_load_the_same(tmp_path):
    p = tmp_path / "arm.urdf"
    p.write_text(ARM)
    a, b = td.Model.from_urdf(str(p)), td.Model.from_urdf(ARM)
    c = td.Model.from_urdf(p)  # os.PathLike
    q = np.array([0.3, -1.0, 0.05, 2.0])
    np.testing.assert_array_equal(td.mass_matrix(a, q), td.mass_matrix(b, q))
    np.testing.assert_array_equal(td.mass_matrix(c, q), td.mass_matrix(b, q))
    assert a.source == str(p)


def test_floating_base_puts_a_free_joint_at_the_root():
    m = td.Model.from_urdf(ARM, floating_base=True)
    assert m.joint_names[0] == "root_joint" and isinstance(m.joints[1], td.Free)
    assert m.body_names[:2] == ["world", "base"]
    assert (m.nq, m.nv) == (11, 10)
    assert m.q_index("j1") == 7 and m.v_index("j1") == 6


def test_floating_base_on_a_root_link_named_world():
    urdf = robot(
        link("world"),
        link("base", inertial(3.0)),
        link("a", inertial(1.0, (0.1, 0, 0))),
        joint("w", "fixed", "world", "base", (0, 0, 0.5)),
        joint("j", "revolute", "base", "a", axis=(0, 0, 1)),
    )
    fixed = td.Model.from_urdf(urdf)
    assert fixed.body_names == ["world", "a"] and fixed.nv == 1
    m = td.Model.from_urdf(urdf, floating_base=True)
    assert m.body_names == ["world", "floating_base", "a"] and m.nv == 7
    assert m.frames["world"][0] == "floating_base" and m.frames["base"][0] == "floating_base"


def test_floating_joint_in_the_file():
    urdf = robot(
        link("world"),
        link("base", inertial(3.0)),
        link("a", inertial(1.0, (0.1, 0, 0))),
        joint("float", "floating", "world", "base", (0, 0, 1)),
        joint("j", "revolute", "base", "a", axis=(0, 1, 0)),
    )
    m = td.Model.from_urdf(urdf)
    assert isinstance(m.joints[1], td.Free) and m.joint_names == ["float", "j"]
    assert (m.nq, m.nv) == (8, 7)


def test_planar_joint_is_two_prismatic_and_one_revolute_joint():
    urdf = robot(
        link("world"),
        link("puck", inertial(2.0, (0.1, 0, 0))),
        joint("slide", "planar", "world", "puck", (0, 0, 0.2), axis=(0, 0, 1)),
    )
    m = td.Model.from_urdf(urdf)
    assert m.joint_names == ["slide", "slide#y", "slide#theta"]
    assert m.body_names == ["world", "puck#x", "puck#y", "puck"]
    assert m.q_index("slide") == 0 and m.nv == 3
    for k, axis in ((1, [1, 0, 0]), (2, [0, 1, 0]), (3, [0, 0, 1])):
        assert_within_rounding(m.joints[k].axis, axis, 1, 1, what=f"axis {k}")
    # x, y translate the puck, θ turns it: M = [[m, 0, -m c sθ], [0, m, m c cθ], [., ., I + m c²]]
    th = 0.7
    M = td.mass_matrix(m, np.array([0.3, -0.1, th]))
    c, I = 0.1, 0.025
    expected = np.array(
        [
            [2, 0, -2 * c * np.sin(th)],
            [0, 2, 2 * c * np.cos(th)],
            [-2 * c * np.sin(th), 2 * c * np.cos(th), I + 2 * c * c],
        ]
    )
    assert_within_rounding(M, expected, 2 * (1 + c) ** 2 + I, 1, what="planar M")


def test_planar_joint_about_another_axis_moves_in_the_plane_normal_to_it():
    urdf = robot(link("world"), link("p", inertial(1.0)), joint("pl", "planar", "world", "p", axis=(1, 0, 0)))
    m = td.Model.from_urdf(urdf)
    a1, a2, n = m.joints[1].axis, m.joints[2].axis, m.joints[3].axis
    assert_within_rounding(n, [1, 0, 0], 1, 1, what="normal")
    for a, b in ((a1, n), (a2, n), (a1, a2)):  # orthonormal unit vectors: 3-term dot products
        assert_within_rounding(a @ b, 0, 1, 3, what="orthogonal axes")
    assert_within_rounding(np.cross(a1, a2), n, 1, 2, what="a1 × a2 = n")


# ------------------------------------------------------------------ warnings


def test_visual_collision_and_ros_extensions_are_silent_unknown_ones_warn_once():
    urdf = robot(
        link("base", '<visual><geometry><box size="1 1 1"/></geometry></visual>'),
        link("a", inertial(1.0), '<collision><geometry><sphere radius="0.1"/></geometry></collision>'),
        joint("j", "revolute", "base", "a", axis=(0, 0, 1)),
        '<transmission name="t"><type>x</type></transmission>',
        '<gazebo reference="a"/>',
        "<gazebo/>",
        '<material name="red"/>',
        "<sensor_thing/>",
        "<sensor_thing/>",
    )
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        td.Model.from_urdf(urdf)
    msgs = [str(x.message) for x in w if issubclass(x.category, IgnoredElementWarning)]
    assert len(msgs) == 1
    assert "<sensor_thing> ×2" in msgs[0] and "<URDF string>" in msgs[0]
    for quiet in ("gazebo", "transmission", "visual", "collision", "material"):
        assert quiet not in msgs[0], quiet


def test_physically_inconsistent_inertia_is_kept_with_a_warning():
    # diag(0, 0, 3e-6) violates the triangle inequality (ANYmal's base link has this one)
    urdf = robot(
        link("base"),
        link("a", inertial(1.0, (0.1, 0, 0), diag=(0.0, 0.0, 3e-6))),
        joint("j", "revolute", "base", "a", axis=(0, 0, 1)),
    )
    with pytest.warns(InertiaWarning, match="link 'a'"):
        m = td.Model.from_urdf(urdf)
    assert_within_rounding(td.mass_matrix(m, np.zeros(1))[0, 0], 0.01 + 3e-6, 0.01 + 3e-6, 1, what="kept inertia")


def test_a_joint_that_moves_no_mass_warns():
    urdf = robot(
        link("base"),
        link("a", inertial(1.0)),
        link("tip"),
        joint("j", "revolute", "base", "a", axis=(0, 0, 1)),
        joint("jt", "revolute", "a", "tip", axis=(0, 0, 1)),
    )
    with pytest.warns(MassWarning, match="'jt'"):
        td.Model.from_urdf(urdf)


def test_package_dirs_missing_directory_is_an_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="package directory not found.*no_such_dir"):
        td.Model.from_urdf(ARM, package_dirs=[str(tmp_path / "no_such_dir")])


def test_package_dirs_missing_mesh_warns_found_mesh_does_not(tmp_path):
    (tmp_path / "pkg" / "meshes").mkdir(parents=True)
    (tmp_path / "pkg" / "meshes" / "a.stl").write_text("solid a\nendsolid a\n")
    mesh = '<visual><geometry><mesh filename="package://pkg/meshes/{}.stl"/></geometry></visual>'
    make = lambda name: robot(
        link("base"),
        link("a", inertial(1.0), mesh.format(name)),  # noqa: E731
        joint("j", "revolute", "base", "a", axis=(0, 0, 1)),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        td.Model.from_urdf(make("a"), package_dirs=str(tmp_path))
        td.Model.from_urdf(make("missing"))  # no package_dirs: meshes are not looked at
    with pytest.warns(MissingMeshWarning, match="package://pkg/meshes/missing.stl"):
        m = td.Model.from_urdf(make("missing"), package_dirs=[tmp_path])
    assert m.nv == 1


# ------------------------------------------------------------------ errors

ERRORS = {
    "malformed": ('<robot name="r">\n<link name="a">\n</robot>\n', ["malformed XML", "mismatched tag", "line 3"]),
    "not-a-robot": ("<mujoco/>", ["root element is <mujoco>", "<robot>"]),
    "no-links": ('<robot name="r"></robot>', ["no <link>"]),
    "two-parents": (
        robot(
            link("a"),
            link("b", inertial(1)),
            link("c", inertial(1)),
            joint("j1", "revolute", "a", "b", axis=(0, 0, 1)),
            joint("j2", "revolute", "c", "b", axis=(0, 0, 1)),
            joint("j3", "revolute", "b", "c", axis=(0, 0, 1)),
        ),
        ["link 'b' is the child of two joints", "'j1'", "'j2'", "loop"],
    ),
    "cycle": (
        robot(
            link("a", inertial(1)),
            link("b", inertial(1)),
            joint("j1", "revolute", "a", "b", axis=(0, 0, 1)),
            joint("j2", "revolute", "b", "a", axis=(0, 0, 1)),
        ),
        ["no root link", "loop"],
    ),
    "detached-cycle": (
        robot(
            link("r"),
            link("a", inertial(1)),
            link("b", inertial(1)),
            joint("j1", "revolute", "a", "b", axis=(0, 0, 1)),
            joint("j2", "revolute", "b", "a", axis=(0, 0, 1)),
        ),
        ["not connected to the root link 'r'", "loop"],
    ),
    "two-roots": (robot(link("a"), link("b")), ["2 links are no joint's child", "'a'", "'b'"]),
    "mimic": (
        robot(
            link("a"),
            link("b", inertial(1)),
            link("c", inertial(1)),
            joint("j1", "revolute", "a", "b", axis=(0, 0, 1)),
            joint("j2", "revolute", "a", "c", axis=(0, 0, 1), extra='<mimic joint="nope"/>'),
        ),
        ["joint 'j2' <mimic>", "'nope'", "mimic='independent'"],
    ),
    "unknown-type": (
        robot(link("a"), link("b", inertial(1)), joint("j", "screw", "a", "b")),
        ["joint 'j' has type 'screw'", "revolute, continuous"],
    ),
    "undefined-link": (
        robot(link("a"), joint("j", "revolute", "a", "ghost")),
        ["joint 'j'", "child link 'ghost' is not defined"],
    ),
    "duplicate-link": (robot(link("a"), link("a")), ["two links are named 'a'"]),
    "duplicate-joint": (
        robot(
            link("a"),
            link("b", inertial(1)),
            link("c", inertial(1)),
            joint("j", "revolute", "a", "b"),
            joint("j", "revolute", "a", "c"),
        ),
        ["two joints are named 'j'"],
    ),
    "xacro": (
        '<robot xmlns:xacro="http://www.ros.org/wiki/xacro" name="r">\n<xacro:macro name="m"/>\n</robot>',
        ["xacro", "expand"],
    ),
    "no-mass": (
        robot(
            link("a"),
            link("b", "<inertial><inertia ixx='1' ixy='0' ixz='0' iyy='1' iyz='0' izz='1'/></inertial>"),
            joint("j", "revolute", "a", "b"),
        ),
        ["link 'b' <inertial> has no <mass>"],
    ),
    "bad-number": (
        robot(link("a"), link("b", inertial("abc")), joint("j", "revolute", "a", "b")),
        ["value='abc' is not a list of numbers"],
    ),
    "bad-origin": (
        robot(
            link("a"),
            link("b", inertial(1)),
            '<joint name="j" type="revolute"><parent link="a"/><child link="b"/><origin xyz="1 2"/></joint>',
        ),
        ["joint 'j'", "xyz='1 2' must have 3 numbers"],
    ),
    "negative-mass": (
        robot(link("a"), link("b", inertial(-1.0)), joint("j", "revolute", "a", "b")),
        ["link 'b'", "mass must be finite and >= 0"],
    ),
    "zero-axis": (
        robot(link("a"), link("b", inertial(1)), joint("j", "revolute", "a", "b", axis=(0, 0, 0))),
        ["joint 'j' has a zero <axis"],
    ),
    "nested-float": (
        robot(
            link("a"),
            link("b", inertial(1)),
            link("c", inertial(1)),
            joint("j", "revolute", "a", "b"),
            joint("f", "floating", "b", "c"),
        ),
        ["'f' is a free (floating) joint between 'b' and 'c'", "only between the world"],
    ),
    "world-inside": (
        robot(link("a"), link("world", inertial(1)), joint("j", "revolute", "a", "world")),
        ["named 'world'"],
    ),
    "no-parent": (
        robot(link("a"), link("b"), '<joint name="j" type="fixed"><child link="b"/></joint>'),
        ["joint 'j' has no <parent link=...>"],
    ),
    "limit-reversed": (
        robot(
            link("a"), link("b", inertial(1)), joint("j", "revolute", "a", "b", extra='<limit lower="1" upper="-1"/>')
        ),
        ["joint 'j': <limit lower='1' upper='-1'> has lower > upper"],
    ),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors_name_the_problem_the_file_and_the_line(tmp_path, case):
    text, expected = ERRORS[case]
    path = tmp_path / f"{case}.urdf"
    path.write_text(text)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ModelFileError) as e:
            td.Model.from_urdf(str(path))
    msg = str(e.value)
    assert msg.startswith(str(path)), msg
    assert e.value.source == str(path) and isinstance(e.value, ValueError)
    for part in expected:
        assert part in msg, (part, msg)
    # the same text as a string names "<URDF string>"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ModelFileError, match="<URDF string>"):
            td.Model.from_urdf(text)


def test_error_lines_point_at_the_element():
    text = robot(
        link("a"),
        link("b", inertial(1)),
        link("c", inertial(1)),
        joint("j1", "revolute", "a", "b"),
        joint("j2", "revolute", "a", "c", extra='<mimic joint="j1"/>'),
    )
    line = next(i for i, l in enumerate(text.splitlines(), 1) if "j2" in l)
    with pytest.raises(ModelFileError) as e:
        td.Model.from_urdf(text, mimic="error")
    assert e.value.line == line and f"line {line}:" in str(e.value)


def test_missing_file_and_bad_arguments(tmp_path):
    missing = str(tmp_path / "nope.urdf")
    with pytest.raises(FileNotFoundError, match="URDF file not found.*nope.urdf"):
        td.Model.from_urdf(missing)
    with pytest.raises(IsADirectoryError, match="directory"):
        td.Model.from_urdf(str(tmp_path))
    with pytest.raises(ValueError, match="empty"):
        td.Model.from_urdf("")
    with pytest.raises(TypeError, match="file path or an XML string"):
        td.Model.from_urdf(42)
    with pytest.raises(ValueError, match="mimic must be"):
        td.Model.from_urdf(ARM, mimic="maybe")


def mimic_robot(kind="revolute", multiplier=None, offset=None):
    attrs = "".join(f' {k}="{v}"' for k, v in (("multiplier", multiplier), ("offset", offset)) if v is not None)
    return robot(
        link("a"),
        link("b", inertial(1, (0.1, 0, 0))),
        link("c", inertial(2, (0, 0.2, 0))),
        link("d", inertial(0.5)),
        joint("j1", kind, "a", "b", axis=(0, 0, 1)),
        joint("j2", kind, "a", "c", (0.3, 0, 0), axis=(0, 1, 1), extra=f'<mimic joint="j1"{attrs}/>'),
        joint("j3", "fixed", "c", "d", (0, 0, 0.1), extra='<mimic joint="j1"/>'),
    )


@pytest.mark.parametrize("kind", ["revolute", "prismatic", "continuous"])
def test_mimic_couples_the_joint_to_its_leader_by_default(kind):
    m = td.Model.from_urdf(mimic_robot(kind, multiplier=-1.5, offset=0.25))
    assert m.joint_names == ["j1", "j2"] and m.nv == 2  # the fixed joint's tag had nothing to couple
    (c,) = m.couplings
    assert c.follower == ((2, 1.0),) and c.leader == ((1, 1.0),) and c.polycoef == (0.25, -1.5)
    q = np.zeros(m.nq)
    q[m.q_index("j1")], q[m.q_index("j2")] = 0.4, 0.25 - 1.5 * 0.4
    assert m.constraint_residual(q) == 0.0
    q[m.q_index("j2")] += 1e-3
    assert m.constraint_residual(q) == pytest.approx(1e-3, rel=1e-12)
    # defaults: multiplier 1, offset 0
    assert td.Model.from_urdf(mimic_robot(kind)).couplings[0].polycoef == (0.0, 1.0)


def test_a_mimic_joint_tracks_its_leader_in_simulation():
    """A linear coupling is a linear invariant of q and v: the Runge–Kutta methods keep it to
    rounding (each stage's G q̈ = 0 exactly), the Baumgarte term only corrects rounding."""
    m = td.Model.from_urdf(mimic_robot("revolute", multiplier=-1.5, offset=0.25))
    m.gravity = (0, -9.81, 0)
    q0 = np.array([0.0, 0.25])
    r = td.simulate(m, "drumwright", q0, np.zeros(2), 5.0, tau=np.array([0.3, 0.0]))
    err = np.abs(r.q[:, 1] - (0.25 - 1.5 * r.q[:, 0])).max()
    assert err < 1e-6 and np.ptp(r.q[:, 0]) > 0.1  # it moved, and the follower followed
    assert_below(err, 1e3 * rounding_bound(2) * (1 + np.abs(r.q).max()), "mimic tracking (rounding)")


def test_mimic_error_refuses():
    with pytest.raises(ModelFileError, match="j2.*<mimic joint='j1'>.*mimic='couple'"):
        td.Model.from_urdf(mimic_robot(), mimic="error")


def test_mimic_independent_makes_an_ordinary_joint():
    text, _ = ERRORS["mimic"]
    m = td.Model.from_urdf(text, mimic="independent")
    assert m.joint_names == ["j1", "j2"] and m.nv == 2


def test_deep_chain_does_not_hit_the_recursion_limit():
    n = 3000
    parts = [link("l0")] + [link(f"l{i}", inertial(1.0, (0, 0, 0.05))) for i in range(1, n + 1)]
    parts += [joint(f"j{i}", "revolute", f"l{i - 1}", f"l{i}", (0, 0, 0.1), axis=(0, 1, 0)) for i in range(1, n + 1)]
    m = td.Model.from_urdf(robot(*parts))
    assert m.nv == n and m.is_chain


# ------------------------------------------------------------------ against Pinocchio's own parser


def random_urdf(n, seed, *, fixed=0.2, prismatic=0.15, continuous=0.15, floating_joint=False):
    """A random tree of n links written as URDF: random origins (xyz, rpy), axes in any direction,
    inertias with rotated inertial frames, fixed joints (merged), continuous and prismatic joints,
    links without <inertial>, children listed in a shuffled order."""
    rng = np.random.default_rng(seed)
    f = lambda a: " ".join(f"{x:.9g}" for x in a)  # noqa: E731
    parents = [None] + [
        int(rng.integers(max(0, i - 4), i)) if rng.random() < 0.7 else int(rng.integers(0, i)) for i in range(1, n + 1)
    ]
    has_child = set(parents[1:])
    links, joints = [link("root", inertial(2.0))], []
    for i in range(1, n + 1):
        p = parents[i]
        if i in has_child and rng.random() < 0.2:
            links.append(link(f"link{i}"))  # no inertial (not on a leaf: that would be singular)
        else:
            d = np.sort(rng.uniform(0.01, 0.05, 3))
            d[2] = min(d[2], d[0] + d[1])  # triangle inequality
            links.append(
                link(
                    f"link{i}",
                    inertial(
                        rng.uniform(0.5, 3.0),
                        rng.uniform(-0.1, 0.1, 3),
                        rng.uniform(-np.pi, np.pi, 3),
                        rng.permutation(d),
                    ),
                )
            )
        u = rng.random()
        kind = (
            "fixed"
            if u < fixed
            else "prismatic"
            if u < fixed + prismatic
            else "continuous"
            if u < fixed + prismatic + continuous
            else "revolute"
        )
        pname = "root" if p == 0 else f"link{p}"
        if floating_joint and i == 1:
            kind, pname = "floating", "root"
        joints.append(
            f'<joint name="joint{i}" type="{kind}"><parent link="{pname}"/><child link="link{i}"/>'
            f'<origin xyz="{f(rng.uniform(-0.3, 0.3, 3))}" rpy="{f(rng.uniform(-np.pi, np.pi, 3))}"/>'
            f'<axis xyz="{f(rng.standard_normal(3))}"/>'
            + ('<limit lower="-1" upper="1" effort="1" velocity="1"/>' if kind in ("revolute", "prismatic") else "")
            + "</joint>"
        )
    order = rng.permutation(len(joints))
    return robot(*links, *[joints[k] for k in order], name=f"random{seed}")


def _agree(model, peer, rng, n=4):
    """M, b and q̈ against the peer's on n random states, within rounding (assert_agrees_with_peer)."""
    for _ in range(n):
        q = td.random_configuration(model, rng)
        v, tau = rng.standard_normal(model.nv), rng.standard_normal(model.nv)
        assert_agrees_with_peer(
            model,
            q,
            v,
            tau,
            peer.mass_matrix(q),
            peer.bias_forces(q, v),
            peer.forward_dynamics(q, v, tau),
            what="Pinocchio",
        )


@pytest.mark.parametrize("floating_base", [False, True])
@pytest.mark.parametrize("seed", range(8))
def test_random_urdf_trees_agree_with_pinocchio(seed, floating_base):
    pytest.importorskip("pinocchio")
    from treedyn.tools.peers import PinocchioFromFile

    text = random_urdf(25, seed)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a valid tree: no warning at all
        model = td.Model.from_urdf(text, floating_base=floating_base)
    peer = PinocchioFromFile(model, text, floating_base)
    assert peer.nv_peer == model.nv
    _agree(model, peer, np.random.default_rng(seed))


def test_random_urdf_with_floating_joint_in_file_agrees_with_pinocchio():
    pytest.importorskip("pinocchio")
    from treedyn.tools.peers import PinocchioFromFile

    text = random_urdf(15, 3, floating_joint=True)
    model = td.Model.from_urdf(text)
    assert isinstance(model.joints[model.body_index("link1")], td.Free)
    _agree(model, PinocchioFromFile(model, text), np.random.default_rng(0))


def test_planar_joint_agrees_with_pinocchio_planar():
    pytest.importorskip("pinocchio")
    from treedyn.tools.peers import PinocchioFromFile

    text = robot(
        link("world"),
        link("puck", inertial(2.0, (0.1, 0.05, 0.02), (0.2, 0.1, 0.3))),
        link("arm", inertial(0.7, (0.2, 0, 0))),
        joint("slide", "planar", "world", "puck", (0.1, 0, 0.2), (0.1, 0.2, 0.3), axis=(0, 0, 1)),
        joint(
            "hinge",
            "revolute",
            "puck",
            "arm",
            (0.1, 0, 0),
            axis=(0, 1, 1),
            extra='<limit lower="-1" upper="1" effort="1" velocity="1"/>',
        ),
    )
    model = td.Model.from_urdf(text)
    peer = PinocchioFromFile(model, text)
    assert peer.pm.joints[peer.pm.getJointId("slide")].shortname() == "JointModelPlanar"
    _agree(model, peer, np.random.default_rng(5))


def test_joint_dynamics_are_damping_and_dry_friction():
    """<dynamics damping friction>: the joint's viscous damping (in every solver's q̈: −d q̇) and
    its dry friction (the contact step's bounded impulse)."""
    xml = """<robot name="r">
      <link name="base"/>
      <link name="arm"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
      <joint name="j" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 0 1"/>
        <limit lower="-1" upper="1" effort="1" velocity="1"/><dynamics damping="0.7" friction="0.3"/></joint>
    </robot>"""
    m = td.Model.from_urdf(xml)
    assert m.joint_damping.tolist() == [0.7] and m.joint_frictionloss.tolist() == [0.3]
    qdd = td.make_solver("aba", m).forward_dynamics([0.0], [2.0], [0.0])
    assert qdd[0] == pytest.approx(-0.7 * 2.0 / 0.1)  # a vertical axis: no gravity torque
    bad = xml.replace('damping="0.7"', 'damping="-1"')
    with pytest.raises(td.ModelFileError, match="dynamics"):
        td.Model.from_urdf(bad)


# ------------------------------------------------------------------ visuals


def test_visuals_are_read_with_their_colours_and_follow_merged_links(tmp_path):
    """<visual>: primitives, a mesh as a MeshFile (scale kept; read only when drawn; not found: left
    out), the colour inline or from the robot's <material> of that name, and a link merged by a
    fixed joint keeping its visual at its place in the body."""
    (tmp_path / "part.stl").write_text("solid s\nendsolid s\n")
    urdf = robot(
        '<material name="red"><color rgba="1 0 0 1"/></material>',
        link(
            "base",
            '<visual><origin xyz="0 0 0.5"/><geometry><box size="0.2 0.4 0.6"/></geometry>'
            '<material name="red"/></visual>',
        ),
        link(
            "a",
            inertial(1.0),
            '<visual name="shell"><geometry><mesh filename="part.stl" scale="2 2 2"/></geometry>'
            '<material name="x"><color rgba="0 0.5 1 0.5"/></material></visual>'
            '<visual><geometry><mesh filename="missing.stl"/></geometry></visual>',
        ),
        '<material name="o\'brien"><color rgba="0 1 0 1"/></material>',
        link("tip", '<visual><geometry><sphere radius="0.05"/></geometry><material name="o\'brien"/></visual>'),
        joint("j", "revolute", "base", "a", axis=(0, 0, 1)),
        joint("weld", "fixed", "a", "tip", xyz=(0, 0, 0.3)),
    )
    path = tmp_path / "r.urdf"
    path.write_text(urdf)
    model = td.Model.from_urdf(str(path))
    box, shell, ball = model.visuals
    assert box.body == 0 and box.shape == td.Box((0.1, 0.2, 0.3)) and box.rgba == (1.0, 0.0, 0.0, 1.0)
    np.testing.assert_array_equal(box.placement.translation, [0, 0, 0.5])
    assert shell.name == "a/shell" and shell.body == 1 and shell.rgba == (0.0, 0.5, 1.0, 0.5)
    assert shell.shape == td.MeshFile(str(tmp_path / "part.stl"), (2.0, 2.0, 2.0))
    assert ball.body == 1 and ball.shape == td.Sphere(0.05) and ball.rgba == (0.0, 1.0, 0.0, 1.0)
    np.testing.assert_array_equal(ball.placement.translation, [0, 0, 0.3])  # (the merged link's place)
