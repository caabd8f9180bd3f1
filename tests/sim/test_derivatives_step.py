"""td.step_derivatives on batches and in float32 (tests/algorithms/test_derivatives.py checks one float64 step
against central differences): a batch is its single steps bit for bit, on any thread count, with
rotations on both sides of the series' switch (θ = 0.05) in one batch; float32 within the error
bound of float64; bad input."""

import numpy as np
import pytest
from conftest import (
    assert_below,
    dynamics_scale,
    outputs_for_thread_counts,
    random_state,
    rounding_bound,
    solution_bound,
)
from support.derivatives import two_floating_bodies

import treedyn as td
from treedyn.scenes import chain, random_tree
from treedyn.sim.step_derivatives import _integrate_blocks


def batch(model, rng, B, speeds=None):
    states = [random_state(model, rng) for _ in range(B)]
    q, v, tau = (np.array([s[k] for s in states]) for k in range(3))
    if speeds is not None:  # |v| per item: dt |v| on both sides of θ = 0.05
        v *= np.asarray(speeds)[:, None] / np.linalg.norm(v, axis=1, keepdims=True)
    return q, v, tau


@pytest.mark.parametrize("make", [lambda: random_tree(10, 12, floating_base=True), two_floating_bodies])
def test_a_batch_is_its_single_steps_bit_for_bit_on_any_thread_count(make):
    model, rng, dt = make(), np.random.default_rng(11), 0.5
    q, v, tau = batch(model, rng, 6, speeds=[1e-4, 0.01, 0.09, 0.11, 1.0, 3.0])
    f_ext = rng.standard_normal((6, model.n_bodies, 6))
    singles = [td.step_derivatives(model, q[b], v[b], tau[b], dt, f_ext[b]) for b in range(6)]
    for out in outputs_for_thread_counts(lambda: td.step_derivatives(model, q, v, tau, dt, f_ext)):
        shapes = [(6, model.nq), (6, model.nv), (6, 2 * model.nv, 2 * model.nv), (6, 2 * model.nv, model.nv)]
        assert [o.shape for o in out] == shapes
        for k in range(4):
            np.testing.assert_array_equal(out[k], np.array([s[k] for s in singles]))
    empty = td.step_derivatives(model, q[:0], v[:0], tau[:0], dt)
    assert [e.shape[0] for e in empty] == [0] * 4


@pytest.mark.parametrize("dt", [1e-2, 0.5])
def test_float32_agrees_with_float64(dt):
    # the float32 step is ABA's q̈ and aba_derivatives in float32 (each within δ32·cond(M) of the
    # magnitudes summed, as tests/algorithms/test_derivatives.py's float32 test), times dt and the float64
    # Jacobians of integrate Dw (rows ≤ ‖Dw‖∞), plus the rounding of the products and sums (δ32 of
    # the entries); q⁺ moves by ‖Dw‖∞ dt times v⁺'s error
    # two free bodies with spherical and universal joints (cond(M) ~ 300: δ32·cond(M) well below 1)
    model, rng = two_floating_bodies(), np.random.default_rng(4)
    q, v, tau = random_state(model, rng)
    out64 = td.step_derivatives(model, q, v, tau, dt)
    out32 = td.step_derivatives(model, q, v, tau, dt, dtype=np.float32)
    assert all(o.dtype == np.float32 for o in out32)
    d64 = td.aba_derivatives(model, q, v, tau)
    qdd = (out64[1] - v) / dt
    S = np.abs(dynamics_scale(model, q, v, tau, qdd)).max()
    M = td.mass_matrix(model, q)
    d32 = rounding_bound(model.nv, np.float32)
    e_d = d32 * np.linalg.cond(M, np.inf) * (max(np.abs(x).max() for x in d64) + S)  # an entry of ∂q̈ or q̈
    W = 1.0 + max((np.abs(b[3]).sum(axis=-1).max() for b in _integrate_blocks(model, dt * out64[1][None])), default=0)
    # the magnitudes summed (as the float64 test's "size": the entries and the τ terms S they come from)
    size = np.abs(out64[2]).max() + np.abs(out64[3]).max() + dt * W * (max(np.abs(x).max() for x in d64) + S)
    bound = dt * e_d * W + d32 * size
    for k, name in ((2, "A"), (3, "B")):
        assert_below(out32[k].astype(np.float64) - out64[k], bound, f"float32 {name}", size=size)
    # v⁺ = v + dt q̈: q̈'s forward error in float32 (a backward-stable solve, conftest.solution_bound)
    e_qdd = float(solution_bound(M, qdd, dynamics_scale(model, q, v, tau, qdd, M=M), dtype=np.float32)[0])
    e_v = d32 * np.abs(v).max() + dt * e_qdd
    assert_below(out32[1].astype(np.float64) - out64[1], e_v, "float32 v⁺", size=np.abs(out64[1]).max())
    # q⁺ in the tangent space at q⁺64 (td.difference), and its own rounding to float32
    e_q = W * dt * e_v * 2 + d32 * (1 + np.abs(q).max())
    dq = td.difference(model, out64[0], out32[0].astype(np.float64))
    assert_below(dq, e_q, "float32 q⁺", size=1 + np.abs(q).max() + dt * np.abs(out64[1]).max())


def test_bad_input_raises_clear_errors_and_inputs_are_not_modified():
    model, rng = chain(4, floating_base=True), np.random.default_rng(0)
    q, v, tau = batch(model, rng, 3)
    saved = [x.copy() for x in (q, v, tau)]
    td.step_derivatives(model, q, v, tau, 0.1)
    td.step_derivatives(model, q, v, tau, 0.1, dtype=np.float32)
    for x, y in zip((q, v, tau), saved):
        np.testing.assert_array_equal(x, y)
    with pytest.raises(TypeError, match="dtype"):
        td.step_derivatives(model, q, v, tau, 0.1, dtype=np.int64)
    with pytest.raises(ValueError, match="batches of the same size"):
        td.step_derivatives(model, q, v[:2], tau, 0.1)
    with pytest.raises(ValueError, match="dt must be finite"):
        td.step_derivatives(model, q, v, tau, np.nan)
    with pytest.raises(TypeError, match="dt must be a real number"):
        td.step_derivatives(model, q, v, tau, np.array([0.1]))
