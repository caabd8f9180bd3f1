"""drumwright2012's Θ(n²) inverse inertia (cpp/include/treedyn/algorithms/minv/minv.hpp): Alg. 1 and 2
one column at a time (inverse_inertia) and all columns at once (inverse_mass_matrix), against
M from CRBA, against the other methods, across thread counts and instruction sets."""

import os
import subprocess
import sys

import numpy as np
import pytest
from conftest import assert_backward_stable, assert_same_accelerations, assert_same_solution, mounted_chain

import treedyn as td
from treedyn.model import Fixed, Free, Inertia, Model, Revolute, Spherical, Transform, Universal
from treedyn.scenes import chain, random_tree
from treedyn.solvers.builtin import CRBALTLSolver, DrumwrightSolver
from treedyn.testing import check_solver

METHODS = ["drumwright", "crba-ltl", "crba-cholesky"]


def forest():
    """Two roots (a free body and a revolute chain), a fixed joint as a branch point, a universal
    joint and a spherical one: the generic multi-DoF path of Alg. 1, not Alg. 2."""
    rng = np.random.default_rng(5)
    m = Model()
    I = lambda: Inertia(rng.uniform(0.5, 2), rng.uniform(-0.1, 0.1, 3), np.diag(rng.uniform(0.02, 0.05, 3)))
    m.add_body("a", None, Free(), inertia=I())
    m.add_body("a1", "a", Spherical(), Transform(translation=(0.3, 0, 0)), I())
    m.add_body("a2", "a", Universal((1, 0, 0), (0, 1, 0)), Transform(translation=(0, 0.3, 0)), I())
    m.add_body("b", None, Revolute((0, 0, 1)), inertia=I())
    m.add_body("b1", "b", Fixed(), Transform(translation=(0.2, 0, 0)), I())
    for k in range(3):
        m.add_body(f"b1{k}", "b1", Revolute(rng.standard_normal(3)), Transform(translation=(0.1 * k, 0.2, 0)), I())
    m.add_body("c", None, Revolute((1, 0, 0)), inertia=I())
    return m


def test_M_times_inverse_is_identity(model, rng):
    """M·M⁻¹ = 1 to rounding (backward error ≤ c·n·u) on chains, random trees of every joint kind,
    floating bases."""
    solver = td.make_solver("drumwright", model)
    for _ in range(2):
        q = td.random_configuration(model, rng)
        M = td.mass_matrix(model, q)
        I = np.eye(model.nv)
        Minv = solver.inverse_mass_matrix(q)
        assert_backward_stable(M, Minv, I, what="M M⁻¹ = 1")
        assert np.array_equal(Minv, Minv.T)  # mirrored, not recomputed
        assert_backward_stable(M, solver.inverse_inertia(q, I), I, what="M Y = 1")
        R = rng.standard_normal((model.nv, 3))
        assert_backward_stable(M, solver.inverse_inertia(q, R), R, what="M Y = R")
        assert_backward_stable(M, solver.inverse_inertia(q, R[:, 0]), R[:, 0], what="M y = r")


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("distance", [100.0, 1000.0])
@pytest.mark.parametrize("base", ["floating", "mounted"])
@pytest.mark.parametrize("name", ["aba", "crba-ltl", "crba-cholesky", "drumwright"])
def test_backward_stable_far_from_the_origin(name, base, distance, dtype):
    """A 0.8 m chain, floating or mounted, 100 m / 1 km from the world origin: M⁻¹ within rounding
    of M, as near it. drumwright2012 computes in a global frame; about the world origin its
    rounding grew with the squared distance (2e4·n·u at 100 m, 3e6·n·u at 1 km; in float32 Î^A_0
    was no longer positive definite at 100 m), so minv.hpp puts each tree's global origin at its
    root."""
    direction = np.array([0.6, 0.8, 0.0])
    if base == "floating":
        model = chain(8, floating_base=True)
        q = td.random_configuration(model, np.random.default_rng(0))
        q[:3] = distance * direction
    else:
        model = mounted_chain(8, tuple(distance * direction))
        q = td.random_configuration(model, np.random.default_rng(0))
    M, I = td.mass_matrix(model, q), np.eye(model.nv)
    s = td.make_solver(name, model, dtype=dtype)
    what = f"{name}: {base} chain {distance:g} m out, {np.dtype(dtype).name}"
    assert_backward_stable(M, s.inverse_inertia(q, I), I, what=f"M Y = 1, {what}")
    assert_backward_stable(M, s.inverse_mass_matrix(q), I, what=f"M M⁻¹ = 1, {what}")
    if dtype == np.float32:
        return  # the forward bound on q̈, cond(M)·c·n·u, exceeds 1 for the floating chain in float32
    # q̈ with gravity and body-frame external forces (the bias comes from RNEA in link coordinates)
    rng = np.random.default_rng(1)
    v, tau, f_ext = (
        rng.standard_normal(model.nv),
        rng.standard_normal(model.nv),
        rng.standard_normal((model.n_bodies, 6)),
    )
    assert_same_accelerations(
        model,
        q,
        v,
        tau,
        s.forward_dynamics(q, v, tau, f_ext),
        td.make_solver("aba", model).forward_dynamics(q, v, tau, f_ext),
        f_ext,
        what=f"q̈, {what}",
    )


