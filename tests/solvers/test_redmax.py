"""RedMax (baxter2019 §2): the mapping J, J̇, Jᵀ (Alg. 1-3), spring forces and their stiffness
and damping blocks, the implicit step against a dense solve of eq. (2.13), loop closures, and
redmax-direct against aba."""

import numpy as np
import pytest
from conftest import (
    assert_backward_stable,
    assert_below,
    assert_same_accelerations,
    assert_same_solution,
    assert_within_rounding,
    dynamics_scale,
    rounding_bound,
    solution_bound,
)
from support.redmax import (
    dense_step,
    four_bar,
    redmax_models,
    skew,
    so3_exp,
    state_of,
    step_bound,
    step_magnitudes,
    with_extras,
)

import treedyn as td
from treedyn.scenes import chain, random_tree


def se3_exp(delta):
    """body-frame displacement exp([δ]) with δ = [ω; v]: (R, p) of the moved frame in the old one"""
    w, v = delta[:3], delta[3:]
    th = np.linalg.norm(w)
    K = skew(w)
    if th < 1e-9:
        V = np.eye(3) + 0.5 * K
    else:
        V = np.eye(3) + (1 - np.cos(th)) / th**2 * K + (th - np.sin(th)) / th**3 * K @ K
    return so3_exp(w), V @ v


@pytest.fixture(params=redmax_models(), ids=lambda p: p[0])
def rmodel(request):
    return request.param[1]


# ------------------------------------------------------------------ mapping (Alg. 1-3)


def test_traversal_products_equal_filled_jacobian(rmodel, rng):
    sys = rmodel._redmax_system()
    q, qd, x = td.random_configuration(rmodel, rng), rng.standard_normal(rmodel.nv), rng.standard_normal(rmodel.nv)
    J, Jd = sys.fill_J(q, qd)
    Jx, Jdx = sys.J_times(q, qd, x)
    assert J.shape == (6 * (rmodel.n_bodies - 1), rmodel.nv)
    # the traversal and the filled J sum the same products in another order (Higham §3.1)
    n = rmodel.nv
    assert_within_rounding(Jx, J @ x, np.abs(J) @ np.abs(x), n, what="J x")
    assert_within_rounding(Jdx, Jd @ x, np.abs(Jd) @ np.abs(x), n, what="J̇ x")
    y = rng.standard_normal(J.shape[0])
    assert_within_rounding(sys.JT_times(q, y), J.T @ y, np.abs(J.T) @ np.abs(y), n, what="Jᵀ y")


def test_jdot_is_the_time_derivative_of_j(rmodel, rng):
    sys = rmodel._redmax_system()
    q, qd = td.random_configuration(rmodel, rng), rng.standard_normal(rmodel.nv)
    _, Jd = sys.fill_J(q, qd)
    eps = 1e-6
    Jp, _ = sys.fill_J(td.integrate(rmodel, q, qd, eps), qd)
    Jm, _ = sys.fill_J(td.integrate(rmodel, q, qd, -eps), qd)
    # central difference: truncation O(ε²·|J⃛|) ≈ 1e-12, rounding O(u·|J|/ε) ≈ 1e-10 (|J|, |J⃛| ~ 1)
    assert np.abs((Jp - Jm) / (2 * eps) - Jd).max() < 1e-6 * max(1, np.abs(Jd).max())


def test_body_twists_match_aba_kinematics(rng):
    # J q̇ stacks the body twists: the first body's twist is S q̇ of its joint
    m = chain(3)
    sys = m._redmax_system()
    q, qd = td.random_configuration(m, rng), rng.standard_normal(m.nv)
    Jx, _ = sys.J_times(q, qd, qd)
    assert_within_rounding(Jx[:6], [0, 0, qd[0], 0, 0, 0], abs(qd[0]), 1, what="first twist")


# ------------------------------------------------------------------ springs (eq. (2.39)-(2.41))


def spring_potential(s, Ra, pa, Rb, pb):
    l = np.linalg.norm((Rb @ s.point_b + pb) - (Ra @ s.point_a + pa))
    return 0.5 * s.stiffness * (l - s.rest_length) ** 2


def spring_wrenches(s, Ra, pa, Rb, pb):
    """eq. (2.39) written independently: F on a = k (l − L) n, wrench Γᵀ Rᵀ F"""
    xa, xb = Ra @ s.point_a + pa, Rb @ s.point_b + pb
    d = xb - xa
    l = np.linalg.norm(d)
    Fa = s.stiffness * (l - s.rest_length) * d / l
    fa, fb = Ra.T @ Fa, Rb.T @ (-Fa)
    return np.concatenate([np.cross(s.point_a, fa), fa, np.cross(s.point_b, fb), fb])


