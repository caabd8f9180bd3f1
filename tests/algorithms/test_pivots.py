"""The singularity test every solver shares (cpp/include/treedyn/algorithms/pivots.hpp): a pivot
within 8 ε of its scale (the magnitudes it was computed from: its rounding error's bound) is singular
to rounding and raises SingularInertiaError naming a joint, in every solver, for the same models; a
model whose pivots carry digits, however ill-conditioned, is accepted by every one and they agree to
the rounding its conditioning allows."""

import warnings

import numpy as np
import pytest

import treedyn as td
from treedyn.scenes import random_tree

#: the solvers that factor M or its articulated inertias (cfa-oee: 1-DoF chains, below)
FACTORING = ["aba", "aba-modified", "drumwright", "crba-cholesky", "crba-ltl", "jsiia"]


def _ball_pair(model, parent, mass):
    """A ball joint (body of ``mass``, inertia ``mass``·1) carrying a 1 kg ball-jointed body 1 m
    away: with mass 0, a rotation about the line through the two joint centres moves no inertia."""
    tag = str(len(model.body_names))
    model.add_body(
        "light" + tag,
        parent,
        td.Spherical(),
        placement=td.Transform(np.eye(3), [0.1, 0.0, -0.5]),
        inertia=td.Inertia(mass, np.zeros(3), mass * np.eye(3)),
    )
    model.add_body(
        "heavy" + tag,
        "light" + tag,
        td.Spherical(),
        placement=td.Transform(np.eye(3), [0.0, 0.0, -1.0]),
        inertia=td.Inertia(1.0, np.array([0.0, 0.0, -0.5]), 0.1 * np.eye(3)),
    )
    return model


def _hinged_pair(mass):
    model = td.Model()
    model.add_body("a", None, td.Revolute(), inertia=td.Inertia(1.0, np.zeros(3), np.eye(3)))
    return _ball_pair(model, "a", mass)


def _random_pair(mass, seed):
    model = random_tree(10, seed, floating_base=True, branching=0.0)  # (jsiia, cfa-oee: chains)
    return _ball_pair(model, model.body_names[-1], mass)  # (depth-first: under the last body)


def _calls(solver, model, rng):
    q = td.random_configuration(model, rng)
    v, tau = rng.normal(size=model.nv), rng.normal(size=model.nv)
    yield lambda: solver.forward_dynamics(q, v, tau)
    yield lambda: solver.inverse_mass_matrix(q)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("build", [lambda m: _hinged_pair(m), lambda m: _random_pair(m, 4)], ids=["hinged", "random"])
def test_a_massless_ball_joint_carrying_a_ball_joint_is_singular_in_every_solver(build, dtype):
    model = build(0.0)
    rng = np.random.default_rng(0)
    for name in FACTORING:
        solver = td.make_solver(name, model, dtype=dtype)
        for call in _calls(solver, model, rng):
            with pytest.raises(td.SingularInertiaError, match=r"joint of body '\w+'"):
                call()


@pytest.mark.parametrize("mass", [1e-20, 1e-17])
def test_a_pivot_below_its_scale_is_singular_where_it_was_computed_by_cancellation(mass):
    """Not exactly massless: the light link's pivot is mass-sized, below the rounding of its scale
    (~1 kg m², 8 ε = 1.8e-15 of it). The solvers that reach it by cancellation refuse it; the modified ABA does not cancel
    there (the rotation about the line through both joints is in the child's null space, which its
    eq. (11) removes exactly) and returns the accelerations, which satisfy M q̈ = τ − c to rounding."""
    model = _hinged_pair(mass)
    q, v, tau = np.r_[0.3, 1, 0, 0, 0, 1, 0, 0, 0], np.zeros(7), np.ones(7)
    for name in FACTORING:
        if name != "aba-modified":
            with pytest.raises(td.SingularInertiaError):
                td.make_solver(name, model).forward_dynamics(q, v, tau)
    qdd = td.make_solver("aba-modified", model).forward_dynamics(q, v, tau)
    M, c = td.mass_matrix(model, q), td.bias_forces(model, q, v)
    residual = np.abs(M @ qdd - (tau - c)).max()
    assert np.all(np.isfinite(qdd)) and residual <= 100 * np.finfo(float).eps * np.abs(M).max() * np.abs(qdd).max()


