"""model/constraint_checks.py: constraints checked when they are added (issue 31, item 4) — the
campaign's reproducers (a joint coupled to itself, q₁ = q₀ and q₁ = q₀ + 1, two welds of one body
to different poses, an anchor at 1e300, the same in URDF and MJCF files) refused with a ValueError
naming the constraints, a duplicate kept with a warning, consistent constraints kept silently; and
a fuzz of constraint additions: every refusal a ValueError/TypeError, every accepted model
projectable onto its constraints with finite dynamics there."""

import re
import warnings

import numpy as np
import pytest
from hypothesis import given, note, settings
from hypothesis import strategies as st
from support.models import closed_tree
from support.redmax import four_bar

import treedyn as td
from treedyn.constraints import RedundantConstraintWarning, project_positions
from treedyn.model.constraint_checks import ANCHOR_REACH
from treedyn.scenes import chain


def arm(n=3):
    """chain(n): links of 0.1 m along x, hinges alternating about z and y."""
    return chain(n)


def test_a_joint_coupled_to_itself_is_refused_with_or_without_an_offset():
    m = arm()
    for polycoef in ((0.5, 1.0), (0.0, 1.0), (0.0, 2.0)):
        with pytest.raises(ValueError, match="joint 'link1' is coupled to itself"):
            m.add_coupling("link1", "link1", polycoef=polycoef)
    with pytest.raises(ValueError, match="combination .* is coupled to itself"):
        m.add_coupling({"link1": 1.0, "link2": 2.0}, {2: 2.0, "link1": 1.0})
    assert m.couplings == [] and m.n_constraint_rows == 0  # nothing was added


def test_contradictory_couplings_are_refused_naming_both():
    m = arm()
    m.add_coupling("link2", "link1")
    with pytest.raises(ValueError, match=r"coupling 1 \('link2' following 'link1', polycoef \(1, 1\)\) conflicts with "
                       r"coupling 0 \('link2' following 'link1', polycoef \(0, 1\)\)"):  # fmt: skip
        m.add_coupling("link2", "link1", polycoef=(1.0, 1.0))
    assert len(m.couplings) == 1 and m.n_constraint_rows == 1  # the model is as before the refused call
    # through a third: q2 = q1, q3 = q2, then q3 = q1 + 1 conflicts with both
    m = arm()
    m.add_coupling("link2", "link1")
    m.add_coupling("link3", "link2")
    with pytest.raises(ValueError, match="coupling 2 .* conflicts with coupling 0 .*, coupling 1 "):
        m.add_coupling("link3", "link1", polycoef=(1.0, 1.0))


def test_two_welds_of_one_body_to_different_poses_are_refused():
    m = arm()
    m.add_loop_closure("link3", None, td.Fixed())
    other = td.Transform(translation=(0.0, 0.0, 1.0))
    with pytest.raises(
        ValueError, match=r"loop closure 1 \(weld of 'link3' to 'world'\) conflicts with loop closure 0"
    ):
        m.add_loop_closure("link3", None, td.Fixed(), placement_b=other)
    assert len(m.loop_closures) == 1


def test_a_duplicate_is_kept_with_a_warning_naming_both():
    m = arm()
    m.add_loop_closure("link3", None, td.Fixed())
    with pytest.warns(RedundantConstraintWarning, match=r"loop closure 1 .* adds nothing to loop closure 0"):
        m.add_loop_closure("link3", None, td.Fixed())
    with pytest.raises(ValueError, match="coupling 0 .* conflicts with loop closure 0 .*, loop closure 1"):
        m.add_coupling("link2", "link1", polycoef=(0.3, 2.0))  # the welds hold every joint at 0
    m = arm()
    m.add_coupling("link2", "link1", polycoef=(0.3, 2.0))
    with pytest.warns(RedundantConstraintWarning, match="coupling 1 .* adds nothing to coupling 0"):
        m.add_coupling("link2", "link1", polycoef=(0.3, 2.0))
    assert m.n_constraint_rows == 2
    s = td.make_solver("drumwright", m)
    q = project_positions(s, td.neutral(m))  # the rows hold together, the redundant one dropped by rank
    assert m.constraint_residual(q) <= 1e-10
    assert np.all(np.isfinite(td.constrained_forward_dynamics(s, q, np.zeros(m.nv), np.ones(m.nv))))


