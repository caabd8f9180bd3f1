"""The model builder (python/treedyn/model.py, cpp/include/treedyn/model): structure, names,
coordinate layout, and clear errors for bad models."""
import numpy as np
import pytest

import treedyn as td

from conftest import assert_within_rounding


def _three_body_model():
    m = td.Model(gravity=(0, 0, -9.81))
    b1 = m.add_body("base", None, td.Free())
    m.add_body("arm", b1, td.Revolute((0, 0, 1)), td.Transform(translation=(0, 0, 0.1)),
               td.Inertia(1.0, (0, 0, 0.05), np.diag([1e-2, 1e-2, 5e-3])))
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


@pytest.mark.parametrize("make, match", [
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
])
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
