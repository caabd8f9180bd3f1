"""Recursive Newton–Euler inverse dynamics (RNEA; RBDA Table 5.1; ascher-pai-cloutier1996 §2),
level by level: τ = M(q) q̈ + c(q, q̇) − τ_p − Σ Jᵀ f_ext, as td.rnea (the armature in M, the joint
springs' τ_p subtracted, so that inverse dynamics undoes forward dynamics)."""

from __future__ import annotations

import jax.numpy as jnp

from .joints import body_rates, passive_force
from .spatial import cross_force, mv
from .tree import accumulate, external, kinematics, propagate, spatial_gravity


def rnea(st, A, q, qd, qdd, f_ext=None):
    """τ (nv,)."""
    X, S, v, c = kinematics(st, A, q, qd)
    aJ = jnp.einsum("bik,bk->bi", S, body_rates(st, qdd))
    a = propagate(st, X, aJ + c, spatial_gravity(A))  # a_i = X_i a_λ + S_i q̈_i + c_i
    I = A["inertia"]
    f = mv(I, a) + cross_force(v, mv(I, v)) - external(st, f_ext, q.dtype)  # f_i = I a + v ×* I v − f^x
    f = accumulate(st, X, f)  # f_λ += Xᵀ f_i
    tau = jnp.einsum("bik,bi->bk", S, f)[st.dof_body, st.dof_column]  # τ_i = S_iᵀ f_i
    return tau + A["armature"] * qdd - passive_force(st, A, q, qd)
