"""Conformance checks for solver plugins: ``treedyn.testing.check_solver(MySolver)``.

A third-party author tests a plugin in one line (in pytest, or anywhere: failures raise
AssertionError with what went wrong). The checks:

- agreement with the built-in ``aba`` on random models the solver says it supports (a chain, a
  branched tree, every joint kind, a floating base), to ``rtol`` relative to the largest entry or
  (``rtol=None``) to error bounds;
- shapes and dtype of the result; batched calls equal unbatched ones, an empty batch gives an
  empty (0, nv) result (when ``"batch"`` is a declared capability); ``inverse_inertia`` against
  M⁻¹R (when declared);
- one instance shared by 4 threads gives the results of serial calls;
- the inputs are not modified;
- bad input (wrong shape, complex dtype, NaN) raises ValueError / TypeError, never a crash or a
  silent NaN.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .algorithms.configuration import neutral, random_configuration
from .model import Box, Free, Inertia, Model, Plane, Revolute, Sphere, Transform
from .scenes import chain, random_tree
from .solvers.base import Solver
from .solvers.registry import make_solver

__all__ = ["check_solver", "conformance_models", "check_contact_solver", "contact_problems"]


def conformance_models():
    """(label, model) pairs the checks run on: small, so that the checks take a second."""
    return [
        ("chain of 12 revolute joints", chain(12)),
        ("branched tree of 15 revolute joints", random_tree(15, 1, joints=("revolute",))),
        ("tree of 15 bodies with every joint kind", random_tree(15, 2)),
        ("floating-base tree of 10 bodies", random_tree(10, 3, floating_base=True)),
    ]


def _rel(a, b) -> float:
    return float(np.abs(np.asarray(a) - np.asarray(b)).max() / max(1.0, np.abs(np.asarray(b)).max()))


def _expect_error(kinds, f, what: str):
    try:
        f()
    except kinds:
        return
    except Exception as e:  # noqa: BLE001 - reporting what was raised instead
        raise AssertionError(
            f"{what}: expected {' or '.join(k.__name__ for k in kinds)}, got {type(e).__name__}: {e}"
        ) from e
    raise AssertionError(f"{what}: no exception was raised")


# δ = C_ROUNDING·n·u bounds the backward error of a backward-stable O(n)-deep dynamics algorithm
# in precision u (a few ≤ 6-term spatial products per body, summed over ≤ n bodies, for the solver
# and for the reference it is checked against; N. J. Higham, "Accuracy and Stability of Numerical
# Algorithms", §3.1 and §7.1).
C_ROUNDING = 64.0


def _agreement_bound(M, qdd, terms, delta) -> float:
    """‖q̈ − q̈_aba‖∞ for two backward-stable solutions of M q̈ = τ − b, each within δ of the
    magnitudes of its terms: q̈ − q̈* = M⁻¹(Δr − ΔM q̈), so ≤ 2‖M⁻¹‖·δ·(‖M‖‖q̈‖ + ‖terms‖), that is
    cond(M)·δ relative to q̈ (Higham Thm 7.2)."""
    norm = lambda A: float(np.abs(A).sum(axis=1).max()) if np.ndim(A) == 2 else float(np.abs(A).max())  # noqa: E731
    return 2 * norm(np.linalg.inv(M)) * delta * (norm(M) * norm(qdd) + norm(terms))


def _backward_error(M, X, R, terms=None) -> float:
    """max over columns of ‖M x − r‖∞ / (‖M‖∞‖x‖∞ + ‖t‖∞), t the magnitudes of r's terms (r itself
    by default): the smallest relative perturbation of M and r that x solves exactly."""
    X, R = np.asarray(X, dtype=np.float64).reshape(len(M), -1), np.asarray(R, dtype=np.float64).reshape(len(M), -1)
    T = np.abs(R) if terms is None else np.asarray(terms, dtype=np.float64).reshape(len(M), -1)
    den = np.abs(M).sum(axis=1).max() * np.abs(X).max(axis=0) + np.abs(T).max(axis=0)
    return float(np.max(np.abs(M @ X - R).max(axis=0) / np.where(den > 0, den, 1.0)))


def check_solver(cls: type[Solver], rtol: float | None = 1e-8, seed: int = 0, options: dict | None = None) -> int:
    """Run the conformance checks on solver class ``cls``; returns the number of models checked.

    Raises AssertionError on the first failure. ``options`` go to the solver's constructor.
    ``rtol=None``: tolerances from error bounds, with δ = 64·n·u in the solver's
    precision (u = 1.1e-16 in float64, 6e-8 in float32): q̈ agrees with ``aba`` within what two
    backward-stable algorithms can differ by, 2‖M⁻¹‖·δ·(‖M‖‖q̈‖ + ‖|τ| + |b| + |g|‖) (b the bias
    forces, g their gravity part; cond(M)·δ relative), and ``inverse_inertia(q, R)`` has a backward
    error ‖MY − R‖ / (‖M‖‖Y‖ + ‖R‖) ≤ δ, whatever cond(M). A number (default 1e-8) instead asks
    for agreement with ``aba`` to ``rtol`` relative to max(1, max |q̈|) and for ‖MY − R‖ ≤
    rtol·max(1, max |R|).
    """
    if not (isinstance(cls, type) and issubclass(cls, Solver)):
        raise TypeError(f"check_solver takes a treedyn.Solver subclass, got {cls!r}")
    options = options or {}
    assert cls.name, f"{cls.__name__} must set a non-empty `name`"
    rng = np.random.default_rng(seed)
    checked = 0
    for label, model in conformance_models():
        reason = cls.supports(model)
        if reason is not None:
            assert isinstance(reason, str) and reason, f"{cls.name}.supports must return None or a reason string"
            continue
        checked += 1
        solver = make_solver(cls, model, **options)
        ref = make_solver("aba", model)
        q = random_configuration(model, rng)
        v = rng.standard_normal(model.nv)
        tau = rng.standard_normal(model.nv)
        copies = [x.copy() for x in (q, v, tau)]
        qdd = solver.forward_dynamics(q, v, tau)
        for x, c, name in zip((q, v, tau), copies, ("q", "v", "tau")):
            assert np.array_equal(x, c), f"{cls.name} modified its input {name} ({label})"
        assert isinstance(qdd, np.ndarray) and qdd.shape == (model.nv,), (
            f"{cls.name}: forward_dynamics returned shape {np.shape(qdd)}, expected ({model.nv},) ({label})"
        )
        assert np.all(np.isfinite(qdd)), f"{cls.name}: forward_dynamics returned NaN/inf ({label})"
        M = ref_mass(model, q)
        delta = C_ROUNDING * model.nv * float(np.finfo(qdd.dtype if qdd.dtype == np.float32 else np.float64).eps) / 2
        qdd_ref = ref.forward_dynamics(q, v, tau)
        if rtol is None:
            from .algorithms.dynamics import bias_forces

            terms = np.abs(tau) + np.abs(bias_forces(model, q, v)) + np.abs(bias_forces(model, q, 0 * v))
            err, tol = float(np.abs(qdd - qdd_ref).max()), _agreement_bound(M, qdd_ref, terms, delta)
        else:
            err, tol = _rel(qdd, qdd_ref), rtol
        assert err <= tol, f"{cls.name} disagrees with aba by {err:.3g} (> {tol:.3g}) on the {label}"

        if "batch" in cls.capabilities:
            B = 3
            Q = np.stack([random_configuration(model, rng) for _ in range(B)])
            V, T = rng.standard_normal((B, model.nv)), rng.standard_normal((B, model.nv))
            out = solver.forward_dynamics(Q, V, T)
            assert np.shape(out) == (B, model.nv), f"{cls.name}: batched result has shape {np.shape(out)} ({label})"
            single = np.stack([solver.forward_dynamics(Q[b], V[b], T[b]) for b in range(B)])
            assert _rel(out, single) <= 1e-12, f"{cls.name}: batched and single results differ ({label})"
            empty = solver.forward_dynamics(Q[:0], V[:0], T[:0])
            assert np.shape(empty) == (0, model.nv), (
                f"{cls.name}: an empty batch gave shape {np.shape(empty)}, expected (0, {model.nv}) ({label})"
            )

        # one instance shared between threads (the base class serializes a plugin's methods)
        items = [
            (random_configuration(model, rng), rng.standard_normal(model.nv), rng.standard_normal(model.nv))
            for _ in range(8)
        ]
        serial = [solver.forward_dynamics(*x) for x in items]
        with ThreadPoolExecutor(4) as pool:
            shared = list(pool.map(lambda x: solver.forward_dynamics(*x), items))
        assert _rel(np.stack(shared), np.stack(serial)) <= 1e-12, (
            f"{cls.name}: calls from several threads differ from serial ones ({label})"
        )

        if "inverse_inertia" in cls.capabilities:
            R = rng.standard_normal((model.nv, 4))
            Y = solver.inverse_inertia(q, R)
            assert np.shape(Y) == R.shape, f"{cls.name}: inverse_inertia returned shape {np.shape(Y)}"
            err, tol = (_backward_error(M, Y, R), delta) if rtol is None else (_rel(M @ Y, R), rtol)
            assert err <= tol, (
                f"{cls.name}: M @ inverse_inertia(q, R) differs from R by {err:.3g} (> {tol:.3g}) ({label})"
            )
            y1 = solver.inverse_inertia(q, R[:, 0])
            assert np.shape(y1) == (model.nv,), f"{cls.name}: inverse_inertia of a vector returned {np.shape(y1)}"

        if "derivatives" in cls.capabilities:
            from .algorithms.derivatives import aba_derivatives

            got = solver.derivatives(q, v, tau)
            assert len(got) == 3, f"{cls.name}: derivatives must return (dqdd_dq, dqdd_dv, Minv) ({label})"
            for what, D, D_ref in zip(("dqdd_dq", "dqdd_dv", "Minv"), got, aba_derivatives(model, q, v, tau)):
                assert np.shape(D) == (model.nv, model.nv), f"{cls.name}: {what} has shape {np.shape(D)} ({label})"
                # the same quantities by another route: as far apart as q̈ may be, relative to their size
                err = float(np.abs(D - D_ref).max()) / max(1.0, float(np.abs(D_ref).max()))
                tol = (
                    rtol
                    if rtol is not None
                    else 2 * float(np.linalg.norm(np.linalg.inv(M), 2) * np.linalg.norm(M, 2)) * delta * model.nv
                )
                assert err <= tol, (
                    f"{cls.name}: {what} disagrees with td.aba_derivatives by {err:.3g} (> {tol:.3g}) ({label})"
                )

        # bad input: a clear exception, never a crash or a NaN
        _expect_error((ValueError,), lambda: solver.forward_dynamics(q[:-1], v, tau), f"{cls.name}: q too short")
        _expect_error((ValueError,), lambda: solver.forward_dynamics(q, v, tau[:, None]), f"{cls.name}: tau 2-D")
        bad = v.copy()
        bad[0] = np.nan
        _expect_error((ValueError,), lambda: solver.forward_dynamics(q, bad, tau), f"{cls.name}: NaN in v")
        _expect_error(
            (TypeError,), lambda: solver.forward_dynamics(q, v.astype(complex), tau), f"{cls.name}: complex v"
        )
    assert checked, f"{cls.name} supports none of the conformance models"
    return checked


def ref_mass(model: Model, q) -> np.ndarray:
    from .algorithms.dynamics import mass_matrix

    return mass_matrix(model, q)


# ---------------------------------------------------------------------------- contact solvers
# ``check_contact_solver``: the conformance kit of contact solvers (sim/contact_solvers.py). A solver
# with ``solve`` is checked on contact problems taken from scenes (each a problem ContactSimulator
# hands it), against the documented model (sim/contact.py's module docstring) and the reference's
# (ProxQP's) optimum; every solver, in the C++ step or not, on the scenes themselves, against what a
# reader works out by hand.

G_EARTH = 9.81
_HALF = (0.1, 0.1, 0.05)  # a box's half extents (m)


def _box_model(mu: float, boxes: int = 1, theta: float = 0.0):
    """``boxes`` 1 kg boxes stacked on a plane tilted by ``theta`` about y (downhill: +x of the
    plane's frame for theta < 0), each turned 0.3 rad about the plane's normal from the one below,
    resting exactly on it; (model, q, R) with R the plane's rotation."""
    c, s = np.cos(theta), np.sin(theta)
    R = np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])
    model = Model(gravity=(0, 0, -G_EARTH))
    model.add_geom(None, Plane(), placement=Transform(rotation=R), friction=mu)
    for i in range(boxes):
        b = model.add_body(f"box{i}", None, joint=Free(), inertia=Inertia.box(1.0, [2 * x for x in _HALF]))
        model.add_geom(b, Box(_HALF), friction=mu)
    q = neutral(model)
    tilt = np.array([0.0, np.sin(theta / 2), 0.0, np.cos(theta / 2)])  # (x, y, z, w)
    for i in range(boxes):
        turn = np.array([0.0, 0.0, np.sin(0.15 * i), np.cos(0.15 * i)])
        q[7 * i : 7 * i + 3] = R @ np.array([0.0, 0.0, _HALF[2] * (2 * i + 1)])
        q[7 * i + 3 : 7 * i + 7] = _quat_product(tilt, turn)
    return model, q, R


