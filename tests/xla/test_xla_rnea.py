"""treedyn.xla.rnea against td.rnea (the C++ RNEA, itself checked against Pinocchio) on random trees
of every joint kind and floating bases, batched, with external forces, joint springs and armature:
the two sum the same products in other orders, so they agree within δ = c·n·u of the magnitudes
of the terms of the equation of motion (conftest.assert_within_rounding with dynamics_scale)."""

import numpy as np
import pytest
from conftest import assert_within_rounding, dynamics_scale, random_models
from xla_checks import random_batch, xla

import treedyn as td


@pytest.mark.parametrize("name,model", random_models()[::2], ids=lambda x: x if isinstance(x, str) else "")
def test_rnea_equals_td_rnea(name, model):
    rng = np.random.default_rng(11)
    Q, V, A, F = random_batch(model, rng, 3)
    got = xla("aba", model).inverse_dynamics(Q, V, A, F)
    assert got.shape == (3, model.nv)
    for b in range(3):
        ref = td.rnea(model, Q[b], V[b], A[b], F[b])
        scale = dynamics_scale(model, Q[b], V[b], ref, A[b], F[b])
        assert_within_rounding(got[b], ref, scale, model.nv, what="τ")


def test_inverse_dynamics_undoes_forward_dynamics_with_springs_and_armature():
    model = td.scenes.random_tree(7, 9)
    rng = np.random.default_rng(2)
    for i, j in enumerate(model.joints[1:], 1):
        if j.nv:
            model.set_joint_armature(model.body_joint_names[i], np.full(j.nv, 0.05))
            model.set_joint_spring(model.body_joint_names[i], np.full(j.nv, 3.0), np.full(j.nv, 0.4))
    q, v, tau = td.random_configuration(model, rng), rng.standard_normal(model.nv), rng.standard_normal(model.nv)
    solver = xla("aba", model)
    qdd = solver.forward_dynamics(q, v, tau)
    back = solver.inverse_dynamics(q, v, qdd)
    assert_within_rounding(back, tau, dynamics_scale(model, q, v, tau, qdd), model.nv, what="ID(FD(τ)) = τ")
    assert_within_rounding(
        back, td.rnea(model, q, v, qdd), dynamics_scale(model, q, v, tau, qdd), model.nv, what="τ = td.rnea"
    )
