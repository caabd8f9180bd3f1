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

from .algorithms.configuration import random_configuration
from .model import Model
from .scenes import chain, random_tree
from .solvers.base import Solver
from .solvers.registry import make_solver

__all__ = ["check_solver", "conformance_models"]


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
