"""treedyn.interop.jax: jax.test_util.check_grads (forward and reverse mode, float64) of forward
dynamics, inverse dynamics and one step on every joint kind, fixed and floating bases; jacfwd and
jacrev against central differences in q's coordinates with tests/algorithms/test_derivatives.py's bound; jit
and vmap (a vmapped call is the batched call); float32 within its bound of float64; bad input.
Skipped without JAX (pip install treedyn[jax]; .ci/interop installs it and runs these)."""

import numpy as np
import pytest
from conftest import assert_below, dynamics_scale, random_state, rounding_bound
from interop_checks import check_against_central_differences, models
from support.derivatives import random_f_ext, two_floating_bodies

import treedyn as td
from treedyn.scenes import chain

jax = pytest.importorskip("jax", reason="JAX is optional (pip install treedyn[jax])")
jnp = pytest.importorskip("jax.numpy")
tdj = pytest.importorskip("treedyn.interop.jax")
from jax.test_util import check_grads  # noqa: E402

from treedyn.interop import _coordinates  # noqa: E402


@pytest.fixture(params=models(), ids=lambda c: c[0])
def model(request):
    return request.param[1]


@pytest.fixture
def x64():
    with jax.enable_x64(True):
        yield


def wrapped(model, which, f_ext=None, dt=0.2, cat=False):
    if which == "forward":
        return lambda q, v, x: tdj.forward_dynamics(model, q, v, x, f_ext)
    if which == "inverse":
        return lambda q, v, x: tdj.inverse_dynamics(model, q, v, x, f_ext)
    if cat:
        return lambda q, v, x: jnp.concatenate(tdj.step(model, q, v, x, dt, f_ext), axis=-1)
    return lambda q, v, x: tdj.step(model, q, v, x, dt, f_ext)


@pytest.mark.parametrize("which", ["forward", "inverse", "step"])
def test_check_grads(model, which, x64):
    # JAX's own check: JVPs and VJPs against its finite differences in random directions (its
    # default tolerances for float64), on one state and under jit
    rng = np.random.default_rng(1)
    args = tuple(jnp.asarray(a) for a in random_state(model, rng))
    f_ext = random_f_ext(model, rng)
    check_grads(wrapped(model, which, f_ext), args, order=1, modes=("fwd", "rev"))
    check_grads(jax.jit(wrapped(model, which, f_ext)), args, order=1, modes=("fwd", "rev"))


@pytest.mark.parametrize("which", ["forward", "inverse", "step"])
@pytest.mark.parametrize("mode", ["jacfwd", "jacrev"])
def test_jacobians_match_central_differences_in_coordinates(model, which, mode, x64):
    # tests/interop/interop_checks.py: the bound of tests/algorithms/test_derivatives.py; the differences of treedyn's
    # own functions (each JAX call costs a dispatch; test_values_are_treedyns checks they agree)
    def value(q, v, x, f_ext):
        if which == "step":
            return np.concatenate(_coordinates.step(model, q, v, x, 0.2, f_ext))
        return getattr(_coordinates, f"{which}_dynamics")(model, q, v, x, f_ext)

    def jacobian(q, v, x, f_ext):
        jac = getattr(jax, mode)(wrapped(model, which, f_ext, cat=True), argnums=(0, 1, 2))
        return [np.asarray(J) for J in jac(*(jnp.asarray(a) for a in (q, v, x)))]

    check_against_central_differences(model, which, value, jacobian, dt=0.2)


@pytest.mark.parametrize("which", ["forward", "inverse", "step"])
def test_values_are_treedyns(model, which, x64):
    rng = np.random.default_rng(6)
    q, v, x = random_state(model, rng)
    f_ext = random_f_ext(model, rng)
    got = wrapped(model, which, f_ext, cat=True)(*(jnp.asarray(a) for a in (q, v, x)))
    if which == "step":
        ref = np.concatenate(td.step_derivatives(model, q, v, x, 0.2, f_ext)[:2])
    elif which == "forward":
        ref = td.make_solver("aba", model).forward_dynamics(q, v, x, f_ext)
    else:
        ref = td.rnea(model, q, v, x, f_ext)
    np.testing.assert_array_equal(np.asarray(got), ref)


