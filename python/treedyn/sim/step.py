"""One time step, in one place: what ``td.simulate``, ``td.ContactSimulator``, the constrained
dynamics and the RedMax solvers' own step share, and the loop that runs fixed steps.

A step reads as MuJoCo's ``mj_step`` (engine_forward.c): check the state, the dynamics at its
start, then one switch on the named integrator, then check the result::

    check the state         finite, of the model's shape          check_state
    (collision)             the contacts at q                     the contact step's phase
    dynamics                q̈ = the solver's forward dynamics,    free_dynamics, acceleration
                            or under the model's constraints
    (contact)               v⁺ = v* + M⁻¹R z, the impulses        the contact step's phase
    integrate               one switch on the integrator          fixed_step, runge_kutta_attempt,
                                                                  solver_step
    check the result        no inf/NaN                            StepFailed

The integrators: ``euler`` (q⁺ = q ⊕ h v, v⁺ = v + h q̈), ``semi-implicit-euler`` (v⁺ first, q⁺ =
q ⊕ h v⁺), each with a free joint's linear velocity stepped as the world-frame velocity it is
(``free_velocity`` and ``transport``, below), ``rk4`` and the embedded pairs ``dopri5`` /
``rkf45`` (Runge–Kutta–Munthe-Kaas in the chart q = q_n ⊕ δ, δ' = dexp⁻¹_δ(v); td.simulate's module
says more), and ``implicit``: the solver's own step (the RedMax solvers' linearly implicit one,
baxter2019). The first-order methods take the velocity after the step from the caller where a
contact model changes it (the contact impulses act on v* = free_velocity(...), in the frames of
the step's start). A step that fails raises ``StepFailed``, which keeps the last good state: the
drivers turn it into a clean stop, a warning or an error.

``run_steps`` is the loop of the fixed-step drivers (the contact simulator, a solver's own step):
steps of h (the last shortened to land on t_end), the states every k-th step and the last, the
per-step statistics, a progress bar.

A free joint's velocity is body-frame, v = [v_lin; ω] (Pinocchio's free flyer): the dynamics give
v̇_lin = a_c − ω × v_lin, a_c = Rᵀp̈ the classical acceleration of the body's origin, and the
explicit update v_lin + h v̇_lin multiplies a torque-free body's speed by √(1 + (ωh)²) every step
(a sphere at 1 m/s spinning at 14 rad/s about an axis across its velocity reached 1.10 m/s after
1 s at h = 1e-3, 2.64 m/s at h = 1e-2). The first-order methods therefore step the linear
velocity in the world frame, u = R v_lin, as the C++ contact step does (contact/step.hpp):

    w_lin = v_lin + h a_c,  a_c = v̇_lin + ω_k × v_lin     (free_velocity: the step-start frame R_k)
    p⁺    = p + h R_k d_lin                               (transport: along the world velocity R_k d_lin,
    R⁺    = R_k exp(h [ω̂])                                 not integrate's screw; d = v_k for Euler,
    v_lin⁺ = R⁺ᵀ R_k w_lin = exp(−h [ω̂]) w_lin             d = w for semi-implicit Euler; ω̂ = d's ω)

so u⁺ = u + h R_k a_c: a torque-free body moves on a straight line at constant speed (to rounding),
under gravity its origin follows the methods' discrete parabola. rk4 and the embedded pairs keep
the body-frame velocity in the chart (Runge–Kutta–Munthe-Kaas): their speed error is of their
order (the sphere above: 5e-11 after 1 s at h = 1e-3, 5e-6 at h = 1e-2 for rk4).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..algorithms.configuration import integrate
from ..algorithms.state import State
from ..model import Free, Model, Spherical
from .constraints import constrained_forward_dynamics
from .result import Recorder

__all__ = [
    "FIXED",
    "ADAPTIVE",
    "TABLEAUX",
    "StepFailed",
    "check_state",
    "real_array",
    "torque_function",
    "free_dynamics",
    "acceleration",
    "move",
    "fixed_step",
    "runge_kutta_attempt",
    "solver_step",
    "run_steps",
    "step_count",
    "lie_blocks",
    "dexpinv",
    "free_velocity",
    "transport",
]

FIXED = ("euler", "semi-implicit-euler", "rk4")
ADAPTIVE = ("dopri5", "rkf45")

# Butcher tableaux: (c, A, b_propagated, b_error_estimate, order of the error estimate's lower member)
_DOPRI5 = (
    np.array([0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1, 1]),
    [
        [],
        [1 / 5],
        [3 / 40, 9 / 40],
        [44 / 45, -56 / 15, 32 / 9],
        [19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729],
        [9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656],
        [35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84],
    ],
    np.array([35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0]),
    np.array([5179 / 57600, 0, 7571 / 16695, 393 / 640, -92097 / 339200, 187 / 2100, 1 / 40]),
    4,
)
_RKF45 = (
    np.array([0, 1 / 4, 3 / 8, 12 / 13, 1, 1 / 2]),
    [
        [],
        [1 / 4],
        [3 / 32, 9 / 32],
        [1932 / 2197, -7200 / 2197, 7296 / 2197],
        [439 / 216, -8, 3680 / 513, -845 / 4104],
        [-8 / 27, 2, -3544 / 2565, 1859 / 4104, -11 / 40],
    ],
    np.array([25 / 216, 0, 1408 / 2565, 2197 / 4104, -1 / 5, 0]),  # 4th order, propagated
    np.array([16 / 135, 0, 6656 / 12825, 28561 / 56430, -9 / 50, 2 / 55]),  # 5th order, for the error
    4,
)
TABLEAUX = {"dopri5": _DOPRI5, "rkf45": _RKF45}


class StepFailed(Exception):
    """A step that could not be taken (the dynamics failed, a blow-up): the message says why and
    when; ``state`` is the last good (t, q, v); ``__cause__`` the solver's exception, if any."""

    def __init__(self, message, state):
        super().__init__(message)
        self.state = state


