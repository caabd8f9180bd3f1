"""treedyn.sim.simulate (python/treedyn/sim/simulate.py): orders of accuracy on a problem with a known
solution, adaptive error control, statistics, and clean failures that never loop forever."""

import warnings

import numpy as np
import pytest
from conftest import assert_below, rounding_bound
from hypothesis import given, settings
from hypothesis import strategies as st

import treedyn as td
from treedyn.scenes import chain, random_tree

K, MASS = 4.0, 1.0
OMEGA = np.sqrt(K / MASS)


def oscillator():
    """A point mass on a prismatic joint with a spring τ = −k q: q(t) = cos(ω t)."""
    m = td.Model(gravity=(0, 0, 0))
    m.add_body("mass", None, td.Prismatic((1, 0, 0)), inertia=td.Inertia.point(MASS))
    return m


def spring(t, q, v):
    return -K * q


def final_error(method, dt):
    m = oscillator()
    r = td.simulate(m, "aba", [1.0], [0.0], 1.0, method=method, dt=dt, tau=spring)
    assert r.success and r.t[-1] == pytest.approx(1.0)
    return abs(r.q[-1, 0] - np.cos(OMEGA)) + abs(r.v[-1, 0] + OMEGA * np.sin(OMEGA))


@pytest.mark.parametrize("method, order", [("euler", 1), ("semi-implicit-euler", 1), ("rk4", 4)])
def test_fixed_step_methods_converge_at_their_order(method, order):
    e1, e2 = final_error(method, 0.01), final_error(method, 0.005)
    # the observed order log2(e(h)/e(h/2)) = p + O(h) (the next term of the error expansion): ±0.15
    assert np.log2(e1 / e2) == pytest.approx(order, abs=0.15)


@pytest.mark.parametrize("method", ["dopri5", "rkf45"])
def test_adaptive_methods_meet_the_tolerance_and_cost_less_when_looser(method):
    m = oscillator()
    runs = {}
    for tol in (1e-4, 1e-8):
        r = td.simulate(m, "aba", [1.0], [0.0], 3.0, method=method, rtol=tol, atol=tol, tau=spring)
        assert r.success, r.message
        err = np.abs(r.q[:, 0] - np.cos(OMEGA * r.t)).max()
        assert err < 100 * tol  # global error stays within a small multiple of the local tolerance
        assert r.n_accepted + 1 == len(r.t)
        runs[tol] = r
    assert runs[1e-4].n_evals < runs[1e-8].n_evals
    # Dormand–Prince reuses its last stage: 6 new evaluations per step, Fehlberg 6 as well + 1 at each step start
    r = runs[1e-8]
    per_step = (r.n_evals - 1) / (r.n_accepted + r.n_rejected)
    assert per_step == pytest.approx(6.0 if method == "dopri5" else 6.0, abs=1.01)


def test_quaternion_states_stay_on_the_manifold_and_energy_is_kept():
    m = random_tree(6, 3, floating_base=True, gravity=(0, 0, 0))
    rng = np.random.default_rng(0)
    q0, v0 = td.random_configuration(m, rng), rng.standard_normal(m.nv)
    r = td.simulate(m, "aba", q0, v0, 1.0, method="dopri5", rtol=1e-9, atol=1e-9)
    assert r.success
    from treedyn.algorithms.configuration import quaternion_slices

    # steps on the manifold: each step's exponential map rounds |quaternion| by a few u; over the
    # run's ≲ 1e3 steps the drift stays ≤ 1e3·4u ≈ 5e-13
    for sl, _ in quaternion_slices(m):
        np.testing.assert_allclose(np.linalg.norm(r.q[:, sl], axis=1), 1.0, rtol=0, atol=1e-12)
    # kinetic energy is conserved exactly by the flow; dopri5 at rtol = atol = 1e-9 over 1 s keeps the
    # global error (hence the energy's, relative) at ~1e2·tol = 1e-7
    E = [0.5 * v @ td.mass_matrix(m, q) @ v for q, v in zip(r.q, r.v)]
    assert np.ptp(E) < 1e-6 * E[0]


