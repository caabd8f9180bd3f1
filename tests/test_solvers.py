"""The Solver interface and registry (python/treedyn/solvers), the C++ engines' input checks,
batching and threads."""
import warnings
from importlib.metadata import EntryPoint

import numpy as np
import pytest

import treedyn as td
from treedyn.scenes import chain, random_tree
from treedyn.solvers import registry
from treedyn.solvers.builtin import ABASolver, CRBACholeskySolver
from treedyn.testing import check_solver

from conftest import random_state, rel_err


@pytest.mark.parametrize("cls", [ABASolver, CRBACholeskySolver])
def test_builtin_solvers_pass_the_conformance_checks(cls):
    assert check_solver(cls, rtol=None) == 4
    assert check_solver(cls, rtol=None, options={"dtype": np.float32}) == 4


def test_builtins_are_registered_through_entry_points():
    names = td.available_solvers()
    assert {"aba", "crba-cholesky"} <= set(names)
    assert all(isinstance(d, str) and d for d in names.values())
    assert isinstance(td.make_solver("aba", chain(3)), ABASolver)


def test_unknown_solver_lists_the_known_ones():
    with pytest.raises(ValueError, match=r"unknown solver 'nope'.*aba.*crba-cholesky"):
        td.make_solver("nope", chain(3))
    with pytest.raises(TypeError):
        td.make_solver(42, chain(3))
    with pytest.raises(TypeError, match="treedyn.Model"):
        td.make_solver("aba", "not a model")
    with pytest.raises(TypeError, match="unknown options"):
        td.make_solver("aba", chain(3), tolerance=1)
    with pytest.raises(TypeError, match="float64 or float32"):
        td.make_solver("aba", chain(3), dtype=np.int32)


class _Refuses(td.Solver):
    name = "refuses"

    @classmethod
    def supports(cls, model):
        return None if model.is_chain else "only unbranched chains"

    def forward_dynamics(self, q, v, tau, f_ext=None):
        return np.zeros(self.model.nv)


def test_make_solver_takes_classes_and_respects_supports():
    assert isinstance(td.make_solver(_Refuses, chain(3)), _Refuses)
    with pytest.raises(ValueError, match="only unbranched chains"):
        td.make_solver(_Refuses, random_tree(6, 0, branching=1.0))


def _fake_entry_points(monkeypatch, eps):
    monkeypatch.setattr(registry, "_entry_points", lambda: eps)
    registry.refresh()


def test_broken_plugin_warns_and_is_skipped(monkeypatch):
    eps = [EntryPoint("aba", "treedyn.solvers.builtin:ABASolver", registry.GROUP),
           EntryPoint("broken", "treedyn_no_such_module:Solver", registry.GROUP),
           EntryPoint("notasolver", "numpy:ndarray", registry.GROUP)]
    _fake_entry_points(monkeypatch, eps)
    try:
        with pytest.warns(RuntimeWarning) as rec:
            names = td.available_solvers()
        messages = " ".join(str(w.message) for w in rec)
        assert "'broken'" in messages and "failed to load" in messages
        assert "'notasolver'" in messages
        assert set(names) == {"aba"}
    finally:
        monkeypatch.undo()
        registry.refresh()


def test_duplicate_plugin_names_warn_and_the_first_wins(monkeypatch):
    eps = [EntryPoint("aba", "test_solvers:_Refuses", registry.GROUP),   # a third party, listed first
           EntryPoint("aba", "treedyn.solvers.builtin:ABASolver", registry.GROUP)]
    _fake_entry_points(monkeypatch, eps)
    try:
        with pytest.warns(RuntimeWarning, match="two solver plugins are named 'aba'"):
            classes = registry.list_solver_classes()
        assert classes["aba"] is ABASolver  # treedyn's own entry points are read first
    finally:
        monkeypatch.undo()
        registry.refresh()


def test_discovery_is_lazy_and_cached(monkeypatch):
    calls = []
    real = registry._entry_points

    def counting():
        calls.append(1)
        return real()

    monkeypatch.setattr(registry, "_entry_points", counting)
    registry.refresh()
    try:
        assert calls == []
        td.available_solvers()
        td.make_solver("aba", chain(2))
        td.available_solvers()
        assert len(calls) == 1
    finally:
        monkeypatch.undo()
        registry.refresh()


# ------------------------------------------------------------------ input checks
@pytest.fixture(params=["aba", "crba-cholesky"])
def solver_and_state(request):
    model = random_tree(8, 3, floating_base=True)
    rng = np.random.default_rng(0)
    return td.make_solver(request.param, model), random_state(model, rng)


