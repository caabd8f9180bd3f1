"""Helpers shared by the benchmark modules (this module defines no benchmarks itself).

Everything expensive (models, solvers, inputs) is built in the benchmarks' ``setup``; a benchmark
that cannot run on this installation raises ``NotImplementedError`` from ``setup``, which asv
records as skipped rather than failed.
"""

import functools
import importlib
import os
import sys
import time

import numpy as np

import treedyn as td
from treedyn.scenes import chain

#: solver names known when the benchmarks are imported: the built-ins plus installed plugins
SOLVERS = sorted(td.available_solvers())

#: a single forward-dynamics call slower than this (seconds) is skipped rather than timed
SLOW_CALL_LIMIT = 1.0


@functools.cache
def chain_model(n):
    """The n-joint revolute chain, built once per benchmark process."""
    return chain(n)


def solver_class(name):
    """The Solver subclass registered under ``name``, or None when it cannot be looked up."""
    try:
        from treedyn.solvers.registry import list_solver_classes
    except ImportError:  # pragma: no cover - older/newer layouts of treedyn
        return None
    return list_solver_classes().get(name)


def make_solver_or_skip(name, model, capability=None):
    """``td.make_solver(name, model)``, or NotImplementedError (asv: skip) when the solver says it
    does not support ``model`` or lacks ``capability`` (e.g. "batch", "inverse_inertia")."""
    cls = solver_class(name)
    if cls is not None:
        reason = cls.supports(model)
        if reason:
            raise NotImplementedError(f"solver {name!r} does not support this model: {reason}")
        if capability is not None and cls.capabilities and capability not in cls.capabilities:
            raise NotImplementedError(f"solver {name!r} lacks the {capability!r} capability")
    try:
        return td.make_solver(name, model)
    except ValueError as e:  # unknown name, or supports() refused the model
        raise NotImplementedError(str(e)) from e


def figure_script(name):
    """The figure script ``benchmarks.<name>`` (at the repository's root beside asv_benchmarks/, not
    installed: asv imports only this package), for a peer it implements; NotImplementedError (asv:
    skip) when it cannot be imported."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if root not in sys.path:
        sys.path.append(root)
    try:
        return importlib.import_module(f"benchmarks.{name}")
    except ImportError as e:
        raise NotImplementedError(f"benchmarks.{name} is not importable: {e}") from e


def inputs(model, batch=None, seed=0):
    """Reproducible (q, v, tau): single vectors, or stacked (batch, ·) arrays."""
    rng = np.random.default_rng(seed)
    if batch is None:
        q = td.random_configuration(model, rng)
        return q, rng.standard_normal(model.nv), rng.standard_normal(model.nv)
    Q = np.stack([td.random_configuration(model, rng) for _ in range(batch)])
    return Q, rng.standard_normal((batch, model.nv)), rng.standard_normal((batch, model.nv))


def declares(solver, capability):
    """Whether the solver's class lists ``capability`` (declaring capabilities is optional)."""
    return capability in getattr(type(solver), "capabilities", ())


def warm_up_or_skip(fn, *args, limit=SLOW_CALL_LIMIT, warmup_calls=3, tolerate_errors=False):
    """Warm up with ``fn(*args)``: skip the benchmark (NotImplementedError) if the first call takes
    more than ``limit`` s, else make up to ``warmup_calls`` calls in all (stopping after ~0.1 s).

    A NotImplementedError from the call always means skip. Other exceptions propagate (asv reports
    the benchmark as failed) unless ``tolerate_errors``: used when the solver did not declare the
    capability being measured, so it may legitimately not provide it.

    Several warm-up calls matter for the batched benchmarks: the first one or two calls after
    ``td.set_num_threads`` pay for (re)building the OpenMP team, ~5-8 ms, which ``asv --quick``
    (a single timed call) would otherwise report as the cost of the batch."""
    t0 = time.perf_counter()
    try:
        fn(*args)
    except NotImplementedError:
        raise
    except Exception as e:
        if not tolerate_errors:
            raise
        raise NotImplementedError(f"call failed (capability not declared): {type(e).__name__}: {e}") from e
    dt = time.perf_counter() - t0
    if dt > limit:
        raise NotImplementedError(f"one call takes {dt:.2f} s > {limit} s; not timed")
    for _ in range(warmup_calls - 1):
        if time.perf_counter() - t0 > 0.1:
            break
        fn(*args)


class Threads:
    """Mixin: set_num_threads for a benchmark, restored in teardown (asv runs teardown after a setup
    that skipped with NotImplementedError too: nothing to restore when setup skipped before
    setting the threads)."""

    def _set_threads(self, threads):
        self._threads_before = td.get_num_threads()
        td.set_num_threads(threads)

    def teardown(self, *args):
        if hasattr(self, "_threads_before"):
            td.set_num_threads(self._threads_before)