def test_forest_and_fixed_branch_points():
    model = forest()
    rng = np.random.default_rng(0)
    for _ in range(3):
        q = td.random_configuration(model, rng)
        M = td.mass_matrix(model, q)
        for name in METHODS:
            Minv = td.inverse_mass_matrix(model, q, method=name)
            assert_backward_stable(M, Minv, np.eye(model.nv), what=f"{name}: M M⁻¹ = 1")
        # the three roots' blocks (11, 4 and 1 coordinates) do not couple
        Minv = td.inverse_mass_matrix(model, q)
        for a, b in ((slice(0, 11), slice(11, 16)), (slice(11, 15), slice(15, 16))):
            assert np.all(Minv[a, b] == 0) and np.all(Minv[b, a] == 0)


@pytest.mark.parametrize(
    "make",
    [
        lambda: random_tree(40, 11),
        lambda: random_tree(30, 12, floating_base=True),
        lambda: random_tree(40, 13, branching=0.9),
        forest,
    ],
    ids=["tree", "floating", "bushy", "forest"],
)
def test_the_methods_agree(make):
    model = make()
    q = td.random_configuration(model, np.random.default_rng(2))
    M = td.mass_matrix(model, q)
    ref = np.linalg.inv(M)
    R = np.random.default_rng(3).standard_normal((model.nv, 5))
    refR = np.linalg.solve(M, R)
    # two backward-stable solutions of the same systems (LAPACK's LU, Higham Thm 9.4): cond(M)·δ apart
    for name in METHODS + ["aba"]:
        s = td.make_solver(name, model)
        assert_same_solution(M, s.inverse_mass_matrix(q), ref, what=f"{name} M⁻¹")
        assert_same_solution(M, s.inverse_inertia(q, R), refR, what=f"{name} M⁻¹R")
    ltdl = td.make_solver("crba-ltl", model, ltdl=True)
    assert_same_solution(M, ltdl.inverse_mass_matrix(q), ref, what="ltdl M⁻¹")


def test_sparse_and_zero_columns_of_R():
    """Propagation starts at the last non-zero impulse (§5.2); a zero column gives zero."""
    model = random_tree(25, 4)
    q = td.random_configuration(model, np.random.default_rng(1))
    M = td.mass_matrix(model, q)
    R = np.zeros((model.nv, 4))
    R[3, 1] = 2.0
    R[[0, model.nv - 1], 2] = (1.0, -1.0)
    R[5:9, 3] = 1.0
    Y = td.make_solver("drumwright", model).inverse_inertia(q, R)
    assert np.all(Y[:, 0] == 0)
    assert_backward_stable(M, Y, R, what="M Y = R, sparse R")


