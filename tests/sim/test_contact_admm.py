"""The C++ contact step (contact_solver="admm": cpp/include/treedyn/contact/{delassus,admm,step}.hpp).

Cross-checks: the tree Delassus operator against the dense G = J M⁻¹ Jᵀ formed from the contact
Jacobians and the mass matrix (and its regularised solves against a dense inverse); the impulses
against the conditions they must meet (the friction cone, Signorini's complementarity, Coulomb's
maximum dissipation) with the dense G; against the dense ProxQP reference where the two contact
models coincide (a contact whose friction does not couple with its normal); the walking centipede
against the reference; the batch against single worlds; a solve that cannot converge is reported.
"""

import threading
import warnings

import numpy as np
import pytest
from conftest import assert_below, rounding_bound

import treedyn as td
from treedyn.scenes import centipede
from treedyn.scenes.random_tree import random_tree
from treedyn.sim.collision import collide
from treedyn.sim.contact import ContactSimulator, friction_basis
from treedyn.sim.result import SimulationWarning

R_BALL = 0.1


def balls_on_the_ground(rng, n, joints=("revolute", "prismatic", "spherical", "universal")):
    """A random tree on a floating base, a ball on each body at a random point, the ground; the base
    lowered so that the lowest ball is 5 mm deep; random velocities."""
    model = random_tree(n, rng, floating_base=True, joints=joints)
    for b in range(1, n + 1):
        model.add_geom(
            b,
            td.Sphere(R_BALL),
            placement=td.Transform(translation=rng.uniform(-0.2, 0.2, 3)),
            friction=float(rng.uniform(0.2, 1.2)),
        )
    model.add_geom(None, td.Plane(), friction=0.1)
    q = td.random_configuration(model, rng)
    q[3:7] = [0, 0, 0, 1]

    def lowest(q):
        R, p = td._core.forward_kinematics(model.core, q)
        return min((R[g.body] @ np.asarray(g.placement.translation) + p[g.body])[2] for g in model.geoms[:-1])

    # the base's translation moves every body rigidly: along its placement's world z
    up = np.array([lowest(q + np.r_[np.eye(3)[k], np.zeros(model.nq - 3)]) - lowest(q) for k in range(3)])
    q[:3] -= up * (lowest(q) - R_BALL + 0.005) / (up @ up)
    return model, q, 0.5 * rng.standard_normal(model.nv)


def dense_rows(model, q, c=None):
    """J (nv × 3P) of the contacts c (default: collide at q; their n, t₁, t₂, contact-major), and c."""
    c = collide(model, q) if c is None else c
    t1, t2 = friction_basis(c.normals)
    J = td._core.contact_jacobian(model.core, q, c.bodies, c.points, np.stack([c.normals, t1, t2], axis=1))
    return J, c


@pytest.mark.parametrize("dense", [False, True], ids=["tree", "formed"])
@pytest.mark.parametrize("seed", range(6))
def test_the_delassus_operator_is_J_Minv_Jt(seed, dense):
    """Both backends: the tree's products and Woodbury solves, and G formed as Yᵀ D⁻¹ Y from ABA's
    backward pass (delassus_dense.hpp), against J M⁻¹ Jᵀ from the Jacobians and the mass matrix."""
    rng = np.random.default_rng(seed)
    model, q, v = balls_on_the_ground(rng, int(rng.integers(2, 8)))
    sim = ContactSimulator(model, 1e-3, contact_solver="admm")
    sim.step(td.State(q.copy(), v.copy()))
    J, c = dense_rows(model, q)
    assert len(c) > 0
    G_dense = J.T @ np.linalg.solve(td.mass_matrix(model, q), J)
    rho = 0.3 * np.abs(G_dense).max()
    G, S, d = sim.engine().delassus(rho, 0, dense)
    scale = np.abs(G_dense).max()
    bound = 1e3 * rounding_bound(model.nv) * scale  # O(N) passes against a dense solve of M (cond ≲ 1e3 here)
    assert_below(G - G_dense, bound, "G against J M⁻¹ Jᵀ", size=scale)
    # both weigh the rows by G's diagonal relative to its largest (the tree's from Ω, without the
    # coupling of a two-body contact's bodies): within [1e-3, 1], a contact's three rows one weight
    assert np.all((d >= 1e-3) & (d <= 1)) and np.all(np.ptp(d[: 3 * len(c)].reshape(-1, 3), axis=1) == 0)
    if dense or np.all(c.bodies[:, 0] == 0):
        diag = np.diag(G_dense).copy()
        diag[: 3 * len(c)] = np.repeat(diag[: 3 * len(c)].reshape(-1, 3).mean(axis=1), 3)
        np.testing.assert_allclose(d, np.maximum(diag / diag.max(), 1e-3), rtol=1e-9)
    S_dense = np.linalg.inv(G_dense + rho * np.diag(d))
    size = 1 / (rho * d.min())
    assert_below(S - S_dense, 1e3 * rounding_bound(model.nv) * size, "(G + ρD)⁻¹", size=size)