@pytest.mark.parametrize("dtype,mass", [(np.float64, 1e-6), (np.float64, 1e-12), (np.float32, 1e-2)])
def test_a_light_but_not_singular_link_is_accepted_by_every_solver_and_they_agree(dtype, mass):
    """Pivots ~mass of the scale, above its rounding (1e-12: 4 500 ε; a pivot's digits are lost to
    the conditioning, not refused): every solver accepts and they agree within the rounding the
    conditioning allows (ε/mass, with a margin of 100)."""
    model = _random_pair(mass, 5)
    rng = np.random.default_rng(1)
    q = td.random_configuration(model, rng)
    v, tau = rng.normal(size=model.nv), rng.normal(size=model.nv)
    ref = td.make_solver("crba-cholesky", model).forward_dynamics(q, v, tau)  # (double)
    eps = np.finfo(dtype).eps
    for name in FACTORING:
        qdd = td.make_solver(name, model, dtype=dtype).forward_dynamics(
            q.astype(dtype), v.astype(dtype), tau.astype(dtype)
        )
        assert np.all(np.isfinite(qdd))
        assert np.linalg.norm(qdd - ref) <= 100 * eps / mass * np.linalg.norm(ref), name


def test_cfa_refuses_a_massless_link_of_a_chain():
    """cfa-oee (1-DoF chains) needs every body's inertia inverse: a massless link is refused by name,
    as the factoring solvers refuse the coaxial hinge it sits between."""
    model = td.Model()
    model.add_body("a", None, td.Revolute(), inertia=td.Inertia(0.0, np.zeros(3), np.zeros((3, 3))))
    model.add_body("b", "a", td.Revolute(), inertia=td.Inertia(1.0, np.array([0.5, 0, 0]), 0.1 * np.eye(3)))
    for name in ["cfa-oee", *FACTORING]:
        with pytest.raises(td.SingularInertiaError, match=r"body '\w+'"):
            td.make_solver(name, model).forward_dynamics(np.zeros(2), np.zeros(2), np.ones(2))


def _gimbal():
    """Two massless hinges (x, then y) carrying a body hinged about z, all at one point: singular only
    where the third axis turns onto the first (q_y = ±90°, gimbal lock), regular at q = 0."""
    model = td.Model()
    none = td.Inertia(0.0, np.zeros(3), np.zeros((3, 3)))
    model.add_body("outer", None, td.Revolute([1, 0, 0]), inertia=none)
    model.add_body("inner", "outer", td.Revolute([0, 1, 0]), inertia=none)
    model.add_body(
        "rotor", "inner", td.Revolute([0, 0, 1]), inertia=td.Inertia(1.0, np.array([0.2, 0.1, 0.3]), 0.1 * np.eye(3))
    )
    return model


def test_the_specialised_kernel_refuses_what_the_generic_one_refuses():
    """The generated code's guards are the generic kernel's comparisons (codegen/traced.hpp): traced
    at q = 0, where the gimbal is regular, it raises at gimbal lock as the generic kernel does."""
    model = _gimbal()
    generic = td.make_solver("aba", model)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (compiled: no CodegenWarning)
        try:
            special = td.make_solver("aba", model, specialise=True)
        except Warning as w:
            pytest.skip(f"no compiled kernel here: {w}")
    regular = (np.array([0.3, 0.2, 0.1]), np.array([0.5, -0.2, 0.1]), np.array([1.0, -1.0, 0.5]))
    np.testing.assert_allclose(special.forward_dynamics(*regular), generic.forward_dynamics(*regular), rtol=1e-12)
    locked = (np.array([0.3, np.pi / 2, 0.1]), np.zeros(3), np.ones(3))
    for solver in (generic, special, *(td.make_solver(n, model) for n in FACTORING)):
        with pytest.raises(td.SingularInertiaError):
            solver.forward_dynamics(*locked)


