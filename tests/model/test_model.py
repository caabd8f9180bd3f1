"""The model builder (python/treedyn/model/, cpp/include/treedyn/model): structure, names,
coordinate layout, and clear errors for bad models."""

import gc
import pickle
import time

import numpy as np
import pytest
from conftest import assert_within_rounding

import treedyn as td
from treedyn.scenes import random_tree


def _three_body_model():
    m = td.Model(gravity=(0, 0, -9.81))
    b1 = m.add_body("base", None, td.Free())
    m.add_body(
        "arm",
        b1,
        td.Revolute((0, 0, 1)),
        td.Transform(translation=(0, 0, 0.1)),
        td.Inertia(1.0, (0, 0, 0.05), np.diag([1e-2, 1e-2, 5e-3])),
    )
    m.add_body("wrist", "arm", td.Spherical())
    m.add_body("tool", "wrist", td.Fixed())
    m.add_body("leg", "base", td.Universal((1, 0, 0), (0, 1, 0)), joint_name="hip")
    m.add_body("slider", "leg", td.Prismatic((1, 1, 0)))
    return m


def test_structure_and_names():
    m = _three_body_model()
    assert m.n_bodies == 7  # the world is body 0
    assert m.body_names == ["world", "base", "arm", "wrist", "tool", "leg", "slider"]
    assert list(m.parents) == [-1, 0, 1, 2, 3, 1, 5]
    assert m.nq == 7 + 1 + 4 + 0 + 2 + 1
    assert m.nv == 6 + 1 + 3 + 0 + 2 + 1
    assert m.joint_names == ["base", "arm", "wrist", "hip", "slider"]
    assert [m.q_index(j) for j in m.joint_names] == [0, 7, 8, 12, 14]
    assert [m.v_index(j) for j in m.joint_names] == [0, 6, 7, 10, 12]
    assert m.has_floating_base and not m.is_chain
    with pytest.raises(KeyError, match="tool"):
        m.q_index("tool")  # a fixed joint has no coordinates
    # an unknown name is a KeyError (a lookup) and a ValueError (a bad argument), its message unquoted
    for lookup in (m.q_index, m.v_index, m.body_index):
        with pytest.raises(ValueError, match="^no (body|moving joint) named 'nope'"):
            lookup("nope")


def test_neutral_configuration_has_identity_quaternions():
    m = _three_body_model()
    q = td.neutral(m)
    np.testing.assert_array_equal(q[3:7], [0, 0, 0, 1])
    np.testing.assert_array_equal(q[8:12], [0, 0, 0, 1])
    np.testing.assert_array_equal(np.delete(q, [6, 11]), 0)


def test_parent_must_exist_and_be_an_ancestor_of_the_last_body():
    m = td.Model()
    m.add_body("a", None)
    m.add_body("b", "a")
    m.add_body("c", "world")
    with pytest.raises(ValueError, match="not an ancestor"):
        m.add_body("d", "b")  # b's subtree would not be contiguous
    with pytest.raises(ValueError, match="no body named 'zz'"):
        m.add_body("e", "zz")
    with pytest.raises(ValueError, match="there is no body 9"):
        m.add_body("e", 9)
    with pytest.raises(ValueError, match="already exists"):
        m.add_body("a", None)
    with pytest.raises(TypeError, match="parent"):
        m.add_body("e", 1.5)
    assert m.n_bodies == 4  # failed additions leave the model unchanged


def subtree_ends(parents):
    """last(i): the largest j with i on j's path to the world (bodies depth-first: i..last(i))."""
    last = list(range(len(parents)))
    for j in range(len(parents) - 1, 0, -1):
        last[parents[j]] = max(last[parents[j]], last[j])
    return last


