"""What the tests of treedyn.xla share: JAX (skipped without it: pip install treedyn[gpu]; .ci/interop
installs it and fails if these are skipped), solvers made once per (name, model, dtype) — each
compiles its kernels on first use, seconds on a 2-core machine — and batches of random states."""

import numpy as np
import pytest
from conftest import assert_same_accelerations

import treedyn as td

jax = pytest.importorskip("jax", reason="JAX is optional (pip install treedyn[gpu])")

_solvers = {}


def xla(name, model, dtype=np.float64):
    """td.make_solver(name, model, device="cpu", dtype=dtype), kept for the session."""
    key = (name, id(model), np.dtype(dtype))
    if key not in _solvers:
        _solvers[key] = (model, td.make_solver(name, model, device="cpu", dtype=dtype))
    return _solvers[key][1]


def random_batch(model, rng, B):
    """B random states (B, nq), (B, nv), (B, nv) and forces on the bodies (B, n_bodies, 6)."""
    Q = np.stack([td.random_configuration(model, rng) for _ in range(B)])
    V, T = rng.standard_normal((B, model.nv)), rng.standard_normal((B, model.nv))
    F = rng.standard_normal((B, model.n_bodies, 6))
    return Q, V, T, F


def assert_batch_agrees(model, solver, Q, V, T, F=None, reference="aba"):
    """solver's batched q̈ against the C++ ``reference`` solver's, item by item, within the bound of
    two backward-stable solves (conftest.assert_same_accelerations)."""
    got = solver.forward_dynamics(Q, V, T, F)
    ref = td.make_solver(reference, model).forward_dynamics(Q, V, T, F)
    for b in range(len(Q)):
        f = None if F is None else F[b]
        assert_same_accelerations(model, Q[b], V[b], T[b], got[b], ref[b], f, what=f"q̈ vs {reference}")
