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

from . import _core
from .model import Free, Model, Spherical

__all__ = ["rnea_derivatives", "aba_derivatives", "step_derivatives"]


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


# ------------------------------------------------------------------------------ one time step


def _so3(phi):
    """Exp(φ), and b(θ) = (1 − cos θ)/θ², c(θ) = (θ − sin θ)/θ³ with b'(θ)/θ and c'(θ)/θ (θ = |φ|):
    Exp(φ) = 1 + sin θ/θ φ× + b φ×², the right Jacobian Jr(φ) = 1 − b φ× + c φ×², and the left one
    V(φ) = 1 + b φ× + c φ×² (the translation of SE(3)'s exponential). Series below θ = 0.05
    (truncation ≤ θ⁸/10⁷: below the rounding), the closed forms above."""
    th = float(np.sqrt(phi @ phi))
    t2 = th * th
    if th < 0.05:
        s = 1 - t2 / 6 * (1 - t2 / 20 * (1 - t2 / 42))  # sin θ/θ
        b = 0.5 - t2 / 24 + t2**2 / 720 - t2**3 / 40320
        c = 1 / 6 - t2 / 120 + t2**2 / 5040 - t2**3 / 362880
        bt = -1 / 12 + t2 / 180 - t2**2 / 6720 + t2**3 / 453600
        ct = -1 / 60 + t2 / 1260 - t2**2 / 60480 + t2**3 / 4989600
    else:
        sn, cs = np.sin(th), np.cos(th)
        s, b, c = sn / th, (1 - cs) / t2, (th - sn) / (t2 * th)
        bt = (th * sn - 2 * (1 - cs)) / (t2 * t2)
        ct = ((1 - cs) * th - 3 * (th - sn)) / (t2 * t2 * th)
    P = _skew(phi)
    P2 = P @ P
    return np.eye(3) + s * P + b * P2, b, c, bt, ct, P, P2


def _skew(x):
    return np.array([[0.0, -x[2], x[1]], [x[2], 0.0, -x[0]], [-x[1], x[0], 0.0]])


def _integrate_jacobians(model: Model, w: np.ndarray):
    """(Dq, Dw): the derivatives of q⁺ = q ⊕ w (td.integrate(model, q, w, 1)) in the tangent
    spaces, δq⁺ = Dq δq + Dw δw, block-diagonal by joint. Vector joints: 1 and 1. Spherical
    (q⁺ = q Exp(φ)): Exp(φ)ᵀ and Jr(φ). Free (q⁺ = q Exp(ξ), ξ = (ρ, φ) = (linear, angular), SE(3)):
    Ad(Exp(ξ)⁻¹) = [Eᵀ, −Eᵀ t× ; 0, Eᵀ] (E = Exp(φ), t = V(φ)ρ) and [Jr(φ), Q; 0, Jr(φ)] with
    Q = Eᵀ ∂(V(φ)ρ)/∂φ = Eᵀ (−b ρ× + (φ×ρ)(b'/θ)φᵀ + c((φ·ρ)1 + φρᵀ − 2ρφᵀ) + (φ×(φ×ρ))(c'/θ)φᵀ)."""
    n = model.nv
    Dq, Dw = np.eye(n), np.eye(n)
    for j, k in zip(model.joints, model.v_indices):
        if isinstance(j, Spherical):
            E, b, c, _, _, P, P2 = _so3(w[k : k + 3])
            Dq[k : k + 3, k : k + 3] = E.T
            Dw[k : k + 3, k : k + 3] = np.eye(3) - b * P + c * P2
        elif isinstance(j, Free):
            rho, phi = w[k : k + 3], w[k + 3 : k + 6]
            E, b, c, bt, ct, P, P2 = _so3(phi)
            t = rho + b * (P @ rho) + c * (P2 @ rho)
            Jr = np.eye(3) - b * P + c * P2
            pr = np.cross(phi, rho)
            dV = (
                -b * _skew(rho)
                + bt * np.outer(pr, phi)
                + c * ((phi @ rho) * np.eye(3) + np.outer(phi, rho) - 2 * np.outer(rho, phi))
                + ct * np.outer(np.cross(phi, pr), phi)
            )
            Dq[k : k + 3, k : k + 3] = E.T
            Dq[k : k + 3, k + 3 : k + 6] = -E.T @ _skew(t)
            Dq[k + 3 : k + 6, k + 3 : k + 6] = E.T
            Dw[k : k + 3, k : k + 3] = Jr
            Dw[k : k + 3, k + 3 : k + 6] = E.T @ dV
            Dw[k + 3 : k + 6, k + 3 : k + 6] = Jr
    return Dq, Dw


def step_derivatives(model: Model, q, v, tau, dt: float, f_ext=None):
    """One semi-implicit Euler step of ``td.simulate`` (v⁺ = v + dt q̈(q, v, τ), q⁺ = q ⊕ dt v⁺) and
    its derivatives for shooting methods: (q⁺, v⁺, A, B) with A = ∂(q⁺, v⁺)/∂(q, v) (2nv, 2nv) and
    B = ∂(q⁺, v⁺)/∂τ (2nv, nv), positions in the tangent spaces at q and q⁺ (as rnea_derivatives).
    float64, one state."""
    from .inverse import _solver_for

    if isinstance(dt, (bool, np.bool_)) or not isinstance(dt, (int, float, np.integer, np.floating)):
        raise TypeError(f"dt must be a real number, got {type(dt).__name__}")
    dt = float(dt)
    if not np.isfinite(dt):
        raise ValueError("dt must be finite")
    Aq, Av, Minv = aba_derivatives(model, q, v, tau, f_ext)  # checks model, q, v, tau and f_ext
    qdd = _solver_for(model, "aba", np.float64).forward_dynamics(q, v, tau, f_ext)
    n = model.nv
    v_next = np.asarray(v, dtype=np.float64) + dt * qdd
    q_next = _core.integrate(model.core, q, v_next, dt)
    Dq, Dw = _integrate_jacobians(model, dt * v_next)
    dvq, dvv, dvt = dt * Aq, np.eye(n) + dt * Av, dt * Minv  # ∂v⁺/∂(q, v, τ)
    A = np.block([[Dq + dt * Dw @ dvq, dt * Dw @ dvv], [dvq, dvv]])
    B = np.vstack([dt * Dw @ dvt, dvt])
    return q_next, v_next, A, B
