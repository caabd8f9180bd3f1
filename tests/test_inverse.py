"""python/treedyn/inverse.py: td.inverse_mass_matrix and td.contact_inertia (drumwright2012 §6.3)."""
import numpy as np
import pytest

import treedyn as td
from treedyn.model import Revolute, Transform
from treedyn.scenes import chain, random_tree

from conftest import rel_err


def test_contact_inertia_equals_the_dense_products():
    model = random_tree(30, 3, floating_base=True)
    rng = np.random.default_rng(0)
    q = td.random_configuration(model, rng)
    Minv = np.linalg.inv(td.mass_matrix(model, q))
    N = rng.standard_normal((model.nv, 4))
    D = rng.standard_normal((model.nv, 8))
    for name in ("drumwright", "crba-ltl", "crba-cholesky", "aba"):
        s = td.make_solver(name, model)
        NN = td.contact_inertia(s, q, N)
        assert NN.shape == (4, 4) and np.array_equal(NN, NN.T)
        assert rel_err(NN, N.T @ (Minv @ N)) < 1e-10
        NN, ND, DD = td.contact_inertia(s, q, N, D)
        assert ND.shape == (4, 8) and DD.shape == (8, 8)
        assert rel_err(NN, N.T @ Minv @ N) < 1e-10
        assert rel_err(ND, N.T @ Minv @ D) < 1e-10
        assert rel_err(DD, D.T @ Minv @ D) < 1e-10
    one = td.contact_inertia(td.make_solver("drumwright", model), q, N[:, 0])
    assert one.shape == (1, 1) and rel_err(one[0, 0], N[:, 0] @ Minv @ N[:, 0]) < 1e-10


def test_contact_inertia_refuses_bad_input():
    model = chain(5)
    s = td.make_solver("drumwright", model)
    q = np.zeros(5)
    with pytest.raises(ValueError, match=r"N must have shape \(nv, p\)"):
        td.contact_inertia(s, q, np.ones((4, 2)))
    with pytest.raises(ValueError, match="D must have shape"):
        td.contact_inertia(s, q, np.ones((5, 2)), np.ones((2, 5)))
    with pytest.raises(ValueError, match="NaN"):
        td.contact_inertia(s, q, np.full((5, 1), np.nan))
    with pytest.raises(TypeError):
        td.contact_inertia(s, q, np.ones((5, 1), dtype=complex))
    with pytest.raises(TypeError, match="Solver instance"):
        td.contact_inertia("drumwright", q, np.ones((5, 1)))
    with pytest.raises(ValueError, match="q must have shape"):
        td.contact_inertia(s, q[:3], np.ones((5, 1)))
    # found by tests/test_fuzz_api.py: finite but huge columns overflowed NᵀM⁻¹N to inf silently
    with pytest.raises(ValueError, match=r"N\^T M\^-1 N overflowed"):
        td.contact_inertia(s, q, np.full((5, 1), 1e300))
    with pytest.raises(ValueError, match="overflowed"):
        td.contact_inertia(s, q, np.ones((5, 1)), np.full((5, 2), 1e300))


def test_inverse_mass_matrix_methods_and_solver_reuse():
    model = random_tree(20, 5)
    q = td.random_configuration(model, np.random.default_rng(0))
    ref = np.linalg.inv(td.mass_matrix(model, q))
    for name in ("drumwright", "crba-ltl", "crba-cholesky", "aba"):
        assert rel_err(td.inverse_mass_matrix(model, q, method=name), ref) < 1e-10
    s = td.make_solver("crba-ltl", model)
    assert rel_err(td.inverse_mass_matrix(s, q), ref) < 1e-10
    with pytest.raises(ValueError, match="unknown solver"):
        td.inverse_mass_matrix(model, q, method="nope")
    with pytest.raises(TypeError):
        td.inverse_mass_matrix("model", q)


def test_inverse_mass_matrix_follows_a_growing_model():
    model = chain(3)
    assert td.inverse_mass_matrix(model, np.zeros(3)).shape == (3, 3)
    model.add_body("extra", "link3", Revolute((0, 0, 1)), Transform(translation=(0.1, 0, 0)))
    q = np.zeros(4)
    assert rel_err(td.inverse_mass_matrix(model, q), np.linalg.inv(td.mass_matrix(model, q))) < 1e-10
