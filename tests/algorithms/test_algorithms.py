"""RNEA, CRBA, ABA and CRBA + Cholesky (cpp/include/treedyn/algorithms) cross-checked against each
other on random trees with every joint kind, and against closed-form pendulums."""

import numpy as np
import pytest
from conftest import (
    assert_backward_stable,
    assert_same_accelerations,
    assert_within_rounding,
    dynamics_scale,
    mounted_chain,
    random_state,
    rel_err,
)

import treedyn as td
from treedyn.scenes import chain


def test_aba_equals_crba_cholesky_equals_rnea_inverse(model, rng):
    for _ in range(3):
        q, v, tau = random_state(model, rng)
        a_aba = td.make_solver("aba", model).forward_dynamics(q, v, tau)
        a_chol = td.make_solver("crba-cholesky", model).forward_dynamics(q, v, tau)
        assert_same_accelerations(model, q, v, tau, a_chol, a_aba, what="CRBA+Cholesky = ABA")
        # RNEA inverts forward dynamics: τ = RNEA(q, v, FD(q, v, τ)); the residual of ABA's q̈ (its
        # backward error) is within rounding of the terms' magnitudes
        assert_within_rounding(
            td.rnea(model, q, v, a_aba), tau, dynamics_scale(model, q, v, tau, a_aba), model.nv, what="RNEA(ABA(τ)) = τ"
        )


def test_mass_matrix_is_rnea_columns_and_symmetric_positive_definite(model, rng):
    q, v, _ = random_state(model, rng)
    M = td.mass_matrix(model, q)
    zero = np.zeros(model.nv)
    c = td.rnea(model, q, zero, zero)
    cols = np.array([td.rnea(model, q, zero, e) - c for e in np.eye(model.nv)]).T
    # each column is RNEA(e_k) − RNEA(0): the gravity terms |c| cancel in it
    assert_within_rounding(M, cols, np.abs(M) + np.abs(c)[:, None], model.nv, what="CRBA = RNEA columns")
    np.testing.assert_array_equal(M, M.T)
    assert np.linalg.eigvalsh(M).min() > 0


@pytest.mark.parametrize("distance", [1e3, 1e6])
def test_mass_matrix_does_not_depend_on_where_the_tree_is(distance):
    """td.mass_matrix carries each column's force up in the root body's axes with the joints' own
    offsets as lever arms (crba.hpp, crba_root_axes), so M of a chain mounted 1 km or 1000 km out is
    M at the origin to rounding; lever arms taken as differences of world positions would lose
    ~|p|·u/0.1 m (1e7 u at 1000 km)."""
    near = mounted_chain(8, (0.0, 0.0, 0.0))
    q = td.random_configuration(near, np.random.default_rng(3))
    M0 = td.mass_matrix(near, q)
    far = td.mass_matrix(mounted_chain(8, tuple(distance * np.array([0.6, 0.8, 0.0]))), q)
    assert_within_rounding(far, M0, M0, len(q), what=f"M at {distance:g} m = M at the origin")
    # and it is RBDA's CRBA (link coordinates, the solvers' own: crba-ltl's LᵀL factor) to rounding
    L, _ = td._core._ltl_factor(near._cpp, q, False)
    assert_within_rounding(L.T @ L, M0, np.abs(L.T) @ np.abs(L), len(q), what="td.mass_matrix = LᵀL of CRBA's M")


def test_rnea_splits_into_mass_matrix_and_bias(model, rng):
    q, v, a = random_state(model, rng)
    tau = td.rnea(model, q, v, a)
    assert_within_rounding(
        tau,
        td.mass_matrix(model, q) @ a + td.bias_forces(model, q, v),
        dynamics_scale(model, q, v, tau, a),
        model.nv,
        what="RNEA = M a + b",
    )


