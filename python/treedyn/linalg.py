"""Structured linear solvers of yang-wu-pan (numpy in, numpy out; the GIL is released).

- :func:`solve_block_tridiagonal`: odd–even elimination, §IV Alg. 2 (``cpp/include/treedyn/linalg/oee.hpp``).
"""
from __future__ import annotations

import numpy as np

from . import _core

__all__ = ["solve_block_tridiagonal"]


def _is_float32(*arrays) -> bool:
    """float32 when every argument is a float32 array, float64 otherwise (the C++ side checks dtypes)."""
    return all(isinstance(a, np.ndarray) and a.dtype == np.float32 for a in arrays)


def solve_block_tridiagonal(D, U, R) -> np.ndarray:
    """Solve the symmetric positive definite block tri-diagonal system A X = R by odd–even elimination.

    ::

        A = [[D_0,   U_0,    0,   ...         ],
             [U_0ᵀ,  D_1,    U_1, ...         ],
             [0,     U_1ᵀ,   D_2, ...         ],
             [...                     D_{n-1} ]]

    D: (n, k, k), the symmetric diagonal blocks; U: (n-1, k, k), U_i couples block i to block i+1;
    R: (n, k) or (n, k, m), right-hand sides. Returns X with R's shape: X[i] is the i-th block.

    yang-wu-pan §IV, Alg. 2: ⌈log₂ n⌉ levels; level j removes every row's couplings at distance
    2^(j-1), its coefficient matrices obtained by Cholesky solves with the diagonal blocks (never an
    inverse), its independent updates spread over the OpenMP threads (``treedyn.set_num_threads``).
    The answer does not depend on the number of threads. O(n k³ log n) work.

    float32 when all three inputs are float32 arrays, float64 otherwise. Raises TypeError for a
    non-numeric dtype, ValueError for a wrong shape, NaN/inf, or a matrix that is not positive
    definite. The inputs are never modified.
    """
    if _is_float32(D, U, R):
        return _core._solve_block_tridiagonal_f32(D, U, R)
    return _core._solve_block_tridiagonal_f64(D, U, R)
