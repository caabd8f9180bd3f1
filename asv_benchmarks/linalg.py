"""treedyn.linalg: block tri-diagonal systems by odd–even elimination (yang-wu-pan §IV, Alg. 2)
and block bi-diagonal systems by parallel scan (§II-B), against numpy's dense solve.

Random, seeded, well-conditioned systems (SPD, diagonally dominant blocks; contractive recursions).
"""

import numpy as np

from treedyn.algorithms.linalg import solve_block_bidiagonal, solve_block_tridiagonal
from treedyn.linalg import block_tridiagonal_matrix

from .common import Threads


def _tridiagonal(n, k, m, seed=0):
    rng = np.random.default_rng(seed)
    U = rng.standard_normal((n - 1, k, k)) * 0.5
    G = rng.standard_normal((n, k, k))
    D = G @ G.transpose(0, 2, 1) + (2.0 * k + 2.0) * np.eye(k)
    return D, U, rng.standard_normal((n, k, m))


class BlockTridiagonal(Threads):
    """``solve_block_tridiagonal(D, U, R)``: n blocks of size k, one right-hand side."""

    params = ([100, 1000], [5, 6], [1, 2])
    param_names = ["n", "k", "threads"]

    def setup(self, n, k, threads):
        self.D, self.U, self.R = _tridiagonal(n, k, 1)
        self._set_threads(threads)

    def time_oee(self, n, k, threads):
        """Wall time of one odd–even elimination."""
        solve_block_tridiagonal(self.D, self.U, self.R)


class DenseBaseline:
    """``numpy.linalg.solve`` on the same block tri-diagonal system, assembled dense (n k unknowns)."""

    params = ([100, 300], [6])
    param_names = ["n", "k"]

    def setup(self, n, k):
        D, U, R = _tridiagonal(n, k, 1)
        self.A, self.b = block_tridiagonal_matrix(D, U), R.reshape(-1)

    def time_dense_solve(self, n, k):
        """Wall time of one dense LU solve."""
        np.linalg.solve(self.A, self.b)


class BlockBidiagonal(Threads):
    """``solve_block_bidiagonal(A, b)``: x_i = A_{i-1} x_{i-1} + b_i, 6 x 6 blocks, m columns."""

    params = ([100, 1000], [1, 100], [1, 2])
    param_names = ["n", "m", "threads"]

    def setup(self, n, m, threads):
        rng = np.random.default_rng(0)
        self.A = rng.standard_normal((n - 1, 6, 6)) / (1.5 * np.sqrt(6))
        self.b = rng.standard_normal((n, 6, m))
        self._set_threads(threads)

    def time_scan(self, n, m, threads):
        """Wall time of one scan (up-sweep, down-sweep, last step)."""
        solve_block_bidiagonal(self.A, self.b)