def test_wrong_shapes_raise_value_errors_that_name_the_argument(solver_and_state):
    s, (q, v, tau) = solver_and_state
    with pytest.raises(ValueError, match=r"q must have shape \(nq,\)"):
        s.forward_dynamics(q[:-1], v, tau)
    with pytest.raises(ValueError, match="tau must have shape"):
        s.forward_dynamics(q, v, np.zeros((2, 2, 2)))
    with pytest.raises(ValueError, match="same size"):
        s.forward_dynamics(np.stack([q, q]), v, tau)
    with pytest.raises(ValueError, match="f_ext must have shape"):
        s.forward_dynamics(q, v, tau, np.zeros((3, 6)))
    with pytest.raises(ValueError, match="R must have shape"):
        s.inverse_inertia(q, np.zeros(3))


def test_bad_dtypes_raise_type_errors(solver_and_state):
    s, (q, v, tau) = solver_and_state
    with pytest.raises(TypeError, match="v must be a real numeric array, got dtype complex128"):
        s.forward_dynamics(q, v.astype(complex), tau)
    with pytest.raises(TypeError, match="tau must be a"):
        s.forward_dynamics(q, v, tau.astype(str))
    with pytest.raises(TypeError, match="q must be a"):
        s.forward_dynamics(object(), v, tau)
    # integers are numbers: accepted and converted
    s.forward_dynamics(q, np.zeros(len(v), dtype=int), tau)


def test_nan_and_inf_are_refused(solver_and_state):
    s, (q, v, tau) = solver_and_state
    for name, arr in (("q", q), ("v", v), ("tau", tau)):
        bad = arr.copy()
        bad[-1] = np.nan if name != "tau" else np.inf
        args = {"q": q, "v": v, "tau": tau, name: bad}
        with pytest.raises(ValueError, match=f"{name} contains NaN or inf"):
            s.forward_dynamics(**args)


def test_non_unit_quaternion_is_refused(solver_and_state):
    s, (q, v, tau) = solver_and_state
    bad = q.copy()
    bad[3:7] = 0.0
    with pytest.raises(ValueError, match="quaternion of joint 'body1'.*norm 0"):
        s.forward_dynamics(bad, v, tau)
    with pytest.raises(ValueError, match="quaternion"):
        td.mass_matrix(s.model, bad)


def test_inputs_are_not_modified(solver_and_state):
    s, (q, v, tau) = solver_and_state
    arrays = [q, v, tau, np.eye(s.model.nv)]
    for a in arrays:
        a.flags.writeable = False  # any write would raise
    s.forward_dynamics(q, v, tau)
    s.inverse_inertia(q, arrays[3])
    td.rnea(s.model, q, v, tau)
    td.integrate(s.model, q, v, 0.1)


def test_non_contiguous_and_float32_inputs_are_accepted(solver_and_state):
    s, (q, v, tau) = solver_and_state
    ref = s.forward_dynamics(q, v, tau)
    big = np.zeros((len(v), 2))
    big[:, 0] = v
    assert rel_err(s.forward_dynamics(q, big[:, 0], tau), ref) == 0
    # float32 input is converted to float64 once, exactly: the result is that of the rounded v
    v32 = v.astype(np.float32)
    assert np.array_equal(s.forward_dynamics(q, v32, tau), s.forward_dynamics(q, v32.astype(np.float64), tau))


# ------------------------------------------------------------------ batches and threads
@pytest.mark.parametrize("name", ["aba", "crba-cholesky"])
def test_batched_equals_unbatched_bit_for_bit_on_any_thread_count(name):
    model = random_tree(12, 4)
    rng = np.random.default_rng(2)
    B = 37
    Q = np.stack([td.random_configuration(model, rng) for _ in range(B)])
    V, T = rng.standard_normal((B, model.nv)), rng.standard_normal((B, model.nv))
    F = rng.standard_normal((B, model.n_bodies, 6))
    s = td.make_solver(name, model)
    single = np.stack([s.forward_dynamics(Q[b], V[b], T[b], F[b]) for b in range(B)])
    before = td.get_num_threads()
    try:
        for threads in (1, 2, 3):
            td.set_num_threads(threads)
            assert td.get_num_threads() == (threads if td.build_info()["openmp"] else 1)
            out = s.forward_dynamics(Q, V, T, F)
            assert out.shape == (B, model.nv)
            np.testing.assert_array_equal(out, single)
    finally:
        td.set_num_threads(before)
    with pytest.raises(ValueError):
        td.set_num_threads(0)


