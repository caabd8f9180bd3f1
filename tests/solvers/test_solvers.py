"""The Solver interface and registry (python/treedyn/solvers), the C++ engines' input checks,
batching and threads."""

import multiprocessing
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from importlib.metadata import EntryPoint

import numpy as np
import pytest
from conftest import random_state, rel_err

import treedyn as td
from treedyn.scenes import chain, random_tree
from treedyn.solvers import registry
from treedyn.solvers.builtin import ABASolver, CRBACholeskySolver
from treedyn.solvers.redmax import RedMaxPCGSolver
from treedyn.testing import check_solver


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
    eps = [
        EntryPoint("aba", "treedyn.solvers.builtin:ABASolver", registry.GROUP),
        EntryPoint("broken", "treedyn_no_such_module:Solver", registry.GROUP),
        EntryPoint("notasolver", "numpy:ndarray", registry.GROUP),
    ]
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
    eps = [
        EntryPoint("aba", "test_solvers:_Refuses", registry.GROUP),  # a third party, listed first
        EntryPoint("aba", "treedyn.solvers.builtin:ABASolver", registry.GROUP),
    ]
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
@pytest.mark.parametrize("name", ["aba", "crba-cholesky", "redmax-direct", "redmax-pcg"])
def test_batched_equals_unbatched_bit_for_bit_on_any_thread_count(name):
    model = random_tree(12, 4)
    rng = np.random.default_rng(2)
    B = 37
    Q = np.stack([td.random_configuration(model, rng) for _ in range(B)])
    V, T = rng.standard_normal((B, model.nv)), rng.standard_normal((B, model.nv))
    # the RedMax solvers take external forces as model point forces
    F = None if name.startswith("redmax") else rng.standard_normal((B, model.n_bodies, 6))
    s = td.make_solver(name, model)
    single = np.stack([s.forward_dynamics(Q[b], V[b], T[b], None if F is None else F[b]) for b in range(B)])
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


def test_each_builtin_solver_is_one_bound_engine_type():
    # one C++ kernel type per algorithm behind one shared engine (cpp/include/treedyn/engine/engine.hpp)
    model = chain(4)
    engines = {}
    for name in td.available_solvers():
        s = td.make_solver(name, model)
        if not type(s).__module__.startswith("treedyn.solvers"):
            continue  # a plugin installed beside treedyn
        engine = getattr(s, "_engine", None) or s._impl
        assert isinstance(engine, td._core.Engine64), (name, type(engine))
        engines[name] = type(engine)
    assert len(engines) >= 9
    assert len(set(engines.values())) == len(engines), engines


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
        if "q[1] = 1e+300" not in str(e):  # the pivots' check names the coordinate; a result check cannot
            assert "forward dynamics overflowed to inf/NaN" in str(e)
    else:  # a solver may also get it right: q̈₁ = τ₁ / (I + m r²) underflows to 0, q̈₂ = τ₂ / m = 1 exactly
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
    q = np.array([[0.1, 0.2], [0.1, 1e30]])  # m r² = 1e60 overflows float32 (3.4e38)
    with pytest.raises(ValueError, match=r"batch item 1\), whose largest coordinate is q\[1\] = 1e\+30"):
        s.forward_dynamics(q, np.zeros((2, 2)), np.zeros((2, 2)))
    # in float64 1e30 is no overflow: M₁₁ = 1e60
    out = td.make_solver("aba", m).forward_dynamics(q, np.zeros((2, 2)), np.zeros((2, 2)))
    assert np.all(np.isfinite(out))


# ------------------------------------------------------------------ empty batches and batches of one
ALL_BUILTINS = [
    "aba",
    "aba-modified",
    "crba-cholesky",
    "drumwright",
    "crba-ltl",
    "cfa-oee",
    "jsiia",
    "redmax-direct",
    "redmax-pcg",
]
ENGINES = ALL_BUILTINS[:7]


