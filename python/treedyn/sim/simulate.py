"""Time integration of q̈ = FD(q, q̇, τ): fixed-step and adaptive Runge–Kutta methods.

Positions live on the joints' manifolds. The Runge–Kutta methods work in the local chart
q = q_n ⊕ δ (Runge–Kutta–Munthe-Kaas): δ obeys δ' = dexp⁻¹_δ(v), which for the rotation of a
spherical joint is ω + ½ δ×ω + 1/12 δ×(δ×ω) + O(δ³) (body-frame velocities, right
multiplication) and the same series with the se(3) bracket for a free joint; the truncation keeps
orders 4 and 5. Vector joints (revolute, prismatic, universal) have δ' = v.

Methods:
    ``"euler"``                explicit Euler, order 1
    ``"semi-implicit-euler"``  v ← v + h a(q, v), then q ← q ⊕ h v (symplectic Euler), order 1
    ``"rk4"``                  the classical fourth-order Runge–Kutta method
    ``"dopri5"``               adaptive Dormand–Prince 5(4), error per unit step, FSAL
    ``"rkf45"``                adaptive Runge–Kutta–Fehlberg 4(5), propagating the 4th-order
                               solution: the "fourth order Runge-Kutta adaptive step size
                               integrator" of ascher-pai-cloutier1996 Table 1
"""

from __future__ import annotations

import warnings

import numpy as np

from .. import _checks
from ..algorithms.configuration import difference, integrate
from ..model import Free, Model, Prismatic, Revolute, Universal
from ..model.actuation import actuation_terms, control_function, driven
from .result import Recorder, SimulationError, SimulationResult, SimulationWarning
from .step import (
    ADAPTIVE,
    FIXED,
    TABLEAUX,
    StepFailed,
    acceleration,
    dexpinv,
    fixed_step,
    free_dynamics,
    lie_blocks,
    real_array,
    runge_kutta_attempt,
    step_count,
    torque_function,
)

__all__ = ["simulate", "SimulationResult", "SimulationWarning", "SimulationError", "METHODS"]

METHODS = FIXED + ADAPTIVE


ON_FAILURE = ("warn", "raise", "return")


def _position_scale(model: Model, q: np.ndarray) -> np.ndarray:
    """Per velocity coordinate, the size of the matching position (for relative tolerances):
    |q| for angles and displacements, |p| for a free joint's translation, 1 for rotations."""
    out = np.ones(model.nv)
    for j, qi, vi in zip(model.joints, model.q_indices, model.v_indices):
        if isinstance(j, (Revolute, Prismatic, Universal)):
            out[vi : vi + j.nv] = np.abs(q[qi : qi + j.nq])
        elif isinstance(j, Free):
            out[vi : vi + 3] = np.abs(q[qi : qi + 3])
    return out