def _straight_chain(n):
    """n unit-mass links 0.1 m apart along z on hinges alternating about x and z, straight (q = 0): well
    posed, but its z hinges' pivots (the links' axial moments, 1e-4 each) are ~1e-11 of the x hinges'
    bending moments (n³), which the coarse scale (the traces of I^A's blocks) puts into every pivot."""
    model = td.Model(gravity=(0, 0, -9.81))
    parent = None
    for i in range(n):
        parent = model.add_body(
            f"b{i}",
            parent,
            td.Revolute((1, 0, 0) if i % 2 == 0 else (0, 0, 1)),
            placement=td.Transform(translation=(0, 0, 0.1 if i else 0.0)),
            inertia=td.Inertia(1.0, (0, 0, 0.05), np.diag([1e-3, 1e-3, 1e-4])),
        )
    return model


@pytest.mark.parametrize("name", ["aba", "aba-modified"])
def test_a_long_straight_chain_is_accepted_and_solved(name):
    """Well posed, and refused from 4 343 links (aba) and 2 000 (aba-modified) while the rule asked a
    pivot for a third of its digits against scales that carry the chain's n³ bending; at the rounding
    rule both accept 10 000 links. q̈ solves the dynamics: RNEA(q, 0, q̈) = τ to 1e-8 of τ (a pivot lost
    to rounding would leave an O(1) residual)."""
    n = 10_000
    model = _straight_chain(n)
    tau = np.random.default_rng(0).normal(size=n)
    qdd = td.make_solver(name, model).forward_dynamics(np.zeros(n), np.zeros(n), tau)
    residual = td.rnea(model, np.zeros(n), np.zeros(n), qdd) - tau
    assert np.all(np.isfinite(qdd)) and np.abs(residual).max() <= 1e-8 * np.abs(tau).max()


def test_a_tiny_but_exact_leaf_moment_is_well_posed_where_it_is_computed_without_cancellation():
    """A leaf hinged about its own axis of symmetry with I_zz = 1e-17 (cond M ≈ 1e14): its pivot is
    I_zz itself, exact, in every solver that works in the bodies' frames; they accept it and agree
    (q̈_leaf = (τ − c)/I_zz: ~1e17). drumwright2012's kernel forms it in the global frame, as
    ŝᵀ Î ŝ, where the body's m r² (~1, a metre from the origin) cancels down to it: there it is below
    that rounding and refused, as the rule asks of a pivot computed from cancelled terms."""
    model = td.Model(gravity=(0, 0, -9.81))
    model.add_body("arm", None, td.Revolute((1, 0, 0)), inertia=td.Inertia(1.0, (0, 0, 0.5), 0.1 * np.eye(3)))
    model.add_body(
        "leaf",
        "arm",
        td.Revolute((0, 0, 1)),
        placement=td.Transform(translation=(0, 0, 1)),
        inertia=td.Inertia(1.0, (0, 0, 0), np.diag([1e-3, 1e-3, 1e-17])),
    )
    q, v, tau = np.array([0.3, 0.2]), np.zeros(2), np.ones(2)
    ref = td.make_solver("aba", model).forward_dynamics(q, v, tau)
    M, c = td.mass_matrix(model, q), td.bias_forces(model, q, v)
    assert ref[1] == pytest.approx((tau - c)[1] / 1e-17 - M[1, 0] * ref[0] / 1e-17, rel=1e-12)
    for name in FACTORING:
        solver = td.make_solver(name, model)
        if name == "drumwright":
            with pytest.raises(td.SingularInertiaError, match="leaf"):
                solver.forward_dynamics(q, v, tau)
        else:
            np.testing.assert_allclose(solver.forward_dynamics(q, v, tau), ref, rtol=1e-9, err_msg=name)