def test_external_forces_agree_between_rnea_and_both_forward_dynamics(model, rng):
    q, v, tau = random_state(model, rng)
    f_ext = rng.standard_normal((model.n_bodies, 6))
    for name in ("aba", "crba-cholesky"):
        a = td.make_solver(name, model).forward_dynamics(q, v, tau, f_ext)
        assert_within_rounding(
            td.rnea(model, q, v, a, f_ext),
            tau,
            dynamics_scale(model, q, v, tau, a, f_ext),
            model.nv,
            what=f"RNEA({name}(τ, f)) = τ",
        )
    # the world's row is ignored
    f2 = f_ext.copy()
    f2[0] = 1e3
    assert rel_err(td.bias_forces(model, q, v, f2), td.bias_forces(model, q, v, f_ext)) == 0


@pytest.mark.parametrize("name", ["aba", "crba-cholesky"])
def test_inverse_inertia_times_mass_matrix_is_identity(model, rng, name):
    q, _, _ = random_state(model, rng)
    Minv = td.make_solver(name, model).inverse_inertia(q, np.eye(model.nv))
    assert_backward_stable(td.mass_matrix(model, q), Minv, np.eye(model.nv), what=f"M {name}⁻¹ = 1")
    r = rng.standard_normal(model.nv)
    assert td.make_solver(name, model).inverse_inertia(q, r).shape == (model.nv,)


def test_float32_kernels_agree_with_float64(rng):
    model = td.scenes.random_tree(12, 5)
    q, v, tau = random_state(model, rng)
    a64 = td.make_solver("aba", model).forward_dynamics(q, v, tau)
    for name in ("aba", "crba-cholesky"):
        a32 = td.make_solver(name, model, dtype=np.float32).forward_dynamics(q, v, tau)
        assert a32.dtype == np.float32
        # float32: δ = 64·14·6e-8 = 5e-5 backward, times cond(M) (~1e2 here) forward
        assert_same_accelerations(model, q, v, tau, a32, a64, dtype=np.float32, what=f"{name} float32")


# ---------------------------------------------------------------- closed forms
def _pendulum(m=2.0, l=0.7, I_c=0.01, g=9.81):
    model = td.Model(gravity=(0, 0, -g))
    # hinge about y; the rod hangs along -z in the body frame at q = 0
    model.add_body("rod", None, td.Revolute((0, 1, 0)), inertia=td.Inertia(m, (0, 0, -l), np.diag([I_c, I_c, 1e-4])))
    return model


def test_single_pendulum_closed_form():
    m, l, Ic, g = 2.0, 0.7, 0.01, 9.81
    model = _pendulum(m, l, Ic, g)
    for q, v, tau in [(0.3, 0.0, 0.0), (1.2, 2.0, 0.5), (-2.5, -1.0, -3.0)]:
        # (I_c + m l²) q̈ = τ − m g l sin q   (angle about +y, bob at −z)
        expected = (tau - m * g * l * np.sin(q)) / (Ic + m * l * l)
        for name in ("aba", "crba-cholesky"):
            a = td.make_solver(name, model).forward_dynamics([q], [v], [tau])
            assert_same_accelerations(model, [q], [v], [tau], a, [expected], what=f"{name} pendulum")
        assert_within_rounding(td.mass_matrix(model, [q])[0, 0], Ic + m * l * l, Ic + m * l * l, 1, what="pendulum M")


