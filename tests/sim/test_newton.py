"""MuJoCo's primal Newton solver of the soft problem (cpp/include/treedyn/contact/newton.hpp), checked
against the step's other solver, ADMM, which solves the same strictly convex problem in its dual form,
and against MuJoCo's mj_step (whose default solver is this Newton method); and the choice of solver.

Tolerances: both solvers stop at qp_tolerance on problems with R > 0 (a unique minimiser), so their
trajectories agree to the tolerance times the steps' count, far below the millimetres that hard and soft
contacts part by."""

import os
import warnings

import numpy as np
import pytest

import treedyn as td

mujoco = pytest.importorskip("mujoco")


def _public(public_models, package, name):
    path = os.path.join(public_models[package], f"{name}.xml")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", td.io.IgnoredElementWarning)
        return path, td.load_mjcf(path)


@pytest.mark.parametrize("package,name", [("dm_control", "walker"), ("gymnasium", "ant"), ("gymnasium", "hopper")])
def test_newton_and_admm_solve_one_soft_problem(package, name, public_models):
    """The same run, driven, by Newton and by ADMM (the file's integrator: RK4 for the ant and the
    hopper): one trajectory to the solvers' tolerance; Newton in a few iterations a step."""
    _, model = _public(public_models, package, name)
    rng = np.random.default_rng(1)
    U = rng.uniform(-1, 1, (150, model.nu))
    out, iters = {}, {}
    for how in ("newton", "admm"):
        sim = td.ContactSimulator(model, contact_solver=how, qp_tolerance=1e-10)
        state, n = td.State.initial(model), 0
        for u in U:
            n += sim.step(state, ctrl=u).qp_iterations
        out[how], iters[how] = state.q.copy(), n / len(U)
    assert np.abs(out["newton"] - out["admm"]).max() < 1e-6
    assert iters["newton"] < 8


def test_newton_steps_as_mj_step(public_models):
    """The DeepMind Control walker dropped and driven: its root follows mj_step's (Newton, pyramidal
    cones, Euler) to rounding grown by the steps."""
    path, model = _public(public_models, "dm_control", "walker")
    m = mujoco.MjModel.from_xml_path(path)
    d = mujoco.MjData(m)
    sim = td.ContactSimulator(model, contact_solver="newton")
    state = td.State.initial(model)
    gap = 0.0
    for k in range(400):
        u = 0.8 * np.sin(6 * k * m.opt.timestep + np.arange(m.nu))
        d.ctrl[:] = u
        mujoco.mj_step(m, d)
        sim.step(state, ctrl=u)
        gap = max(gap, np.abs(state.q[:3] - d.qpos[:3]).max())
    assert gap < 1e-5, gap


def test_the_default_chooses_newton_where_it_applies():
    """auto: Newton on soft problems of small trees; hard contacts (Newton does not apply: R = 0) and
    elliptic cones stay ADMM's, and give ADMM's own steps."""
    scene = td.scenes.centipede(2)
    for soft, edges in ((False, 4), (True, 0)):
        runs = {}
        for how in ("auto", "admm"):
            sim = td.ContactSimulator(scene.model, 1e-3, contact_solver=how, soft=soft, friction_edges=edges)
            state = scene.initial_state()
            for _ in range(20):
                sim.step(state, scene.tau(state.t, state.q, state.v))
            runs[how] = state.q.copy()
        assert np.array_equal(runs["auto"], runs["admm"])
    with pytest.raises(ValueError, match="contact_solver must be one of"):
        td.ContactSimulator(scene.model, 0.005, contact_solver="pgs")


