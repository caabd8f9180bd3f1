"""The C++ contact step's glue (contact_solver="admm": cpp/include/treedyn/contact/step.hpp): the
engine a ContactSimulator builds for its model and options, one world's step with what only Python
has (the model's bilateral rows, the contacts of pairs the C++ collision has no closed form for),
the batch of worlds, and the errors a step reports. treedyn.sim.contact's ContactSimulator is the
API; see docs/contact.md."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .. import _checks, _core
from .._core import get_num_threads
from ..algorithms.state import State
from ..model.actuation import activate, actuation_terms, drive, driven
from ..model.cache import cached
from ..model.shapes import ConvexMesh, Cylinder, Ellipsoid
from . import soft
from .collision import SHAPE_KIND, _geom_arrays, collide, pair_parameters
from .contact_solvers import NEWTON_MAX_NV
from .result import SimulationWarning
from .rows import has_rows
from .step import check_state

#: the phases of the C++ step, timed (ContactStep.phases)
ENGINE_PHASES = ("collision", "dynamics", "delassus", "contact", "integrate")
#: the C++ step's Delassus operators (contact/delassus*.hpp): "auto" picks per step by the
#: problem's size, "tree" never forms G, "dense" forms it from ABA's factors
DELASSUS = ("auto", "tree", "dense")


#: the shapes the C++ step collides (contact/collision.hpp's ShapeKind; cylinders, ellipsoids and convex
#: meshes by contact/convex.hpp)
ENGINE_KIND = {**SHAPE_KIND, Cylinder: 4, Ellipsoid: 5, ConvexMesh: 6}


def native_pair(model, pair) -> bool:
    """Whether the C++ step collides the pair itself: both shapes ones it knows (ENGINE_KIND; the
    geoms' margins and the pair's own friction and margin, sim.collision.pair_parameters, are handed
    to the engine). The others (a triangle mesh) are found by treedyn.sim.collision.collide each step
    and handed to the step."""
    g = model.geoms
    return type(g[int(pair[0])].shape) in ENGINE_KIND and type(g[int(pair[1])].shape) in ENGINE_KIND


def _engine_geoms(model, _key=None) -> tuple:
    """The geoms as the C++ step takes them: sim.collision's arrays (kinds, bodies, rotations,
    translations, sizes) with every ENGINE_KIND, the friction (G, 3: sliding, torsional, rolling), and per
    geom a convex mesh's (vertices, faces) or None."""
    kinds, bodies, rotations, translations, sizes, _ = cached(model, "geoms", _geom_arrays)
    friction = np.array([(g.friction, g.torsional_friction, g.rolling_friction) for g in model.geoms], float)
    kinds, sizes, meshes = kinds.copy(), sizes.copy(), []
    for k, g in enumerate(model.geoms):
        s = g.shape
        kinds[k] = ENGINE_KIND.get(type(s), 0)
        if isinstance(s, Cylinder):
            sizes[k] = (s.radius, s.half_length, 0.0)
        elif isinstance(s, Ellipsoid):
            sizes[k] = s.radii
        meshes.append((np.asarray(s.vertices, float).reshape(-1, 3), s.faces) if isinstance(s, ConvexMesh) else None)
    return kinds, bodies, rotations, translations, sizes, friction, meshes


class BatchStep(NamedTuple):
    """What ContactSimulator.step_batch did to each of B worlds: contacts found, the solver's
    iterations, whether it converged, its residuals (primal, dual; velocity units), (B, 2)."""

    n_contacts: np.ndarray
    iterations: np.ndarray
    converged: np.ndarray
    residuals: np.ndarray


def engine_world(sim, engine, state: State, tau, h: float, world: int, kv=None):
    """engine.step of one world, with what only Python has: the contacts of pairs without a C++
    closed form; kv: the actuators' velocity gains (drive_force's, for implicitfast) or None."""
    extra = None
    if sim._other_pairs:
        c = collide(sim.model, state.q, pairs=sim._other_pairs)
        extra = (c.geoms, c.bodies, c.points, c.normals, c.depths, c.friction)
        if sim.soft:
            extra += (soft.extra_softness(sim.model, c.geoms),)
    return engine.step(state.q, state.v, tau, h, world, extra, kv=kv)


