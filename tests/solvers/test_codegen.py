"""treedyn.codegen and the "aba" solver with specialise=True: featherstone-part3's symbolic
simplification, ABA generated as C++ for one model (cpp/src/codegen_aba.cpp, codegen/*.hpp)."""

import threading

import numpy as np
import pytest
from conftest import assert_same_accelerations, random_models, random_state

import treedyn as td
import treedyn.solvers.codegen as codegen
from treedyn.scenes import chain, random_tree

pytestmark = pytest.mark.skipif(codegen.compiler() is None, reason="no C++ compiler on this machine")


@pytest.fixture(scope="module", autouse=True)
def kernel_cache(tmp_path_factory):
    """One cache for the module: each model's kernel compiles once."""
    mp = pytest.MonkeyPatch()
    mp.setenv("TREEDYN_CACHE", str(tmp_path_factory.mktemp("treedyn-cache")))
    yield
    mp.undo()


def specialised(model, dtype=np.float64):
    s = td.make_solver("aba", model, specialise=True, dtype=dtype)
    assert s.specialised
    return s


def batch(model, rng, B):
    Q = np.stack([td.random_configuration(model, rng) for _ in range(B)])
    return Q, rng.standard_normal((B, model.nv)), rng.standard_normal((B, model.nv))


@pytest.mark.parametrize("name, model", random_models(), ids=[n for n, _ in random_models()])
def test_generated_aba_agrees_with_the_generic_kernel(name, model, rng):
    """The same operations minus those on constants (and ^iX_λ applied as its two factors): the
    generic kernel's result within the rounding of a dynamics solve, on every joint kind."""
    gen, ref = specialised(model), td.make_solver("aba", model)
    for _ in range(3):
        q, v, tau = random_state(model, rng)
        assert_same_accelerations(model, q, v, tau, gen.forward_dynamics(q, v, tau), ref.forward_dynamics(q, v, tau))


def test_float32_generated_aba_agrees_with_float64(rng):
    model = random_tree(12, 5, floating_base=True)
    gen = specialised(model, np.float32)
    q, v, tau = random_state(model, rng)
    out = gen.forward_dynamics(q, v, tau)
    assert out.dtype == np.float32
    ref = td.make_solver("aba", model).forward_dynamics(q, v, tau)
    assert_same_accelerations(model, q, v, tau, out, ref, dtype=np.float32)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_robots_result_does_not_depend_on_its_batch(dtype, rng):
    """The lanes run the scalar code's statements (no FMA contraction, per-lane sin/cos): robot k
    gives the same bits alone, in batches of any size, at any position, on any thread count."""
    model = random_tree(9, 3, floating_base=True)
    gen = specialised(model, dtype)
    Q, V, T = batch(model, rng, 37)
    alone = np.stack([gen.forward_dynamics(Q[k], V[k], T[k]) for k in range(37)])
    for B in (1, 3, 8, 13, 37):
        np.testing.assert_array_equal(gen.forward_dynamics(Q[:B], V[:B], T[:B]), alone[:B])
    np.testing.assert_array_equal(gen.forward_dynamics(Q[5:], V[5:], T[5:]), alone[5:])
    before = td.get_num_threads()
    try:
        for n in (1, 2, 3):
            td.set_num_threads(n)
            np.testing.assert_array_equal(gen.forward_dynamics(Q, V, T), alone)
    finally:
        td.set_num_threads(before)


def test_f_ext_runs_the_generic_kernel(rng):
    model = random_tree(8, 2)
    gen, ref = specialised(model), td.make_solver("aba", model)
    q, v, tau = random_state(model, rng)
    f = rng.standard_normal((model.n_bodies, 6))
    np.testing.assert_array_equal(gen.forward_dynamics(q, v, tau, f), ref.forward_dynamics(q, v, tau, f))


def test_errors_are_the_generic_kernels():
    """A flagged call (here: velocity products that overflow to inf) is redone by the generic
    kernel, whose error the user gets."""
    model = chain(5)
    gen, ref = specialised(model), td.make_solver("aba", model)
    Q, V, T = np.zeros((4, 5)), np.zeros((4, 5)), np.zeros((4, 5))
    V[2, 1] = 1e200
    for args in ((Q, V, T), (Q[2], V[2], T[2])):
        with pytest.raises(ValueError) as e_ref:
            ref.forward_dynamics(*args)
        with pytest.raises(ValueError) as e_gen:
            gen.forward_dynamics(*args)
        assert str(e_gen.value) == str(e_ref.value)
        assert "overflowed" in str(e_gen.value)