def test_vmap_is_the_batched_call_and_grad_goes_through_it(x64):
    model, rng = two_floating_bodies(), np.random.default_rng(3)
    states = [random_state(model, rng) for _ in range(3)]
    Q, V, T = (jnp.asarray(np.array([s[k] for s in states])) for k in range(3))
    f = wrapped(model, "forward")
    batched = np.asarray(f(Q, V, T))  # one call with a leading batch axis
    np.testing.assert_array_equal(np.asarray(jax.vmap(f)(Q, V, T)), batched)
    np.testing.assert_array_equal(batched, td.make_solver("aba", model).forward_dynamics(*map(np.asarray, (Q, V, T))))
    # per-item gradients under vmap: each the single state's (the same kernels on a batch: bit for bit)
    g = jax.vmap(jax.grad(lambda q, v, t: f(q, v, t).sum(), argnums=(0, 1, 2)))(Q, V, T)
    for b in range(3):
        gb = jax.grad(lambda q, v, t: f(q, v, t).sum(), argnums=(0, 1, 2))(Q[b], V[b], T[b])
        for got, ref in zip(g, gb):
            np.testing.assert_array_equal(np.asarray(got[b]), np.asarray(ref))
    # one f_ext for the whole batch goes to every item
    f_ext = random_f_ext(model, rng)
    got = np.asarray(jax.vmap(wrapped(model, "forward", f_ext))(Q, V, T))
    ref = td.make_solver("aba", model).forward_dynamics(
        *map(np.asarray, (Q, V, T)), np.broadcast_to(f_ext, (3, *f_ext.shape))
    )
    np.testing.assert_array_equal(got, ref)
    q1, v1 = jax.jit(jax.vmap(wrapped(model, "step")))(Q, V, T)
    assert q1.shape == Q.shape and v1.shape == V.shape


@pytest.mark.parametrize("which", ["forward", "inverse", "step"])
def test_float32_agrees_with_float64(which):
    # values and gradients within δ32·cond(M) of the magnitudes summed (as tests/algorithms/test_derivatives.py's
    # float32 tests); without x64 JAX's arrays are float32, and so is everything computed
    model, rng = two_floating_bodies(), np.random.default_rng(4)
    q, v, x = random_state(model, rng)

    def run(dtype):
        f = wrapped(model, which, cat=True)
        args = tuple(jnp.asarray(a, dtype=dtype) for a in (q, v, x))
        y = f(*args)
        g = jax.grad(lambda *a: f(*a).sum(), argnums=(0, 1, 2))(*args)
        assert y.dtype == dtype and all(gi.dtype == dtype for gi in g)
        return [np.asarray(y, dtype=np.float64)] + [np.asarray(gi, dtype=np.float64) for gi in g]

    out32 = run(jnp.float32)
    with jax.enable_x64(True):
        out64 = run(jnp.float64)
    zero = np.zeros(model.nv)
    S = np.abs(dynamics_scale(model, q, v, zero, zero)).max() + np.abs(x).max()
    cond = np.linalg.cond(td.mass_matrix(model, q), np.inf) if which != "inverse" else 1.0
    d32 = rounding_bound(model.nv, np.float32)
    for r32, r64, name in zip(out32, out64, ["value", "grad q", "grad v", "grad x"]):
        size = model.nv * (np.abs(r64).max() + S)  # a gradient sums nv entries
        assert_below(r32 - r64, d32 * cond * size, f"float32 {which} {name}", size=size)


def test_bad_input_raises_clear_errors(x64):
    model = chain(3)
    q = v = tau = jnp.zeros(3)
    with pytest.raises(TypeError, match="one dtype, float32 or float64"):
        tdj.forward_dynamics(model, q, v, tau.astype(jnp.float32))
    with pytest.raises(TypeError, match="one dtype, float32 or float64"):
        tdj.inverse_dynamics(model, q.astype(int), v.astype(int), tau.astype(int))
    with pytest.raises(TypeError, match="model must be a treedyn.Model"):
        tdj.forward_dynamics("chain", q, v, tau)
    with pytest.raises(TypeError, match="f_ext must be a concrete array"):
        jax.jit(lambda f: tdj.forward_dynamics(model, q, v, tau, f))(jnp.zeros((4, 6)))
    with pytest.raises(ValueError, match="dt must be finite"):
        tdj.step(model, q, v, tau, float("nan"))
    with pytest.raises(Exception, match="v must have shape"):  # raised in the callback, re-raised by JAX
        tdj.forward_dynamics(model, q, v[:2], tau).block_until_ready()