def _quat_product(a, b):
    """The (x, y, z, w) quaternion of the rotation a·b."""
    va, vb = a[:3], b[:3]
    return np.r_[a[3] * vb + b[3] * va + np.cross(va, vb), a[3] * b[3] - va @ vb]


def _limited_arm():
    """Two links on revolute joints about y, hanging, the first limited to ±0.1 rad, with a foot
    (a sphere) 1 mm into the ground: contact and limit rows in one problem."""
    model = Model(gravity=(0, 0, -G_EARTH))
    model.add_geom(None, Plane(), friction=0.7)
    link = Inertia(1.0, (0, 0, -0.25), np.diag([0.02, 0.02, 1e-3]))
    a = model.add_body(
        "upper", None, joint=Revolute((0, 1, 0)), inertia=link, placement=Transform(translation=(0, 0, 1.049))
    )
    b = model.add_body(
        "lower", a, joint=Revolute((0, 1, 0)), inertia=link, placement=Transform(translation=(0, 0, -0.5))
    )
    model.add_geom(b, Sphere(0.05), placement=Transform(translation=(0, 0, -0.5)), friction=0.7)
    model.set_joint_limits("upper", -0.1, 0.1)
    return model, np.array([0.1, 0.0]), np.array([2.0, -1.0])  # moving into the upper stop