@pytest.mark.parametrize("cls", [DrumwrightSolver, CRBALTLSolver])
def test_new_solvers_pass_the_conformance_checks(cls):
    assert check_solver(cls, rtol=None) == 4
    assert check_solver(cls, rtol=None, options={"dtype": np.float32}) == 4


def test_ltdl_variant_passes_the_conformance_checks():
    assert check_solver(CRBALTLSolver, rtol=None, options={"ltdl": True}) == 4
    with pytest.raises(TypeError, match="ltdl"):
        td.make_solver("crba-ltl", chain(3), ltdl="yes")


def test_forward_dynamics_with_external_forces_and_batches():
    model = random_tree(15, 21, floating_base=True)
    rng = np.random.default_rng(4)
    Q = np.stack([td.random_configuration(model, rng) for _ in range(5)])
    V, T = rng.standard_normal((5, model.nv)), rng.standard_normal((5, model.nv))
    F = rng.standard_normal((5, model.n_bodies, 6))
    aba = td.make_solver("aba", model)
    for name in ("drumwright", "crba-ltl"):
        s = td.make_solver(name, model)
        assert_same_accelerations(
            model,
            Q[0],
            V[0],
            T[0],
            s.forward_dynamics(Q[0], V[0], T[0], F[0]),
            aba.forward_dynamics(Q[0], V[0], T[0], F[0]),
            F[0],
            what=f"{name} = aba",
        )
        batch, ref = s.forward_dynamics(Q, V, T, F), aba.forward_dynamics(Q, V, T, F)
        for b in range(len(Q)):
            assert_same_accelerations(model, Q[b], V[b], T[b], batch[b], ref[b], F[b], what=f"{name} = aba, batch")


@pytest.mark.parametrize(
    "make",
    [lambda: random_tree(300, 6, branching=0.3), lambda: random_tree(260, 16, floating_base=True), lambda: chain(400)],
    ids=["tree", "floating", "chain"],
)
def test_same_bits_for_any_number_of_threads(make):
    """Columns are split among threads (in chunks taken as threads come free; M⁻¹ uses threads from
    128 columns per thread), each computed by the same operations; the result is right with every
    thread count."""
    model = make()
    assert model.nv >= 256
    q = td.random_configuration(model, np.random.default_rng(0))
    R = np.random.default_rng(1).standard_normal((model.nv, 40))
    M = td.mass_matrix(model, q)
    before = td.get_num_threads()
    out = {}
    try:
        for k in (1, 2, 3):
            td.set_num_threads(k)
            s = td.make_solver("drumwright", model)
            out[k] = (
                s.inverse_mass_matrix(q),
                s.inverse_mass_matrix(q, out=np.empty((model.nv, model.nv))),  # the setup beside the columns
                s.inverse_inertia(q, R),
                td.make_solver("crba-ltl", model).inverse_inertia(q, R),
            )
            # a 400-link chain has cond(M) ~ 1e7, which the backward error does not see
            assert_backward_stable(M, out[k][0], np.eye(model.nv), what=f"M M⁻¹ = 1, {k} threads")
    finally:
        td.set_num_threads(before)
    assert np.array_equal(out[1][0], out[1][1])
    for k in (2, 3):
        for a, b in zip(out[1], out[k]):
            assert np.array_equal(a, b)


