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


def test_random_configuration_draws_limited_coordinates_inside_their_limits():
    """Both bounds finite: uniform in [lower, upper] (its mean and spread those of the uniform
    law); one side unbounded: in the part of [-angle, angle] (or [-distance, distance]) on the
    limit's side, or the interval of that width from the bound when the default one misses it.
    Unlimited coordinates take the draws they take without limits (one draw per coordinate)."""
    m = td.scenes.chain(6)
    m.set_joint_limits("link1", -0.3, 0.1)
    m.set_joint_limits("link2", lower=0.5)  # [0.5, π]
    m.set_joint_limits("link3", upper=-4.0)  # [-4 - 2π, -4]: [-π, π] misses it
    m.set_joint_limits("link4", -1e308, 1e308)  # finite, but wider than the largest double
    m.set_joint_limits("link5", 0.2, 0.2)  # locked
    free = td.scenes.chain(6)
    n = 4000
    rng, rng_free = np.random.default_rng(7), np.random.default_rng(7)
    Q = np.array([td.random_configuration(m, rng) for _ in range(n)])
    Q_free = np.array([td.random_configuration(free, rng_free) for _ in range(n)])
    lo, hi = m.lower_position_limit, m.upper_position_limit
    assert np.all(Q >= lo) and np.all(Q <= hi) and np.all(np.isfinite(Q))
    np.testing.assert_array_equal(Q[:, 5], Q_free[:, 5])  # link6 is unlimited: the same draws
    expected = {0: (-0.3, 0.1), 1: (0.5, np.pi), 2: (-4.0 - 2 * np.pi, -4.0), 3: (-1e308, 1e308)}
    for k, (a, b) in expected.items():
        # the mean of n uniform draws is within 5 standard deviations (b − a)/√(12 n) of (a + b)/2
        # (a 6e-7 chance of a false alarm; the seed is fixed); the extremes come within 1 % of the ends
        # (each misses with probability 0.99ⁿ = 3e-18)
        x = Q[:, k] / 1e308 if k == 3 else Q[:, k]
        a, b = (a / 1e308, b / 1e308) if k == 3 else (a, b)
        assert abs(x.mean() - (a + b) / 2) <= 5 * (b - a) / np.sqrt(12 * n), k
        assert x.min() <= a + 0.01 * (b - a) and x.max() >= b - 0.01 * (b - a), k
    assert np.all(Q[:, 4] == 0.2)
    # angle= and distance= still set the unbounded side's width
    p = td.scenes.chain(2, joint="prismatic")
    p.set_joint_limits("link1", lower=0.0)
    x = np.array([td.random_configuration(p, s, distance=0.5)[0] for s in range(200)])
    assert np.all((0.0 <= x) & (x <= 0.5))
