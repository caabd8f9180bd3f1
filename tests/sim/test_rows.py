"""The general rows of the C++ step (contact/rows.hpp): a joint's dry friction (a bounded impulse) and a
fixed tendon's limits (a unilateral row), hard against their closed forms, soft against mj_step."""

import numpy as np
import pytest

import treedyn as td

I_ZZ = 0.2


def _wheel(friction):
    """A wheel on a vertical axis (gravity does no work on it): inertia I_ZZ about its axis."""
    m = td.Model()
    m.add_body("w", None, td.Revolute((0, 0, 1)), inertia=td.Inertia(1.0, (0, 0, 0), np.diag([0.1, 0.1, I_ZZ])))
    m.set_joint_frictionloss("w", friction)
    return m


@pytest.mark.parametrize("tau", [0.3, 0.9])
def test_dry_friction_sticks_below_its_size_and_slides_against_it_above(tau):
    """|τ| < f: the wheel does not move; |τ| > f: it accelerates at (τ − f)/I (to the solver's
    tolerance per step, over 100 steps)."""
    f, h, n = 0.5, 1e-3, 100
    sim = td.ContactSimulator(_wheel(f), h)
    s = td.State.initial(sim.model)
    for _ in range(n):
        sim.step(s, tau=[tau])
    expect = max(tau - f, 0.0) / I_ZZ * n * h
    assert s.v[0] == pytest.approx(expect, abs=n * sim.qp_tolerance)


def test_dry_friction_stops_a_spinning_wheel_in_time():
    """From ω₀ the friction decelerates at f/I and stops the wheel at t = I ω₀ / f; then it stays."""
    f, h, w0 = 0.5, 1e-3, 2.0
    sim = td.ContactSimulator(_wheel(f), h)
    s = td.State(np.zeros(1), [w0])
    stop = None
    for k in range(1200):
        sim.step(s)
        if stop is None and abs(s.v[0]) < 1e-9:
            stop = (k + 1) * h
    assert stop == pytest.approx(I_ZZ * w0 / f, abs=h)
    assert abs(s.v[0]) < 1e-9
    assert s.q[0] == pytest.approx(I_ZZ * w0**2 / (2 * f), abs=2 * h * w0)


def test_dry_friction_needs_the_c_step():
    with pytest.raises(ValueError, match="admm"):
        td.ContactSimulator(_wheel(0.5), 1e-3, contact_solver="proxqp")


def test_tendon_limit_holds_the_combination_and_lets_the_rest_move():
    """Two wheels, L = q₁ + q₂ limited to [−0.3, 0.3], both pushed the same way: L stops at its
    bound (within the slop), after which the torque difference still turns q₁ − q₂."""
    m = td.Model()
    inertia = td.Inertia(1.0, (0, 0, 0), np.diag([0.1, 0.1, I_ZZ]))
    m.add_body("a", None, td.Revolute((0, 0, 1)), inertia=inertia)
    m.add_body("b", None, td.Revolute((0, 0, 1)), inertia=inertia)
    m.add_tendon("t", {"a": 1.0, "b": 1.0}, range=(-0.3, 0.3))
    sim = td.ContactSimulator(m, 1e-3)
    s = td.State.initial(m)
    for _ in range(2000):
        sim.step(s, tau=[1.0, 0.2])
    L = s.q.sum()
    assert 0.3 - 1e-3 <= L <= 0.3 + sim.slop + 1e-9
    # at the bound, the row's impulse λ (along (1, 1)) takes the common part: q̈₁ − q̈₂ = (1.0 − 0.2)/I
    assert s.v[0] - s.v[1] > 0 and abs(s.v.sum()) < 1e-6
    with pytest.raises(ValueError, match="range"):
        m.add_tendon("u", {"a": 1.0}, range=(1, 0))


