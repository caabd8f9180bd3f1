"""Tendons and actuators as model data (treedyn/model/actuation.py): their forces by hand, the
activation dynamics in closed form, the checks on bad input, and the simulator's ctrl."""

import pickle

import numpy as np
import pytest

import treedyn as td


def _two_links():
    m = td.Model()
    m.add_body("a", None, td.Revolute((0, 1, 0)), inertia=td.Inertia(1.0, (0, 0, -0.5), np.eye(3) * 0.1))
    m.add_body("b", "a", td.Prismatic((0, 0, 1)), inertia=td.Inertia(1.0, (0, 0, 0), np.eye(3) * 0.1))
    return m


def test_tendon_spring_damper_by_hand():
    m = _two_links()
    m.add_tendon("t", {"a": 2.0, "b": -1.0}, stiffness=3.0, damping=0.5, rest_length=0.1)
    q, v = np.array([0.3, 0.2]), np.array([1.0, -2.0])
    L, Ldot = 2 * 0.3 - 0.2, 2 * 1.0 + 2.0
    f = -(3.0 * (L - 0.1) + 0.5 * Ldot)
    assert np.allclose(m.tendon_lengths(q), [L], rtol=0, atol=1e-15)
    assert np.allclose(td.model.actuation.actuation_terms(m).tendon_passive(q, v), [2 * f, -f], rtol=0, atol=1e-14)


def test_tendon_dead_band_pulls_only_outside():
    m = _two_links()
    m.add_tendon("t", {"a": 1.0}, stiffness=2.0, rest_length=(-0.5, 0.5))
    T = td.model.actuation.actuation_terms(m)
    assert T.tendon_passive(np.array([0.4, 0]), np.zeros(2))[0] == 0.0
    assert T.tendon_passive(np.array([0.7, 0]), np.zeros(2))[0] == pytest.approx(-2.0 * 0.2)
    assert T.tendon_passive(np.array([-0.6, 0]), np.zeros(2))[0] == pytest.approx(2.0 * 0.1)


def test_actuators_by_hand():
    m = _two_links()
    m.add_tendon("t", {"a": 1.0, "b": 0.5})
    m.add_actuator("motor", "a", gear=2.0, ctrlrange=(-1, 1))
    m.add_actuator("servo", "b", gain=(50.0,), bias=(0.0, -50.0, -4.0), forcerange=(-10, 10))
    m.add_actuator("pull", "t", "tendon", gear=3.0)
    assert m.nu == 3 and m.actuator_names == ["motor", "servo", "pull"] and m.na == 0
    q, v, u = np.array([0.3, 0.1]), np.array([0.5, 0.2]), np.array([5.0, 0.2, -0.5])
    motor = 2.0 * 1.0  # the control clamped to 1, times the gear
    servo = np.clip(50 * 0.2 - 50 * 0.1 - 4 * 0.2, -10, 10)
    pull = -0.5 * 3.0 * np.array([1.0, 0.5])  # force u, moment gear·(coefficients)
    expect = np.array([motor, servo]) + pull
    assert np.allclose(m.actuator_forces(q, v, u), expect, rtol=0, atol=1e-13)
    # the force range clamps: a large error saturates at 10
    assert m.actuator_forces(q, v, [0, 5.0, 0])[1] == pytest.approx(10.0)


def test_filter_activation_in_closed_form():
    """ẇ = (u − w)/T stepped by explicit Euler: w_n = u (1 − (1 − h/T)^n) from w_0 = 0; the force
    uses the activation of the step's start."""
    m = _two_links()
    m.add_actuator("f", "a", dynamics="filter", time_constant=0.05)
    assert m.na == 1
    h, n, u = 1e-3, 40, 0.8
    sim = td.ContactSimulator(m, h)
    s = td.State.initial(m)
    for _ in range(n):
        sim.step(s, ctrl=[u])
    assert s.act[0] == pytest.approx(u * (1 - (1 - h / 0.05) ** n), rel=1e-12)


