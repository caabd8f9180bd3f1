"""The C++ example plugin, installed: found through its entry point (and by the CLI), conformant
(treedyn.testing.check_solver), agreeing with aba within error bounds, and refusing a model capsule
of another ABI with a clear error. Run from outside the source tree: pytest examples/cpp_plugin/tests."""

import ctypes
import subprocess
import sys

import numpy as np
import pytest
from treedyn_ldlt_plugin import CrbaLdltSolver, _crba_ldlt

import treedyn as td
from treedyn.sdk import ABI_VERSION, MODEL_CAPSULE_NAME, model_capsule
from treedyn.solvers.registry import list_solver_classes
from treedyn.testing import C_ROUNDING, _agreement_bound, check_solver

NAME = "example-crba-ldlt"


def test_found_through_its_entry_point():
    assert NAME in td.available_solvers()
    assert list_solver_classes()[NAME] is CrbaLdltSolver


def test_cli_lists_it():
    r = subprocess.run([sys.executable, "-m", "treedyn", "solvers"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert NAME in r.stdout


def test_conformance():
    # every conformance model (chain, branched, every joint kind, floating base), error-bound tolerances
    assert check_solver(CrbaLdltSolver, rtol=None) == 4


def _bound(model, q, v, tau, f, qdd_ref):
    # testing's bound (two backward-stable solutions of M q̈ = τ − b), b's terms with f_ext's too
    M = td.mass_matrix(model, q)
    terms = np.abs(tau) + np.abs(td.bias_forces(model, q, v)) + np.abs(td.bias_forces(model, q, 0 * v))
    if f is not None:
        terms = terms + np.abs(td.bias_forces(model, q, v, f))
    delta = C_ROUNDING * model.nv * np.finfo(np.float64).eps / 2
    return _agreement_bound(M, qdd_ref, terms, delta)


@pytest.mark.parametrize("floating", [False, True])
def test_agrees_with_aba_single_batched_and_with_f_ext(floating):
    model = td.scenes.random_tree(20, 7, floating_base=floating)
    rng = np.random.default_rng(1)
    B = 5
    Q = np.stack([td.random_configuration(model, rng) for _ in range(B)])
    V, T = rng.standard_normal((B, model.nv)), rng.standard_normal((B, model.nv))
    F = rng.standard_normal((B, model.core.N + 1, 6))
    ours, aba = td.make_solver(NAME, model), td.make_solver("aba", model)
    for f in (None, F):
        got = ours.forward_dynamics(Q, V, T, f)
        ref = aba.forward_dynamics(Q, V, T, f)
        for b in range(B):
            one = ours.forward_dynamics(Q[b], V[b], T[b], None if f is None else f[b])
            assert np.array_equal(one, got[b])  # a batch item is computed as the single call
            fb = None if f is None else f[b]
            assert np.abs(got[b] - ref[b]).max() <= _bound(model, Q[b], V[b], T[b], fb, ref[b])
    out = np.empty((B, model.nv))
    assert ours.forward_dynamics(Q, V, T, F, out=out) is out
    np.testing.assert_array_equal(out, ours.forward_dynamics(Q, V, T, F))


def test_inverse_inertia_and_out_fallback():
    model = td.scenes.random_tree(12, 3)
    q = td.random_configuration(model, np.random.default_rng(2))
    s = td.make_solver(NAME, model)
    M = td.mass_matrix(model, q)
    Y = s.inverse_inertia(q, np.eye(model.nv))
    assert np.abs(M @ Y - np.eye(model.nv)).max() <= C_ROUNDING * model.nv * np.finfo(float).eps * np.linalg.cond(M)
    out = np.empty((model.nv, model.nv))
    assert s.inverse_mass_matrix(q, out=out) is out
    np.testing.assert_array_equal(out, Y)


def test_bad_input_is_a_python_error():
    model = td.scenes.chain(4)
    s = td.make_solver(NAME, model)
    z = np.zeros(4)
    with pytest.raises(ValueError, match="f_ext"):
        s.forward_dynamics(z, z, z, np.zeros((4, 6)))  # n_bodies = 5 with the world
    with pytest.raises(TypeError):
        td.make_solver(NAME, model, dtype=np.float32)  # float64 only
    with pytest.raises(ValueError, match="out"):
        s.forward_dynamics(z, z, z, out=np.empty(3))
    with pytest.raises(ValueError, match="shape"):  # the engine's own checks, called directly
        s._engine.forward_dynamics(np.zeros((1, 3)), np.zeros((1, 4)), np.zeros((1, 4)), None, np.empty((1, 4)))


def test_a_capsule_of_another_abi_is_refused():
    model = td.scenes.chain(3)
    with pytest.raises(RuntimeError, match=f"ABI {ABI_VERSION + 1}"):
        model_capsule(model, ABI_VERSION + 1)
    # a capsule named as another treedyn ABI would name it: refused before its pointer is read
    other = MODEL_CAPSULE_NAME.replace(f"abi={ABI_VERSION}", f"abi={ABI_VERSION + 1}").encode()
    new = ctypes.pythonapi.PyCapsule_New
    new.restype, new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
    names = [ctypes.create_string_buffer(other), ctypes.create_string_buffer(b"something.else")]  # outlive the capsules
    with pytest.raises(_crba_ldlt.AbiMismatch, match="rebuild the plugin"):
        _crba_ldlt.CrbaLdlt(new(1, ctypes.addressof(names[0]), None))
    with pytest.raises(ValueError, match="treedyn.sdk.model_capsule"):
        _crba_ldlt.CrbaLdlt(new(1, ctypes.addressof(names[1]), None))


def test_the_capsule_keeps_the_model_alive():
    capsule = model_capsule(td.scenes.chain(6))  # the Python model is gone after this line
    s = _crba_ldlt.CrbaLdlt(capsule)
    out = np.empty((1, 6))
    s.forward_dynamics(np.zeros((1, 6)), np.zeros((1, 6)), np.zeros((1, 6)), None, out)
    assert np.isfinite(out).all()