def test_the_formed_operator_takes_limits_and_bilateral_rows():
    """A random tree on the ground with its joints on their lower limits and a coupling: contacts,
    limits and a bilateral row in one problem, the formed G and the tree's agree on every row kind."""
    rng = np.random.default_rng(3)
    model, q, v = balls_on_the_ground(rng, 5, joints=("revolute",))
    for b in range(2, 6):  # body 1: the floating base
        name = f"body{b}"
        model.set_joint_limits(name, q[model.q_index(name)], q[model.q_index(name)] + 1.0)
    model.add_coupling(3, 2, polycoef=(0.0, 0.5))
    sim = ContactSimulator(model, 1e-3, contact_solver="admm", delassus="tree")
    sim.step(td.State(q.copy(), v.copy()))
    problem = sim.engine().problem()
    assert problem["P"] > 0 and problem["L"] > 0 and problem["B"] == 1
    G_tree = sim.engine().delassus(1.0, 0, False)[0]
    G_formed = sim.engine().delassus(1.0, 0, True)[0]
    scale = np.abs(G_tree).max()
    bound = 1e3 * rounding_bound(model.nv) * scale
    assert_below(G_formed - G_tree, bound, "formed G against the tree's", size=scale)


@pytest.mark.parametrize("delassus", ["tree", "dense"])
def test_the_operators_give_one_trajectory(delassus):
    """The backends are two ways to one problem: the centipede's trajectory is the same to the
    solver's tolerance over 200 steps ("auto" picks between them per step)."""
    scene = centipede(4)
    out = {}
    for d in ("auto", delassus):
        sim = ContactSimulator(scene.model, 1e-3, contact_solver="admm", delassus=d, qp_tolerance=1e-10)
        state = scene.initial_state()
        for _ in range(200):
            sim.step(state, scene.tau(state.t, state.q, state.v))
        out[d] = state.q
    # 1e-10 velocity tolerance over 200 steps of 1e-3 s, amplified by the gait's contact changes
    assert_below(out[delassus] - out["auto"], 1e-7, f"{delassus} against auto", size=1.0)


def free_velocity(model, q, v, tau, h):
    """v* = v + h q̈ with a free joint's linear part in the step-start frame (+ h ω × v)."""
    a = td.make_solver("aba", model).forward_dynamics(q, v, tau)
    vs = v + h * a
    vs[:3] += h * np.cross(v[3:6], v[:3])  # the base is a free joint (random_tree's floating base)
    return vs