def contact_conformance_scenes():
    """(label, model, q, v, h, steps) of the scenes the contact problems are taken from: after
    ``steps`` steps of the reference, the next step's problem."""
    ball = Model(gravity=(0, 0, -G_EARTH))
    ball.add_body("ball", None, Free(), inertia=Inertia(1.0, (0, 0, 0), 4e-3 * np.eye(3)))
    ball.add_geom("ball", Sphere(0.1))
    ball.add_geom(None, Plane())
    qb = neutral(ball)
    qb[2] = 0.099  # 1 mm deep: a push-out target b > 0
    box, q1, _ = _box_model(0.5)
    stick, q20, _ = _box_model(0.5, theta=np.radians(-20))
    slide, q35, _ = _box_model(0.5, theta=np.radians(-35))
    stack, q3, _ = _box_model(0.8, boxes=3)
    arm, qa, va = _limited_arm()
    return [
        ("a ball 1 mm into the ground", ball, qb, np.zeros(6), 1e-3, 0),
        ("a box sliding at 2 m/s", box, q1, np.r_[2.0, 0.5, 0, 0, 0, 0], 1e-3, 5),
        ("a box held on a 20° incline", stick, q20, np.zeros(6), 1e-3, 5),
        ("a box sliding down a 35° incline", slide, q35, np.zeros(6), 1e-3, 5),
        ("three boxes stacked, turned", stack, q3, np.zeros(18), 1e-3, 3),
        ("an arm striking its joint stop and the ground", arm, qa, va, 1e-3, 0),
    ]


