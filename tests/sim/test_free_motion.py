"""The contact step's free motion by RNEA, CRBA and LTL (cpp/include/treedyn/contact/free_motion.hpp), the route a
step takes while Newton solves its problems, against ABA's, the route of a step that starts cold (from a state
that is not the one the last step ended in: docs/contact.md)."""

import os

import numpy as np
import pytest

import treedyn as td


@pytest.mark.parametrize("package,name", [("dm_control", "humanoid"), ("gymnasium", "ant")])
def test_the_free_motion_by_ltl_is_abas(public_models, package, name):
    """Each step of a run on MuJoCo's soft contacts (Newton, the free motion by LTL from its second step on) equals
    the same step taken cold from the same state (the free motion by ABA, Newton started afresh) to rounding: two
    backward-stable solves of M q̈ = τ − c differ by ~κ(M) ε |q̈| (κ(M) ≲ 1e3 here), and Newton's answer is exact on
    its final active set (stopped on MuJoCo's tolerance, a warm and a cold start end 1e-8 apart). The Gymnasium ant steps by RK4 (its stages past the first by LTL); the humanoid by Euler."""
    model = td.load_mjcf(os.path.join(public_models[package], f"{name}.xml"))
    sim = td.ContactSimulator(model, qp_tolerance=1e-14)  # (Newton to its exact answer, whatever its warm start)
    assert sim.soft
    state = td.State.initial(model)
    rng = np.random.default_rng(1)
    worst, touching = 0.0, 0
    for _ in range(150):
        ctrl = rng.uniform(-1, 1, model.nu)
        before = state.copy()
        step = sim.step(state, ctrl=ctrl)
        touching += step.n_contacts > 0
        cold = before.copy()
        td.ContactSimulator(model, qp_tolerance=1e-14).step(cold, ctrl=ctrl)
        worst = max(worst, np.abs(cold.q - state.q).max(), sim.dt * np.abs(cold.v - state.v).max())
    assert touching > 20  # (Newton solved those steps: the route was taken)
    assert worst < 1e-12
