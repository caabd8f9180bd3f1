"""treedyn.linalg: odd–even elimination (yang-wu-pan §IV Alg. 2) against dense and banded solves."""

import numpy as np
import pytest
import scipy.linalg
from conftest import assert_backward_stable, assert_same_solution

import treedyn as td
from treedyn.algorithms.linalg import solve_block_tridiagonal
from treedyn.linalg import block_tridiagonal_matrix


def random_block_tridiagonal(n, k, rng, m=None, dtype=np.float64):
    """A well-conditioned SPD block tri-diagonal system: random U_i, D_i dominant."""
    U = rng.standard_normal((max(n - 1, 0), k, k)) * 0.5
    D = np.empty((n, k, k))
    for i in range(n):
        G = rng.standard_normal((k, k))
        D[i] = G @ G.T + (2.0 * k + 2.0) * np.eye(k)
    R = rng.standard_normal((n, k) if m is None else (n, k, m))
    return D.astype(dtype), U.astype(dtype), R.astype(dtype)


@pytest.mark.parametrize("k", [1, 2, 3, 5, 6, 7])  # 7: dynamic-size blocks
@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 13, 64, 100])
def test_oee_matches_dense_solve(n, k, rng):
    D, U, R = random_block_tridiagonal(n, k, rng, m=3)
    X = solve_block_tridiagonal(D, U, R)
    assert X.shape == R.shape and X.dtype == np.float64
    A = block_tridiagonal_matrix(D, U)
    assert_backward_stable(A, X.reshape(n * k, 3), R.reshape(n * k, 3), what="OEE")
    ref = np.linalg.solve(A, R.reshape(n * k, 3))
    assert_same_solution(A, X.reshape(n * k, 3), ref, what="OEE = LAPACK")


@pytest.mark.parametrize("n,k", [(1, 4), (7, 2), (33, 3)])
def test_oee_matches_solve_banded(n, k, rng):
    D, U, R = random_block_tridiagonal(n, k, rng)
    A = block_tridiagonal_matrix(D, U)
    bw = 2 * k - 1  # half-bandwidth of a block tri-diagonal matrix
    ab = np.zeros((2 * bw + 1, n * k))
    for i in range(n * k):
        for j in range(max(0, i - bw), min(n * k, i + bw + 1)):
            ab[bw + i - j, j] = A[i, j]
    ref = scipy.linalg.solve_banded((bw, bw), ab, R.reshape(-1)).reshape(n, k)
    X = solve_block_tridiagonal(D, U, R)
    assert X.shape == (n, k)
    assert_same_solution(A, X.reshape(-1), ref.reshape(-1), what="OEE = banded LU")


def test_oee_float32(rng):
    D, U, R = random_block_tridiagonal(20, 3, rng, m=2, dtype=np.float32)
    X = solve_block_tridiagonal(D, U, R)
    assert X.dtype == np.float32
    # backward error in float32 (δ = 64·60·6e-8 = 2e-4), against the float32 data seen exactly in float64
    assert_backward_stable(
        block_tridiagonal_matrix(D.astype(float), U.astype(float)),
        X.reshape(60, 2),
        R.reshape(60, 2),
        what="OEE float32",
    )


def test_oee_does_not_modify_inputs(rng):
    D, U, R = random_block_tridiagonal(9, 2, rng, m=2)
    copies = [a.copy() for a in (D, U, R)]
    solve_block_tridiagonal(D, U, R)
    for a, c in zip((D, U, R), copies):
        assert np.array_equal(a, c)


def test_oee_same_answer_for_any_thread_count(rng):
    D, U, R = random_block_tridiagonal(301, 3, rng, m=2)
    before = td.get_num_threads()
    try:
        out = []
        for t in (1, 2, 3):
            td.set_num_threads(t)
            out.append(solve_block_tridiagonal(D, U, R))
    finally:
        td.set_num_threads(before)
    assert np.array_equal(out[0], out[1]) and np.array_equal(out[0], out[2])


