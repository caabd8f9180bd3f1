"""Simulation with contact (issue 14, items 3 and 4): maximum-dissipation impulses on the
contact-space inertia, as in the centipede experiment of drumwright2012 §6.3.

The contact model is Drumwright and Shell's (WAFR 2010, drumwright2012's reference [10]): at each
step the contact impulses z = [c_N; c_D] are the ones that leave the least kinetic energy,

    minimise   ½ v⁺ᵀ M v⁺ = ½ zᵀ G z + zᵀ [N D]ᵀ v* + const,   v⁺ = v* + M⁻¹ [N D] z
    subject to Nᵀ v⁺ ≥ b            (no penetration; b ≥ 0 pushes out what has penetrated)
               c_N ≥ 0, c_D ≥ 0      (compressive normal impulses, k friction-cone edges)
               Σ_j c_D,ij ≤ μ_i c_N,i (the cone, linearised by k edges)

with v* the velocity without contact after the step and G = [N D]ᵀ M⁻¹ [N D] the contact-space
inertia (NᵀM⁻¹N, NᵀM⁻¹D, DᵀM⁻¹D; td.contact_inertia), computed from M⁻¹[N D] by any solver that
provides ``inverse_inertia``: drumwright's Θ(n²) inverse, dense or sparse Cholesky, ABA. The QP
is convex (G is positive semi-definite) and solved by proxsuite's dense ProxQP.

The friction edges of a contact are d_j = cos(2πj/k) t₁ + sin(2πj/k) t₂ with t₁ opposite the
contact's sliding velocity (in v*) when it slides, so that sliding friction is exactly μ c_N against
the motion whatever k; at rest the basis is fixed. Inelastic: the normal velocity after the
impulse is b, not a rebound. b = max(depth − slop, 0) / max(stabilization, h) (Baumgarte with a
time constant): penetration is removed over ``stabilization`` seconds, not in one step, so the
correction does not throw bodies off the ground.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from . import _core
from .configuration import integrate
from .geometry import Contacts, collide, collision_pairs
from .inverse import _contact_product
from .model import Model
from .simulate import SimulationError, SimulationResult, SimulationWarning, _torque
from .solvers import Solver, make_solver
from .state import State

__all__ = ["ContactSimulator", "ContactStep", "ContactTrajectory", "contact_jacobians", "friction_basis"]

INTEGRATORS = ("semi-implicit", "euler")


def friction_basis(normals: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two unit tangents (P, 3) each, t₁ ⟂ t₂ ⟂ n, fixed by the normal alone: t₁ = n × e / |n × e|
    with e the world axis least aligned with n, t₂ = n × t₁."""
    n = np.asarray(normals, dtype=float).reshape(-1, 3)
    e = np.eye(3)[np.argmin(np.abs(n), axis=1)]
    t1 = np.cross(n, e)
    t1 /= np.linalg.norm(t1, axis=1, keepdims=True)
    return t1, np.cross(n, t1)


def contact_jacobians(model: Model, q, contacts: Contacts, k: int = 4, v=None) -> tuple[np.ndarray, np.ndarray]:
    """N (nv, P) and D (nv, P·k): the generalized directions of the contacts' normal impulses
    (pushing the second body of a pair along the normal, the first against it) and of their k
    friction-cone edges (contact-major: columns i·k .. i·k + k − 1 are contact i's). With v, the
    edges turn so that the first is opposite each contact's sliding velocity (see the module)."""
    N, D, _ = _directions(model, q, contacts, _edges(k), v)
    return N, D