def moved(R, p, delta):
    dR, dp = se3_exp(delta)
    return R @ dR, p + R @ dp


@pytest.mark.parametrize("stretch", [0.0, 0.5, 2.0])
def test_spring_force_is_minus_gradient_and_stiffness_is_its_jacobian(rng, stretch):
    # rest length L = stretch · l: a zero-length, a stretched and a compressed spring
    m = random_tree(6, 3)
    q = td.random_configuration(m, rng)
    xa, xb = rng.standard_normal(3) * 0.3, rng.standard_normal(3) * 0.3
    R, p = m.body_poses(q)
    Ra, pa, Rb, pb = R[2], p[2], R[5], p[5]
    l = np.linalg.norm((Rb @ xb + pb) - (Ra @ xa + pa))
    s_idx = m.add_spring(2, xa, 5, xb, stiffness=40.0, damping=3.0, rest_length=stretch * l)
    s = m.springs[s_idx]
    terms = m._redmax_system().spring_terms(s_idx, q)

    def V(delta):
        return spring_potential(s, *moved(Ra, pa, delta[:6]), *moved(Rb, pb, delta[6:]))

    def wrench(delta):
        return spring_wrenches(s, *moved(Ra, pa, delta[:6]), *moved(Rb, pb, delta[6:]))

    eps = 1e-5
    E = np.eye(12)
    grad = np.array([(V(eps * E[k]) - V(-eps * E[k])) / (2 * eps) for k in range(12)])
    w = np.concatenate([terms["wa"], terms["wb"]])
    # central differences of V with ε = 1e-5: truncation O(ε²·|V⃛|) ≈ 1e-10·k, rounding O(u·|V|/ε) ≈ 1e-11·k
    # (k = 40, |x| ≲ 1): 1e-7 relative to max(1, |w|) leaves ≥ 10×
    assert np.abs(w + grad).max() < 1e-7 * max(1.0, np.abs(grad).max())
    # the same ½k(l − L)² both ways: a few roundings of k·l² ≲ 40 (u = 1.1e-16)
    assert abs(terms["V"] - V(np.zeros(12))) < 1e-12 * max(1, terms["V"])
    # the force Jacobian (columns by central differences); K is its symmetric part = −Hessian of V,
    # except that a compressed spring's negative stiffness across its line is dropped
    Jf = np.array([(wrench(eps * E[k]) - wrench(-eps * E[k])) / (2 * eps) for k in range(12)]).T
    dropped = np.zeros((12, 12))
    if stretch > 1:
        n = ((Rb @ xb + pb) - (Ra @ xa + pa)) / l
        G = np.hstack([-Ra @ np.hstack([-skew(xa), np.eye(3)]), Rb @ np.hstack([-skew(xb), np.eye(3)])])
        dropped = -G.T @ (s.stiffness * (1 - stretch) * (np.eye(3) - np.outer(n, n))) @ G  # its K part
    K = terms["K"]
    assert_within_rounding(K, K.T, K, 12, what="K = Kᵀ")
    # Jf by central differences (ε = 1e-5): truncation ≈ 1e-10·k, rounding ≈ u·|w|/ε ≈ 1e-11·k
    assert np.abs(K - (0.5 * (Jf + Jf.T) - dropped)).max() < 1e-6 * max(1.0, np.abs(K).max())
    hess = np.array(
        [
            [
                (V(eps * (E[i] + E[j])) - V(eps * (E[i] - E[j])) - V(eps * (-E[i] + E[j])) + V(-eps * (E[i] + E[j])))
                / (4 * eps**2)
                for j in range(12)
            ]
            for i in range(12)
        ]
    )
    # second differences: rounding O(u·|V|/ε²) ≈ 1e-6·k dominates the O(ε²) truncation: 1e-4 relative
    assert np.abs(K + hess + dropped).max() < 1e-4 * max(1.0, np.abs(K).max())
    if stretch > 1:
        assert np.abs(dropped).max() > 1.0  # the clamp did something
    # damping: the force −d l̇ n; D = d u uᵀ with l̇ = uᵀ[φ_a; φ_b]
    phi = rng.standard_normal(12)

    def length(delta):
        (Ra_, pa_), (Rb_, pb_) = moved(Ra, pa, delta[:6]), moved(Rb, pb, delta[6:])
        return np.linalg.norm((Rb_ @ s.point_b + pb_) - (Ra_ @ s.point_a + pa_))

    ldot = (length(eps * phi) - length(-eps * phi)) / (2 * eps)
    D = terms["D"]
    # l̇ by a central difference (ε = 1e-5): ≈ 1e-10 truncation + 1e-11 rounding, relative
    assert abs(phi @ D @ phi - s.damping * ldot**2) < 1e-6 * max(1, s.damping * ldot**2)
    # D = d u uᵀ is positive semi-definite; its computed eigenvalues are within 12·u·‖D‖ of it (Weyl)
    assert np.linalg.eigvalsh(D).min() >= -rounding_bound(12) * np.abs(D).sum(axis=1).max()