# --- check the state -------------------------------------------------------------------------------
def check_state(state, model: Model) -> None:
    """``state`` is a td.State of ``model``'s shape with finite q and v (TypeError / ValueError)."""
    if not isinstance(state, State):
        raise TypeError(f"state must be a treedyn.State, got {type(state).__name__}")
    if state.q.shape != (model.nq,) or state.v.shape != (model.nv,):
        raise ValueError(
            f"state does not fit the model: q {state.q.shape} and v {state.v.shape}, "
            f"expected ({model.nq},) and ({model.nv},)"
        )
    if not (np.all(np.isfinite(state.q)) and np.all(np.isfinite(state.v))):
        raise ValueError("state has NaN or inf in q or v")


# --- the torques of a step: tau(t, q, v), checked --------------------------------------------------
def real_array(x, name: str, shape: tuple, shape_text: str) -> np.ndarray:
    """A private float64 copy of ``x`` after the checks: real dtype, ``shape``, finite values."""
    a = np.asarray(x)
    if a.dtype.kind not in "fiub":
        raise TypeError(f"{name} must be a real numeric array, got dtype {a.dtype}")
    if a.shape != shape:
        raise ValueError(f"{name} must have shape {shape_text}, got {a.shape}")
    a = np.array(a, dtype=float)
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} contains NaN or inf (at index {np.flatnonzero(~np.isfinite(a))[0]})")
    return a


def read_only(x: np.ndarray) -> np.ndarray:
    view = x.view()
    view.flags.writeable = False
    return view


def torque_function(tau, nv: int) -> Callable:
    """tau(t, q, v) -> a checked (nv,) float array. A user function gets read-only views of the state
    (so it cannot corrupt it); its exceptions propagate unchanged; a result of the wrong dtype,
    shape or with NaN/inf raises TypeError / ValueError naming tau and t."""
    if tau is None:
        zero = np.zeros(nv)
        return lambda t, q, v: zero
    if callable(tau):

        def torque(t, q, v):
            out = tau(t, read_only(q), read_only(v))
            try:
                return real_array(out, "tau", (nv,), f"(nv,) = ({nv},)")
            except (TypeError, ValueError) as e:
                raise type(e)(f"the function tau(t, q, v) returned a bad value at t = {t:.6g}: {e}") from None

        return torque
    arr = real_array(tau, "tau", (nv,), f"(nv,) = ({nv},) (or be a function tau(t, q, v))")
    return lambda t, q, v: arr


