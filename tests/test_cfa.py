"""The constraint force algorithm (yang-wu-pan §III, Alg. 1) against ABA, on chains of 1-DoF joints."""
import numpy as np
import pytest

import treedyn as td
from treedyn.scenes import chain, random_tree
from treedyn.solvers.builtin import CFASolver
from treedyn.testing import check_solver

from conftest import rel_err, random_state, outputs_for_thread_counts


def random_chain(n, seed):
    return random_tree(n, seed, joints=("revolute", "prismatic"), branching=0.0)


CHAINS = [("chain-1", chain(1)), ("chain-2", chain(2)), ("chain-9", chain(9)), ("chain-prismatic", chain(6, joint="prismatic")),
          ("random-5", random_chain(5, 1)), ("random-17", random_chain(17, 2)), ("random-100", random_chain(100, 3))]


@pytest.mark.parametrize("label,model", CHAINS, ids=[c[0] for c in CHAINS])
def test_cfa_equals_aba(label, model, rng):
    cfa, aba = td.make_solver(CFASolver, model), td.make_solver("aba", model)
    for _ in range(3):
        q, v, tau = random_state(model, rng)
        assert rel_err(cfa.forward_dynamics(q, v, tau), aba.forward_dynamics(q, v, tau)) < 1e-9


def test_cfa_external_forces_and_batch(rng):
    model = random_chain(12, 5)
    cfa, aba = td.make_solver(CFASolver, model), td.make_solver("aba", model)
    q, v, tau = random_state(model, rng)
    f = rng.standard_normal((model.n_bodies, 6))
    assert rel_err(cfa.forward_dynamics(q, v, tau, f), aba.forward_dynamics(q, v, tau, f)) < 1e-9
    Q = np.stack([td.random_configuration(model, rng) for _ in range(5)])
    V, T = rng.standard_normal((5, model.nv)), rng.standard_normal((5, model.nv))
    assert rel_err(cfa.forward_dynamics(Q, V, T), aba.forward_dynamics(Q, V, T)) < 1e-9


@pytest.mark.parametrize("label,model", CHAINS[:1] + CHAINS[4:], ids=[c[0] for c in CHAINS[:1] + CHAINS[4:]])
def test_cfa_inverse_inertia(label, model, rng):
    """M⁻¹R = (C − BᵀA⁻¹B) R (eq. (17)), all columns through one OEE."""
    cfa = td.make_solver(CFASolver, model)
    q = td.random_configuration(model, rng)
    M = td.mass_matrix(model, q)
    R = rng.standard_normal((model.nv, 4))
    assert rel_err(M @ cfa.inverse_inertia(q, R), R) < 1e-9
    y = cfa.inverse_inertia(q, R[:, 1])
    assert y.shape == (model.nv,) and rel_err(M @ y, R[:, 1]) < 1e-9
    assert rel_err(cfa.inverse_mass_matrix(q), np.linalg.inv(M)) < 1e-8


def test_cfa_float32(rng):
    model = random_chain(10, 6)
    q, v, tau = random_state(model, rng)
    out = td.make_solver(CFASolver, model, dtype=np.float32).forward_dynamics(q, v, tau)
    assert out.dtype == np.float32
    assert rel_err(out, td.make_solver("aba", model).forward_dynamics(q, v, tau)) < 1e-3


def test_cfa_same_answer_for_any_thread_count(rng):
    model = random_chain(150, 7)  # long enough for the joint loops and OEE levels to go parallel
    q, v, tau = random_state(model, rng)
    out = outputs_for_thread_counts(lambda: td.make_solver(CFASolver, model).forward_dynamics(q, v, tau))
    assert np.array_equal(out[0], out[1]) and np.array_equal(out[0], out[2])


def test_cfa_supports_explains_refusals():
    assert CFASolver.supports(chain(5)) is None
    assert "branched" in CFASolver.supports(random_tree(10, 0, joints=("revolute",), branching=1.0))
    assert "floating base" in CFASolver.supports(chain(5, floating_base=True))
    assert "Spherical" in CFASolver.supports(random_tree(6, 0, joints=("spherical",), branching=0.0))
    m = chain(3)
    m.add_body("tip", "link3", td.Fixed())
    assert "1-DoF" in CFASolver.supports(m)
    with pytest.raises(ValueError, match="does not support"):
        td.make_solver(CFASolver, random_tree(10, 0, joints=("revolute",), branching=1.0))


def test_cfa_conformance():
    assert check_solver(CFASolver) >= 1


def test_cfa_refuses_a_massless_link():
    """CFA needs every J_i⁻¹ (P = (I−Γ)J⁻¹(I−Γ)ᵀ): a massless link is a clear SingularInertiaError."""
    model, parent = td.Model(), None
    for i in range(3):
        inertia = td.Inertia(0.0, (0, 0, 0), np.zeros((3, 3))) if i == 1 else td.Inertia(1.0, (0.05, 0, 0), 0.01 * np.eye(3))
        parent = model.add_body(f"b{i}", parent, td.Revolute((0, 0, 1)), td.Transform(translation=(0.1, 0, 0)), inertia)
    with pytest.raises(td.SingularInertiaError, match="'b1'"):
        td.make_solver(CFASolver, model)