@pytest.mark.parametrize("edges", [4, 6, 0], ids=["pyramid4", "pyramid6", "cone"])
@pytest.mark.parametrize("seed", range(12))
def test_the_impulses_meet_signorini_and_coulomb(seed, edges):
    """σ = G λ + J v* − b: λ in the pyramid (k = 4: admm.hpp's closed form; 6: its general
    projection) or the exact cone (k = 0), σ_n ≥ 0 and λ_n σ_n = 0, friction of maximum dissipation
    (−λ_t·σ_t = μ λ_n h(−σ_t), h the support function of the k-gon, or |·| for the cone), all to the
    solver's tolerance."""
    rng = np.random.default_rng(100 + seed)
    model, q, v = balls_on_the_ground(rng, int(rng.integers(2, 8)))
    h, tol = 1e-3, 1e-8
    sim = ContactSimulator(
        model, h, contact_solver="admm", qp_tolerance=tol, max_qp_iterations=20000, friction_edges=edges
    )
    step = sim.step(td.State(q.copy(), v.copy()))
    assert step.converged
    J, c = dense_rows(model, q, step.contacts)
    P = len(c)
    G = J.T @ np.linalg.solve(td.mass_matrix(model, q), J)
    g = J.T @ free_velocity(model, q, v, np.zeros(model.nv), h)
    b = np.zeros(3 * P)
    b[::3] = np.minimum(np.maximum(c.depths - sim.slop, 0) / sim.stabilization, sim.push_out_limit)
    t1, t2 = friction_basis(c.normals)
    lam = np.einsum("pi,pji->pj", step.impulses, np.stack([c.normals, t1, t2], axis=1)).ravel()
    sigma = (G @ lam + g - b).reshape(P, 3)
    lam = lam.reshape(P, 3)
    big = np.abs(lam).max() + 1e-300
    slack = 10 * tol  # velocity units
    k = sim.friction_edges
    for i in range(P):
        mu, (ln, *lt), (sn, *st) = c.friction[i], lam[i], sigma[i]
        # the k-gon turned so that its first vertex opposes the slide of v* (as the step does)
        s1, s2 = g[3 * i + 1], g[3 * i + 2]
        phi0 = np.arctan2(-s2, -s1) if np.hypot(s1, s2) > 1e-12 * (1 + abs(g[3 * i])) else 0.0
        d = np.stack([np.cos(phi0 + 2 * np.pi * np.arange(k) / k), np.sin(phi0 + 2 * np.pi * np.arange(k) / k)], 1)
        faces = np.stack(
            [np.cos(phi0 + (2 * np.arange(k) + 1) * np.pi / k), np.sin(phi0 + (2 * np.arange(k) + 1) * np.pi / k)], 1
        )
        assert ln >= -1e-9 * big
        if k:
            assert (faces @ lt).max() <= mu * np.cos(np.pi / k) * ln + 1e-9 * big, "outside the friction pyramid"
        else:
            assert np.hypot(*lt) <= mu * ln + 1e-9 * big, "outside the friction cone"
        assert sn >= -slack, f"contact {i} penetrates further: σ_n = {sn:.3g}"
        assert abs(ln * sn) <= slack * big, "λ_n σ_n ≠ 0"
        support = (d @ -np.asarray(st)).max() if k else np.hypot(*st)  # h(−σ_t)
        dissipated, most = -np.dot(lt, st), mu * ln * support
        assert dissipated >= most - slack * big, f"contact {i}: friction dissipates {dissipated:.3g} < {most:.3g}"


def test_the_polish_solves_the_problem_to_rounding():
    """The active-set polish (contact/polish.hpp; the formed operator, the 4-edge pyramid) ends most
    of the walking centipede's solves, and where it does, its impulses meet the problem's
    conditions to rounding — checked on the step's own problem (engine.problem) with G formed
    column by column from the tree's products (not the matrix the polish used): z in its
    pyramid, σ = G z + g − b with σ_n ≥ 0 ⊥ z_n, a sticking contact's σ = 0, a sliding one's
    friction at its maximum dissipation."""
    scene = centipede(10)
    sim = ContactSimulator(scene.model, 1e-3, contact_solver="admm", delassus="dense")
    state = scene.initial_state()
    polished = checked = 0
    for k in range(300):
        sim.step(state, scene.tau(state.t, state.q, state.v))
        engine = sim.engine()
        p = engine.problem(0)
        polished += p["polished"]
        if not p["polished"] or k % 10:
            continue
        checked += 1
        G = engine.delassus(p["rho"], 0, False)[0]  # the tree's products: another computation of G
        z, P = p["z"], p["P"]
        sigma = G @ z + p["g"] - p["b"]
        scale = np.abs(G).max() * (np.abs(z).max() + 1e-300) + np.abs(p["g"] - p["b"]).max()
        eps = 1e3 * rounding_bound(len(z)) * scale  # G's products and the elimination's rounding
        for i in range(P):
            (zn, *zt), (sn, *st) = z[3 * i : 3 * i + 3], sigma[3 * i : 3 * i + 3]
            c, s_ = p["turn"][2 * i : 2 * i + 2]
            turn = np.array([[c, s_], [-s_, c]])  # into the pyramid's frame: |a| + |b| ≤ μ n
            a, b = turn @ zt
            sa, sb = turn @ st
            mu = p["mu"][i]
            assert zn >= 0 and abs(a) + abs(b) <= mu * zn * (1 + 1e-9), f"contact {i} outside its pyramid"
            assert sn >= -eps and abs(zn * sn) <= eps * (np.abs(z).max() + 1e-300), f"contact {i}: Signorini"
            if zn > 0 and abs(a) + abs(b) < mu * zn * (1 - 1e-6):  # sticking
                assert_below(np.array([sn, sa, sb]), eps, f"contact {i} sticks: σ", size=1.0)
            elif zn > 0:  # sliding: −λ_t·σ_t = μ λ_n h(−σ_t), h(w) = max(|w_a|, |w_b|) on the diamond
                assert abs(-(a * sa + b * sb) - mu * zn * max(abs(sa), abs(sb))) <= eps * (np.abs(z).max() + 1e-300)
    assert polished > 150 and checked >= 10, (polished, checked)


