"""treedyn/testing.py's contact-solver conformance kit: every built-in contact solver passes it, and
a solver that breaks one law of the contact model is caught by that law's check, by name."""

import importlib.metadata

import numpy as np
import pytest

import treedyn as td
from treedyn.sim import contact_solvers
from treedyn.sim.contact_solvers import CONTACT_SOLVERS, ContactSolver, ProxQPContactSolver
from treedyn.testing import check_contact_solver, contact_problems


@pytest.mark.parametrize("name", ["proxqp", "admm", "newton", "auto"])
def test_every_builtin_contact_solver_passes(name):
    # problem-level checks for the solver with solve() (6 problems), the three scenes for all, the soft
    # problem's two scenes for the C++ step's solvers
    assert check_contact_solver(name) == (9 if name == "proxqp" else 5)


def test_the_problems_have_contacts_friction_and_a_limit():
    problems = dict(contact_problems())
    assert len(problems) == 6
    for label, (G, g, b, mu, P, nL) in problems.items():
        assert G.shape == (P + nL + 4 * P,) * 2 and g.shape == (len(G),) and b.shape == (P + nL,), label
        assert mu.shape == (P,) and np.all(mu > 0), label
    assert problems["an arm striking its joint stop and the ground"][5] == 1  # one limit row
    assert problems["three boxes stacked, turned"][4] > 8  # box–box patches as well as the ground's corners
    assert problems["a ball 1 mm into the ground"][2].max() > 0  # a push-out target


class _Reference(ProxQPContactSolver):
    """The reference, whose answer each broken solver below spoils in one way."""

    def reference(self, G, g, b, mu, P, nL):
        return super().solve(G, g, b, mu, P, nL)[0]


class Pulling(_Reference):
    def solve(self, G, g, b, mu, P, nL=0):
        z = self.reference(G, g, b, mu, P, nL)
        z[0] = -1e-3
        return z, 1


class Nothing(_Reference):
    def solve(self, G, g, b, mu, P, nL=0):
        return np.zeros(len(g)), 0


class WideCone(_Reference):
    def solve(self, G, g, b, mu, P, nL=0):
        z = self.reference(G, g, b, mu, P, nL)
        z[P + nL :] *= 3.0
        return z, 1


class Frictionless(_Reference):
    def solve(self, G, g, b, mu, P, nL=0):
        z = np.zeros(len(g))
        z[: P + nL] = self.normal_impulses(G, g, b, P, nL)[0]
        return z, 1


class Overpushing(_Reference):
    def solve(self, G, g, b, mu, P, nL=0):
        z = self.reference(G, g, b, mu, P, nL)
        z[:P] *= 1.5
        z[P + nL :] *= 1.5
        return z, 1


class Mutating(_Reference):
    def solve(self, G, g, b, mu, P, nL=0):
        g *= 1.0 + 1e-12
        return super().solve(G, g, b, mu, P, nL)


class NoCount(_Reference):
    def solve(self, G, g, b, mu, P, nL=0):
        return super().solve(G, g, b, mu, P, nL)[0]


@pytest.mark.parametrize(
    "cls, message",
    [
        (Pulling, "an impulse is negative"),
        (Nothing, "ends penetrating"),
        (WideCone, "leaves its cone"),
        (Frictionless, "dissipates less than the reference"),
        (Overpushing, "separating row carries an impulse"),
        (Mutating, "modified its input g"),
        (NoCount, r"must return \(z, iterations\)"),
    ],
)
def test_a_solver_breaking_one_law_is_caught_by_it(cls, message):
    with pytest.raises(AssertionError, match=message):
        check_contact_solver(cls)
    assert "conformance:" not in " ".join(CONTACT_SOLVERS)  # the temporary name is removed on failure


def test_what_is_not_a_contact_solver_is_refused():
    with pytest.raises(ValueError, match="unknown contact solver 'lcp'; available: auto, admm, newton, proxqp"):
        check_contact_solver("lcp")
    with pytest.raises(TypeError, match="a contact solver's name or a treedyn.ContactSolver subclass"):
        check_contact_solver(td.Solver)