def test_a_large_tree_is_solved_on_its_sparsity():
    """Past NEWTON_MAX_NV coordinates Newton factors H = M + JᵀDJ by LTL on the tree's sparsity (every
    centipede contact is against the floor: each row on one chain) and agrees with ADMM on the same soft
    problem in fewer iterations; the default takes it on this shallow a tree (12 segments, nv 135) and
    leaves a deep one (50 segments: the factor's Σ depth² above ADMM's iterations) to ADMM
    (docs/contact.md: their costs)."""
    from treedyn.sim.contact_solvers import NEWTON_MAX_NV

    scene = td.scenes.centipede(12)
    assert scene.model.nv > NEWTON_MAX_NV
    runs, iters = {}, {}
    for how in ("auto", "admm", "newton"):
        sim = td.ContactSimulator(scene.model, 1e-3, contact_solver=how, soft=True, qp_tolerance=1e-10)
        state, n = scene.initial_state(), 0
        for _ in range(10):
            n += sim.step(state, scene.tau(state.t, state.q, state.v)).qp_iterations
        runs[how], iters[how] = state.q.copy(), n
    assert np.array_equal(runs["auto"], runs["newton"])
    # Newton stops on MuJoCo's scaled gradient (divided by nv times the mean inertia): on a tree of ~130
    # coordinates its stop is looser in velocity units than ADMM's at the same qp_tolerance
    assert np.abs(runs["newton"] - runs["admm"]).max() < 1e-5
    assert iters["newton"] < iters["admm"]
    deep = td.scenes.centipede(50)
    for how in ("auto", "admm"):
        sim = td.ContactSimulator(deep.model, 1e-3, contact_solver=how, soft=True)
        state = deep.initial_state()
        for _ in range(3):
            sim.step(state, deep.tau(state.t, state.q, state.v))
        runs[how] = state.q.copy()
    assert np.array_equal(runs["auto"], runs["admm"])


def _pile(n: int) -> td.Model:
    """n free boxes overlapping over a floor (each against every other: a pile dropped into itself)."""
    m = td.Model()
    rng = np.random.default_rng(0)
    for i in range(n):
        b = m.add_body(f"b{i}", None, td.Free(), td.Transform(translation=rng.uniform(-0.05, 0.05, 3) + [0, 0, 0.2]),
                       td.Inertia(1.0, (0, 0, 0), np.eye(3) * 0.01))  # fmt: skip
        m.add_geom(b, td.Box((0.1, 0.1, 0.1)))
    m.add_geom(None, td.Plane())
    return m


def test_a_pile_of_bodies_is_newtons():
    """More rows between moving bodies than coordinates (14 overlapping boxes: nv 84, hundreds of box-box
    contacts): auto gives the soft problem to dense Newton, whose Hessian is nv x nv, instead of ADMM's
    dense block of the coupled rows (nc² memory, nc³ to factor: 50 boxes exhausted memory); both solve the
    same problem (agreeing to ADMM's tolerance), Newton in a few iterations."""
    model = _pile(14)
    assert model.nv > td.sim.contact_solvers.NEWTON_MAX_NV
    out = {}
    for how in ("auto", "admm"):
        sim = td.ContactSimulator(model, 1e-3, contact_solver=how, soft=True, qp_tolerance=1e-10)
        state = td.State.initial(model)
        step = sim.step(state)
        out[how] = (state.v.copy(), step.qp_iterations, step.n_contacts)
    assert out["auto"][2] > 2 * model.nv // 3 and out["auto"][1] < 20 < out["admm"][1]
    assert np.abs(out["auto"][0] - out["admm"][0]).max() < 1e-6 * (1 + np.abs(out["admm"][0]).max())


def _friction_legs(tendon: bool) -> str:
    """A box on four two-hinge legs on a plane, every hinge with dry friction (frictionloss) and a position
    servo; with tendon, a fixed tendon with dry friction along each leg's hip and knee (rows on one chain)."""
    legs, acts, tendons = "", "", ""
    for i, (x, y) in enumerate([(0.2, 0.1), (0.2, -0.1), (-0.2, 0.1), (-0.2, -0.1)]):
        j = 'axis="0 1 0" frictionloss="0.4" damping="0.05" armature="0.01"'
        legs += f"""<body pos="{x} {y} 0"><joint name="hip{i}" {j}/>
          <geom type="capsule" fromto="0 0 0 0 0 -0.2" size="0.025" mass="0.5"/><body pos="0 0 -0.2">
          <joint name="knee{i}" {j}/><geom type="capsule" fromto="0 0 0 0 0 -0.2" size="0.02" mass="0.2"/></body></body>"""
        acts += f'<position joint="hip{i}" kp="40"/><position joint="knee{i}" kp="40"/>'
        if tendon:
            tendons += (
                f'<fixed frictionloss="0.3"><joint joint="hip{i}" coef="1"/><joint joint="knee{i}" coef="0.5"/></fixed>'
            )
    tendons = f"<tendon>{tendons}</tendon>" if tendon else ""
    return f"""<mujoco><worldbody><geom type="plane" size="5 5 0.1"/><body pos="0 0 0.42"><freejoint/>
      <geom type="box" size="0.25 0.12 0.05" mass="4"/>{legs}</body></worldbody>{tendons}<actuator>{acts}</actuator>
      </mujoco>"""