def test_bad_input_is_named():
    m = _two_links()
    with pytest.raises(ValueError, match="no moving joint is named 'x'"):
        m.add_actuator("u", "x")
    with pytest.raises(ValueError, match="no tendon is named"):
        m.add_actuator("u", "t", "tendon")
    with pytest.raises(ValueError, match="ctrlrange"):
        m.add_actuator("u", "a", ctrlrange=(1, -1))
    with pytest.raises(ValueError, match="dynamics"):
        m.add_actuator("u", "a", dynamics="muscle")
    with pytest.raises(ValueError, match="rest_length"):
        m.add_tendon("t", {"a": 1.0}, rest_length=(1, 0))
    with pytest.raises(ValueError, match="stiffness"):
        m.add_tendon("t", {"a": 1.0}, stiffness=-1)
    b = td.Model()
    b.add_body("ball", None, td.Spherical())
    with pytest.raises(ValueError, match="not a revolute or prismatic"):
        b.add_actuator("u", "ball")
    m.add_actuator("u", "a")
    with pytest.raises(ValueError, match="new non-empty"):
        m.add_actuator("u", "b")
    sim = td.ContactSimulator(m, 1e-3)
    with pytest.raises(ValueError, match="ctrl"):
        sim.step(td.State.initial(m), ctrl=[1.0, 2.0])
    with pytest.raises(ValueError, match="ctrl"):
        sim.step(td.State.initial(m), ctrl=[np.nan])


def test_pickled_with_its_actuators():
    m = _two_links()
    m.add_tendon("t", {"a": 1.0, "b": 0.5}, stiffness=1.0)
    m.add_actuator("u", "t", "tendon", gear=2.0)
    m2 = pickle.loads(pickle.dumps(m))
    q, v = np.array([0.3, 0.1]), np.array([0.5, 0.2])
    assert m2.tendons == m.tendons and m2.actuators == m.actuators
    assert np.array_equal(m2.actuator_forces(q, v, [1.0]), m.actuator_forces(q, v, [1.0]))


def test_simulator_adds_the_actuator_force():
    """One step with ctrl equals one step with the actuator's force given as tau."""
    m = _two_links()
    m.add_actuator("u", "a", gear=3.0)
    sim = td.ContactSimulator(m, 1e-3)
    s1, s2 = td.State.initial(m), td.State.initial(m)
    sim.step(s1, ctrl=[0.7])
    sim.step(s2, tau=[3.0 * 0.7, 0.0])
    assert np.array_equal(s1.q, s2.q) and np.array_equal(s1.v, s2.v)
    r = sim.run(td.State.initial(m), 0.01, ctrl=lambda t, q, v: [0.7])
    s3 = td.State.initial(m)
    for _ in range(10):
        sim.step(s3, ctrl=[0.7])
    assert np.allclose(r.q[-1], s3.q, rtol=0, atol=1e-14)


def test_step_batch_drives_each_world_as_step_does():
    m = _two_links()
    m.add_tendon("t", {"a": 1.0, "b": 0.5}, stiffness=2.0)
    m.add_actuator("u", "a", gear=3.0)
    sim = td.ContactSimulator(m, 1e-3)
    q, v = np.array([[0.1, 0.0], [0.3, -0.1]]), np.array([[0.0, 0.2], [1.0, 0.0]])
    u = np.array([[0.5], [-0.2]])
    expect = []
    for b in range(2):
        s = td.State(q[b], v[b])
        sim.step(s, ctrl=u[b])
        expect.append((s.q, s.v))
    sim.step_batch(q, v, ctrl=u)
    for b in range(2):
        assert np.array_equal(q[b], expect[b][0]) and np.array_equal(v[b], expect[b][1])
    f = td.Model()
    f.add_body("a", None, td.Revolute((0, 1, 0)))
    f.add_actuator("u", "a", dynamics="filter")
    with pytest.raises(ValueError, match="activation"):
        td.ContactSimulator(f, 1e-3).step_batch(np.zeros((2, 1)), np.zeros((2, 1)), ctrl=np.zeros((2, 1)))


def test_simulate_drives_the_actuators():
    """td.simulate with ctrl equals td.simulate with the actuator's force as tau (a hanging pendulum
    turned by a motor of gear 3)."""
    m = _two_links()
    m.add_actuator("u", "a", gear=3.0)
    q0, v0 = np.array([0.2, 0.0]), np.zeros(2)
    a = td.simulate(m, "aba", q0, v0, 0.2, method="rk4", dt=1e-3, ctrl=[0.4])
    b = td.simulate(m, "aba", q0, v0, 0.2, method="rk4", dt=1e-3, tau=[3.0 * 0.4, 0.0])
    assert np.array_equal(a.q, b.q)
