"""MuJoCo's soft constraints in the C++ step (ContactSimulator(soft=True); sim/soft.py,
cpp/include/treedyn/contact/soft.hpp): the same step as MuJoCo's mj_step on the same file —
impedance, regulariser, reference acceleration, the convex problem, the pyramid's edges, MuJoCo's
Euler (damping after the solve) and RK4 — checked against MuJoCo itself; the model data (solref,
solimp, solmix, impratio, the file's integrator and cone) and their checks.

Tolerances: both simulators solve one strictly convex problem per step (the regulariser R > 0), to
their solvers' tolerances (treedyn's qp_tolerance, MuJoCo's `tolerance`, both set far below the
effects compared: hard and soft contacts part by millimetres in these scenes)."""

import os
import tempfile
import warnings

import numpy as np
import pytest

import treedyn as td
from treedyn.sim.soft import inverse_weights, pair_softness

mujoco = pytest.importorskip("mujoco")


def _load(xml):
    """(MuJoCo's model, treedyn's) of an MJCF text."""
    with tempfile.NamedTemporaryFile("w", suffix=".xml", delete=False) as f:
        f.write(xml)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", td.io.IgnoredElementWarning)
            return mujoco.MjModel.from_xml_path(f.name), td.load_mjcf(f.name)
    finally:
        os.unlink(f.name)


def _public(public_models, package, name):
    """(MuJoCo's model, treedyn's) of a public model file."""
    path = os.path.join(public_models[package], f"{name}.xml")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", td.io.IgnoredElementWarning)
        return mujoco.MjModel.from_xml_path(path), td.load_mjcf(path)


HINGE = """<mujoco><option timestep="0.01" integrator="{integrator}" gravity="0 0 0" tolerance="1e-12"/>
<worldbody><body name="b"><joint name="j" type="hinge" axis="0 1 0" range="-30 30" armature="{armature}"
damping="{damping}" solreflimit="{timeconst} 1"/><geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.05"/>
</body></worldbody></mujoco>"""


@pytest.mark.parametrize("integrator", ["Euler", "RK4"])
@pytest.mark.parametrize("armature,damping,timeconst", [(0, 0, 0.02), (1, 0, 0.05), (1, 1, 0.02)])
def test_a_hinge_on_its_soft_stop_steps_as_mujoco(integrator, armature, damping, timeconst):
    """A hinge thrown at 5 rad/s onto its stop: the stop's spring–damper (solreflimit), the joint's
    armature and damping (MuJoCo's Euler damps after the solve; its RK4 does not), to rounding."""
    m, model = _load(HINGE.format(integrator=integrator, armature=armature, damping=damping, timeconst=timeconst))
    d = mujoco.MjData(m)
    d.qvel[0] = 5.0
    sim = td.ContactSimulator(model, qp_tolerance=1e-13)
    assert sim.soft and sim.integrator == ("rk4" if integrator == "RK4" else "semi-implicit")
    state = td.State(np.zeros(1), np.array([5.0]))
    hit = False
    for _ in range(60):
        mujoco.mj_step(m, d)
        sim.step(state)
        hit |= d.efc_type.size > 0
        assert state.q[0] == pytest.approx(d.qpos[0], abs=1e-10)
        assert state.v[0] == pytest.approx(d.qvel[0], abs=1e-9)
    assert hit and d.qpos[0] < np.radians(30)  # (it reached the stop and came back)


BOX = """<mujoco><option timestep="0.01" cone="{cone}" tolerance="1e-12"/><worldbody>
<geom type="plane" size="5 5 0.1"/><body pos="0 0 0.3"><freejoint/>
<geom type="{kind}" size="{size}" {fromto}/></body></worldbody></mujoco>"""


@pytest.mark.parametrize("cone", ["pyramidal", "elliptic"])
@pytest.mark.parametrize("kind", ["box", "capsule"])
def test_a_thrown_body_lands_and_slides_as_in_mujoco(cone, kind):
    """A spinning box or capsule thrown onto the floor: it lands and slides (the capsule rolls on) as
    MuJoCo's does with either cone (the pyramid's edges along MuJoCo's contact frames: the capsule's axis)."""
    size, fromto = ("0.1 0.2 0.05", "") if kind == "box" else ("0.05", 'fromto="-0.1 0 0 0.1 0 0"')
    m, model = _load(BOX.format(cone=cone, kind=kind, size=size, fromto=fromto))
    d = mujoco.MjData(m)
    d.qvel[:] = [0.3, -0.2, 0.5, 2.0, -3.0, 1.0]
    mujoco.mj_forward(m, d)
    sim = td.ContactSimulator(model, qp_tolerance=1e-12)
    assert sim.friction_edges == (4 if cone == "pyramidal" else 0)
    state = td.State.initial(model)
    R = d.xmat[1].reshape(3, 3)
    state.v[:] = np.r_[R.T @ d.qvel[:3], d.qvel[3:]]  # (treedyn's linear velocity: the body frame's)
    touched = 0
    for _ in range(100):
        mujoco.mj_step(m, d)
        touched += sim.step(state).n_contacts > 0
        assert np.abs(state.q[:3] - d.qpos[:3]).max() < 1e-6
    assert touched > 50 and abs(d.qpos[2] - 0.05) < 1e-3  # (landed: on its side, or rolling on it)


