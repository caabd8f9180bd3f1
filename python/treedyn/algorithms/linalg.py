"""Structured linear solvers of yang-wu-pan (numpy in, numpy out; the GIL is released).

- :func:`solve_block_tridiagonal`: odd–even elimination, §IV Alg. 2 (``cpp/include/treedyn/linalg/oee.hpp``).
- :func:`solve_block_bidiagonal`: parallel scan, §II-B eqs. (3)–(5) (``cpp/include/treedyn/linalg/scan.hpp``).
"""

from __future__ import annotations

import numpy as np

from .. import _core

__all__ = ["solve_block_tridiagonal", "solve_block_bidiagonal", "block_tridiagonal_matrix"]


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


def solve_block_bidiagonal(A, b) -> np.ndarray:
    """Solve the linear recursion x_0 = b_0, x_i = A_{i-1} x_{i-1} + b_i (0 < i < n) by parallel scan.

    That is the block lower bi-diagonal system (yang-wu-pan §II-B, eqs. (3)–(4))::

        [[ I                    ],     [x_0    ]   [b_0    ]
         [-A_0   I              ],     [x_1    ] = [b_1    ]
         [      -A_1  I         ],     [...    ]   [...    ]
         [            ...  -A_{n-2} I]][x_{n-1}]   [b_{n-1}]

    A: (n-1, k, k), A[i-1] takes x_{i-1} to x_i; b: (n, k) or (n, k, m). Returns x with b's shape.
    (For a backward recursion, x_{n-1} = b_{n-1}, x_i = A_i x_{i+1} + b_i, reverse the block order.)

    Each step is the affine map x ↦ A_{i-1} x + b_i (eq. (5)); x_i is the translation part of the
    prefix composition of the first i+1 maps, found by Blelloch's up-sweep / down-sweep over a
    balanced binary tree, every level's nodes spread over the OpenMP threads. The answer does not
    depend on the number of threads. O(n k² (k + m)) work, 2 ⌈log₂ n⌉ levels.

    float32 when both inputs are float32 arrays, float64 otherwise. Raises TypeError for a
    non-numeric dtype, ValueError for a wrong shape or NaN/inf. The inputs are never modified.
    """
    if _is_float32(A, b):
        return _core._solve_block_bidiagonal_f32(A, b)
    return _core._solve_block_bidiagonal_f64(A, b)


def block_tridiagonal_matrix(D, U) -> np.ndarray:
    """The dense (n k, n k) symmetric matrix of the blocks ``solve_block_tridiagonal`` takes: D (n, k, k)
    on the diagonal, U (n - 1, k, k) above it and Uᵀ below (for checks and for dense baselines)."""
    D, U = np.asarray(D), np.asarray(U)
    n, k = D.shape[:2]
    A = np.zeros((n * k, n * k))
    for i in range(n):
        A[i * k : (i + 1) * k, i * k : (i + 1) * k] = D[i]
    for i in range(n - 1):
        A[i * k : (i + 1) * k, (i + 1) * k : (i + 2) * k] = U[i]
        A[(i + 1) * k : (i + 2) * k, i * k : (i + 1) * k] = U[i].T
    return A
