"""The constraint force algorithm (Fijany; yang-wu-pan §III, Alg. 1) with odd–even elimination
and scan, for an unbranched chain of 1-DoF joints fixed to the world: the per-robot parallel
scheme of the paper, in which no step walks the chain link by link. The C++ kernel
(algorithms/cfa.hpp) is the reference; the equations, in link coordinates:
  a_i = X_i a_{i-1} + S_i q̈_i,  F_i = J_i a_i + X_{i+1}ᵀ F_{i+1},  τ^δ_i = S_iᵀ F_i     eq. (9)
  P = (I − Γ) J⁻¹ (I − Γ)ᵀ, block tri-diagonal                                           eq. (10)
  A = Wᵀ P W, B = Wᵀ P S, C = Sᵀ P S                                                     eq. (15)
  A F_c = −B τ^δ (odd–even elimination),  q̈ = C τ^δ + Bᵀ F_c                           eq. (17)
τ^δ = τ − c by RNEA with the two propagations as scans (§II-B): velocities and accelerations
root to tip, forces tip to root. As in C++, refinement on the equations of motion
follows (r = τ − RNEA(q, q̇, q̈), δq̈ = (C − BᵀA⁻¹B) r through the kept elimination), which
removes the cancellation of eq. (17) on chains whose link masses span decades."""

from __future__ import annotations

import jax.numpy as jnp

from .joints import joint_transforms, passive_force
from .oee import oee_solve, oee_substitute
from .scan import affine_scan
from .spatial import cross_force, cross_motion, mtv, mv
from .tree import external, spatial_gravity

#: refinement steps on the equations of motion. The C++ kernel takes one, after refining the
#: constraint-force solve until its backward error stops falling (a data-dependent loop); here the
#: solve gets one fixed sweep, and on chains whose link masses span 1e6 (tests/xla/test_xla_cfa.py) one
#: step left q̈ 3e-11 from ABA's, above the bound of two backward-stable solves, two steps 1e-13
REFINEMENT_STEPS = 2


def _chain_rnea(X, S, I, qd, qdd, a0, fx):
    """RNEA on a chain by scans: the link forces' projections S_iᵀ F_i (n,) for q̈ = qdd."""
    vJ = S * qd[:, None]
    v = affine_scan(X, vJ)  # v_i = X_i v_{i-1} + S_i q̇_i
    b = cross_motion(v, vJ) + S * qdd[:, None]  # c_i + S_i q̈_i
    b = b.at[0].add(mv(X[0], a0))
    a = affine_scan(X, b)  # a_i = X_i a_{i-1} + c_i + S_i q̈_i
    f = mv(I, a) + cross_force(v, mv(I, v)) - fx
    Xt_next = jnp.concatenate([jnp.swapaxes(X[1:], -1, -2), jnp.zeros_like(X[:1])])  # X_{i+1}ᵀ
    F = affine_scan(Xt_next, f, reverse=True)  # F_i = f_i + X_{i+1}ᵀ F_{i+1}
    return jnp.sum(S * F, -1)


def _blocks(X, S, Jinv, W):
    """Alg. 1 lines 4-6: the blocks of A, B, C from those of P, every joint at once."""
    XJX = X[1:] @ Jinv[:-1] @ jnp.swapaxes(X[1:], -1, -2)
    Pd = Jinv.at[1:].add(XJX)  # P_ii = J_i⁻¹ + X_i J_{i-1}⁻¹ X_iᵀ (P_11 = J_1⁻¹)
    Pu = -Jinv[:-1] @ jnp.swapaxes(X[1:], -1, -2)  # P_{i,i+1} = −J_i⁻¹ X_{i+1}ᵀ
    Wt = jnp.swapaxes(W, -1, -2)
    Ad = Wt @ Pd @ W
    Bd = mv(Wt @ Pd, S)
    Cd = jnp.sum(S * mv(Pd, S), -1)
    zero = jnp.zeros((1, 5, 5), X.dtype)
    Au = jnp.concatenate([Wt[:-1] @ Pu @ W[1:], zero])  # A_{i,i+1}
    Bu = jnp.concatenate([mv(Wt[:-1] @ Pu, S[1:]), zero[:, 0]])  # B_{i,i+1} = W_iᵀ P_{i,i+1} S_{i+1}
    Bl = jnp.concatenate([mtv(Pu @ W[1:], S[:-1]), zero[:, 0]])  # B_{i+1,i} = W_{i+1}ᵀ P_{i+1,i} S_i
    Cu = jnp.concatenate([jnp.sum(S[:-1] * mv(Pu, S[1:]), -1), zero[:, 0, 0]])  # C_{i,i+1}
    return Ad, Au, Bd, Bu, Bl, Cd, Cu


def _prev(x):
    return jnp.concatenate([jnp.zeros_like(x[:1]), x[:-1]])


def _next(x):
    return jnp.concatenate([x[1:], jnp.zeros_like(x[:1])])


def _minus_B(blocks, t):
    """−(B t)_i = −(B_{i,i-1} t_{i-1} + B_ii t_i + B_{i,i+1} t_{i+1}) (Alg. 1 line 7): (n, 5)."""
    _, _, Bd, Bu, Bl, _, _ = blocks
    return -(Bd * t[:, None] + Bu * _next(t)[:, None] + _prev(Bl) * _prev(t)[:, None])


def _accelerations(blocks, t, Fc):
    """(C τ + Bᵀ F_c)_i (Alg. 1 line 11, eq. (17))."""
    _, _, Bd, Bu, Bl, Cd, Cu = blocks
    dot = lambda a, b: jnp.sum(a * b, -1)  # noqa: E731
    return Cd * t + dot(Bd, Fc) + _prev(Cu) * _prev(t) + dot(_prev(Bu), _prev(Fc)) + Cu * _next(t) + dot(Bl, _next(Fc))


def cfa(st, A, q, qd, tau, f_ext=None):
    """q̈ (nv,) of a chain of 1-DoF joints fixed to the world (the DeviceModel has its chain arrays)."""
    if "S_unit" not in A:  # (a tree, or a chain with a joint of several degrees of freedom)
        raise ValueError(
            "forward_dynamics_cfa: the constraint force algorithm takes an unbranched chain of 1-DoF joints fixed to "
            "the world; this model is not one (use forward_dynamics, the articulated-body algorithm)"
        )
    X = joint_transforms(st, A, q)[1:]
    S, I, Jinv, W = A["S_unit"], A["inertia"][1:], A["J_inv"], A["W"]
    a0 = spatial_gravity(A)
    fx = external(st, f_ext, q.dtype)[1:]
    tau = tau + passive_force(st, A, q, qd)
    t = tau - _chain_rnea(X, S, I, qd, jnp.zeros_like(qd), a0, fx)  # τ^δ (lines 1-2)
    blocks = _blocks(X, S, Jinv, W)  # lines 3-6
    Fc, factors = oee_solve(blocks[0], blocks[1], _minus_B(blocks, t))  # lines 7-10
    qdd = _accelerations(blocks, t, Fc)  # line 11
    # refinement on the equations of motion: r = τ − RNEA(q, q̇, q̈), δq̈ = (C − BᵀA⁻¹B) r
    for _ in range(REFINEMENT_STEPS):
        r = tau - _chain_rnea(X, S, I, qd, qdd, a0, fx)
        qdd = qdd + _accelerations(blocks, r, oee_substitute(factors, _minus_B(blocks, r)))
    return qdd