def test_generated_code_can_be_right_where_the_generic_kernel_overflows():
    """A prismatic chain's M is constant, yet the generic kernel's link-coordinate transforms square
    a coordinate of 1e300 and report an overflow; the generated code skips those products (their
    factors are constant zeros) and returns the exact accelerations, those at q = 0."""
    model = chain(5, joint="prismatic")
    q = np.zeros(5)
    q[1] = 1e300
    gen = specialised(model)
    np.testing.assert_array_equal(
        gen.forward_dynamics(q, np.zeros(5), np.zeros(5)), gen.forward_dynamics(np.zeros(5), np.zeros(5), np.zeros(5))
    )


def test_a_singular_joint_is_reported_as_by_the_generic_kernel():
    """A massless leaf on a revolute joint: the pivot D = 0 at every q; the trace meets it at the
    tracing point, so the solver warns and runs the generic kernel, which names the joint."""
    model = td.Model()
    a = model.add_body("a", None, td.Revolute((0, 0, 1)), td.Transform(), td.Inertia.box(1.0, (0.1, 0.1, 0.1)))
    model.add_body(
        "b",
        a,
        td.Revolute((0, 1, 0)),
        td.Transform(translation=(0.1, 0, 0)),
        td.Inertia(0.0, (0, 0, 0), np.zeros((3, 3))),
    )
    with pytest.warns(codegen.CodegenWarning, match="singular"):
        gen = td.make_solver("aba", model, specialise=True)
    assert not gen.specialised
    with pytest.raises(td.SingularInertiaError, match="'b'"):
        gen.forward_dynamics(np.zeros(2), np.zeros(2), np.zeros(2))


def test_without_a_working_compiler_the_solver_warns_and_runs_generically(monkeypatch, tmp_path, rng):
    monkeypatch.setenv("CXX", "false")  # exists, and fails
    monkeypatch.setenv("TREEDYN_CACHE", str(tmp_path))
    model = chain(4)
    with pytest.warns(codegen.CodegenWarning, match="failed"):
        gen = td.make_solver("aba", model, specialise=True)
    assert not gen.specialised
    q, v, tau = random_state(model, rng)
    np.testing.assert_array_equal(
        gen.forward_dynamics(q, v, tau), td.make_solver("aba", model).forward_dynamics(q, v, tau)
    )


def test_the_library_is_cached(tmp_path, monkeypatch):
    monkeypatch.setenv("TREEDYN_CACHE", str(tmp_path))
    model = chain(3)
    first = codegen.compiled_aba(model)
    made = (tmp_path / "kernels" / first.split("/")[-1]).stat().st_mtime_ns
    assert codegen.compiled_aba(model) == first
    assert (tmp_path / "kernels" / first.split("/")[-1]).stat().st_mtime_ns == made  # not rebuilt
    assert codegen.compiled_aba(chain(4)) != first  # another model, another library


def test_specialised_code_has_fewer_operations():
    """featherstone-part3's point: the axis-aligned joints and translation-only placements of this
    chain make most of the generic kernel's products vanish."""
    counts = codegen.op_counts(chain(20))
    g, s = counts["generic"], counts["specialised"]
    assert s["multiplications"] < g["multiplications"] / 2
    assert s["additions"] < g["additions"] / 2
    assert s["divisions"] <= g["divisions"]


def test_a_specialised_solver_shared_by_threads_gives_the_serial_results(rng):
    model = random_tree(10, 11, floating_base=True)
    gen = specialised(model)
    Q, V, T = batch(model, rng, 64)
    serial_batch = gen.forward_dynamics(Q, V, T)
    serial = [gen.forward_dynamics(Q[k], V[k], T[k]) for k in range(64)]
    results, errors = {}, []

    def work(t):
        try:
            for _ in range(20):
                results[(t, "batch")] = gen.forward_dynamics(Q, V, T)
                k = (t * 7) % 64
                results[(t, k)] = gen.forward_dynamics(Q[k], V[k], T[k])
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors
    for key, out in results.items():
        np.testing.assert_array_equal(out, serial_batch if key[1] == "batch" else serial[key[1]])


def test_the_source_folds_the_models_constants():
    src, counts = codegen.aba_source(chain(2))
    assert "treedyn_generated_fd_batch" in src
    # the leaf's pivot is its own inertia about its axis, a constant checked when traced; the
    # root's depends on the leaf's angle: one guard
    assert counts["guards"] == 1
    # sin and cos of the second joint's angle, once each (common subexpressions); the first
    # turns the whole chain about the vertical, which changes nothing: its angle never enters
    assert counts["sines_cosines"] == 2
    assert "q[0]" not in src
    assert "0x1p+0 *" not in src and "* 0x0p+0" not in src  # no product by 1 or 0 is left