def test_gymnasium_ant_runs_as_mj_step(public_models):
    """Gymnasium's ant as a user loads it (RK4, pyramidal cones, its margins, armature, damping):
    dropped, then driven, its root follows mj_step's to half a millimetre; with hard contacts
    (soft=False) the two part by centimetres (docs/guide/mujoco.md)."""
    m, model = _public(public_models, "gymnasium", "ant")
    d = mujoco.MjData(m)
    sims = {soft: td.ContactSimulator(model, soft=soft) for soft in (True, False)}
    states = {soft: td.State.initial(model) for soft in sims}
    assert sims[True].integrator == "rk4" and sims[False].integrator == "semi-implicit"
    gap = {True: 0.0, False: 0.0}
    for k in range(80):
        u = 0.5 * np.sin(4 * np.pi * (k * m.opt.timestep - 0.3) + np.arange(m.nu)) if k >= 30 else np.zeros(m.nu)
        d.ctrl[:] = u
        mujoco.mj_step(m, d)
        for soft, sim in sims.items():
            sim.step(states[soft], ctrl=u)
            gap[soft] = max(gap[soft], np.linalg.norm(states[soft].q[:3] - d.qpos[:3]))
    assert gap[True] < 5e-4, gap  # (the solvers' tolerances, grown by the fall and the gait)
    assert gap[False] > 1e-2, gap


@pytest.mark.parametrize("delassus", ["tree", "dense"])
def test_the_tree_and_the_formed_operator_give_one_soft_step(delassus, public_models):
    """G + R by the tree's passes (Woodbury with each row's ρ d_k + R_k: a contact's point mass
    anisotropic, D diag(w) Dᵀ) and formed: one trajectory to the solver's tolerance."""
    _, model = _public(public_models, "gymnasium", "ant")
    runs = {}
    for how in ("auto", delassus):
        sim = td.ContactSimulator(model, delassus=how, integrator="semi-implicit", qp_tolerance=1e-11)
        state = td.State.initial(model)
        sim.run(state, 0.5)
        runs[how] = state.q.copy()
    assert np.abs(runs["auto"] - runs[delassus]).max() < 1e-6


def test_inverse_weights_are_mujocos(public_models):
    """MuJoCo's body_invweight0 (translation) of every geom's body and dof_invweight0, from
    treedyn's M⁻¹ and centre-of-mass Jacobians at qpos0."""
    for package, name in (("gymnasium", "ant"), ("gymnasium", "humanoid"), ("dm_control", "quadruped")):
        m, model = _public(public_models, package, name)
        geoms, dof = inverse_weights(model)
        for k, g in enumerate(model.geoms):  # (by the geom's own MuJoCo body: a welded foot's, not the shin's)
            b = m.geom_bodyid[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, g.name)]
            assert geoms[k] == pytest.approx(m.body_invweight0[b, 0], rel=1e-9, abs=1e-12), (name, g.name)
        for j in range(m.njnt):
            joint = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, j)
            k, a = model.v_index(joint), m.jnt_dofadr[j]
            n = {0: 6, 1: 3}.get(int(m.jnt_type[j]), 1)
            assert dof[k : k + n] == pytest.approx(m.dof_invweight0[a : a + n], rel=1e-9), (name, joint)