def drive_force(sim, state: State, tau, u) -> tuple:
    """(τ plus the actuators' force at controls u (None: zero) and the state's activations and the tendons'
    spring–dampers, the actuators' velocity gains or None): the C++ step's actuation (model/actuation.hpp,
    td.StepData's: the two agree bit for bit) where the simulator steps in C++, else treedyn.model.actuation's;
    u checked as that module does."""
    T = actuation_terms(sim.model)
    if not sim.contact_solver.in_engine:
        return drive(sim.model, state, tau, u), None
    out, kv = np.array(tau, dtype=float), np.zeros(T.nu)
    if T.nu or T.passive:
        act = state.act if T.na and state.act.size == T.na else np.zeros(T.na)
        sim.engine().actuation_force(state.q, state.v, np.zeros(T.nu) if u is None else T.control(u), act, out, kv)
    return out, kv if T.nu else None


def drive_activate(sim, state: State, u, h: float) -> None:
    """The state's activations advanced by h under u (explicit Euler, clamped to actrange): the C++ step's
    where the simulator steps in C++, else treedyn.model.actuation's."""
    T = actuation_terms(sim.model)
    if not sim.contact_solver.in_engine:
        return activate(sim.model, state, u, h)
    if T.na:
        act = np.array(state.act if state.act.size == T.na else np.zeros(T.na), dtype=float)
        sim.engine().activate(act, np.zeros(T.nu) if u is None else T.control(u), h)
        state.act = act


def make_data(sim, state):
    """ContactSimulator.data: a td.StepData of the current engine from ``state`` (copied; or the name of
    one of ``model.keyframes``, its controls too): q, v, act, ctrl, tau (the applied generalized force)
    and time as numpy views of C++ memory, its own workspace and warm start; ``data.step(n=1)``, n steps
    in one call into C++ with the GIL released — the actuators' and tendons' forces, collision, dynamics
    and contact. It steps the model as it was when made (a changed model is refused at its next step)."""
    key = None
    if isinstance(state, str):
        if state not in sim.model.keyframes:
            raise ValueError(f"ContactSimulator.data: no keyframe {state!r} (the model's: {list(sim.model.keyframes)})")
        key = sim.model.keyframes[state]
        state = key.state()
    check_state(state, sim.model)
    if not sim.contact_solver.in_engine:
        raise ValueError('ContactSimulator.data needs a C++ contact solver ("auto", "newton" or "admm")')
    engine = sim.engine()
    T = actuation_terms(sim.model)
    d = engine.new_data(sim.model, sim.dt, sim.qp_tolerance, SimulationWarning)
    d.q[:], d.v[:], d.time = state.q, state.v, state.t
    if T.na and state.act.size == T.na:
        d.act[:] = state.act
    if key is not None:
        d.ctrl[:] = key.ctrl
    return d


def rollout(datas, ctrl=None, threads: int | None = None, *, policy=None, steps: int | None = None):
    """td.rollout: T steps of each of B worlds (a list of td.StepData, each stepped from its own state, in
    place) under controls ctrl (B, T, nu) or (T, nu) (the same for all) — or under ``policy``, called once
    per step for the whole batch, ``policy(t (B,), q (B, nq), v (B, nv)) -> ctrl (B, nu)``, for ``steps``
    steps — spread over ``threads`` threads (td.get_num_threads() by default) with the GIL released, each
    world's steps the ones it takes alone (bit for bit). Returns (q (B, T, nq), v (B, T, nv)): the state after
    each step. A world whose step fails stops there and is named in the ValueError, after the others have
    stepped to the end (a policy's rollout: at that step)."""
    datas = list(datas)
    if not datas or not all(isinstance(d, _core.StepData) for d in datas):
        raise TypeError("rollout: datas must be a non-empty list of td.StepData (ContactSimulator.data())")
    B, nu = len(datas), datas[0].ctrl.shape[0]
    threads = (
        get_num_threads()
        if threads is None
        else _checks.integer(threads, "threads", minimum=1, maximum=_checks.INT_MAX)
    )
    if (ctrl is None) == (policy is None):
        raise ValueError("rollout: give ctrl (B, T, nu) or a policy (with steps), not both")
    if policy is not None:
        return _policy_rollout(datas, policy, _checks.integer(steps, "steps", minimum=0), threads)
    u = np.asarray(ctrl, dtype=float)
    if u.ndim == 2:
        u = np.broadcast_to(u, (B, *u.shape))
    if u.ndim != 3 or u.shape[0] != B or u.shape[2] != nu:
        raise ValueError(f"rollout: ctrl must have shape ({B}, T, {nu}) or (T, {nu}), got {np.shape(ctrl)}")
    if not np.all(np.isfinite(u)):
        raise ValueError("rollout: ctrl has NaN or inf")
    q, v, unconverged = _core.rollout(datas, np.ascontiguousarray(u), threads)
    if unconverged.any():
        worst = int(np.argmax(unconverged))
        warn_unconverged_count(int(unconverged.sum()), worst)
    return q, v


