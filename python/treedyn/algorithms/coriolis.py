"""The terms of the equations of motion a Pinocchio user reaches for: the generalized gravity g(q),
the Coriolis matrix C(q, v) and the centroidal momentum and its matrix A_G(q).

    M(q) v̇ + C(q, v) v + g(q) = τ,   c(q, v) = C(q, v) v + g(q) (treedyn.bias_forces)

C is not unique; this is the factorization of Echeandia & Wensing (2021) that Pinocchio's
computeCoriolisMatrix computes, built from the bodies' spatial quantities in world coordinates:
for body i with spatial inertia Y_i, velocity v_i and momentum h_i = Y_i v_i,

    B_i = ½ (v_i ×* Y_i − Y_i v_i ×) + ½ h_i ×̄,   (h ×̄ m = m ×* h, "the force cross matrix")
    C = Σ_i J_iᵀ (Y_i J̇_i + B_i J_i),  J̇_i = v_i × J_i (column by column; + Ṡ for a universal joint)

evaluated as composite sums over subtrees in one backward pass, so that Ṁ − 2C is skew-symmetric
(for coordinates whose derivative is v: hinges and slides). Pinocchio's leaves out a universal
joint's Ṡ (its C v then differs from c − g); treedyn's keeps it. The centroidal momentum matrix maps v
to the momentum about the centre of mass, world axes: h_G = A_G(q) v, A_G = ^GX*_O Σ_i Y_i J_i.
Rows are treedyn's spatial order, [angular; linear] (Pinocchio's is [linear; angular]).
"""

from __future__ import annotations

import numpy as np

from .. import _checks as C
from ..model import Model, Universal
from .dynamics import bias_forces, forward_kinematics
from .kinematics import center_of_mass, frame_jacobian

__all__ = ["gravity_forces", "coriolis_matrix", "centroidal_momentum_matrix", "centroidal_momentum"]


def gravity_forces(model: Model, q) -> np.ndarray:
    """g(q), the generalized gravity (nv,): c(q, 0), without the joints' springs (Pinocchio's
    computeGeneralizedGravity)."""
    C.instance(model, Model, "model")
    return bias_forces(model, q, np.zeros(model.nv))


def _skew(x) -> np.ndarray:
    return np.array([[0.0, -x[2], x[1]], [x[2], 0.0, -x[0]], [-x[1], x[0], 0.0]])


def _crm(m) -> np.ndarray:
    """m × (motion on motion), [angular; linear]."""
    out = np.zeros((6, 6))
    out[:3, :3] = out[3:, 3:] = _skew(m[:3])
    out[3:, :3] = _skew(m[3:])
    return out


def _bodies(model: Model, q, R, p):
    """Per body (1..N): its world spatial inertia Y (about the world origin, world axes) and its
    world Jacobian J (6, nv) (treedyn.frame_jacobian, "world"); R, p: forward_kinematics at q."""
    out = []
    for i in range(1, model.n_bodies):
        I = model.inertias[i]
        Yb = np.zeros((6, 6))  # body axes about its origin: [[Ī_O, h×], [h×ᵀ, m 1]]
        Yb[:3, :3] = I.inertia_origin
        Yb[:3, 3:] = _skew(I.first_moment)
        Yb[3:, :3] = Yb[:3, 3:].T
        Yb[3:, 3:] = I.mass * np.eye(3)
        X = np.zeros((6, 6))  # world → body motion transform: [[E, 0], [−E r×, E]], E = Rᵀ, r = p
        E = R[i].T
        X[:3, :3] = X[3:, 3:] = E
        X[3:, :3] = -E @ _skew(p[i])
        out.append((X.T @ Yb @ X, frame_jacobian(model, q, i, reference="world")))
    return out


def _coordinates(model: Model) -> list:
    """Each body's velocity coordinates (body 0: none)."""
    vi, nv = model.v_indices, [j.nv for j in model.joints]
    return [list(range(vi[i], vi[i] + nv[i])) for i in range(model.n_bodies)]


