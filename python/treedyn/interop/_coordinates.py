"""The derivatives of treedyn.algorithms.derivatives (with respect to q in the tangent space) as Jacobians in
q's coordinates, which autodiff frameworks differentiate: what treedyn.interop.torch and .jax use.

A quaternion block enters the kernels only through its direction (the rotation of q/|q|, and
td.integrate returns unit quaternions), so for a spherical joint's q = (x, y, z, w) with q̂ = q/|q|
= (x̂, ŵ): δφ = T δq with T = (2/|q|) [ŵ 1 − x̂×, −x̂] (3 × 4: the vector part of q̂⁻¹ ⊗ δq̂, which
drops the radial part), and back from the tangent space at a unit q, δq = E δφ with
E = ½ [ŵ 1 + x̂×; −x̂ᵀ] (4 × 3: q ⊗ (δφ/2, 0)); T E = 1. A free joint's position moves by
δp = R δρ (ρ: the body-frame linear part), so T = diag(Rᵀ, T_quat) and E = diag(R, E_quat) with R the
rotation of q̂. Every other joint's coordinates are its tangent: T = E = 1.
"""

from __future__ import annotations

import numpy as np

from ..algorithms.configuration import integrate
from ..algorithms.derivatives import aba_derivatives, rnea_derivatives
from ..algorithms.dynamics import rnea
from ..model import Free, Model, Spherical
from ..sim.step_derivatives import _skew, step_derivatives
from ..solvers.inverse import _solver_for

__all__ = ["forward_dynamics", "inverse_dynamics", "step", "forward_jacobians", "inverse_jacobians", "step_jacobians"]


def _quat_maps(quat):
    """(T (B, 3, 4), E (B, 4, 3), R (B, 3, 3)) of quaternions (B, 4) (x, y, z, w): the module docstring's."""
    norm = np.linalg.norm(quat, axis=-1)[:, None, None]
    qh = quat / norm[..., 0]
    x, w = qh[:, :3], qh[:, 3][:, None, None]
    X = _skew(x)
    T = np.concatenate([w * np.eye(3) - X, -x[:, :, None]], axis=2) * (2 / norm)
    E = 0.5 * np.concatenate([w * np.eye(3) + X, -x[:, None, :]], axis=1)
    R = (w * w - np.einsum("bi,bi->b", x, x)[:, None, None]) * np.eye(3) + 2 * x[:, :, None] * x[:, None, :] + 2 * w * X
    return T, E, R


def _blocks(model: Model, q: np.ndarray):
    """[(iq, nq, iv, nv, T, E)] for the spherical and free joints of q (B, nq) (the others: identity)."""
    out = []
    for j, iq, iv in zip(model.joints, model.q_indices, model.v_indices):
        if isinstance(j, Spherical):
            T, E, _ = _quat_maps(q[:, iq : iq + 4])
            out.append((iq, 4, iv, 3, T, E))
        elif isinstance(j, Free):
            Tq, Eq, R = _quat_maps(q[:, iq + 3 : iq + 7])
            T, E = np.zeros((len(q), 6, 7)), np.zeros((len(q), 7, 6))
            T[:, :3, :3], T[:, 3:, 3:] = np.swapaxes(R, 1, 2), Tq
            E[:, :3, :3], E[:, 3:, 3:] = R, Eq
            out.append((iq, 7, iv, 6, T, E))
    return out


def _vector_coordinates(model: Model) -> list:
    """The indices in q of the joints whose coordinates are their tangent space (not spherical or free)."""
    return [
        iq + k
        for j, iq in zip(model.joints, model.q_indices)
        if not isinstance(j, (Spherical, Free))
        for k in range(j.nq)
    ]


def _columns_to_coordinates(model: Model, q: np.ndarray, J: np.ndarray) -> np.ndarray:
    """J (B, m, nv) with columns in the tangent space at q (B, nq) -> J T (B, m, nq)."""
    if model.nq == model.nv:
        return J
    out = np.empty(J.shape[:2] + (model.nq,), dtype=J.dtype)
    done = np.zeros(model.nv, dtype=bool)
    for iq, nq, iv, nv, T, _ in _blocks(model, q):
        out[:, :, iq : iq + nq] = J[:, :, iv : iv + nv] @ T
        done[iv : iv + nv] = True
    vec_q = _vector_coordinates(model)
    out[:, :, vec_q] = J[:, :, ~done]
    return out