def test_consistent_constraints_pass_silently():
    """Rows dependent only where the constraints hold (a coupling keeping a parallelogram four-bar on
    its branch), a mimic offset that does not hold at q = 0 (linear: one Gauss–Newton step), a
    consistent cycle through three couplings that is not a duplicate of any one."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        four_bar("coupling")
        m = arm(4)
        m.add_coupling("link2", "link1", polycoef=(0.5, 1.0))
        m.add_coupling("link3", "link2", polycoef=(-0.2, 1.0))
        m.add_coupling("link4", "link1", polycoef=(0.1, 1.0, 0.3))  # quadratic: shares link1 only
        for seed in (1, 2):
            closed_tree(seed)  # a ball closure, a weld and a quadratic coupling on a random tree
    assert m.n_constraint_rows == 3


def test_a_closure_out_of_reach_is_refused():
    m = arm(2)  # link2's point 1 m out along it stays within 1.1 m of the base: 3 m is out of reach
    far = td.Transform(translation=(3.0, 0.0, 0.0))
    with pytest.raises(ValueError, match=r"loop closure 0 \(ball of 'link2' to 'world'\) cannot be met"):
        m.add_loop_closure(
            "link2", None, td.Spherical(), placement_a=td.Transform(translation=(1, 0, 0)), placement_b=far
        )
    assert m.loop_closures == []


def test_an_absurd_coupling_coefficient_is_refused():
    m = arm()
    for follower, leader, polycoef, what in (
        ("link2", "link1", (0.0, 1e300), "polycoef a1"),  # beyond 1e150 the coupling dropped out of the dynamics
        ("link2", "link1", (2e6,), "polycoef a0"),
        ({"link2": -3e6}, "link1", (0.0, 1.0), "the follower's"),
        ("link2", {"link1": 1.0, "link3": 1e7}, (0.0, 1.0), "the leader's"),
    ):
        with pytest.raises(ValueError, match=f"coupling: {what} coefficient .* over 1e\\+06"):
            m.add_coupling(follower, leader, polycoef=polycoef)
    m.add_coupling("link2", "link1", polycoef=(0.0, 1e6))  # a million: the limit itself
    s = td.make_solver("drumwright", m)
    qdd = td.constrained_forward_dynamics(s, td.neutral(m), np.zeros(m.nv), np.ones(m.nv))
    G, _, _ = td.constraints.constraint_terms(m, td.neutral(m), np.zeros(m.nv))
    assert np.abs(G @ qdd).max() <= 1e-6 * np.abs(G).max() * np.abs(qdd).max()  # the coupling is kept


@pytest.mark.parametrize("anchor", [1e300, 2e6, -1.5e6])
def test_an_absurd_anchor_is_refused(anchor):
    m = arm()  # its bodies lie within 0.2 m of the world's origin: its extent is the floor, 1 m
    at = td.Transform(translation=(anchor, 0.0, 0.0))
    with pytest.raises(ValueError, match=re.escape(f"over {ANCHOR_REACH:g} times the model's extent (1 m)")):
        m.add_loop_closure("link3", None, td.Spherical(), placement_a=at)
    with pytest.raises(ValueError, match="placement_b .* over"):
        m.add_loop_closure("link3", None, td.Spherical(), placement_b=at)
    with pytest.raises(ValueError, match="NaN or inf"):
        td.Transform(translation=(np.nan, 0.0, 0.0))
    m.add_loop_closure(
        "link3", None, td.Spherical(), placement_a=td.Transform(translation=(1e5, 0, 0))
    )  # far, not absurd


_LINK = """<link name="{}"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/>
</inertial></link>"""
_URDF = (
    '<robot name="r"><link name="base"/>'
    + _LINK.format("l1")
    + _LINK.format("l2")
    + '<joint name="j1" type="revolute">'
    '<parent link="base"/><child link="l1"/><axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/>'
    '{mimic}</joint><joint name="j2" type="revolute"><parent link="l1"/><child link="l2"/><origin xyz="1 0 0"/>'
    '<axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/>{mimic2}</joint></robot>'
)
_MJCF = """<mujoco><worldbody><body name="b1"><joint name="a" type="hinge"/><geom size="0.1" mass="1"/>
<body name="b2" pos="0 0 1"><joint name="b" type="hinge"/><geom size="0.1" mass="1"/></body></body></worldbody>
<equality>{}</equality></mujoco>"""


@pytest.mark.parametrize("offset", ["0.5", "0"])
def test_a_urdf_joint_that_mimics_itself_is_refused_naming_the_file(tmp_path, offset):
    path = tmp_path / "self_mimic.urdf"
    path.write_text(_URDF.format(mimic=f'<mimic joint="j1" offset="{offset}"/>', mimic2=""))
    with pytest.raises(td.ModelFileError, match=r"self_mimic\.urdf.*joint 'j1' is coupled to itself"):
        td.Model.from_urdf(str(path))


def test_urdf_mimic_joints_that_contradict_each_other_are_refused(tmp_path):
    """j1 = j2 + 0.5 and j2 = j1 + 0.5: each alone is a mimic joint, together they cannot hold;
    with opposite offsets they agree (a duplicate, kept with a warning)."""
    path = tmp_path / "cycle.urdf"
    path.write_text(_URDF.format(mimic='<mimic joint="j2" offset="0.5"/>', mimic2='<mimic joint="j1" offset="0.5"/>'))
    with pytest.raises(td.ModelFileError, match=r"cycle\.urdf.*coupling 1 .* conflicts with coupling 0"):
        td.Model.from_urdf(str(path))
    path.write_text(_URDF.format(mimic='<mimic joint="j2" offset="0.5"/>', mimic2='<mimic joint="j1" offset="-0.5"/>'))
    with pytest.warns(RedundantConstraintWarning, match="coupling 1 .* adds nothing to coupling 0"):
        assert td.Model.from_urdf(str(path)).n_constraint_rows == 2


@pytest.mark.parametrize(
    "equality,message",
    [
        ('<joint joint1="a" joint2="a" polycoef="0.5 1 0 0 0"/>', "joint 'a' is coupled to itself"),
        ('<joint joint1="a" joint2="a"/>', "joint 'a' is coupled to itself"),
        (
            '<joint joint1="b" joint2="a"/><joint joint1="b" joint2="a" polycoef="1 1 0 0 0"/>',
            "conflicts with coupling 0",
        ),
        ('<weld body1="b2"/><weld body1="b2" relpose="0 0 2 1 0 0 0"/>', "conflicts with loop closure 0"),
        ('<connect body1="b2" body2="world" anchor="1e300 0 0"/>', "over 1e\\+06 times the model's extent"),
    ],
)
def test_mjcf_equalities_that_cannot_hold_are_refused_naming_the_file(tmp_path, equality, message):
    path = tmp_path / "equalities.xml"
    path.write_text(_MJCF.format(equality))
    with pytest.raises(td.ModelFileError, match=rf"equalities\.xml.*{message}"):
        td.Model.from_mjcf(str(path))


# ------------------------------------------------------------------ fuzz

_JOINTS = st.sampled_from(["link1", "link2", "link3", "link4"])
_COEF = st.sampled_from([-2.0, -1.0, 0.0, 0.5, 1.0, 3.0, 1e300, float("nan")])
_COUPLING = st.tuples(
    st.just("coupling"), _JOINTS, st.one_of(st.none(), _JOINTS), st.lists(_COEF, min_size=0, max_size=6)
)
_OFFSET = st.sampled_from([0.0, 0.25, -1.0, 3.0, 1e7, 1e300, float("inf")])
_LOOP = st.tuples(
    st.just("loop"),
    st.sampled_from(["link1", "link2", "link3", "link4", "world"]),
    st.sampled_from(["world", "link2", "link4"]),
    st.tuples(st.sampled_from(["ball", "weld", "hinge"]), st.tuples(_OFFSET, _OFFSET, _OFFSET), st.booleans()),
)


def _add(m, action):
    kind, a, b, rest = action
    if kind == "coupling":
        return m.add_coupling(a, b, polycoef=rest)
    joint, offset, given_b = rest
    joint = {"ball": td.Spherical(), "weld": td.Fixed(), "hinge": td.Revolute((0, 0, 1))}[joint]
    at = td.Transform(translation=offset)
    return m.add_loop_closure(a, b, joint, placement_a=at, placement_b=at if given_b else None)


@settings(max_examples=max(10, settings.default.max_examples // 2))
@given(st.lists(st.one_of(_COUPLING, _LOOP), min_size=1, max_size=5))
def test_fuzz_constraint_additions_refuse_clearly_and_what_is_kept_holds(actions):
    m = arm(4)
    for action in actions:
        before = (len(m.couplings), len(m.loop_closures))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RedundantConstraintWarning)
            try:
                _add(m, action)
                note(f"kept {action}")
            except (ValueError, TypeError) as e:  # a refusal: clear, and nothing half added
                note(f"refused {action}: {e}")
                assert str(e)
                assert (len(m.couplings), len(m.loop_closures)) == before
    if not m.n_constraint_rows:
        return
    s = td.make_solver("drumwright", m)
    q = _met(s, m)  # every kept set can be met near the reference
    qdd = td.constrained_forward_dynamics(s, q, np.zeros(m.nv), np.ones(m.nv))
    assert np.all(np.isfinite(q)) and np.all(np.isfinite(qdd))


def _met(s, m):
    """A configuration where the constraints hold, projected from the reference or, where that is
    a singular configuration (a stretched chain asked to bend: Gauss–Newton has no first-order
    way out), from configurations near it."""
    rng = np.random.default_rng(0)
    starts = [td.neutral(m)] + [td.integrate(m, td.neutral(m), 0.3 * rng.standard_normal(m.nv), 1.0) for _ in range(6)]
    errors = []
    for q0 in starts:
        try:
            return project_positions(s, q0, tol=1e-9, max_iterations=1000)
        except ValueError as e:
            errors.append(str(e))
    raise AssertionError(f"kept constraints that cannot be met: {errors}")
