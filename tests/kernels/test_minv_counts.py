"""Operation counts of the inverse inertia kernels (cpp/src/counting_minv.cpp), measured with the
counting scalar on fixed-base serial chains of n revolute joints, against drumwright2012 Table 1
(Θ(n²) inversion: 45n²/2 + 216n multiplications, 26n² + 170n additions) and Table 2 (CRBA +
Cholesky: n³/2 + 7n²/2 + 145n multiplications).

The passes are exactly quadratic in n for a chain, so a fit over four n is exact. Tolerance
against Table 1's n² coefficients: we never count more than the paper, and at most 16% fewer
multiplications and 31% fewer additions. The difference is accounted for exactly:
  multiplications 19 n² = 45/2 n² − 3 n² − 1/2 n²: ŝᵀŶ^A_i is computed once on line 5 and kept
    for line 8, where the paper computes it again (6 multiplications on the n²/2 pairs with
    Ŷ^A_i ≠ 0), and line 5's division by ŝᵀÎ^A ŝ is folded into Ũ = Î^A ŝ (ŝᵀÎ^A ŝ)⁻¹ once per
    configuration (1 multiplication on the n²/2 pairs);
  additions 18 n²: the same reuse saves 6 additions on n²/2 pairs (3 n²), and Ŷ^A_λ is assigned,
    not added to the zero line 3 put there, when λ has a single child (6 on n²/2 pairs, 3 n²):
    24 n²; the table's remaining 2 n² we cannot reconstruct from the algorithm as printed.
treedyn's full M⁻¹ (mInv) computes only the upper triangle and mirrors it: 12.5 n² multiplications.
"""

import numpy as np
import pytest

from treedyn import _core

NS = (4, 8, 16, 32)


@pytest.fixture(scope="module")
def counts():
    return {n: _core._minv_op_counts(n) for n in NS}


def quadratic(counts, stage, which):
    """(c2, c1, c0) with count = c2 n² + c1 n + c0 exactly over NS"""
    k = "mad".index(which)
    y = np.array([counts[n][stage][k] for n in NS], dtype=float)
    c = np.polyfit(NS, y, 2)
    # integer counts ≲ 1e6: a fit off by ≥ 1 at some n is not quadratic; polyfit's own rounding is
    # ~u·cond(Vandermonde)·|y| ≈ 1e-8 here, far below the integers' spacing
    assert np.allclose(np.polyval(c, NS), y, rtol=0, atol=1e-6), f"{stage} {which} is not quadratic in n"
    return np.round(c, 6)


def test_alg1_leading_terms_against_table_1(counts):
    m2 = quadratic(counts, "mMultInv", "m")[0]
    a2 = quadratic(counts, "mMultInv", "a")[0]
    assert (m2, a2) == (19.0, 18.0)
    assert 45 / 2 * (1 - 0.16) <= m2 <= 45 / 2
    assert 26 * (1 - 0.31) <= a2 <= 26
    assert m2 + 3 + 0.5 == 45 / 2  # the two savings listed in the module docstring
    assert a2 + 3 + 3 == 24
    # the split of Table 1's rows: lines 4-5 on n²/2 pairs, lines 7-10 on n² pairs
    assert quadratic(counts, "impulse", "m")[0] == 6.0  # 12 per pair with Ŷ ≠ 0 (paper: 13)
    assert quadratic(counts, "velocity", "m")[0] == 13.0  # 13 per pair (paper: 19 with Ŷ ≠ 0, 13 without)
    assert all(counts[n]["mMultInv"][2] == 0 for n in NS)  # no division in the passes


def test_full_inverse_counts(counts):
    assert tuple(quadratic(counts, "mInv", "m")[:1]) == (12.5,)
    assert tuple(quadratic(counts, "mInv", "a")[:1]) == (11.5,)


def test_linear_terms_are_per_joint(counts):
    """ŝ, Î in the global frame and Î^A: per joint, no n² term (Table 1 rows 1-3: 216 n mults)."""
    for stage in ("global_frame", "articulated"):
        for which in "ma":
            c = quadratic(counts, stage, which)
            assert c[0] == 0 and c[1] > 0
    per_joint = quadratic(counts, "global_frame", "m")[1] + quadratic(counts, "articulated", "m")[1]
    assert 0.8 * 216 <= per_joint <= 1.3 * 216  # compact transforms from q, arbitrary axes: 259


def test_crba_and_factorisations_against_table_2():
    c = {n: _core._minv_op_counts(n) for n in (64, 128)}
    # CRBA in link coordinates: 15 n² (compact X^T f per pair), where Table 2's global frame has 3 n²
    y = [c[n]["crba"][0] for n in (64, 128)]
    # exact counts (integers): the quotient is 15 − c0/16384 for a constant term c0; rel=1e-3: |c0| < 246
    assert (y[1] - 2 * y[0]) / (128**2 - 2 * 64**2) == pytest.approx(15.0, rel=1e-3)
    # Cholesky: n³/6 (Table 2 counts a naive n³/2); LTL of a chain is the same n³/6
    for n in (64, 128):
        # n³/6 + O(n²): the lower-order terms are ~3/n of it (5% at n = 64); 0.25 tells n³/6 from n³/2
        assert c[n]["cholesky"][0] / n**3 == pytest.approx(1 / 6, rel=0.25)
        assert c[n]["ltl"][0] == pytest.approx(n**3 / 6, rel=0.01)