def _policy_rollout(datas, policy, steps: int, threads: int):
    """rollout's policy form: each step, the policy's controls for every world, then one step of each."""
    if not callable(policy):
        raise TypeError(f"rollout: policy must be callable (t, q, v) -> ctrl, got {policy!r}")
    B, nu, nq, nv = len(datas), datas[0].ctrl.shape[0], datas[0].q.shape[0], datas[0].v.shape[0]
    Q, V = np.empty((B, steps, nq)), np.empty((B, steps, nv))
    unconverged = np.zeros(B, dtype=np.int64)
    for k in range(steps):
        t = np.array([d.time for d in datas])
        u = np.asarray(policy(t, np.array([d.q for d in datas]), np.array([d.v for d in datas])), dtype=float)
        if u.shape != (B, nu) or not np.all(np.isfinite(u)):
            raise ValueError(f"rollout: the policy must return finite controls of shape ({B}, {nu}), got {u.shape}")
        q, v, missed = _core.rollout(datas, np.ascontiguousarray(u[:, None, :]), threads)
        Q[:, k], V[:, k], unconverged = q[:, 0], v[:, 0], unconverged + missed
    if unconverged.any():
        warn_unconverged_count(int(unconverged.sum()), int(np.argmax(unconverged)))
    return Q, V


def warn_unconverged_count(count: int, world: int) -> None:
    import warnings

    warnings.warn(
        f"rollout: {count} contact solves did not converge (most in world {world}); their best iterates were used",
        SimulationWarning,
        stacklevel=3,
    )


