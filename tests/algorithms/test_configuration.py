"""neutral, random_configuration and integrate (python/treedyn/algorithms/configuration.py,
cpp/include/treedyn/model/configuration.hpp)."""

import numpy as np
import pytest
from conftest import assert_below, assert_within_rounding, rounding_bound, unit_roundoff

import treedyn as td
from treedyn.algorithms.configuration import quaternion_slices
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


def test_integrate_moves_a_free_joint_accurately_at_small_rotations():
    # p = V(ω) v with V = 1 + b ω× + c ω×²; below θ = 1e-2 the series b = 1/2 − θ²/24 + θ⁴/720,
    # c = 1/6 − θ²/120 + θ⁴/5040 are exact to θ⁶/40320 < 3e-17: a reference of a few roundings.
    # (b = (1 − cos θ)/θ² as written erred by u/θ², 3e5·u at θ = 1e-5)
    m = td.Model()
    m.add_body("b", None, td.Free())
    rng = np.random.default_rng(9)
    for _ in range(200):
        th = 10 ** rng.uniform(-6, -2)
        n = rng.standard_normal(3)
        w, vl = th * n / np.linalg.norm(n), rng.standard_normal(3)
        b, c = 0.5 - th**2 / 24 + th**4 / 720, 1 / 6 - th**2 / 120 + th**4 / 5040
        wv = np.cross(w, vl)
        p = td.integrate(m, td.neutral(m), np.r_[vl, w], 1.0)[:3]
        assert_within_rounding(p, vl + b * wv + c * np.cross(w, wv), 1 + np.abs(vl), 3, what="V(ω) v")


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


# ------------------------------------------------------------ difference, interpolate, batches
def every_joint_model():
    """A tree with every joint kind: a floating base carrying a spherical, a universal, a revolute
    and a prismatic joint (and a fixed one)."""
    m = td.Model()
    m.add_body("base", None, td.Free())
    m.add_body("ball", "base", td.Spherical(), td.Transform(translation=(0, 0, 0.3)))
    m.add_body("cardan", "ball", td.Universal((1, 0, 0), (0, 1, 1)), td.Transform(translation=(0.2, 0, 0)))
    m.add_body("weld", "cardan", td.Fixed(), td.Transform(translation=(0, 0.1, 0)))
    m.add_body("hinge", "weld", td.Revolute((1, 2, 3)))
    m.add_body("slide", "base", td.Prismatic((0, 1, 0)))
    return m


def _rotation_parts(m, v):
    """The rotation vectors in v (of the spherical joints and the free joints' angular parts)."""
    out = []
    for j, k in zip(m.joints, m.v_indices):
        if isinstance(j, td.Spherical):
            out.append(v[..., k : k + 3])
        elif isinstance(j, td.Free):
            out.append(v[..., k + 3 : k + 6])
    return out


@pytest.mark.parametrize("angle", [None, 0.0, 1e-12, 1e-5, 5e-3, 2e-2, 3.1])
def test_difference_inverts_integrate_on_every_joint_kind(angle):
    # angle: of every rotation in v (None: random in [0, 3]); the small ones take the series of
    # V(ω)⁻¹ (below 1e-2) and the logarithm of a rotation near the identity
    m = every_joint_model()
    rng = np.random.default_rng(2)
    for _ in range(20):
        q0 = td.random_configuration(m, rng)
        v = rng.standard_normal(m.nv)
        for w in _rotation_parts(m, v):  # rotation angles below π: the log returns them unchanged
            w *= (rng.uniform(0, 3.0) if angle is None else angle) / np.linalg.norm(w)
        q1 = td.integrate(m, q0, v, 1.0)
        d = td.difference(m, q0, q1)
        # integrate and the logarithm are each a few roundings of quantities of size 1 + |q| + |v|;
        # the free joint's translation mixes in the rotation's error times |v| (V(ω)⁻¹ p); the log's
        # derivative is at most (θ/2)/sin(θ/2) ≤ π/2 below θ = 3
        s = 1 + np.abs(q0).max() + np.abs(v).max()
        assert_below(d - v, np.pi / 2 * rounding_bound(m.nq) * s**2, "difference(q0, q0 ⊕ v) − v", size=1)