def contact_problems(friction_edges: int = 4):
    """(label, (G, g, b, mu, P, nL)) of each conformance scene: the problem ContactSimulator hands its
    contact solver there (recorded while ProxQP at 1e-12 steps the scene)."""
    from .algorithms.state import State
    from .sim.contact import ContactSimulator
    from .sim.contact_solvers import CONTACT_SOLVERS, ProxQPContactSolver

    problems = []

    class Recorder(ProxQPContactSolver):
        def solve(self, G, g, b, mu, P, nL=0):
            problems.append(tuple(np.array(x, dtype=float, copy=True) for x in (G, g, b, mu)) + (P, nL))
            return super().solve(G, g, b, mu, P, nL)

    name = "conformance-recorder"
    CONTACT_SOLVERS[name] = Recorder
    found = []
    try:
        for label, model, q, v, h, steps in contact_conformance_scenes():
            sim = ContactSimulator(model, h, contact_solver=name, friction_edges=friction_edges, qp_tolerance=1e-12)
            state = State(q.copy(), v.copy())
            for _ in range(steps + 1):
                problems.clear()
                sim.step(state)
            assert problems, f"contact_problems: the scene {label!r} made no contact problem"
            found.append((label, problems[-1]))
    finally:
        del CONTACT_SOLVERS[name]
    return found


