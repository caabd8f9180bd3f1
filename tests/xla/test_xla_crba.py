"""treedyn.xla.crba: M(q) against td.mass_matrix (C++ CRBA) within δ = c·n·u of |M|'s sums; the
``crba-cholesky`` forward dynamics against the C++ ``aba`` (two backward-stable solves,
conftest.assert_same_accelerations); ``inverse_inertia`` with a backward error ≤ δ."""

import numpy as np
import pytest
from conftest import assert_backward_stable, assert_same_accelerations, assert_within_rounding, random_models
from xla_checks import random_batch, xla

import treedyn as td


def _mass_scale(model, q):
    """The magnitudes CRBA sums: |M| with the composite inertias' terms (max |M| as the scale)."""
    return np.abs(td.mass_matrix(model, q))


@pytest.mark.parametrize("name,model", random_models()[1::2], ids=lambda x: x if isinstance(x, str) else "")
def test_mass_matrix_and_crba_cholesky(name, model):
    rng = np.random.default_rng(5)
    Q, V, T, F = random_batch(model, rng, 2)
    M = xla("aba", model).mass_matrix(Q)
    assert M.shape == (2, model.nv, model.nv)
    qdd = xla("crba-cholesky", model).forward_dynamics(Q, V, T, F)
    for b in range(2):
        ref = td.mass_matrix(model, Q[b])
        assert_within_rounding(M[b], ref, _mass_scale(model, Q[b]), model.nv, what="M")
        assert np.array_equal(M[b], M[b].T)
        aba = td.make_solver("aba", model).forward_dynamics(Q[b], V[b], T[b], F[b])
        assert_same_accelerations(model, Q[b], V[b], T[b], qdd[b], aba, F[b])


def test_inverse_inertia_is_backward_stable():
    model = td.scenes.random_tree(10, 3, floating_base=True)
    rng = np.random.default_rng(6)
    q = td.random_configuration(model, rng)
    R = rng.standard_normal((model.nv, 3))
    solver = xla("crba-cholesky", model)
    Y = solver.inverse_inertia(q, R)
    assert_backward_stable(td.mass_matrix(model, q), Y, R)
    Minv = solver.inverse_mass_matrix(q)
    assert_backward_stable(td.mass_matrix(model, q), Minv, np.eye(model.nv))
    y = solver.inverse_inertia(q, R[:, 0])
    assert y.shape == (model.nv,)
    assert np.allclose(y, Y[:, 0], rtol=1e-12, atol=1e-14)
