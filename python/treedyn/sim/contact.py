"""Simulation with contact: maximum-dissipation impulses on the
contact-space inertia, as in the centipede experiment of drumwright2012 §6.3.

The contact model is Drumwright and Shell's (WAFR 2010, drumwright2012's reference [10]): at each
step the contact impulses z = [c_N; c_D] are the ones that leave the least kinetic energy,

    minimise   ½ v⁺ᵀ M v⁺ = ½ zᵀ G z + zᵀ [N D]ᵀ v* + const,   v⁺ = v* + M⁻¹ [N D] z
    subject to Nᵀ v⁺ ≥ b            (no penetration; b ≥ 0 pushes out what has penetrated)
               c_N ≥ 0, c_D ≥ 0      (compressive normal impulses, k friction-cone edges)
               Σ_j c_D,ij ≤ μ_i c_N,i (the cone, linearised by k edges)

with v* the velocity without contact after the step (in the frames of the step's start, where the
Jacobians are taken: a free joint's linear part with its classical acceleration, treedyn.sim.step's
free_velocity; after the impulses ``transport`` moves q and turns v⁺ into the new frames, so a
free body keeps its speed) and G = [N D]ᵀ M⁻¹ [N D] the contact-space
inertia (NᵀM⁻¹N, NᵀM⁻¹D, DᵀM⁻¹D; td.contact_inertia), computed from M⁻¹[N D] by any solver that
provides ``inverse_inertia``: drumwright's Θ(n²) inverse, dense or sparse Cholesky, ABA. The QP
is convex (G is positive semi-definite) and solved by proxsuite's dense ProxQP.

The friction edges of a contact are d_j = cos(2πj/k) t₁ + sin(2πj/k) t₂ with t₁ opposite the
contact's sliding velocity (in v*) when it slides, so that sliding friction is exactly μ c_N against
the motion whatever k; at rest the basis is fixed. Inelastic: the normal velocity after the
impulse is b, not a rebound. b = min(max(depth − slop, 0) / max(stabilization, h), push_out_limit)
(Baumgarte with a time constant, capped): penetration is removed over ``stabilization`` seconds,
not in one step, and never faster than ``push_out_limit`` (0.2 m/s by default), so the correction
does not throw bodies off the ground: a body released from any penetration rises by at most
push_out_limit²/(2g) (2 mm at 0.2 m/s) above the surface. Without the cap a deep impact — a
capsule dropped from 10 m at h = 1e-2, 0.1 m deep after its first step in contact — was pushed out
at depth/stabilization ≈ 5 m/s and thrown 1.2 m back up by an inelastic contact.

Joint limits (model.set_joint_limits) are unilateral constraints solved in the same problems, and
the model's bilateral constraints (loop closures, couplings) hold throughout: docs/contact.md,
"Joint limits and the model's constraints", gives their rows, targets and which bounds enter.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from .. import _checks, _core
from ..algorithms.state import State
from ..model import Model
from ..model.actuation import actuation_terms, control_function, driven
from ..solvers import Solver, make_solver
from ..solvers.inverse import _contact_product
from ..util.timing import PhaseTimer
from .collision import Contacts, collide, collision_pairs, warn_no_contact
from .constraints import constrained_inverse_inertia
from .contact_solvers import CONTACT_SOLVERS
from .engine import (
    DELASSUS,
    ENGINE_PHASES,
    BatchStep,
    drive_activate,
    drive_force,
    engine_world,
    make_data,
    make_engine,
    native_pair,
    step_batch,
    step_failure,
    warn_unconverged,
    warn_unconverged_run,
)
from .result import ContactKeeper, ContactTrajectory, SimulationError
from .rows import has_rows, limit_targets
from .soft import INTEGRATORS, checked_edges, resolve, rk4_unseen
from .step import (
    StepFailed,
    check_state,
    fixed_step,
    free_dynamics,
    free_velocity,
    lie_blocks,
    run_steps,
    step_count,
    torque_function,
)

__all__ = [
    "BatchStep",
    "ContactSimulator",
    "ContactStep",
    "ContactTrajectory",
    "LimitRows",
    "contact_jacobians",
    "friction_basis",
]

#: the phases of a contact step, timed (ContactStep.phases)
PHASES = ("collision", "dynamics", "contact_inertia", "qp", "integrate")


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
    N, D, _ = _directions(model, q, contacts, checked_edges(k, exact_cone=False), v)
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


@dataclass
class ContactStep:
    """What one step did: contacts found at its start, their deepest penetration (m), the contact
    solver's iterations, wall-clock seconds, the seconds of each phase (PHASES: collision, dynamics,
    contact_inertia, qp, integrate; the C++ step's, contact_solver="admm", ENGINE_PHASES: collision,
    dynamics, delassus, contact, integrate), the contacts (treedyn.sim.collision.Contacts) and the
    impulse of each on its second body, (P, 3) world N·s (the first body gets the opposite); the
    number of joint-limit bounds in the step's problem (those within reach, see the module) and the
    limits' generalized impulse (nv,) (N·m·s on a revolute coordinate, N·s on a prismatic one; zero
    elsewhere); whether the solve converged and its residuals (primal, dual; velocity units)."""

    n_contacts: int
    max_penetration: float
    qp_iterations: int
    seconds: float
    phases: dict = field(default_factory=dict)
    contacts: Contacts | None = None
    impulses: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    n_limits: int = 0
    limit_impulse: np.ndarray = field(default_factory=lambda: np.zeros(0))
    converged: bool = True
    residuals: tuple = (0.0, 0.0)


_NO_IMPULSES = np.zeros((0, 3))  # a step's impulses where not asked for (read-only: shared)
_NO_IMPULSES.flags.writeable = False


class _Impulses(NamedTuple):
    """What the contact phase of a step gives: v⁺, the contacts' impulses (P, 3), the joint-limit
    bounds in the problem, the limits' generalized impulse (nv,) and the QPs' iterations."""

    v_next: np.ndarray
    impulses: np.ndarray
    n_limits: int
    limit_impulse: np.ndarray
    iterations: int


class LimitRows(NamedTuple):
    """Joint-limit bounds, one per entry: the coordinate's index in v, the row's direction s (+1: a
    lower bound, −1: an upper one) and the gap d = s(q̂ − bound) (positive inside; see the module)."""

    index: np.ndarray
    sign: np.ndarray
    gap: np.ndarray

    def __len__(self):
        return len(self.index)

    def take(self, mask) -> LimitRows:
        return LimitRows(self.index[mask], self.sign[mask], self.gap[mask])


class ContactSimulator:
    """Time stepping with contact: ``sim = td.ContactSimulator(model, dt)``; ``sim.step(state, tau)``.

    soft: contacts and joint limits as MuJoCo's soft constraints (solref, solimp: Model.set_geom_softness,
    set_limit_softness; docs/contact.md "Soft constraints"), or hard with Baumgarte's push-out; None: the
    model's (``model.soft_constraints``: True for a model read from MJCF). integrator: "semi-implicit"
    (q moves with the velocity after the impulses), "euler" (explicit, as drumwright2012's experiment at
    h = 1e-5), "rk4" (soft only: MuJoCo's RK4), "implicitfast" or "implicit" (MuJoCo's: the actuators' and
    dampers' velocity derivatives implicit; implicit the bias's too); None: the model's (its file's <option
    integrator>; rk4 with soft constraints), else "semi-implicit". friction_edges: k of the linearised cone (0: the exact
    cone, contact_solver="admm" only; soft: 4 is MuJoCo's pyramid, 0 its elliptic cone); None: the
    file's <option cone> with soft constraints, else 4. solver (contact_solver="proxqp"): the solver
    whose ``forward_dynamics`` and ``inverse_inertia`` give the free motion and M⁻¹[N D]. Hard
    contacts: stabilization, Baumgarte's time constant (s); slop, the penetration (or a limit's
    violation) left alone; push_out_limit, the largest push-out velocity (m/s), b =
    min(max(depth − slop, 0)/max(stabilization, h), push_out_limit); a violated limit returns as a
    critically damped spring of time constant max(stabilization, h). qp_tolerance: the solve's
    tolerance (velocity units; None: 1e-8 with soft constraints, else the solver's). contact_solver: the C++ step
    (docs/contact.md) with "auto" (default: Newton on soft problems where it pays, else ADMM),
    "newton" (wherever it applies) or "admm"; or "proxqp" (two dense QPs, the reference; hard only). delassus ("admm"): the
    Delassus operator, "auto" (per step, by size), "tree" (never formed) or "dense".
    """

    def __init__(
        self,
        model: Model,
        dt: float | None = None,
        solver: str | Solver = "drumwright",
        integrator: str | None = None,
        friction_edges: int | None = None,
        stabilization: float = 0.02,
        slop: float = 1e-5,
        qp_tolerance: float | None = None,
        max_qp_iterations: int = 5000,
        contact_solver: str = "auto",
        push_out_limit: float = 0.2,
        delassus: str = "auto",
        soft: bool | None = None,
    ):
        self.model = _checks.instance(model, Model, "model")
        if dt is None and model.timestep is None:
            raise ValueError("dt: give the time step (the model's file gives none: model.timestep is None)")
        self.dt = _checks.real(model.timestep if dt is None else dt, "dt", positive=True)
        name = _checks.choice(contact_solver, "contact_solver", CONTACT_SOLVERS)
        self._asked_integrator = integrator
        soft, integrator, friction_edges = resolve(
            model, CONTACT_SOLVERS[name].in_engine, soft, integrator, friction_edges
        )
        self.integrator, self.soft = _checks.choice(integrator, "integrator", INTEGRATORS), soft
        self.solver = solver if isinstance(solver, Solver) else make_solver(solver, model, internal=True)
        if self.solver.model is not model:
            raise ValueError("the solver instance was made for another model")
        if not hasattr(self.solver, "inverse_inertia"):
            raise ValueError(
                f"solver {self.solver.name!r} has no inverse_inertia: it cannot give the contact-space inertia"
            )
        self.stabilization = _checks.real(stabilization, "stabilization", positive=True)
        self.slop = _checks.real(slop, "slop", nonnegative=True)
        self.max_qp_iterations = _checks.integer(
            max_qp_iterations, "max_qp_iterations", minimum=1, maximum=_checks.INT_MAX
        )
        self.push_out_limit = _checks.real(push_out_limit, "push_out_limit", positive=True)
        # the impulses from the contact-space problem (sim/contact_solvers.py): "admm" is the whole
        # step in C++ (contact/step.hpp), the others solve on G formed in Python
        self.friction_edges = friction_edges
        if qp_tolerance is None:  # (soft: 1e-8, MuJoCo's own, where a fall would part by the solvers' rounding)
            qp_tolerance = 1e-8 if soft else CONTACT_SOLVERS[name].default_tolerance
        self.qp_tolerance = _checks.real(qp_tolerance, "qp_tolerance", positive=True)
        self.contact_solver = CONTACT_SOLVERS[name](self.friction_edges, self.qp_tolerance, self.max_qp_iterations)
        self.delassus = _checks.choice(delassus, "delassus", DELASSUS)
        terms = actuation_terms(model)
        if not self.contact_solver.in_engine and (
            np.any(model.joint_frictionloss) or terms.friction.size or terms.limited.size or self.soft
        ):
            raise ValueError(f'contact_solver="{name}": dry friction, tendon limits and soft=True need "admm"')
        if self.integrator == "rk4" and not self.soft:
            raise ValueError('integrator="rk4" needs soft=True (hard contacts are impulses, not forces)')
        self._engine, self._engine_for, self._other_pairs = None, None, []
        self._shapes, self._rows = None, False  # (set with the engine: engine())
        self._pairs_for = None
        self._pairs = []
        warn_no_contact(self.model, self.pairs())
        self._limits_for = None
        self._limits = None

    def __repr__(self):
        return (
            f"treedyn.ContactSimulator(dt={self.dt:g}, solver={self.solver.name!r}, integrator={self.integrator!r}, "
            f"friction_edges={self.friction_edges}{', soft=True' if self.soft else ''})"
        )

    def pairs(self) -> list[tuple[int, int]]:
        """The geom pairs tested each step (geometry.collision_pairs, cached until geoms change)."""
        key = self.model.geoms
        if self._pairs_for != key:
            self._pairs, self._pairs_for = collision_pairs(self.model), key
        return self._pairs

    def step(self, state: State, tau=None, ctrl=None) -> ContactStep:
        """Advance ``state`` (a td.State) by dt in place. tau: (nv,) generalized forces or None;
        ctrl: the actuators' controls (model.nu,) or None (zero), their force added to tau with the
        tendons' (treedyn.model.actuation)."""
        if ctrl is not None or driven(self.model):
            check_state(state, self.model)
            if not (type(tau) is np.ndarray and tau.shape == state.v.shape and tau.dtype == np.float64):
                tau = torque_function(tau, self.model.nv)(state.t, state.q, state.v)
            if ctrl is not None and not isinstance(ctrl, np.ndarray):
                ctrl = control_function(ctrl, self.model.nu)(state.t, state.q, state.v)
            return self._driven_step(state, tau, ctrl, self.dt)
        if self.contact_solver.in_engine:  # the C++ step checks the values (finite q, v, τ) itself
            self.engine()  # (current: its shapes below)
            q_shape, v_shape = self._shapes
            if not isinstance(state, State) or state.q.shape != q_shape or state.v.shape != v_shape:
                check_state(state, self.model)  # raises, naming the problem
            if tau is None:
                tau = np.zeros(v_shape)
            elif not (type(tau) is np.ndarray and tau.shape == v_shape and tau.dtype.kind in "fiub"):
                tau = torque_function(tau, v_shape[0])(state.t, state.q, state.v)  # checks, names
            return self._step(state, tau)
        check_state(state, self.model)
        torque = torque_function(tau, self.model.nv)
        return self._step(state, torque(state.t, state.q, state.v))

    def data(self, state: State | str | None = None):
        """A td.StepData from ``state`` (a keyframe's name: its ctrl too; None: State.initial): engine.make_data."""
        return make_data(self, State.initial(self.model) if state is None else state)

    def run(
        self, state, t_end, tau=None, record_every=1, progress=False, ctrl=None, max_steps=10**6, record_contacts=False
    ):
        """Step ``state`` in place to t_end (the last step shortened to land on it). tau: (nv,) or tau(t, q, v);
        ctrl: the actuators' controls, (nu,) or ctrl(t, q, v) (see step). Returns a ContactTrajectory: the
        state every ``record_every`` steps (and the last), every step's statistics (~1 kB a step: a t_end
        more than ``max_steps`` steps away is refused: ValueError) and, with record_contacts, the contacts
        and impulses of the step that led to each kept state (RecordedContacts: what td.view draws)."""
        check_state(state, self.model)
        t_end = _checks.real(t_end, "t_end")
        if t_end < state.t:
            raise ValueError(f"t_end must be finite and >= state.t = {state.t}, got {t_end}")
        record_every = _checks.integer(record_every, "record_every", minimum=1)
        n_steps = step_count(state.t, t_end, self.dt, _checks.integer(max_steps, "max_steps", minimum=1))
        torque, control = torque_function(tau, self.model.nv), control_function(ctrl, self.model.nu)
        bar = None
        if progress:
            from ..util.progress import progress_bar

            bar = progress_bar(total=n_steps, unit="step", desc=f"contact {self.solver.name}", show=True)
        drives = ctrl is not None or driven(self.model)
        keeper = ContactKeeper(bool(record_contacts), record_every, n_steps)

        def step(state, h):  # (an unconverged solve is counted, and said once below)
            keep, tau = keeper.wants(), torque(state.t, state.q, state.v)
            if drives:
                out = self._driven_step(state, tau, control(state.t, state.q, state.v), h, details=keep, quiet=True)
            else:
                out = self._step(state, tau, h, details=keep, quiet=True)
            return keeper.keep(out, h) if keep else out

        kept, stats, failure = run_steps(
            state, step, n_steps, self.dt, t_end=t_end, record_every=record_every, bar=bar, stop=SimulationError
        )
        t, q, v = kept.arrays()
        out = ContactTrajectory(
            t=t,
            q=q,
            v=v,
            method=f"contact-{self.integrator}",
            n_evals=len(stats),
            n_accepted=len(stats),
            success=failure is None,
            message="reached t_end" if failure is None else str(failure),
            min_step=self.dt,
            n_contacts=np.array([s.n_contacts for s in stats], dtype=int),
            max_penetration=np.array([s.max_penetration for s in stats]),
            qp_iterations=np.array([s.qp_iterations for s in stats], dtype=int),
            seconds=np.array([s.seconds for s in stats]),
            n_limits=np.array([s.n_limits for s in stats], dtype=int),
            converged=np.array([s.converged for s in stats], dtype=bool),
            contacts=keeper.kept(len(t)),
        )
        if failure is not None:
            raise SimulationError(out.message, out)
        unconverged = [s for s in stats if not s.converged]
        if unconverged:
            warn_unconverged_run(len(unconverged), len(stats), max(max(s.residuals) for s in unconverged), self)
        return out

    def _driven_step(self, state: State, tau, u, h: float, details: bool = True, quiet: bool = False):
        """A step under τ + the actuators' and tendons' force at u, then the activations (engine.drive_*)."""
        tau, kv = drive_force(self, state, tau, u)
        out = self._step(state, tau, h, details, quiet, kv)
        drive_activate(self, state, u, h)
        return out

    # --- one step: check, collision, dynamics, contact, integrate, check (td.sim.step) ------------------
    def _step(self, state: State, tau, h: float | None = None, details=True, quiet=False, kv=None) -> ContactStep:
        h = self.dt if h is None else h
        if self.contact_solver.in_engine:
            return self._engine_step(state, tau, h, details, quiet, kv)
        model, q = self.model, state.q
        blocks = lie_blocks(model)  # the free joints' velocities are stepped in the world frame
        phases = PhaseTimer(PHASES)
        with phases("collision"):
            contacts = collide(model, q, pairs=self.pairs())
        with phases("dynamics"):
            v_free = self._free_velocity(state, tau, h, blocks)  # v* = v + h q̈, without contact
        contact = self._contact(state, tau, v_free, contacts, h, phases)  # v⁺ = v* + M⁻¹R z
        with phases("integrate"):
            q_next, v_next = self._integrate(state, contact.v_next, h, blocks)
        state.q[:] = q_next
        state.v[:] = v_next
        state.t += h
        return ContactStep(
            n_contacts=len(contacts),
            max_penetration=float(contacts.depths.max()) if len(contacts) else 0.0,
            qp_iterations=contact.iterations,
            seconds=phases.total(),
            phases=phases.seconds,
            contacts=contacts,
            impulses=contact.impulses,
            n_limits=contact.n_limits,
            limit_impulse=contact.limit_impulse,
        )

    # --- the step in C++ (treedyn/contact/step.hpp) ------------------------------------------------------
    def engine(self):
        """The C++ contact step of this model and these options (_core.ContactEngine), rebuilt when
        the model changes (its geoms, limits, inertias: model/cache.py's revision)."""
        key = self.model._revision
        if self._engine_for != key:
            pairs = self.pairs()
            self._other_pairs = [p for p in pairs if not native_pair(self.model, p)]
            native = [p for p in pairs if native_pair(self.model, p)]
            # what each step reads of the model, kept with the engine (a change of the model rebuilds both)
            self._shapes = ((self.model.nq,), (self.model.nv,))
            self._rows = has_rows(self.model)
            if self.integrator == "rk4" and (self._rows or self._other_pairs):
                rk4_unseen(self)
            self._engine, self._engine_for = make_engine(self, native), key
        return self._engine

    def step_batch(self, q, v, tau=None, threads: int | None = None, ctrl=None) -> BatchStep:
        """Advance B independent worlds of this model by dt, in place: q (B, nq) and v (B, nv)
        writable float64 C-contiguous arrays, tau (B, nv), (nv,) (the same for all) or None; ctrl
        (B, nu), (nu,) or None: the actuators' controls (their force and the tendons' added to tau,
        as step does; not for actuators with activation dynamics, whose state a batch has not). World b
        keeps its own warm start (the b-th of the engine's workspaces) and its result is the one
        ``step`` gives it alone, bit for bit; the worlds are spread over ``threads`` threads
        (td.get_num_threads() by default). contact_solver="admm" only. A world whose step fails
        (overflow) is left as it was and named in the ValueError, after the others have stepped."""
        return step_batch(self, q, v, tau, threads, ctrl)

    def _engine_step(self, state: State, tau, h: float, details: bool, quiet: bool = False, kv=None) -> ContactStep:
        tau = np.ascontiguousarray(tau, dtype=float)
        engine = self.engine()
        status, n, nl, it, converged, primal, dual, depth, secs, _ = engine_world(self, engine, state, tau, h, 0, kv)
        if status:  # the engine left (q, v) as they were
            raise step_failure(status, state.t, tau, state.v)
        state.t += h
        if not converged and not quiet:
            warn_unconverged(it, state.t, primal, dual, self.qp_tolerance, stacklevel=4)
        out = ContactStep(
            n_contacts=n,
            max_penetration=depth,
            qp_iterations=it,
            seconds=sum(secs),
            phases=dict(zip(ENGINE_PHASES, secs)),
            impulses=_NO_IMPULSES,  # (the details below, where asked for)
            n_limits=nl,
            limit_impulse=_NO_IMPULSES[:, 0],
            converged=converged,
            residuals=(primal, dual),
        )
        if details:
            geoms, bodies, points, normals, depths, mu, impulses, limit_impulse = self._engine.contacts()
            out.contacts = Contacts(geoms, bodies, points, normals, depths, mu)
            out.impulses, out.limit_impulse = impulses, limit_impulse
        return out

    def _free_velocity(self, state: State, tau, h: float, blocks) -> np.ndarray:
        """v* = v + h q̈ (no contact; the model's constraints kept) in the frames of the step's start,
        a free joint's linear part with its classical acceleration (step.free_velocity), checked
        finite."""
        q, v = state.q, state.v
        with np.errstate(over="ignore", invalid="ignore"):  # reported below, naming the cause
            v_free = free_velocity(blocks, v, self._free_acceleration(q, v, tau), h)
        if not np.all(np.isfinite(v_free)):
            raise ValueError(
                f"ContactSimulator: the velocity without contact, v + h q̈, overflowed at t = {state.t:.6g} "
                f"(largest |tau| {np.abs(tau).max():.3g}, largest |v| {np.abs(v).max():.3g})"
            )
        return v_free

    def _contact(self, state: State, tau, v_free, contacts: Contacts, h: float, phases: PhaseTimer) -> _Impulses:
        """The contacts' and the joint limits' impulses on v* (see the module): v⁺, checked finite,
        and what they were."""
        q, v = state.q, state.v
        P = len(contacts)
        iterations = 0
        v_next, impulses = v_free, np.zeros((0, 3))
        bounds = self.limit_gaps(q, v, h)
        near = self._within_reach(bounds, v_free, h)
        limit_impulse = np.zeros(self.model.nv)
        if P or near.any():
            while True:
                limits = bounds.take(near)
                with phases("contact_inertia"):
                    R, W, G, edges = self.contact_space_inertia(q, contacts, v_free, limits)
                with phases("qp"):
                    b_contacts = self._push_out(contacts.depths, h)
                    b = np.r_[b_contacts, self._targets(limits, state.v, h)]
                    z, it = self.contact_solver.solve(G, R.T @ v_free, b, contacts.friction, P, len(limits))
                    iterations += it
                    v_next = v_free + W @ z
                missed = ~near & (bounds.gap + h * bounds.sign * v_next[bounds.index] < -self.slop)
                if not missed.any():
                    break
                near |= missed  # a contact pushed a joint past a bound left out: solve again with it
            L = len(limits)
            cD = z[P + L :].reshape(P, self.friction_edges)
            impulses = z[:P, None] * contacts.normals + np.einsum("pk,pki->pi", cD, edges)
            np.add.at(limit_impulse, limits.index, limits.sign * z[P : P + L])
        if not np.all(np.isfinite(v_next)):
            raise ValueError(
                f"ContactSimulator: the velocity after the contact impulses overflowed at t = {state.t:.6g} "
                f"(largest |tau| {np.abs(tau).max():.3g}, largest |v| {np.abs(v).max():.3g})"
            )
        return _Impulses(v_next, impulses, int(near.sum()), limit_impulse, iterations)

    def _integrate(self, state: State, v_next, h: float, blocks):
        """(q⁺, v⁺) by the step core's switch on the integrator (v⁺ carried from the step-start frames
        into q⁺'s: step.transport), checked finite (SimulationError)."""
        try:
            q_next, v_next = fixed_step(
                self.model, INTEGRATORS[self.integrator], None, state.t, state.q, state.v, h, None, blocks, v_next
            )
        except StepFailed as e:  # q ⊕ h v overflowed: the error integrate raised
            raise e.__cause__ from None
        if not (np.all(np.isfinite(q_next)) and np.all(np.isfinite(v_next))):
            raise SimulationError(f"ContactSimulator: the state became non-finite at t = {state.t:.6g}", None)
        return q_next, v_next

    # --- the model's bilateral constraints (loop closures, couplings: treedyn.constraints) ----------
    def _free_acceleration(self, q, v, tau) -> np.ndarray:
        """q̈ without contact: the solver's, or under the model's constraints (Baumgarte, ``stabilization``)."""
        return free_dynamics(self.solver, self.stabilization)(q, v, tau)

    def _inverse_inertia(self, q, R) -> np.ndarray:
        """M⁻¹R, or M_c⁻¹R under the model's constraints: the impulses then keep G v (G M_c⁻¹ = 0)."""
        c = self.model.n_constraint_rows
        return constrained_inverse_inertia(self.solver, q, R) if c else np.asarray(self.solver.inverse_inertia(q, R))

    def contact_space_inertia(self, q, contacts: Contacts, v=None, limits: LimitRows | None = None):
        """R = [N L D] (nv, P(1 + k) + nL), W = M⁻¹R by the solver's ``inverse_inertia``, the
        contact-space inertia G = RᵀW = [NᵀM⁻¹N, NᵀM⁻¹D; DᵀM⁻¹N, DᵀM⁻¹D] (drumwright2012 §6.3;
        exactly symmetric) with the joint limits' rows and columns, and the edges' world vectors
        (P, k, 3). v: the velocity whose slide turns the edges. limits: the bounds in the problem
        (LimitRows; default none): L's column r is sign_r·e_(index_r), so M⁻¹L is made of columns
        of M⁻¹, taken in the same ``inverse_inertia`` call as M⁻¹[N D]."""
        P, k = len(contacts), self.friction_edges
        N, D, edges = _directions(self.model, q, contacts, k, v)
        nL = 0 if limits is None else len(limits)
        L = np.zeros((self.model.nv, nL))
        if nL:
            L[limits.index, np.arange(nL)] = limits.sign
        R = np.hstack([N, L, D])
        W = self._inverse_inertia(q, R)
        # RᵀW over the supports: a limit's column is its own group (one nonzero row)
        G = _contact_product(R, W, np.r_[np.arange(P), P + np.arange(nL), np.repeat(np.arange(P), k)])
        return R, W, 0.5 * (G + G.T), edges

    # --- joint limits (see the module): the bounds, which enter, their targets ----------------------
    def limit_gaps(self, q, v, h: float) -> LimitRows:
        """Every finite bound of the model's joint limits with its gap d = s(q̂ − bound) at the start
        of a step of length h from (q, v): q̂ = q (semi-implicit) or q + h v (explicit Euler)."""
        qi, vi, lower, upper = self._limit_table()
        x = q[qi] + (h * v[vi] if self.integrator == "euler" else 0.0)
        index, sign = np.r_[vi, vi], np.r_[np.ones(len(vi)), -np.ones(len(vi))]
        with np.errstate(invalid="ignore"):
            gap = np.r_[x - lower, upper - x]  # an infinite bound has an infinite gap: never in reach
        keep = np.isfinite(gap)
        return LimitRows(index[keep], sign[keep], gap[keep])

    def _limit_table(self):
        """(q index, v index, lower, upper) of the limited coordinates, cached until the limits change."""
        limits = self.model.joint_limits
        if self._limits_for != limits:
            m = self.model
            qi = np.array([m.q_index(n) for n in limits], dtype=int)
            vi = np.array([m.v_index(n) for n in limits], dtype=int)
            lo = np.array([lo for lo, _ in limits.values()], dtype=float)
            hi = np.array([hi for _, hi in limits.values()], dtype=float)
            self._limits, self._limits_for = (qi, vi, lo, hi), limits
        return self._limits

    def _within_reach(self, bounds: LimitRows, v_free, h: float) -> np.ndarray:
        """The bounds the step can reach: d ≤ h·max(−s v*_i, 0) + slop (crossed iff d + h s v*_i < 0; the slop
        keeps a joint resting on its stop in the problem)."""
        return bounds.gap <= h * np.maximum(-bounds.sign * v_free[bounds.index], 0.0) + self.slop

    def _targets(self, limits: LimitRows, v, h: float) -> np.ndarray:
        """b_L: s v⁺_i ≥ −d/h inside (q̂ + h v⁺ stays on its side); a violation (d < 0) returns as a
        critically damped spring of time constant τ (contact/step.hpp's limit_return)."""
        return limit_targets(limits.gap, limits.sign * v[limits.index], h, self.stabilization, self.slop)

    def _push_out(self, depth, h: float) -> np.ndarray:
        """b = min(max(depth − slop, 0)/max(stabilization, h), push_out_limit): Baumgarte's capped push-out."""
        return np.minimum(np.maximum(depth - self.slop, 0.0) / max(self.stabilization, h), self.push_out_limit)
