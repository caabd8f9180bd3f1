"""Joint kinematics for every body at once (the C++ kernels' model/joint.hpp and the passive force
of algorithms/passive.hpp): X_J(q) X_T, the motion subspace S (6 x K per body, the columns past a
joint's own nv_i zero) and the velocity-product term c_J = S̊ q̇. Each joint kind is computed for
its own bodies only (static index sets), so no kind pays for another's formulas."""

from __future__ import annotations

import jax.numpy as jnp

from .device_model import FREE, PRISMATIC, REVOLUTE, SPHERICAL, UNIVERSAL
from .spatial import axis_angle, compose, plx, quat_rotation


def body_coordinates(st, q):
    """Each body's joint coordinates (N + 1, 7), padded with 0."""
    return jnp.concatenate([q, jnp.zeros(1, q.dtype)])[st.qpos]


def body_rates(st, v):
    """Each body's joint velocities (N + 1, K), padded with 0 (the padding reads v's extra 0)."""
    return jnp.concatenate([v, jnp.zeros(1, v.dtype)])[st.dof]


def joint_placements(st, A, q):
    """^iX_λ(i) = X_J(q_i) X_T(i) as (E, r) for every body (body 0: the identity)."""
    qb = body_coordinates(st, q)
    n, dt = st.N + 1, q.dtype
    E = jnp.broadcast_to(jnp.eye(3, dtype=dt), (n, 3, 3))
    r = jnp.zeros((n, 3), dt)
    for kind, idx in st.by_kind.items():
        a, qk = A["axis"][idx], qb[idx]
        if kind == REVOLUTE:  # E_J = R(a, q)ᵀ
            E = E.at[idx].set(jnp.swapaxes(axis_angle(a, qk[:, 0]), -1, -2))
        elif kind == PRISMATIC:  # r_J = a q
            r = r.at[idx].set(a * qk[:, :1])
        elif kind == UNIVERSAL:  # E_J = (R(a1, q1) R(a2, q2))ᵀ
            R = axis_angle(a, qk[:, 0]) @ axis_angle(A["axis2"][idx], qk[:, 1])
            E = E.at[idx].set(jnp.swapaxes(R, -1, -2))
        elif kind == SPHERICAL:  # quaternion (x, y, z, w)
            E = E.at[idx].set(jnp.swapaxes(quat_rotation(qk[:, :4]), -1, -2))
        elif kind == FREE:  # (p, quaternion)
            E = E.at[idx].set(jnp.swapaxes(quat_rotation(qk[:, 3:7]), -1, -2))
            r = r.at[idx].set(qk[:, :3])
    return compose(E, r, A["E_T"], A["r_T"])


def joint_transforms(st, A, q):
    """^iX_λ(i) as 6 x 6 motion transforms (N + 1, 6, 6)."""
    return plx(*joint_placements(st, A, q))


def motion_subspace(st, A, q):
    """S_i (N + 1, 6, K) in body coordinates: a free joint's v = (linear, angular) as in C++."""
    n, K, dt = st.N + 1, st.K, q.dtype
    S = jnp.zeros((n, 6, K), dt)
    eye = jnp.eye(3, dtype=dt)
    for kind, idx in st.by_kind.items():
        a = A["axis"][idx]
        if kind == REVOLUTE:
            S = S.at[idx, :3, 0].set(a)
        elif kind == PRISMATIC:
            S = S.at[idx, 3:, 0].set(a)
        elif kind == UNIVERSAL:  # ω = R2ᵀ a1 q̇1 + a2 q̇2
            q2 = body_coordinates(st, q)[idx, 1]
            R2 = axis_angle(A["axis2"][idx], q2)
            S = S.at[idx, :3, 0].set(jnp.einsum("bji,bj->bi", R2, a))
            S = S.at[idx, :3, 1].set(A["axis2"][idx])
        elif kind == SPHERICAL:
            S = S.at[idx, :3, :3].set(eye)
        elif kind == FREE:
            S = S.at[idx, 3:, :3].set(eye)
            S = S.at[idx, :3, 3:6].set(eye)
    return S


def joint_bias(st, A, S, qd):
    """c_J = S̊ q̇ (N + 1, 6): for a universal joint −q̇2 q̇1 (a2 × S_1), zero for the others."""
    c = jnp.zeros((st.N + 1, 6), S.dtype)
    idx = st.by_kind.get(UNIVERSAL)
    if idx is not None:
        qdb = body_rates(st, qd)[idx]
        w = jnp.cross(A["axis2"][idx], S[idx, :3, 0]) * (-qdb[:, 1] * qdb[:, 0])[:, None]
        c = c.at[idx, :3].set(w)
    return c


def _quat_mul(a, b):
    va, wa, vb, wb = a[..., :3], a[..., 3:], b[..., :3], b[..., 3:]
    return jnp.concatenate([wa * vb + wb * va + jnp.cross(va, vb), wa * wb - jnp.sum(va * vb, -1, keepdims=True)], -1)


def passive_force(st, A, q, qd):
    """τ_p = −k ∘ (q ⊖ q_rest) − d ∘ q̇ (nv,): the joint springs and dampers (algorithms/passive.hpp);
    a spherical joint's displacement is the rotation vector of q_rest⁻¹ q the shorter way round, a
    free joint's is zero."""
    x = jnp.zeros(st.nv + 1, q.dtype)
    qb = body_coordinates(st, q)
    rb = jnp.concatenate([A["q_rest"], jnp.zeros(1, q.dtype)])[st.qpos]
    for kind, idx in st.by_kind.items():
        dofs = st.dof[idx]
        if kind in (REVOLUTE, PRISMATIC):
            x = x.at[dofs[:, 0]].set(qb[idx, 0] - rb[idx, 0])
        elif kind == UNIVERSAL:
            x = x.at[dofs[:, :2]].set(qb[idx, :2] - rb[idx, :2])
        elif kind == SPHERICAL:
            rest = rb[idx, :4] * jnp.array([-1, -1, -1, 1], q.dtype)
            p = _quat_mul(rest, qb[idx, :4])
            p = jnp.where(p[:, 3:] < 0, -p, p)
            v, w = p[:, :3], p[:, 3]
            sn = jnp.sqrt(jnp.sum(v * v, -1))
            big = sn > 1e-12
            scale = jnp.where(big, 2 * jnp.arctan2(sn, w) / jnp.where(big, sn, 1), 2)
            x = x.at[dofs[:, :3]].set(v * scale[:, None])
    return -A["stiffness"] * x[: st.nv] - A["damping"] * qd
