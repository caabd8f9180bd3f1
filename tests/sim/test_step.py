"""The step core (python/treedyn/sim/step.py): a free joint's linear velocity stepped as the
world-frame velocity it is (free_velocity, transport), in td.simulate's first-order methods and the
contact simulator alike.

The expected values are the mechanics: a torque-free sphere keeps its world velocity u₀ (so its
speed, and its centre moves on the line p₀ + t u₀); under gravity the world velocity is that of a
point mass, whose first-order recurrences have closed forms — semi-implicit Euler u⁺ = u + h g,
p⁺ = p + h u⁺ gives p_n = p₀ + n h u₀ + h² g n(n+1)/2, explicit Euler (p⁺ = p + h u) n(n−1)/2 —
each within h g t/2 of the parabola p₀ + u₀ t + g t²/2; a ball launched sliding without spin rolls
after the friction has slowed it to 5/7 of its speed (the angular momentum about the contact point
is conserved: m v₀ r = m v r + (2/5) m r² v/r).
"""

import numpy as np
import pytest
from conftest import assert_below, rounding_bound

import treedyn as td
from treedyn.sim.contact import ContactSimulator
from treedyn.sim.step import _turn

RADIUS, MASS = 0.1, 1.0


def ball(gravity=(0.0, 0.0, 0.0), ground=False, mu=1.0):
    """A solid sphere (radius 0.1, 1 kg, its centre the body's origin) on a free joint."""
    model = td.Model(gravity=gravity)
    inertia = td.Inertia(MASS, (0, 0, 0), 0.4 * MASS * RADIUS**2 * np.eye(3))
    b = model.add_body("ball", None, td.Free(), inertia=inertia)
    model.add_geom(b, td.Sphere(RADIUS), friction=mu)
    if ground:
        model.add_geom(None, td.Plane(), friction=mu)
    return model


def rotation(quaternion):
    """R of an (x, y, z, w) quaternion (the textbook formula, not the code's)."""
    x, y, z, w = quaternion / np.linalg.norm(quaternion)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


def spinning_start(model):
    """A random orientation; 1 m/s along the body's x, 14 rad/s about its z (across the velocity)."""
    q0 = td.neutral(model)
    q0[:3] = (0.3, -0.2, 0.5)
    q0[3:7] = td.random_configuration(model, 5)[3:7]
    return q0, np.array([1.0, 0, 0, 0, 0, 14.0])


def run(model, how, q0, v0, t_end, h):
    """(t, q, v) every step: td.simulate with a first-order method, or the contact simulator."""
    if how.startswith("simulate"):
        r = td.simulate(model, "aba", q0, v0, t_end, method=how.split(":")[1], dt=h)
        return r.t, r.q, r.v
    sim = ContactSimulator(model, h, integrator=how.split(":")[1])
    traj = sim.run(td.State(q0.copy(), v0.copy()), t_end)
    return traj.t, traj.q, traj.v


HOW = ["simulate:semi-implicit-euler", "simulate:euler", "contact:semi-implicit", "contact:euler"]


@pytest.mark.parametrize("h", [1e-3, 1e-2])
@pytest.mark.parametrize("how", HOW)
def test_a_spinning_sphere_keeps_its_speed_and_moves_on_a_straight_line(how, h):
    model = ball()
    q0, v0 = spinning_start(model)
    u0 = rotation(q0[3:7]) @ v0[:3]  # the world velocity
    t, q, v = run(model, how, q0, v0, 1.0, h)
    n = len(t) - 1
    world = np.array([rotation(x) @ y for x, y in zip(q[:, 3:7], v[:, :3])])
    # each step rotates v by a few roundings: n steps drift by n·δ (the speed, 1 m/s)
    assert_below(np.linalg.norm(v[:, :3], axis=1) - 1.0, rounding_bound(n), "|v_lin| kept", size=1e-9)
    assert_below(world - u0, rounding_bound(n), "world velocity kept", size=1e-9)
    # the line p₀ + t u₀: n additions of h u to |p| ≲ 2, a few roundings each (≤ 1e-12 at n = 1000)
    assert_below(q[:, :3] - (q0[:3] + t[:, None] * u0), 2 * rounding_bound(n, c=4), "on the line", size=1e-9)
    # the spin is untouched (a sphere: no gyroscopic torque)
    assert_below(v[:, 3:] - v0[3:], rounding_bound(n) * 14, "ω kept", size=1e-9)


