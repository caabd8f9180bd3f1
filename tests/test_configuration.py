"""neutral, random_configuration and integrate (python/treedyn/configuration.py,
cpp/include/treedyn/model/configuration.hpp)."""

import numpy as np
import pytest
from conftest import assert_below, assert_within_rounding, rounding_bound, unit_roundoff

import treedyn as td
from treedyn.configuration import quaternion_slices
from treedyn.scenes import random_tree


def test_random_configurations_have_unit_quaternions_and_are_reproducible():
    m = random_tree(20, 0, floating_base=True)
    q = td.random_configuration(m, 5)
    np.testing.assert_array_equal(q, td.random_configuration(m, 5))
    assert quaternion_slices(m)
    for sl, _ in quaternion_slices(m):
        assert abs(np.linalg.norm(q[sl]) - 1) <= rounding_bound(4)  # normalised: a few roundings of 4 terms


def test_integrate_keeps_unit_quaternions_and_does_not_touch_its_input():
    m = random_tree(15, 1, floating_base=True)
    rng = np.random.default_rng(0)
    q, v = td.random_configuration(m, rng), rng.standard_normal(m.nv) * 5
    q0 = q.copy()
    q1 = td.integrate(m, q, v, 0.3)
    np.testing.assert_array_equal(q, q0)
    for sl, _ in quaternion_slices(m):
        assert abs(np.linalg.norm(q1[sl]) - 1) <= rounding_bound(4)  # a product of unit quaternions, rounded


def test_integrate_derivative_is_the_velocity():
    # d/dt of the body velocities obtained through RNEA-free kinematics: M(q ⊕ v dt) changes as
    # predicted to first order; checked via the free joint's velocity recovered by finite differences
    m = td.Model(gravity=(0, 0, 0))
    m.add_body("base", None, td.Free())
    rng = np.random.default_rng(1)
    q, v = td.random_configuration(m, rng), rng.standard_normal(6)
    dt = 1e-6
    q1 = td.integrate(m, q, v, dt)

    def rot(x):
        x, y, z, w = x
        return np.array(
            [
                [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
            ]
        )

    R0, R1 = rot(q[3:]), rot(q1[3:])
    lin = R0.T @ (q1[:3] - q[:3]) / dt  # body-frame linear velocity
    W = R0.T @ (R1 - R0) / dt  # body-frame angular velocity, as a skew matrix
    ang = np.array([W[2, 1], W[0, 2], W[1, 0]])
    # a forward difference: truncation ½·dt·|second derivative| ≤ ½·dt·|ω|·(|v| + |ω|), rounding
    # ≈ 4u·(1 + |q|)/dt for the differences of rotations and positions
    w = np.abs(v[3:]).sum()
    bound = 0.5 * dt * w * (np.abs(v[:3]).sum() + w) + 4 * unit_roundoff() * (1 + np.abs(q).max()) / dt
    assert_below(lin - v[:3], bound, "linear velocity by differences")
    assert_below(ang - v[3:], bound, "angular velocity by differences")


def test_integrate_is_additive_for_vector_joints():
    m = td.scenes.chain(5, joint="prismatic")
    q, v = np.arange(5.0), np.ones(5)
    assert_within_rounding(td.integrate(m, q, v, 0.5), q + 0.5, q + 0.5, 1, what="q + v dt")  # one rounding


def test_integrate_and_random_configuration_never_return_inf_or_nan():
    free = td.Model()
    free.add_body("base", None, td.Free())
    q = td.neutral(free)
    # issue 12: v dt = 1e300 on a free joint gave NaN (the SE(3) exponential of a huge twist)
    with pytest.raises(ValueError, match="^integrate overflowed to inf/NaN"):
        td.integrate(free, q, np.ones(6), 1e300)
    with pytest.raises(TypeError, match="dt must be a real number"):
        td.integrate(free, q, np.ones(6), 1j)
    with pytest.raises(ValueError, match="random_configuration: angle must be finite"):
        td.random_configuration(free, 0, angle=1e308)  # the uniform draw's width 2e308 overflows
    with pytest.raises(ValueError, match="random_configuration: distance must be finite"):
        td.random_configuration(free, 0, distance=np.inf)
    assert np.all(np.isfinite(td.random_configuration(free, 0, distance=1e300)))