def test_double_pendulum_closed_form():
    # two point masses on massless rods in the x-z plane, hinges about y (textbook equations)
    m1, m2, l1, l2, g = 1.3, 0.8, 0.9, 0.6, 9.81
    model = td.Model(gravity=(0, 0, -g))
    model.add_body("a", None, td.Revolute((0, 1, 0)), inertia=td.Inertia.point(m1, (0, 0, -l1)))
    model.add_body(
        "b", "a", td.Revolute((0, 1, 0)), td.Transform(translation=(0, 0, -l1)), td.Inertia.point(m2, (0, 0, -l2))
    )
    rng = np.random.default_rng(0)
    for _ in range(5):
        q, v, tau = rng.uniform(-3, 3, 2), rng.standard_normal(2), rng.standard_normal(2)
        t1, t2 = q[0], q[0] + q[1]  # absolute angles from the downward vertical
        d = t1 - t2
        M = np.array(
            [
                [
                    (m1 + m2) * l1**2 + m2 * l2**2 + 2 * m2 * l1 * l2 * np.cos(q[1]),
                    m2 * l2**2 + m2 * l1 * l2 * np.cos(q[1]),
                ],
                [m2 * l2**2 + m2 * l1 * l2 * np.cos(q[1]), m2 * l2**2],
            ]
        )
        w1, w2 = v[0], v[0] + v[1]
        # generalized forces from gravity and velocity products (Lagrange), in relative coordinates
        c1 = (
            -m2 * l1 * l2 * np.sin(q[1]) * (2 * v[0] * v[1] + v[1] ** 2)
            + (m1 + m2) * g * l1 * np.sin(t1)
            + m2 * g * l2 * np.sin(t2)
        )
        c2 = m2 * l1 * l2 * np.sin(q[1]) * v[0] ** 2 + m2 * g * l2 * np.sin(t2)
        expected = np.linalg.solve(M, tau - np.array([c1, c2]))
        # the closed form's terms are the magnitudes both sides round
        c_terms = np.array(
            [
                abs(m2 * l1 * l2 * np.sin(q[1]) * (2 * v[0] * v[1] + v[1] ** 2))
                + abs((m1 + m2) * g * l1 * np.sin(t1))
                + abs(m2 * g * l2 * np.sin(t2)),
                abs(m2 * l1 * l2 * np.sin(q[1]) * v[0] ** 2) + abs(m2 * g * l2 * np.sin(t2)),
            ]
        )
        assert_within_rounding(td.mass_matrix(model, q), M, (m1 + m2) * (l1 + l2) ** 2, 2, what="M closed form")
        assert_within_rounding(td.bias_forces(model, q, v), [c1, c2], c_terms, 2, what="b closed form")
        assert_same_accelerations(
            model, q, v, tau, td.make_solver("aba", model).forward_dynamics(q, v, tau), expected, what="ABA closed form"
        )
        del d, w1, w2


def _energy(model, q, v):
    """kinetic ½ vᵀMv plus potential −Σ m gᵀ p_com from M and a numerical potential via RNEA."""
    return 0.5 * v @ td.mass_matrix(model, q) @ v


def test_passive_chain_conserves_energy_with_a_small_step():
    # no gravity: kinetic energy ½ vᵀ M v is the whole energy of a passive chain
    model = chain(6, gravity=(0, 0, 0))
    solver = td.make_solver("aba", model)
    rng = np.random.default_rng(3)
    q, v = td.random_configuration(model, rng), rng.standard_normal(model.nv)
    zero = np.zeros(model.nv)
    E0 = _energy(model, q, v)
    h = 1e-3

    def f(q, v):
        return v, solver.forward_dynamics(q, v, zero)

    for _ in range(1000):  # RK4
        k1 = f(q, v)
        k2 = f(td.integrate(model, q, k1[0], h / 2), v + h / 2 * k1[1])
        k3 = f(td.integrate(model, q, k2[0], h / 2), v + h / 2 * k2[1])
        k4 = f(td.integrate(model, q, k3[0], h), v + h * k3[1])
        q = td.integrate(model, q, (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0]) / 6, h)
        v = v + h / 6 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1])
    # RK4 over T = 1 s: energy error O(T h⁴) = 1e-12 times the fifth derivatives (|v| ~ 1, a few rad/s:
    # ≲ 1e3), plus rounding, 1000 steps × 64·n·u ≈ 4e-11 relative: 1e-8 leaves ≥ 10× both
    assert abs(_energy(model, q, v) - E0) < 1e-8 * max(1.0, E0)
    assert np.abs(v).max() > 0.1  # it did move