@pytest.mark.parametrize("seed", range(3))
def test_subtree_ranges_follow_every_body_added_and_survive_a_refused_one(seed):
    """The core keeps each body's subtree range i..last(i) (minv, the derivatives and RedMax read it)
    in O(1) per body added (a walk over every ancestor made a 50 000-body chain load in O(n²)):
    after every addition, and after an addition refused for its order, it is the parents' own."""
    rng = np.random.default_rng(seed)
    m, parents, refused = td.Model(), [-1], 0
    for i in range(1, 60):
        # the previous body or one of its ancestors (depth-first), sometimes the world
        p = i - 1
        while p > 0 and rng.random() < 0.4:
            p = parents[p]
        m.add_body(f"b{i}", p)
        parents.append(p)
        closed = [k for k, end in enumerate(subtree_ends(parents)) if end < i]  # subtrees that ended
        if closed and rng.random() < 0.3:  # a body below one of them: refused, nothing changed
            with pytest.raises(ValueError, match="not an ancestor"):
                m.add_body(f"x{i}", int(rng.choice(closed)))
            refused += 1
        assert list(m.core.last) == subtree_ends(parents), i
    assert refused > 5 and len(set(parents)) > 20  # (a bushy tree, many refusals)


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: td.Inertia(-1.0), "mass"),
        (lambda: td.Inertia(float("nan")), "mass"),
        (lambda: td.Inertia(1.0, inertia=np.diag([1.0, 1.0, -0.1])), "positive semi-definite"),
        (lambda: td.Inertia(1.0, inertia=[[1, 0.5, 0], [0, 1, 0], [0, 0, 1]]), "symmetric"),
        (lambda: td.Inertia(1.0, inertia=np.diag([1.0, 1.0, 3.0])), "triangle"),
        (lambda: td.Inertia(1.0, com=(0, np.inf, 0)), "NaN or inf"),
        (lambda: td.Inertia(1.0, com=(0, 0)), "3 components"),
        (lambda: td.Revolute((0, 0, 0)), "non-zero"),
        (lambda: td.Universal((1, 0, 0), (2, 0, 0)), "parallel"),
        (lambda: td.Transform(rotation=np.diag([1, 1, -1])), "proper rotation"),
        (lambda: td.Transform(rotation=2 * np.eye(3)), "proper rotation"),
    ],
)
def test_bad_parts_are_refused_with_a_clear_error(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_bad_types_are_refused():
    m = td.Model()
    with pytest.raises(TypeError, match="joint"):
        m.add_body("a", None, joint="revolute")
    with pytest.raises(TypeError, match="placement"):
        m.add_body("a", None, placement=np.eye(4))
    with pytest.raises(TypeError, match="inertia"):
        m.add_body("a", None, inertia=1.0)
    with pytest.raises(TypeError, match="real"):
        td.Revolute(axis=np.array([1j, 0, 0]))
    with pytest.raises(ValueError, match="Free joint must connect to the world"):
        m.add_body("a", None)
        m.add_body("b", "a", td.Free())


def test_axes_are_normalised():
    j = td.Revolute((0, 0, 5))
    assert_within_rounding(j.axis, [0, 0, 1], 1, 1, what="normalised axis")


def test_transform_from_rpy_matches_urdf_convention():
    T = td.Transform.from_rpy((0.1, 0.2, 0.3), (1, 2, 3))
    c, s = np.cos, np.sin
    Rz = np.array([[c(0.3), -s(0.3), 0], [s(0.3), c(0.3), 0], [0, 0, 1]])
    Ry = np.array([[c(0.2), 0, s(0.2)], [0, 1, 0], [-s(0.2), 0, c(0.2)]])
    Rx = np.array([[1, 0, 0], [0, c(0.1), -s(0.1)], [0, s(0.1), c(0.1)]])
    assert_within_rounding(T.rotation, Rz @ Ry @ Rx, 1, 3, what="rpy")  # three rotations composed


def test_massless_leaf_is_reported_not_turned_into_nan():
    m = td.Model()
    m.add_body("a", None, td.Revolute((0, 0, 1)), inertia=td.Inertia.point(0.0))
    s = td.make_solver("aba", m)
    with pytest.raises(td.SingularInertiaError, match="joint of body 'a'"):
        s.forward_dynamics([0.0], [0.0], [1.0])
    with pytest.raises(td.SingularInertiaError, match="not positive definite"):
        td.make_solver("crba-cholesky", m).forward_dynamics([0.0], [0.0], [1.0])
    assert issubclass(td.SingularInertiaError, ValueError)


def test_unchecked_inertia_keeps_what_a_file_says_but_not_nonsense():
    bad = np.diag([1.0, 1.0, 3.0])  # violates the triangle inequality
    I = td.Inertia(1.0, inertia=bad, check=False)
    np.testing.assert_array_equal(I.inertia, bad)
    with pytest.raises(ValueError, match="mass"):
        td.Inertia(-1.0, inertia=bad, check=False)
    with pytest.raises(ValueError, match="symmetric"):
        td.Inertia(1.0, inertia=[[1, 0.5, 0], [0, 1, 0], [0, 0, 1]], check=False)


def test_transforms_and_inertias_compare_by_value():
    assert td.Transform() == td.Transform()
    assert td.Transform(translation=(1, 0, 0)) != td.Transform()
    assert td.Inertia(2.0) == td.Inertia(2.0) and td.Inertia(2.0) != td.Inertia(1.0)


# ---------------------------------------------------------------- immutable value objects


@pytest.mark.parametrize(
    "make, field",
    [
        (lambda: td.Revolute((1, 0, 0)), "axis"),
        (lambda: td.Prismatic((0, 1, 0)), "axis"),
        (lambda: td.Universal((1, 0, 0), (0, 1, 0)), "axis1"),
        (lambda: td.Universal((1, 0, 0), (0, 1, 0)), "axis2"),
        (lambda: td.Transform(translation=(1, 2, 3)), "translation"),
        (lambda: td.Transform(), "rotation"),
        (lambda: td.Inertia(2.0, (0.1, 0, 0)), "com"),
        (lambda: td.Inertia(2.0), "inertia"),
    ],
)
def test_joints_transforms_and_inertias_cannot_be_changed(make, field):
    x = make()
    before = getattr(x, field).copy()
    with pytest.raises(AttributeError, match=field):
        setattr(x, field, np.array([3.0, 0, 0]))
    with pytest.raises(ValueError, match="read-only"):
        getattr(x, field)[0] = 5.0
    np.testing.assert_array_equal(getattr(x, field), before)
    assert x == make() and hash(x) == hash(make())


def test_a_joint_mutated_after_creation_cannot_reach_the_solvers():
    # issue 12: j.axis = [3, 0, 0] after creation gave three solvers three different answers
    j = td.Revolute((1, 0, 0))
    with pytest.raises(AttributeError, match="immutable.*Revolute"):
        j.axis = np.array([3.0, 0, 0])
    with pytest.raises(AttributeError):
        j.axis = np.array([np.nan, 0, 0])
    with pytest.raises(AttributeError):
        j.new_attribute = 1
    with pytest.raises(AttributeError):
        td.Spherical().kind = 1
    with pytest.raises(AttributeError):
        del j.axis
    m = td.Model(gravity=(0, 0, -9.81))
    m.add_body(
        "a",
        None,
        j,
        placement=td.Transform(translation=(0, 0, 0.1)),
        inertia=td.Inertia(1.0, (0, 0.2, 0), np.diag([0.1, 0.2, 0.3])),
    )
    q, v, tau = np.array([0.4]), np.array([0.3]), np.array([0.1])
    # one rigid body about a unit axis: q̈ = (τ + g_term) / I_axis with the inertia about the joint axis
    # I = I_xx + m d² = 0.1 + 1·0.2², and the gravity torque about x of the com at (0, 0.2 cos q, 0.2 sin q)
    expected = (0.1 - 1.0 * 9.81 * 0.2 * np.cos(0.4)) / (0.1 + 0.04)
    for name in ("aba", "drumwright", "cfa-oee", "crba-cholesky"):
        qdd = td.make_solver(name, m).forward_dynamics(q, v, tau)
        # a few operations on O(1) numbers: agreement to a few ulps of the result
        assert abs(qdd[0] - expected) < 1e-13 * max(1.0, abs(expected)), name


def test_value_objects_copy_what_they_are_given():
    axis, t, com, I = np.array([0.0, 0, 2]), np.array([1.0, 2, 3]), np.array([0.1, 0, 0]), np.diag([1.0, 2, 2])
    j, X, J = td.Revolute(axis), td.Transform(translation=t), td.Inertia(1.0, com, I)
    axis[:] = 7.0
    t[:] = 7.0
    com[:] = 7.0
    I[:] = 7.0  # noqa: E702 (the user's arrays, changed afterwards)
    np.testing.assert_array_equal(j.axis, [0, 0, 1])
    np.testing.assert_array_equal(X.translation, [1, 2, 3])
    np.testing.assert_array_equal(J.com, [0.1, 0, 0])
    np.testing.assert_array_equal(J.inertia, np.diag([1.0, 2, 2]))
    assert np.array_equal(axis, [7, 7, 7])  # and the user's arrays are still theirs to change


def test_joint_equality_hash_repr_copy_and_pickle():
    import copy
    import pickle

    assert td.Revolute((0, 0, 2)) == td.Revolute((0, 0, 1))  # normalised
    assert td.Revolute((0, 0, 1)) != td.Prismatic((0, 0, 1))  # same axis, another kind
    assert td.Revolute((0, 0, 1)) != td.Revolute((0, 1, 0))
    assert td.Spherical() == td.Spherical() and td.Fixed() != td.Free()
    assert len({td.Revolute((1, 0, 0)), td.Revolute((2, 0, 0)), td.Spherical(), td.Spherical()}) == 2
    assert len({td.Transform(), td.Transform(translation=(-0.0, 0, 0))}) == 1  # -0.0 == 0.0
    assert repr(td.Universal((1, 0, 0), (0, 1, 0))) == "Universal(axis1=[1.0, 0.0, 0.0], axis2=[0.0, 1.0, 0.0])"
    assert repr(td.Free()) == "Free()"
    for x in (
        td.Revolute((1, 2, 3)),
        td.Universal((1, 0, 0), (0, 0, 1)),
        td.Free(),
        td.Transform(translation=(1, 0, 0)),
        td.Inertia(3.0),
    ):
        y = pickle.loads(pickle.dumps(x))
        assert y == x and hash(y) == hash(x) and copy.deepcopy(x) == x


def test_model_parts_are_read_only():
    m = td.Model()
    m.add_body("a", None, td.Revolute((0, 0, 1)))
    m.add_body("b", "a", td.Revolute((0, 1, 0)), placement=td.Transform(translation=(0, 0, 0.5)))
    m.add_spring("a", (0, 0, 0.1), "b", (0.1, 0, 0), stiffness=10.0)
    s = m.springs[0]
    with pytest.raises(ValueError, match="read-only"):
        s.point_a[0] = 1.0
    with pytest.raises(AttributeError):
        m.joints[1].axis = np.array([1.0, 0, 0])


# ---------------------------------------------------------------- the RedMax terms name the body


def test_springs_and_forces_refuse_the_world_and_unknown_names():
    m = td.Model()
    m.add_body("a", None, td.Revolute((0, 0, 1)))
    m.add_body("w", "a", td.Fixed())
    with pytest.raises(ValueError, match="joint spring: the world has no joint"):
        m.set_joint_spring("world", stiffness=1.0)
    with pytest.raises(ValueError, match="joint spring: no moving joint is named 'zz'; joints are \\['a'\\]"):
        m.set_joint_spring("zz", stiffness=1.0)
    with pytest.raises(ValueError, match="joint spring: body 0 is the world"):
        m.set_joint_spring(0, stiffness=1.0)
    with pytest.raises(ValueError, match="joint spring: joint '.*' is fixed .*body 'w'"):
        m.set_joint_spring(2, stiffness=1.0)
    with pytest.raises(ValueError, match="body damping: body 'world' is the world"):
        m.set_body_damping("world", 1.0)
    with pytest.raises(ValueError, match="body damping: no body named 'zz' \\(bodies: 'world', 'a', 'w'\\)"):
        m.set_body_damping("zz", 1.0)
    with pytest.raises(ValueError, match="spring body_b: no body named 'zz'"):
        m.add_spring("a", (0, 0, 0), "zz", (0, 0, 0), stiffness=1.0)
    with pytest.raises(ValueError, match="spring body_a: there is no body 7 \\(bodies are 0..2\\)"):
        m.add_spring(7, (0, 0, 0), "a", (0, 0, 0), stiffness=1.0)
    with pytest.raises(ValueError, match="spring: body_a and body_b are the same body \\('world'\\)"):
        m.add_spring("world", (0, 0, 0), None, (1, 0, 0), stiffness=1.0)
    with pytest.raises(ValueError, match="point force: body 'world' is the world"):
        m.add_point_force("world", (0, 0, 0), (1, 0, 0))
    with pytest.raises(ValueError, match="loop closure body_b: no body named 'zz'"):
        m.add_loop_closure("a", "zz", td.Spherical())
    with pytest.raises(TypeError, match="point force must be None, 'world', a body name or index, got 1.5"):
        m.add_point_force(1.5, (0, 0, 0), (1, 0, 0))
    m.add_spring("world", (0, 0, 1), "a", (0, 0, 0), stiffness=1.0)  # the world anchors a spring
    assert len(m.springs) == 1 and m.set_joint_spring("a", stiffness=1.0) is None


def test_body_poses_never_return_inf():
    m = td.Model()
    m.add_body("a", None, td.Prismatic((1, 0, 0)))
    m.add_body("b", "a", td.Prismatic((1, 0, 0)))
    R, p = m.body_poses([1e308, 0.5e308])  # 1.5e308: still a double
    assert p[2, 0] == 1.5e308
    with pytest.raises(ValueError, match="^forward_kinematics overflowed to inf/NaN"):
        m.body_poses([1e308, 1e308])  # 2e308 is not


# ----------------------------------------------------------------------------- structure
def test_joint_layouts_come_from_the_core():
    layouts = td._core.joint_layouts()
    for cls in (td.Fixed, td.Revolute, td.Prismatic, td.Universal, td.Spherical, td.Free):
        l = layouts[cls.__name__.lower()]
        assert (cls.kind, cls.nq, cls.nv) == (l["kind"], l["nq"], l["nv"])
    # a quaternion is 4 of the nq coordinates exactly where a rotation is kept as one
    assert [n for n, l in layouts.items() if l["quaternion"] >= 0] == ["spherical", "free"]
    assert layouts["free"]["nq"] - layouts["free"]["quaternion"] == 4
    rows = {n: l["rows"] for n, l in td._core.loop_layouts().items()}
    assert rows == {"ball": 3, "hinge": 5, "universal": 4, "weld": 6}


def test_the_structural_api_reads_back_what_was_built():
    m = td.Model()
    X = td.Transform(translation=(0.1, 0.2, 0.3))
    I = td.Inertia(2.0, (0, 0, 0.1), np.diag([1.0, 2.0, 3.0]))
    b = m.add_body("base", joint=td.Free(), inertia=I)
    m.add_body("arm", parent=b, joint=td.Revolute((0, 1, 0)), placement=X, joint_name="shoulder")
    m.add_body("hand", parent="arm", joint=td.Spherical())
    m.add_frame("tool", "hand", td.Transform(translation=(0, 0, 0.05)))
    assert m.joint_kinds == ["fixed", "free", "revolute", "spherical"]
    assert m.body_joint_names == ["", "base", "shoulder", "hand"]
    assert m.q_indices.tolist() == [0, 0, 7, 8] and m.v_indices.tolist() == [0, 0, 6, 7]
    assert m.placements[2] == X and m.inertias[1] == I and m.inertias[0].mass == 0
    assert m.frames == {"tool": ("hand", td.Transform(translation=(0, 0, 0.05)))}
    assert td.neutral(m).tolist() == [0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]
    assert str(m).splitlines() == [
        "treedyn.Model: 4 bodies (the world and 3 more), nq = 12, nv = 10, total mass 4 kg, gravity (0, 0, -9.81) m/s²",
        "#  body        parent  joint                               q        v        mass",
        "0  world",
        "1    base      world   free 'base'                         q[0:7]   v[0:6]   2 kg",
        "2      arm     base    revolute 'shoulder' axis (0, 1, 0)  q[7]     v[6]     1 kg",
        "3        hand  arm     spherical 'hand'                    q[8:12]  v[7:10]  1 kg",
    ]
    assert repr(m) == "treedyn.Model(n_bodies=4, nq=12, nv=10)"
    with pytest.raises(ValueError, match="no body named 'nowhere'"):
        m.add_frame("f", "nowhere")
    with pytest.raises(ValueError, match="already exists"):
        m.add_frame("tool", "hand")


def test_loop_residual_is_zero_when_closed_and_measures_the_gap():
    m = td.Model(gravity=(0, 0, 0))
    m.add_body("a", joint=td.Revolute((0, 0, 1)))
    m.add_body("b", parent="a", joint=td.Revolute((0, 0, 1)), placement=td.Transform(translation=(1, 0, 0)))
    assert m.loop_residual().shape == (0,)
    m.add_loop_closure(
        "b",
        "world",
        td.Spherical(),
        placement_a=td.Transform(translation=(1, 0, 0)),
        placement_b=td.Transform(translation=(2, 0, 0)),
    )
    C = m.loop_residual()
    assert C.shape == (3,) and np.abs(C).max() == 0.0
    q = np.array([0.0, np.pi / 2])  # the tip moves from (2, 0, 0) to (1, 1, 0): a gap of sqrt(2)
    assert np.linalg.norm(m.loop_residual(q)) == pytest.approx(np.sqrt(2), rel=1e-14)


def test_core_is_the_read_only_cpp_model():
    m = td.scenes.chain(3)
    assert isinstance(m.core, td._core.Model) and m.core is m.core
    with pytest.raises(AttributeError):
        m.core = None


# ---------------------------------------------------------------- joint limits


def limited_model():
    """free base, a revolute, a prismatic, a fixed, a universal and a spherical joint."""
    m = td.Model()
    m.add_body("base", None, td.Free())
    m.add_body("hinge", "base", td.Revolute((0, 0, 1)))
    m.add_body("slider", "hinge", td.Prismatic((1, 0, 0)))
    m.add_body("weld", "slider", td.Fixed())
    m.add_body("cross", "weld", td.Universal())
    m.add_body("ball", "cross", td.Spherical())
    return m


def test_joint_limits_read_back_as_a_dict_and_as_pinocchio_arrays():
    m = limited_model()
    assert m.joint_limits == {}
    assert np.all(m.lower_position_limit == -np.inf) and np.all(m.upper_position_limit == np.inf)
    m.set_joint_limits("slider", 0.0, 0.3)
    m.set_joint_limits(2, -1, 2)  # by body index (an int is taken as a real number, in radians)
    assert m.joint_limits == {"hinge": (-1.0, 2.0), "slider": (0.0, 0.3)}  # in coordinate order
    assert all(type(x) is float for lim in m.joint_limits.values() for x in lim)
    lo, hi = m.lower_position_limit, m.upper_position_limit
    assert lo.shape == hi.shape == (m.nq,)
    k, s = m.q_index("hinge"), m.q_index("slider")
    assert (lo[k], hi[k], lo[s], hi[s]) == (-1.0, 2.0, 0.0, 0.3)
    others = np.ones(m.nq, bool)
    others[[k, s]] = False
    assert np.all(lo[others] == -np.inf) and np.all(hi[others] == np.inf)  # quaternions included
    with pytest.raises(ValueError, match="read-only"):
        lo[k] = 0.0
    m.joint_limits["hinge"] = (0.0, 0.0)  # a copy: the model keeps its own
    assert m.joint_limits["hinge"] == (-1.0, 2.0)
    m.set_joint_limits("hinge", upper=0.5)  # set again: replaced, the lower side now unbounded
    assert m.joint_limits["hinge"] == (-np.inf, 0.5)
    m.set_joint_limits("slider", 0.1, 0.1)  # equal bounds lock the joint
    m.set_joint_limits("hinge")  # both sides unbounded: no limits any more
    assert m.joint_limits == {"slider": (0.1, 0.1)}


@pytest.mark.parametrize(
    "joint, lower, upper, error, match",
    [
        ("nope", 0, 1, td.UnknownNameError, r"joint limits: no moving joint is named 'nope'; joints are \['base',"),
        ("world", 0, 1, ValueError, "joint limits: the world has no joint"),
        (0, 0, 1, ValueError, "joint limits: body 0 is the world, which has no joint"),
        (9, 0, 1, ValueError, r"joint limits: there is no body 9 \(bodies are 0..6\)"),
        (1.0, 0, 1, TypeError, "joint limits must be None, 'world', a body name or index"),
        ("base", 0, 1, ValueError, "joint 'base' is free: its coordinates include a quaternion"),
        (4, 0, 1, ValueError, "joint 'weld' is fixed"),
        ("cross", 0, 1, ValueError, "joint 'cross' is universal: its two angles would need a pair of limits each"),
        ("ball", 0, 1, ValueError, "joint 'ball' is spherical: its coordinates are a quaternion"),
        ("hinge", 1, 0, ValueError, r"joint limits of 'hinge': need lower <= upper.*got \(1.0, 0.0\)"),
        ("hinge", np.nan, 0, ValueError, "joint limits of 'hinge': lower is NaN"),
        ("hinge", 0, np.inf * 0, ValueError, "joint limits of 'hinge': upper is NaN"),
        ("hinge", np.inf, np.inf, ValueError, "lower < \\+inf"),
        ("hinge", -np.inf, -np.inf, ValueError, "upper > -inf"),
        ("hinge", True, 1, TypeError, "joint limits of 'hinge': lower must be a real number, got True"),
        ("hinge", 0, "1", TypeError, "joint limits of 'hinge': upper must be a real number, got '1'"),
        ("hinge", 0, [1.0], TypeError, "upper must be a real number"),
    ],
)
def test_joint_limits_refuse_bad_joints_and_bounds_saying_why(joint, lower, upper, error, match):
    m = limited_model()
    m.set_joint_limits("slider", 0.0, 0.3)
    with pytest.raises(error, match=match):
        m.set_joint_limits(joint, lower, upper)
    assert m.joint_limits == {"slider": (0.0, 0.3)}  # a refused call changes nothing


# ---------------------------------------------------------------- inertias given as parameters


def test_inertia_parameters_and_the_centre_of_mass_form_describe_the_same_body():
    m, c, Ic = 2.0, np.array([0.1, -0.2, 0.3]), np.array([[0.3, 0.01, 0.0], [0.01, 0.2, 0.02], [0.0, 0.02, 0.25]])
    I = td.Inertia(m, c, Ic)
    I_O = Ic + m * ((c @ c) * np.eye(3) - np.outer(c, c))  # parallel axes
    assert_within_rounding(I.first_moment, m * c, m * np.abs(c), 1, what="h = m c")
    assert_within_rounding(I.inertia_origin, I_O, np.abs(I_O), 3, what="Ī_O")
    P = td.Inertia.from_parameters(m, m * c, I_O)
    assert P.has_com and P.check is False
    assert_within_rounding(P.com, c, np.abs(c), 1, what="c = h / m")
    assert_within_rounding(P.inertia, Ic, np.abs(I_O), 3, what="I_c")
    # the C++ model keeps the parameters as given, exactly
    model = td.Model()
    model.add_body("a", None, td.Revolute(), inertia=P)
    X = np.asarray(model.core.spatial_inertia(1))
    np.testing.assert_array_equal(X[:3, :3], P.inertia_origin)
    assert X[3, 3] == m and np.array_equal([X[2, 4], X[0, 5], X[1, 3]], P.first_moment)
    assert model.inertias[1] is P


def test_a_massless_inertia_with_a_first_moment_has_no_centre_of_mass():
    P = td.Inertia.from_parameters(0.0, (0.0, 0.0, 0.3), np.diag([0.1, -0.1, 0.0]))  # not a rigid body's
    assert not P.has_com and P.mass == 0.0
    np.testing.assert_array_equal(P.first_moment, (0, 0, 0.3))
    for what in ("com", "inertia"):
        with pytest.raises(ValueError, match="no centre of mass; read first_moment and inertia_origin"):
            getattr(P, what)
    Z = td.Inertia.from_parameters(0.0, np.zeros(3), np.diag([0.1, 0.1, 0.0]))  # mass 0, h = 0: c at the origin
    np.testing.assert_array_equal(Z.com, np.zeros(3))
    np.testing.assert_array_equal(Z.inertia, np.diag([0.1, 0.1, 0.0]))


@pytest.mark.parametrize(
    "args, match",
    [
        ((-1.0, np.zeros(3), np.eye(3)), "mass"),
        ((1.0, (0, np.nan, 0), np.eye(3)), "NaN or inf"),
        ((1.0, (0, 0), np.eye(3)), "3 components"),
        ((1.0, np.zeros(3), [[1, 0.5, 0], [0, 1, 0], [0, 0, 1]]), "symmetric"),
        ((1.0, np.zeros(3), np.eye(2)), "3x3"),
    ],
)
def test_inertia_parameters_must_be_finite_symmetric_with_a_mass_of_at_least_zero(args, match):
    with pytest.raises(ValueError, match=match):
        td.Inertia.from_parameters(*args)


def test_inertia_parameters_are_an_immutable_value():
    import copy
    import pickle

    def make():
        return td.Inertia.from_parameters(0.0, (0.1, 0, 0), np.diag([1.0, 2.0, 3.0]))

    P = make()
    assert P == make() and hash(P) == hash(make()) and P != td.Inertia.from_parameters(0.0, (0.2, 0, 0), np.eye(3))
    assert P != td.Inertia(1.0)  # the other form: never equal
    with pytest.raises(AttributeError, match="first_moment"):
        P.first_moment = np.zeros(3)
    with pytest.raises(AttributeError, match="mass"):
        P.mass = 2.0
    with pytest.raises(ValueError, match="read-only"):
        P.inertia_origin[0, 0] = 5.0
    y = pickle.loads(pickle.dumps(P))
    assert y == P and copy.deepcopy(P) == P
    assert repr(P).startswith("Inertia.from_parameters(mass=0.0, first_moment=array([0.1, 0. , 0. ])")
    assert pickle.loads(pickle.dumps(td.Inertia(2.0, check=False))).check is False


def test_with_inertias_copies_the_model_with_other_inertias():
    m = td.Model(gravity=(0, 1, 0))
    m.add_body("a", None, td.Revolute((0, 0, 1)), joint_name="ja")
    m.add_body("b", "a", td.Spherical(), td.Transform(translation=(0, 0, 0.5)))
    m.add_frame("tip", "b", td.Transform(translation=(0.1, 0, 0)))
    m.set_joint_limits("ja", -1.0, 1.0)
    new = [m.inertias[0], td.Inertia(3.0), td.Inertia.from_parameters(0.0, (0, 0, 0.1), np.zeros((3, 3)))]
    c = m.with_inertias(new)
    assert c.inertias == new and m.inertias[1] == td.Inertia()
    assert (c.body_names, c.joints, c.placements, c.frames, c.joint_limits, c.body_joint_names) == (
        m.body_names,
        m.joints,
        m.placements,
        m.frames,
        m.joint_limits,
        m.body_joint_names,
    )
    np.testing.assert_array_equal(c.gravity, m.gravity)
    with pytest.raises(ValueError, match="need 3 inertias"):
        m.with_inertias(new[1:])
    with pytest.raises(ValueError, match="world's and must be zero"):
        m.with_inertias([td.Inertia(1.0), *new[1:]])
    with pytest.raises(TypeError, match="treedyn.Inertia"):
        m.with_inertias([new[0], new[1], "x"])


def _model_with_everything():
    """A tree with every part a model can carry: frames, geoms, limits, joint springs, damping,
    springs, point and moving forces, a loop closure, a coupling, Baumgarte, a reference
    configuration and an attribute a file reader would add."""
    m = _three_body_model()
    m.gravity = (0.1, -9.8, 0.2)
    m.add_body("elbow", "slider", td.Revolute((0, 1, 0)), td.Transform.from_rpy((0.1, 0.2, 0.3), (0.2, 0, 0)))
    m.add_body(
        "hand", "elbow", td.Revolute((1, 0, 0)), inertia=td.Inertia.from_parameters(0.0, (0, 0, 0.1), np.eye(3) * 1e-2)
    )
    m.add_frame("tip", "hand", td.Transform(translation=(0.1, 0, 0)))
    m.add_geom("hand", td.Sphere(0.05), friction=0.5, name="ball")
    m.set_joint_limits("elbow", -1.0, 2.0)
    m.set_joint_spring("elbow", 3.0, 0.5, rest=[0.2])
    m.set_body_damping("leg", 0.3)
    m.add_spring("hand", (0, 0, 0.1), "arm", (0, 0.1, 0), 40.0, 1.0)
    m.add_point_force("tool", (0, 0, 0.1), (1.0, 0, 0))
    m.add_moving_force((0, 0, -5.0), [("arm", (0, 0, 0), (0.2, 0, 0))], duration=2.0)
    m.add_loop_closure("hand", "wrist", td.Spherical())
    m.add_coupling("elbow", "hand", polycoef=(0.1, 0.5))
    m.baumgarte = 20.0
    m.reference_configuration = td.random_configuration(m, np.random.default_rng(3))
    m.source = "a file"
    return m


def _same(a, b) -> bool:
    """a and b hold equal values, bit for bit (arrays by dtype and bytes, dataclasses by field)."""
    import dataclasses

    if type(a) is not type(b):
        return False
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    if dataclasses.is_dataclass(a):
        return all(_same(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a))
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return a == b


def _parts(m):
    return (
        m.body_names,
        m.parents,
        m.joints,
        m.body_joint_names,
        m.placements,
        m.inertias,
        m.frames,
        m.geoms,
        m.joint_limits,
        m.lower_position_limit,
        m.gravity,
        m.springs,
        m.loop_closures,
        m.couplings,
        m.force_elements,
        m.baumgarte,
        m.reference_configuration,
        m.source,
        {
            k: v for k, v in vars(m).items() if k not in ("_cpp", "_cache")
        },  # (the C++ copy; the per-model cache: model/cache.py),
    )


def test_a_model_pickles_with_all_it_carries_and_the_same_dynamics_bit_for_bit():
    import copy
    import pickle

    m = _model_with_everything()
    rng = np.random.default_rng(0)
    for c in (pickle.loads(pickle.dumps(m)), copy.deepcopy(m), copy.copy(m)):
        assert c is not m and c.core is not m.core
        assert _same(_parts(c), _parts(m))
        assert c.springs[0].point_a.flags.writeable is False  # value objects stay read-only
        assert c.placements[4].rotation.flags.writeable is False
        for _ in range(3):
            q, v = td.random_configuration(m, rng), rng.standard_normal(m.nv)
            tau, f = rng.standard_normal(m.nv), rng.standard_normal((m.n_bodies, 6))
            for name in ("aba", "crba-ltl"):
                a, b = td.make_solver(name, m), td.make_solver(name, c)
                np.testing.assert_array_equal(b.forward_dynamics(q, v, tau, f), a.forward_dynamics(q, v, tau, f))
                np.testing.assert_array_equal(
                    td.constrained_forward_dynamics(b, q, v, tau), td.constrained_forward_dynamics(a, q, v, tau)
                )
            np.testing.assert_array_equal(c.loop_residual(q), m.loop_residual(q))
            for x, y in zip(c.body_poses(q), m.body_poses(q)):
                np.testing.assert_array_equal(x, y)
            # the RedMax step: springs, damping, point and moving forces, loop closure, coupling
            sa, sb = td.State(q, v), td.State(q, v)
            td.make_solver("redmax-direct", m).step(sa, 1e-3)
            td.make_solver("redmax-direct", c).step(sb, 1e-3)
            np.testing.assert_array_equal(sb.q, sa.q)
            np.testing.assert_array_equal(sb.v, sa.v)
    # a copy shares nothing that changes: building on it leaves the original as it was
    before = copy.deepcopy(_parts(m))
    c = copy.copy(m)
    c.add_body("extra", "hand")
    c.add_spring("extra", (0, 0, 0), "arm", (0, 0, 0), 1.0)
    c.set_joint_limits("hand", -0.5, 0.5)
    assert _same(_parts(m), before) and m.n_bodies == c.n_bodies - 1


@pytest.mark.parametrize("seed", range(4))
def test_a_random_tree_pickles_to_the_same_bits(seed):
    """Joint axes come back as stored (normalising a unit axis again may change its last bit)."""
    import pickle

    from treedyn.scenes import random_tree

    m = random_tree(14, seed, floating_base=bool(seed % 2))
    c = pickle.loads(pickle.dumps(m))
    assert _same(c.joints, m.joints) and _same(c.inertias, m.inertias) and _same(c.placements, m.placements)
    rng = np.random.default_rng(seed)
    Q = np.stack([td.random_configuration(m, rng) for _ in range(20)])
    V, T = rng.standard_normal((20, m.nv)), rng.standard_normal((20, m.nv))
    np.testing.assert_array_equal(
        td.make_solver("aba", c).forward_dynamics(Q, V, T), td.make_solver("aba", m).forward_dynamics(Q, V, T)
    )


def test_printing_a_long_chain_leaves_out_its_middle_and_says_so():
    m = td.scenes.chain(100)
    lines = str(m).splitlines()
    assert len(lines) == 2 + 40 + 1  # header, column titles, 40 bodies, the line saying what was left out
    assert lines[0].startswith("treedyn.Model: 101 bodies (the world and 100 more), nq = 100, nv = 100")
    assert "... 61 bodies left out (26 to 86): model.describe(None) shows all" in lines
    assert lines[-1].split()[:3] == ["100", "[100]", "link100"]  # deep bodies show their depth
    assert max(len(x) for x in lines) < 120  # the indentation stops growing at 8 levels
    assert len(m.describe(None).splitlines()) == 2 + 101
    with pytest.raises(ValueError, match="max_bodies must be None or an integer >= 2"):
        m.describe(1)


def _rot(axis, angle):
    """Rodrigues' rotation matrix, written out independently of treedyn and SciPy."""
    k = np.asarray(axis, dtype=float) / np.linalg.norm(axis)
    K = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * K @ K


def test_transform_from_quat_is_the_rotation_of_x_y_z_w_and_agrees_with_from_rpy():
    axis, angle = np.array([1.0, -2.0, 0.5]), 0.7
    n = axis / np.linalg.norm(axis)
    quat = np.r_[np.sin(angle / 2) * n, np.cos(angle / 2)]  # (x, y, z, w)
    T = td.Transform.from_quat(quat, (1, 2, 3))
    assert_within_rounding(T.rotation, _rot(axis, angle), 1, 8, what="from_quat")
    np.testing.assert_array_equal(T.translation, [1, 2, 3])
    assert_within_rounding(T.quat, quat, 1, 8, what="quat")
    assert_within_rounding(td.Transform.from_quat(-quat).quat, quat, 1, 8, what="quat has w >= 0")
    # rpy: Rz(yaw) Ry(pitch) Rx(roll) is the product of three axis rotations (quaternions multiply alike)
    R = td.Transform.from_rpy((0.1, -0.4, 2.0))
    assert_within_rounding(R.rotation, _rot((0, 0, 1), 2.0) @ _rot((0, 1, 0), -0.4) @ _rot((1, 0, 0), 0.1), 1, 8)
    assert_within_rounding(td.Transform.from_quat(R.quat).rotation, R.rotation, 1, 8, what="rpy → quat → R")
    assert_within_rounding(R.rpy, [0.1, -0.4, 2.0], 2.0, 8, what="rpy read back")
    np.testing.assert_array_equal(td.Transform.from_quat((0, 0, 0, 1)).rotation, np.eye(3))
    # a quaternion a little off unit is normalised; one far from it refused
    assert_within_rounding(td.Transform.from_quat(quat * 1.0005).rotation, T.rotation, 1, 8, what="normalised")
    with pytest.raises(ValueError, match=r"quat must be a unit quaternion \(x, y, z, w\), got .* of norm 2"):
        td.Transform.from_quat((0, 0, 0, 2))
    with pytest.raises(ValueError, match="quat must have 4 components"):
        td.Transform.from_quat((0, 0, 1))
    with pytest.raises(ValueError, match="quat contains NaN"):
        td.Transform.from_quat((0, 0, np.nan, 1))
    with pytest.raises(TypeError, match="quat must be real numbers"):
        td.Transform.from_quat(np.array([0, 0, 0, 1], dtype=complex))


def test_transform_inverse_composition_and_points():
    rng = np.random.default_rng(0)
    A = td.Transform.from_rpy(rng.uniform(-3, 3, 3), rng.uniform(-2, 2, 3))
    B = td.Transform.from_quat([0.5, 0.5, 0.5, 0.5], rng.uniform(-2, 2, 3))
    identity = (A.inverse() @ A).as_matrix()
    assert_within_rounding(identity, np.eye(4), 1 + np.abs(A.translation).max(), 8, what="A⁻¹ A")
    assert_within_rounding((A @ A.inverse()).as_matrix(), np.eye(4), 1 + np.abs(A.translation).max(), 8)
    # composition is the product of the homogeneous matrices; (A B)⁻¹ = B⁻¹ A⁻¹
    assert_within_rounding((A @ B).as_matrix(), A.as_matrix() @ B.as_matrix(), 1 + 4, 8, what="A B")
    assert_within_rounding(((A @ B).inverse()).as_matrix(), (B.inverse() @ A.inverse()).as_matrix(), 9, 8)
    # points: one (3,) or many (N, 3); T @ (U @ p) = (T U) @ p
    P = rng.standard_normal((5, 3))
    H = A.as_matrix()
    assert_within_rounding(A @ P, (H @ np.c_[P, np.ones(5)].T).T[:, :3], 9, 8, what="A @ points")
    assert (A @ P[0]).shape == (3,) and (A @ P).shape == (5, 3)
    assert_within_rounding(A @ P[2], (A @ P)[2], 9, 8, what="one point = a row of points")
    np.testing.assert_array_equal(A @ list(P[1]), A @ P[1])
    assert_within_rounding(A @ (B @ P), (A @ B) @ P, 9, 8, what="T(U p) = (T U) p")
    assert_within_rounding(A.inverse() @ (A @ P), P, 9, 8, what="A⁻¹(A p) = p")
    H[0, 0] = 7.0
    assert A.as_matrix()[0, 0] != 7.0  # a new array each time
    with pytest.raises(ValueError, match=r"need a point \(3,\) or points \(N, 3\), got shape \(4,\)"):
        A @ np.ones(4)
    with pytest.raises(ValueError, match="contain NaN"):
        A @ np.array([0, np.nan, 0])
    with pytest.raises(TypeError):
        A @ 3.0


def test_joint_armature_and_springs_are_model_data():
    """set_joint_armature: a scalar or one value per velocity coordinate, finite and >= 0; the
    (nv,) read-only views; kept by pickling and copies; solvers made before are remade."""
    import copy
    import pickle

    from treedyn.scenes import random_tree

    m = random_tree(5, 3, joints=("revolute", "spherical"))
    q, v, tau = td.random_configuration(m, np.random.default_rng(0)), np.ones(m.nv), np.ones(m.nv)
    before = td.make_solver("aba", m).forward_dynamics(q, v, tau)
    ball = next(i for i, j in enumerate(m.joints) if isinstance(j, td.Spherical))
    vi = m.v_indices[ball]
    rev = next(i for i, j in enumerate(m.joints) if isinstance(j, td.Revolute))
    m.set_joint_armature(m.body_joint_names[ball], [0.1, 0.2, 0.3])  # by name
    m.set_joint_armature(rev, 0.5)  # by body index
    m.set_joint_spring(ball, stiffness=2.0, damping=0.4)
    expected = np.zeros(m.nv)
    expected[vi : vi + 3] = [0.1, 0.2, 0.3]
    expected[m.v_indices[rev]] = 0.5
    np.testing.assert_array_equal(m.armature, expected)
    assert m.joint_stiffness[vi : vi + 3].tolist() == [2.0] * 3 and m.joint_damping[vi] == 0.4
    with pytest.raises(ValueError):
        m.armature[0] = 1.0
    for bad, match in (([1.0, 2.0], "3 values"), (-1.0, ">= 0"), (np.nan, "finite"), ([0, 0, np.inf], "finite")):
        with pytest.raises(ValueError, match=match):
            m.set_joint_armature(ball, bad)
    with pytest.raises(ValueError, match="world"):
        m.set_joint_armature(0, 1.0)
    with pytest.raises(ValueError, match="no moving joint"):
        m.set_joint_armature("nope", 1.0)
    fresh = td.make_solver("aba", m)
    assert not np.array_equal(fresh.forward_dynamics(q, v, tau), before)
    for other in (pickle.loads(pickle.dumps(m)), copy.deepcopy(m), copy.copy(m)):
        np.testing.assert_array_equal(other.armature, m.armature)
        np.testing.assert_array_equal(other.joint_stiffness, m.joint_stiffness)
        np.testing.assert_array_equal(other.core.q_rest, m.core.q_rest)
        np.testing.assert_array_equal(
            td.make_solver("aba", other).forward_dynamics(q, v, tau), fresh.forward_dynamics(q, v, tau)
        )


def test_the_python_layout_mirrors_are_the_cores():
    """Model keeps each body's name and where its coordinates start in q and v in Python (the C++
    vectors are copied whole on every read): the same numbers as the core's, after pickling too."""
    import pickle

    for seed in range(4):
        m = random_tree(25, np.random.default_rng(seed), floating_base=seed % 2 == 1)
        for model in (m, pickle.loads(pickle.dumps(m))):
            assert model.body_names == list(model.core.name)
            assert model.q_indices.tolist() == list(model.core.q_index)
            for i, name in enumerate(model.body_joint_names):
                if model.joints[i].nv:
                    assert model.q_index(name) == model.core.q_index[i]
                    assert model.v_index(name) == model.core.v_index[i]


def test_naming_and_indexing_cost_the_same_at_any_model_size():
    """add_frame, add_geom, q_index and v_index do not slow down as the model grows (issue 31: a
    linear scan for duplicate geom names, the body names copied per add_frame and the q layout
    copied per q_index made loading a file O(n²)). A star of bodies: no depth, so the core's own
    per-body bookkeeping stays O(1)."""

    def star(n):
        m = td.Model()
        for i in range(n):
            m.add_body(f"b{i}", None, td.Revolute())
            m.add_geom(i + 1, td.Sphere(0.1), name=f"g{i}")
        return m

    def seconds_per_1000_calls(m, tag):
        gc.collect()
        gc.disable()  # (a collection walks the whole heap, larger with the larger model: not the model's cost)
        try:
            start = time.process_time()
            for k in range(1000):
                m.add_frame(f"f{tag}{k}", m.n_bodies - 1)
                m.add_geom(0, td.Sphere(0.1), name=f"extra{tag}{k}")
                m.q_index(f"b{k % 100}")
                m.v_index(f"b{k % 100}")
            return time.process_time() - start
        finally:
            gc.enable()

    small, large = star(100), star(10000)
    t_small = min(seconds_per_1000_calls(small, t) for t in "ab")
    t_large = min(seconds_per_1000_calls(large, t) for t in "ab")
    assert t_large < 3 * t_small + 0.05, (t_small, t_large)
    with pytest.raises(ValueError, match="geom named 'g5' already exists"):
        large.add_geom(3, td.Sphere(0.1), name="g5")


def test_visuals_are_checked_kept_and_pickled_and_do_not_remake_the_solvers():
    m = td.scenes.chain(2)
    revision = m._revision
    k = m.add_visual("link1", td.Capsule(0.05, 0.2), td.Transform(translation=(0, 0, 0.1)), rgba=(1, 0.5, 0, 1))
    m.add_visual(2, td.MeshFile("/robots/part.stl", (0.001, 0.001, 0.001)), name="part")
    assert k == 0 and [v.name for v in m.visuals] == ["visual0", "part"] and m.visuals[0].rgba == (1.0, 0.5, 0.0, 1.0)
    assert m._revision == revision  # (visuals are no part of the dynamics: nothing made from the model is remade)
    assert pickle.loads(pickle.dumps(m)).visuals == m.visuals
    for bad, error, match in [
        ((1, td.Plane()), TypeError, "visual's shape"),
        ((1, td.Sphere(1.0), None, (1, 0, 0)), ValueError, "shape"),
        ((1, td.Sphere(1.0), None, (1, 0, 0, 2)), ValueError, r"\[0, 1\]"),
        ((9, td.Sphere(1.0)), ValueError, "no body 9"),
        ((1, td.Sphere(1.0), "here"), TypeError, "placement"),
    ]:
        with pytest.raises(error, match=match):
            m.add_visual(*bad)
    with pytest.raises(ValueError, match="scale"):
        td.MeshFile("/x.stl", (1, 0, 1))
    with pytest.raises(ValueError, match="faces"):
        td.TriangleMesh(np.zeros((3, 3)), [[0, 1, 3]])