@pytest.mark.parametrize("how", HOW)
def test_under_gravity_the_centre_follows_the_steps_parabola(how):
    g = np.array([0.0, 0.0, -9.81])
    model = ball(gravity=g)
    q0, v0 = spinning_start(model)
    u0 = rotation(q0[3:7]) @ v0[:3]
    h = 1e-2
    t, q, _ = run(model, how, q0, v0, 1.0, h)
    n = np.arange(len(t))[:, None]
    semi = "semi" in how
    discrete = q0[:3] + n * h * u0 + h * h * g * (n * (n + 1) if semi else n * (n - 1)) / 2
    assert_below(q[:, :3] - discrete, rounding_bound(20 * len(t)) * 10, "the recurrence's closed form", size=1e-9)
    parabola = q0[:3] + t[:, None] * u0 + 0.5 * g * t[:, None] ** 2
    # the first-order methods' offset from the parabola: ± h g t / 2
    np.testing.assert_allclose(q[:, :3] - parabola, (1 if semi else -1) * h * g * t[:, None] / 2, atol=1e-12)


@pytest.mark.parametrize("integrator", ["semi-implicit", "euler"])
def test_a_ball_launched_sliding_ends_rolling_at_five_sevenths_of_its_speed(integrator):
    model = ball(gravity=(0, 0, -9.81), ground=True, mu=1.0)
    q0 = td.neutral(model)
    q0[2] = RADIUS
    state = td.State(q0, np.array([2.0, 0, 0, 0, 0, 0]))
    ContactSimulator(model, 1e-3, integrator=integrator).run(state, 2.0)
    u = rotation(state.q[3:7]) @ state.v[:3]
    omega = rotation(state.q[3:7]) @ state.v[3:]
    rolling = 5 / 7 * 2.0
    assert u[0] == pytest.approx(rolling, rel=1e-3)
    assert abs(u[1]) < 1e-9 and abs(u[2]) < 1e-3 * rolling
    # without slipping: the contact point's velocity u + ω × (−r e_z) is zero
    assert np.linalg.norm(u + np.cross(omega, [0, 0, -RADIUS])) < 1e-3 * rolling


def test_turn_is_the_rotation_of_the_rotation_vector():
    rng = np.random.default_rng(3)
    for theta in (0.0, 1e-9, 1e-3, 0.7, 3.0):
        axis = rng.standard_normal(3)
        axis /= np.linalg.norm(axis)
        x = rng.standard_normal(3)
        # Rodrigues with the unit axis: x cos θ + (n × x) sin θ + n (n·x)(1 − cos θ)
        expected = x * np.cos(theta) + np.cross(axis, x) * np.sin(theta) + axis * (axis @ x) * (1 - np.cos(theta))
        assert_below(_turn(theta * axis, x) - expected, rounding_bound(10) * 4, f"θ = {theta}", size=1)


# ------------------------------------------------------------------ step counts (issue 31, item 6)


def test_a_run_too_long_to_count_is_refused_naming_t_end_and_the_steps():
    """ContactSimulator.run(t_end=1e308) raised OverflowError (an int of inf steps), as did
    td.simulate's fixed-step methods; both now say how many steps t_end is, against max_steps."""
    from treedyn.sim.step import step_count

    assert step_count(0.0, 1.0, 0.25, 10) == 4 and step_count(1.0, 1.0, 0.1, 10) == 0
    assert step_count(0.0, 1.0, 0.3, 4) == 4  # the last step shortened to land on t_end
    with pytest.raises(ValueError, match=r"t_end = 1 is 5 steps of 0.25 s from t = -0.25: more than max_steps = 4"):
        step_count(-0.25, 1.0, 0.25, 4)
    model = ball(ground=True)
    sim = ContactSimulator(model, 1e-3)
    state = td.State(td.neutral(model), np.zeros(model.nv))
    for t_end, steps in ((1e308, "inf"), (2e3, "2e\\+06")):
        with pytest.raises(ValueError, match=rf"t_end = .* is {steps} steps of 0.001 s .* max_steps = 1000000"):
            sim.run(state, t_end)
    assert state.t == 0.0  # refused before any step
    run = sim.run(state, 0.01, max_steps=10)
    assert len(run.t) == 11 and run.t[-1] == 0.01
    with pytest.raises(ValueError, match="max_steps = 9"):
        sim.run(td.State(td.neutral(model), np.zeros(model.nv)), 0.01, max_steps=9)
    with pytest.raises(ValueError, match="max_steps must be >= 1"):
        sim.run(state, 0.02, max_steps=0)
    with pytest.raises(ValueError, match="t_end = 1e\\+308 is inf steps"):
        td.simulate(model, "aba", td.neutral(model), np.zeros(model.nv), 1e308, method="rk4", dt=1e-3)