class _Stateful(td.Solver):
    """A plugin with mutable state: M(q) is written into a buffer the instance keeps, the thread
    lets the others run (time.sleep(0) hands over the GIL), then the buffer is solved with. Two
    calls interleaved would solve with each other's M. Counts the calls inside it at once."""

    name = "test-stateful"
    capabilities = frozenset({"batch", "inverse_inertia", "branched", "floating_base", "multi_dof"})

    def __init__(self, model, dtype=np.float64, **options):
        super().__init__(model, dtype, **options)
        self._M = np.zeros((model.nv, model.nv))
        self.inside = self.most_inside = 0

    def _enter(self, q):
        self.inside += 1
        self.most_inside = max(self.most_inside, self.inside)
        self._M[:] = td.mass_matrix(self.model, q)
        time.sleep(0)

    def forward_dynamics(self, q, v, tau, f_ext=None):
        q, v, tau, batch = self.check_inputs(q, v, tau)
        if batch:
            out = np.empty_like(v)
            for b in range(len(q)):
                out[b] = self.forward_dynamics(q[b], v[b], tau[b])  # re-entrant: the lock is held already
            return out
        self._enter(q)
        x = np.linalg.solve(self._M, tau - td.bias_forces(self.model, q, v))
        self.inside -= 1
        return x

    def inverse_inertia(self, q, R):
        self._enter(q)
        x = np.linalg.solve(self._M, np.asarray(R, dtype=float))
        self.inside -= 1
        return x


def _solver_for(name, model):
    return _Stateful(model) if name == "plugin" else td.make_solver(name, model)


@pytest.mark.parametrize("name", ALL_BUILTINS + ["plugin"])
def test_empty_batch_gives_an_empty_result_and_a_batch_of_one_a_row(name):
    model = chain(6)
    s = _solver_for(name, model)
    empty = s.forward_dynamics(np.zeros((0, model.nq)), np.zeros((0, model.nv)), np.zeros((0, model.nv)))
    assert isinstance(empty, np.ndarray) and empty.shape == (0, model.nv) and empty.dtype == np.float64
    if name in ENGINES:
        f0 = np.zeros((0, model.n_bodies, 6))
        assert s.forward_dynamics(
            np.zeros((0, model.nq)), np.zeros((0, model.nv)), np.zeros((0, model.nv)), f0
        ).shape == (0, model.nv)
        with pytest.raises(ValueError, match=r"f_ext must have shape \(B, n_bodies, 6\) with B = 0"):
            s.forward_dynamics(
                np.zeros((0, model.nq)),
                np.zeros((0, model.nv)),
                np.zeros((0, model.nv)),
                np.zeros((1, model.n_bodies, 6)),
            )
    with pytest.raises(ValueError, match="same size"):
        s.forward_dynamics(np.zeros((0, model.nq)), np.zeros((1, model.nv)), np.zeros((1, model.nv)))
    with pytest.raises(ValueError, match="same size"):
        s.forward_dynamics(np.zeros((0, model.nq)), np.zeros(model.nv), np.zeros(model.nv))
    q, v, tau = random_state(model, np.random.default_rng(3))
    one = s.forward_dynamics(q[None], v[None], tau[None])
    assert one.shape == (1, model.nv)
    np.testing.assert_array_equal(one[0], s.forward_dynamics(q, v, tau))  # the same operations, item by item


# ------------------------------------------------------------------ one solver shared between threads
THREADS, CALLS = 8, 12


def _threaded_model(name):
    """A 40-body chain; for RedMax with joint springs, body damping and springs between bodies."""
    model = chain(40)
    if name.startswith("redmax"):
        rng = np.random.default_rng(5)
        for j in model.joint_names:
            model.set_joint_spring(j, stiffness=2.0, damping=0.3)
        for i in range(1, 41):
            model.set_body_damping(i, 0.2)
        for a, b in ((3, 17), (10, 40), (0, 25)):
            model.add_spring(
                a,
                rng.standard_normal(3) * 0.05,
                b,
                rng.standard_normal(3) * 0.05,
                stiffness=50.0,
                damping=1.0,
                rest_length=0.2,
            )
    return model


