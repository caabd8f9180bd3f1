"""treedyn.xla.oee (odd–even elimination, yang-wu-pan Alg. 2) and treedyn.xla.scan (block
bi-diagonal systems by parallel scan, §II-B) against dense numpy solves and the sequential
recursion, for sizes around powers of two (the levels' edges)."""

import numpy as np
import pytest
from xla_checks import jax

from treedyn.xla.oee import block_tridiagonal_times, oee_solve
from treedyn.xla.scan import affine_scan

U64 = np.finfo(np.float64).eps / 2


def spd_block_tridiagonal(n, k, rng):
    """Blocks of A = BᵀB + I for a random block bi-diagonal B (so A is SPD and block tri-diagonal)."""
    L = rng.standard_normal((n, k, k))
    Lo = rng.standard_normal((n, k, k))
    A = np.zeros((n * k, n * k))
    Bm = np.zeros_like(A)
    for i in range(n):
        Bm[i * k : (i + 1) * k, i * k : (i + 1) * k] = L[i]
        if i + 1 < n:
            Bm[(i + 1) * k : (i + 2) * k, i * k : (i + 1) * k] = Lo[i]
    A = Bm.T @ Bm + np.eye(n * k)
    D = np.stack([A[i * k : (i + 1) * k, i * k : (i + 1) * k] for i in range(n)])
    U = np.zeros((n, k, k))
    for i in range(n - 1):
        U[i] = A[i * k : (i + 1) * k, (i + 1) * k : (i + 2) * k]
    return A, D, U


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 8, 9, 31, 33])
@pytest.mark.parametrize("m", [None, 3])
def test_oee_solves_the_block_tridiagonal_system(n, m):
    rng = np.random.default_rng(n)
    k = 5
    A, D, U = spd_block_tridiagonal(n, k, rng)
    R = rng.standard_normal((n, k) if m is None else (n, k, m))
    with jax.enable_x64(True):
        X, _ = oee_solve(D, U, R)
        AX = np.asarray(block_tridiagonal_times(D, U, X))
    X = np.asarray(X)
    flatX = X.reshape(n * k, -1)
    ref = np.linalg.solve(A, R.reshape(n * k, -1))
    # backward error ‖A X − R‖ / (‖A‖‖X‖ + ‖R‖) ≤ c n u after the refinement sweep (oee.hpp)
    res = np.abs(A @ flatX - R.reshape(n * k, -1)).max()
    assert res <= 64 * n * k * U64 * (np.abs(A).max() * np.abs(flatX).max() + np.abs(R).max())
    assert np.abs(AX.reshape(n * k, -1) - A @ flatX).max() <= 64 * k * U64 * np.abs(A).max() * np.abs(flatX).max()
    assert np.abs(flatX - ref).max() <= 64 * n * k * U64 * np.linalg.cond(A) * np.abs(ref).max()


@pytest.mark.parametrize("n", [1, 2, 5, 8, 17])
def test_scan_equals_the_recursion(n):
    rng = np.random.default_rng(n)
    A = rng.standard_normal((n, 6, 6)) * 0.5
    b = rng.standard_normal((n, 6))
    x = np.zeros((n, 6))
    for i in range(n):
        x[i] = b[i] + (A[i] @ x[i - 1] if i else 0)
    y = np.zeros((n, 6))
    for i in reversed(range(n)):
        y[i] = b[i] + (A[i] @ y[i + 1] if i + 1 < n else 0)
    with jax.enable_x64(True):
        got, back = np.asarray(affine_scan(A, b)), np.asarray(affine_scan(A, b, reverse=True))
    # the scan multiplies the same matrices in another association: within c·n·u of |A|…|b|'s sums
    scale = max(np.abs(x).max(), np.abs(y).max(), 1.0) * (1 + np.abs(A).max()) ** n
    assert np.abs(got - x).max() <= 64 * n * U64 * scale
    assert np.abs(back - y).max() <= 64 * n * U64 * scale