def test_chain_with_gravity_conserves_total_energy():
    # a free-swinging pendulum chain under gravity: kinetic + potential energy is constant;
    # potential from the work of gravity, integrated along the path with the bias forces
    model = chain(4)
    solver = td.make_solver("aba", model)
    rng = np.random.default_rng(4)
    q, v = td.random_configuration(model, rng), np.zeros(model.nv)
    zero = np.zeros(model.nv)
    h, work = 5e-4, 0.0
    E0 = _energy(model, q, v)
    for _ in range(2000):  # semi-implicit step in RK4 form for accuracy
        g = td.bias_forces(model, q, zero)  # gravity's generalized force is −g
        a = solver.forward_dynamics(q, v, zero)
        k = [(v, a)]
        q2 = td.integrate(model, q, v, h / 2)
        v2 = v + h / 2 * a
        a2 = solver.forward_dynamics(q2, v2, zero)
        g2 = td.bias_forces(model, q2, zero)
        q3 = td.integrate(model, q, v2, h / 2)
        v3 = v + h / 2 * a2
        a3 = solver.forward_dynamics(q3, v3, zero)
        g3 = td.bias_forces(model, q3, zero)
        q4 = td.integrate(model, q, v3, h)
        v4 = v + h * a3
        a4 = solver.forward_dynamics(q4, v4, zero)
        g4 = td.bias_forces(model, q4, zero)
        # power of gravity −gᵀv integrated with Simpson's rule over the step
        work += h / 6 * (-(g @ v) - 2 * (g2 @ v2) - 2 * (g3 @ v3) - (g4 @ v4))
        q = td.integrate(model, q, (v + 2 * v2 + 2 * v3 + v4) / 6, h)
        v = v + h / 6 * (a + 2 * a2 + 2 * a3 + a4)
        del k
    # kinetic energy gained equals the work done by gravity
    # RK4 (h = 5e-4, T = 1 s) for the motion and Simpson's rule for the work: both O(T h⁴) ≈ 6e-14 times
    # the fifth derivatives of a swinging chain (g/l ~ 1e2 s⁻²: (1e2)^(5/2) = 1e5) ≈ 1e-8; rounding
    # 2000 steps × 64·n·u ≈ 6e-11: 1e-6 leaves 100×
    assert abs((_energy(model, q, v) - E0) - work) < 1e-6 * max(1.0, abs(work))
    assert abs(work) > 1e-2


