"""The modified ABA (cpp/include/treedyn/algorithms/aba_modified.hpp, ascher-pai-cloutier1996 §4
eq. (11)); the reproduction of the paper's Tables 1 and 2 is tested with its figure script
(tests/benchmarks/test_bench_ascher.py)."""

import numpy as np
import pytest
from conftest import assert_backward_stable, assert_same_accelerations, assert_within_rounding, random_state

import treedyn as td
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
