"""python/treedyn/solvers/inverse.py: td.inverse_mass_matrix and td.contact_inertia (drumwright2012 §6.3)."""

import numpy as np
import pytest
from conftest import assert_below, assert_same_solution, rounding_bound, solution_bound

import treedyn as td
from treedyn.model import Revolute, Transform
from treedyn.scenes import chain, random_tree


def contact_reference(M, A, B):
    """Aᵀ M⁻¹ B by LAPACK, and the bound within which a backward-stable M⁻¹B agrees with it: row i of
    Aᵀ times column j's forward bound (‖a_i‖₁ · solution_bound_j), plus the two products' rounding
    (γ_n |A|ᵀ|M⁻¹B| each, Higham §3.5)."""
    Y = np.linalg.solve(M, B)
    bound = np.abs(A).sum(axis=0)[:, None] * solution_bound(M, Y)[None, :] + 2 * rounding_bound(M.shape[0]) * (
        np.abs(A).T @ np.abs(Y)
    )
    return A.T @ Y, bound


def test_contact_inertia_equals_the_dense_products():
    model = random_tree(30, 3, floating_base=True)
    rng = np.random.default_rng(0)
    q = td.random_configuration(model, rng)
    M = td.mass_matrix(model, q)
    N = rng.standard_normal((model.nv, 4))
    D = rng.standard_normal((model.nv, 8))
    (NN_ref, NN_tol), (ND_ref, ND_tol), (DD_ref, DD_tol) = (
        contact_reference(M, N, N),
        contact_reference(M, N, D),
        contact_reference(M, D, D),
    )
    for name in ("drumwright", "crba-ltl", "crba-cholesky", "aba"):
        s = td.make_solver(name, model)
        NN = td.contact_inertia(s, q, N)
        assert NN.shape == (4, 4) and np.array_equal(NN, NN.T)
        assert_below(NN - NN_ref, NN_tol, f"{name} NᵀM⁻¹N")
        NN, ND, DD = td.contact_inertia(s, q, N, D)
        assert ND.shape == (4, 8) and DD.shape == (8, 8)
        assert_below(NN - NN_ref, NN_tol, f"{name} NᵀM⁻¹N")
        assert_below(ND - ND_ref, ND_tol, f"{name} NᵀM⁻¹D")
        assert_below(DD - DD_ref, DD_tol, f"{name} DᵀM⁻¹D")
    one = td.contact_inertia(td.make_solver("drumwright", model), q, N[:, 0])
    assert one.shape == (1, 1)
    assert_below(one[0, 0] - NN_ref[0, 0], NN_tol[0, 0], "nᵀM⁻¹n")


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
    with pytest.raises(ValueError, match="^contact_inertia overflowed"):
        td.contact_inertia(s, q, np.full((5, 1), 1e300))
    with pytest.raises(ValueError, match="overflowed"):
        td.contact_inertia(s, q, np.ones((5, 1)), np.full((5, 2), 1e300))


def test_inverse_mass_matrix_methods_and_solver_reuse():
    model = random_tree(20, 5)
    q = td.random_configuration(model, np.random.default_rng(0))
    M = td.mass_matrix(model, q)
    ref = np.linalg.inv(M)
    for name in ("drumwright", "crba-ltl", "crba-cholesky", "aba"):
        assert_same_solution(M, td.inverse_mass_matrix(model, q, method=name), ref, what=f"{name} M⁻¹")
    s = td.make_solver("crba-ltl", model)
    assert_same_solution(M, td.inverse_mass_matrix(s, q), ref, what="crba-ltl solver M⁻¹")
    with pytest.raises(ValueError, match="unknown solver"):
        td.inverse_mass_matrix(model, q, method="nope")
    with pytest.raises(TypeError):
        td.inverse_mass_matrix("model", q)


def test_inverse_mass_matrix_follows_a_growing_model():
    model = chain(3)
    assert td.inverse_mass_matrix(model, np.zeros(3)).shape == (3, 3)
    model.add_body("extra", "link3", Revolute((0, 0, 1)), Transform(translation=(0.1, 0, 0)))
    q = np.zeros(4)
    M = td.mass_matrix(model, q)
    assert_same_solution(M, td.inverse_mass_matrix(model, q), np.linalg.inv(M), what="grown model M⁻¹")


