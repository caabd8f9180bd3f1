"""JSIIA (yang-wu-pan §II-C): M by scanned column-wise inverse dynamics, against CRBA, ABA and CFA."""

import numpy as np
import pytest
from conftest import assert_backward_stable, assert_same_accelerations, outputs_for_thread_counts, random_state

import treedyn as td
from treedyn.scenes import chain, random_tree
from treedyn.solvers.builtin import CFASolver, JSIIASolver
from treedyn.testing import check_solver

CHAINS = [
    ("chain-1", chain(1)),
    ("chain-9", chain(9)),
    ("chain-fb", chain(7, floating_base=True)),
    ("random-1dof-33", random_tree(33, 4, joints=("revolute", "prismatic"), branching=0.0)),
    ("random-all-12", random_tree(12, 5, joints=("revolute", "prismatic", "universal", "spherical"), branching=0.0)),
]


@pytest.mark.parametrize("label,model", CHAINS, ids=[c[0] for c in CHAINS])
def test_jsiia_equals_aba_and_its_mass_matrix_crba(label, model, rng):
    jsiia, aba = td.make_solver(JSIIASolver, model), td.make_solver("aba", model)
    for _ in range(2):
        q, v, tau = random_state(model, rng)
        assert_same_accelerations(
            model, q, v, tau, jsiia.forward_dynamics(q, v, tau), aba.forward_dynamics(q, v, tau), what="jsiia = aba"
        )
    R = rng.standard_normal((model.nv, 3))
    M = td.mass_matrix(model, q)
    assert_backward_stable(M, jsiia.inverse_inertia(q, R), R, what="M Y = R")


def test_cfa_equals_aba_equals_jsiia_on_random_chains(rng):
    for seed in range(3):
        model = random_tree(25, 40 + seed, joints=("revolute", "prismatic"), branching=0.0)
        q, v, tau = random_state(model, rng)
        ref = td.make_solver("aba", model).forward_dynamics(q, v, tau)
        for cls in (JSIIASolver, CFASolver):
            assert_same_accelerations(
                model, q, v, tau, td.make_solver(cls, model).forward_dynamics(q, v, tau), ref, what=f"{cls.name} = aba"
            )


def test_jsiia_same_answer_for_any_thread_count(rng):
    model = random_tree(130, 9, joints=("revolute", "prismatic"), branching=0.0)
    q, v, tau = random_state(model, rng)
    out = outputs_for_thread_counts(lambda: td.make_solver(JSIIASolver, model).forward_dynamics(q, v, tau))
    assert np.array_equal(out[0], out[1]) and np.array_equal(out[0], out[2])


def test_jsiia_refuses_branched_trees():
    assert JSIIASolver.supports(chain(4, floating_base=True)) is None
    assert "branched" in JSIIASolver.supports(random_tree(10, 0, joints=("revolute",), branching=1.0))


def test_jsiia_conformance():
    assert check_solver(JSIIASolver, rtol=None) >= 1
