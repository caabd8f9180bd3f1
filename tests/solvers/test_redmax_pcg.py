"""redmax-pcg (baxter2019 §3): the projected block Jacobi preconditioner (Alg. 4), PCG against
redmax-direct on every scene, one iteration on the rigid-tower bridge, parallel loop-closure
solves, sublinear growth of the iterations."""

import numpy as np
import pytest
from conftest import assert_below, assert_same_solution, outputs_for_thread_counts, rounding_bound, solution_bound
from support.redmax import redmax_models, step_bound, with_extras

import treedyn as td
from treedyn.scenes import chain, random_tree


@pytest.fixture(params=redmax_models(), ids=lambda p: p[0])
def rmodel(request):
    return request.param[1]


def test_preconditioner_is_the_exact_inverse_without_coupling_springs(rng):
    # springs to the world only: K_m and D_m are block diagonal, so P = M̃_r (eq. (3.1))
    m = random_tree(12, 5)
    for name in m.joint_names:
        m.set_joint_spring(name, stiffness=3.0, damping=0.5)
    for i in (3, 7, 11):
        m.add_spring(
            "world",
            rng.standard_normal(3),
            i,
            rng.standard_normal(3) * 0.1,
            stiffness=200.0,
            damping=2.0,
            rest_length=0.3,
        )
        m.set_body_damping(i, 0.7)
    m.add_point_force(5, (0.1, 0.2, 0.0), (1.0, -3.0, 2.0))
    pcg = td.make_solver("redmax-pcg", m, h=1e-2)
    direct = td.make_solver("redmax-direct", m, h=1e-2)
    q = td.random_configuration(m, rng)
    X = rng.standard_normal((m.nv, 3))
    lhs = direct.terms(td.State(q, np.zeros(m.nv)))["lhs"]  # M̃_r at q
    assert_same_solution(lhs, pcg._impl.precondition(q, 1e-2, X), direct.inverse_inertia(q, X), what="P X = M̃⁻¹X")


def test_preconditioner_is_only_an_approximation_with_coupling_springs(rng):
    m = with_extras(random_tree(10, 2), rng, n_springs=6)
    pcg = td.make_solver("redmax-pcg", m, h=1e-2)
    direct = td.make_solver("redmax-direct", m, h=1e-2)
    q = td.random_configuration(m, rng)
    X = rng.standard_normal((m.nv, 2))
    P = pcg._impl.precondition(q, 1e-2, X)
    Y = direct.inverse_inertia(q, X)
    lhs = direct.terms(td.State(q, np.zeros(m.nv)))["lhs"]
    assert np.all(np.abs(P - Y).max(axis=0) > 10 * solution_bound(lhs, Y))  # not rounding: a different operator
    # but it is symmetric positive definite, as PCG needs: Pm's columns are solves with the same
    # block-diagonal matrix B = Pm⁻¹, so Pm and Pmᵀ agree within its solution bound
    Pm = pcg._impl.precondition(q, 1e-2, np.eye(m.nv))
    assert_same_solution(np.linalg.inv(Pm), Pm, Pm.T, what="P = Pᵀ")
    assert np.linalg.eigvalsh(0.5 * (Pm + Pm.T)).min() > 0


def test_pcg_agrees_with_direct(rmodel, rng):
    pcg = td.make_solver("redmax-pcg", rmodel, h=1e-2, tol=1e-12)
    direct = td.make_solver("redmax-direct", rmodel, h=1e-2)
    a = td.State(td.random_configuration(rmodel, rng), rng.standard_normal(rmodel.nv))
    b = a.copy()
    for _ in range(5):
        st = pcg.step(a)
        direct.step(b)
        assert st["unconverged"] == 0
    # each of the 5 steps solves M̃ v⁺ = rhs, PCG to relative residual 1e-12 and LDLᵀ to rounding; an
    # implicit Euler step does not amplify the error of the previous one (|v| decays): ≤ 5 × one solve
    lhs = direct.terms(a)["lhs"]
    assert_below(a.v - b.v, 5 * solution_bound(lhs, b.v, tol=1e-12), "PCG v = direct v")
    R = rng.standard_normal((rmodel.nv, 2))
    assert_same_solution(
        lhs, pcg.inverse_inertia(a.q, R), direct.inverse_inertia(a.q, R), tol=1e-12, what="PCG M̃⁻¹R = direct"
    )


