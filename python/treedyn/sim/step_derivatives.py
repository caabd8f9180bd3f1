"""One semi-implicit Euler step and its derivatives with respect to the state and the torques (for
shooting methods), from the analytic derivatives of forward dynamics
(``treedyn.algorithms.derivatives``) and the Jacobians of ``integrate`` on the joints' Lie groups.

It is ``td.simulate``'s step except for free joints: td.simulate (sim/step.py: free_velocity,
transport) steps a free joint's linear velocity in the world frame and moves its position along
it; this step keeps the body-frame update v + dt q̈ and integrate's SE(3) screw (whose speed grows
by √(1 + (ω dt)²) per step for a spinning body). Its derivatives are those of the step it takes."""

from __future__ import annotations

import numpy as np

from .. import _checks, _core
from ..algorithms.derivatives import aba_derivatives
from ..model import Free, Model, Spherical
from ..solvers.inverse import _solver_for

__all__ = ["step_derivatives"]


def _so3(phi):
    """For rotation vectors φ (..., 3): Exp(φ) = 1 + sin θ/θ φ× + b φ×², and b(θ) = (1 − cos θ)/θ²,
    c(θ) = (θ − sin θ)/θ³ with b'(θ)/θ and c'(θ)/θ (θ = |φ|), each (..., 1, 1), φ× and φ×²: the right
    Jacobian is Jr(φ) = 1 − b φ× + c φ×², the left one V(φ) = 1 + b φ× + c φ×² (the translation of
    SE(3)'s exponential). Series below θ = 0.05 (truncation ≤ θ⁸/10⁷: below the rounding), the
    closed forms above; in float64 whatever the caller's precision (the closed forms cancel)."""
    phi = np.asarray(phi, dtype=np.float64)
    t2 = np.einsum("...i,...i->...", phi, phi)[..., None, None]
    th = np.sqrt(t2)
    small = th < 0.05
    # the closed forms at θ ≥ 0.05 only (θ = 0.05 where the series is used: no division by zero)
    tb = np.where(small, 0.05, th)
    tb2 = tb * tb
    sn, cs = np.sin(tb), np.cos(tb)
    series = (
        1 - t2 / 6 * (1 - t2 / 20 * (1 - t2 / 42)),  # sin θ/θ
        0.5 - t2 / 24 + t2**2 / 720 - t2**3 / 40320,
        1 / 6 - t2 / 120 + t2**2 / 5040 - t2**3 / 362880,
        -1 / 12 + t2 / 180 - t2**2 / 6720 + t2**3 / 453600,
        -1 / 60 + t2 / 1260 - t2**2 / 60480 + t2**3 / 4989600,
    )
    closed = (
        sn / tb,
        (1 - cs) / tb2,
        (tb - sn) / (tb2 * tb),
        (tb * sn - 2 * (1 - cs)) / (tb2 * tb2),
        ((1 - cs) * tb - 3 * (tb - sn)) / (tb2 * tb2 * tb),
    )
    s, b, c, bt, ct = (np.where(small, x, y) for x, y in zip(series, closed))
    P = _skew(phi)
    P2 = P @ P
    return np.eye(3) + s * P + b * P2, b, c, bt, ct, P, P2


def _skew(x):
    """x× for vectors x (..., 3): (..., 3, 3)."""
    x = np.asarray(x, dtype=np.float64)
    S = np.zeros(x.shape[:-1] + (3, 3))
    S[..., 0, 1], S[..., 0, 2], S[..., 1, 2] = -x[..., 2], x[..., 1], -x[..., 0]
    S[..., 1, 0], S[..., 2, 0], S[..., 2, 1] = x[..., 2], -x[..., 1], x[..., 0]
    return S