def test_a_ball_agrees_with_the_dense_reference():
    """A ball on a free joint, its contact under its centre (friction does not couple with the
    normal): the two contact models are one, and the solvers agree on the impulse to their
    tolerances, and so on v⁺ (both step a free joint's linear velocity in the world frame)."""
    model = td.Model(gravity=(0, 0, -9.81))
    b = model.add_body("ball", None, joint=td.Free(), inertia=td.Inertia(1.0, (0, 0, 0), 0.4 * R_BALL**2 * np.eye(3)))
    model.add_geom(b, td.Sphere(R_BALL), friction=0.5)
    model.add_geom(None, td.Plane(), friction=0.5)
    for v0 in ([0.3, 0.1, -0.5, 0, 0, 3.0], [2.0, 0, -0.1, 0, 0, 0], [0.01, 0, -1, 0, 0, 0]):  # the spin: about n
        out = []
        for solver in ("admm", "proxqp"):
            q = td.neutral(model)
            q[2] = R_BALL - 0.0005
            state = td.State(q, np.array(v0, dtype=float))
            step = ContactSimulator(model, 1e-3, contact_solver=solver, qp_tolerance=1e-9, push_out_limit=10).step(
                state
            )
            out.append((step.impulses, state.v.copy()))
        # impulse errors: the tolerance (velocity) times the ball's mass (1 kg), with room for two solvers
        (ia, va), (ip, vp) = out
        assert_below(ia - ip, 1e-7, "impulse admm against proxqp", size=np.abs(ip).max())
        assert_below(va - vp, 1e-7, "v⁺ admm against proxqp", size=np.abs(vp).max())


def test_the_centipede_walks_as_with_the_reference():
    scene = centipede(5)
    x = {}
    for solver in ("admm", "proxqp"):
        sim = ContactSimulator(scene.model, 1e-3, contact_solver=solver)
        state = scene.initial_state()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SimulationWarning)
            sim.run(state, 2.0, tau=scene.tau)
        x[solver] = state.q[0] - scene.initial_state().q[0]
    assert x["proxqp"] > 0.1  # it walks
    assert abs(x["admm"] - x["proxqp"]) <= 0.02 * abs(x["proxqp"])


def test_a_batch_steps_each_world_as_alone():
    scene = centipede(3)
    rng = np.random.default_rng(7)
    B = 5
    s0 = scene.initial_state()
    q = np.tile(s0.q, (B, 1))
    v = np.tile(s0.v, (B, 1)) + 0.05 * rng.standard_normal((B, scene.model.nv))
    tau = np.stack([scene.tau(0.0, s0.q, s0.v)] * B)
    batch = ContactSimulator(scene.model, 1e-3, contact_solver="admm")
    qb, vb = q.copy(), v.copy()
    for _ in range(20):
        out = batch.step_batch(qb, vb, tau, threads=2)
    assert out.n_contacts.shape == (B,) and out.converged.all() and out.residuals.shape == (B, 2)
    for w in range(B):
        alone = ContactSimulator(scene.model, 1e-3, contact_solver="admm")
        state = td.State(q[w].copy(), v[w].copy())
        for _ in range(20):
            alone.step(state, tau[w])
        np.testing.assert_array_equal(qb[w], state.q)
        np.testing.assert_array_equal(vb[w], state.v)