def _rows_to_coordinates(model: Model, q: np.ndarray, J: np.ndarray) -> np.ndarray:
    """J (B, nv, m) with rows in the tangent space at a unit q (B, nq) -> E J (B, nq, m)."""
    if model.nq == model.nv:
        return J
    out = np.empty((J.shape[0], model.nq, J.shape[2]), dtype=J.dtype)
    done = np.zeros(model.nv, dtype=bool)
    for iq, nq, iv, nv, _, E in _blocks(model, q):
        out[:, iq : iq + nq] = E @ J[:, iv : iv + nv]
        done[iv : iv + nv] = True
    vec_q = _vector_coordinates(model)
    out[:, vec_q] = J[:, ~done]
    return out


def _batch(model, q, *xs):
    """(single, [q (B, nq) and the others (B, ...)]): a single state as a batch of 1."""
    q = np.asarray(q)
    single = q.ndim == 1
    return single, [None if x is None else (np.asarray(x)[None] if single else np.asarray(x)) for x in (q, *xs)]


def forward_dynamics(model: Model, q, v, tau, f_ext=None, dtype=np.float64) -> np.ndarray:
    """q̈ by ``aba`` in ``dtype`` (what the wrappers' forward pass returns)."""
    return _solver_for(model, "aba", dtype).forward_dynamics(q, v, tau, f_ext)


def inverse_dynamics(model: Model, q, v, a, f_ext=None, dtype=np.float64) -> np.ndarray:
    """τ by RNEA (td.rnea, float64), rounded to ``dtype``."""
    return rnea(model, q, v, a, f_ext).astype(dtype, copy=False)


def step(model: Model, q, v, tau, dt: float, f_ext=None, dtype=np.float64):
    """(q⁺, v⁺) of td.simulate's semi-implicit Euler step, as ``td.step_derivatives`` computes them."""
    qdd = forward_dynamics(model, q, v, tau, f_ext, dtype)
    v1 = np.asarray(v, dtype=dtype) + np.dtype(dtype).type(dt) * qdd
    return integrate(model, np.asarray(q, dtype=np.float64), v1.astype(np.float64), dt).astype(dtype), v1


def forward_jacobians(model: Model, q, v, tau, f_ext=None, dtype=np.float64):
    """(∂q̈/∂q (…, nv, nq) in q's coordinates, ∂q̈/∂v, ∂q̈/∂τ = M⁻¹), each with q's batch shape."""
    single, (qb, vb, tb, fb) = _batch(model, q, v, tau, f_ext)
    dq, dv, Minv = aba_derivatives(model, qb, vb, tb, fb, dtype)
    out = (_columns_to_coordinates(model, np.asarray(qb, dtype=np.float64), dq), dv, Minv)
    return tuple(o[0] for o in out) if single else out


def inverse_jacobians(model: Model, q, v, a, f_ext=None, dtype=np.float64):
    """(∂τ/∂q (…, nv, nq) in q's coordinates, ∂τ/∂v, ∂τ/∂a = M), each with q's batch shape."""
    single, (qb, vb, ab, fb) = _batch(model, q, v, a, f_ext)
    dq, dv, M = rnea_derivatives(model, qb, vb, ab, fb, dtype)
    out = (_columns_to_coordinates(model, np.asarray(qb, dtype=np.float64), dq), dv, M)
    return tuple(o[0] for o in out) if single else out


def step_jacobians(model: Model, q, v, tau, dt: float, f_ext=None, dtype=np.float64):
    """(∂(q⁺, v⁺)/∂(q, v) (…, nq + nv, nq + nv), ∂(q⁺, v⁺)/∂τ (…, nq + nv, nv)) in q's and q⁺'s
    coordinates, from td.step_derivatives."""
    single, (qb, vb, tb, fb) = _batch(model, q, v, tau, f_ext)
    q1, _, A, B = step_derivatives(model, qb, vb, tb, dt, fb, dtype)
    n, q0, q1 = model.nv, np.asarray(qb, dtype=np.float64), q1.astype(np.float64)
    # the columns of q (tangent at q -> q's coordinates), then the rows of q⁺ (tangent at q⁺ -> q⁺'s)
    A = np.concatenate([_columns_to_coordinates(model, q0, A[:, :, :n]), A[:, :, n:]], axis=2)
    A = np.concatenate([_rows_to_coordinates(model, q1, A[:, :n]), A[:, n:]], axis=1)
    B = np.concatenate([_rows_to_coordinates(model, q1, B[:, :n]), B[:, n:]], axis=1)
    return (A[0], B[0]) if single else (A, B)
