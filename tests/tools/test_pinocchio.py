"""Agreement with Pinocchio (a peer nobody here wrote) on random trees built through both APIs:
M(q), bias forces, forward dynamics, M⁻¹ and integrate, within rounding (tests/conftest.py's bounds)."""

import numpy as np
import pytest

pin = pytest.importorskip("pinocchio", reason="Pinocchio is an optional test dependency (pip install pin)")

from conftest import (  # noqa: E402
    assert_agrees_with_peer,
    assert_same_accelerations,
    assert_same_solution,
    assert_within_rounding,
    dynamics_scale,
)

import treedyn as td  # noqa: E402
from treedyn.scenes import chain, random_tree  # noqa: E402
from treedyn.tools.peers import pinocchio_forces, to_pinocchio  # noqa: E402

CASES = (
    [("chain", lambda: chain(20)), ("chain-fb", lambda: chain(10, floating_base=True))]
    + [(f"tree-{s}", lambda s=s: random_tree(25, s)) for s in range(4)]
    + [(f"tree-fb-{s}", lambda s=s: random_tree(20, 50 + s, floating_base=True)) for s in range(3)]
    + [("bushy", lambda: random_tree(30, 9, branching=0.9, joints=("revolute", "spherical")))]
)


@pytest.fixture(params=CASES, ids=lambda c: c[0])
def pair(request):
    model = request.param[1]()
    pm = to_pinocchio(model)
    assert (pm.nq, pm.nv) == (model.nq, model.nv)
    return model, pm, pm.createData()


def test_mass_matrix_bias_and_forward_dynamics_agree_with_pinocchio(pair):
    model, pm, pd = pair
    rng = np.random.default_rng(0)
    chol = td.make_solver("crba-cholesky", model)
    for _ in range(5):
        q = td.random_configuration(model, rng)
        v, tau = rng.standard_normal(model.nv), rng.standard_normal(model.nv)
        Mp = pin.crba(pm, pd, q)
        Mp = np.triu(Mp) + np.triu(Mp, 1).T
        ap = pin.aba(pm, pd, q, v, tau).copy()
        Minv = pin.computeMinverse(pm, pd, q)
        Minv = np.triu(Minv) + np.triu(Minv, 1).T
        assert_agrees_with_peer(
            model, q, v, tau, Mp, pin.rnea(pm, pd, q, v, np.zeros(model.nv)), ap, Minv, what="Pinocchio"
        )
        a = rng.standard_normal(model.nv)
        tau_a = td.rnea(model, q, v, a)
        assert_within_rounding(
            tau_a, pin.rnea(pm, pd, q, v, a), dynamics_scale(model, q, v, tau_a, a), model.nv, what="rnea = Pinocchio's"
        )
        assert_same_accelerations(
            model, q, v, tau, chol.forward_dynamics(q, v, tau), ap, what="crba-cholesky = Pinocchio"
        )
        # q ⊕ v·dt joint by joint (an exponential map per joint): a few roundings of |q| + |v dt| each
        assert_within_rounding(
            td.integrate(model, q, v, 0.05),
            pin.integrate(pm, q, 0.05 * v),
            1 + np.abs(q).max() + 0.05 * np.abs(v).max(),
            1,
            what="integrate = Pinocchio's",
        )


def test_external_forces_agree_with_pinocchio(pair):
    model, pm, pd = pair
    rng = np.random.default_rng(1)
    q = td.random_configuration(model, rng)
    v, tau = rng.standard_normal(model.nv), rng.standard_normal(model.nv)
    # a force on every body (fixed ones included: Pinocchio gets them in their carrier joint's frame)
    f = rng.standard_normal((model.n_bodies, 6))
    ap = pin.aba(pm, pd, q, v, tau, pinocchio_forces(model, f)).copy()
    assert_same_accelerations(
        model,
        q,
        v,
        tau,
        td.make_solver("aba", model).forward_dynamics(q, v, tau, f),
        ap,
        f,
        what="aba = Pinocchio, f_ext",
    )


@pytest.mark.parametrize("method", ["drumwright", "crba-ltl"])
def test_inverse_mass_matrix_agrees_with_computeMinverse(pair, method):
    """drumwright2012's Θ(n²) M⁻¹ (and the LTL route) against Pinocchio's computeMinverse."""
    model, pm, pd = pair
    rng = np.random.default_rng(7)
    solver = td.make_solver(method, model)
    for _ in range(3):
        q = td.random_configuration(model, rng)
        P = pin.computeMinverse(pm, pd, q)
        P = np.triu(P) + np.triu(P, 1).T  # Pinocchio fills the upper triangle
        M = td.mass_matrix(model, q)
        assert_same_solution(M, solver.inverse_mass_matrix(q), P, what=f"{method} M⁻¹ = Pinocchio's")
        R = rng.standard_normal((model.nv, 6))
        # P @ R rounds |P||R| on top of P's own error: scale |M||P R| + |M||P||R|
        PR = P @ R
        assert_same_solution(
            M,
            solver.inverse_inertia(q, R),
            PR,
            np.abs(M) @ (np.abs(PR) + np.abs(P) @ np.abs(R)),
            what=f"{method} M⁻¹R = Pinocchio's",
        )