# ------------------------------------------------------------------ the step (eq. (2.13)-(2.15), (2.42))


@pytest.mark.parametrize("ordering", ["amd", "leaf-to-root"])
def test_step_equals_dense_solve_of_eq_2_13(rmodel, rng, ordering):
    h = 1e-2
    solver = td.make_solver("redmax-direct", rmodel, h=h, ordering=ordering)
    state = state_of(rmodel, rng)
    terms = solver.terms(state)
    lhs, rhs, _ = dense_step(terms, state, h)
    # the same sums of products in another order: within rounding of their magnitudes
    lhs_terms, rhs_terms = step_magnitudes(terms, state.v, h)
    n = rmodel.nv
    assert_within_rounding(terms["lhs"], lhs, lhs_terms, n, what="lhs")
    assert_within_rounding(terms["rhs"], rhs, rhs_terms, n, what="rhs")
    v, bound = step_bound(terms, state, h)
    q0 = state.q.copy()
    solver.step(state, h)
    # sparse LDLᵀ and LAPACK solve the same system: cond(lhs)·δ apart
    assert_below(state.v - v, bound, "v⁺ = dense solve", size=np.abs(v).max())
    # q ⊕ h v⁺ joint by joint: a few roundings of |q| + h|v|
    assert_within_rounding(
        state.q, td.integrate(rmodel, q0, state.v, h), 1 + np.abs(q0).max() + h * np.abs(v).max(), 1, what="q⁺"
    )
    assert state.t == h  # 0 + h, exactly


def test_lhs_is_symmetric_and_inverse_inertia_solves_it(rmodel, rng):
    solver = td.make_solver("redmax-direct", rmodel, h=5e-3)
    state = state_of(rmodel, rng)
    lhs = solver.terms(state)["lhs"]
    assert_within_rounding(lhs, lhs.T, lhs, rmodel.nv, what="lhs = lhsᵀ")
    R = rng.standard_normal((rmodel.nv, 3))
    assert_backward_stable(lhs, solver.inverse_inertia(state.q, R), R, what="lhs Y = R")


def test_without_springs_and_small_h_it_agrees_with_aba(model, rng):
    a = td.make_solver("aba", model)
    r = td.make_solver("redmax-direct", model, h=1e-9)
    q, v, tau = td.random_configuration(model, rng), rng.standard_normal(model.nv), rng.standard_normal(model.nv)
    assert_same_accelerations(
        model, q, v, tau, r.forward_dynamics(q, v, tau), a.forward_dynamics(q, v, tau), what="redmax-direct = aba"
    )
    R = rng.standard_normal((model.nv, 2))
    # M̃_r = M + h·D_r − h²·K_r with no springs or damping here: M itself (h = 1e-9 changes nothing)
    assert_same_solution(
        td.mass_matrix(model, q), r.inverse_inertia(q, R), a.inverse_inertia(q, R), what="redmax-direct M⁻¹R = aba's"
    )


def test_step_without_extras_is_semi_implicit_euler_of_aba(rng):
    # M_r (q̇⁺ − q̇)/h = τ-free dynamics, with M J̇ q̇ and Coriolis at the old state: q̇⁺ = q̇ + h q̈
    m = random_tree(8, 11)
    a, r = td.make_solver("aba", m), td.make_solver("redmax-direct", m)
    state = state_of(m, rng)
    qdd = a.forward_dynamics(state.q, state.v, np.zeros(m.nv))
    v0, q0, h = state.v.copy(), state.q.copy(), 1e-3
    r.step(state, h)
    # v⁺ − v = h·q̈ from two backward-stable solves (h × their bound), plus the rounding of the sum
    zero = np.zeros(m.nv)
    M = td.mass_matrix(m, q0)
    bound = (
        h * solution_bound(M, qdd, dynamics_scale(m, q0, v0, zero, qdd, M=M))
        + rounding_bound(1) * (np.abs(v0) + h * np.abs(qdd)).max()
    )
    assert_below(state.v - (v0 + h * qdd), bound, "v⁺ = v + h q̈")


