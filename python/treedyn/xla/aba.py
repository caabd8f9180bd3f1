"""The articulated-body algorithm (Featherstone 1983; RBDA Table 7.1; ascher-pai-cloutier1996 §2,
eq. (7)) as three passes over the tree's levels: velocities, articulated inertias from the leaves
in, accelerations from the root out. The C++ kernel is algorithms/aba.hpp; this is the same
algorithm for XLA (CPU and GPU), one configuration per call, batched by ``jax.vmap``."""

from __future__ import annotations

import jax.numpy as jnp

from .joints import passive_force
from .spatial import congruence, cross_force, mtv, mv
from .tree import add, external, kinematics, over_levels, padded, put, spatial_gravity, take


def aba(st, A, q, qd, tau, f_ext=None):
    """q̈ = M(q)⁻¹(τ + τ_p − c(q, q̇) + Σ Jᵀ f_ext) (nv,)."""
    X, S, v, c = kinematics(st, A, q, qd)
    I = A["inertia"]
    # pass 1 (RBDA 7.1): I^A_i = I_i, p^A_i = v_i ×* I_i v_i − f^x_i
    pA = cross_force(v, mv(I, v)) - external(st, f_ext, q.dtype)
    tau = padded(tau + passive_force(st, A, q, qd))
    armature = padded(A["armature"])

    def inward(carry, lv, k, _):  # pass 2, the leaves first
        IA, pA = carry
        Sb = take(S, lv.bodies)[..., :k]
        IAb, pAb = take(IA, lv.bodies), take(pA, lv.bodies)
        U = IAb @ Sb  # U_i = I^A_i S_i
        D = jnp.swapaxes(Sb, -1, -2) @ U  # D_i = S_iᵀ U_i (+ armature; 1 on padded coordinates)
        D = D + jnp.eye(k, dtype=q.dtype) * (armature[lv.dofs] + lv.pad)[:, None, :]
        u = tau[lv.dofs] - mtv(Sb, pAb)  # u_i = τ_i − S_iᵀ p^A_i
        Dinv = 1 / D if k == 1 else jnp.linalg.inv(D)
        UDinv = U @ Dinv
        Ia = IAb - UDinv @ jnp.swapaxes(U, -1, -2)  # I^a = I^A − U D⁻¹ Uᵀ
        pa = pAb + mv(Ia, take(c, lv.bodies)) + mv(UDinv, u)  # p^a = p^A + I^a c + U D⁻¹ u
        Xb = take(X, lv.bodies)
        IA = add(IA, lv.parents, congruence(Xb, Ia))  # I^A_λ += Xᵀ I^a X (the world's slot unused)
        pA = add(pA, lv.parents, mtv(Xb, pa))  # p^A_λ += Xᵀ p^a
        return (IA, pA), (UDinv, mv(Dinv, u))

    _, saved = over_levels(st, inward, (I, pA), reverse=True)

    def outward(carry, lv, k, x):  # pass 3, the root first
        a, qdd = carry
        UDinv, Dinv_u = x
        ab = mv(take(X, lv.bodies), take(a, lv.parents)) + take(c, lv.bodies)  # a' = X a_λ + c
        qb = Dinv_u - mtv(UDinv, ab)  # q̈_i = D⁻¹(u − Uᵀ a')
        a = put(a, lv.bodies, ab + mv(take(S, lv.bodies)[..., :k], qb))
        return (a, qdd.at[lv.dofs].set(qb)), None

    a0 = jnp.zeros((st.N + 1, 6), q.dtype).at[0].set(spatial_gravity(A))
    (_, qdd), _ = over_levels(st, outward, (a0, jnp.zeros(st.nv + 1, q.dtype)), saved=saved)
    return qdd[: st.nv]