@pytest.mark.parametrize("make", [lambda: chain(1000), lambda: random_tree(1000, 0)], ids=["chain", "tree"])
def test_full_inverse_at_1000_has_the_same_bits_on_1_and_2_threads(make):
    """On 2 threads the per-configuration setup (minv_precompute) runs as an item of the first
    column pass, the chunks following its leaves-to-root sweep (mInv_at): the same operations on
    the same data as the serial setup followed by the passes."""
    model = make()
    q = td.random_configuration(model, np.random.default_rng(2))
    s = td.make_solver("drumwright", model)
    before = td.get_num_threads()
    try:
        td.set_num_threads(1)
        one = s.inverse_mass_matrix(q)
        td.set_num_threads(2)
        out = np.empty_like(one)
        for _ in range(3):  # the worker joins at different points of the setup
            assert np.array_equal(s.inverse_mass_matrix(q, out=out), one)
    finally:
        td.set_num_threads(before)
    assert_backward_stable(td.mass_matrix(model, q), one, np.eye(model.nv), what="M M⁻¹ = 1")


def test_a_singular_joint_found_by_the_threaded_setup_raises():
    """The setup throws while the chunks that follow it wait for its joints: they stop, and the
    error reaches the caller (no hang), on any number of threads."""
    m = Model()
    parent = None
    for i in range(300):
        m.add_body(
            f"b{i}",
            parent,
            Revolute((0, 0, 1) if i % 2 else (1, 0, 0)),
            Transform(translation=(0, 0, 0.1)),
            inertia=Inertia(1.0, (0, 0, 0.05), np.diag([1e-2, 1e-2, 1e-2])),
        )
        parent = f"b{i}"
    m.add_body("spin", parent, Revolute((0, 0, 1)), inertia=Inertia(1.0, (0, 0, 0), np.zeros((3, 3))))
    q = np.zeros(m.nq)
    before = td.get_num_threads()
    try:
        for k in (1, 2, 3):
            td.set_num_threads(k)
            s = td.make_solver("drumwright", m)
            for _ in range(3):
                with pytest.raises(td.SingularInertiaError):
                    s.inverse_mass_matrix(q, out=np.empty((m.nv, m.nv)))
    finally:
        td.set_num_threads(before)


def two_chains(n, singular_end=False):
    """A forest of two n-link chains (bodies 1..n and n+1..2n): the setup's leaves-to-root sweep
    is cut at the second root, a helper running the first chain's steps while the leader runs the
    second's (MinvBlocked::sweep_cut). singular_end: the first chain ends in a body with no
    rotational inertia about its axis (a singular joint in the helper's part)."""
    m = Model()
    rod = Inertia(1.0, (0.05, 0, 0), np.diag([1e-3, 2e-3, 3e-3]))
    for c in range(2):
        parent = None
        for i in range(n):
            last = c == 0 and i == n - 1 and singular_end
            inertia = Inertia(1.0, (0, 0, 0), np.zeros((3, 3))) if last else rod
            axis = (1, 0, 0) if last else ((0, 0, 1) if i % 2 else (0, 1, 0))
            name = f"c{c}b{i}"
            m.add_body(name, parent, Revolute(axis), Transform(translation=(0.1 if i else 0.0, 0, 0)), inertia)
            parent = name
    return m


@pytest.mark.parametrize(
    "make",
    [lambda: two_chains(200), lambda: random_tree(600, 3), lambda: random_tree(500, 4, floating_base=True)],
    ids=["two chains", "forest", "floating"],
)
def test_setup_shared_by_threads_gives_the_same_bits(make):
    """On 2 or more threads the setup is shared (MinvSetup): the joint and world parts in blocks
    claimed by whoever comes, the leaves-to-root sweep cut so that a helper runs one part of it;
    the same bits as one thread, call after call (the helper joins at different points)."""
    model = make()
    q = td.random_configuration(model, np.random.default_rng(3))
    s = td.make_solver("drumwright", model)
    before = td.get_num_threads()
    try:
        td.set_num_threads(1)
        one = s.inverse_mass_matrix(q)
        for k in (2, 3):
            td.set_num_threads(k)
            out = np.empty_like(one)
            for _ in range(5):
                assert np.array_equal(s.inverse_mass_matrix(q, out=out), one)
    finally:
        td.set_num_threads(before)
    assert_backward_stable(td.mass_matrix(model, q), one, np.eye(model.nv), what="M M⁻¹ = 1")


