"""JAX transformations for treedyn's dynamics: ``jax.pure_callback`` for the values and a custom
JVP whose Jacobians come from the analytic derivatives (td.aba_derivatives, td.rnea_derivatives,
td.step_derivatives); JAX transposes the JVP for reverse mode, so ``jax.grad``, ``jax.jacrev``,
``jax.jacfwd``, ``jax.jvp``, ``jax.vjp``, ``jax.jit`` and ``jax.vmap`` all work.

    from treedyn.interop.jax import forward_dynamics, inverse_dynamics, step
    qdd = forward_dynamics(model, q, v, tau)      # q̈ = ABA(q, v, τ)
    tau = inverse_dynamics(model, q, v, a)        # τ = RNEA(q, v, a)
    q1, v1 = step(model, q, v, tau, dt)           # one semi-implicit Euler step of td.simulate

q (nq,), v and τ (nv,), or with the same leading batch axes (and under ``jax.vmap``: the batch goes
to treedyn's threads in one call), all float32 or all float64 (``jax.enable_x64``); the result is in
that precision, as are q̈ and the derivatives (τ: RNEA in float64, rounded). Derivatives with
respect to q are in its coordinates (quaternions included, treedyn.interop._coordinates). f_ext
(n_bodies, 6), or with q's batch axes, is a constant: a concrete array, not differentiated. The
Jacobians are computed only when a derivative is asked for; first derivatives only (the
callbacks have no derivatives of their own).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from .. import _checks
from ..model import Model
from . import _coordinates as C

__all__ = ["forward_dynamics", "inverse_dynamics", "step"]


def _dtype(model, **xs):
    _checks.instance(model, Model, "model")
    dtypes = {jnp.result_type(x) for x in xs.values()}
    if len(dtypes) != 1 or next(iter(dtypes)) not in (jnp.float32, jnp.float64):
        got = ", ".join(f"{k}: {jnp.result_type(x)}" for k, x in xs.items())
        raise TypeError(f"{', '.join(xs)} must be arrays of one dtype, float32 or float64; got {got}")
    return np.dtype(next(iter(dtypes)))


def _constant(f_ext):
    if f_ext is None:
        return None
    if isinstance(f_ext, jax.core.Tracer):
        raise TypeError("f_ext must be a concrete array (treedyn.interop.jax does not differentiate or trace it)")
    return np.asarray(f_ext, dtype=np.float64)


def _flat(model, f_ext, q, *xs):
    """The callbacks' arguments as one treedyn batch: (leading shape, q (B, nq), others (B, n), f_ext)."""
    lead = q.shape[:-1]
    B = int(np.prod(lead, dtype=int))
    flat = [np.asarray(q).reshape(B, model.nq)] + [np.asarray(x).reshape(B, x.shape[-1]) for x in xs]
    if f_ext is not None:
        f_ext = np.broadcast_to(f_ext, lead + (model.n_bodies, 6)).reshape(B, model.n_bodies, 6)
    return lead, flat, f_ext


def _differentiable(values, jacobians, value_shapes, jacobian_shapes, dtype):
    """A custom-JVP function of (q, v, x): values(q, v, x) -> tuple of arrays, jacobians(q, v, x) ->
    [per output, per input J (…, m, n)]; *_shapes(lead) -> the results' shapes."""

    def spec(shapes, lead):
        return tuple(jax.ShapeDtypeStruct(lead + s, dtype) for s in shapes)

    @jax.custom_jvp
    def f(q, v, x):
        return jax.pure_callback(values, spec(value_shapes, q.shape[:-1]), q, v, x, vmap_method="broadcast_all")

    @f.defjvp
    def f_jvp(primals, tangents):
        q, v, x = primals
        y = f(q, v, x)
        Js = jax.pure_callback(jacobians, spec(jacobian_shapes, q.shape[:-1]), q, v, x, vmap_method="broadcast_all")
        k = len(primals)
        ty = tuple(
            sum(jnp.einsum("...mn,...n->...m", Js[i * k + j], t) for j, t in enumerate(tangents)) for i in range(len(y))
        )
        return y, ty

    return f


def _dynamics(model, value, jacobians, q, v, x, name: str, f_ext):
    """value(model, q, v, x, f_ext, dtype) (…, nv) with the custom JVP of jacobians(...) (∂/∂q, ∂/∂v, ∂/∂x);
    x is called `name` in messages."""
    dtype, f_ext = _dtype(model, **{"q": q, "v": v, name: x}), _constant(f_ext)
    nq, nv = model.nq, model.nv

    def values(q, v, x):
        lead, (q, v, x), fe = _flat(model, f_ext, q, v, x)
        return (np.asarray(value(model, q, v, x, fe, dtype)).reshape(lead + (nv,)),)

    def jacobians_of(q, v, x):
        lead, (q, v, x), fe = _flat(model, f_ext, q, v, x)
        return tuple(J.reshape(lead + J.shape[1:]) for J in jacobians(model, q, v, x, fe, dtype))

    f = _differentiable(values, jacobians_of, [(nv,)], [(nv, nq), (nv, nv), (nv, nv)], dtype)
    return f(jnp.asarray(q), jnp.asarray(v), jnp.asarray(x))[0]


def forward_dynamics(model: Model, q, v, tau, f_ext=None):
    """q̈ = M(q)⁻¹(τ − c(q, v, f_ext)) by ABA, differentiable in q, v and τ."""
    return _dynamics(model, C.forward_dynamics, C.forward_jacobians, q, v, tau, "tau", f_ext)


def inverse_dynamics(model: Model, q, v, a, f_ext=None):
    """τ = M(q) a + c(q, v) − Σ Jᵀ f_ext by RNEA, differentiable in q, v and a."""
    return _dynamics(model, C.inverse_dynamics, C.inverse_jacobians, q, v, a, "a", f_ext)


def step(model: Model, q, v, tau, dt: float, f_ext=None):
    """(q⁺, v⁺): v⁺ = v + dt q̈(q, v, τ), q⁺ = q ⊕ dt v⁺ (td.simulate's step), differentiable in q, v and τ."""
    dt = _checks.real(dt, "dt")
    dtype, f_ext = _dtype(model, q=q, v=v, tau=tau), _constant(f_ext)
    nq, nv = model.nq, model.nv

    def values(q, v, tau):
        lead, (q, v, tau), fe = _flat(model, f_ext, q, v, tau)
        q1, v1 = C.step(model, q, v, tau, dt, fe, dtype)
        return q1.reshape(lead + (nq,)), np.asarray(v1).reshape(lead + (nv,))

    def jacobians(q, v, tau):
        lead, (q, v, tau), fe = _flat(model, f_ext, q, v, tau)
        A, B = C.step_jacobians(model, q, v, tau, dt, fe, dtype)
        A, B = A.reshape(lead + A.shape[1:]), B.reshape(lead + B.shape[1:])
        # per output (q⁺, v⁺), per input (q, v, τ)
        return (A[..., :nq, :nq], A[..., :nq, nq:], B[..., :nq, :], A[..., nq:, :nq], A[..., nq:, nq:], B[..., nq:, :])

    shapes = [(nq, nq), (nq, nv), (nq, nv), (nv, nq), (nv, nv), (nv, nv)]
    f = _differentiable(values, jacobians, [(nq,), (nv,)], shapes, dtype)
    return f(jnp.asarray(q), jnp.asarray(v), jnp.asarray(tau))