def _check_problem(solver, label, G, g, b, mu, P, nL, reference):
    """One problem: ``solver.solve`` against the documented model and the reference's optimum, to the
    solver's tolerance ε in each row's own units (m/s on the normal and limit rows, N·s on the cones'
    and on z ≥ 0: what ProxQP's eps_abs bounds), 10 ε allowed; the dissipation (an energy: N·s · m/s)
    to ε per unit of impulse, ε (1 + ‖z‖₁ + ‖z_ref‖₁) times 10."""
    from .sim.contact_solvers import _limit_targets

    name, k, tol = type(solver).__name__, solver.friction_edges, solver.tolerance
    given = [np.array(x, copy=True) for x in (G, g, b, mu)]
    out = solver.solve(G, g, b, mu, P, nL)
    assert isinstance(out, tuple) and len(out) == 2, (
        f"{name}.solve must return (z, iterations), got {type(out).__name__} ({label})"
    )
    z, iterations = out
    for x, c, what in zip((G, g, b, mu), given, ("G", "g", "b", "mu")):
        assert np.array_equal(x, c), f"{name}.solve modified its input {what} ({label})"
    m = P + nL
    z = np.asarray(z)
    assert z.shape == (m + P * k,), f"{name}.solve returned z of shape {z.shape}, expected ({m + P * k},) ({label})"
    assert np.all(np.isfinite(z)), f"{name}.solve returned a non-finite impulse ({label})"
    assert isinstance(iterations, (int, np.integer)) and iterations >= 0, (
        f"{name}.solve must return (z, iterations) with a count of iterations, got {iterations!r} ({label})"
    )
    eps = 10 * tol + 1e-12 * max(1.0, float(np.abs(z).max()))  # and the rounding of z's magnitudes
    w = G @ z + g  # the rows' velocities after the impulses
    gap = w[:m] - b
    cone = mu * z[:P] - z[m:].reshape(P, k).sum(axis=1)
    checks = {
        "an impulse is negative (pulling)": -z.min(),
        "a friction impulse leaves its cone (Σ c_D > μ c_N)": -cone.min(initial=0.0),
        "a contact or limit row ends penetrating (Nᵀv⁺ < b)": -gap.min(initial=0.0),
    }
    for what, violation in checks.items():
        assert violation <= eps, f"{name}: {what} by {violation:.3g} (> {eps:.3g}) on {label}"
    # Signorini: a row that separates (above its target) carries no impulse, c_i (Nᵢᵀv⁺ − bᵢ) = 0
    scale = max(1.0, float(np.abs(z).max()), float(np.abs(reference).max()))
    slack = float(np.max(z[:m] * gap, initial=0.0))
    assert slack <= eps * scale, (
        f"{name}: a separating row carries an impulse: max c_i (Nᵢᵀv⁺ − bᵢ) = {slack:.3g} (> {eps * scale:.3g}) on {label}"
    )
    # maximum dissipation: the least energy (½ zᵀ G z + zᵀ (g − w) is v⁺'s kinetic energy up to a
    # constant) within the normal impulses' bound κ of the inelastic step (sim/contact.py)
    if P:
        cN, _ = _reference(k).normal_impulses(G, g, b, P, nL)
        kappa = float(cN[:P].sum())
        excess = float(z[:P].sum()) - kappa * (1 + 1e-9) - P * eps
        assert excess <= 0, (
            f"{name}: the normal impulses sum to {z[:P].sum():.9g}, above the inelastic ones' {kappa:.9g} "
            f"(friction bought with extra push) on {label}"
        )
    t = _limit_targets(len(g), b, P, nL)
    energy = lambda x: 0.5 * x @ G @ x + x @ (g - t)  # noqa: E731
    E, E_ref = energy(z), energy(reference)
    bound = eps * (1 + np.abs(z).sum() + np.abs(reference).sum())
    assert E <= E_ref + bound, (
        f"{name}: dissipates less than the reference: ½zᵀGz + zᵀ(g − w) = {E:.12g} > {E_ref:.12g} + {bound:.3g} "
        f"on {label}"
    )