def test_tendon_limit_from_outside_returns_as_a_critically_damped_spring():
    """L starts 0.1 outside: its first step's rate is h e/τ² / (1 + h/τ)²; it comes back in
    monotonically within a few τ, and leaves at no more than the spring's largest speed e/(e_Euler τ)
    (the unilateral row pushes, never pulls: it does not brake the return)."""
    m = td.Model()
    m.add_body("a", None, td.Revolute((0, 0, 1)), inertia=td.Inertia(1.0, (0, 0, 0), np.diag([0.1, 0.1, I_ZZ])))
    m.add_tendon("t", {"a": 2.0}, range=(0.0, 1.0))
    sim = td.ContactSimulator(m, 1e-3)
    s = td.State(np.array([-0.05]), np.zeros(1))  # L = −0.1, outside
    h, tau, e = 1e-3, sim.stabilization, 0.1 - sim.slop
    sim.step(s)
    assert 2 * s.v[0] == pytest.approx(h * e / tau**2 / (1 + h / tau) ** 2, rel=1e-6)
    L = []
    for _ in range(int(5 * tau / h)):
        sim.step(s)
        L.append(2 * s.q[0])
    assert np.all(np.diff(L) >= -1e-12) and L[-1] > 0  # monotone, back inside
    assert 2 * s.v[0] <= e / (np.e * tau) * (1 + 1e-6)


OWN_SOFTNESS = (  # (a joint's and a tendon's solreffriction/solimpfriction, the tendon's solreflimit/solimplimit)
    ('frictionloss="0.3"', 'frictionloss="0.3" solreffriction="0.05 0.5" solimpfriction="0.5 0.8 0.01"'),
    (
        'frictionloss="0.02">',
        'frictionloss="0.02" solreflimit="0.08 1" solimplimit="0.6 0.9 0.02" solreffriction="0.03 1.2">',
    ),
)


@pytest.mark.parametrize("own", [False, True], ids=["defaults", "own-softness"])
@pytest.mark.parametrize("contact_solver", ["auto", "admm"])
def test_soft_dry_friction_and_tendon_limits_step_as_mj_step(contact_solver, own):
    """With soft constraints (an MJCF model's default) dry friction and a tendon's limits are MuJoCo's
    rows (friction: r = 0, |λ| ≤ h f, Newton's Huber cost; a limit: unilateral when violated): a driven
    double pendulum with frictionloss on both joints and on a limited tendon over them follows mj_step
    to 1e-6 over 3 s (Newton: to its tolerance), sticking and sliding, its tendon on its limits; with the
    MuJoCo defaults and with the file's own solref/solimp for them (Model.set_row_softness)."""
    mujoco = pytest.importorskip("mujoco")
    xml = """<mujoco><compiler angle="radian"/><worldbody>
     <body name="a"><joint name="h1" axis="0 1 0" frictionloss="0.3" damping="0.05"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.02" contype="0" conaffinity="0"/>
      <body name="b" pos="0.3 0 0"><joint name="h2" axis="0 1 0" frictionloss="0.05"/>
       <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.02" contype="0" conaffinity="0"/></body></body>
     </worldbody><tendon><fixed name="t" limited="true" range="-0.4 0.4" frictionloss="0.02">
     <joint joint="h1" coef="1"/><joint joint="h2" coef="0.5"/></fixed></tendon>
     <actuator><motor joint="h1" gear="2"/></actuator></mujoco>"""
    for plain, with_softness in OWN_SOFTNESS if own else ():
        xml = xml.replace(plain, with_softness)
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    data = td.ContactSimulator(td.load_mjcf(xml), contact_solver=contact_solver).data()
    worst, on_limit = 0.0, 0
    for k in range(1500):
        d.ctrl[0] = data.ctrl[0] = 0.6 * np.sin(2 * k * m.opt.timestep)
        mujoco.mj_step(m, d)
        data.step()
        worst = max(worst, np.abs(data.q - d.qpos).max())
        on_limit += d.nl > 0
    assert worst < 1e-6 and on_limit > 100
