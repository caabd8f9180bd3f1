"""The articulated-body algorithm (Featherstone 1983; RBDA Table 7.1; ascher-pai-cloutier1996 §2,
eq. (7)) as three passes over the tree's levels: velocities, articulated inertias from the leaves
in, accelerations from the root out. The C++ kernel is algorithms/aba.hpp; this is the same
algorithm for XLA (CPU and GPU), one configuration per call, batched by ``jax.vmap``."""

from __future__ import annotations

import jax.numpy as jnp

from .joints import passive_force
from .spatial import congruence, cross_force, mtv, mv
from .tree import (
    downward,
    external,
    kinematics,
    padded,
    scatter_coordinates,
    spatial_gravity,
    split,
    upward,
    zip_levels,
)


def aba(st, A, q, qd, tau, f_ext=None):
    """q̈ = M(q)⁻¹(τ + τ_p − c(q, q̇) + Σ Jᵀ f_ext) (nv,)."""
    X, S, v, c = kinematics(st, A, q, qd)
    I = A["inertia"]
    # pass 1 (RBDA 7.1): I^A_i = I_i, p^A_i = v_i ×* I_i v_i − f^x_i
    pA = cross_force(v, mv(I, v)) - external(st, f_ext, q.dtype)
    tau = padded(tau + passive_force(st, A, q, qd))
    armature = padded(A["armature"])
    levels = zip_levels(*(split(st, x) for x in (X, S, I, pA, c)))

    def inward(from_children, x, lv, k):  # pass 2, the leaves first
        Xb, Sb, IAb, pAb, cb = x
        IAb, pAb = IAb + from_children[0], pAb + from_children[1]  # the children's I^a, p^a
        Sb = Sb[..., :k]
        U = IAb @ Sb  # U_i = I^A_i S_i
        D = jnp.swapaxes(Sb, -1, -2) @ U  # D_i = S_iᵀ U_i (+ armature; 1 on padded coordinates)
        D = D + jnp.eye(k, dtype=q.dtype) * (armature[lv.dofs] + lv.pad)[..., None, :]
        u = tau[lv.dofs] - mtv(Sb, pAb)  # u_i = τ_i − S_iᵀ p^A_i
        Dinv = 1 / D if k == 1 else jnp.linalg.inv(D)
        UDinv = U @ Dinv
        Ia = IAb - UDinv @ jnp.swapaxes(U, -1, -2)  # I^a = I^A − U D⁻¹ Uᵀ
        pa = pAb + mv(Ia, cb) + mv(UDinv, u)  # p^a = p^A + I^a c + U D⁻¹ u
        # to the parent: Xᵀ I^a X, Xᵀ p^a (the world's share is dropped)
        return (congruence(Xb, Ia), mtv(Xb, pa)), (UDinv, mv(Dinv, u))

    def zero(w):
        return jnp.zeros((w, 6, 6), q.dtype), jnp.zeros((w, 6), q.dtype)

    saved = upward(st, inward, zero, levels)

    def outward(parent, x, lv, k):  # pass 3, the root first
        (Xb, Sb, _, _, cb), (UDinv, Dinv_u) = x
        ab = mv(Xb, parent[0]) + cb  # a' = X a_λ + c
        qb = Dinv_u - mtv(UDinv, ab)  # q̈_i = D⁻¹(u − Uᵀ a')
        return ab + mv(Sb[..., :k], qb), qb

    start = (spatial_gravity(A), jnp.zeros(1, q.dtype))
    ys = downward(st, outward, start, zip_levels(levels, saved))
    qdd = scatter_coordinates(st, jnp.zeros(st.nv + 1, q.dtype), [[y[1] for y in seg] for seg in ys])
    return qdd[: st.nv]