def step_batch(sim, q, v, tau=None, threads: int | None = None, ctrl=None) -> BatchStep:
    """ContactSimulator.step_batch (its docstring)."""
    if not sim.contact_solver.in_engine:
        raise ValueError('step_batch needs contact_solver="admm" (the C++ step)')
    model = sim.model
    for name, a, n in (("q", q, model.nq), ("v", v, model.nv)):
        if not (isinstance(a, np.ndarray) and a.dtype == np.float64 and a.ndim == 2 and a.shape[1] == n):
            raise ValueError(f"step_batch: {name} must be a float64 array of shape (B, {n})")
        if not (a.flags.c_contiguous and a.flags.writeable):
            raise ValueError(f"step_batch: {name} must be writable and C-contiguous (it is stepped in place)")
    B = q.shape[0]
    if v.shape[0] != B:
        raise ValueError(f"step_batch: q has {B} worlds, v {v.shape[0]}")
    if not (np.all(np.isfinite(q)) and np.all(np.isfinite(v))):
        raise ValueError("step_batch: q and v must be finite")
    tau = np.zeros((B, model.nv)) if tau is None else np.asarray(tau, dtype=float)
    if tau.shape == (model.nv,):
        tau = np.broadcast_to(tau, (B, model.nv))
    if tau.shape != (B, model.nv):
        raise ValueError(f"step_batch: tau must have shape ({B}, {model.nv}) or ({model.nv},), got {tau.shape}")
    kv = None
    if ctrl is not None or driven(model):
        tau, kv = _driven_batch(sim, q, v, tau, ctrl)
    tau = np.ascontiguousarray(tau)
    threads = (
        get_num_threads()
        if threads is None
        else _checks.integer(threads, "threads", minimum=1, maximum=_checks.INT_MAX)
    )
    engine = sim.engine()
    if sim._other_pairs:  # a world at a time: Python's share of the step
        status, counts, res = np.zeros(B, int), np.zeros((B, 3), int), np.zeros((B, 2))
        for b in range(B):
            state = State(q[b], v[b])
            out = engine_world(sim, engine, state, tau[b], sim.dt, b, None if kv is None else kv[b])
            q[b], v[b] = state.q, state.v
            status[b] = out[0]
            counts[b] = out[1], out[3], out[4]
            res[b] = out[5], out[6]
    else:
        counts, res = engine.step_batch(q, v, tau, sim.dt, threads, kv)
        status = counts[:, 3]
    if np.any(status):
        bad = np.flatnonzero(status)
        raise ValueError(
            f"step_batch: world(s) {bad.tolist()} could not step ({step_failure(status[bad[0]], 0.0, tau[bad[0]], v[bad[0]])}); "
            "they are left as they were, the others stepped"
        )
    converged = counts[:, 2].astype(bool)
    if not converged.all():
        where = f"in world(s) {np.flatnonzero(~converged).tolist()[:10]} of a batch"
        warn_unconverged(int(counts[:, 1].max()), where, res[:, 0].max(), res[:, 1].max(), sim.qp_tolerance, 3)
    return BatchStep(n_contacts=counts[:, 0].copy(), iterations=counts[:, 1].copy(), converged=converged, residuals=res)


def _driven_batch(sim, q, v, tau, ctrl) -> tuple:
    """(tau plus each world's actuator and tendon forces, the actuators' velocity gains (B, nu) or None):
    drive_force's C++ actuation."""
    model = sim.model
    T = actuation_terms(model)
    if T.na:
        raise ValueError(
            "step_batch: the model's actuators have activation dynamics (model.na > 0), a state a batch does not "
            "carry: step each world with sim.step (State.act)"
        )
    B = q.shape[0]
    u = np.zeros((B, model.nu)) if ctrl is None else np.asarray(ctrl, dtype=float)
    if u.shape == (model.nu,):
        u = np.broadcast_to(u, (B, model.nu))
    if u.shape != (B, model.nu) or not np.all(np.isfinite(u)):
        raise ValueError(f"step_batch: ctrl must be finite with shape ({B}, {model.nu}) or ({model.nu},)")
    out, kv = np.array(tau, dtype=float), np.zeros((B, T.nu))
    engine, act = sim.engine(), np.zeros(0)
    for b in range(B):  # (the C++ step's actuation, as sim.step's: a world's batch step is its lone step)
        engine.actuation_force(q[b], v[b], T.control(u[b]), act, out[b], kv[b])
    return out, kv if T.nu else None


def step_failure(status: int, t: float, tau, v) -> ValueError:
    """The named error of an engine step that did not step (status 1: τ not finite; 2: overflowed;
    3: the state not finite; 5: diverged, |q| or |v| past 1e10)."""
    if status == 1:
        return ValueError(f"ContactSimulator: tau is not finite at t = {t:.6g}")
    if status == 3:
        return ValueError(f"ContactSimulator: state has NaN or inf in q or v at t = {t:.6g}")
    what = "overflowed" if status == 2 else "would take |q| or |v| past 1e10"
    v = np.abs(np.asarray(v, dtype=float))
    return ValueError(
        f"ContactSimulator: the simulation diverged at t = {t:.6g}: the step {what} (largest |tau| "
        f"{np.abs(tau).max(initial=0):.3g}, largest |v| {v.max(initial=0):.3g} at coordinate "
        f"{int(v.argmax()) if v.size else -1}); the state is left as it was. A smaller time step, or "
        'integrator="implicitfast" for stiff actuators and dampers, may hold it'
    )


