"""The example contact solver plugin (OSQP's ADMM with polishing) against treedyn's reference, ProxQP,
on problems captured from real scenes, and on a box sliding to rest. Runs from the repository root,
``pytest examples/contact_plugin/tests``, with the plugin pip-installed or not.

Bounds, a first-order estimate. Both solvers meet every row of a QP to ε (velocity rows in m/s; the
cone, κ and z ≥ 0 rows in impulse units) and the dual residual to ε (m/s). Such a point is within about
ε·(‖z‖₁ + Σ|y|) of the optimum, y the multipliers: those of the velocity rows are impulses, of the
order of ‖z‖₁, those of the impulse rows velocities, of the order of the speeds ‖g‖∞ + ‖b‖∞. Hence per
solver ε·(‖z‖₁ + rows·(‖g‖∞ + ‖b‖∞)), rows = 2m + P + 1 (non-penetration, the bounds of c_N and c_L,
the cones, κ), and twice that between two. Measured on 480 captured problems: the first stage within
0.5 % of it, the second (at equal κ) within 2.2 %.
"""

import sys
import warnings
from importlib.metadata import entry_points
from pathlib import Path

import numpy as np
import pytest

import treedyn as td
from treedyn.sim.contact_solvers import CONTACT_SOLVERS, GROUP, ProxQPContactSolver

try:
    from treedyn_example_contact_plugin import OsqpAdmmContactSolver
except ImportError:  # not pip-installed: the package beside this folder
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from treedyn_example_contact_plugin import OsqpAdmmContactSolver

EPS, K, G_ACC, HALF = 1e-9, 4, 9.81, (0.1, 0.1, 0.05)


@pytest.fixture(autouse=True, scope="module")
def one_blas_thread():
    """The problems are small (m ≤ 100): BLAS's threads only cost, the more so on a busy machine."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        yield
        return
    with threadpool_limits(limits=1, user_api="blas"):
        yield


@pytest.fixture
def registered():
    """The plugin under a name of this test's own (whether or not the entry point is installed)."""
    CONTACT_SOLVERS["example-osqp-test"] = OsqpAdmmContactSolver
    yield "example-osqp-test"
    del CONTACT_SOLVERS["example-osqp-test"]


def boxes(n, v0, mu):
    """n boxes of 1 kg stacked on a plane, each turned 0.15 rad about z from the one below; the lowest at v0."""
    model = td.Model(gravity=(0, 0, -G_ACC))
    model.add_geom(None, td.Plane(), friction=mu)
    for i in range(n):
        b = model.add_body(f"box{i}", None, joint=td.Free(), inertia=td.Inertia.box(1.0, [2 * x for x in HALF]))
        model.add_geom(b, td.Box(HALF), friction=mu)
    q, v = td.neutral(model), np.zeros(model.nv)
    for i in range(n):
        q[7 * i + 2] = HALF[2] * (2 * i + 1)
        q[7 * i + 3 : 7 * i + 7] = [0, 0, np.sin(0.075 * i), np.cos(0.075 * i)]
    v[:3] = v0
    return model, td.State(q, v), None


def centipede(limits):
    """td.scenes.centipede walking by its gait; with limits, its knees held to ±0.3 rad and pushed by 5 N·m
    (limit rows in the problems, their targets in the objective)."""
    scene = td.scenes.centipede(2 if limits else 3)
    model, tau = scene.model, scene.tau
    if limits:
        knees = [n for n in model.joint_names if isinstance(model.joints[model.body_index(n)], td.Revolute)]
        for k in knees:
            model.set_joint_limits(k, -0.3, 0.3)
        vi = [model.v_index(k) for k in knees]

        def tau(t, q, v):
            out = np.array(scene.tau(t, q, v), dtype=float)
            out[vi] += 5.0 * np.array([1.0, -1.0, 1.0, -1.0])
            return out

    return model, scene.initial_state(), tau


SCENES = {
    "box sliding": lambda: boxes(1, (1.0, 0.3, 0.0), 0.5),
    "stack of 3 boxes": lambda: boxes(3, (0.3, 0.0, 0.0), 0.8),
    "centipede(3)": lambda: centipede(False),
    "centipede(2), knee limits": lambda: centipede(True),
}


