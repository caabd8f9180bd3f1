"""treedyn.xla.cfa (yang-wu-pan's constraint force algorithm with odd–even elimination and scans)
against the C++ ``aba`` and ``cfa-oee`` on random chains of revolute and prismatic joints, long
ones (n = 150: ⌈log₂ n⌉ = 8 elimination levels) and one whose link masses alternate 1e-3 / 1e3,
with the forward-error bound of two backward-stable solves (tests/kernels/test_cfa.py's)."""

import numpy as np
import pytest
from conftest import assert_same_accelerations
from support.models import alternating_chain
from xla_checks import assert_batch_agrees, random_batch, xla

import treedyn as td
from treedyn.scenes import chain, random_tree


def random_chain(n, seed):
    return random_tree(n, seed, joints=("revolute", "prismatic"), branching=0.0)


@pytest.mark.parametrize("n,seed", [(1, 0), (2, 1), (7, 2), (16, 3), (150, 4)])
def test_cfa_equals_aba_on_random_chains(n, seed):
    model = random_chain(n, seed)
    rng = np.random.default_rng(seed)
    Q, V, T, F = random_batch(model, rng, 3)
    got = xla("cfa-oee", model).forward_dynamics(Q, V, T, F)
    ref = td.make_solver("aba", model).forward_dynamics(Q, V, T, F)
    cpp = td.make_solver("cfa-oee", model).forward_dynamics(Q, V, T, F)
    for b in range(3):
        assert_same_accelerations(model, Q[b], V[b], T[b], got[b], ref[b], F[b], what="q̈ vs aba")
        assert_same_accelerations(model, Q[b], V[b], T[b], got[b], cpp[b], F[b], what="q̈ vs C++ cfa-oee")


def test_cfa_on_masses_spanning_1e6():
    """The refinement on the equations of motion keeps q̈ at ABA's accuracy (cfa.hpp's reproducer)."""
    model = alternating_chain()
    rng = np.random.default_rng(0)
    Q, V, T, _ = random_batch(model, rng, 2)
    assert_batch_agrees(model, xla("cfa-oee", model), Q, V, T)


def test_cfa_single_float32_and_its_refusals():
    model = chain(12)
    rng = np.random.default_rng(1)
    q, v, tau = td.random_configuration(model, rng), rng.standard_normal(12), rng.standard_normal(12)
    ref = td.make_solver("aba", model).forward_dynamics(q, v, tau)
    assert_same_accelerations(model, q, v, tau, xla("cfa-oee", model).forward_dynamics(q, v, tau), ref)
    got32 = xla("cfa-oee", model, np.float32).forward_dynamics(q, v, tau)
    assert_same_accelerations(model, q, v, tau, got32, ref, dtype=np.float32)
    with pytest.raises(ValueError, match="unbranched chains"):
        td.make_solver("cfa-oee", random_tree(6, 0, branching=1.0), device="cpu")
    with pytest.raises(ValueError, match="floating base"):
        td.make_solver("cfa-oee", chain(4, floating_base=True), device="cpu")
    # the module-level function on a tree's device model: named, not a KeyError
    from treedyn import xla as txla

    tree = random_tree(5, 0, joints=("revolute",))
    dm = txla.DeviceModel(tree)
    with pytest.raises(ValueError, match="unbranched chain of 1-DoF joints"):
        txla.forward_dynamics_cfa(dm, np.zeros(tree.nq), np.zeros(tree.nv), np.zeros(tree.nv))
    massless = chain(3)
    massless.add_body(
        "tip",
        parent="link3" if "link3" in massless.body_names else massless.body_names[-1],
        inertia=td.Inertia(0.0, (0, 0, 0), np.zeros((3, 3))),
    )
    with pytest.raises(ValueError, match="singular spatial inertia"):
        td.make_solver("cfa-oee", massless, device="cpu")
