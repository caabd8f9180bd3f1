"""The constraint force algorithm (yang-wu-pan §III, Alg. 1) against ABA, on chains of 1-DoF joints."""

import warnings

import numpy as np
import pytest
from conftest import outputs_for_thread_counts, random_state, rel_err
from support.models import alternating_chain

import treedyn as td
from treedyn.scenes import chain, random_tree
from treedyn.scenes.random_tree import _rotation, random_inertia
from treedyn.solvers.builtin import CFASolver
from treedyn.testing import check_solver


def random_chain(n, seed):
    return random_tree(n, seed, joints=("revolute", "prismatic"), branching=0.0)


# --- accuracy on ill-conditioned chains (issue 12) -------------------------------------------------
# u = unit roundoff. A solve that is backward stable for M q̈ = τ^δ (ABA, CRBA + Cholesky, and cfa
# after its refinement: the constraint-force solve refined to a componentwise backward error ~u,
# then one refinement step on the equations of motion with the residual τ − RNEA(q, q̇, q̈)) has the
# forward error ‖δq̈‖ ≤ c n u κ(M) ‖q̈‖ (Higham, Accuracy and Stability §7.1 and §12.1); two such
# solutions then differ by at most twice that. c = 8 covers the few operations per entry of the
# O(1)-bandwidth kernels with room; κ(M) is computed, so the bound holds on any BLAS/CPU.
U64, U32 = np.finfo(np.float64).eps / 2, np.finfo(np.float32).eps / 2


def forward_error_bound(M, u, c=8.0):
    """2 c n u κ₂(M): what two backward-stable solves of M x = b may differ by relative to ‖x‖,
    hence also in the units of conftest.rel_err (max |a − b| / max(1, max |b|))."""
    return 2 * c * M.shape[0] * u * np.linalg.cond(M)


def backward_error(M, Y, R):
    """‖M Y − R‖ / (‖M‖ ‖Y‖) (max norms): ≤ c n u for a backward-stable M⁻¹R (c = 8 as above)."""
    return np.abs(M @ Y - R).max() / (np.abs(M).max() * np.abs(Y).max())


def log_uniform_mass_chain(n, seed):
    """n revolute/prismatic links with random axes and placements, masses log-uniform in 1e-3..1e3."""
    rng = np.random.default_rng(seed)
    m = td.Model()
    for i in range(n):
        mass = 10 ** rng.uniform(-3, 3)
        axis = rng.standard_normal(3)
        joint = td.Revolute(axis) if rng.uniform() < 0.8 else td.Prismatic(axis)
        m.add_body(
            f"b{i}",
            parent=None if i == 0 else f"b{i - 1}",
            joint=joint,
            placement=td.Transform(_rotation(rng), rng.uniform(-0.5, 0.5, 3)),
            inertia=random_inertia(rng, (mass, mass)),
        )
    return m


ILL = [("alternating", alternating_chain())] + [(f"masses-30-{s}", log_uniform_mass_chain(30, s)) for s in range(31)]


@pytest.mark.parametrize("label,model", ILL, ids=[c[0] for c in ILL])
def test_cfa_accurate_on_ill_conditioned_chains(label, model, rng):
    """Link masses spanning 1e6: cfa-oee agrees with aba within the bound above (before the
    refinement the alternating chain was 1.9e-3 off, the 30-link chains up to 1.8e-3), with no
    AccuracyWarning; inverse_inertia likewise against aba's M⁻¹R."""
    cfa, aba = td.make_solver(CFASolver, model), td.make_solver("aba", model)
    with warnings.catch_warnings():
        warnings.simplefilter("error", td.AccuracyWarning)
        for _ in range(2):
            q, v, tau = random_state(model, rng)
            M = td.mass_matrix(model, q)
            tol = forward_error_bound(M, U64)
            assert rel_err(cfa.forward_dynamics(q, v, tau), aba.forward_dynamics(q, v, tau)) <= tol
            R = rng.standard_normal((model.nv, 3))
            assert rel_err(cfa.inverse_inertia(q, R), aba.inverse_inertia(q, R)) <= tol