def test_difference_of_a_rotation_beyond_pi_is_the_shorter_one():
    m = td.Model()
    m.add_body("ball", None, td.Spherical())
    q0 = td.neutral(m)
    v = np.array([4.0, 0, 0])  # 4 rad about x = 2π − 4 rad the other way
    d = td.difference(m, q0, td.integrate(m, q0, v, 1.0))
    assert_within_rounding(d, [4.0 - 2 * np.pi, 0, 0], [2 * np.pi, 0, 0], 4, what="the shorter rotation")


def test_difference_is_zero_between_equal_configurations_and_between_opposite_quaternions():
    m = every_joint_model()
    q = td.random_configuration(m, 5)
    np.testing.assert_array_equal(td.difference(m, q, q), np.zeros(m.nv))
    flipped = q.copy()
    for sl, _ in quaternion_slices(m):
        flipped[sl] *= -1  # the same rotations
    np.testing.assert_array_equal(td.difference(m, q, flipped), np.zeros(m.nv))


def test_interpolate_ends_at_its_endpoints_and_moves_at_a_constant_rate():
    m = every_joint_model()
    rng = np.random.default_rng(4)
    q0, q1 = td.random_configuration(m, rng), td.random_configuration(m, rng)
    s = 1 + np.abs(q0).max() + np.abs(q1).max()
    bound = np.pi / 2 * rounding_bound(m.nq) * s**2
    np.testing.assert_array_equal(td.interpolate(m, q0, q1, 0.0), td.integrate(m, q0, np.zeros(m.nv), 1.0))
    assert_below(td.interpolate(m, q0, q1, 1.0) - q1 * _sign(m, td.interpolate(m, q0, q1, 1.0), q1), bound, "u = 1")
    d = td.difference(m, q0, q1)
    half = td.interpolate(m, q0, q1, 0.5)  # a geodesic: the half-way point splits d in two halves
    assert_below(td.difference(m, q0, half) - d / 2, bound, "q0 → q(½)")
    assert_below(td.difference(m, half, q1) - d / 2, bound, "q(½) → q1")


def _sign(m, qa, qb):
    """+1 on q, except −1 on a quaternion of qb whose opposite is qa's (the same rotation)."""
    s = np.ones(m.nq)
    for sl, _ in quaternion_slices(m):
        if qa[sl] @ qb[sl] < 0:
            s[sl] = -1
    return s


def test_batched_integrate_difference_interpolate_equal_their_single_forms():
    m = every_joint_model()
    rng = np.random.default_rng(6)
    Q0, Q1 = td.random_configuration(m, rng, size=9), td.random_configuration(m, rng, size=9)
    V, u = rng.standard_normal((9, m.nv)), rng.uniform(-0.5, 1.5, 9)
    Q, D, I = td.integrate(m, Q0, V, 0.3), td.difference(m, Q0, Q1), td.interpolate(m, Q0, Q1, u)
    assert Q.shape == (9, m.nq) and D.shape == (9, m.nv) and I.shape == (9, m.nq)
    for b in range(9):
        np.testing.assert_array_equal(Q[b], td.integrate(m, Q0[b], V[b], 0.3))
        np.testing.assert_array_equal(D[b], td.difference(m, Q0[b], Q1[b]))
        np.testing.assert_array_equal(I[b], td.interpolate(m, Q0[b], Q1[b], u[b]))
    np.testing.assert_array_equal(td.interpolate(m, Q0, Q1, 0.25)[3], td.interpolate(m, Q0[3], Q1[3], 0.25))
    assert td.difference(m, Q0[:0], Q1[:0]).shape == (0, m.nv)