# ---------------------------------------------------------------- the registry (sim/contact_solvers.py)


def test_a_solver_registered_by_hand_is_used_by_name_and_builtins_stay():
    class Mine(ContactSolver):
        description = "mine"

        def solve(self, G, g, b, mu, P, nL=0):
            return ProxQPContactSolver(self.friction_edges, self.tolerance, self.max_iterations).solve(
                G, g, b, mu, P, nL
            )

    CONTACT_SOLVERS["mine"] = Mine
    try:
        assert td.available_contact_solvers()["mine"] == "mine"
        model, q, _ = td.testing._box_model(0.5)
        sim = td.ContactSimulator(model, 1e-3, contact_solver="mine")
        assert type(sim.contact_solver) is Mine
        assert sim.step(td.State(q, np.zeros(6))).n_contacts in (0, 4)
    finally:
        del CONTACT_SOLVERS["mine"]
    assert "mine" not in CONTACT_SOLVERS
    with pytest.raises(ValueError, match="'admm' is built in"):
        CONTACT_SOLVERS["admm"] = Mine
    with pytest.raises(TypeError, match="must be a treedyn.ContactSolver subclass"):
        CONTACT_SOLVERS["x"] = object


class _EntryPoint:
    def __init__(self, name, value, load):
        self.name, self.value, self._load = name, value, load

    def load(self):
        return self._load()


def _broken():
    raise ImportError("no module named 'gone'")


def test_plugins_that_cannot_be_used_are_skipped_with_a_warning_naming_them(monkeypatch):
    eps = [
        _EntryPoint("broken", "gone:Solver", _broken),
        _EntryPoint("admm", "evil:Admm", lambda: ProxQPContactSolver),
        _EntryPoint("not-a-solver", "pkg:thing", lambda: dict),
        _EntryPoint("fine", "pkg:Fine", lambda: ProxQPContactSolver),
    ]
    monkeypatch.setattr(contact_solvers, "entry_points", lambda group: eps if group == contact_solvers.GROUP else [])
    monkeypatch.setattr(CONTACT_SOLVERS, "_added", {})  # (what other tests registered in this process)
    CONTACT_SOLVERS.refresh()
    try:
        with pytest.warns(RuntimeWarning) as record:
            names = list(CONTACT_SOLVERS)
        said = " ".join(str(w.message) for w in record)
        assert "'broken' (gone:Solver) failed to load" in said and "ImportError" in said
        assert "two contact solver plugins are named 'admm' (built in and evil:Admm); using the first" in said
        assert "'not-a-solver' (pkg:thing) is not a treedyn.ContactSolver" in said
        assert names == ["auto", "admm", "newton", "proxqp", "fine"]
        assert CONTACT_SOLVERS["admm"] is contact_solvers.AdmmContactSolver
    finally:
        monkeypatch.undo()
        CONTACT_SOLVERS.refresh()


def test_the_group_is_read_from_the_installed_metadata(monkeypatch):
    # what the registry adds to the built-ins is what importlib.metadata lists for the group (listed after
    # the registry has read it: a plugin another test installs meanwhile is in the listing too)
    monkeypatch.setattr(CONTACT_SOLVERS, "_added", {})  # (what other tests registered in this process)
    CONTACT_SOLVERS.refresh()
    names = set(CONTACT_SOLVERS)
    listed = {ep.name for ep in importlib.metadata.entry_points(group=contact_solvers.GROUP)}
    builtin = {"auto", "admm", "newton", "proxqp"}
    assert builtin <= names and names - builtin <= listed


def test_a_soft_solve_stopped_early_is_caught_off_the_optimum():
    """The soft problem's check: ADMM stopped at 1e-3 (m/s) leaves the sliding box millimetres from Newton's
    optimum after 0.3 s; at its default it is within the micrometre."""
    from treedyn.testing import _check_soft

    assert _check_soft("admm", None) == 2
    with pytest.raises(AssertionError, match="a box sliding at 2 m/s ends .* from newton's optimum"):
        _check_soft("admm", 1e-3)
