"""PyTorch autograd for treedyn's dynamics: ``torch.autograd.Function`` wrappers whose backward pass
uses the analytic derivatives (td.aba_derivatives, td.rnea_derivatives, td.step_derivatives).

    from treedyn.interop.torch import forward_dynamics, inverse_dynamics, step
    qdd = forward_dynamics(model, q, v, tau)      # q̈ = ABA(q, v, τ)
    tau = inverse_dynamics(model, q, v, a)        # τ = RNEA(q, v, a)
    q1, v1 = step(model, q, v, tau, dt)           # one semi-implicit Euler step of td.simulate

q (nq,), v and τ (nv,) — or a batch with a leading axis B — as CPU tensors of one dtype, float32 or
float64 (the result's); q̈ and the derivatives run in that precision (τ: RNEA in float64, rounded).
Gradients flow to q (in its coordinates, quaternions included: treedyn.interop._coordinates), v and
τ (or a); f_ext (n_bodies, 6) or (B, n_bodies, 6) is a constant (an array or a tensor that does not
require grad). The derivatives are computed in the backward pass only (one kernel call gives all
three matrices; the products are formed for the inputs that need a gradient); first derivatives
only (a second backward raises).
"""

from __future__ import annotations

import numpy as np
import torch
from torch.autograd.function import once_differentiable

from .. import _checks
from ..model import Model
from . import _coordinates as C

__all__ = ["forward_dynamics", "inverse_dynamics", "step"]


def _numpy(x, name: str, dtype=None):
    if isinstance(x, torch.Tensor):
        if x.device.type != "cpu":
            raise ValueError(f"{name} must be a CPU tensor (treedyn runs on the CPU), got device {x.device}")
        return x.detach().numpy()
    return np.asarray(x, dtype=dtype)


def _inputs(model, tensors: dict, f_ext):
    """(numpy arrays, their dtype) after the checks the wrappers owe: a Model, tensors of one float
    dtype, f_ext constant."""
    _checks.instance(model, Model, "model")
    dtypes = set()
    for name, x in tensors.items():
        if not isinstance(x, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
        dtypes.add(x.dtype)
    if len(dtypes) != 1 or dtypes.pop() not in (torch.float32, torch.float64):
        got = ", ".join(f"{k}: {x.dtype}" for k, x in tensors.items())
        raise TypeError(f"{', '.join(tensors)} must be tensors of one dtype, float32 or float64; got {got}")
    dtype = np.float32 if next(iter(tensors.values())).dtype == torch.float32 else np.float64
    if isinstance(f_ext, torch.Tensor) and f_ext.requires_grad:
        raise ValueError(
            "f_ext requires grad: treedyn.interop.torch differentiates q, v and tau only (f_ext is a constant)"
        )
    arrays = [_numpy(x, k) for k, x in tensors.items()]
    return arrays, (None if f_ext is None else _numpy(f_ext, "f_ext", np.float64)), dtype


def _apply(J, g):
    """Jᵀ g for J (…, m, n) and g (…, m): (…, n)."""
    return torch.einsum("...mn,...m->...n", J, g)


def _dynamics_function(name: str, doc: str, value, jacobians, x: str):
    """A torch.autograd.Function of (model, f_ext, q, v, x): value(model, q, v, x, f_ext, dtype) forward,
    and Jᵀ g for the three Jacobians jacobians(...) gives (∂/∂q, ∂/∂v, ∂/∂x) backward."""

    def forward(ctx, model, f_ext, q, v, xt):
        (qn, vn, xn), fn, dtype = _inputs(model, {"q": q, "v": v, x: xt}, f_ext)
        ctx.model, ctx.f_ext, ctx.dtype = model, fn, dtype
        ctx.save_for_backward(q, v, xt)
        return torch.from_numpy(np.asarray(value(model, qn, vn, xn, fn, dtype)))

    @once_differentiable
    def backward(ctx, g):
        q, v, xt = (t.detach().numpy() for t in ctx.saved_tensors)
        Js = (torch.from_numpy(J) for J in jacobians(ctx.model, q, v, xt, ctx.f_ext, ctx.dtype))
        need = ctx.needs_input_grad
        return (None, None) + tuple(_apply(J, g) if need[2 + k] else None for k, J in enumerate(Js))

    members = {"__doc__": doc, "forward": staticmethod(forward), "backward": staticmethod(backward)}
    return type(name, (torch.autograd.Function,), members)


ForwardDynamics = _dynamics_function(
    "ForwardDynamics",
    "q̈ = ABA(q, v, τ); backward from td.aba_derivatives (∂q̈/∂τ = M⁻¹).",
    C.forward_dynamics,
    C.forward_jacobians,
    "tau",
)
InverseDynamics = _dynamics_function(
    "InverseDynamics",
    "τ = RNEA(q, v, a); backward from td.rnea_derivatives (∂τ/∂a = M).",
    C.inverse_dynamics,
    C.inverse_jacobians,
    "a",
)


class Step(torch.autograd.Function):
    """(q⁺, v⁺) of one semi-implicit Euler step; backward from td.step_derivatives."""

    @staticmethod
    def forward(ctx, model, f_ext, dt, q, v, tau):
        (qn, vn, tn), fn, dtype = _inputs(model, {"q": q, "v": v, "tau": tau}, f_ext)
        ctx.model, ctx.f_ext, ctx.dtype, ctx.dt = model, fn, dtype, dt
        ctx.save_for_backward(q, v, tau)
        q1, v1 = C.step(model, qn, vn, tn, dt, fn, dtype)
        return torch.from_numpy(np.asarray(q1)), torch.from_numpy(np.asarray(v1))

    @staticmethod
    @once_differentiable
    def backward(ctx, gq, gv):
        q, v, tau = (x.detach().numpy() for x in ctx.saved_tensors)
        A, B = (torch.from_numpy(J) for J in C.step_jacobians(ctx.model, q, v, tau, ctx.dt, ctx.f_ext, ctx.dtype))
        g = torch.cat([gq, gv], dim=-1)
        gx = _apply(A, g) if any(ctx.needs_input_grad[3:5]) else None
        nq = ctx.model.nq
        need = ctx.needs_input_grad
        return (
            None,
            None,
            None,
            gx[..., :nq] if need[3] else None,
            gx[..., nq:] if need[4] else None,
            _apply(B, g) if need[5] else None,
        )


def forward_dynamics(model: Model, q, v, tau, f_ext=None) -> torch.Tensor:
    """q̈ = M(q)⁻¹(τ − c(q, v, f_ext)) by ABA, differentiable in q, v and τ."""
    return ForwardDynamics.apply(model, f_ext, q, v, tau)


def inverse_dynamics(model: Model, q, v, a, f_ext=None) -> torch.Tensor:
    """τ = M(q) a + c(q, v) − Σ Jᵀ f_ext by RNEA, differentiable in q, v and a."""
    return InverseDynamics.apply(model, f_ext, q, v, a)


def step(model: Model, q, v, tau, dt: float, f_ext=None):
    """(q⁺, v⁺): v⁺ = v + dt q̈(q, v, τ), q⁺ = q ⊕ dt v⁺ (td.simulate's step), differentiable in q, v and τ."""
    return Step.apply(model, f_ext, _checks.real(dt, "dt"), q, v, tau)