@pytest.mark.parametrize(
    "spec",
    ["bridge-rigid:6", "bridge:5,3", "bridge:5,3,car=car", "umbrella:2", "tree:3", "tree:3,springs=square", "chain:6"],
)
def test_pcg_agrees_with_direct_on_the_scenes(spec):
    scene = td.scenes.scene_from_spec(spec)
    tol = 1e-13
    pcg = td.make_solver("redmax-pcg", scene.model, h=scene.h, tol=tol)
    direct = td.make_solver("redmax-direct", scene.model, h=scene.h)
    a, b = scene.state.copy(), scene.state.copy()
    bound_v = bound_q = 0.0
    for _ in range(20):
        # each step solves the (reduced) KKT system of eq. (2.42), PCG to relative residual tol and
        # LDLᵀ to rounding: v⁺ within its solution_bound; a stable implicit step does not amplify the
        # previous steps' differences, so they add up; q ⊕ h v⁺ carries h times them, plus rounding
        bound_v += step_bound(direct.terms(b), b, scene.h, tol=tol)[1]
        bound_q += scene.h * bound_v + rounding_bound(1) * (1 + np.abs(b.q).max())
        sa, sb = pcg.step(a), direct.step(b)
        assert sa["unconverged"] == 0
    assert_below(a.v - b.v, bound_v, f"{spec}: PCG v = direct v", size=np.abs(b.v).max())
    assert_below(a.q - b.q, bound_q, f"{spec}: PCG q = direct q")
    assert sa["constraint_rows"] == sb["constraint_rows"]


def test_rigid_tower_bridge_converges_in_one_iteration_per_solve():
    # every cable ends on a fixed tower: K_m is block diagonal and P is exact (thesis §4.1)
    scene = td.scenes.bridge_rigid(12)
    pcg = td.make_solver("redmax-pcg", scene.model, h=scene.h, tol=1e-10)
    state = scene.state.copy()
    for _ in range(30):
        st = pcg.step(state)
        assert st["max_iterations"] == 1  # the deck sags: no solve is already converged at its warm start
        assert st["iterations"] <= st["solves"]


def test_flexible_bridge_needs_more_than_one_iteration():
    scene = td.scenes.bridge(6, 4)
    pcg = td.make_solver("redmax-pcg", scene.model, h=scene.h)
    st = pcg.step(scene.state.copy())
    assert st["max_iterations"] > 1


def test_iterations_grow_sublinearly_with_size():
    # loosely: quadrupling the flexible bridge less than quadruples the iterations per solve
    its = []
    for n in (6, 24):
        scene = td.scenes.bridge(n, n)
        pcg = td.make_solver("redmax-pcg", scene.model, h=scene.h)
        state = scene.state.copy()
        total = solves = 0
        for _ in range(10):
            st = pcg.step(state)
            total, solves = total + st["iterations"], solves + st["solves"]
        its.append(total / solves)
    assert its[1] < 4 * its[0]


def test_parallel_loop_solves_give_the_same_bits():
    scene = td.scenes.umbrella(2)

    def run():
        pcg = td.make_solver("redmax-pcg", scene.model, h=scene.h)
        state = scene.state.copy()
        for _ in range(5):
            pcg.step(state)
        return np.concatenate([state.q, state.v])

    outs = outputs_for_thread_counts(run)
    for o in outs[1:]:
        assert np.array_equal(o, outs[0])


def test_pcg_options_are_checked():
    m = random_tree(4, 1)
    with pytest.raises(ValueError, match="tol"):
        td.make_solver("redmax-pcg", m, tol=0.0)
    with pytest.raises(ValueError, match="max_iter"):
        td.make_solver("redmax-pcg", m, max_iter=0)


def test_iteration_cap_is_reported_not_hidden(rng):
    m = with_extras(random_tree(16, 4), rng, n_springs=10)
    pcg = td.make_solver("redmax-pcg", m, h=1e-2, tol=1e-14, max_iter=1)
    st = pcg.step(td.State(td.random_configuration(m, rng), rng.standard_normal(m.nv)))
    assert st["unconverged"] >= 1 and st["max_iterations"] == 1


@pytest.mark.parametrize("name", ["redmax-direct", "redmax-pcg"])
def test_redmax_solvers_pass_the_conformance_checks(name):
    from treedyn.solvers.registry import get_solver_class
    from treedyn.testing import check_solver

    # forward dynamics of the bare tree agrees with aba on random models, shapes, bad input
    assert check_solver(get_solver_class(name), rtol=None) == 4


@pytest.mark.parametrize("name", ["redmax-direct", "redmax-pcg"])
def test_a_system_the_solver_cannot_solve_is_a_value_error(name):
    # found by the fuzz properties: v = 1e300 overflows the Coriolis terms; PCG then broke down with a
    # RuntimeError. Whatever the solver meets, the user gets a finite answer or a ValueError.
    s = td.make_solver(name, chain(1))
    try:
        out = s.forward_dynamics(np.zeros(1), np.array([1e300]), np.zeros(1))
    except ValueError as e:
        assert str(e)
    else:
        assert np.all(np.isfinite(out))


@pytest.mark.parametrize(
    "options, error",
    [
        ({"max_iter": float("inf")}, ValueError),
        ({"max_iter": 2.5}, ValueError),
        ({"max_iter": 0}, ValueError),
        ({"max_iter": True}, ValueError),
        ({"max_iter": "10"}, TypeError),
        ({"tol": float("nan")}, ValueError),
        ({"tol": -1e-8}, ValueError),
    ],
)
def test_bad_options_are_named(options, error):
    # max_iter = inf used to escape as an OverflowError from int() (found by the fuzz tests)
    with pytest.raises(error, match=next(iter(options))):
        td.make_solver("redmax-pcg", td.scenes.chain(3), **options)