def captured(scene, T=0.1, keep=10):
    """The contact problems (G, g, b, mu, P, nL) of the scene's first T seconds under ProxQP, `keep` of them."""
    problems = []

    class Recording(ProxQPContactSolver):
        def solve(self, G, g, b, mu, P, nL=0):
            problems.append((G.copy(), g.copy(), b.copy(), mu.copy(), P, nL))
            return super().solve(G, g, b, mu, P, nL)

    model, state, tau = SCENES[scene]()
    CONTACT_SOLVERS["recording"] = Recording
    try:
        td.ContactSimulator(model, 1e-3, friction_edges=K, contact_solver="recording").run(state, T, tau=tau)
    finally:
        del CONTACT_SOLVERS["recording"]
    assert len(problems) >= keep
    return [problems[i] for i in np.linspace(0, len(problems) - 1, keep).astype(int)]


def objective(z, G, g, b, P, nL):
    w = np.zeros(len(g))
    w[P : P + nL] = b[P:]  # the limit rows' targets (sim/contact.py)
    return 0.5 * z @ G @ z + z @ (g - w)


def second_stage_optimum(G, g, b, mu, P, nL, kappa):
    """The second QP with the cap Σ c_N ≤ kappa, by proxsuite's dense ProxQP to 1e-12: its objective."""
    from proxsuite import proxqp

    m, n = P + nL, len(g)
    w, rows = np.zeros(n), np.arange(P)
    w[P:m] = b[P:]
    cone = np.zeros((P, n))
    cone[rows, rows] = mu
    for j in range(K):
        cone[rows, m + rows * K + j] = -1.0
    C = np.vstack([G[:m], cone, np.r_[np.ones(P), np.zeros(n - P)]])
    lower, upper = np.r_[b - g[:m], np.zeros(P), -np.inf], np.r_[np.full(m + P, np.inf), kappa]
    res = proxqp.dense.solve(
        G, g - w, None, None, C, lower, upper, l_box=np.zeros(n), u_box=np.full(n, np.inf), eps_abs=1e-12, eps_rel=0.0
    )
    assert res.info.status == proxqp.QPSolverOutput.PROXQP_SOLVED
    return objective(np.maximum(res.x, 0.0), G, g, b, P, nL)


@pytest.mark.parametrize("scene", list(SCENES))
def test_same_problem_as_proxqp(scene):
    """On each captured problem: the first stage alone (friction_edges=0: no friction, κ then binds
    nothing) gives ProxQPContactSolver's objective to the bound; the full z is feasible — z ≥ 0,
    non-penetration, the cones, Σ c_N ≤ κ from its own first stage with the reference's slack — and its
    objective is the second stage's optimum at that κ to the bound (proxsuite's ProxQP to 1e-12). The
    second stage is compared at the plugin's own κ, not against ProxQPContactSolver's whole solve: its
    optimum moves steeply with κ, which each solver takes from its own first stage — on the centipede
    ProxQP's first-stage Σ c_N is 5.6e-9 N·s off (its ε per row), which moves the optimum by 6e-8."""
    mine, mine1 = OsqpAdmmContactSolver(K, EPS, 5000), OsqpAdmmContactSolver(0, EPS, 5000)
    ref1 = ProxQPContactSolver(0, EPS, 5000)
    for G, g, b, mu, P, nL in captured(scene):
        m = P + nL
        speed, rows = np.abs(g).max() + np.abs(b).max(initial=0.0), 2 * m + P + 1
        with warnings.catch_warnings():
            warnings.simplefilter("error", td.SimulationWarning)  # converged, every one
            stage1 = (G[:m, :m], g[:m], b, mu, P, nL)
            c, it1 = mine1.solve(*stage1)
            z, it = mine.solve(G, g, b, mu, P, nL)
        assert 1 <= it1 and 1 <= it < 2 * 5000
        c_ref, _ = ref1.solve(*stage1)
        bound1 = 2 * EPS * (np.abs(c_ref).sum() + rows * speed)
        assert abs(objective(c, *stage1[:3], P, nL) - objective(c_ref, *stage1[:3], P, nL)) <= bound1
        assert z.shape == (m + P * K,) and np.all(z >= 0)
        # the clipping at 0 of components −ε moves G z by |G| ε: a few ε on the velocity rows
        assert np.all(G[:m] @ z + g[:m] >= b - 10 * EPS)
        assert np.all(z[m:].reshape(P, K).sum(axis=1) <= mu * z[:P] + EPS)
        if P:
            kappa = c[:P].sum() * (1 + 1e-9) + P * EPS
            assert z[:P].sum() <= kappa + EPS
            bound = 2 * EPS * (np.abs(z).sum() + rows * speed)
            assert abs(objective(z, G, g, b, P, nL) - second_stage_optimum(G, g, b, mu, P, nL, kappa)) <= bound


