"""The compact spatial algebra (cpp/include/treedyn/spatial): values against 6x6 matrices, and
operation counts against featherstone-part3's table, measured with the counting scalar."""

import numpy as np
import pytest
from conftest import assert_within_rounding

from treedyn import _core

# featherstone-part3, "6x6 Matrices Versus Compact Classes": (multiplications, additions)
FEATHERSTONE_TABLE = {"Xv": (24, 18), "X*f": (24, 18), "X1X2": (33, 24), "Iv": (24, 18), "X^TIX": (52, 56)}


@pytest.fixture(scope="module")
def counts():
    return _core._spatial_op_counts()


@pytest.mark.parametrize("op", ["Xv", "X*f", "X1X2", "Iv"])
def test_operation_counts_equal_featherstone_table(counts, op):
    assert counts[op] == FEATHERSTONE_TABLE[op]


def test_inverse_applications_cost_the_same(counts):
    # featherstone-part3: "cost (both) = 24m + 18a" for apply and invapply
    assert counts["X^-1v"] == (24, 18)
    assert counts["X^Tf"] == (24, 18)


def test_rbi_transform_count(counts):
    # The table's XᵀIX is 52m + 56a. Ours takes the same 52 multiplications and 4 additions fewer:
    # Ī is shifted by Ī_zz·1 before the rotation (one row of the product loses a term) and the
    # rotated zz entry comes from the trace, which rotations keep.
    m, a = counts["X^TIX"]
    assert m == FEATHERSTONE_TABLE["X^TIX"][0]
    assert a == 52
    assert a <= FEATHERSTONE_TABLE["X^TIX"][1]


def test_compact_types_beat_6x6_matrices(counts):
    # 6x6 matrix costs from the same table
    assert counts["Xv"][0] < 36 and counts["X1X2"][0] < 216 and counts["X^TIX"][0] < 432


def _skew(a):
    return np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])


def _plx(E, r):
    return np.block([[E, np.zeros((3, 3))], [-E @ _skew(r), E]])


def _rotation(rng):
    Q, R = np.linalg.qr(rng.standard_normal((3, 3)))
    Q = Q @ np.diag(np.sign(np.diag(R)))
    return Q if np.linalg.det(Q) > 0 else -Q


@pytest.mark.parametrize("seed", range(5))
def test_spatial_operations_match_6x6_algebra(seed):
    rng = np.random.default_rng(seed)
    E1, r1, E2, r2 = _rotation(rng), rng.standard_normal(3), _rotation(rng), rng.standard_normal(3)
    X1, X2 = _plx(E1, r1), _plx(E2, r2)
    v, f = rng.standard_normal(6), rng.standard_normal(6)
    m = rng.uniform(0.5, 2)
    c = rng.standard_normal(3)
    A = rng.standard_normal((3, 3))
    Ic = A @ A.T + np.eye(3)
    Ibar = Ic - m * _skew(c) @ _skew(c)
    I6 = np.block([[Ibar, m * _skew(c)], [-m * _skew(c), m * np.eye(3)]])
    B = rng.standard_normal((6, 6))
    IA = B @ B.T
    out = {k: np.squeeze(x) for k, x in _core._spatial_check(E1, r1, E2, r2, v, f, m, m * c, Ibar, IA).items()}
    # the compact forms and the 6x6 products sum the same terms (≤ 3 chained 6-term products): within
    # rounding of |X||v| etc. (Higham §3.5); LAPACK's X⁻¹ adds cond(X)·δ (Thm 7.2; cond ~ (1 + |r|)²)
    A1, Ai = np.abs(X1), np.abs(np.linalg.inv(X1)) * np.linalg.cond(X1, np.inf)
    crm = np.block([[_skew(v[:3]), np.zeros((3, 3))], [_skew(v[3:]), _skew(v[:3])]])
    for key, ref, scale in [
        ("Xv", X1 @ v, A1 @ np.abs(v)),
        ("X^-1v", np.linalg.solve(X1, v), Ai @ np.abs(v)),
        ("X*f", np.linalg.inv(X1).T @ f, Ai.T @ np.abs(f)),
        ("X^Tf", X1.T @ f, A1.T @ np.abs(f)),
        ("X1X2", X1 @ X2, A1 @ np.abs(X2)),
        ("Iv", I6 @ v, np.abs(I6) @ np.abs(v)),
        ("X^TIX", X1.T @ I6 @ X1, A1.T @ np.abs(I6) @ A1),
        ("X*IX^-1", np.linalg.inv(X1).T @ I6 @ np.linalg.inv(X1), Ai.T @ np.abs(I6) @ Ai),
        ("X^TIAX", X1.T @ IA @ X1, A1.T @ np.abs(IA) @ A1),
        ("v x m", crm @ f, np.abs(crm) @ np.abs(f)),  # f used as a motion here
        ("v x* f", -crm.T @ f, np.abs(crm.T) @ np.abs(f)),
    ]:
        assert_within_rounding(out[key], ref, scale, 6, what=key)