def test_a_singular_joint_in_the_helpers_part_of_the_sweep_raises_as_on_one_thread():
    """The singular joint ends the first chain, whose steps a helper runs while the leader runs the
    second chain's: the leader stops waiting for it, and the caller gets the error that one
    thread gives (naming the same joint), never a hang."""
    m = two_chains(200, singular_end=True)
    q = np.zeros(m.nq)
    before = td.get_num_threads()
    messages = set()
    try:
        for k in (1, 2, 3):
            td.set_num_threads(k)
            s = td.make_solver("drumwright", m)
            for _ in range(5):
                with pytest.raises(td.SingularInertiaError) as e:
                    s.inverse_mass_matrix(q, out=np.empty((m.nv, m.nv)))
                messages.add(str(e.value))
    finally:
        td.set_num_threads(before)
    assert len(messages) == 1 and "c0b199" in messages.pop()


def test_the_pools_poll_setting_changes_no_bits():
    """TREEDYN_SPIN_US (read when the pool starts) bounds how long idle workers and a joining
    caller poll before they sleep: 0 sleeps at once, values are clamped to 200 µs, and one that is
    not a number keeps the default. Each setting gives one thread's bits on 2 threads, back to
    back and after pauses that outlast the poll."""
    code = (
        "import time, hashlib, numpy as np, treedyn as td\n"
        "from treedyn.scenes import random_tree\n"
        "m = random_tree(600, 3)\n"
        "q = td.random_configuration(m, np.random.default_rng(0))\n"
        "s = td.make_solver('drumwright', m)\n"
        "td.set_num_threads(1)\n"
        "one = s.inverse_mass_matrix(q)\n"
        "td.set_num_threads(2)\n"
        "out = np.empty_like(one)\n"
        "same = []\n"
        "for pause in (0, 0, 0.002, 0, 0.002):\n"
        "    time.sleep(pause)\n"
        "    same.append(np.array_equal(s.inverse_mass_matrix(q, out=out), one))\n"
        "print(all(same), hashlib.sha256(one.tobytes()).hexdigest())\n"
    )
    lines = set()
    for spin in ("0", "200", "100000", "junk"):
        env = dict(os.environ, TREEDYN_SPIN_US=spin)
        r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
        lines.add(r.stdout.strip())
    assert len(lines) == 1 and lines.pop().startswith("True ")


def test_portable_and_avx2_loops_agree():
    """TREEDYN_MINV_ISA=generic forces the portable column loops; both agree to rounding."""
    code = (
        "import numpy as np, treedyn as td\n"
        "from treedyn.scenes import random_tree\n"
        "m = random_tree(60, 8, floating_base=True)\n"
        "q = td.random_configuration(m, np.random.default_rng(0))\n"
        "np.save('{out}.M.npy', td.mass_matrix(m, q))\n"
        "np.save('{out}', td.inverse_mass_matrix(m, q))\n"
        "print(td.build_info()['minv_kernels'])\n"
    )
    results = {}
    for isa in ("generic", "default"):
        out = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"treedyn-minv-{isa}-{os.getpid()}.npy")
        env = dict(os.environ)
        env.pop("TREEDYN_MINV_ISA", None)
        if isa == "generic":
            env["TREEDYN_MINV_ISA"] = "generic"
        r = subprocess.run(
            [sys.executable, "-c", code.format(out=out)], env=env, capture_output=True, text=True, check=True
        )
        results[isa] = (r.stdout.strip(), np.load(out), np.load(out + ".M.npy"))
        os.remove(out)
        os.remove(out + ".M.npy")
    assert results["generic"][0] == "generic"
    # the same algorithm, its sums rounded in another order (FMA or not): two backward-stable results
    M = results["default"][2]
    assert np.array_equal(M, results["generic"][2])
    assert_same_solution(M, results["default"][1], results["generic"][1], what="portable = AVX2 M⁻¹")