def test_oee_bad_input(rng):
    D, U, R = random_block_tridiagonal(4, 2, rng)
    with pytest.raises(ValueError, match="D must have shape"):
        solve_block_tridiagonal(D[:, :, :1], U, R)
    with pytest.raises(ValueError, match="D must have shape"):
        solve_block_tridiagonal(D[:0], U[:0], R[:0])
    with pytest.raises(ValueError, match="U must have shape"):
        solve_block_tridiagonal(D, U[:2], R)
    with pytest.raises(ValueError, match="R must have shape"):
        solve_block_tridiagonal(D, U, R[:3])
    bad = D.copy()
    bad[1, 0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        solve_block_tridiagonal(bad, U, R)
    with pytest.raises(TypeError):
        solve_block_tridiagonal(D.astype(complex), U, R)
    with pytest.raises(TypeError):
        solve_block_tridiagonal(D, U, np.array([["a", "b"]] * 4))
    with pytest.raises(ValueError, match="positive definite"):
        solve_block_tridiagonal(-D, U, R)


# --- block bi-diagonal systems by scan (yang-wu-pan §II-B, eqs. (3)-(5)) ---------------------

from treedyn.algorithms.linalg import solve_block_bidiagonal  # noqa: E402


def random_recursion(n, k, rng, m=None, dtype=np.float64):
    """Contractive A_i (spectral radius < 1), so that long recursions stay well-conditioned."""
    A = rng.standard_normal((max(n - 1, 0), k, k)) / (1.5 * np.sqrt(k))
    b = rng.standard_normal((n, k) if m is None else (n, k, m))
    return A.astype(dtype), b.astype(dtype)


def substitute(A, b):
    """Sequential forward substitution of eq. (3)."""
    x = np.array(b, dtype=np.float64)
    for i in range(1, len(b)):
        x[i] = A[i - 1] @ x[i - 1] + b[i]
    return x


def dense_bidiagonal(A, n, k):
    L = np.eye(n * k)
    for i in range(1, n):
        L[i * k : (i + 1) * k, (i - 1) * k : i * k] = -A[i - 1]
    return L


@pytest.mark.parametrize("k", [1, 2, 6, 7])  # 7: dynamic-size blocks
@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 13, 64, 100])
def test_scan_matches_substitution(n, k, rng):
    A, b = random_recursion(n, k, rng, m=3)
    x = solve_block_bidiagonal(A, b)
    assert x.shape == b.shape and x.dtype == np.float64
    # the scan and the substitution solve the unit lower block bi-diagonal L x = b, each a product of
    # ≤ n contractive A_i: both backward stable (a triangular solve, Higham Thm 8.5)
    L = dense_bidiagonal(A, n, k)
    assert_backward_stable(L, x.reshape(n * k, -1), b.reshape(n * k, -1), what="scan")
    assert_same_solution(L, x.reshape(n * k, -1), substitute(A, b).reshape(n * k, -1), what="scan = substitution")


@pytest.mark.parametrize("n,k", [(1, 3), (7, 2), (30, 6)])
def test_scan_matches_dense_solve(n, k, rng):
    A, b = random_recursion(n, k, rng)
    x = solve_block_bidiagonal(A, b)
    assert x.shape == (n, k)
    L = dense_bidiagonal(A, n, k)
    assert_same_solution(L, x.reshape(-1), np.linalg.solve(L, b.reshape(-1)), what="scan = LAPACK")


def test_scan_float32_and_inputs_untouched(rng):
    A, b = random_recursion(37, 3, rng, m=2, dtype=np.float32)
    copies = A.copy(), b.copy()
    x = solve_block_bidiagonal(A, b)
    assert x.dtype == np.float32
    L = dense_bidiagonal(A.astype(float), 37, 3)
    assert_backward_stable(L, x.reshape(111, 2), b.reshape(111, 2), what="scan float32")
    assert np.array_equal(A, copies[0]) and np.array_equal(b, copies[1])


def test_scan_same_answer_for_any_thread_count(rng):
    A, b = random_recursion(517, 3, rng, m=2)
    before = td.get_num_threads()
    try:
        out = []
        for t in (1, 2, 3):
            td.set_num_threads(t)
            out.append(solve_block_bidiagonal(A, b))
    finally:
        td.set_num_threads(before)
    assert np.array_equal(out[0], out[1]) and np.array_equal(out[0], out[2])


def test_scan_bad_input(rng):
    A, b = random_recursion(4, 2, rng)
    with pytest.raises(ValueError, match="A must have shape"):
        solve_block_bidiagonal(A[:2], b)
    with pytest.raises(ValueError, match="b must have shape"):
        solve_block_bidiagonal(A, b[:, 0])
    with pytest.raises(ValueError, match="b must have shape"):
        solve_block_bidiagonal(A[:0], b[:0])
    bad = A.copy()
    bad[0, 1, 1] = np.inf
    with pytest.raises(ValueError, match="NaN or inf"):
        solve_block_bidiagonal(bad, b)
    with pytest.raises(TypeError):
        solve_block_bidiagonal(A.astype(complex), b)


def test_results_that_overflow_are_errors_naming_the_solver():
    # D = 1e-300·1 is positive definite and R = 1e300 finite, but X = D⁻¹R = 1e600 is not a double
    D, U, R = np.tile(1e-300 * np.eye(2), (3, 1, 1)), np.zeros((2, 2, 2)), np.full((3, 2), 1e300)
    with pytest.raises(ValueError, match="^solve_block_tridiagonal overflowed to inf/NaN"):
        solve_block_tridiagonal(D, U, R)
    # x_2 = A_1 A_0 b_0 + ... = 1e200 · 1e200 · 1e200: beyond the largest double
    A, b = np.tile(1e200 * np.eye(2), (2, 1, 1)), np.full((3, 2), 1e200)
    with pytest.raises(ValueError, match="^solve_block_bidiagonal overflowed to inf/NaN"):
        solve_block_bidiagonal(A, b)
    with pytest.raises(ValueError, match="^solve_block_bidiagonal overflowed"):
        # float32: 1e30 · 1e30 is beyond 3.4e38
        solve_block_bidiagonal(
            np.tile(np.float32(1e30) * np.eye(2, dtype=np.float32), (2, 1, 1)), np.full((3, 2), 1e30, np.float32)
        )