def test_collapsing_step_fails_with_a_reason_instead_of_looping():
    m = oscillator()
    # a force that jumps infinitely often near t = 0.5 defeats any error control
    jumpy = lambda t, q, v: np.array([1e6 * np.sign(np.sin(1.0 / max(abs(t - 0.5), 1e-300)))])
    with pytest.warns(
        td.SimulationWarning, match=r"stopped before t_end = 1: the step size collapsed .* at t = 0\.\d+"
    ):
        r = td.simulate(m, "aba", [0.0], [0.0], 1.0, method="dopri5", rtol=1e-10, atol=1e-12, tau=jumpy, min_step=1e-9)
    assert not r.success and "collapsed" in r.message
    assert r.t[-1] < 0.5 + 1e-6 and r.n_evals > 0


def test_max_steps_and_failing_dynamics_are_reported():
    m = oscillator()
    with pytest.warns(td.SimulationWarning, match="max_steps = 50 reached"):
        r = td.simulate(
            m, "aba", [1.0], [0.0], 100.0, method="dopri5", rtol=1e-10, atol=1e-10, tau=spring, max_steps=50
        )
    assert not r.success and "max_steps" in r.message
    # a mass without inertia: the dynamics fail at the first evaluation (SingularInertiaError)
    empty = td.Model(gravity=(0, 0, 0))
    empty.add_body("ghost", None, td.Prismatic((1, 0, 0)), inertia=td.Inertia.point(0.0))
    with pytest.raises(td.SimulationError, match="dynamics failed at t = 0: SingularInertiaError") as e:
        td.simulate(empty, "aba", [1.0], [0.0], 1.0, method="rk4", dt=0.01, on_failure="raise")
    assert isinstance(e.value.__cause__, td.SingularInertiaError)
    assert not e.value.result.success and e.value.result.t.tolist() == [0.0]
    r = td.simulate(empty, "aba", [1.0], [0.0], 1.0, method="rk4", dt=0.01, on_failure="return")  # quietly
    assert not r.success and "SingularInertiaError" in r.message


def test_bad_arguments():
    m = oscillator()
    with pytest.raises(ValueError, match="unknown method"):
        td.simulate(m, "aba", [0.0], [0.0], 1.0, method="leapfrog")
    with pytest.raises(ValueError, match="needs a positive step"):
        td.simulate(m, "aba", [0.0], [0.0], 1.0, method="rk4")
    with pytest.raises(ValueError, match=r"q0 must have shape \(nq,\) = \(1,\), got \(2,\)"):
        td.simulate(m, "aba", [0.0, 1.0], [0.0], 1.0)
    with pytest.raises(ValueError, match="on_failure"):
        td.simulate(m, "aba", [0.0], [0.0], 1.0, on_failure="ignore")
    with pytest.raises(ValueError, match="unknown solver"):
        td.simulate(m, "nope", [0.0], [0.0], 1.0)


def test_statistics_and_record_false():
    m = chain(3)
    r = td.simulate(m, td.make_solver("aba", m), np.zeros(3), np.zeros(3), 0.5, method="rk4", dt=0.01, record=False)
    assert r.success and r.q.shape == (2, 3) and r.n_accepted == 50 and r.n_evals == 200
    assert "200 evaluations" in repr(r)


def test_rk4_keeps_fourth_order_on_the_rotation_group():
    # a torque-free asymmetric body tumbling: positions on SE(3) (free joint), no closed form;
    # the reference is Dormand–Prince at a tight tolerance
    m = td.Model(gravity=(0, 0, 0))
    m.add_body("body", None, td.Free(), inertia=td.Inertia(2.0, (0.1, 0, 0), np.diag([0.3, 0.5, 0.7])))
    q0 = td.neutral(m)
    v0 = np.array([0.3, -0.2, 0.1, 2.0, 0.5, -1.0])
    T = 2.0
    ref = td.simulate(m, "aba", q0, v0, T, method="dopri5", rtol=1e-13, atol=1e-13)

    def err(dt):
        r = td.simulate(m, "aba", q0, v0, T, method="rk4", dt=dt)
        # compare positions and velocities (the sign of a quaternion is irrelevant)
        dq = min(
            np.abs(r.q[-1] - ref.q[-1]).max(),
            np.abs(np.r_[r.q[-1, :3] - ref.q[-1, :3], r.q[-1, 3:] + ref.q[-1, 3:]]).max(),
        )
        return dq + np.abs(r.v[-1] - ref.v[-1]).max()

    e1, e2 = err(0.02), err(0.01)
    # observed order 4 + O(h) (the reference's own error, 1e-13, is far below e2)
    assert np.log2(e1 / e2) == pytest.approx(4.0, abs=0.3)