def _directions(model, q, contacts, k, v):
    """N, D and the world edge vectors (P, k, 3)."""
    P, nv = len(contacts), model.nv
    if P == 0:
        return np.zeros((nv, 0)), np.zeros((nv, 0)), np.zeros((0, k, 3))
    t1, t2 = friction_basis(contacts.normals)
    dirs = np.stack([contacts.normals, t1, t2], axis=1)  # (P, 3, 3)
    J = _core.contact_jacobian(model.core, q, contacts.bodies, contacts.points, dirs).reshape(nv, P, 3)
    N, T1, T2 = J[:, :, 0], J[:, :, 1], J[:, :, 2]
    phi = 2.0 * np.pi * np.arange(k) / k  # (k,)
    angle = np.zeros(P)
    if v is not None:
        s1, s2 = v @ T1, v @ T2  # sliding velocity of b relative to a in (t₁, t₂)
        sliding = np.hypot(s1, s2) > 1e-12 * (1.0 + np.abs(v @ N))
        angle = np.where(sliding, np.arctan2(-s2, -s1), 0.0)  # the first edge against the slide
    c, s = np.cos(angle[:, None] + phi), np.sin(angle[:, None] + phi)  # (P, k)
    D = T1[:, :, None] * c + T2[:, :, None] * s  # (nv, P, k)
    edges = t1[:, None, :] * c[:, :, None] + t2[:, None, :] * s[:, :, None]
    return np.ascontiguousarray(N), D.reshape(nv, P * k), edges


def _edges(k) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 3:
        raise ValueError(f"friction_edges must be an integer >= 3 (edges of the linearised cone), got {k!r}")
    return int(k)


@dataclass
class ContactStep:
    """What one step did: contacts found at its start, their deepest penetration (m), the QPs'
    iterations, wall-clock seconds, the seconds of each phase (collision, dynamics,
    contact_inertia, qp, integrate), the contacts (td.geometry.Contacts) and the impulse of each on
    its second body, (P, 3) world N·s (the first body gets the opposite)."""

    n_contacts: int
    max_penetration: float
    qp_iterations: int
    seconds: float
    phases: dict = field(default_factory=dict)
    contacts: Contacts | None = None
    impulses: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))


@dataclass
class ContactTrajectory(SimulationResult):
    """A SimulationResult (t, q, v every record_every steps) with per-step n_contacts,
    max_penetration, qp_iterations and seconds."""

    n_contacts: np.ndarray = field(default_factory=lambda: np.zeros(0, int))
    max_penetration: np.ndarray = field(default_factory=lambda: np.zeros(0))
    qp_iterations: np.ndarray = field(default_factory=lambda: np.zeros(0, int))
    seconds: np.ndarray = field(default_factory=lambda: np.zeros(0))