# --- dynamics ----------------------------------------------------------------------------------------
def free_dynamics(solver, stabilization, f_ext=None) -> Callable:
    """q̈(q, v, τ) without contact: the solver's forward dynamics, or, when the model has active
    loop closures or couplings, constrained_forward_dynamics (Baumgarte with the time constant
    ``stabilization``). The solver's array as it gives it (its dtype)."""
    if solver.model.n_constraint_rows:
        return lambda q, v, tau: constrained_forward_dynamics(solver, q, v, tau, f_ext, stabilization)
    forward = solver.forward_dynamics
    return lambda q, v, tau: np.asarray(forward(q, v, tau, f_ext))


def acceleration(accel, t, q, v, state):
    """accel(t, q, v)() — accel evaluates the user's τ, its result solves — turning a failure of the
    dynamics (the solver raising ValueError — a singular inertia, an overflow — or returning
    NaN/inf) into StepFailed, which keeps the last good state. The user's τ is evaluated first,
    outside: its exceptions propagate."""
    solve = accel(t, q, v)
    try:
        a = solve()
    except (ValueError, ArithmeticError) as e:
        raise StepFailed(f"the dynamics failed at t = {t:.6g}: {type(e).__name__}: {e}", state) from e
    if not np.all(np.isfinite(a)):
        raise StepFailed(f"the dynamics returned non-finite accelerations at t = {t:.6g}", state)
    return a


# --- integrate: one switch on the named integrator --------------------------------------------------
def move(model, q, d, h, t, state):
    """q ⊕ h·d, a step that overflows (a blow-up) being StepFailed like a failure of the dynamics."""
    try:
        return integrate(model, q, d, h)
    except ValueError as e:
        raise StepFailed(f"the step from t = {t:.6g} overflowed: {e}", state) from e


def fixed_step(model, integrator, accel, t, q, v, h, a, blocks, v_next=None):
    """(q⁺, v⁺): one step of h of a fixed-step integrator from (t, q, v), a = q̈ there (the caller's
    dynamics phase; rk4 evaluates ``accel`` at its other stages). v_next: the velocity after the
    step of the first-order methods when the caller's contact phase made it, in the frames of the
    step's start (default free_velocity(blocks, v, a, h)); transport carries it into q⁺'s frames.
    blocks: lie_blocks(model)."""
    state = (t, q, v)
    if integrator in ("euler", "semi-implicit-euler"):
        w = free_velocity(blocks, v, a, h) if v_next is None else v_next
        return transport(model, blocks, q, v if integrator == "euler" else w, w, h, t, state)
    if integrator == "rk4":  # in the chart q ⊕ δ: stage positions q ⊕ δ_i, δ' = dexp⁻¹_δ(v)
        k1q, k1a = v, a
        d2, v2 = h / 2 * k1q, v + h / 2 * k1a
        k2a = acceleration(accel, t + h / 2, move(model, q, d2, 1.0, t, state), v2, state)
        k2q = dexpinv(blocks, d2, v2)
        d3, v3 = h / 2 * k2q, v + h / 2 * k2a
        k3a = acceleration(accel, t + h / 2, move(model, q, d3, 1.0, t, state), v3, state)
        k3q = dexpinv(blocks, d3, v3)
        d4, v4 = h * k3q, v + h * k3a
        k4a = acceleration(accel, t + h, move(model, q, d4, 1.0, t, state), v4, state)
        k4q = dexpinv(blocks, d4, v4)
        q = move(model, q, (k1q + 2 * k2q + 2 * k3q + k4q) / 6, h, t, state)
        return q, v + h / 6 * (k1a + 2 * k2a + 2 * k3a + k4a)
    raise ValueError(f"unknown fixed-step integrator {integrator!r}; they are {', '.join(FIXED)}")


