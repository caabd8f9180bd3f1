"""Odd–even elimination of a symmetric positive definite block tri-diagonal system (yang-wu-pan
§IV, Alg. 2; Hyafil–Kung): D_i on the diagonal, U_i coupling row i to row i + 1. Level j (stride
s = 2^{j-1}) removes from every row its couplings to rows i ± s at once, so that after ⌈log₂ n⌉
levels each row stands alone and x_i = D_i⁻¹ R_i (Alg. 2 line 20). The coefficients are found by
solving with D (Alg. 2 lines 3-4), never by inverting it, and kept, so that further right-hand
sides (a refinement step, the columns of M⁻¹) reuse the elimination. The C++ kernel is
linalg/oee.hpp."""

from __future__ import annotations

import jax.numpy as jnp
from jax.scipy.linalg import cho_solve


def _shift(X, s, fill):
    """Row i of the result is row i + s of X (s > 0: from below) or i − |s| (s < 0), ``fill``
    outside."""
    pad = jnp.broadcast_to(fill, (abs(s),) + X.shape[1:]).astype(X.dtype)
    return jnp.concatenate([X[s:], pad]) if s > 0 else jnp.concatenate([pad, X[:s]])


def _solve_rows(L, B):
    """D_i⁻¹ B_i for each row, L the rows' Cholesky factors."""
    return cho_solve((L, True), B)


def oee_factorise(D, U):
    """The elimination of [D_i; U_i] (n, k, k): (levels [(K, E, s)], L) with K_i = U_i D_{i+s}⁻¹,
    E_i = U_{i−s}ᵀ D_{i−s}⁻¹ (Alg. 2 lines 3-4) per level and L the last D's Cholesky factors."""
    n, k = D.shape[0], D.shape[1]
    eye = jnp.eye(k, dtype=D.dtype)
    levels, s = [], 1
    while s < n:
        L = jnp.linalg.cholesky(D)
        # D_{i+s}⁻¹ U_iᵀ and D_{i−s}⁻¹ U_{i−s}, through the shifted rows' factors
        L_next, L_prev = _shift(L, s, eye), _shift(L, -s, eye)
        U_prev = _shift(U, -s, 0)
        K = jnp.swapaxes(_solve_rows(L_next, jnp.swapaxes(U, -1, -2)), -1, -2)  # U_i D_{i+s}⁻¹
        E = jnp.swapaxes(_solve_rows(L_prev, U_prev), -1, -2)  # U_{i−s}ᵀ D_{i−s}⁻¹
        D = D - K @ jnp.swapaxes(U, -1, -2) - E @ U_prev  # Alg. 2 line 5
        U = -K @ _shift(U, s, 0)  # row i now couples to i + 2s (line 6)
        levels.append((K, E, s))
        s *= 2
    return levels, jnp.linalg.cholesky(D)


def oee_substitute(factors, R):
    """X with A X = R for the eliminated A: R (n, k) or (n, k, m)."""
    levels, L = factors
    vec = R.ndim == 2
    if vec:
        R = R[..., None]
    for K, E, s in levels:  # Alg. 2 line 7: R_i −= K_i R_{i+s} + E_i R_{i−s}
        R = R - K @ _shift(R, s, 0) - E @ _shift(R, -s, 0)
    X = _solve_rows(L, R)  # line 20
    return X[..., 0] if vec else X


def block_tridiagonal_times(D, U, X):
    """A X for A's blocks: row i = U_{i−1}ᵀ X_{i−1} + D_i X_i + U_i X_{i+1}."""
    Ut = jnp.swapaxes(U, -1, -2)
    mv = (lambda M, x: jnp.einsum("...ij,...j->...i", M, x)) if X.ndim == 2 else (lambda M, x: M @ x)
    return mv(D, X) + mv(U, _shift(X, 1, 0)) + mv(_shift(Ut, -1, 0), _shift(X, -1, 0))


def oee_solve(D, U, R):
    """A X = R by odd–even elimination and one sweep of iterative refinement (r = R − A X from the
    original blocks, A dX = r by the kept elimination, X += dX: OEE is not backward stable, see
    linalg/oee.hpp); returns (X, factors)."""
    factors = oee_factorise(D, U)
    X = oee_substitute(factors, R)
    X = X + oee_substitute(factors, R - block_tridiagonal_times(D, U, X))
    return X, factors