def energy(model, solver, state):
    """kinetic + gravity + joint-spring + spring potential"""
    t = solver.terms(state)
    phi = t["J"] @ state.v
    ke = 0.5 * phi @ t["M_m"] @ phi
    R, p = model.body_poses(state.q)
    pe = 0.0
    for i in range(1, model.n_bodies):
        I6 = model._cpp.spatial_inertia(i)
        mass = I6[3, 3]
        com = np.array([I6[2, 4], I6[0, 5], I6[1, 3]]) / mass  # h× in the upper right block
        pe -= mass * model.gravity @ (R[i] @ com + p[i])
    sys = model._redmax_system()
    k_r, q_rest = np.array(sys.k_r), np.array(sys.q_rest)
    pe += 0.5 * np.sum(k_r * (state.q - q_rest) ** 2)  # revolute joints only here
    pe += sum(sys.spring_terms(k, state.q)["V"] for k in range(len(model.springs)))
    return ke + pe


def test_energy_of_undamped_spring_pendulum_does_not_grow():
    # a 4-link pendulum with joint springs and a spring from the tip to the world: no damping
    m = chain(4)
    for name in m.joint_names:
        m.set_joint_spring(name, stiffness=2.0, damping=0.0)
    m.add_spring("world", (0.2, 0.0, -0.1), 4, (0.1, 0.0, 0.0), stiffness=50.0, rest_length=0.05)
    solver = td.make_solver("redmax-direct", m)
    state = td.State(np.array([0.8, 0.3, -0.5, 0.4]), np.zeros(4))
    e0 = energy(m, solver, state)
    es = []
    for _ in range(500):
        solver.step(state, 1e-3)
        es.append(energy(m, solver, state))
    # 1e-6 relative: far above the rounding of the energy's terms (~n·u), far below the dissipation
    # (asserted next); a step that adds energy at O(h) would exceed it within the 500 steps
    assert max(es) <= e0 + 1e-6 * abs(e0)
    assert min(es) > e0 - 0.5 * abs(e0)  # implicit Euler dissipates, but not everything in 0.5 s


# ------------------------------------------------------------------ loop closures


@pytest.mark.parametrize("kind,rows", [("hinge", 5), ("ball", 3), ("universal", 4), ("weld", 6), ("coupling", 4)])
def test_loop_closure_rows_are_the_derivative_of_the_error(kind, rows, rng):
    m = four_bar(kind)
    sys = m._redmax_system()
    assert sys.n_loop_rows == rows
    q, v = rng.standard_normal(m.nv), rng.standard_normal(m.nv)
    G, C = sys.loop_rows(q)
    eps = 1e-6
    dC = (sys.loop_rows(q + eps * v)[1] - sys.loop_rows(q - eps * v)[1]) / (2 * eps)
    # central difference (ε = 1e-6): truncation O(ε²·|C⃛|) ≈ 1e-12, rounding O(u·|C|/ε) ≈ 1e-10 (|C| ≲ 2 m)
    assert np.abs(G @ v - dC).max() < 1e-7


@pytest.mark.parametrize("kind", ["hinge", "ball", "universal", "coupling"])
def test_planar_four_bar_keeps_its_loop_closed(kind):
    m = four_bar(kind)
    solver = td.make_solver("redmax-direct", m)
    state = td.State(np.array([0.3, -0.3, 0.3]), np.zeros(m.nv))  # a parallelogram, tilted
    assert solver.constraint_residual(state.q) < 1e-12  # a closed parallelogram: a few roundings of 2 m
    worst = 0.0
    for _ in range(300):
        st = solver.step(state)
        worst = max(worst, st["position_residual"])
    # planar: the out-of-plane rows vanish and are dropped by rank, never a singular solve
    assert st["constraint_rank"] < st["constraint_rows"] or kind == "ball"
    # Baumgarte-stabilised velocity constraints: the position error made in a step is O(h²·|v|²)
    # (h = 1e-2, |v| ≲ 3 over metre-long links: ≲ 1e-3) and is pulled back at rate 1/h
    assert worst < 1e-3
    assert np.all(np.isfinite(state.q)) and abs(state.q[0] - 0.3) > 1e-2  # it moved


