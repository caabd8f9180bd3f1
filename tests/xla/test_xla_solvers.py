"""treedyn.xla.solvers: make_solver(..., device=) and backend="jax", the Solver interface's
conformance checks, numpy and JAX arrays in and out, the same named errors as the C++ solvers,
a clear error without a GPU, and one solver shared by threads."""

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from xla_checks import jax, random_batch, xla

import treedyn as td
from treedyn.scenes import chain, random_tree
from treedyn.testing import check_solver
from treedyn.xla.solvers import SOLVERS, XlaABASolver

jnp = jax.numpy


def test_make_solver_routes_to_the_xla_backend():
    model = chain(3)
    s = td.make_solver("aba", model, device="cpu")
    assert isinstance(s, XlaABASolver) and s.device.platform == "cpu" and s.backend == "jax"
    assert isinstance(td.make_solver("aba", model, backend="jax"), XlaABASolver)
    assert sorted(SOLVERS) == ["aba", "cfa-oee", "crba-cholesky"]
    with pytest.raises(ValueError, match=r"no solver named 'jsiia' on the XLA backend; it has aba, cfa-oee, crba"):
        td.make_solver("jsiia", model, device="cpu")
    with pytest.raises(ValueError, match="unknown backend 'torch'"):
        td.make_solver("aba", model, backend="torch")
    with pytest.raises(ValueError, match="device must be 'cpu' or 'gpu'"):
        td.make_solver("aba", model, device="tpu9")
    with pytest.raises(TypeError, match="float64 or float32"):
        td.make_solver("aba", model, device="cpu", dtype=np.int32)
    with pytest.raises(TypeError, match=r"unknown options \['specialise'\]"):
        td.make_solver("aba", model, device="cpu", specialise=True)


def test_gpu_is_a_gpu_or_a_clear_error():
    """On a machine with a CUDA JAX the solver is on the GPU; elsewhere (CI) the error says what is
    missing and how to get it."""
    has_gpu = any(d.platform == "gpu" for d in jax.devices())
    if has_gpu:
        assert td.make_solver("aba", chain(2), device="gpu").device.platform == "gpu"
    else:
        with pytest.raises(RuntimeError, match=r"device='gpu': JAX finds no GPU.*treedyn\[gpu\].*device='cpu'"):
            td.make_solver("aba", chain(2), device="gpu")


@pytest.mark.parametrize("cls", sorted(SOLVERS))
def test_conformance_checks(cls):
    assert check_solver(SOLVERS[cls], rtol=None, options={"device": "cpu"}) >= 1


def test_jax_arrays_stay_on_the_device_and_numpy_comes_back_as_numpy():
    model = random_tree(6, 1, floating_base=True)
    rng = np.random.default_rng(0)
    Q, V, T, F = random_batch(model, rng, 2)
    s = xla("aba", model)
    ref = s.forward_dynamics(Q, V, T, F)
    assert isinstance(ref, np.ndarray) and ref.shape == (2, model.nv)
    with jax.enable_x64(True):
        got = s.forward_dynamics(jnp.asarray(Q), jnp.asarray(V), jnp.asarray(T), jnp.asarray(F))
    assert isinstance(got, jax.Array) and got.devices() == {s.device}
    assert np.array_equal(np.asarray(got), ref)
    out = np.empty((2, model.nv))
    assert s.forward_dynamics(Q, V, T, F, out=out) is out and np.array_equal(out, ref)
    assert s.forward_dynamics(Q[:0], V[:0], T[:0]).shape == (0, model.nv)


def test_inputs_are_not_modified():
    model = chain(4)
    rng = np.random.default_rng(1)
    Q, V, T, F = random_batch(model, rng, 2)
    copies = [x.copy() for x in (Q, V, T, F)]
    xla("aba", model).forward_dynamics(Q, V, T, F)
    xla("aba", model).inverse_dynamics(Q, V, T, F)
    assert all(np.array_equal(a, b) for a, b in zip((Q, V, T, F), copies))


def _message(f):
    with pytest.raises((ValueError, TypeError)) as e:
        f()
    return type(e.value), str(e.value)


def test_bad_input_gets_the_cpp_solvers_errors_for_numpy_and_jax_arrays():
    model = random_tree(5, 2, floating_base=True)
    rng = np.random.default_rng(2)
    q, v, tau = td.random_configuration(model, rng), rng.standard_normal(model.nv), rng.standard_normal(model.nv)
    cpp, s = td.make_solver("aba", model), xla("aba", model)
    nan_v = v.copy()
    nan_v[1] = np.nan
    q_bad = q.copy()
    q_bad[3:7] *= 2  # the free joint's quaternion, norm 2
    cases = [
        (q[:-1], v, tau, None),  # wrong shape
        (q, nan_v, tau, None),  # NaN
        (q_bad, v, tau, None),  # not a unit quaternion
        (q, v, tau, np.zeros((model.n_bodies + 1, 6))),  # f_ext's shape
        (q, v, np.array(["a"] * model.nv), None),  # not numbers
    ]
    for args in cases:
        want = _message(lambda: cpp.forward_dynamics(*args))
        assert _message(lambda: s.forward_dynamics(*args)) == want
    with jax.enable_x64(True):
        for args in cases[:4]:
            want = _message(lambda: cpp.forward_dynamics(*args))
            dev = [None if x is None else jnp.asarray(x) for x in args]
            assert _message(lambda: s.forward_dynamics(*dev)) == want
    with pytest.raises(ValueError, match=r"a must have shape \(nv,\)"):
        s.inverse_dynamics(q, v, tau[:-1])
    for R in (np.ones(model.nv + 1), jnp.ones(model.nv + 1), jnp.ones((2, model.nv, 1))):
        with pytest.raises(ValueError, match=rf"R must have shape \(nv,\) or \(nv, m\) with nv = {model.nv}, got"):
            s.inverse_inertia(q, R)


def test_a_solver_shared_by_threads():
    model = random_tree(8, 4, floating_base=True)
    rng = np.random.default_rng(3)
    batches = [random_batch(model, rng, 3) for _ in range(8)]
    s = xla("aba", model)
    alone = [s.forward_dynamics(Q, V, T, F) for Q, V, T, F in batches]
    with ThreadPoolExecutor(4) as pool:
        together = list(pool.map(lambda b: s.forward_dynamics(*b), batches))
    assert all(np.array_equal(a, b) for a, b in zip(alone, together))