def test_random_configuration_batches():
    m = every_joint_model()
    m.set_joint_limits("hinge", -0.1, 0.2)
    Q = td.random_configuration(m, 3, size=500)
    assert Q.shape == (500, m.nq)
    np.testing.assert_array_equal(Q, td.random_configuration(m, 3, size=500))
    assert np.all((Q[:, m.q_index("hinge")] >= -0.1) & (Q[:, m.q_index("hinge")] <= 0.2))
    for sl, _ in quaternion_slices(m):
        assert np.abs(np.linalg.norm(Q[:, sl], axis=1) - 1).max() <= rounding_bound(4)
    assert len({tuple(q) for q in Q}) == 500  # independent rows
    assert td.random_configuration(m, 3, size=0).shape == (0, m.nq)
    assert td.random_configuration(m, 3).shape == (m.nq,)
    with pytest.raises(ValueError, match="size must be >= 0"):
        td.random_configuration(m, 3, size=-1)
    with pytest.raises(TypeError, match="size must be None or an integer"):
        td.random_configuration(m, 3, size=2.0)


def test_difference_interpolate_integrate_refuse_bad_input():
    m = every_joint_model()
    q = td.neutral(m)
    with pytest.raises(ValueError, match=r"q1 must have shape \(nq,\) = \(15,\) or \(B, 15\), got \(3,\)"):
        td.difference(m, q, q[:3])
    with pytest.raises(ValueError, match="must all be single configurations or batches of the same size"):
        td.difference(m, q, np.stack([q, q]))
    with pytest.raises(ValueError, match="q0 contains NaN"):
        td.difference(m, np.where(np.arange(m.nq) == 9, np.nan, q), q)
    bad = q.copy()
    bad[m.q_index("ball") : m.q_index("ball") + 4] = (0, 0, 0, 2)
    with pytest.raises(ValueError, match="q1: the quaternion of joint 'ball' .* has norm 2, not 1"):
        td.difference(m, q, bad)
    with pytest.raises(ValueError, match=r"batch item 1"):
        td.difference(m, np.stack([q, q]), np.stack([q, bad]))
    with pytest.raises(TypeError, match="q0 must be a real numeric array"):
        td.difference(m, q.astype(complex), q)
    with pytest.raises(ValueError, match="u must be a number or \\(2,\\) values"):
        td.interpolate(m, np.stack([q, q]), np.stack([q, q]), [0.5, 0.5, 0.5])
    with pytest.raises(ValueError, match="u contains NaN"):
        td.interpolate(m, q, q, np.nan)
    with pytest.raises(ValueError, match="must all be single vectors or batches of the same size"):
        td.integrate(m, np.stack([q, q]), np.zeros((3, m.nv)), 1.0)
    with pytest.raises(ValueError, match="must all be single vectors or batches of the same size"):
        td.integrate(m, np.stack([q, q]), np.zeros(m.nv), 1.0)
    Q = np.stack([q, q])
    td.difference(m, Q, Q)
    np.testing.assert_array_equal(Q, np.stack([q, q]))  # inputs untouched


def test_difference_and_interpolate_agree_with_pinocchio():
    # Pinocchio's free flyer is SE(3) (its difference is log6(M0⁻¹M1)), as td's integrate: the
    # whole v compares, the free joint's translation included
    pin = pytest.importorskip("pinocchio")
    from treedyn.tools.peers import to_pinocchio

    m = every_joint_model()
    pm = to_pinocchio(m)
    assert (pm.nq, pm.nv) == (m.nq, m.nv)
    rng = np.random.default_rng(8)
    for _ in range(10):
        q0, q1 = td.random_configuration(m, rng), td.random_configuration(m, rng)
        d, dp = td.difference(m, q0, q1), pin.difference(pm, q0, q1)
        s = 1 + np.abs(q0).max() + np.abs(q1).max() + np.abs(d).max()
        # two computations of the same logarithm, each a few roundings of magnitudes ≤ s², its
        # derivative at most π/2 (angles ≤ π; no pair near π here: checked)
        for w in _rotation_parts(m, d):
            assert np.linalg.norm(w) < np.pi - 1e-3
        assert_below(d - dp, 2 * np.pi / 2 * rounding_bound(m.nq) * s**2, "difference = Pinocchio's", size=1)
        u = rng.uniform(0, 1)
        qi, qip = td.interpolate(m, q0, q1, u), pin.interpolate(pm, q0, q1, u)
        assert_below(qi - qip * _sign(m, qi, qip), 2 * np.pi / 2 * rounding_bound(m.nq) * s**2, "interpolate", size=1)