def test_box_slides_to_rest(registered):
    """A 2 kg box on a plane (μ = 0.5) set sliding at v₀ = 0.5 m/s, 30° off x, at h = 1e-3: it stops
    after v₀²/(2μg). Discretely (semi-implicit Euler): the first step falls freely (the box starts
    touching), the second takes out the fall and this step's gravity, c_N = 2 m g h, and the others
    m g h; friction, μ c_N against the slide, takes a = μ g h of speed a step (2a the second), so
    v₁ = v₀, vₙ = v₀ − n a until it stops, at step N + 1 with N = ⌊v₀/a⌋: t = (N + 1) h ∈ (t_stop,
    t_stop + h]. The distance h Σ vₙ = h (N v₀ − a N(N+1)/2 + a) = v₀²/(2μg) − h v₀/2 + h a (1 + f(1−f)/2),
    f = v₀/a − N. (The fall, g h² = 9.8 µm, stays within the slop, 10 µm: no push-out.) Each step's
    velocity is off by at most ε: the distance by ε h N²/2 ≈ 5e-9 m, checked at 1e-8."""
    mu, h, v0, az = 0.5, 1e-3, 0.5, np.radians(30)
    model = td.Model(gravity=(0, 0, -G_ACC))
    body = model.add_body("box", None, joint=td.Free(), inertia=td.Inertia.box(2.0, [2 * x for x in HALF]))
    model.add_geom(body, td.Box(HALF), friction=mu)
    model.add_geom(None, td.Plane(), friction=mu)
    q = td.neutral(model)
    q[2] = HALF[2]
    u = np.array([np.cos(az), np.sin(az), 0.0])
    sim = td.ContactSimulator(model, h, friction_edges=K, contact_solver=registered)
    assert isinstance(sim.contact_solver, OsqpAdmmContactSolver) and sim.qp_tolerance == EPS
    t_stop, d_stop = v0 / (mu * G_ACC), v0**2 / (2 * mu * G_ACC)
    with warnings.catch_warnings():
        warnings.simplefilter("error", td.SimulationWarning)
        traj = sim.run(td.State(q, np.r_[v0 * u, 0, 0, 0]), t_stop + 10 * h)
    a = mu * G_ACC * h
    N = int(v0 // a)
    speed = np.linalg.norm(traj.v[:, :2], axis=1)
    stopped = traj.t[np.argmax(speed < 10 * EPS)]
    assert abs(stopped - (N + 1) * h) < 1e-12 and t_stop < stopped <= t_stop + h
    travelled = (traj.q[-1, :3] - q[:3]) @ u
    assert abs(travelled - h * (N * v0 - a * N * (N + 1) / 2 + a)) <= 1e-8
    assert -h * v0 / 2 + h * a - 1e-8 <= travelled - d_stop <= -h * v0 / 2 + 9 / 8 * h * a + 1e-8
    lateral = traj.q[-1, :2] - q[:2] - travelled * u[:2]
    assert np.linalg.norm(lateral) <= EPS * traj.t[-1] ** 2 / (2 * h)  # the edges turn with the slide
    assert np.all(traj.n_contacts[1:] == 4) and traj.max_penetration.max() < sim.slop
    assert np.all(traj.qp_iterations[1:] > 0)


def test_inputs_and_non_convergence():
    solver = OsqpAdmmContactSolver(K, EPS, 50)
    G, g, b, mu = np.eye(5), np.zeros(5), np.zeros(1), np.array([0.5])
    for name, bad in (("G", (G * np.nan, g, b, mu)), ("g", (G, g + np.inf, b, mu)), ("mu", (G, g, b, mu * np.nan))):
        with pytest.raises(ValueError, match=f"problem's {name} has non-finite"):
            solver.solve(*bad, 1, 0)
    # a normal row that no impulse moves (G = 0) and a target above its velocity: infeasible, never converges;
    # the best iterate comes back, ≥ 0 and finite, with a SimulationWarning
    with pytest.warns(td.SimulationWarning, match="did not converge in 50 ADMM iterations"):
        z, it = solver.solve(np.zeros((5, 5)), g, np.ones(1), mu, 1, 0)
    assert it >= 50 and np.all(np.isfinite(z)) and np.all(z >= 0)


def test_entry_point():
    """Installed (pip install ./examples/contact_plugin), the plugin is found by its entry point's name."""
    if "example-osqp" not in {ep.name for ep in entry_points(group=GROUP)}:
        pytest.skip("treedyn-example-contact-plugin is not installed")
    CONTACT_SOLVERS.refresh()
    assert CONTACT_SOLVERS["example-osqp"].__name__ == "OsqpAdmmContactSolver"
    assert "OSQP" in td.available_contact_solvers()["example-osqp"]
