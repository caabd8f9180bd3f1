"""sim/contact_solvers.py: the contact solver is chosen by name, and a new one is one class and one
row in CONTACT_SOLVERS."""

import numpy as np
import pytest

import treedyn as td
from treedyn.sim import contact_solvers


def _ball_on_the_ground():
    m = td.Model(gravity=(0, 0, -9.81))
    m.add_body("ball", None, td.Free(), inertia=td.Inertia(1.0, (0, 0, 0), 4e-3 * np.eye(3)))
    m.add_geom("ball", td.Sphere(0.1))
    m.add_geom(None, td.Plane())
    q = td.neutral(m)
    q[2] = 0.099  # 1 mm deep
    return m, td.State(q, np.zeros(m.nv))


def test_the_default_is_the_cpp_step_and_an_unknown_name_is_refused():
    m, _ = _ball_on_the_ground()
    assert isinstance(td.ContactSimulator(m, 1e-3).contact_solver, contact_solvers.AdmmContactSolver)
    with pytest.raises(ValueError, match="contact_solver must be one of 'admm', 'proxqp'"):
        td.ContactSimulator(m, 1e-3, contact_solver="lcp")


def reference_tolerance(model):
    return td.ContactSimulator(model, 1e-3, contact_solver="proxqp").qp_tolerance


def test_a_registered_contact_solver_is_the_one_used(monkeypatch):
    calls = []

    class Recording(contact_solvers.ProxQPContactSolver):
        def solve(self, G, g, b, mu, P, nL=0):
            calls.append((G.shape, P, nL))
            return super().solve(G, g, b, mu, P, nL)

    monkeypatch.setitem(contact_solvers.CONTACT_SOLVERS, "recording", Recording)
    m, state = _ball_on_the_ground()
    reference = td.ContactSimulator(m, 1e-3, contact_solver="proxqp").step(state.copy())
    step = td.ContactSimulator(m, 1e-3, contact_solver="recording").step(state.copy())
    assert calls == [((1 + 4, 1 + 4), 1, 0)]  # one contact, its normal and 4 friction edges
    # the impulse on the second geom, the ground: down (the ball gets the opposite, up)
    assert step.n_contacts == 1 and step.impulses[0, 2] < 0
    # the same problem solved again: equal to ProxQP's tolerance (its vector builds are not
    # repeatable to the last bit: docs/design.md, "Reproducibility"); 1 kg, eps_abs in m/s
    np.testing.assert_allclose(step.impulses, reference.impulses, rtol=0, atol=10 * reference_tolerance(m))
