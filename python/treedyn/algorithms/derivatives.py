"""Analytic derivatives of the dynamics (carpentier-mansard2018): ∂τ/∂(q, v, a) of inverse dynamics
and ∂q̈/∂(q, v, τ) of forward dynamics, in O(n d) and O(n²) (plus two dense products for q̈),
float64 or float32, for one state or a batch (a leading axis B, spread over the threads).

Derivatives with respect to q are taken in the tangent space, as Pinocchio's: column k is
d/dε of the result at ``td.integrate(model, q, ε e_k, 1)`` — for a spherical joint a rotation of
the body by ε about its own axis k, for a free joint a motion along SE(3)'s exponential of the
body-frame twist ε e_k (the same coordinates as its velocity), for every other joint plain q_k + ε.
"""

from __future__ import annotations

import weakref

import numpy as np

from .. import _core
from ..model import Model

__all__ = ["rnea_derivatives", "aba_derivatives"]


#: the C++ side per model and dtype, kept with the model (its per-thread workspaces are reused; it
#: follows the model's growth and gravity on each call)
_engines: weakref.WeakKeyDictionary[Model, dict] = weakref.WeakKeyDictionary()


#: the engine handed out last, as (weak reference to its model, dtype, engine): calls on one model
#: skip the weak dictionary (~0.1 µs of a 2 µs call on a 6-joint arm); the tuple is replaced whole,
#: so a thread reads one entry or the other, never a mix
_last = (lambda: None, None, None)


def _engine(model, dtype):
    global _last
    last = _last
    if last[0]() is model and last[1] is dtype:
        return last[2]
    try:
        engine = _engines[model][dtype]
        _last = (weakref.ref(model), dtype, engine)
        return engine
    except (KeyError, TypeError):  # (TypeError: not a Model's weak reference, or an unhashable dtype)
        pass
    if not isinstance(model, Model):
        raise TypeError(f"model must be a treedyn.Model, got {type(model).__name__}")
    dt = np.dtype(dtype)
    if dt not in (np.dtype(np.float64), np.dtype(np.float32)):
        raise TypeError(f"dtype must be float64 or float32, got {dt}")
    per_model = _engines.setdefault(model, {})
    engine = per_model.get(dt) or (_core.Derivatives32 if dt == np.float32 else _core.Derivatives64)(model.core)
    per_model[dt] = per_model[dtype] = engine
    return engine


def rnea_derivatives(model: Model, q, v, a, f_ext=None, dtype=np.float64):
    """(∂τ/∂q, ∂τ/∂v, M) of τ = ``td.rnea(model, q, v, a, f_ext)``, each (nv, nv) — or (B, nv, nv)
    for batches q (B, nq), v and a (B, nv), f_ext (B, n_bodies, 6). ∂τ/∂a = M(q). f_ext: spatial
    forces [n; f] on each body in its own frame (they turn with the body, and so enter ∂τ/∂q)."""
    return _engine(model, dtype).rnea(model.core, q, v, a, f_ext)


def aba_derivatives(model: Model, q, v, tau, f_ext=None, dtype=np.float64):
    """(∂q̈/∂q, ∂q̈/∂v, M⁻¹) of q̈ = M(q)⁻¹(τ − c(q, v, f_ext)), each (nv, nv) or (B, nv, nv);
    ∂q̈/∂τ = M⁻¹ (drumwright2012's Θ(n²) inverse). Computed as −M⁻¹ ∂τ/∂(q, v) of
    ``rnea_derivatives`` at (q, v, q̈)."""
    return _engine(model, dtype).aba(model.core, q, v, tau, f_ext)