def runge_kutta_attempt(model, tableau, accel, t, q, v, h, a0, blocks, kq, ka):
    """One attempt of an embedded Runge–Kutta pair (TABLEAUX) from (t, q, v), a0 = q̈ there:
    (q⁺, v⁺) of the propagated member and the local error estimate (e_q, e_v) — the two members
    differ by h Σ (b − b*) k, in chart coordinates. kq, ka (stages, nv): workspaces, filled."""
    c, A, b, b_err, _ = tableau
    state = (t, q, v)
    kq[0], ka[0] = v, a0
    for i in range(1, len(c)):
        d = h * sum(A[i][j] * kq[j] for j in range(i))  # stage chart coordinate δ_i
        vi = v + h * sum(A[i][j] * ka[j] for j in range(i))
        ka[i] = acceleration(accel, t + c[i] * h, move(model, q, d, 1.0, t, state), vi, state)
        kq[i] = dexpinv(blocks, d, vi)
    q_new, v_new = move(model, q, b @ kq, h, t, state), v + h * (b @ ka)
    return q_new, v_new, h * ((b - b_err) @ kq), h * ((b - b_err) @ ka)


def solver_step(solver, state: State, h: float) -> dict:
    """The ``implicit`` integrator: the solver's own step (the RedMax solvers' linearly implicit
    one), advancing ``state`` in place; its statistics. StepFailed when the solver fails (a singular
    step matrix, a PCG breakdown, an overflow: ``__cause__``) or leaves a non-finite state."""
    try:
        stats = solver.step(state, h)
    except (ValueError, ArithmeticError) as e:
        raise StepFailed(str(e), (state.t, state.q, state.v)) from e
    if not (np.all(np.isfinite(state.q)) and np.all(np.isfinite(state.v))):
        raise StepFailed("the state is NaN/inf", (state.t, state.q, state.v))
    return stats


# --- the loop of the fixed-step drivers ---------------------------------------------------------------
def step_count(t0: float, t_end: float, h: float, max_steps: int) -> int:
    """The steps of h from t0 that land on t_end (the last one shortened), at most max_steps, else a
    ValueError naming t_end and the count. Counted in floats first: t_end = 1e308 is inf steps,
    which int() refuses with an OverflowError."""
    n = np.ceil((t_end - t0) / h - 1e-9)
    if not n <= max_steps:  # (inf too)
        raise ValueError(
            f"t_end = {t_end:.6g} is {n:.3g} steps of {h:g} s from t = {t0:.6g}: more than max_steps = {max_steps}"
            " (pass a larger max_steps to run them all)"
        )
    return max(int(n), 0)


def run_steps(state: State, step: Callable, n_steps: int, h: float, *, t_end=None, record_every=1, bar=None, stop=()):
    """Advance ``state`` in place by ``n_steps`` calls step(state, h) (the last of h' = min(h, t_end −
    t) when t_end is given, to land on it). Returns (Recorder: the first state, every
    ``record_every``-th and the last; the steps' results; the exception of a ``stop`` type that
    ended the run early, or None)."""
    recorder = Recorder(state.t, state.q, state.v)
    stats, failure = [], None
    try:
        for s in range(n_steps):
            hs = min(h, t_end - state.t) if t_end is not None and s == n_steps - 1 else h
            try:
                stats.append(step(state, hs))
            except stop as e:
                failure = e
                break
            if (s + 1) % record_every == 0 or s == n_steps - 1:
                recorder.add(state.t, state.q, state.v)
            if bar is not None:
                bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    return recorder, stats, failure


# --- the chart of the Runge–Kutta methods -------------------------------------------------------------
def lie_blocks(model: Model):
    """[(first velocity index, is_free, first position index)] of the spherical and free joints."""
    return [
        (vi, isinstance(j, Free), qi)
        for j, qi, vi in zip(model.joints, model.q_indices, model.v_indices)
        if isinstance(j, (Spherical, Free))
    ]