def warn_unconverged(iterations, t, primal, dual, tolerance, stacklevel):
    """The warning of an unconverged solve at time t (a float), or where (a string: a batch's worlds)."""
    import warnings

    where = t if isinstance(t, str) else f"at t = {t:.6g}"
    warnings.warn(
        f"ContactSimulator: the contact solve did not converge in {iterations} iterations {where} "
        f"(residuals {primal:.3g}, {dual:.3g} m/s against {tolerance:g}); its best iterate is used",
        SimulationWarning,
        stacklevel=stacklevel,
    )


def warn_unconverged_run(count, steps, worst, sim):
    """ContactSimulator.run's one warning for its unconverged solves (each step's would repeat)."""
    import warnings

    warnings.warn(
        f"ContactSimulator.run: {count} of {steps} contact solves did not converge (largest residual {worst:.3g} m/s "
        f"against {sim.qp_tolerance:g}); their best iterates were used (ContactTrajectory.converged per step)",
        SimulationWarning,
        stacklevel=3,
    )


def make_engine(sim, pairs):
    """The C++ step's engine: the geoms (kind, body, placement, size, friction), the candidate
    pairs, the finite joint-limit bounds and the options."""
    if sim._other_pairs:  # (a pair that needs coal says so now, not at its first contact)
        from .convex import require_coal

        require_coal(sim.model, sim._other_pairs)
    model = sim.model
    qi, vi, lower, upper = sim._limit_table()
    finite_lo, finite_hi = np.isfinite(lower), np.isfinite(upper)
    *geoms, meshes = cached(model, "engine_geoms", _engine_geoms)
    engine = _core.ContactEngine(
        model.core,
        *geoms,  # kinds, bodies, rotations, translations, sizes, friction
        np.array(pairs, dtype=np.int32).reshape(-1, 2),
        np.r_[qi[finite_lo], qi[finite_hi]].astype(np.int32),
        np.r_[vi[finite_lo], vi[finite_hi]].astype(np.int32),
        np.r_[lower[finite_lo], upper[finite_hi]].astype(float),
        np.r_[np.ones(finite_lo.sum()), -np.ones(finite_hi.sum())],
        {"semi-implicit": 0, "euler": 1, "rk4": 2, "implicitfast": 3, "implicit": 4}[sim.integrator],
        sim.friction_edges,
        sim.stabilization,
        sim.slop,
        sim.push_out_limit,
        sim.qp_tolerance,
        sim.max_qp_iterations,
        DELASSUS.index(sim.delassus),
        np.array([g.margin for g in model.geoms], dtype=float),
        _pair_params(model, pairs),
        meshes if any(v is not None for v in meshes) else None,
        np.array([g.condim for g in model.geoms], dtype=np.int32),
    )
    if sim.soft:
        soft.configure(engine, sim, pairs)
    cs = sim.contact_solver
    engine.set_solver(cs.engine_code, NEWTON_MAX_NV, cs.tolerance, cs.max_iterations)
    if model.actuators or model.tendons:
        engine.set_actuation(*_actuation_arrays(actuation_terms(model)))
    if has_rows(model):
        engine.set_rows(*_general_rows(sim))
    if model.fluid[0] > 0 or model.fluid[1] > 0:
        engine.set_fluid(model.fluid[0], model.fluid[1], np.array(model.fluid[2]), *cached(model, "fluid", _boxes))
    return engine


def _boxes(model, _key=None) -> tuple:
    """Per body the inertia box of MuJoCo's fluid model (contact/fluid.hpp): its dimensions
    b_k = √(6 (I_j + I_l − I_k)/m) from the principal moments (0 for a body without mass, MuJoCo's
    mjMINVAL), its principal axes (columns, body coordinates) and its centre of mass."""
    n = model.n_bodies
    box, axes, com = np.zeros((n, 3)), np.tile(np.eye(3), (n, 1, 1)), np.zeros((n, 3))
    for i, I in enumerate(model.inertias):
        if i == 0 or I.mass < 1e-15:
            continue
        moments, R = np.linalg.eigh(np.asarray(I.inertia, dtype=float))
        s = moments.sum()
        box[i] = np.sqrt(np.maximum(1e-15, s - 2 * moments) / I.mass * 6.0)
        axes[i], com[i] = R, I.com
    return box, axes, com