def simulate(
    model: Model,
    solver,
    q0,
    v0,
    t_end: float,
    *,
    method: str = "dopri5",
    dt: float | None = None,
    rtol: float = 1e-6,
    atol: float = 1e-6,
    tau=None,
    f_ext=None,
    max_steps: int = 1_000_000,
    min_step: float | None = None,
    record: bool = True,
    progress: bool = False,
    error_norm: str = "rms",
    on_failure: str = "warn",
    stabilization: float | None = 0.1,
    project: bool = True,
    t_eval=None,
    ctrl=None,
) -> SimulationResult:
    """Integrate the model from (q0, v0) over [0, t_end].

    solver: a Solver instance or a registered name (made with default options).
    method: one of METHODS. Fixed-step methods need ``dt``; adaptive ones start from ``dt`` when
    given and keep the local error below ``atol + rtol·|y|`` (RMS norm over q and v).
    tau: None (zero), a constant (nv,) array, or a function tau(t, q, v) -> (nv,) array. The
    function gets read-only views of q and v; an exception it raises propagates unchanged, and a
    result of the wrong dtype or shape, or with NaN/inf, raises TypeError / ValueError naming tau
    and t.
    ctrl: the model's actuators' controls, None (zero), an (nu,) array or a function ctrl(t, q, v):
    their force and the fixed tendons' spring–dampers (treedyn.model.actuation) are added to tau
    at every evaluation (not for actuators with activation dynamics: td.ContactSimulator steps
    those).
    f_ext: external forces passed to every evaluation, (n_bodies, 6).
    q0, v0, tau (an array), f_ext and the options are checked first (TypeError / ValueError
    naming the argument).
    The run stops — never loops forever — when the adaptive step falls below ``min_step``
    (default 1e-12·max(1, t_end)), after ``max_steps`` steps, or when the dynamics fail (a
    singular inertia, an overflow): the result then has success=False, a message saying why and
    when, and the trajectory up to the last good state. on_failure says what else happens then:
    ``"warn"`` (default) emits a ``SimulationWarning`` (a RuntimeWarning) with the message,
    ``"raise"`` raises ``SimulationError`` (its ``result`` attribute holds the partial result),
    ``"return"`` only returns the result (for callers that check ``success`` themselves).
    progress: show a progress bar over simulated time on stderr (``t=1.65/2.00 s``; where stderr is
    not a terminal, redrawn at most every 10 s: treedyn.util.progress).
    error_norm: how the adaptive methods measure the scaled local error over q and v: "rms" (the
    root mean square, as SciPy's solve_ivp) or "max" (the largest component).
    Constraints: the model's active loop closures and couplings (MJCF equalities, URDF mimic
    joints) are kept with the solver's ``inverse_inertia`` (td.constrained_forward_dynamics):
    stabilization is Baumgarte's time constant (s, default 0.1; None: none) and project (default
    True) moves q and v back onto C(q) = 0 (to 1e-10), G v = 0 after every accepted step
    (treedyn.constraints.project_positions: Gauss–Newton with minimum-norm steps; about 20% more
    time on a four-bar); project=False leaves the drift to Baumgarte alone (|C| ~ the integrator's error).
    t_eval: the times at which to report the state, as SciPy's ``solve_ivp``: strictly increasing
    and within [0, t_end] (else ValueError); the steps are the same as without it, and the result
    holds exactly these times (``record`` is then ignored; after a failure, the times up to the
    last good state). A time that ends a step gets that step's state; one inside a step, the
    cubic Hermite interpolant of the step's two end states and their derivatives — positions in
    the chart q = q_n ⊕ δ of the step's start (δ from td.difference, δ' = dexp⁻¹_δ(v), so
    quaternions stay unit), velocities from v and q̈ — whose error is O(h⁴) in the step size h
    (at most h⁴/384·max|y⁗| for a smooth solution y), the order of rk4 and of the 4th-order
    members of dopri5 and rkf45, and well below euler's O(h). The end acceleration comes from
    the next step's first evaluation (for the fixed-step methods, a time inside the last step
    costs one more).
    With constraints, interpolated states satisfy C(q) = 0 to the interpolation error.
    """
    from ..solvers.base import Solver
    from ..solvers.registry import make_solver

    _checks.instance(model, Model, "model")
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; methods are {', '.join(METHODS)}")
    _checks.choice(on_failure, "on_failure", ON_FAILURE)
    if isinstance(solver, str):
        solver = make_solver(solver, model, internal=True)
    elif not isinstance(solver, Solver):
        raise TypeError(f"solver must be a treedyn.Solver or a solver name, got {type(solver).__name__}")
    t_end = _checks.real(t_end, "t_end", positive=True)
    if dt is not None:
        dt = _checks.real(dt, "dt", positive=True)
    if method in FIXED and dt is None:
        raise ValueError(f"method {method!r} needs a positive step dt")
    _checks.choice(error_norm, "error_norm", ("rms", "max"))
    rtol, atol = _checks.real(rtol, "rtol"), _checks.real(atol, "atol")
    if rtol < 0 or atol < 0 or rtol + atol <= 0:
        raise ValueError(f"tolerances must be >= 0 and not both zero, got rtol={rtol}, atol={atol}")
    if min_step is not None:
        min_step = _checks.real(min_step, "min_step", nonnegative=True)
    max_steps = _checks.integer(max_steps, "max_steps", minimum=1)
    t_eval = _times(t_eval, t_end)
    q = real_array(q0, "q0", (model.nq,), f"(nq,) = ({model.nq},)")
    v = real_array(v0, "v0", (model.nv,), f"(nv,) = ({model.nv},)")
    if f_ext is not None:
        f_ext = real_array(f_ext, "f_ext", (model.n_bodies, 6), f"(n_bodies, 6) = ({model.n_bodies}, 6)")
    torque = torque_function(tau, model.nv)
    if ctrl is not None or driven(model):
        torque = _driven(model, torque, ctrl)
    after_step = None
    if model.n_constraint_rows:
        from .constraints import _gain, project_positions, project_velocities

        _gain(stabilization)  # checked before the run
        if type(solver).inverse_inertia is Solver.inverse_inertia:
            raise ValueError(
                f"the model has {model.n_constraint_rows} constraint rows (loop closures, couplings) and solver "
                f"{solver.name!r} has no inverse_inertia to keep them: use another solver (e.g. 'drumwright')"
            )
        if project:

            def after_step(q, v):
                q = project_positions(solver, q)
                return q, project_velocities(solver, q, v)

    forward = free_dynamics(solver, stabilization, f_ext)  # the solver's, or under the constraints
    h_min = min_step if min_step is not None else 1e-12 * max(1.0, t_end)

    res = SimulationResult(t=np.array([0.0]), q=q[None].copy(), v=v[None].copy(), method=method)

    user_errstate = np.geterr()  # the user's tau runs under the caller's numpy error settings

    def accel(t, q, v):
        res.n_evals += 1
        with np.errstate(**user_errstate):
            tau_t = torque(t, q, v)  # outside acceleration(): the user's errors are not failures of the dynamics
        return lambda: np.asarray(forward(q, v, tau_t), dtype=float)

    bar = None
    if progress:
        from ..util.progress import progress_bar

        bar = progress_bar(total=t_end, desc=f"simulate {method}", show=True, seconds=True)
    dense = None if t_eval is None else _Dense(model, t_eval)
    log = _Log(res, q, v, record, bar, after_step, dense)

    t = 0.0
    stop = None
    try:
        with np.errstate(over="ignore", invalid="ignore"):  # overflows are detected and reported as stops
            if method in FIXED:
                t, q, v = _run_fixed(model, method, accel, q, v, t_end, dt, max_steps, log)
            else:
                tableau = TABLEAUX[method]
                t, q, v = _run_adaptive(
                    model, tableau, accel, q, v, t_end, dt, rtol, atol, h_min, max_steps, log, error_norm
                )
    except StepFailed as e:
        stop = e
        res.success, res.message = False, str(e)
        t, q, v = e.state
    finally:
        if bar is not None:
            bar.close()
    if dense is not None:
        with np.errstate(over="ignore", invalid="ignore"):
            dense.close(t, q, v, lambda: acceleration(accel, t, q, v, (t, q, v)))
    log.finish(t, q, v)
    if stop is not None:
        message = f"simulate stopped before t_end = {t_end:.6g}: {res.message}"
        if on_failure == "raise":
            raise SimulationError(message, res) from stop.__cause__
        if on_failure == "warn":
            warnings.warn(
                message + " (the result holds the trajectory so far; on_failure='raise' raises instead)",
                SimulationWarning,
                stacklevel=2,
            )
    return res