def test_a_batch_with_a_loop_closure_steps_each_world_as_alone():
    """A model with bilateral rows (here a coupling) has Python's share in each world's step: the
    batch takes the worlds one by one, each as alone."""
    model = td.Model(gravity=(0, 0, -9.81))
    a = model.add_body("a", None, joint=td.Revolute((0, 1, 0)), inertia=td.Inertia.box(1.0, [0.1, 0.1, 0.4]))
    b = model.add_body("b", None, joint=td.Revolute((0, 1, 0)), inertia=td.Inertia.box(1.0, [0.1, 0.1, 0.4]))
    model.add_coupling(b, a, polycoef=(0.0, -1.0))
    sim = ContactSimulator(model, 1e-3, contact_solver="admm")
    q, v = np.array([[0.1, -0.1], [0.3, -0.3]]), np.array([[0.0, 0.0], [0.5, -0.5]])
    qb, vb = q.copy(), v.copy()
    sim.step_batch(qb, vb, threads=2)
    for w in range(2):
        state = td.State(q[w].copy(), v[w].copy())
        ContactSimulator(model, 1e-3, contact_solver="admm").step(state)
        np.testing.assert_array_equal(qb[w], state.q)


@pytest.mark.parametrize(
    "q, v, tau, match",
    [
        (np.zeros((2, 3)), None, None, "q must be a float64 array of shape"),
        (None, np.zeros((3, 0)), None, "v must be a float64"),
        (None, None, np.zeros((2, 5)), "tau must have shape"),
        ("nan", None, None, "finite"),
        (None, None, "nan", "tau is not finite"),
    ],
)
def test_a_bad_batch_is_named(q, v, tau, match):
    scene = centipede(1)
    sim = ContactSimulator(scene.model, 1e-3, contact_solver="admm")
    s0 = scene.initial_state()
    q0, v0 = np.tile(s0.q, (2, 1)), np.tile(s0.v, (2, 1))
    if isinstance(q, str):
        q = q0.copy()
        q[1, 0] = np.nan
    if isinstance(tau, str):
        tau = np.full(scene.model.nv, np.nan)
    if v is not None and v.shape[1] == 0:
        v = np.zeros((2, scene.model.nv + 1))
    q = q0.copy() if q is None else q
    v = v0.copy() if v is None else v
    with pytest.raises(ValueError, match=match):
        sim.step_batch(q, v, tau)
    with pytest.raises(ValueError, match="admm"):
        ContactSimulator(scene.model, 1e-3, contact_solver="proxqp").step_batch(q0.copy(), v0.copy())


def test_one_simulator_shared_by_threads():
    """Threads stepping one simulator (its workspace is locked per step; the warm start is shared,
    so each thread's result is within the solver's tolerance of a thread alone)."""
    scene = centipede(2)
    sim = ContactSimulator(scene.model, 1e-3, contact_solver="admm")
    ref = scene.initial_state()
    alone = ContactSimulator(scene.model, 1e-3, contact_solver="admm")
    tau = scene.tau(0.0, ref.q, ref.v)
    for _ in range(30):
        alone.step(ref, tau)
    out, errors = [], []

    def work():
        try:
            s = scene.initial_state()
            for _ in range(30):
                sim.step(s, tau)
            out.append(s)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(out) == 4
    for s in out:
        assert_below(s.v - ref.v, 1e-3, "a thread's v against a thread alone", size=np.abs(ref.v).max() + 1)


def test_the_same_run_repeated_gives_the_same_bits():
    """A step keeps the warm start only where it continues the last one, from the state that one
    ended in (contact/step.hpp); any other starts cold. So a run repeated from its start on the same
    simulator, or two rollouts from one saved state, give the same bits (they differed by ~2e-8:
    the second run was warm-started from the first one's end)."""
    scene = centipede(3)
    sim = ContactSimulator(scene.model, 1e-3, contact_solver="admm")
    ends = []
    for _ in range(2):
        s = scene.initial_state()
        trajectory = sim.run(s, 0.05, tau=scene.tau)
        ends.append(s)
    assert max(trajectory.n_contacts) > 0
    np.testing.assert_array_equal(ends[0].q, ends[1].q)
    np.testing.assert_array_equal(ends[0].v, ends[1].v)
    saved = ends[0].copy()
    branches = []
    for _ in range(2):
        s = saved.copy()
        sim.run(s, saved.t + 0.02, tau=scene.tau)
        branches.append(s)
    np.testing.assert_array_equal(branches[0].q, branches[1].q)
    np.testing.assert_array_equal(branches[0].v, branches[1].v)