def test_float32():
    model = random_tree(30, 9)
    q = td.random_configuration(model, np.random.default_rng(0))
    M = td.mass_matrix(model, q)
    for name in ("drumwright", "crba-ltl"):
        Minv = td.inverse_mass_matrix(model, q, method=name, dtype=np.float32)
        # backward error in float32: δ = 64·n·6e-8, whatever cond(M)
        assert Minv.dtype == np.float32
        assert_backward_stable(M, Minv, np.eye(model.nv), what=f"{name} float32 M⁻¹")


def test_singular_models_raise():
    m = Model()
    m.add_body("a", None, Revolute((0, 0, 1)), inertia=Inertia(1.0, (0, 0, 0), np.diag([1e-2, 1e-2, 1e-2])))
    m.add_body(
        "b",
        "a",
        Revolute((0, 0, 1)),
        Transform(translation=(0, 0, 0.1)),
        inertia=Inertia(1.0, (0, 0, 0), np.zeros((3, 3))),
    )  # spins about its own axis: no inertia
    q = np.zeros(2)
    for name in ("drumwright", "crba-ltl"):
        s = td.make_solver(name, m)
        with pytest.raises(td.SingularInertiaError):
            s.inverse_mass_matrix(q)
        with pytest.raises(td.SingularInertiaError):
            s.inverse_inertia(q, np.eye(2))
        with pytest.raises(td.SingularInertiaError):
            s.forward_dynamics(q, q, q)


def test_bad_input_is_refused():
    model = random_tree(6, 2, floating_base=True)
    q = td.random_configuration(model, np.random.default_rng(0))
    for name in ("drumwright", "crba-ltl"):
        s = td.make_solver(name, model)
        with pytest.raises(ValueError, match="q must have shape"):
            s.inverse_mass_matrix(q[:-1])
        with pytest.raises(ValueError, match="q must have shape"):
            s.inverse_mass_matrix(q[None, :])
        bad = q.copy()
        bad[0] = np.nan
        with pytest.raises(ValueError, match="NaN"):
            s.inverse_mass_matrix(bad)
        bad = q.copy()
        bad[3:7] *= 2  # the free joint's quaternion
        with pytest.raises(ValueError, match="quaternion"):
            s.inverse_mass_matrix(bad)
        with pytest.raises(TypeError):
            s.inverse_mass_matrix(q.astype(complex))
        with pytest.raises(ValueError, match="R must have shape"):
            s.inverse_inertia(q, np.eye(model.nv + 1))
        R = np.eye(model.nv)
        R[1, 1] = np.inf
        with pytest.raises(ValueError, match="R contains NaN or inf"):
            s.inverse_inertia(q, R)
        with pytest.raises(TypeError):
            s.inverse_inertia(q, np.eye(model.nv).astype(complex))


def test_overflow_is_reported_not_returned():
    """Inertias at the bottom of float32's range: a ValueError (singular or overflowed), never inf."""
    for scale in (1e-40, 2.8e-39, 3e-39):
        m = Model()
        m.add_body("a", None, Revolute((0, 0, 1)), inertia=Inertia(scale, (0, 0, 0), scale * np.eye(3)))
        m.add_body(
            "b",
            "a",
            Revolute((0, 1, 0)),
            Transform(translation=(1, 0, 0)),
            inertia=Inertia(scale, (0.1, 0, 0), scale * np.eye(3)),
        )
        for name in ("drumwright", "crba-ltl"):
            try:
                Minv = td.inverse_mass_matrix(m, np.zeros(2), method=name, dtype=np.float32)
            except ValueError:
                continue
            assert np.all(np.isfinite(Minv))