def dexpinv(blocks, delta: np.ndarray, v: np.ndarray) -> np.ndarray:
    """dexp⁻¹_δ(v) truncated after the second bracket: v + ½[δ, v] + 1/12 [δ, [δ, v]];
    blocks: lie_blocks(model)."""
    out = v.copy()
    for k, is_free, _ in blocks:
        if is_free:  # se(3): twists (linear, angular); [ξ, ν] = (θ×v + u×ω, θ×ω)
            u, th = delta[k : k + 3], delta[k + 3 : k + 6]

            def ad(x):
                return np.r_[np.cross(th, x[:3]) + np.cross(u, x[3:]), np.cross(th, x[3:])]

            x = v[k : k + 6]
        else:  # so(3): [θ, ω] = θ×ω
            th = delta[k : k + 3]

            def ad(x):
                return np.cross(th, x)

            x = v[k : k + 3]
        a1 = ad(x)
        out[k : k + len(x)] = x + 0.5 * a1 + ad(a1) / 12.0
    return out


# --- the free joints' linear velocity, a world-frame quantity (the module's docstring) ---------------
def free_velocity(blocks, v: np.ndarray, a: np.ndarray, h: float) -> np.ndarray:
    """v* = v + h q̈ in the frames of the step's start: a free joint's linear part gets the classical
    acceleration a_c = q̈_lin + ω × v_lin (what the Coriolis term of the body-frame q̈ takes away),
    w_lin = v_lin + h a_c. The angular parts (free and spherical joints) are v + h q̈: Euler's
    equations I ω̇ = τ − ω × Iω are the body-frame derivative itself (ω × ω = 0: no frame term), their
    gyroscopic term integrated explicitly, as the first-order methods integrate the rest (an
    asymmetric body's energy then drifts at O(h), the method's error, not the frame's).
    blocks: lie_blocks(model)."""
    out = v + h * a
    for k, is_free, _ in blocks:
        if is_free:
            out[k : k + 3] += h * np.cross(v[k + 3 : k + 6], v[k : k + 3])
    return out


def transport(model, blocks, q, d, w, h, t, state):
    """(q⁺, v⁺) of a first-order step: q⁺ = q ⊕ h d (``move``) but a free joint's position along its
    world-frame velocity, p⁺ = p + h R_k d_lin (not integrate's screw, which a spinning body would
    follow on a helix), and the velocity w, in the frames of the step's start (free_velocity, then
    the contact impulses), carried into q⁺'s: a free joint's linear part R⁺ᵀ R_k w_lin = exp(−h [ω̂])
    w_lin, ω̂ = d's angular part (the quaternion turned by exp(h ω̂)). d: the velocity q moves with
    (v_k for explicit Euler, w for semi-implicit Euler). The angular parts are kept: turned by
    exp(−h ω̂) ω̂ is ω̂ itself for semi-implicit Euler; for explicit Euler the frames differ by
    O(h²) per step, the method's own order (a spherical joint's ω alike: it has no linear part).
    blocks: lie_blocks(model)."""
    q_next, v_next = move(model, q, d, h, t, state), np.array(w, dtype=float)
    for k, is_free, i in blocks:
        if is_free:
            q_next[i : i + 3] = q[i : i + 3] + h * _rotate(q[i + 3 : i + 7], d[k : k + 3])
            v_next[k : k + 3] = _turn(-h * d[k + 3 : k + 6], w[k : k + 3])
    return q_next, v_next


def _rotate(quaternion, x):
    """R x for the rotation R of the (x, y, z, w) quaternion, normalised (as integrate reads it)."""
    a = quaternion / np.linalg.norm(quaternion)
    u, s = a[:3], a[3]
    t = 2 * np.cross(u, x)
    return x + s * t + np.cross(u, t)


def _turn(phi, x):
    """exp([φ]) x, the rotation by the rotation vector φ (Rodrigues; sin θ/θ and (1 − cos θ)/θ² =
    ½ (sin(θ/2)/(θ/2))² as sincs: no cancellation at small θ)."""
    theta = np.linalg.norm(phi)
    px = np.cross(phi, x)
    return x + np.sinc(theta / np.pi) * px + 0.5 * np.sinc(theta / (2 * np.pi)) ** 2 * np.cross(phi, px)