def test_the_files_solref_solimp_and_options_are_read(public_models):
    """Each geom's solref and solimp (with its classes' defaults), each limited joint's solreflimit
    and solimplimit, and <option integrator, cone, impratio> as MuJoCo compiles them; a pair's mixed
    by solmix as MuJoCo mixes them."""
    for package, name in (("gymnasium", "hopper"), ("gymnasium", "half_cheetah"), ("dm_control", "quadruped")):
        m, model = _public(public_models, package, name)
        assert model.soft_constraints
        assert (model.integrator == "rk4") == (m.opt.integrator == mujoco.mjtIntegrator.mjINT_RK4)
        assert model.impratio == m.opt.impratio
        for g in model.geoms:
            k = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, g.name)
            if k < 0:
                continue
            assert np.allclose(g.solref, m.geom_solref[k]) and np.allclose(g.solimp, m.geom_solimp[k]), g.name
            assert g.solmix == pytest.approx(m.geom_solmix[k])
        for joint in model.joint_limits:
            j = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, joint)
            ref, imp = model.limit_softness(joint)
            assert np.allclose(ref, m.jnt_solref[j]) and np.allclose(imp, m.jnt_solimp[j]), joint
    m, model = _load(
        """<mujoco><option cone="elliptic" impratio="10" integrator="implicitfast"/><worldbody>
        <geom name="a" type="plane" size="1 1 1" solref="0.04 1" solimp="0.8 0.9 0.01" solmix="3"/>
        <body pos="0 0 0.09"><freejoint/><geom name="b" type="sphere" size="0.1" solref="0.02 0.5"/></body>
        </worldbody></mujoco>"""
    )
    assert (model.friction_cone, model.impratio, model.integrator) == ("elliptic", 10.0, "implicitfast")
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    (row,) = pair_softness(model, [(0, 1)])  # mixed 3 : 1 (mj_contactParam), against MuJoCo's contact
    assert d.ncon == 1 and np.allclose(row, np.r_[d.contact[0].solref, d.contact[0].solimp], rtol=1e-12)
    for pair in ("", ' solimp="0.7 0.8 0.02"'):  # an explicit <pair>: its own or MuJoCo's defaults, not its geoms'
        m, model = _load(
            f"""<mujoco><worldbody><geom name="a" type="plane" size="1 1 1" solref="0.04 1" contype="0"/>
            <body pos="0 0 0.09"><freejoint/><geom name="b" type="sphere" size="0.1" solimp="0.5 0.6 0.01"
            conaffinity="0"/></body></worldbody><contact><pair geom1="a" geom2="b"{pair}/></contact></mujoco>"""
        )
        d = mujoco.MjData(m)
        mujoco.mj_forward(m, d)
        (row,) = pair_softness(model, [(0, 1)])
        assert d.ncon == 1 and np.allclose(row, np.r_[d.contact[0].solref, d.contact[0].solimp], rtol=1e-12)


def test_soft_needs_the_cpp_step_and_mujocos_cones():
    model = td.Model()
    model.add_body("ball", None, td.Free(), inertia=td.Inertia(1.0, np.zeros(3), 0.01 * np.eye(3)))
    model.add_geom("ball", td.Sphere(0.1))
    model.add_geom(None, td.Plane())
    assert not model.soft_constraints and not td.ContactSimulator(model, 0.01).soft
    with pytest.raises(ValueError, match="soft=True need"):
        td.ContactSimulator(model, 0.01, soft=True, contact_solver="proxqp")
    with pytest.raises(ValueError, match="MuJoCo's cones"):
        td.ContactSimulator(model, 0.01, soft=True, friction_edges=8)
    with pytest.raises(ValueError, match="rk4.*needs soft=True"):
        td.ContactSimulator(model, 0.01, integrator="rk4")
    model.soft_constraints = True
    sim = td.ContactSimulator(model, 0.01)
    assert sim.soft and sim.integrator == "semi-implicit" and "soft=True" in repr(sim)
    state = td.State(np.r_[0, 0, 0.099, 0, 0, 0, 1.0], np.zeros(6))
    for _ in range(300):
        sim.step(state)
    # at rest R f = a_ref = −K d(r) r with f = m g, R = (1 − d)/d Â, Â = 1/m: r = −(1 − d) g/(d² K),
    # K = 1/(d_max² τ²) (solref (0.02, 1)), d(r) solimp's default (0.9, 0.95, 0.001, 0.5, 2): for
    # x = |r|/0.001 <= 1/2, d = 0.9 + 0.05 · 2x², above 1/2 d = 0.95 − 0.05 · 2(1 − x)²; r by its fixed point
    K, r = 1 / (0.95**2 * 0.02**2), -1e-4
    for _ in range(100):
        x = min(abs(r) / 0.001, 1.0)
        d = 0.9 + 0.1 * x * x if x <= 0.5 else 0.95 - 0.1 * (1 - x) ** 2
        r = -(1 - d) * 9.81 / (d * d * K)
    assert state.q[2] - 0.1 == pytest.approx(r, abs=1e-7)


def test_rk4_refuses_what_its_stages_cannot_see(public_models):
    """The quadruped's cylinders and ellipsoids are collided in Python once per step: asked for,
    RK4 is refused; from the file (a model marked RK4), it is said and semi-implicit Euler steps."""
    _, model = _public(public_models, "dm_control", "quadruped")
    with pytest.raises(ValueError, match="RK4's stages"):
        td.ContactSimulator(model, integrator="rk4").step(td.State.initial(model))
    model.integrator = "rk4"
    sim = td.ContactSimulator(model)
    with pytest.warns(td.SimulationWarning, match="asks for RK4"):
        sim.step(td.State.initial(model))
    assert sim.integrator == "semi-implicit"