def _reference(friction_edges):
    from .sim.contact_solvers import ProxQPContactSolver

    return ProxQPContactSolver(friction_edges, 1e-12, 100_000)


def check_contact_solver(solver, tolerance: float | None = None, friction_edges: int = 4) -> int:
    """Run the contact solvers' conformance checks on ``solver``: a registered name (td.available_contact_solvers())
    or a treedyn.ContactSolver subclass. Returns the number of checks passed; raises AssertionError
    on the first failure, saying what and where.

    A solver with ``solve`` (in_engine False) is first handed the problems of contact_problems() and
    checked against the documented model (sim/contact.py) and the reference's optimum (ProxQP to
    1e-12): z ≥ 0; no row penetrating (Nᵀv⁺ ≥ b); the linearised Coulomb cone (Σ_j c_D,ij ≤ μ_i c_N,i);
    Signorini (a row that separates carries no impulse); maximum dissipation (v⁺'s kinetic energy no
    more than the reference's, the normal impulses within the inelastic ones' sum); inputs unmodified,
    (z, iterations) returned. Every solver, in the C++ step or not, then runs the hand-checked
    scenes with hard contacts: a box sliding at 2 m/s with μ = 0.5 stops after v₀/(μg) and
    v₀²/(2μg), to the steps it spends touching and stopping (2h, 2v₀h); a box on an incline stays
    at 20° (tan θ < μ) and slides at g(sin θ − μ cos θ) at 35°, to 3 %; three stacked boxes stand for
    0.5 s (within 1 mm, no slide), every step's impulses pushing and inside their cones.
    A solver of the C++ step is last run on MuJoCo's soft problem (unique optimum): the sliding box and
    the stack within a micrometre of the other built-in solver's optimum after 0.3 s.
    ``tolerance``: the solver's (qp_tolerance; None: its default), from which the bounds above
    follow.
    """
    from .sim.contact_solvers import CONTACT_SOLVERS, ContactSolver

    if isinstance(solver, str):
        if solver not in CONTACT_SOLVERS:
            raise ValueError(f"unknown contact solver {solver!r}; available: {', '.join(CONTACT_SOLVERS)}")
        name, cls, registered = solver, CONTACT_SOLVERS[solver], False
    elif isinstance(solver, type) and issubclass(solver, ContactSolver):
        name, cls, registered = f"conformance:{solver.__module__}.{solver.__qualname__}", solver, True
    else:
        raise TypeError(
            f"check_contact_solver takes a contact solver's name or a treedyn.ContactSolver subclass, got {solver!r}"
        )
    tol = cls.default_tolerance if tolerance is None else tolerance
    checked = 0
    if not cls.in_engine:
        for label, (G, g, b, mu, P, nL) in contact_problems(friction_edges):
            reference, _ = _reference(friction_edges).solve(G, g, b, mu, P, nL)
            _check_problem(cls(friction_edges, tol, 100_000), label, G, g, b, mu, P, nL, reference)
            checked += 1
    if registered:
        CONTACT_SOLVERS[name] = cls
    try:
        for scene in (_check_slide, _check_incline, _check_stack):
            scene(name, tol, friction_edges)
            checked += 1
    finally:
        if registered:
            del CONTACT_SOLVERS[name]
    if cls.in_engine:
        checked += _check_soft(name, tolerance)
    return checked