# ---------------------------------------------------------------- loud: bad input, user errors, failures


@pytest.mark.parametrize(
    "arg, value, error, match",
    [
        ("q0", np.array([1.0 + 2j]), TypeError, "q0 must be a real numeric array, got dtype complex128"),
        ("v0", np.array([1.0], dtype=object), TypeError, "v0 must be a real numeric array, got dtype object"),
        ("q0", [np.nan], ValueError, "q0 contains NaN or inf"),
        ("v0", [[0.0]], ValueError, r"v0 must have shape \(nv,\) = \(1,\), got \(1, 1\)"),
        ("tau", np.array([1j]), TypeError, "tau must be a real numeric array, got dtype complex128"),
        ("tau", [1.0, 2.0], ValueError, r"tau must have shape \(nv,\) = \(1,\)"),
        ("tau", [np.inf], ValueError, "tau contains NaN or inf"),
        ("tau", "abc", TypeError, "tau must be a real numeric array, got dtype <U3"),
        ("f_ext", np.zeros((2, 5)), ValueError, r"f_ext must have shape \(n_bodies, 6\) = \(2, 6\)"),
        ("t_end", 1 + 0j, TypeError, "t_end must be a real number"),
        ("dt", np.nan, ValueError, "dt must be finite"),
        ("rtol", "1e-6", TypeError, "rtol must be a real number"),
    ],
)
def test_arguments_are_checked_before_the_run_and_named(arg, value, error, match):
    m = oscillator()
    kwargs = dict(q0=[1.0], v0=[0.0], t_end=1.0, method="rk4", dt=0.1)
    kwargs[arg] = value
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no ComplexWarning: complex input is refused, never truncated
        with pytest.raises(error, match=match):
            td.simulate(m, "aba", kwargs.pop("q0"), kwargs.pop("v0"), kwargs.pop("t_end"), **kwargs)


class ControllerBug(Exception):
    pass


@pytest.mark.parametrize("method", ["rk4", "dopri5"])
def test_exceptions_of_the_users_tau_propagate_unchanged(method):
    m = oscillator()

    def tau(t, q, v):
        if t > 0.25:
            raise ControllerBug("the controller failed")
        return -K * q

    with pytest.raises(ControllerBug, match="the controller failed"):
        td.simulate(m, "aba", [1.0], [0.0], 1.0, method=method, dt=0.01, tau=tau)

    def value_error(t, q, v):  # a ValueError too: it is the user's, not a failure of the dynamics
        raise ValueError("bad gain")

    with pytest.raises(ValueError, match="^bad gain$"):
        td.simulate(m, "aba", [1.0], [0.0], 1.0, method=method, dt=0.01, tau=value_error)


def test_a_bad_result_of_the_users_tau_is_an_error_naming_tau_and_t():
    m = oscillator()
    nan_late = lambda t, q, v: np.array([np.nan if t > 0.3 else 0.0])  # noqa: E731
    with pytest.raises(ValueError, match=r"tau\(t, q, v\) returned a bad value at t = 0.3.*: tau contains NaN"):
        td.simulate(m, "aba", [1.0], [0.0], 1.0, method="rk4", dt=0.01, tau=nan_late)
    with pytest.raises(ValueError, match=r"at t = 0: tau must have shape \(nv,\) = \(1,\), got \(2,\)"):
        td.simulate(m, "aba", [1.0], [0.0], 1.0, method="rk4", dt=0.01, tau=lambda t, q, v: np.zeros(2))
    with pytest.raises(TypeError, match="at t = 0: tau must be a real numeric array, got dtype complex128"):
        td.simulate(m, "aba", [1.0], [0.0], 1.0, method="rk4", dt=0.01, tau=lambda t, q, v: q * 1j)


