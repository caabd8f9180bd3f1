"""Block bi-diagonal systems by parallel scan (yang-wu-pan §II-B, eqs. (3)-(5); Blelloch 1990):
x_0 = b_0, x_i = A_i x_{i-1} + b_i. Each row is the affine map a_i = (A_i, b_i), their
composition (A_j A_i, A_j b_i + b_j) is associative, and x_i is the translation part of
a_0 ⊕ … ⊕ a_i: ``jax.lax.associative_scan`` forms all the prefixes in O(log n) parallel steps
(the C++ kernel, linalg/scan.hpp, is Blelloch's up- and down-sweep on OpenMP threads)."""

from __future__ import annotations

import jax.numpy as jnp
from jax import lax


def _compose(earlier, later):
    Me, te = earlier
    Ml, tl = later
    return Ml @ Me, jnp.einsum("...ij,...j->...i", Ml, te) + tl


def affine_scan(A, b, reverse: bool = False):
    """x (n, k) with x_i = A_i x_{i-1} + b_i (A_0 is not used: x_0 = b_0); reverse: the recursion
    runs from the last row, x_i = A_i x_{i+1} + b_i."""
    if reverse:
        return affine_scan(A[::-1], b[::-1])[::-1]
    return lax.associative_scan(_compose, (A, b))[1]