def _check_soft(name, tolerance) -> int:
    """A solver of the C++ step on MuJoCo's soft problem, whose optimum is unique (strictly convex: R > 0):
    the box sliding and the three stacked boxes, 0.3 s, against the other built-in solver of that problem
    (Newton against ADMM, the others against Newton; both checked against mj_step in treedyn's suite) at
    1e-12: within a micrometre (the two built-ins agree to 1e-12 m at 1e-10; an optimum off by a percent
    moves the sliding box by millimetres)."""
    from .algorithms.state import State
    from .sim.contact import ContactSimulator

    reference = "admm" if name == "newton" else "newton"
    checked = 0
    for label, (model, q, _), v in (
        ("a box sliding at 2 m/s", _box_model(0.5), np.r_[2.0, 0.5, 0, 0, 0, 0]),
        ("three boxes stacked, turned", _box_model(0.8, boxes=3), None),
    ):
        ends = []
        for how, tol in ((name, tolerance), (reference, 1e-12)):
            sim = ContactSimulator(model, 1e-3, contact_solver=how, soft=True, qp_tolerance=tol)
            state = State(q.copy(), np.zeros(model.nv) if v is None else v.copy())
            for _ in range(300):
                sim.step(state)
            ends.append(state.q)
        apart = float(np.abs(ends[0] - ends[1]).max())
        assert apart <= 1e-6, f"{name}: on MuJoCo's soft problem, {label} ends {apart:.3g} from {reference}'s optimum"
        checked += 1
    return checked


def _simulator(model, name, tol, friction_edges):
    from .sim.contact import ContactSimulator

    return ContactSimulator(model, 1e-3, contact_solver=name, qp_tolerance=tol, friction_edges=friction_edges)


