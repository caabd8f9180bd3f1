"""The modified ABA (cpp/include/treedyn/algorithms/aba_modified.hpp, ascher-pai-cloutier1996 §4
eq. (11)) and the reproduction of the paper's Tables 1 and 2 (benchmarks/ascher.py)."""

import numpy as np
import pytest
from conftest import assert_backward_stable, assert_same_accelerations, assert_within_rounding, random_state

import treedyn as td
from benchmarks import ascher
from treedyn.scenes import random_tree
from treedyn.solvers.builtin import ABAModifiedSolver
from treedyn.testing import check_solver


def test_conformance():
    assert check_solver(ABAModifiedSolver, rtol=None) == 4
    assert check_solver(ABAModifiedSolver, rtol=None, options={"dtype": np.float32}) == 4


def test_equals_aba_in_double_precision_on_random_trees(model, rng):
    q, v, tau = random_state(model, rng)
    f = rng.standard_normal((model.n_bodies, 6))
    a = td.make_solver("aba", model).forward_dynamics(q, v, tau, f)
    assert_same_accelerations(
        model,
        q,
        v,
        tau,
        td.make_solver("aba-modified", model).forward_dynamics(q, v, tau, f),
        a,
        f,
        what="aba-modified = aba",
    )
    R = rng.standard_normal((model.nv, 3))
    M = td.mass_matrix(model, q)
    assert_backward_stable(M, td.make_solver("aba-modified", model).inverse_inertia(q, R), R, what="M Y = R")
    # the pivots are the same numbers, computed apart: D_i = SᵢᵀIᴬᵢSᵢ with Iᴬᵢ ≤ Iᶜᵢ (the composite
    # inertia), so the magnitudes rounded are at most those of M's diagonal block SᵢᵀIᶜᵢSᵢ
    Dm = td.make_solver("aba-modified", model).joint_inertias(q)
    Da = td.make_solver("aba", model).joint_inertias(q)
    assert len(Dm) == len(model.joint_names)
    for name, x, y in zip(model.joint_names, Dm, Da):
        k = model.v_index(name)
        block = M[k : k + len(x), k : k + len(x)]
        assert_within_rounding(x, y, block, model.nv, what=f"pivot {name}")


def test_agrees_with_pinocchio():
    pin = pytest.importorskip("pinocchio", reason="Pinocchio is an optional test dependency")
    from treedyn.tools.peers import to_pinocchio

    for seed in range(3):
        model = random_tree(20, 40 + seed, floating_base=seed == 2)
        pm = to_pinocchio(model)
        pd = pm.createData()
        rng = np.random.default_rng(seed)
        q, v, tau = random_state(model, rng)
        assert_same_accelerations(
            model,
            q,
            v,
            tau,
            td.make_solver("aba-modified", model).forward_dynamics(q, v, tau),
            pin.aba(pm, pd, q, v, tau),
            what="aba-modified = Pinocchio's aba",
        )


@pytest.fixture(scope="module")
def table2():
    return {(m1, case): out for m1, case, out in ascher.table2()}


def test_table2_modified_abm_is_exact_in_every_row(table2):
    # the paper: D2 = 1.0 and q̈1 = 971.19 whatever m1, in both cases (float32 throughout)
    for (m1, case), out in table2.items():
        D2, qdd1, note = out["modified ABM"]
        # to float32's precision: in case 2 the normalised axis (0, 1, 1)/√2 has |s|² = 1 − 1 ulp
        assert D2 == pytest.approx(1.0, abs=2e-7), (m1, case)
        assert qdd1 == pytest.approx(971.19, abs=0.01), (m1, case)  # the paper prints two decimals


def test_table2_crbm_and_abm_fail_where_the_paper_says(table2):
    def lost(out):  # D2 lost to cancellation: singular, or visibly wrong
        D2, qdd1, note = out
        return qdd1 is None or abs(D2 - 1.0) > 0.01

    for m1, case, paper_crbm, paper_abm, _ in ascher.PAPER_TABLE2:
        out = table2[(m1, case)]
        for label, paper in (("CRBM", paper_crbm), ("ABM", paper_abm)):
            assert lost(out[label]) == (paper[0] != 1.0), (label, m1, case, out[label])
            if paper[1] is None:  # the paper prints no acceleration: a singular pivot, reported
                assert out[label][1] is None and out[label][2] == "singular pivot", (label, m1, case)
            elif paper[0] == 1.0:
                assert out[label][1] == pytest.approx(971.19, abs=0.01)


def test_joint_inertias_report_a_lost_pivot_as_it_is():
    model = ascher.example3_model(1e8, 2)
    D = td.make_solver("aba", model, dtype=np.float32).joint_inertias(np.zeros(2))
    # the heavy link's pivot is its own inertia, 1e8, to a few float32 roundings (u = 6e-8; approx: 1e-6)
    assert D[0].dtype == np.float32 and D[0][0, 0] <= 0 and D[1][0, 0] == pytest.approx(1e8)


def test_table1_trend_crbm_slows_down_on_ill_conditioned_chains():
    # the paper's Table 1: at r = 0.1 all methods need about the same number of evaluations; at
    # r <= 0.0025 the CRBM needs far more (35406 vs 12170 in the paper)
    rows = {r: counts for r, counts, _ in ascher.table1([0.1, 0.0025], methods=["CRBM", "modified ABM"])}
    c, m = rows[0.1]["CRBM"], rows[0.1]["modified ABM"]
    assert abs(c - m) <= 0.25 * max(c, m)
    c, m = rows[0.0025]["CRBM"], rows[0.0025]["modified ABM"]
    assert c >= 2 * m, (c, m)


def test_bench_script_writes_table2(tmp_path, capsys):
    assert ascher.main(["--table", "2", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "971.19" in out and "singular" in out
    rows = (tmp_path / "ascher_table2.csv").read_text().splitlines()
    assert len(rows) == 1 + len(ascher.PAPER_TABLE2)