def _integrate_blocks(model: Model, w: np.ndarray):
    """The derivatives of q⁺ = q ⊕ w (td.integrate(model, q, w, 1)) in the tangent spaces,
    δq⁺ = Dq δq + Dw δw, block-diagonal by joint and the identity on vector joints: [(k, m, Dq, Dw)]
    for the spherical and free joints (their v at k..k+m, blocks (B, m, m); w (B, nv)). Spherical
    (q⁺ = q Exp(φ)): Exp(φ)ᵀ and Jr(φ). Free (q⁺ = q Exp(ξ), ξ = (ρ, φ) = (linear, angular), SE(3)):
    Ad(Exp(ξ)⁻¹) = [Eᵀ, −Eᵀ t× ; 0, Eᵀ] (E = Exp(φ), t = V(φ)ρ) and [Jr(φ), Q; 0, Jr(φ)] with
    Q = Eᵀ ∂(V(φ)ρ)/∂φ = Eᵀ (−b ρ× + (φ×ρ)(b'/θ)φᵀ + c((φ·ρ)1 + φρᵀ − 2ρφᵀ) + (φ×(φ×ρ))(c'/θ)φᵀ)."""
    blocks = []
    for j, k in zip(model.joints, model.v_indices):
        if isinstance(j, Spherical):
            E, b, c, _, _, P, P2 = _so3(w[:, k : k + 3])
            ET = np.swapaxes(E, -1, -2)
            blocks.append((k, 3, ET, np.eye(3) - b * P + c * P2))
        elif isinstance(j, Free):
            rho, phi = w[:, k : k + 3], w[:, k + 3 : k + 6]
            E, b, c, bt, ct, P, P2 = _so3(phi)
            ET = np.swapaxes(E, -1, -2)
            t = rho + (b * P @ rho[..., None])[..., 0] + (c * P2 @ rho[..., None])[..., 0]
            Jr = np.eye(3) - b * P + c * P2
            pr, phi_rho = np.cross(phi, rho), np.einsum("bi,bi->b", phi, rho)[:, None, None]
            outer = lambda x, y: x[..., :, None] * y[..., None, :]
            dV = (
                -b * _skew(rho)
                + bt * outer(pr, phi)
                + c * (phi_rho * np.eye(3) + outer(phi, rho) - 2 * outer(rho, phi))
                + ct * outer(np.cross(phi, pr), phi)
            )
            Dq, Dw = np.zeros((len(w), 6, 6)), np.zeros((len(w), 6, 6))
            Dq[:, :3, :3], Dq[:, :3, 3:], Dq[:, 3:, 3:] = ET, -ET @ _skew(t), ET
            Dw[:, :3, :3], Dw[:, :3, 3:], Dw[:, 3:, 3:] = Jr, ET @ dV, Jr
            blocks.append((k, 6, Dq, Dw))
    return blocks


def _rows_times(blocks, which: int, X: np.ndarray) -> np.ndarray:
    """D X for the block-diagonal D of _integrate_blocks (which = 2: Dq, 3: Dw) and X (B, nv, p),
    in O(nv p): the identity's rows are X's, each block multiplies its own rows."""
    Y = X.copy()
    for blk in blocks:
        k, m, D = blk[0], blk[1], blk[which]
        Y[:, k : k + m] = D @ X[:, k : k + m]
    return Y


def step_derivatives(model: Model, q, v, tau, dt: float, f_ext=None, dtype=np.float64):
    """One semi-implicit Euler step (v⁺ = v + dt q̈(q, v, τ), q⁺ = q ⊕ dt v⁺) and
    its derivatives for shooting methods: (q⁺, v⁺, A, B) with A = ∂(q⁺, v⁺)/∂(q, v) (2nv, 2nv) and
    B = ∂(q⁺, v⁺)/∂τ (2nv, nv), positions in the tangent spaces at q and q⁺ (as rnea_derivatives).
    A batch (q (B, nq), v and tau (B, nv), f_ext (B, n_bodies, 6); one dt) gives (B, nq), (B, nv),
    (B, 2nv, 2nv) and (B, 2nv, nv). dtype float64 or float32: q̈ and ``aba_derivatives`` in that
    precision (the step's Jacobians of ``integrate``, O(nv) numbers, and q⁺ in float64), the
    results in it. dt: a positive step, as every simulator's."""
    dt = _checks.real(dt, "dt", positive=True)
    Aq, Av, Minv = aba_derivatives(model, q, v, tau, f_ext, dtype)  # checks model, dtype, q, v, tau, f_ext
    dt_ = np.dtype(dtype).type
    qdd = _solver_for(model, "aba", dtype).forward_dynamics(q, v, tau, f_ext)
    single = Aq.ndim == 2
    if single:
        Aq, Av, Minv, qdd = Aq[None], Av[None], Minv[None], qdd[None]
    n, Bn = model.nv, len(Aq)
    v_next = np.asarray(v, dtype=dtype).reshape(Bn, n) + dt_(dt) * qdd
    q_next = _core.integrate(
        model.core, np.asarray(q, dtype=np.float64).reshape(Bn, model.nq), v_next.astype(np.float64), dt
    )
    blocks = _integrate_blocks(model, dt * v_next.astype(np.float64))
    dvq, dvv, dvt = dt_(dt) * Aq, np.eye(n, dtype=dtype) + dt_(dt) * Av, dt_(dt) * Minv  # ∂v⁺/∂(q, v, τ)
    dq = np.broadcast_to(np.eye(n, dtype=dtype), dvq.shape)
    A = np.empty((Bn, 2 * n, 2 * n), dtype=dtype)
    A[:, :n, :n] = _rows_times(blocks, 2, dq) + dt_(dt) * _rows_times(blocks, 3, dvq)
    A[:, :n, n:] = dt_(dt) * _rows_times(blocks, 3, dvv)
    A[:, n:, :n], A[:, n:, n:] = dvq, dvv
    Bm = np.concatenate([dt_(dt) * _rows_times(blocks, 3, dvt), dvt], axis=1)
    q_next = q_next.astype(dtype)
    if single:
        return q_next[0], v_next[0], A[0], Bm[0]
    return q_next, v_next, A, Bm