def _times(t_eval, t_end: float):
    """t_eval checked as SciPy's solve_ivp checks it (1-D, real, finite, strictly increasing, within
    [0, t_end]): a float64 copy, or None."""
    if t_eval is None:
        return None
    a = np.asarray(t_eval)
    if a.dtype.kind not in "fiu":
        raise TypeError(f"t_eval must be real numbers, got dtype {a.dtype}")
    a = np.array(a, dtype=float, ndmin=1)
    if a.ndim != 1:
        raise ValueError(f"t_eval must be a 1-D array of times, got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"t_eval contains NaN or inf (at index {np.flatnonzero(~np.isfinite(a))[0]})")
    if np.any(np.diff(a) <= 0):
        k = int(np.flatnonzero(np.diff(a) <= 0)[0])
        raise ValueError(
            f"t_eval must be strictly increasing, got t_eval[{k}] = {a[k]} >= t_eval[{k + 1}] = {a[k + 1]}"
        )
    if a.size and (a[0] < 0 or a[-1] > t_end):
        raise ValueError(f"t_eval must lie within [0, t_end] = [0, {t_end}], got times from {a[0]} to {a[-1]}")
    return a


class _Log:
    """What both integration loops do with an accepted step: the constraint projection
    (after_step, its failure a clean stop), the counts in res, the states kept (every accepted
    one with record, else the first and last) and the progress bar."""

    def __init__(self, res, q, v, record, bar, after_step, dense=None):
        self.res, self.record, self.bar, self.after_step, self.dense = res, record, bar, after_step, dense
        self.kept = Recorder(0.0, q, v)

    def slope(self, t, q, v, a):
        """The acceleration a at (t, q, v), the start of the next step (for t_eval's interpolant)."""
        if self.dense is not None:
            self.dense.slope(t, q, v, a)

    def accept(self, t, q, v, h, state):
        """The state that ends an accepted step of length h (projected when asked): (q, v)."""
        if self.after_step is not None:
            try:
                q, v = self.after_step(q, v)
            except ValueError as e:
                raise StepFailed(f"the constraint projection failed at t = {t:.6g}: {e}", state) from e
        self.res.n_accepted += 1
        self.res.min_step = min(self.res.min_step, h)
        if self.dense is not None:
            self.dense.end = (t, q.copy(), v.copy())
        elif self.record:
            self.kept.add(t, q, v)
        if self.bar is not None:
            self.bar.update(h)
        return q, v

    def finish(self, t, q, v):
        if self.dense is not None:
            d = self.dense
            self.res.t = np.array(d.ts)
            self.res.q, self.res.v = np.array(d.qs).reshape(-1, q.size), np.array(d.vs).reshape(-1, v.size)
            return
        if not self.record or self.kept.ts[-1] != t:
            self.kept.add(t, q, v)
        self.res.t, self.res.q, self.res.v = self.kept.arrays()


class _Dense:
    """The states at the times t_eval (see simulate): each accepted step [t0, t1] waits for the
    acceleration at its end (the next step's first evaluation), then its t_eval times are filled
    in: the end state itself at t1, the cubic Hermite interpolant inside."""

    def __init__(self, model, t_eval):
        self.model, self.t_eval, self.blocks = model, t_eval, lie_blocks(model)
        self.k = 0  # the next time of t_eval to fill
        self.start = None  # (t, q, v, a): the last state whose acceleration is known
        self.end = None  # (t, q, v): the end of an accepted step, waiting for its acceleration
        self.ts, self.qs, self.vs = [], [], []

    def _emit(self, t, q, v):
        self.ts.append(t), self.qs.append(q.copy()), self.vs.append(v.copy())
        self.k += 1

    def slope(self, t, q, v, a):
        if self.end is not None:
            self._fill(a)
        self.end, self.start = None, (t, q.copy(), v.copy(), a)
        te = self.t_eval
        while self.k < te.size and te[self.k] <= t:  # t_eval[0] = 0, or a time the step ended on
            self._emit(te[self.k], q, v)

    def close(self, t, q, v, evaluate):
        """After the run, the last step: its end acceleration is evaluated only when a time of
        t_eval lies inside it; if that fails (a stopped run), the times from there on are left out."""
        if self.end is None or self.end[0] != t:
            return
        te = self.t_eval
        if self.k < te.size and te[self.k] < t:
            try:
                a = evaluate()
            except StepFailed:
                return
            self.slope(t, q, v, a)
        else:
            self.slope(t, q, v, None)

    def _fill(self, a1):
        (t0, q0, v0, a0), (t1, q1, v1) = self.start, self.end
        te, h = self.t_eval, t1 - t0
        if not (self.k < te.size and te[self.k] < t1):
            return  # no time inside this step (one at t1 is slope's)
        d1 = difference(self.model, q0, q1)  # δ at the end, and δ' there
        s0, s1 = h * v0, h * dexpinv(self.blocks, d1, v1)
        while self.k < te.size and te[self.k] < t1:
            x = (te[self.k] - t0) / h
            h00, h10, h01, h11 = 2 * x**3 - 3 * x**2 + 1, x**3 - 2 * x**2 + x, 3 * x**2 - 2 * x**3, x**3 - x**2
            q = integrate(self.model, q0, h10 * s0 + h01 * d1 + h11 * s1, 1.0)
            self._emit(te[self.k], q, h00 * v0 + h01 * v1 + h * (h10 * a0 + h11 * a1))


def _run_fixed(model, method, accel, q, v, t_end, dt, max_steps, log):
    blocks = lie_blocks(model)
    n = step_count(0.0, t_end, dt, max_steps)
    t = 0.0
    for k in range(n):
        h = min(dt, t_end - t)
        state = (t, q, v)
        a = acceleration(accel, t, q, v, state)  # dynamics
        log.slope(t, q, v, a)
        q, v = fixed_step(model, method, accel, t, q, v, h, a, blocks)  # integrate
        if not np.all(np.isfinite(v)):
            raise StepFailed(f"the step from t = {t:.6g} overflowed: the velocities are inf/NaN", state)
        t = (k + 1) * dt if k + 1 < n else t_end
        q, v = log.accept(t, q, v, h, state)
    return t, q, v


def _run_adaptive(model, tableau, accel, q, v, t_end, dt, rtol, atol, h_min, max_steps, log, error_norm="rms"):
    c, A, b, _, p = tableau
    s = len(c)
    blocks = lie_blocks(model)
    fsal = np.allclose(A[-1], b[:-1]) and b[-1] == 0  # Dormand–Prince: the last stage is the next first
    t = 0.0
    a0 = acceleration(accel, t, q, v, (t, q, v))
    log.slope(t, q, v, a0)
    h = dt if dt is not None else _initial_step(v, a0, t_end, rtol, atol)
    kq = np.empty((s, model.nv))  # stage derivatives of the chart coordinate δ
    ka = np.empty((s, model.nv))  # stage accelerations
    steps = 0
    while t < t_end:
        if steps >= max_steps:
            raise StepFailed(f"max_steps = {max_steps} reached at t = {t:.6g}", (t, q, v))
        h = min(h, t_end - t)
        if h < h_min:
            raise StepFailed(f"the step size collapsed to {h:.3g} < min_step = {h_min:.3g} at t = {t:.6g}", (t, q, v))
        state = (t, q, v)
        q_new, v_new, eq, ev = runge_kutta_attempt(model, tableau, accel, t, q, v, h, a0, blocks, kq, ka)
        sq = atol + rtol * np.maximum(_position_scale(model, q), _position_scale(model, q_new))
        sv = atol + rtol * np.maximum(np.abs(v), np.abs(v_new))
        scaled = np.concatenate([eq / sq, ev / sv])
        if scaled.size == 0:  # nothing moves (nv = 0): no error to control
            err = 0.0
        else:
            err = np.sqrt(np.mean(scaled**2)) if error_norm == "rms" else np.abs(scaled).max()
        steps += 1
        if err <= 1.0:
            t += h
            q, v = log.accept(t, q_new, v_new, h, state)
            # a projection moves the state: the last stage is then not the next first
            a0 = ka[-1].copy() if fsal and log.after_step is None else acceleration(accel, t, q, v, (t, q, v))
            log.slope(t, q, v, a0)
        else:
            log.res.n_rejected += 1
        # the usual controller: safety 0.9, growth within [0.2, 5]
        factor = 5.0 if err == 0 else min(5.0, max(0.2, 0.9 * err ** (-1.0 / (p + 1))))
        h *= factor if err <= 1.0 else min(1.0, factor)
    return t_end, q, v


def _initial_step(v, a, t_end, rtol, atol):
    """A first step from the size of the velocity and acceleration (Hairer, Nørsett & Wanner)."""
    d0 = np.linalg.norm(v) + 1e-300
    d1 = np.linalg.norm(a) + 1e-300
    tol = atol + rtol * d0
    return float(min(t_end, max(1e-6 * t_end, 0.01 * min(tol / d1**0.5 if d1 > 0 else t_end, d0 / d1))))


def _driven(model, torque, ctrl):
    """tau(t, q, v) plus the actuators' force under ctrl(t, q, v) and the tendons' (simulate)."""
    if model.na:
        raise ValueError(
            "simulate: the model's actuators have activation dynamics (model.na > 0); step it with td.ContactSimulator"
        )
    control = control_function(ctrl, model.nu)
    terms = actuation_terms(model)

    def driven_torque(t, q, v):
        extra = terms.applied(q, v, control(t, q, v), None)
        tau = torque(t, q, v)
        return tau if extra is None else tau + extra

    return driven_torque