@pytest.mark.parametrize("tendon", [False, True], ids=["joints", "tendons"])
def test_dry_friction_rows_on_one_chain_are_newtons_on_the_tree(tendon):
    """Dry friction of a joint (one coordinate) or of a tendon along one leg lies on one chain of the tree, so
    Newton keeps its LTL factor with them (an equality between two branches would not): 1 s of set points
    moving against the friction (it stumbles and sinks to its knees) follows mj_step's root within 1e-6 m, and ADMM's solution of the same
    problems within 1e-6."""
    xml = _friction_legs(tendon)
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    model = td.load_mjcf(xml)
    data = td.ContactSimulator(model).data()
    admm = td.ContactSimulator(model, contact_solver="admm", qp_tolerance=1e-10).data()
    gap = apart = 0.0
    touching = counts = 0
    for k in range(500):
        u = 0.3 * np.sin(4 * k * m.opt.timestep + np.arange(m.nu))
        d.ctrl[:] = data.ctrl[:] = admm.ctrl[:] = u
        mujoco.mj_step(m, d)
        data.step()
        admm.step()
        gap = max(gap, np.abs(data.q[:3] - d.qpos[:3]).max())
        apart = max(apart, np.abs(data.q - admm.q).max())
        touching += d.ncon
        counts += data.n_contacts != d.ncon
    assert gap < 1e-6 and apart < 1e-6, (gap, apart)
    assert touching > 500 and counts == 0  # (stepping on its feet and stumbling: MuJoCo's contacts every step)


_ARMS = """<mujoco><option timestep="0.002"/><worldbody><geom type="plane" size="2 2 0.1"/>
  <body name="a" pos="-0.16 0 1.2"><joint axis="0 1 0"/><geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.05"/>
    <body pos="0 0 -0.5"><joint axis="0 1 0"/><geom type="sphere" size="0.08" pos="0 0 -0.2"/></body></body>
  <body name="b" pos="0.16 0 1.2"><joint axis="0 1 0"/><geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.05"/>
    <body pos="0 0 -0.5"><joint axis="1 0 0"/><geom type="sphere" size="0.08" pos="0 0 -0.2"/></body></body>
  </worldbody><keyframe><key qpos="0.9 0.3 -0.9 0.2"/></keyframe></mujoco>"""


def test_contacts_between_two_branches_stay_on_the_tree(tmp_path):
    """Two double pendulums hung side by side swing into each other (their capsules meet with forces to
    ~180 N): a contact between two branches is no row of one chain; Newton keeps H's tree factor and
    brings such rows in by Woodbury's identity (newton.hpp). The run follows mj_step to rounding and
    ADMM's on the same soft problem to its tolerance, in Newton's few iterations (a Hessian missing those
    rows would still descend, in more)."""
    path = tmp_path / "arms.xml"
    path.write_text(_ARMS)
    model = td.load_mjcf(str(path))
    m = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(m)
    mujoco.mj_resetDataKeyframe(m, d, 0)
    states, sims = {}, {}
    for how in ("newton", "admm"):
        sims[how] = td.ContactSimulator(model, contact_solver=how, qp_tolerance=1e-10)
        states[how] = td.State.initial(model)
        states[how].q[:] = d.qpos
    gap, touching, iterations = 0.0, 0, 0
    for _ in range(600):
        mujoco.mj_step(m, d)
        for how, sim in sims.items():
            step = sim.step(states[how])
            iterations = max(iterations, step.qp_iterations) if how == "newton" else iterations
        gap = max(gap, np.abs(states["newton"].q - d.qpos).max())
        touching += any(m.geom_bodyid[c.geom1] and m.geom_bodyid[c.geom2] for c in d.contact[: d.ncon])
    assert touching > 20  # (the arms do meet)
    assert gap < 1e-9 and iterations <= 4, (gap, iterations)
    assert np.abs(states["newton"].q - states["admm"].q).max() < 1e-6