def test_contact_inertia_and_inverse_mass_matrix_never_return_inf():
    m = chain(2)
    s = td.make_solver("drumwright", m)
    q = np.array([0.3, 0.1])
    # issue 12: N = 1e300 gave NᵀM⁻¹N = inf
    with pytest.raises(ValueError, match="^contact_inertia overflowed to inf/NaN"):
        td.contact_inertia(s, q, np.full((2, 1), 1e300))
    with pytest.raises(ValueError, match="^contact_inertia overflowed"):
        td.contact_inertia(s, q, np.ones((2, 1)), np.full((2, 1), 1e300))
    s32 = td.make_solver("drumwright", m, dtype=np.float32)
    with pytest.raises(ValueError, match="contact_inertia: N has entries too large for the solver's dtype float32"):
        td.contact_inertia(s32, q, np.full((2, 1), 1e300))
    # a mass 1e300 m out on a turning arm: M₁₁ = I + m r² overflows; said so, not blamed on the inertia
    p = td.Model()
    p.add_body("arm", None, Revolute((0, 0, 1)))
    p.add_body("slider", "arm", td.Prismatic((1, 0, 0)), placement=Transform(translation=(0.1, 0, 0)))
    for method in ("drumwright", "crba-ltl", "crba-cholesky", "aba"):
        with pytest.raises(ValueError, match=r"^inverse_mass_matrix.* overflowed") as e:
            td.inverse_mass_matrix(p, np.array([0.3, 1e300]), method=method)
        assert not isinstance(e.value, td.SingularInertiaError), (method, str(e.value))


def test_contact_product_uses_the_supports_and_equals_the_dense_product(monkeypatch):
    """inverse._contact_product (the RᵀW of ContactSimulator's contact-space inertia): columns
    grouped by contact, each nonzero only on the dofs from one or two bodies to the root, as contact
    directions are; every entry within the bound of Rᵀ M⁻¹ R for a backward-stable M⁻¹R, through
    the private rows, the shared rows' chunks from either side, and an empty column."""
    from treedyn.solvers import inverse

    model = random_tree(40, 3, floating_base=True)
    rng = np.random.default_rng(3)
    q = td.random_configuration(model, rng)
    M = td.mass_matrix(model, q)
    parents, vi = model.parents, model.v_indices
    dofs = [list(range(vi[b], vi[b] + model.joints[b].nv)) for b in range(model.n_bodies)]

    def path(b):
        out = []
        while b > 0:
            out += dofs[b]
            b = parents[b]
        return out

    cols, groups = [], []
    for g in range(25):
        rows = path(int(rng.integers(1, model.n_bodies)))
        if g % 5 == 0:  # a contact between two bodies: both paths
            rows = sorted(set(rows) | set(path(int(rng.integers(1, model.n_bodies)))))
        for _ in range(int(rng.choice([1, 3, 5]))):
            c = np.zeros(model.nv)
            c[rows] = rng.standard_normal(len(rows))
            cols.append(c)
            groups.append(g)
    cols.append(np.zeros(model.nv))  # a column that touches nothing
    groups.append(25)
    order = rng.permutation(len(cols))
    R, groups = np.array(cols).T[:, order], np.array(groups)[order]
    ref, bound = contact_reference(M, R, R)
    bound = np.maximum(bound, bound.T) + 1e-300  # an entry may come from its mirror (1e-300: the empty column)
    W = td.make_solver("drumwright", model).inverse_inertia(q, R)
    monkeypatch.setattr(inverse, "_DENSE_PRODUCT", 0)
    for chunk in (7, 1000):
        G = inverse._contact_product(R, W, groups, chunk=chunk)
        assert G.shape == ref.shape
        assert_below(G - ref, bound, f"RᵀW by supports, chunks of {chunk}")
    monkeypatch.setattr(inverse, "_DENSE_PRODUCT", np.inf)
    assert np.array_equal(inverse._contact_product(R, W, groups), R.T @ W)
