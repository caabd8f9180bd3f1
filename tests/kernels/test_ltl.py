"""Featherstone's branch-induced-sparsity factorisations (cpp/include/treedyn/algorithms/ltl.hpp):
M = LᵀL and M = LᵀDL with no fill-in outside the tree's pattern, and their back-substitutions."""

import numpy as np
import pytest
from conftest import assert_backward_stable, assert_within_rounding

import treedyn as td
from treedyn import _core
from treedyn.scenes import chain, random_tree


def ancestors_or_self(lam, k):
    out = set()
    while k >= 0:
        out.add(k)
        k = lam[k]
    return out


@pytest.mark.parametrize(
    "make",
    [
        lambda: chain(12),
        lambda: random_tree(30, 3),
        lambda: random_tree(25, 4, floating_base=True),
        lambda: random_tree(30, 5, branching=0.9),
    ],
    ids=["chain", "tree", "floating", "bushy"],
)
def test_ltl_and_ltdl_factor_M_within_the_sparsity_pattern(make):
    model = make()
    q = td.random_configuration(model, np.random.default_rng(0))
    M = td.mass_matrix(model, q)
    L, lam = _core._ltl_factor(model._cpp, q, False)
    # Cholesky-like factorisations are backward stable: LᵀL = M + ΔM, |ΔM| ≤ γ_{n+1}|Lᵀ||L| (Higham
    # Thm 10.3), and |Lᵀ||L| is bounded by ‖M‖ entrywise for an SPD M (|l_kj|² ≤ m_kk)
    assert_within_rounding(L.T @ L, M, np.abs(L.T) @ np.abs(L), model.nv, what="LᵀL = M")
    assert np.all(np.diag(L) > 0)
    Lu, _ = _core._ltl_factor(model._cpp, q, True)
    D = np.diag(np.diag(Lu))
    U = Lu - D + np.eye(model.nv)
    assert_within_rounding(U.T @ D @ U, M, np.abs(U.T) @ D @ np.abs(U), model.nv, what="UᵀDU = M")
    # LTL and LTDL are the same factor, scaled: two backward-stable factors of M differ by
    # cond(M)·δ relative at most (the Cholesky factor's perturbation bound, Higham §10.1.1)
    assert_within_rounding(np.sqrt(D) @ U, L, np.abs(L) * np.linalg.cond(M), model.nv, what="√D U = L")
    # λ: parent coordinate (a multi-DoF joint is a chain of coordinates); no fill-in
    assert all(-1 <= lam[k] < k for k in range(model.nv))
    for k in range(model.nv):
        allowed = ancestors_or_self(lam, k)
        for j in range(k + 1):
            if j not in allowed:
                assert L[k, j] == 0 and Lu[k, j] == 0
                assert M[k, j] == 0  # the pattern is M's own


def test_branches_give_a_sparser_factor_than_a_chain():
    nnz = {}
    for name, model in (("tree", random_tree(40, 1, branching=0.9, joints=("revolute",))), ("chain", chain(40))):
        L, _ = _core._ltl_factor(model._cpp, td.random_configuration(model, np.random.default_rng(0)), False)
        nnz[name] = np.count_nonzero(L)
    assert nnz["chain"] > 0.95 * 40 * 41 / 2  # dense (up to an entry that happens to vanish)
    assert nnz["tree"] < 0.5 * nnz["chain"]


def test_back_substitutions_solve_M():
    model = random_tree(30, 7)
    q = td.random_configuration(model, np.random.default_rng(1))
    b = np.random.default_rng(2).standard_normal((model.nv, 3))
    M = td.mass_matrix(model, q)
    for ltdl in (False, True):
        x = td.make_solver("crba-ltl", model, ltdl=ltdl).inverse_inertia(q, b)
        assert_backward_stable(M, x, b, what=f"ltdl={ltdl}: M x = b")


def test_ltl_factor_refuses_bad_q():
    model = random_tree(5, 1, floating_base=True)
    with pytest.raises(ValueError, match="q must have shape"):
        _core._ltl_factor(model._cpp, np.zeros(3), False)


@pytest.mark.parametrize(
    "make", [lambda: random_tree(30, 3), lambda: random_tree(25, 4, floating_base=True)], ids=["tree", "floating"]
)
def test_a_rank_one_update_of_the_compact_factor_is_the_factor_of_the_updated_matrix(make):
    """ltl_rows_update: M + x xᵀ and M − x xᵀ (x on the chain of one coordinate, as a contact row's J) from M's factor,
    against LᵀL formed (the same sums of products: within rounding of |L|ᵀ|L|), with no fill-in outside the tree's
    pattern; a downdate that leaves M − x xᵀ indefinite is refused."""
    model = make()
    q = td.random_configuration(model, np.random.default_rng(3))
    M = td.mass_matrix(model, q)
    _, lam = _core._ltl_factor(model._cpp, q, False)
    pattern = np.zeros((model.nv, model.nv), dtype=bool)
    for k in range(model.nv):
        pattern[k, sorted(ancestors_or_self(lam, k))] = True
    rng = np.random.default_rng(4)
    for top in (model.nv - 1, model.nv // 2):
        chain = sorted(ancestors_or_self(lam, top))
        x = np.zeros(model.nv)
        x[chain] = rng.standard_normal(len(chain))
        for sign, size in ((1, 1.0), (-1, 0.3 * np.sqrt(np.linalg.eigvalsh(M)[0]) / np.linalg.norm(x))):
            L, ok = _core._ltl_rows_update(model._cpp, q, size * x, sign)
            assert ok
            H = M + sign * size**2 * np.outer(x, x)
            assert np.linalg.eigvalsh(H)[0] > 0
            assert_within_rounding(L.T @ L, H, np.abs(L).T @ np.abs(L), 4 * model.nv, what=f"sign {sign}: LᵀL = H")
            assert not np.any(L[~pattern])  # (no fill-in)
    x = np.zeros(model.nv)
    x[sorted(ancestors_or_self(lam, model.nv - 1))] = 1.0
    big = 2 * np.sqrt(np.abs(M).max() * model.nv) * x / np.linalg.norm(x)
    assert np.linalg.eigvalsh(M - np.outer(big, big))[0] < 0
    assert not _core._ltl_rows_update(model._cpp, q, big, -1)[1]
    with pytest.raises(ValueError, match="not on one chain"):
        _core._ltl_rows_update(model._cpp, q, np.ones(model.nv), 1)