def coriolis_matrix(model: Model, q, v) -> np.ndarray:
    """C(q, v) (nv, nv) with C v = c(q, v) − g(q) and Ṁ − 2C skew-symmetric: the factorization of
    Pinocchio's computeCoriolisMatrix (see the module)."""
    C.instance(model, Model, "model")
    q = C.array(q, "q", (model.nq,))
    v = C.array(v, "v", (model.nv,))
    parents, cols = model.parents, _coordinates(model)
    R, p = forward_kinematics(model, q)
    bodies = _bodies(model, q, R, p)
    Y = [np.zeros((6, 6))] + [b[0] for b in bodies]
    J = np.zeros((6, model.nv))
    for i, (_, Ji) in enumerate(bodies, start=1):
        J[:, cols[i]] = Ji[:, cols[i]]
    vel = [np.zeros(6)] + [Ji @ v for _, Ji in bodies]
    dJ = np.zeros((6, model.nv))
    B = [np.zeros((6, 6)) for _ in range(model.n_bodies)]
    for i in range(1, model.n_bodies):
        X = _crm(vel[i])
        dJ[:, cols[i]] = X @ J[:, cols[i]]
        if isinstance(model.joints[i], Universal):  # its S₁ = R₂ᵀa₁ turns with q₂: Ṡ₁ = −q̇₂ a₂ × S₁ (joint.hpp)
            c1, c2 = cols[i]
            w = -v[c2] * np.cross(R[i] @ np.asarray(model.joints[i].axis2, dtype=float), J[:3, c1])
            dJ[:3, c1] += w
            dJ[3:, c1] += np.cross(p[i], w)  # (at the world origin)
        h = 0.5 * Y[i] @ vel[i]
        bar = np.zeros((6, 6))  # ½h ×̄: [[−n×, −f×], [−f×, 0]]
        bar[:3, :3] = -_skew(h[:3])
        bar[:3, 3:] = bar[3:, :3] = -_skew(h[3:])
        B[i] = 0.5 * (-X.T @ Y[i] - Y[i] @ X) + bar  # (v ×* = −(v ×)ᵀ)
    Yc, Bc = [y.copy() for y in Y], [b.copy() for b in B]
    subtree = [[i] for i in range(model.n_bodies)]
    dF = np.zeros((6, model.nv))
    out = np.zeros((model.nv, model.nv))
    for i in range(model.n_bodies - 1, 0, -1):
        ci = cols[i]
        dF[:, ci] = Yc[i] @ dJ[:, ci] + Bc[i] @ J[:, ci]
        below = [k for b in subtree[i] for k in cols[b]]
        out[np.ix_(ci, below)] = J[:, ci].T @ dF[:, below]
        above = [k for a in _ancestors(parents, i) for k in cols[a]]
        if above:
            out[np.ix_(ci, above)] = (Yc[i] @ J[:, ci]).T @ dJ[:, above] + (J[:, ci].T @ Bc[i]) @ J[:, above]
        p = parents[i]
        if p > 0:
            Yc[p] += Yc[i]
            Bc[p] += Bc[i]
        subtree[p] += subtree[i]
    return out


def _ancestors(parents, i) -> list:
    out, a = [], parents[i]
    while a > 0:
        out.append(a)
        a = parents[a]
    return out


def centroidal_momentum_matrix(model: Model, q) -> np.ndarray:
    """A_G(q) (6, nv): the momentum about the centre of mass, world axes, h_G = A_G v, rows
    [angular; linear] (Pinocchio's computeCentroidalMap, its rows [linear; angular])."""
    C.instance(model, Model, "model")
    q = C.array(q, "q", (model.nq,))
    A = sum((Y @ J for Y, J in _bodies(model, q, *forward_kinematics(model, q))), np.zeros((6, model.nv)))
    c = center_of_mass(model, q)  # (of the bodies that move, as Pinocchio's)
    A[:3] -= _skew(c) @ A[3:]  # (the angular momentum about c: n_G = n_O − c × f)
    return A


def centroidal_momentum(model: Model, q, v) -> np.ndarray:
    """h_G = A_G(q) v (6,): the angular momentum about the centre of mass and the linear momentum,
    world axes (Pinocchio's computeCentroidalMomentum, its order [linear; angular])."""
    v = C.array(v, "v", (C.instance(model, Model, "model").nv,))
    return centroidal_momentum_matrix(model, q) @ v