def test_the_users_tau_cannot_change_the_state():
    m = oscillator()

    def tau(t, q, v):
        q += 1.0
        return -K * q

    with pytest.raises(ValueError, match="read-only"):
        td.simulate(m, "aba", [1.0], [0.0], 1.0, method="rk4", dt=0.01, tau=tau)


@pytest.mark.parametrize("method", ["rk4", "dopri5"])
def test_an_overflow_stops_with_a_warning_naming_the_time(method):
    # a unit mass pushed by τ = 1e307 from rest: v = 1e307 t, q = 1e307 t²/2. The Runge–Kutta sums of
    # stage velocities (weights up to 6 before the division) overflow once v > 1.8e308 / 6, t ≈ 3, and
    # q itself at t = 5.99: the run must stop between, saying so, and never return inf/NaN states
    m = oscillator()
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # numpy's overflow warnings are not the report
        with pytest.raises(
            td.SimulationError, match=r"stopped before t_end = 10: the step from t = [345](\.\d+)? overflowed"
        ):
            td.simulate(m, "aba", [0.0], [0.0], 10.0, method=method, dt=0.1, tau=[1e307], on_failure="raise")
    with pytest.warns(td.SimulationWarning, match="overflowed"):
        r = td.simulate(m, "aba", [0.0], [0.0], 10.0, method=method, dt=0.1, tau=[1e307])
    assert not r.success and 2.9 <= r.t[-1] < 5.99
    assert np.all(np.isfinite(r.q)) and np.all(np.isfinite(r.v))
    # the last good state is the exact solution: q = τ t²/2 is quadratic, which both methods integrate
    # exactly up to rounding (relative 1e-13: ~50 steps of a few roundings each)
    assert r.q[-1, 0] == pytest.approx(0.5e307 * r.t[-1] ** 2, rel=1e-13)
    assert r.v[-1, 0] == pytest.approx(1e307 * r.t[-1], rel=1e-13)


@pytest.mark.parametrize("error_norm", ["rms", "max"])
def test_a_model_without_degrees_of_freedom_reaches_t_end(error_norm):
    # nothing moves: the local error is empty, not NaN ("rms" used to reject every step until the
    # step size collapsed) and not an error ("max" of an empty array used to raise)
    model = td.Model()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = td.simulate(model, "aba", np.zeros(0), np.zeros(0), t_end=0.02, error_norm=error_norm)
    assert res.t[-1] == 0.02 and res.q.shape[1:] == (0,)


# ------------------------------------------------------------ t_eval: states at requested times
@pytest.mark.parametrize("method", ["rk4", "dopri5", "rkf45", "euler"])
def test_t_eval_on_step_times_gives_those_steps_states_and_the_same_steps(method):
    m = oscillator()
    kw = dict(method=method, dt=0.01, tau=spring, rtol=1e-8, atol=1e-8)
    full = td.simulate(m, "aba", [1.0], [0.0], 1.0, **kw)
    t_eval = full.t[::7]
    r = td.simulate(m, "aba", [1.0], [0.0], 1.0, t_eval=t_eval, **kw)
    np.testing.assert_array_equal(r.t, t_eval)
    np.testing.assert_array_equal(r.q, full.q[::7])
    np.testing.assert_array_equal(r.v, full.v[::7])
    assert (r.n_accepted, r.n_rejected) == (full.n_accepted, full.n_rejected)  # t_eval does not move the steps
    assert r.n_evals == full.n_evals  # no time inside the last step: no extra evaluation


