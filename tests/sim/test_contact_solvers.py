"""sim/contact_solvers.py: the contact solver is chosen by name, and a new one is one class and one
row in CONTACT_SOLVERS."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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
    solver = td.ContactSimulator(m, 1e-3).contact_solver
    assert isinstance(solver, contact_solvers.AutoContactSolver) and solver.in_engine
    with pytest.raises(ValueError, match="contact_solver must be one of 'auto', 'admm', 'newton', 'proxqp'"):
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


# ------------------------------------------------------------------ options (issue 31, item 6)


@pytest.mark.parametrize("name", sorted(contact_solvers.CONTACT_SOLVERS))
def test_a_contact_solver_made_by_hand_checks_its_options(name):
    cls = contact_solvers.CONTACT_SOLVERS[name]
    assert cls(4, 1e-6, 100).max_iterations == 100
    for bad in (0, -5, 2**31):  # 0 and -5 were accepted; 2**31 is no C++ int
        with pytest.raises(ValueError, match="max_qp_iterations must be"):
            cls(4, 1e-6, bad)
    with pytest.raises(TypeError, match="max_qp_iterations must be an integer"):
        cls(4, 1e-6, 10.0)
    for bad in (0.0, -1.0, np.nan, np.inf):
        with pytest.raises(ValueError, match="qp_tolerance must be"):
            cls(4, bad, 100)
    with pytest.raises(TypeError, match="qp_tolerance must be a real number, got str 'a'"):
        cls(4, "a", 100)
    for bad in (-1, contact_solvers.MAX_FRICTION_EDGES + 1):
        with pytest.raises(ValueError, match="friction_edges must be"):
            cls(bad, 1e-6, 100)


_OPTIONS = {
    "dt": st.sampled_from([1e-3, 0.0, -1e-3, 1e308, np.nan, "a", True, None, 10**30]),
    "stabilization": st.sampled_from([0.02, 1e-300, 0.0, -1.0, 1e308, np.inf, "a", None]),
    "slop": st.sampled_from([1e-5, 0.0, -1e-5, 1e-300, 1e308, np.nan, "1"]),
    "qp_tolerance": st.sampled_from([None, 1e-6, 0.0, -1.0, 1e-300, 1e308, np.nan, "a"]),
    "max_qp_iterations": st.sampled_from([50, 1, 0, -5, 2**31, 10**30, 2.5, "a", True]),
    "push_out_limit": st.sampled_from([0.2, 0.0, -0.2, 1e-300, 1e308, np.inf, None]),
    "friction_edges": st.sampled_from([4, 0, 3, 2, -1, 10**30, 4.0, "4"]),
    "contact_solver": st.sampled_from(["admm", "proxqp"]),
}
_RUN = {
    "t_end": st.sampled_from([0.005, 0.0, -1.0, 1e308, 10**30, np.nan, "a", None]),
    "record_every": st.sampled_from([1, 2, 0, -5, 10**30, 1.5, None]),
    "max_steps": st.sampled_from([10**6, 3, 0, -5, 1.0, "a"]),
}


@settings(max_examples=max(10, settings.default.max_examples // 2))
@given(st.fixed_dictionaries({}, optional=_OPTIONS), st.fixed_dictionaries({}, optional=_RUN))
def test_fuzz_options_are_refused_clearly_or_give_a_finite_run(options, run):
    """Every numeric option of ContactSimulator and of its run: a ValueError/TypeError naming the
    option (never OverflowError, a numpy or pybind11 error), or a run whose states are finite."""
    m, state = _ball_on_the_ground()
    try:
        sim = td.ContactSimulator(m, **({"dt": 1e-3} | options))
        out = sim.run(state, **({"t_end": 0.005} | run))
    except (ValueError, TypeError) as e:  # an option named, or a step that overflowed said so (dt = 1e308)
        named = [k for k in [*options, *run, "t_end"] if k in str(e)]
        assert named or "overflowed at t = " in str(e), f"the error names no option: {e}"
        return
    assert np.all(np.isfinite(out.q)) and np.all(np.isfinite(out.v)) and np.isfinite(state.t)