def _check_slide(name, tol, friction_edges):
    """A 1 kg box launched at v₀ = 2 m/s, 30° from the x axis (between a 4-edge cone's edges), μ = 0.5:
    with the semi-implicit step its speed drops by μ g h per step in contact, so it stops after
    v₀/(μg) and v₀²/(2μg) up to the step before touching and the step it stops in."""
    from .algorithms.state import State

    mu, v0, h = 0.5, 2.0, 1e-3
    model, q, _ = _box_model(mu)
    u = np.array([np.cos(np.pi / 6), np.sin(np.pi / 6), 0.0])
    sim = _simulator(model, name, tol, friction_edges)
    t_stop, d_stop = v0 / (mu * G_EARTH), v0**2 / (2 * mu * G_EARTH)
    traj = sim.run(State(q, np.r_[v0 * u, 0, 0, 0]), 1.2 * t_stop)
    speed = np.linalg.norm(traj.v[:, :3], axis=1)
    at_rest = speed < 10 * sim.qp_tolerance + 1e-9
    assert at_rest.any(), f"{name}: a box sliding at 2 m/s on μ = 0.5 never stops (last speed {speed[-1]:.3g} m/s)"
    stopped = traj.t[np.argmax(at_rest)]
    travelled = (traj.q[-1, :3] - q[:3]) @ u
    assert abs(stopped - t_stop) <= 2 * h + 1e-12, (
        f"{name}: a box sliding at 2 m/s on μ = 0.5 stops at t = {stopped:.4f} s, not {t_stop:.4f} s (± 2h)"
    )
    assert abs(travelled - d_stop) <= 2 * v0 * h, (
        f"{name}: a box sliding at 2 m/s on μ = 0.5 travels {travelled:.4f} m, not {d_stop:.4f} m (± 2 v₀ h)"
    )
    assert traj.max_penetration.max() < 1e-3, f"{name}: the sliding box sinks {traj.max_penetration.max():.3g} m"


def _check_incline(name, tol, friction_edges):
    """A box on a plane tilted 20° and 35° with μ = 0.5: held below the friction angle (tan θ < μ; it
    slides only the g sin θ h² of the step before it touches), sliding at g(sin θ − μ cos θ) above."""
    from .algorithms.state import State

    mu, h = 0.5, 1e-3
    for degrees in (20.0, 35.0):
        theta = np.radians(degrees)
        model, q, R = _box_model(mu, theta=-theta)
        traj = _simulator(model, name, tol, friction_edges).run(State(q, np.zeros(6)), 0.3)
        n = R[:, 2]
        down = np.array([0.0, 0.0, -G_EARTH]) - (-G_EARTH * n[2]) * n
        s = (traj.q[:, :3] - q[:3]) @ (down / np.linalg.norm(down))
        a = G_EARTH * (np.sin(theta) - mu * np.cos(theta))
        if a <= 0:
            assert abs(s[-1]) <= G_EARTH * h * h + 1e-9, (
                f"{name}: a box on a {degrees:g}° incline with μ = 0.5 (held) slid {s[-1]:.3g} m in 0.3 s"
            )
        else:
            speed = np.diff(s) / np.diff(traj.t)
            a_fit = np.polyfit(traj.t[10:-1], speed[10:], 1)[0]
            assert abs(a_fit / a - 1) <= 0.03, (
                f"{name}: a box on a {degrees:g}° incline with μ = 0.5 slides at {a_fit:.4g} m/s², not {a:.4g}"
            )


def _check_stack(name, tol, friction_edges):
    """Three 1 kg boxes stacked, each turned 0.3 rad from the one below, for 0.5 s at h = 1e-3: within a
    millimetre of where they were, every step's impulses compressive and inside their cones (to the
    solver's tolerance in impulse units, scaled by the largest impulse)."""
    from .algorithms.state import State

    model, q, _ = _box_model(0.8, boxes=3)
    sim = _simulator(model, name, tol, friction_edges)
    state = State(q.copy(), np.zeros(model.nv))
    for _ in range(500):
        step = sim.step(state)
        n = step.contacts.normals
        normal = np.einsum("pi,pi->p", step.impulses, n)
        tangent = np.linalg.norm(step.impulses - normal[:, None] * n, axis=1)
        eps = 10 * sim.qp_tolerance * max(1.0, float(np.abs(step.impulses).max(initial=0.0)))
        assert normal.min(initial=0.0) >= -eps, f"{name}: a stacked box's contact pulls ({normal.min():.3g} N·s)"
        excess = float(np.max(tangent - step.contacts.friction * normal, initial=0.0))
        assert excess <= eps, f"{name}: a stacked box's friction impulse leaves its cone by {excess:.3g} N·s"
    moved = float(np.abs(state.q - q).max())
    assert moved < 1e-3, f"{name}: three stacked boxes moved {moved:.3g} (m or quaternion) in 0.5 s"
