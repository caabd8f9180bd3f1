"""The composite-rigid-body algorithm (RBDA Table 6.2; drumwright2012 Table 2) and the dense
Cholesky route to forward dynamics and M⁻¹ (drumwright2012 §6's baseline; the C++ kernels'
algorithms/crba.hpp and crba_cholesky.hpp).

The composite inertias accumulate from the leaves in, level by level, in body coordinates, as
in RBDA. RBDA then walks from each body to the root; here, so that every entry is computed at
once, each body's F_i = I^c_i S_i and S_i are carried into its root body's frame (the body at depth
1 that the body hangs from: near every body of a robot, so no lever arm spoils the rounding), and
M_de = S_dᵀ F_e for coordinate d of an ancestor of (or the same body as) coordinate e's body: the
pairing of a motion with a force is the same in any frame."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from jax.scipy.linalg import cho_solve

from .joints import joint_placements
from .rnea import rnea
from .spatial import compose, congruence, plx
from .tree import assemble, downward, kinematics, split, upward, zip_levels


def _root_frames(st, A, q):
    """Each body's pose in its root body's frame as (E, r): ^iX_root, the composition of the
    joint placements below the root (a root's own placement left out: its frame is the root's)."""
    E, r = joint_placements(st, A, q)
    roots = st.levels[0]
    E = E.at[roots].set(jnp.eye(3, dtype=q.dtype))
    r = r.at[roots].set(0)
    start = (jnp.eye(3, dtype=q.dtype), jnp.zeros(3, q.dtype))
    ys = downward(
        st, lambda p, x, lv, k: compose(x[0], x[1], p[0], p[1]), start, zip_levels(split(st, E), split(st, r))
    )
    return assemble(st, [[y[0] for y in seg] for seg in ys], start[0]), assemble(
        st, [[y[1] for y in seg] for seg in ys], start[1]
    )


def crba(st, A, q):
    """M(q) (nv, nv), the armature on its diagonal."""
    X, S, _, _ = kinematics(st, A, q, jnp.zeros(st.nv, q.dtype))

    def inward(from_children, x, lv, k):  # I^c_i = I_i + Σ_children Xᵀ I^c X, the leaves first
        Ic = x[1] + from_children
        return congruence(x[0], Ic), Ic

    I = A["inertia"]
    outs = upward(st, inward, lambda w: jnp.zeros((w, 6, 6), q.dtype), zip_levels(split(st, X), split(st, I)))
    Ic = assemble(st, outs, I[0])
    F = Ic @ S  # (N + 1, 6, K)
    Er, rr = _root_frames(st, A, q)
    T = plx(Er, rr)  # ^iX_root: motion, root -> i
    Tinv = plx(jnp.swapaxes(Er, -1, -2), -jnp.einsum("bij,bj->bi", Er, rr))
    Sr = Tinv @ S  # S_i in root coordinates
    Fr = jnp.swapaxes(T, -1, -2) @ F  # F_i in root coordinates (forces: Xᵀ)
    Sd, Fd = Sr[st.dof_body, :, st.dof_column], Fr[st.dof_body, :, st.dof_column]  # (nv, 6)
    P = Sd @ Fd.T  # P_de = S_d · F_e
    # the upper triangle (an ancestor's coordinates come first), mirrored: M is exactly symmetric
    upper = jnp.where(np.triu(st.ancestor), P, 0)
    return upper + jnp.triu(upper, 1).T + jnp.diag(A["armature"])


def crba_cholesky(st, A, q, qd, tau, f_ext=None):
    """q̈ = M⁻¹(τ − RNEA(q, q̇, 0)) by CRBA and a dense Cholesky factorisation."""
    bias = rnea(st, A, q, qd, jnp.zeros_like(qd), f_ext)  # c − τ_p − Σ Jᵀ f_ext
    return cho_solve((jnp.linalg.cholesky(crba(st, A, q)), True), tau - bias)


def inverse_inertia(st, A, q, R):
    """M(q)⁻¹ R for R (nv,) or (nv, m), through M's Cholesky factor."""
    return cho_solve((jnp.linalg.cholesky(crba(st, A, q)), True), R)