def test_a_solve_that_cannot_converge_is_reported():
    scene = centipede(2)
    sim = ContactSimulator(scene.model, 1e-3, contact_solver="admm", max_qp_iterations=1, qp_tolerance=1e-12)
    state = scene.initial_state()
    with pytest.warns(SimulationWarning, match="did not converge"):
        step = sim.step(state, scene.tau(0.0, state.q, state.v))
    assert not step.converged and step.qp_iterations == 1
    assert np.all(np.isfinite(state.q)) and np.all(np.isfinite(state.v))
    # a run says it once, with the count, and keeps which steps did not converge
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        traj = sim.run(state, state.t + 5 * sim.dt, tau=scene.tau)
    said = [w for w in caught if issubclass(w.category, SimulationWarning)]
    assert len(said) == 1 and "5 of 5 contact solves did not converge" in str(said[0].message)
    assert traj.converged.shape == (5,) and not traj.converged.any()


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(dt=0.0), "dt"),
        (dict(dt=-1e-3), "dt"),
        (dict(dt=float("nan")), "dt"),
        (dict(push_out_limit=0.0), "push_out_limit"),
        (dict(contact_solver="lcp"), "contact_solver"),
        (dict(delassus="sparse"), "delassus"),
    ],
)
def test_bad_options_are_named(kwargs, match):
    scene = centipede(1)
    args = dict(dt=1e-3, contact_solver="admm") | kwargs
    with pytest.raises((ValueError, TypeError), match=match):
        ContactSimulator(scene.model, **args)


def test_a_nan_state_is_refused():
    scene = centipede(1)
    sim = ContactSimulator(scene.model, 1e-3, contact_solver="admm")
    state = scene.initial_state()
    state.v[0] = np.nan
    with pytest.raises(ValueError):
        sim.step(state)


def test_a_stack_of_five_boxes_stands_for_10_s():
    """Five 1 kg boxes stacked on the ground, each turned 0.3 rad about z from the one below (so
    their contacts are octagonal patches of box–box collision), at h = 1e-3 for 10 s: no twist,
    no slide, no sinking beyond the slop (a single contact point per pair could resist neither)."""
    half = (0.1, 0.1, 0.05)
    model = td.Model(gravity=(0, 0, -9.81))
    model.add_geom(None, td.Plane(), friction=0.8)
    for i in range(5):
        b = model.add_body(f"box{i}", None, joint=td.Free(), inertia=td.Inertia.box(1.0, [2 * x for x in half]))
        model.add_geom(b, td.Box(half), friction=0.8)
    q = td.neutral(model)
    for i in range(5):
        q[7 * i + 2] = half[2] * (2 * i + 1)
        q[7 * i + 3 : 7 * i + 7] = [0, 0, np.sin(0.15 * i), np.cos(0.15 * i)]
    state = td.State(q.copy(), np.zeros(model.nv))
    traj = ContactSimulator(model, 1e-3, contact_solver="admm").run(state, 10.0, record_every=1000)
    assert traj.success and np.all(traj.n_contacts[-100:] >= 4 + 4 * 8)  # 4 corners + 8 per turned pair
    for i in range(5):
        assert abs(state.q[7 * i + 2] - q[7 * i + 2]) < 1e-3  # height: within a millimetre
        assert np.abs(state.q[7 * i : 7 * i + 2] - q[7 * i : 7 * i + 2]).max() < 1e-3  # no slide
        assert np.abs(state.q[7 * i + 3 : 7 * i + 7] - q[7 * i + 3 : 7 * i + 7]).max() < 1e-4  # no twist
    assert np.abs(state.v).max() < 1e-3


def test_an_overflowing_step_is_named_and_leaves_the_state():
    scene = centipede(1)
    sim = ContactSimulator(scene.model, 1e-3, contact_solver="admm")
    state = scene.initial_state()
    q0 = state.q.copy()
    with pytest.raises(ValueError, match="overflowed"):
        sim.step(state, tau=np.full(scene.model.nv, 1e300))
    assert state.t == 0.0 and np.array_equal(state.q, q0)
    with pytest.raises(ValueError, match="tau"):
        sim.step(state, tau=np.full(scene.model.nv, np.nan))
