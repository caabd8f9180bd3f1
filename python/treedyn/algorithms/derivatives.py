"""Analytic derivatives of the dynamics (carpentier-mansard2018): ∂τ/∂(q, v, a) of inverse dynamics
and ∂q̈/∂(q, v, τ) of forward dynamics, in O(n d) and O(n²) (plus two dense products for q̈),
float64 or float32, for one state or a batch (a leading axis B, spread over the threads).

Derivatives with respect to q are taken in the tangent space, as Pinocchio's: column k is
d/dε of the result at ``td.integrate(model, q, ε e_k, 1)`` — for a spherical joint a rotation of
the body by ε about its own axis k, for a free joint a motion along SE(3)'s exponential of the
body-frame twist ε e_k (the same coordinates as its velocity), for every other joint plain q_k + ε.
"""

from __future__ import annotations

import numpy as np

from .. import _checks as C
from .. import _core
from ..model import Model
from ..model.cache import cached

__all__ = ["rnea_derivatives", "aba_derivatives"]


def _engine(model, dtype):
    """The C++ side for the model and dtype (made by ``cached(model, dtype, _engine)``: kept with the
    model, its per-thread workspaces reused from call to call)."""
    dt = C.float_dtype(dtype)
    if dt is not dtype:  # one engine for np.float64, "float64", np.dtype("float64")
        return cached(model, dt, _engine)
    return (_core.Derivatives32 if dt == np.float32 else _core.Derivatives64)(model.core)


def rnea_derivatives(model: Model, q, v, a, f_ext=None, dtype=np.float64):
    """(∂τ/∂q, ∂τ/∂v, M) of τ = ``td.rnea(model, q, v, a, f_ext)``, each (nv, nv) — or (B, nv, nv)
    for batches q (B, nq), v and a (B, nv), f_ext (B, n_bodies, 6). ∂τ/∂a = M(q). f_ext: spatial
    forces [n; f] on each body in its own frame (they turn with the body, and so enter ∂τ/∂q)."""
    return cached(model, dtype, _engine).rnea(model.core, q, v, a, f_ext)


def aba_derivatives(model: Model, q, v, tau, f_ext=None, dtype=np.float64):
    """(∂q̈/∂q, ∂q̈/∂v, M⁻¹) of q̈ = M(q)⁻¹(τ − c(q, v, f_ext)), each (nv, nv) or (B, nv, nv);
    ∂q̈/∂τ = M⁻¹ (drumwright2012's Θ(n²) inverse). Computed as −M⁻¹ ∂τ/∂(q, v) of
    ``rnea_derivatives`` at (q, v, q̈)."""
    return cached(model, dtype, _engine).aba(model.core, q, v, tau, f_ext)