def test_error_in_a_batch_names_the_item():
    m = td.Model()
    m.add_body("a", None, td.Revolute((0, 0, 1)), inertia=td.Inertia.point(1.0, (1, 0, 0)))
    m.add_body("b", "a", td.Revolute((1, 0, 0)), inertia=td.Inertia.point(1.0, (1, 0, 0)))  # axis through the mass
    s = td.make_solver("aba", m)
    with pytest.raises(td.SingularInertiaError, match="batch item 0"):
        s.forward_dynamics(np.zeros((3, 2)), np.zeros((3, 2)), np.zeros((3, 2)))


def test_solver_is_frozen_at_construction():
    m = chain(3)
    s = td.make_solver("aba", m)
    m.add_body("extra", "link3")
    assert s.forward_dynamics(np.zeros(3), np.zeros(3), np.zeros(3)).shape == (3,)


def test_build_info_reports_the_build():
    info = td.build_info()
    assert info["eigen_version"].startswith("3.4")
    assert set(info["scalar_types"]) == {"float64", "float32"}
    assert isinstance(info["openmp"], bool) and "simd" in info
    assert info["march_native"] in (True, False)


@pytest.mark.parametrize("name", ["aba", "crba-cholesky"])
def test_overflow_is_reported_not_returned(name):
    m = chain(4)
    s32 = td.make_solver(name, m, dtype=np.float32)
    with pytest.raises(ValueError, match="overflowed"):
        s32.forward_dynamics(np.full(4, 0.3), np.full(4, 1e25), np.zeros(4))  # v² beyond float32 range
    s64 = td.make_solver(name, m)
    with pytest.raises(ValueError, match="overflowed"):
        s64.forward_dynamics(np.zeros(4), np.zeros(4), np.full(4, 1e308))
    with pytest.raises(ValueError, match="overflowed"):
        td.rnea(m, np.zeros(4), np.full(4, 1e200), np.zeros(4))


@pytest.mark.parametrize("name", ["aba", "aba-modified", "drumwright", "crba-ltl", "crba-cholesky", "jsiia", "cfa-oee"])
def test_huge_coordinates_are_reported_as_an_overflow_not_a_singular_inertia(name):
    # issue 12: q = 1e300 on a prismatic joint made M(q) inf/NaN, and a solver blamed the inertia. A mass
    # carried 1e300 m out along a turning arm: M₁₁ = I + m r² is not a double
    m = td.Model()
    m.add_body("arm", None, td.Revolute((0, 0, 1)))
    m.add_body("slider", "arm", td.Prismatic((1, 0, 0)), placement=td.Transform(translation=(0.1, 0, 0)))
    s = td.make_solver(name, m)
    q, z = np.array([0.3, 1e300]), np.zeros(2)
    try:
        out = s.forward_dynamics(q, z, np.ones(2))
    except ValueError as e:
        assert not isinstance(e, td.SingularInertiaError), str(e)
        if "q[1] = 1e+300" not in str(e):   # the pivots' check names the coordinate; a result check cannot
            assert "forward dynamics overflowed to inf/NaN" in str(e)
    else:   # a solver may also get it right: q̈₁ = τ₁ / (I + m r²) underflows to 0, q̈₂ = τ₂ / m = 1 exactly
        assert out.tolist() == [0.0, 1.0], out
    # and a model that is singular is still called so
    bad = td.Model()
    bad.add_body("ghost", None, td.Prismatic((1, 0, 0)), inertia=td.Inertia.point(0.0))
    with pytest.raises(td.SingularInertiaError):
        td.make_solver(name, bad).forward_dynamics([1e300], [0.0], [1.0])


def test_float32_overflow_in_a_batch_names_the_item():
    m = td.Model()
    m.add_body("arm", None, td.Revolute((0, 0, 1)))
    m.add_body("slider", "arm", td.Prismatic((1, 0, 0)), placement=td.Transform(translation=(0.1, 0, 0)))
    s = td.make_solver("aba", m, dtype=np.float32)
    q = np.array([[0.1, 0.2], [0.1, 1e30]])     # m r² = 1e60 overflows float32 (3.4e38)
    with pytest.raises(ValueError, match=r"batch item 1\), whose largest coordinate is q\[1\] = 1e\+30"):
        s.forward_dynamics(q, np.zeros((2, 2)), np.zeros((2, 2)))
    # in float64 1e30 is no overflow: M₁₁ = 1e60
    out = td.make_solver("aba", m).forward_dynamics(q, np.zeros((2, 2)), np.zeros((2, 2)))
    assert np.all(np.isfinite(out))