@pytest.mark.parametrize("method", ["rk4", "dopri5", "rkf45"])
def test_t_eval_inside_steps_is_within_the_hermite_bound_of_the_exact_solution(method):
    # q(t) = cos ωt. The cubic Hermite interpolant of a step of length h errs by at most
    # h⁴/384·max|y⁗| (q⁗ = ω⁴ q, v⁗ = ω⁴ v: ω⁴ and ω⁵), plus the errors E_q, E_v of the step's end
    # states and h/4·(errors of their derivatives): |h00| + |h01| = 1 and |h10| + |h11| ≤ 1/4 on [0, 1];
    # the derivatives' errors are E_v for q and ω²E_q for v (q̈ = −ω²q)
    m = oscillator()
    kw = dict(method=method, dt=0.05, tau=spring, rtol=1e-7, atol=1e-7)
    full = td.simulate(m, "aba", [1.0], [0.0], 2.0, **kw)
    h = np.diff(full.t).max()
    E_q = np.abs(full.q[:, 0] - np.cos(OMEGA * full.t)).max()
    E_v = np.abs(full.v[:, 0] + OMEGA * np.sin(OMEGA * full.t)).max()
    t_eval = np.linspace(0.0, 2.0, 301)[1:-1]
    r = td.simulate(m, "aba", [1.0], [0.0], 2.0, t_eval=t_eval, **kw)
    assert r.success and r.t.shape == (299,) and r.q.shape == (299, 1) and r.v.shape == (299, 1)
    assert np.mean(np.isin(t_eval, full.t)) < 0.2  # most times are inside steps
    bound_q = E_q + h / 4 * E_v + h**4 / 384 * OMEGA**4
    bound_v = E_v + h / 4 * OMEGA**2 * E_q + h**4 / 384 * OMEGA**5
    assert bound_q < 1e-3 and bound_v < 2e-3  # far below a linear interpolant's h²ω²/8 ≈ 1e-3·(h/0.05)²
    assert np.abs(r.q[:, 0] - np.cos(OMEGA * t_eval)).max() <= bound_q
    assert np.abs(r.v[:, 0] + OMEGA * np.sin(OMEGA * t_eval)).max() <= bound_v
    assert r.n_evals == full.n_evals + (method == "rk4")  # rk4's last step needs its end acceleration


@pytest.mark.parametrize("method", ["rk4", "dopri5"])
def test_t_eval_follows_a_screw_motion_on_se3_exactly(method):
    # a free body with a spherical inertia at its origin and ω ∥ v: no velocity products, q̈ = 0,
    # so q(t) = q0 ⊕ t·v, the screw that integrate follows; the Runge–Kutta–Munthe-Kaas step and the
    # interpolant in the chart (δ ∥ v: every bracket vanishes) are exact up to rounding
    m = td.Model(gravity=(0, 0, 0))
    m.add_body("body", None, td.Free(), inertia=td.Inertia(1.0, (0, 0, 0), np.eye(3)))
    n = np.array([1.0, 2.0, 2.0]) / 3
    v0 = np.r_[0.7 * n, 2.5 * n]
    q0 = td.random_configuration(m, 0)
    t_eval = np.linspace(0, 1.5, 41)
    r = td.simulate(m, "aba", q0, v0, 1.5, method=method, dt=0.1, t_eval=t_eval)
    exact = np.array([td.integrate(m, q0, v0, t) for t in t_eval])
    # ≤ 40 steps and interpolations of a few roundings each, of magnitudes ≤ 1 + |q| + |v| t
    s = 1 + np.abs(exact).max() + np.abs(v0).max() * 1.5
    assert_below(r.q - exact, rounding_bound(40 * m.nq) * s, "q(t) on the screw", size=1)
    assert_below(r.v - v0, rounding_bound(40 * m.nv) * s, "v(t) constant", size=1)