def _calls(s, model, inputs):
    """What one thread does: forward dynamics, M⁻¹R (16 columns: drumwright and crba-ltl spread
    them over the OpenMP threads) and, for RedMax, steps of its own State, CALLS times."""
    q, v, tau, R = inputs
    out = []
    state = td.State(q, v) if "step" in s.capabilities else None
    for _ in range(CALLS):
        out.append(s.forward_dynamics(q, v, tau))
        out.append(s.inverse_inertia(q, R))
        if state is not None:
            s.step(state)
            out += [state.q.copy(), state.v.copy()]
    return out


@pytest.mark.parametrize("name", ALL_BUILTINS + ["plugin"])
def test_a_solver_shared_by_eight_threads_gives_the_serial_results(name):
    # Every call is deterministic: the engines' kernels and RedMax's direct solve always run the
    # same operations; redmax-pcg starts inverse_inertia and forward_dynamics from zero and a step
    # from the state's own velocity (no loop closures here, whose columns would start from the
    # solver's previous step). So the results must be bit-identical to a serial run.
    model = _threaded_model(name)
    s = _solver_for(name, model)
    rng = np.random.default_rng(11)
    inputs = [random_state(model, rng) + (rng.standard_normal((model.nv, 16)),) for _ in range(THREADS)]
    before = td.get_num_threads()
    try:
        td.set_num_threads(2)
        serial = [_calls(s, model, x) for x in inputs]
        with ThreadPoolExecutor(THREADS) as pool:
            threaded = list(pool.map(lambda x: _calls(s, model, x), inputs))
    finally:
        td.set_num_threads(before)
    for t in range(THREADS):
        for a, b in zip(threaded[t], serial[t]):
            np.testing.assert_array_equal(a, b)
    if name == "plugin":
        assert s.most_inside == 1  # the base class's lock: never two calls inside at once