def _general_rows(sim) -> tuple:
    """set_rows' arguments (contact/rows.hpp): the model's constraints (its RedMax system) with each row's
    softness and Â (soft.equality_weights), the coordinates' and tendons' dry friction, the tendons' limits,
    the latter two's Â (soft.row_weights) and solref/solimp (model.row_softness; soft steps)."""
    model = sim.model
    T = actuation_terms(model)
    system, table = None, np.zeros((0, 12))
    if model.n_constraint_rows:
        system, rows, first = model._constraint_system(), [], 0
        for n, softness, A, jdot in cached(model, "soft_equality_weights", soft.equality_weights):
            ref, imp = softness or ((0.02, 1.0), (0.9, 0.95, 0.001, 0.5, 2.0))
            rows += [[softness is not None, jdot, A[k], first, n, *ref, *imp] for k in range(n)]
            first += n
        table = np.array(rows, dtype=float)
    dofs = np.flatnonzero(model.joint_frictionloss).astype(np.int32)
    f = np.float64
    A_dof, A_tendon = cached(model, "soft_row_weights", soft.row_weights)
    names, joint_of = model.tendon_names, {}
    for i, name in enumerate(model.body_joint_names):  # (each coordinate's joint)
        for k in range(model.core.v_index[i], model.core.v_index[i] + model.core.nv_i[i]):
            joint_of[k] = name

    def row(A, kind, name) -> list:  # Â, solref, solimp (model.row_softness: MuJoCo's defaults where unset)
        ref, imp = model.row_softness(kind, name)
        return [A, *ref, *imp]

    friction_soft = [row(A_dof[k], "joint friction", joint_of[k]) for k in dofs]
    friction_soft += [row(A_tendon[t], "tendon friction", names[t]) for t in T.friction]
    limit_soft = [row(A_tendon[t], "tendon limit", names[t]) for t in T.limited]
    return (
        system, table, dofs, np.asarray(model.joint_frictionloss, f)[dofs],
        np.ascontiguousarray(T.tendon_v[T.friction], f), np.asarray(T.frictionloss[T.friction], f),
        np.ascontiguousarray(T.tendon_q[T.limited], f), np.ascontiguousarray(T.tendon_v[T.limited], f),
        np.c_[T.range_lo, T.range_hi].astype(f).reshape(-1, 2), np.array(friction_soft, f).reshape(-1, 8),
        np.array(limit_soft, f).reshape(-1, 8), sim.stabilization, sim.slop,
    )  # fmt: skip


def _actuation_arrays(T) -> tuple:
    """set_actuation's arrays (model/actuation.hpp) from the model's ActuationTerms."""
    act_of = np.full(T.nu, -1, dtype=np.int32)
    act_of[T.dyn] = np.arange(T.na, dtype=np.int32)
    f = np.float64
    return (
        T.tendon_q, T.tendon_v, np.asarray(T.k, f), np.asarray(T.d, f), np.asarray(T.rest, f).reshape(-1, 2),
        T.moment_q, T.moment_v, T.gain, T.bias, np.c_[T.ctrl_lo, T.ctrl_hi], np.c_[T.force_lo, T.force_hi], act_of,
        np.asarray(T.integrator, dtype=np.int32), np.asarray(T.T, f), np.c_[T.act_lo, T.act_hi].reshape(-1, 2),
        np.c_[T.joint_lo, T.joint_hi],
    )  # fmt: skip


def _pair_params(model, pairs):
    """(pairs, 5): each pair's own friction, margin, condim, torsional and rolling friction (NaN: the
    geoms' rule), or None when none has."""
    own = cached(model, "pair_parameters", pair_parameters)
    if not any((int(i), int(j)) in own for i, j in pairs):
        return None
    out = np.full((len(pairs), 5), np.nan)
    for k, (i, j) in enumerate(pairs):
        if (int(i), int(j)) in own:
            out[k] = own[(int(i), int(j))]
    return out
