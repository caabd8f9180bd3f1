"""treedyn.xla.aba (the articulated-body algorithm on XLA) against the C++ ``aba`` on random trees of
every joint kind, floating bases, and example-robot-data's robots, single and batched, float64 and
float32, with the bound two backward-stable solves of M q̈ = τ − b may differ by
(conftest.assert_same_accelerations); and jax.jacfwd through it against the analytic derivatives."""

import numpy as np
import pytest
from conftest import assert_same_accelerations, random_models
from support.models import example_robot
from xla_checks import assert_batch_agrees, jax, random_batch, xla

import treedyn as td
from treedyn import xla as tdx

jnp = jax.numpy


@pytest.mark.parametrize("name,model", random_models(), ids=lambda x: x if isinstance(x, str) else "")
def test_aba_equals_the_cpp_aba_batched_with_external_forces(name, model):
    rng = np.random.default_rng(7)
    Q, V, T, F = random_batch(model, rng, 3)
    got = xla("aba", model).forward_dynamics(Q, V, T, F)
    ref = td.make_solver("aba", model)
    for b in range(3):
        assert_same_accelerations(model, Q[b], V[b], T[b], got[b], ref.forward_dynamics(Q[b], V[b], T[b], F[b]), F[b])


@pytest.mark.parametrize("name,model", random_models()[::3], ids=lambda x: x if isinstance(x, str) else "")
def test_aba_single_call_and_float32(name, model):
    rng = np.random.default_rng(8)
    Q, V, T, _ = random_batch(model, rng, 1)
    q, v, tau = Q[0], V[0], T[0]
    ref = td.make_solver("aba", model).forward_dynamics(q, v, tau)
    got = xla("aba", model).forward_dynamics(q, v, tau)
    assert got.shape == (model.nv,) and got.dtype == np.float64
    assert_same_accelerations(model, q, v, tau, got, ref)
    got32 = xla("aba", model, np.float32).forward_dynamics(q, v, tau)
    assert got32.dtype == np.float32
    assert_same_accelerations(model, q, v, tau, got32, ref, dtype=np.float32)


ROBOTS = [
    ("panda", "panda_description/urdf/panda.urdf", False),
    ("solo12", "solo_description/robots/solo12.urdf", True),
    ("talos", "talos_data/robots/talos_reduced.urdf", True),
]


@pytest.mark.parametrize("relative,floating", [r[1:] for r in ROBOTS], ids=[r[0] for r in ROBOTS])
def test_aba_on_example_robot_data(relative, floating):
    model = example_robot(relative, floating)
    assert_batch_agrees(model, xla("aba", model), *random_batch(model, np.random.default_rng(3), 4))


def test_aba_with_springs_dampers_and_armature():
    model = td.scenes.random_tree(9, 5, floating_base=True)
    rng = np.random.default_rng(1)
    for j in model.joint_names:
        i = model.body_names.index(j) if j in model.body_names else None
        n = model.joints[i].nv if i is not None else 0
        if n and type(model.joints[i]).__name__ != "Free":
            model.set_joint_armature(j, rng.uniform(0.01, 0.1, n))
            model.set_joint_spring(j, rng.uniform(1, 5, n), rng.uniform(0.1, 1, n))
    assert model.core.armature.count(0.0) < model.nv and any(model.core.stiffness)
    Q, V, T, _ = random_batch(model, rng, 2)
    assert_batch_agrees(model, xla("aba", model), Q, V, T)


def test_jacfwd_through_aba_is_the_analytic_derivative():
    """∂q̈/∂τ = M⁻¹ and ∂q̈/∂v from td.aba_derivatives: the functions compose with jax.jacfwd."""
    model = td.scenes.random_tree(8, 2, floating_base=True)
    rng = np.random.default_rng(4)
    q, v, tau = td.random_configuration(model, rng), rng.standard_normal(model.nv), rng.standard_normal(model.nv)
    with jax.enable_x64(True):
        dm = tdx.DeviceModel(model, np.float64, jax.devices("cpu")[0])
        f = jax.jit(lambda v, t: tdx.forward_dynamics(dm, jnp.asarray(q), v, t))
        dv, dtau = jax.jacfwd(f, argnums=(0, 1))(jnp.asarray(v), jnp.asarray(tau))
    _, ref_dv, Minv = td.aba_derivatives(model, q, v, tau)
    scale = np.abs(Minv).max()
    assert np.abs(np.asarray(dtau) - Minv).max() <= 1e-10 * scale
    assert np.abs(np.asarray(dv) - ref_dv).max() <= 1e-10 * max(1.0, np.abs(ref_dv).max())