def test_step_with_loops_equals_dense_kkt_solve(rng):
    m = four_bar("hinge")
    m.add_spring("crank", (0.5, 0, 0), "rocker", (0.5, 0, 0), stiffness=30.0, damping=1.0)
    solver = td.make_solver("redmax-direct", m)
    state = td.State(rng.standard_normal(m.nv) * 0.1, rng.standard_normal(m.nv))
    terms = solver.terms(state)
    v, bound = step_bound(terms, state, solver.h)
    solver.step(state)
    assert_below(state.v - v, bound, "v⁺ = KKT solve", size=np.abs(v).max())


# ------------------------------------------------------------------ bad input


def test_bad_input_is_refused_with_names():
    m = chain(3)
    with pytest.raises(ValueError, match="stiffness"):
        m.set_joint_spring("link1", stiffness=-1.0)
    with pytest.raises(ValueError, match="no body"):
        m.add_spring(1, (0, 0, 0), 7, (0, 0, 0), stiffness=1.0)
    with pytest.raises(ValueError, match="NaN"):
        m.add_point_force(1, (0, 0, np.nan), (0, 0, 1))
    with pytest.raises(ValueError, match="positive semi-definite"):
        m.set_body_damping(1, -np.eye(6))
    with pytest.raises(ValueError, match="joint must be"):
        m.add_loop_closure(1, 3, td.Prismatic())
    with pytest.raises(ValueError, match="ordering"):
        td.make_solver("redmax-direct", m, ordering="metis")
    with pytest.raises(TypeError, match="float32"):
        td.make_solver("redmax-direct", m, dtype=np.float32)
    s = td.make_solver("redmax-direct", m)
    with pytest.raises(ValueError, match="h must be positive"):
        s.step(td.State.neutral(m), -1.0)
    with pytest.raises(TypeError, match="State"):
        s.step((np.zeros(3), np.zeros(3)), 0.01)
    with pytest.raises(ValueError, match="q must have shape"):
        s.inverse_inertia(np.zeros(4), np.eye(3))
    with pytest.raises(ValueError, match="NaN"):
        td.State([0, np.nan, 0], np.zeros(3))
    st = td.State.neutral(m)
    st.v = np.full(3, np.inf)
    with pytest.raises(ValueError, match="NaN or inf"):
        s.step(st, 0.01)


def test_step_does_not_touch_the_users_arrays(rng):
    m = with_extras(chain(4), rng)
    s = td.make_solver("redmax-direct", m)
    q, v = td.random_configuration(m, rng), rng.standard_normal(m.nv)
    q0, v0 = q.copy(), v.copy()
    state = td.State(q, v)
    s.step(state)
    assert np.array_equal(q, q0) and np.array_equal(v, v0)


def test_point_force_stiffness_is_its_symmetrised_jacobian(rng):
    # eq. (2.35)-(2.37): a constant world force F at body point x; its wrench turns with the body
    m = chain(2)
    x, F = np.array([0.3, -0.1, 0.2]), np.array([1.0, -4.0, 2.5])
    m.add_point_force(2, x, F)
    solver = td.make_solver("redmax-direct", m)
    state = td.State(rng.standard_normal(2), np.zeros(2))
    K = solver.terms(state)["K_m"][6:, 6:]
    R, p = m.body_poses(state.q)

    def wrench(delta):
        Rd, _ = moved(R[2], p[2], delta)
        f = Rd.T @ F
        return np.concatenate([np.cross(x, f), f])

    eps = 1e-6
    Jf = np.array([(wrench(eps * e) - wrench(-eps * e)) / (2 * eps) for e in np.eye(6)]).T
    # central differences (ε = 1e-6): truncation ≈ 1e-12·|F|, rounding ≈ u·|F|/ε ≈ 1e-10·|F| (|F| ≈ 5)
    assert np.abs(K - 0.5 * (Jf + Jf.T)).max() < 1e-8 * max(1.0, np.abs(K).max())
    # and f_m carries its wrench: the difference with the same chain without the force
    bare = td.make_solver("redmax-direct", chain(2))
    df = solver.terms(state)["f_m"] - bare.terms(state)["f_m"]
    # the same rotation and cross product, and the same gravity wrenches subtracted: rounding of those
    f_bare = np.abs(bare.terms(state)["f_m"])
    assert_within_rounding(
        df[6:], wrench(np.zeros(6)), (1 + np.abs(x).sum()) * np.abs(F).sum() + f_bare[6:], 1, what="point force wrench"
    )
    assert_within_rounding(df[:6], 0, f_bare[:6], 1, what="no force on body 1")