def test_softness_is_checked_and_kept():
    model = td.Model()
    model.add_body("b", None, td.Revolute([0, 0, 1]))
    model.set_joint_limits("b", -1, 1)
    g = model.add_geom("b", td.Sphere(0.1), solref=(0.03, 0.8), solimp=(0.8, 0.9, 0.002, 0.4, 3), solmix=2)
    assert model.geoms[g].solref == (0.03, 0.8) and model.geoms[g].solimp[4] == 3 and model.geoms[g].solmix == 2
    model.set_geom_softness(g, solref=(-1000, -10))
    assert model.geoms[g].solref == (-1000.0, -10.0) and model.geoms[g].solimp[0] == 0.8
    model.set_limit_softness("b", solimp=(0.5, 0.6, 0.1, 0.5, 2))
    assert model.limit_softness("b") == ((0.02, 1.0), (0.5, 0.6, 0.1, 0.5, 2.0))
    for bad, match in (
        (dict(solref=(0.02, -1)), "solref must be"),
        (dict(solimp=(0.9, 1.5, 0.001, 0.5, 2)), "solimp must be"),
        (dict(solimp=(0.9, 0.95, 0.001)), "shape"),
        (dict(solmix=-1), "solmix"),
        (dict(solref=(np.nan, 1)), "NaN"),
    ):
        with pytest.raises(ValueError, match=match):
            model.set_geom_softness(g, **bad)
    with pytest.raises(ValueError, match="no joint named"):
        model.set_limit_softness("nope", solref=(0.02, 1))
    with pytest.raises(ValueError, match="no geom named"):
        model.set_geom_softness("nope", solref=(0.02, 1))
    with pytest.raises(ValueError, match="impratio"):
        model.impratio = 0
    with pytest.raises(ValueError, match="integrator"):
        model.integrator = "leapfrog"


def test_soft_worlds_step_in_a_batch_and_from_threads_as_alone(public_models):
    """step_batch's worlds (RK4, MuJoCo's pyramid) are each the world stepped alone, bit for bit; one
    simulator shared by Python threads steps each thread's run as alone, to the solver's tolerance
    (interleaved, a step may start cold where alone it continued warm: other bits, same solution)."""
    from concurrent.futures import ThreadPoolExecutor

    _, model = _public(public_models, "gymnasium", "ant")
    rng = np.random.default_rng(3)
    B = 4
    q = np.tile(td.State.initial(model).q, (B, 1))
    q[:, 2] += rng.uniform(-0.1, 0.0, B)  # (dropped from different heights)
    v = rng.normal(0, 0.3, (B, model.nv))
    batch = td.ContactSimulator(model)
    alone = []
    for b in range(B):
        sim, state = td.ContactSimulator(model), td.State(q[b].copy(), v[b].copy())
        for _ in range(40):
            sim.step(state)
        alone.append(state.q.copy())
    qb, vb = q.copy(), v.copy()
    for _ in range(40):
        batch.step_batch(qb, vb, threads=2)
    assert np.array_equal(qb, np.array(alone))

    def run(b):
        state = td.State(q[b].copy(), v[b].copy())
        for _ in range(40):
            shared.step(state)
        return state.q

    shared = td.ContactSimulator(model)
    with ThreadPoolExecutor(4) as pool:
        ours = list(pool.map(run, range(B)))
    assert all(np.abs(a - b).max() < 1e-6 for a, b in zip(ours, alone))


def test_geom_priority_takes_the_higher_ones_parameters():
    """A box on four sphere feet whose geoms say priority="1" with their own solimp and friction: the
    pair takes the feet's (MuJoCo's mj_contactParam), not the mix — the box rests where mj_step rests it
    (without the rule, 8.5 mm higher)."""
    feet = "".join(
        f'<geom type="sphere" size="0.03" pos="{x} {y} -0.05" priority="1" solimp="0.015 1 0.03" friction="0.4"/>'
        for x in (-0.1, 0.1)
        for y in (-0.1, 0.1)
    )
    xml = f"""<mujoco><worldbody><geom type="plane" size="2 2 0.1" solimp="0.9 0.95 0.001" friction="1.5"/>
    <body pos="0 0 0.09"><freejoint/><geom type="box" size="0.15 0.15 0.02" contype="0" conaffinity="0"/>{feet}
    </body></worldbody></mujoco>"""
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    model = td.load_mjcf(xml)
    assert [g.priority for g in model.geoms if isinstance(g.shape, td.Sphere)] == [1] * 4
    data = td.ContactSimulator(model).data()
    for _ in range(1000):
        mujoco.mj_step(m, d)
    data.step(1000)
    assert abs(data.q[2] - d.qpos[2]) < 1e-5, (data.q[2], d.qpos[2])
    assert d.qpos[2] < 0.075  # (the feet's soft solimp lets them sink: the rule matters)