def test_cfa_float32_warns_when_refinement_fails(rng):
    """float32 (u = 6e-8) cannot resolve the alternating chain: the refinement's error indicator
    stays large and an AccuracyWarning says so rather than returning a silently wrong answer."""
    model = alternating_chain()
    q, v, tau = random_state(model, rng)
    with pytest.warns(td.AccuracyWarning, match="float32"):
        td.make_solver(CFASolver, model, dtype=np.float32).forward_dynamics(q, v, tau)


CHAINS = [
    ("chain-1", chain(1)),
    ("chain-2", chain(2)),
    ("chain-9", chain(9)),
    ("chain-prismatic", chain(6, joint="prismatic")),
    ("random-5", random_chain(5, 1)),
    ("random-17", random_chain(17, 2)),
    ("random-100", random_chain(100, 3)),
]


@pytest.mark.parametrize("label,model", CHAINS, ids=[c[0] for c in CHAINS])
def test_cfa_equals_aba(label, model, rng):
    cfa, aba = td.make_solver(CFASolver, model), td.make_solver("aba", model)
    for _ in range(3):
        q, v, tau = random_state(model, rng)
        tol = forward_error_bound(td.mass_matrix(model, q), U64)
        assert rel_err(cfa.forward_dynamics(q, v, tau), aba.forward_dynamics(q, v, tau)) <= tol


def test_cfa_external_forces_and_batch(rng):
    model = random_chain(12, 5)
    cfa, aba = td.make_solver(CFASolver, model), td.make_solver("aba", model)
    q, v, tau = random_state(model, rng)
    f = rng.standard_normal((model.n_bodies, 6))
    tol = forward_error_bound(td.mass_matrix(model, q), U64)
    assert rel_err(cfa.forward_dynamics(q, v, tau, f), aba.forward_dynamics(q, v, tau, f)) <= tol
    Q = np.stack([td.random_configuration(model, rng) for _ in range(5)])
    V, T = rng.standard_normal((5, model.nv)), rng.standard_normal((5, model.nv))
    tol = max(forward_error_bound(td.mass_matrix(model, qb), U64) for qb in Q)
    assert rel_err(cfa.forward_dynamics(Q, V, T), aba.forward_dynamics(Q, V, T)) <= tol


@pytest.mark.parametrize("label,model", CHAINS[:1] + CHAINS[4:], ids=[c[0] for c in CHAINS[:1] + CHAINS[4:]])
def test_cfa_inverse_inertia(label, model, rng):
    """M⁻¹R = (C − BᵀA⁻¹B) R (eq. (17)), all columns through one OEE."""
    cfa = td.make_solver(CFASolver, model)
    q = td.random_configuration(model, rng)
    M = td.mass_matrix(model, q)
    R = rng.standard_normal((model.nv, 4))
    n = model.nv
    assert (
        backward_error(M, cfa.inverse_inertia(q, R), R) <= 8 * n * U64
    )  # was rel_err(M Y, R) < 1e-9: 1.42e-9 elsewhere
    y = cfa.inverse_inertia(q, R[:, 1])
    assert y.shape == (n,) and backward_error(M, y, R[:, 1]) <= 8 * n * U64
    Minv = cfa.inverse_mass_matrix(q)
    assert backward_error(M, Minv, np.eye(n)) <= 8 * n * U64
    assert rel_err(Minv, np.linalg.inv(M)) <= forward_error_bound(M, U64) * max(1.0, np.abs(np.linalg.inv(M)).max())


def test_cfa_float32(rng):
    model = random_chain(10, 6)
    q, v, tau = random_state(model, rng)
    out = td.make_solver(CFASolver, model, dtype=np.float32).forward_dynamics(q, v, tau)
    assert out.dtype == np.float32
    # float32 inputs are rounded (relative u₃₂) before the solve: the float64 bound with u₃₂
    M = td.mass_matrix(model, q)
    assert rel_err(out, td.make_solver("aba", model).forward_dynamics(q, v, tau)) <= forward_error_bound(M, U32)


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
        inertia = (
            td.Inertia(0.0, (0, 0, 0), np.zeros((3, 3))) if i == 1 else td.Inertia(1.0, (0.05, 0, 0), 0.01 * np.eye(3))
        )
        parent = model.add_body(f"b{i}", parent, td.Revolute((0, 0, 1)), td.Transform(translation=(0.1, 0, 0)), inertia)
    with pytest.raises(td.SingularInertiaError, match="'b1'"):
        td.make_solver(CFASolver, model)