def test_t_eval_after_a_failure_holds_the_times_up_to_the_last_good_state():
    m = oscillator()
    kw = dict(method="rk4", dt=0.1, tau=[1e307], on_failure="return")
    full = td.simulate(m, "aba", [0.0], [0.0], 10.0, **kw)
    t_eval = np.arange(0.0, 10.0, 0.05)
    r = td.simulate(m, "aba", [0.0], [0.0], 10.0, t_eval=t_eval, **kw)
    assert not r.success and r.message == full.message
    np.testing.assert_array_equal(r.t, t_eval[t_eval <= full.t[-1]])
    assert np.all(np.isfinite(r.q)) and np.all(np.isfinite(r.v))
    # q = τt²/2 is a cubic's special case: the Hermite interpolant is exact on it (to rounding)
    assert r.q[:, 0] == pytest.approx(0.5e307 * r.t**2, rel=1e-13, abs=1e294)


@pytest.mark.parametrize(
    "t_eval, error, match",
    [
        ([0.5, 0.2], ValueError, r"t_eval must be strictly increasing, got t_eval\[0\] = 0.5 >= t_eval\[1\] = 0.2"),
        ([0.2, 0.2], ValueError, "strictly increasing"),
        ([0.0, 1.5], ValueError, r"t_eval must lie within \[0, t_end\] = \[0, 1.0\]"),
        ([-0.1, 0.5], ValueError, "must lie within"),
        ([0.1, np.nan], ValueError, r"t_eval contains NaN or inf \(at index 1\)"),
        ([[0.1, 0.2]], ValueError, "t_eval must be a 1-D array"),
        (np.array([0.1j]), TypeError, "t_eval must be real numbers"),
        (["a"], TypeError, "t_eval must be real numbers"),
    ],
)
def test_bad_t_eval_is_refused_before_the_run(t_eval, error, match):
    calls = []

    def tau(t, q, v):
        calls.append(t)
        return -q

    with pytest.raises(error, match=match):
        td.simulate(oscillator(), "aba", [1.0], [0.0], 1.0, t_eval=t_eval, tau=tau)
    assert calls == []


def test_an_empty_t_eval_gives_no_states():
    r = td.simulate(oscillator(), "aba", [1.0], [0.0], 1.0, t_eval=[], tau=spring)
    assert r.success and r.t.shape == (0,) and r.q.shape == (0, 1) and r.v.shape == (0, 1)
    assert "0 states" in repr(r)


_SIMULATE_OPTIONS = {
    "t_end": st.sampled_from([0.01, 0.0, -1.0, 1e308, 10**30, np.nan, "a"]),
    "method": st.sampled_from(["rk4", "dopri5", "euler"]),
    "dt": st.sampled_from([None, 1e-3, 0.0, -1e-3, 1e308, np.inf, "a"]),
    "rtol": st.sampled_from([1e-6, 0.0, -1.0, 1e308, np.nan, "a"]),
    "atol": st.sampled_from([1e-6, 0.0, 1e-300, np.inf, None]),
    "max_steps": st.sampled_from([1000, 1, 0, -5, 2.5, True]),
    "min_step": st.sampled_from([None, 0.0, -1.0, 1e-300, 1e308, np.nan]),
    "stabilization": st.sampled_from([0.1, None, 0.0, 1e-300, 1e308, "a"]),
}


@settings(max_examples=max(10, settings.default.max_examples // 2))
@given(st.fixed_dictionaries({}, optional=_SIMULATE_OPTIONS))
def test_fuzz_simulate_options_are_refused_clearly_or_give_a_finite_result(options):
    """td.simulate's numeric options on a coupled chain (so that stabilization and the projection
    are used): a ValueError/TypeError naming the option (never an OverflowError: t_end = 1e308 with
    a fixed step raised one), or a finite trajectory (stopped early with a message where it must)."""
    m = chain(3)
    m.add_coupling("link2", "link1", polycoef=(0.0, 0.5))
    kw = {"t_end": 0.01, "method": "rk4", "dt": 1e-3, "on_failure": "return"} | options
    try:
        r = td.simulate(m, "drumwright", td.neutral(m), np.zeros(3), kw.pop("t_end"), **kw)
    except (ValueError, TypeError) as e:
        named = [k for k in [*options, "t_end", "dt", "tolerances"] if k in str(e)]
        assert named, f"the error names no option: {e}"
        return
    assert np.all(np.isfinite(r.q)) and np.all(np.isfinite(r.v))
    assert r.success or r.message