class ContactSimulator:
    """Time stepping with contact: ``sim = td.ContactSimulator(model, dt)``; ``sim.step(state, tau)``.

    solver: the solver (a name or instance) whose ``forward_dynamics`` gives the free motion and
    whose ``inverse_inertia`` gives M⁻¹[N D] (drumwright's Θ(n²) inverse by default).
    integrator: "semi-implicit" (default; q moves with the velocity after the impulses, stable at
    h = 1e-3) or "euler" (explicit: q moves with the velocity before the step, as drumwright2012's
    experiment at h = 1e-5). friction_edges: k of the linearised cone. stabilization: Baumgarte's
    time constant (s); slop: the penetration left alone (m). qp_tolerance: ProxQP's eps_abs, in
    velocity units (m/s, rad/s).
    """

    def __init__(
        self,
        model: Model,
        dt: float,
        solver: str | Solver = "drumwright",
        integrator: str = "semi-implicit",
        friction_edges: int = 4,
        stabilization: float = 0.02,
        slop: float = 1e-5,
        qp_tolerance: float = 1e-9,
        max_qp_iterations: int = 5000,
    ):
        if not isinstance(model, Model):
            raise TypeError(f"model must be a treedyn.Model, got {type(model).__name__}")
        self.model = model
        self.dt = _positive(dt, "dt")
        if integrator not in INTEGRATORS:
            raise ValueError(f"integrator must be one of {list(INTEGRATORS)}, got {integrator!r}")
        self.integrator = integrator
        self.solver = solver if isinstance(solver, Solver) else make_solver(solver, model)
        if self.solver.model is not model:
            raise ValueError("the solver instance was made for another model")
        if not hasattr(self.solver, "inverse_inertia"):
            raise ValueError(
                f"solver {self.solver.name!r} has no inverse_inertia: it cannot give the contact-space inertia"
            )
        self.friction_edges = _edges(friction_edges)
        self.stabilization = _positive(stabilization, "stabilization")
        self.slop = _non_negative(slop, "slop")
        self.qp_tolerance = _positive(qp_tolerance, "qp_tolerance")
        if isinstance(max_qp_iterations, bool) or not isinstance(max_qp_iterations, (int, np.integer)):
            raise TypeError(f"max_qp_iterations must be an integer, got {max_qp_iterations!r}")
        self.max_qp_iterations = int(max_qp_iterations)
        self._pairs_for = None
        self._pairs = []

    def __repr__(self):
        return (
            f"treedyn.ContactSimulator(dt={self.dt:g}, solver={self.solver.name!r}, integrator={self.integrator!r}, "
            f"friction_edges={self.friction_edges})"
        )

    def pairs(self) -> list[tuple[int, int]]:
        """The geom pairs tested each step (geometry.collision_pairs, cached until geoms change)."""
        key = self.model.geoms
        if self._pairs_for != key:
            self._pairs, self._pairs_for = collision_pairs(self.model), key
        return self._pairs

    def step(self, state: State, tau=None) -> ContactStep:
        """Advance ``state`` (a td.State) by dt in place. tau: (nv,) generalized forces or None."""
        _check_state(state, self.model)
        torque = _torque(tau, self.model.nv)
        return self._step(state, torque(state.t, state.q, state.v))

    def run(self, state: State, t_end: float, tau=None, record_every: int = 1, progress: bool = False):
        """Step ``state`` in place to t_end (the last step is shortened to land on it). tau: an
        (nv,) array or a function tau(t, q, v). Returns a ContactTrajectory with the state every
        ``record_every`` steps (and the last) and every step's statistics."""
        _check_state(state, self.model)
        t_end = float(t_end)
        if not np.isfinite(t_end) or t_end < state.t:
            raise ValueError(f"t_end must be finite and >= state.t = {state.t}, got {t_end}")
        if isinstance(record_every, bool) or not isinstance(record_every, (int, np.integer)) or record_every < 1:
            raise ValueError(f"record_every must be a positive integer, got {record_every!r}")
        torque = _torque(tau, self.model.nv)
        n_steps = int(np.ceil((t_end - state.t) / self.dt - 1e-9))
        ts, qs, vs = [state.t], [state.q.copy()], [state.v.copy()]
        stats = []
        bar = None
        if progress:
            from tqdm import tqdm

            bar = tqdm(total=n_steps, unit="step", desc=f"contact {self.solver.name}", leave=False)
        success, message = True, "reached t_end"
        try:
            for s in range(n_steps):
                h = min(self.dt, t_end - state.t) if s == n_steps - 1 else self.dt
                try:
                    stats.append(self._step(state, torque(state.t, state.q, state.v), h))
                except SimulationError as e:
                    success, message = False, str(e)
                    break
                if (s + 1) % record_every == 0 or s == n_steps - 1:
                    ts.append(state.t)
                    qs.append(state.q.copy())
                    vs.append(state.v.copy())
                if bar is not None:
                    bar.update(1)
        finally:
            if bar is not None:
                bar.close()
        out = ContactTrajectory(
            t=np.array(ts),
            q=np.array(qs),
            v=np.array(vs),
            method=f"contact-{self.integrator}",
            n_evals=len(stats),
            n_accepted=len(stats),
            success=success,
            message=message,
            min_step=self.dt,
            n_contacts=np.array([s.n_contacts for s in stats], dtype=int),
            max_penetration=np.array([s.max_penetration for s in stats]),
            qp_iterations=np.array([s.qp_iterations for s in stats], dtype=int),
            seconds=np.array([s.seconds for s in stats]),
        )
        if not success:
            raise SimulationError(message, out)
        return out

    # --- one step: collision, free motion, contact space, QP, integration --------------------------
    def _step(self, state: State, tau: np.ndarray, h: float | None = None) -> ContactStep:
        h = self.dt if h is None else h
        model, q, v = self.model, state.q, state.v
        clock = time.perf_counter
        t0 = clock()
        contacts = collide(model, q, pairs=self.pairs())
        t1 = clock()
        with np.errstate(over="ignore", invalid="ignore"):  # reported below, naming the cause
            v_free = v + h * np.asarray(self.solver.forward_dynamics(q, v, tau))  # v* (no contact)
        if not np.all(np.isfinite(v_free)):
            raise ValueError(
                f"ContactSimulator: the velocity without contact, v + h q̈, overflowed at t = {state.t:.6g} "
                f"(largest |tau| {np.abs(tau).max():.3g}, largest |v| {np.abs(v).max():.3g})"
            )
        t2 = clock()
        P = len(contacts)
        iterations, t3 = 0, t2
        v_next, impulses = v_free, np.zeros((0, 3))
        if P:
            R, W, G, edges = self.contact_space_inertia(q, contacts, v_free)
            t3 = clock()
            b = np.maximum(contacts.depths - self.slop, 0.0) / max(self.stabilization, h)
            z, iterations = self._impulses(G, R.T @ v_free, b, contacts.friction, P)
            v_next = v_free + W @ z
            cD = z[P:].reshape(P, self.friction_edges)
            impulses = z[:P, None] * contacts.normals + np.einsum("pk,pki->pi", cD, edges)
        t4 = clock()
        if not np.all(np.isfinite(v_next)):
            raise ValueError(
                f"ContactSimulator: the velocity after the contact impulses overflowed at t = {state.t:.6g} "
                f"(largest |tau| {np.abs(tau).max():.3g}, largest |v| {np.abs(v).max():.3g})"
            )
        q_next = integrate(model, q, v_next if self.integrator == "semi-implicit" else v, h)
        if not (np.all(np.isfinite(q_next)) and np.all(np.isfinite(v_next))):
            raise SimulationError(
                f"ContactSimulator: the state became non-finite at t = {state.t:.6g}",
                None,
            )
        state.q[:] = q_next
        state.v[:] = v_next
        state.t += h
        t5 = clock()
        return ContactStep(
            n_contacts=P,
            max_penetration=float(contacts.depths.max()) if P else 0.0,
            qp_iterations=iterations,
            seconds=t5 - t0,
            phases={
                "collision": t1 - t0,
                "dynamics": t2 - t1,
                "contact_inertia": t3 - t2,
                "qp": t4 - t3,
                "integrate": t5 - t4,
            },
            contacts=contacts,
            impulses=impulses,
        )

    def contact_space_inertia(self, q, contacts: Contacts, v=None):
        """R = [N D] (nv, P(1 + k)), W = M⁻¹R by the solver's ``inverse_inertia``, the contact-space
        inertia G = RᵀW = [NᵀM⁻¹N, NᵀM⁻¹D; DᵀM⁻¹N, DᵀM⁻¹D] (drumwright2012 §6.3; exactly symmetric)
        and the edges' world vectors (P, k, 3). v: the velocity whose slide turns the edges."""
        P, k = len(contacts), self.friction_edges
        N, D, edges = _directions(self.model, q, contacts, k, v)
        R = np.hstack([N, D])
        W = np.asarray(self.solver.inverse_inertia(q, R))
        G = _contact_product(R, W, np.r_[np.arange(P), np.repeat(np.arange(P), k)])  # RᵀW over the supports
        return R, W, 0.5 * (G + G.T), edges

    def _impulses(self, G, g, b, mu, P):
        """z = [c_N (P); c_D (P·k)] ≥ 0 in two convex QPs: the inelastic normal impulses first,
        then all of z with the cone bounded by them as well. Returns z and the QPs' iterations."""
        k = self.friction_edges
        # 1. inelastic normal impulses: min ½ c_Nᵀ A c_N + c_Nᵀ Nᵀv*, A c_N + Nᵀv* ≥ b, c_N ≥ 0
        A = G[:P, :P]
        cN, it1 = self._qp(A, g[:P], A, b - g[:P], P, np.full(P, np.inf))
        # 2. friction: min ½ zᵀ G z + zᵀ [N D]ᵀ v* subject to Nᵀv⁺ ≥ b, Σ_j c_D,ij ≤ μ_i c_N,i and
        #    Σ_i c_N,i ≤ κ = Σ_i c_N,i of step 1 (Drumwright and Shell's bound: without it the normal
        #    impulses would grow only to allow more friction, which dissipates more, and throw the
        #    bodies off the ground). ProxQP meets each row only to its absolute tolerance ε (in the
        #    row's units), so κ gets ε per contact of slack: step 1's solution stays feasible.
        n = P * (1 + k)
        rows = np.arange(P)
        cone = np.zeros((P, n))
        cone[rows, rows] = mu
        for j in range(k):
            cone[rows, P + rows * k + j] = -1.0
        kappa = np.zeros((1, n))
        kappa[0, :P] = 1.0
        C = np.vstack([G[:P], cone, kappa])
        lower = np.concatenate([b - g[:P], np.zeros(P), [-np.inf]])
        upper = np.concatenate(
            [np.full(P, np.inf), np.full(P, np.inf), [cN.sum() * (1 + 1e-9) + P * self.qp_tolerance]]
        )
        z, it2 = self._qp(G, g, C, lower, n, upper)
        return z, it1 + it2

    def _qp(self, H, g, C, lower, n, upper):
        """min ½ xᵀ H x + gᵀ x subject to lower ≤ C x ≤ upper, x ≥ 0, by ProxQP (dense)."""
        from proxsuite import proxqp

        # squares of the data must stay finite for the solver's residuals (else it iterates on NaN)
        big = max(
            np.abs(H).max(initial=0.0), np.abs(g).max(initial=0.0), np.abs(lower[np.isfinite(lower)]).max(initial=0.0)
        )
        if not big < 1e150:
            raise ValueError(
                f"ContactSimulator: the contact problem's magnitudes ({big:.3g}) are too large for double "
                "precision: the velocities or forces are out of range"
            )
        res = proxqp.dense.solve(
            H,
            g,
            None,
            None,
            C,
            lower,
            upper,
            l_box=np.zeros(n),
            u_box=np.full(n, np.inf),
            eps_abs=self.qp_tolerance,
            eps_rel=0.0,
            max_iter=self.max_qp_iterations,
        )
        status = res.info.status
        if status != proxqp.QPSolverOutput.PROXQP_SOLVED:
            import warnings

            warnings.warn(
                f"ContactSimulator: a contact QP ended with {status.name} after {res.info.iter} iterations "
                f"(primal residual {res.info.pri_res:.3g}, dual {res.info.dua_res:.3g}); its impulses are used",
                SimulationWarning,
                stacklevel=4,
            )
        x = np.asarray(res.x)
        if not np.all(np.isfinite(x)):
            raise ValueError(f"ContactSimulator: the contact QP gave non-finite impulses ({status.name})")
        return np.maximum(x, 0.0), int(res.info.iter)


def _check_state(state, model):
    if not isinstance(state, State):
        raise TypeError(f"state must be a treedyn.State, got {type(state).__name__}")
    if state.q.shape != (model.nq,) or state.v.shape != (model.nv,):
        raise ValueError(
            f"state does not fit the model: q {state.q.shape} and v {state.v.shape}, "
            f"expected ({model.nq},) and ({model.nv},)"
        )
    if not (np.all(np.isfinite(state.q)) and np.all(np.isfinite(state.v))):
        raise ValueError("state has NaN or inf in q or v")


def _positive(x, what: str) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float, np.integer, np.floating)):
        raise TypeError(f"{what} must be a real number, got {x!r}")
    if not (np.isfinite(x) and x > 0):
        raise ValueError(f"{what} must be positive and finite, got {x}")
    return float(x)


def _non_negative(x, what: str) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float, np.integer, np.floating)):
        raise TypeError(f"{what} must be a real number, got {x!r}")
    if not (np.isfinite(x) and x >= 0):
        raise ValueError(f"{what} must be >= 0 and finite, got {x}")
    return float(x)
