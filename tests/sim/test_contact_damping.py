"""The C++ contact step's joint springs (contact/step.hpp): the damping implicit as in MuJoCo's
Euler integrator, (M + h·diag(d))(v⁺ − v)/h = τ + τ_p − c, the stiffness and rest explicit."""

import numpy as np

import treedyn as td
from treedyn.scenes import chain


def pendulum(damping, stiffness=0.0, armature=0.0):
    model = chain(1)
    model.set_joint_spring(1, stiffness=stiffness, damping=damping, rest=[0.3])
    if armature:
        model.set_joint_armature(1, armature)
    return model


def test_stiff_damping_is_stable_and_implicit():
    """d h / M ≫ 2, where explicit damping diverges (|1 − h d/M| > 1): the implicit step decays, and
    each step's velocity is the implicit formula's, from the bare tree's M and c."""
    h, d, k, a = 0.01, 1e4, 50.0, 0.2
    model = pendulum(d, k, a)
    bare = chain(1)
    sim = td.ContactSimulator(model, h)
    state = td.State(np.array([1.0]), np.array([3.0]))
    M0 = td.mass_matrix(bare, state.q)[0, 0] + a
    assert h * d / M0 > 2  # explicit damping would blow up
    for _ in range(200):
        q, v = state.q.copy(), state.v.copy()
        sim.step(state)
        M = td.mass_matrix(bare, q)[0, 0] + a
        rhs = -k * (q[0] - 0.3) - d * v[0] - td.bias_forces(bare, q, v)[0]
        expected = v[0] + h * rhs / (M + h * d)
        # one 1x1 solve of O(1) terms: a few roundings of |rhs| h / (M + h d) and of v
        assert abs(state.v[0] - expected) <= 1e-13 * (abs(v[0]) + h * (abs(rhs) + k + d * abs(v[0])) / (M + h * d))
    assert np.all(np.isfinite(state.q)) and abs(state.v[0]) < 3.0