def test_redmax_direct_shared_by_threads_does_not_crash():
    # issue 12's reproducer, in a child process so that a crash fails this test, not the run
    code = (
        "import numpy as np, treedyn as td\n"
        "from concurrent.futures import ThreadPoolExecutor\n"
        "m = td.scenes.chain(40)\n"
        "s = td.make_solver('redmax-direct', m)\n"
        "q = td.random_configuration(m, np.random.default_rng(0))\n"
        "ref = s.inverse_inertia(q, np.eye(40))\n"
        "with ThreadPoolExecutor(8) as p:\n"
        "    out = list(p.map(lambda _: s.inverse_inertia(q, np.eye(40)), range(400)))\n"
        "assert all(np.array_equal(x, ref) for x in out)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"exit code {r.returncode}\n{r.stderr}"


class _Base(td.Solver):
    name = "test-base"

    def forward_dynamics(self, q, v, tau, f_ext=None):
        return np.zeros(self.model.nv)

    def helper(self):
        return 1

    @staticmethod
    def static(x):
        return x


class _SafeChild(_Base):
    thread_safe = True

    def other(self):
        return 2


def test_public_methods_are_serialized_unless_the_class_is_thread_safe():
    s = _Stateful(chain(4))
    for meth in ("forward_dynamics", "inverse_inertia"):
        assert getattr(type(s), meth)._serialized
    assert not hasattr(_Stateful.check_inputs, "_serialized")  # the base class's helpers stay as they are
    assert _Base.helper._serialized and _Base.static(3) == 3 and _Base(chain(2)).helper() == 1
    assert not hasattr(_SafeChild.other, "_serialized")
    for cls in (ABASolver, RedMaxPCGSolver):
        assert not hasattr(cls.forward_dynamics, "_serialized")  # they lock in C++
    # the default inverse_mass_matrix calls the locked inverse_inertia: the lock is re-entrant
    with ThreadPoolExecutor(4) as pool:
        out = list(pool.map(lambda _: s.inverse_mass_matrix(np.zeros(4)), range(8)))
    M = td.mass_matrix(s.model, np.zeros(4))
    for x in out:
        # backward error of a dense LU solve: |M X − I| <= c n eps |M| |X| (Higham, Thm. 9.4)
        assert np.abs(M @ x - np.eye(4)).max() <= 100 * 4 * np.finfo(float).eps * np.abs(M).max() * np.abs(x).max()


def _minv_300(_=None):
    model = chain(300)
    td.set_num_threads(2)  # 300 columns: drumwright's M⁻¹ runs on the pool's 2 threads
    return td.make_solver("drumwright", model).inverse_mass_matrix(np.full(300, 0.3))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork() is POSIX only")
def test_threads_work_in_a_child_forked_after_they_ran():
    # the child has none of the parent's worker threads: it must start its own, not wait for them
    before = td.get_num_threads()
    try:
        parent = _minv_300()
        with multiprocessing.get_context("fork").Pool(1) as pool:
            child = pool.apply_async(_minv_300).get(timeout=120)
    finally:
        td.set_num_threads(before)
    np.testing.assert_array_equal(child, parent)  # the same operations in both processes


@pytest.mark.parametrize("name", ["redmax-direct", "redmax-pcg"])
def test_redmax_with_loop_closures_shared_by_threads(name):
    # With loop closures a step also solves M̃⁻¹Gᵀ, and redmax-pcg starts those columns from the
    # solver's previous step (a warm start): with the threads' steps interleaved, each step starts
    # from another thread's columns, so the iterates differ though every solve meets tol. Each
    # PCG solve has ‖b − M̃x‖ <= tol ‖b‖, so x is within κ(M̃) tol of M̃⁻¹b (relative); λ then solves
    # (G M̃⁻¹Gᵀ) λ = ..., amplifying those errors by the condition number of G M̃⁻¹Gᵀ on its range
    # (the step drops eigenvalues below 1e-10 of the largest: a ball closing a planar four-bar
    # has dependent rows), with a factor 10 for the few solves a step chains. redmax-direct has no
    # warm start: bit-identical.
    from support.redmax import four_bar

    model = four_bar("ball")
    s = td.make_solver(name, model)
    rng = np.random.default_rng(4)
    starts = [
        td.State(td.neutral(model) + 0.01 * rng.standard_normal(model.nq), rng.standard_normal(model.nv))
        for _ in range(THREADS)
    ]

    def steps(state):
        state = state.copy()
        out = []
        for _ in range(CALLS):
            s.step(state)
            out.append(state.v.copy())
        return np.array(out)

    serial = [steps(x) for x in starts]
    with ThreadPoolExecutor(THREADS) as pool:
        threaded = list(pool.map(steps, starts))
    if name == "redmax-direct":
        for a, b in zip(threaded, serial):
            np.testing.assert_array_equal(a, b)
        return
    terms = td.make_solver("redmax-direct", model).terms(starts[0])
    M, G = terms["lhs"], terms["G"]
    ev = np.linalg.eigvalsh(G @ np.linalg.solve(M, G.T))
    ev = ev[ev > 1e-10 * ev.max()]
    bound = 10 * np.linalg.cond(M) * (ev.max() / ev.min()) * s.tol
    assert bound < 1e-3  # a bound that can fail
    for a, b in zip(threaded, serial):
        assert rel_err(a, b) <= bound


def test_the_thread_count_is_process_wide():
    # set from this thread, it holds in the others too (OpenMP's own count is per thread)
    before = td.get_num_threads()
    try:
        for threads in (1, 3):
            td.set_num_threads(threads)
            with ThreadPoolExecutor(1) as pool:
                assert pool.submit(td.get_num_threads).result() == (threads if td.build_info()["openmp"] else 1)
    finally:
        td.set_num_threads(before)


@pytest.mark.parametrize(
    "bad",
    [
        {"q": np.zeros(3)},
        {"v": np.full(2, np.nan)},
        {"tau": np.zeros((4, 2))},
        {"tau": np.array(["a", "b"])},
        {"q": np.array([0.0, 0.0, 0.0, 2.0, 0.0])},
    ],
)
def test_plugins_and_built_ins_check_inputs_alike(bad):
    # Solver.check_inputs (for plugin authors) runs the built-in solvers' own C++ checks
    m = td.Model()
    m.add_body("a", joint=td.Revolute())
    m.add_body("b", parent="a", joint=td.Spherical())
    args = {"q": td.neutral(m), "v": np.zeros(m.nv), "tau": np.zeros(m.nv)} | bad
    solver = td.make_solver("aba", m)
    with pytest.raises((TypeError, ValueError)) as built_in:
        solver.forward_dynamics(args["q"], args["v"], args["tau"])
    with pytest.raises(built_in.type) as plugin:
        solver.check_inputs(args["q"], args["v"], args["tau"])
    assert str(plugin.value) == str(built_in.value)


def test_check_inputs_returns_fresh_arrays_of_the_solver_dtype():
    m = td.scenes.chain(3)
    q, v, tau = np.zeros(3), np.zeros(3), np.ones(3)
    for dtype in (np.float64, np.float32):
        out = td.make_solver("aba", m, dtype=dtype).check_inputs(q, v, tau)
        assert [a.dtype for a in out[:3]] == [dtype] * 3 and out[3] is False
        assert not any(np.shares_memory(a, b) for a, b in zip(out[:3], (q, v, tau)))


# ------------------------------------------------------------------ out=
def _out_calls(s, model, rng):
    """(name, call(out), expected shape) for every method that takes out=: forward dynamics single
    and batched, M⁻¹R for one and several columns, the full M⁻¹."""
    q, v, tau = random_state(model, rng)
    B = 5
    Q = np.stack([td.random_configuration(model, rng) for _ in range(B)])
    V, T = rng.standard_normal((B, model.nv)), rng.standard_normal((B, model.nv))
    r, R = rng.standard_normal(model.nv), rng.standard_normal((model.nv, 3))
    return [
        ("forward_dynamics", lambda out=None: s.forward_dynamics(q, v, tau, out=out), (model.nv,)),
        ("forward_dynamics batch", lambda out=None: s.forward_dynamics(Q, V, T, out=out), (B, model.nv)),
        ("inverse_inertia vector", lambda out=None: s.inverse_inertia(q, r, out=out), (model.nv,)),
        ("inverse_inertia", lambda out=None: s.inverse_inertia(q, R, out=out), (model.nv, 3)),
        ("inverse_mass_matrix", lambda out=None: s.inverse_mass_matrix(q, out=out), (model.nv, model.nv)),
    ]


# float32 where the solver has it (the RedMax solvers and the test plugin are float64 only)
_OUT_CASES = [
    (name, dtype)
    for name in ALL_BUILTINS + ["plugin"]
    for dtype in (np.float64, np.float32)
    if dtype == np.float64 or not (name == "plugin" or name.startswith("redmax"))
]


@pytest.mark.parametrize("name, dtype", _OUT_CASES)
def test_out_receives_the_same_values_and_is_returned(name, dtype):
    # the same operations write into out as into a fresh array: the same bits
    model = random_tree(9, 2) if name not in ("cfa-oee", "jsiia") else chain(9)
    s = _Stateful(model) if name == "plugin" else td.make_solver(name, model, dtype=dtype)
    for what, call, shape in _out_calls(s, model, np.random.default_rng(8)):
        expected = call()
        out = np.full(shape, np.nan, dtype=dtype)
        got = call(out)
        assert got is out, what
        np.testing.assert_array_equal(out, expected, err_msg=what)


@pytest.mark.parametrize("name", ["aba", "drumwright", "redmax-direct", "plugin"])
def test_a_bad_out_is_refused_with_an_error_naming_out(name):
    model = chain(6)
    s = _solver_for(name, model)
    for what, call, shape in _out_calls(s, model, np.random.default_rng(9)):
        big = np.zeros((2 * shape[0],) + shape[1:])
        readonly = np.zeros(shape)
        readonly.flags.writeable = False
        bad = [
            (TypeError, "dtype float64", np.zeros(shape, dtype=np.float32)),
            (TypeError, "dtype float64", np.zeros(shape, dtype=np.int64)),
            (TypeError, "numpy.ndarray", np.zeros(shape).tolist()),
            (ValueError, "shape", np.zeros(shape[:-1] + (shape[-1] + 1,))),
            (ValueError, "shape", np.zeros((1,) + shape)),
            (ValueError, "C-contiguous", big[::2]),
            (ValueError, "writeable", readonly),
        ]
        for error, match, out in bad:
            with pytest.raises(error, match=f"out must .*{match}"):
                call(out)
        assert not big.any() and not readonly.any(), what  # nothing written before the checks


def test_out_must_not_share_memory_with_an_input():
    model = chain(6)
    nv = model.nv
    for name in ("drumwright", "redmax-pcg", "plugin"):
        s = _solver_for(name, model)
        q, v, tau = random_state(model, np.random.default_rng(4))
        buf = np.concatenate([tau, np.zeros(nv)])
        tau_view, out = buf[:nv], buf[nv - 1 : 2 * nv - 1]  # overlapping by one entry
        with pytest.raises(ValueError, match="out must not share memory with the input tau"):
            s.forward_dynamics(q, v, tau_view, out=out)
        np.testing.assert_array_equal(buf[:nv], tau)  # the input is untouched
        R = np.random.default_rng(5).standard_normal((nv, nv))
        with pytest.raises(ValueError, match="out must not share memory with the input R"):
            s.inverse_inertia(q, R, out=R)
        qq = np.zeros((nv, nv))
        qq[0, :] = q
        with pytest.raises(ValueError, match="out must not share memory with the input q"):
            s.inverse_mass_matrix(qq[0], out=qq)
        with pytest.raises(ValueError, match="out must not share memory with the input v"):
            s.forward_dynamics(q, v, tau, out=v)
        # disjoint halves of one buffer do not alias
        s.forward_dynamics(q, v, buf[:nv], out=buf[nv:])
        np.testing.assert_array_equal(buf[nv:], s.forward_dynamics(q, v, tau))


def test_a_plugin_declaring_out_is_not_wrapped():
    class _OwnOut(_Stateful):
        name = "test-own-out"

        def inverse_inertia(self, q, R, *, out=None):
            self.check_out(out, np.shape(R), q=q, R=R)
            out[...] = 7.0
            return out

    s = _OwnOut(chain(3))
    out = np.zeros(3)
    assert s.inverse_inertia(np.zeros(3), np.ones(3), out=out) is out and (out == 7).all()
    assert "out" in __import__("inspect").signature(_Stateful.forward_dynamics).parameters  # the fallback's


def test_threads_sharing_a_solver_each_with_its_own_out():
    # drumwright's M⁻¹ at 300 columns runs on 2 threads inside; every call writes only its own out
    model = chain(300)
    s = td.make_solver("drumwright", model)
    rng = np.random.default_rng(12)
    states = [random_state(model, rng) for _ in range(THREADS)]
    before = td.get_num_threads()
    try:
        td.set_num_threads(2)
        serial = [(s.inverse_mass_matrix(q), s.forward_dynamics(q, v, tau)) for q, v, tau in states]
        outs = [(np.empty((model.nv, model.nv)), np.empty(model.nv)) for _ in range(THREADS)]

        def work(t):
            q, v, tau = states[t]
            for _ in range(3):
                assert s.inverse_mass_matrix(q, out=outs[t][0]) is outs[t][0]
                assert s.forward_dynamics(q, v, tau, out=outs[t][1]) is outs[t][1]

        with ThreadPoolExecutor(THREADS) as pool:
            list(pool.map(work, range(THREADS)))
    finally:
        td.set_num_threads(before)
    for t in range(THREADS):
        np.testing.assert_array_equal(outs[t][0], serial[t][0])
        np.testing.assert_array_equal(outs[t][1], serial[t][1])


def test_forward_dynamics_takes_its_arguments_as_a_python_function_would():
    """The engines' forward_dynamics parses its own arguments (a CPython vectorcall method, not
    pybind11's dispatcher): positional or keyword q, v, tau, f_ext; keyword-only out; Python's
    TypeErrors for the rest."""
    model = chain(3)
    engine = td.make_solver("aba", model)._engine
    q, v, tau = np.zeros(3), np.ones(3), np.ones(3)
    ref = engine.forward_dynamics(q, v, tau)
    np.testing.assert_array_equal(engine.forward_dynamics(tau=tau, v=v, q=q), ref)
    np.testing.assert_array_equal(engine.forward_dynamics(q, v, tau, None), ref)
    out = np.empty(3)
    assert engine.forward_dynamics(q, v, tau, f_ext=None, out=out) is out
    np.testing.assert_array_equal(out, ref)
    for args, kwargs, match in [
        ((q, v), {}, "missing required argument 'tau'"),
        ((q, v, tau, None, out), {}, "positional arguments"),
        ((q, v, tau), {"outt": out}, "unexpected keyword argument 'outt'"),
        ((q, v, tau), {"q": q}, "multiple values for argument 'q'"),
    ]:
        with pytest.raises(TypeError, match=match):
            engine.forward_dynamics(*args, **kwargs)
    with pytest.raises(td.SingularInertiaError):  # the registered exception, as through pybind11
        td.make_solver("aba", _massless_leaf()).forward_dynamics(np.zeros(2), np.zeros(2), np.zeros(2))


def _massless_leaf():
    model = td.Model()
    a = model.add_body("a", None, td.Revolute((0, 0, 1)), td.Transform(), td.Inertia.box(1.0, (0.1, 0.1, 0.1)))
    model.add_body(
        "b", a, td.Revolute((0, 1, 0)), td.Transform(translation=(0.1, 0, 0)), td.Inertia(0.0, inertia=np.zeros((3, 3)))
    )
    return model


@pytest.mark.parametrize(
    "name,options",
    [
        ("aba", {}),
        ("aba", {"dtype": np.float32}),
        ("aba", {"specialise": True}),
        ("aba-modified", {"dtype": np.float32}),
        ("crba-cholesky", {}),
        ("crba-ltl", {"ltdl": True}),
        ("drumwright", {}),
        ("cfa-oee", {}),
        ("jsiia", {}),
        ("redmax-direct", {"h": 5e-3, "ordering": "leaf-to-root"}),
        ("redmax-pcg", {"tol": 1e-10, "max_iter": 50}),
    ],
)
def test_a_solver_pickles_as_what_it_was_made_from_with_the_same_dynamics_bit_for_bit(name, options):
    import pickle
    import warnings

    model = chain(7) if name in ("cfa-oee", "jsiia") else random_tree(9, 5, floating_base=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", td.codegen.CodegenWarning)  # no compiler: the generic kernel, both
        s = td.make_solver(name, model, **options)
        c = pickle.loads(pickle.dumps(s))
    assert type(c) is type(s) and c.dtype == s.dtype and c.model is not model
    for k, v in options.items():
        if k == "specialise":  # True when a compiler is at hand
            assert c.specialised == s.specialised
        else:
            assert getattr(c, k) == (np.dtype(v) if k == "dtype" else v)
    rng = np.random.default_rng(4)
    B = 5
    Q = np.stack([td.random_configuration(model, rng) for _ in range(B)])
    V, T = rng.standard_normal((B, model.nv)), rng.standard_normal((B, model.nv))
    np.testing.assert_array_equal(c.forward_dynamics(Q, V, T), s.forward_dynamics(Q, V, T))
    R = rng.standard_normal((model.nv, 3))
    np.testing.assert_array_equal(c.inverse_inertia(Q[0], R), s.inverse_inertia(Q[0], R))
    assert pickle.loads(pickle.dumps(c)).forward_dynamics(Q, V, T).tobytes() == s.forward_dynamics(Q, V, T).tobytes()