def test_aba_memory_is_linear_a_10000_joint_chain_fits_in_tens_of_mb():
    # peak resident memory of a fresh interpreter, before and after building and running the
    # solver (Pinocchio's Data for a 400-joint chain is about 4 GB on these machines)
    import subprocess
    import sys

    code = (
        "import resource, numpy as np, treedyn as td\n"
        "base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "m = td.scenes.chain(10000)\n"
        "s = td.make_solver('aba', m)\n"
        "a = s.forward_dynamics(td.neutral(m), np.zeros(m.nv), np.ones(m.nv))\n"
        "assert np.all(np.isfinite(a))\n"
        "print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) / 1024)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    growth_mb = float(r.stdout.strip())
    assert growth_mb < 60, f"ABA on a 10000-joint chain grew the process by {growth_mb:.1f} MB"


def test_results_that_overflow_are_errors_naming_the_function():
    # issue 12: mass_matrix(m, [0.3, 1e300]) returned NaN. A prismatic coordinate of 1e300 puts a mass at
    # 1e300 m on a turning arm: m r² overflows; and at ω = 1e10 its centripetal force m ω² r does.
    m = td.Model()
    m.add_body("a", None, td.Revolute((0, 0, 1)))
    m.add_body("b", "a", td.Prismatic((1, 0, 0)), placement=td.Transform(translation=(0.1, 0, 0)))
    q = np.array([0.3, 1e300])
    with pytest.raises(ValueError, match="^mass_matrix overflowed to inf/NaN"):
        td.mass_matrix(m, q)
    with pytest.raises(ValueError, match="^rnea overflowed to inf/NaN"):
        td.rnea(m, q, [1e10, 0.0], [0.0, 0.0])
    with pytest.raises(ValueError, match="^bias_forces overflowed to inf/NaN"):
        td.bias_forces(m, q, [1e10, 0.0])
    # a large but representable state is fine: M = [[I + m (0.1 + r)², 0], [0, m]] stays finite at r = 1e100
    M = td.mass_matrix(m, [0.3, 1e100])
    assert np.all(np.isfinite(M)) and M[0, 0] == pytest.approx(1e200, rel=1e-12)


# ------------------------------------------------------------ batches (C++, over the thread pool)
@pytest.mark.parametrize("threads", [1, 2])
def test_batched_rnea_and_mass_matrix_equal_the_single_calls_bit_for_bit(threads):
    m = td.scenes.random_tree(12, 7, floating_base=True)
    rng = np.random.default_rng(1)
    B = 37
    Q = td.random_configuration(m, rng, size=B)
    V, A = rng.standard_normal((B, m.nv)), rng.standard_normal((B, m.nv))
    F = rng.standard_normal((B, m.n_bodies, 6))
    before = td.get_num_threads()
    try:
        td.set_num_threads(threads)
        T, TF, M = td.rnea(m, Q, V, A), td.rnea(m, Q, V, A, F), td.mass_matrix(m, Q)
    finally:
        td.set_num_threads(before)
    assert T.shape == (B, m.nv) and TF.shape == (B, m.nv) and M.shape == (B, m.nv, m.nv)
    for b in range(B):
        np.testing.assert_array_equal(T[b], td.rnea(m, Q[b], V[b], A[b]))
        np.testing.assert_array_equal(TF[b], td.rnea(m, Q[b], V[b], A[b], F[b]))
        np.testing.assert_array_equal(M[b], td.mass_matrix(m, Q[b]))
    assert td.rnea(m, Q[:0], V[:0], A[:0]).shape == (0, m.nv)
    assert td.mass_matrix(m, Q[:0]).shape == (0, m.nv, m.nv)


def test_batched_rnea_and_mass_matrix_refuse_mismatched_batches():
    m = td.scenes.random_tree(5, 2, floating_base=True)
    Q, V = td.random_configuration(m, 0, size=3), np.zeros((3, m.nv))
    with pytest.raises(ValueError, match=r"q, v, a must all be single vectors or batches of the same size"):
        td.rnea(m, Q, V, np.zeros((4, m.nv)))
    with pytest.raises(ValueError, match=r"q, v, a must all be single vectors or batches of the same size"):
        td.rnea(m, Q, V, np.zeros(m.nv))
    with pytest.raises(ValueError, match=r"f_ext must have shape \(B, n_bodies, 6\) with B = 3"):
        td.rnea(m, Q, V, V, np.zeros((m.n_bodies, 6)))
    with pytest.raises(ValueError, match=r"f_ext must have shape \(n_bodies, 6\)"):
        td.rnea(m, Q[0], V[0], V[0], np.zeros((3, m.n_bodies, 6)))
    with pytest.raises(ValueError, match=r"q must have shape \(nq,\) = \(\d+,\) or \(B, \d+\)"):
        td.mass_matrix(m, np.zeros((3, m.nq + 1)))
    bad = Q.copy()
    bad[2, 3:7] = (0, 0, 0, 3)  # the free joint's quaternion of item 2
    with pytest.raises(ValueError, match="the quaternion of joint .* has norm 3"):
        td.mass_matrix(m, bad)
    nan = V.copy()
    nan[1, 0] = np.nan
    with pytest.raises(ValueError, match="v contains NaN"):
        td.rnea(m, Q, nan, V)
