"""MJCF <equality> (io/mjcf/equality.py) against MuJoCo: the constraint residuals of its compiled
model (efc_pos) at random configurations, its accelerations with the same constraints, and the
loader's errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import assert_below, assert_within_rounding, rounding_bound

import treedyn as td
from treedyn.io import ModelFileError
from treedyn.io._common import IgnoredElementWarning
from treedyn.sim.constraints import constraint_terms, project_positions, project_velocities

# a free body with a chain (hinges with refs, a slide), a ball-jointed pendulum, sites, fixed tendons
BASE = """<mujoco>
  <worldbody>
    <body name="a" pos="0 0 1">
      <freejoint name="fa"/>
      <geom type="box" size=".1 .2 .3" mass="2"/>
      <site name="sa" pos="0.1 0 0.2" euler="10 20 30"/>
      <body name="a1" pos="0.2 0 0">
        <joint name="h1" type="hinge" axis="0 1 0" ref="15"/>
        <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.05"/>
        <body name="a2" pos="0.3 0 0">
          <joint name="h2" type="hinge" axis="1 0 0" ref="-10"/>
          <joint name="s2" type="slide" axis="0 0 1" ref="0.1"/>
          <geom type="sphere" size="0.07"/>
        </body>
      </body>
    </body>
    <body name="b" pos="1 0 1">
      <joint name="bb" type="ball"/>
      <geom type="box" size=".1 .1 .3" pos="0 0 -0.3"/>
      <body name="b1" pos="0 0 -0.6">
        <joint name="h3" type="hinge" axis="0 1 0" pos="0.02 0 0"/>
        <site name="sb" pos="0 0.1 0" euler="-5 0 40"/>
        <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.05"/>
      </body>
    </body>
  </worldbody>
  <tendon>
    <fixed name="t1"><joint joint="h1" coef="1"/><joint joint="h2" coef="-0.5"/></fixed>
    <fixed name="t2"><joint joint="h3" coef="2"/></fixed>
  </tendon>
  <equality>
    EQ
  </equality>
</mujoco>"""

#: equality -> (its XML, rows, the sign relating treedyn's rows to MuJoCo's efc_pos, unused)
CASES = {
    "connect": ('<connect body1="a2" body2="b1" anchor="0.05 0.02 0.1"/>', 3, -1, 3),
    "connect-world": ('<connect body1="a2" anchor="0.05 0.02 0.1"/>', 3, -1, 3),
    "connect-sites": ('<connect site1="sa" site2="sb"/>', 3, -1, 3),
    "weld": ('<weld body1="a2" body2="b1"/>', 6, -1, 3),
    "weld-relpose": ('<weld body1="a2" body2="b1" relpose="0.1 0.2 0.3 0.9 0.1 0.2 0.3" anchor="0.1 0 0"/>', 6, -1, 3),
    "weld-sites": ('<weld site1="sa" site2="sb"/>', 6, -1, 3),
    "joint": ('<joint joint1="h2" joint2="h3" polycoef="0.1 0.5 0.2 -0.1 0.05"/>', 1, 1, 1),
    "joint-alone": ('<joint joint1="s2" polycoef="0.05 0 0 0 0"/>', 1, 1, 1),
    "tendon": ('<tendon tendon1="t1" tendon2="t2" polycoef="0 0.7 0.1 0 0"/>', 1, 1, 1),
}


def load(eq: str):
    xml = BASE.replace("EQ", eq)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IgnoredElementWarning)
        model = td.Model.from_mjcf(xml)
    return model, xml


def mujoco_rows(xml, model, q):
    """MuJoCo's equality residuals efc_pos at treedyn's q (its own compiler, constraints on)."""
    mujoco = pytest.importorskip("mujoco")
    from treedyn.tools.peers import MujocoFromFile

    peer = MujocoFromFile(model, xml)  # the coordinate map (its own copy has the constraints off)
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    d.qpos[:] = peer.q(q)
    mujoco.mj_forward(m, d)
    return d.efc_pos[d.efc_type == mujoco.mjtConstraint.mjCNSTR_EQUALITY].copy()


@pytest.mark.parametrize("case", sorted(CASES))
def test_rows_are_mujocos_residuals(case):
    """Point rows: MuJoCo's position residual (x_1 − x_2, ours x_2 − x_1); coupling rows: its
    y − y0 − p(x − x0); weld orientation rows: the vector part of the relative rotation's
    quaternion, ours in the hemisphere w ≥ 0 (MuJoCo keeps whichever sign its product gives)."""
    eq, rows, sign, _ = CASES[case]
    model, xml = load(eq)
    assert model.n_constraint_rows == rows
    rng = np.random.default_rng(3)
    for q in [model.reference_configuration] + [td.random_configuration(model, rng) for _ in range(4)]:
        ours, theirs = model.loop_residual(q), mujoco_rows(xml, model, q)
        if rows == 6:
            k = np.argmax(np.abs(theirs[3:]))
            ours[3:] *= sign * np.sign(ours[3 + k] * theirs[3 + k])  # one sign for the three rows
        # both are a few O(depth) transform products of poses of metre size: rounding of n·u·(1 + |q|)
        assert_within_rounding(sign * ours, theirs, 1 + np.abs(q).max() ** 4, model.nv, what=f"{case} rows")


@pytest.mark.parametrize("case", ["weld", "weld-relpose", "weld-sites", "connect-sites"])
def test_where_our_rows_vanish_mujocos_do(case):
    model, xml = load(CASES[case][0])
    solver = td.make_solver("drumwright", model)
    q = project_positions(solver, model.reference_configuration, tol=1e-12)
    theirs = mujoco_rows(xml, model, q)
    # projected to |C| ≤ 1e-12; MuJoCo's rows are Lipschitz in ours near the manifold (constants ~ 1-2)
    assert_below(theirs, 1e-11, f"{case}: MuJoCo's residual on our manifold")


def test_inactive_equalities_and_soft_parameters():
    model, xml = load('<connect body1="a2" anchor="0 0 0" active="false"/><joint joint1="h1" solref="0.02 1"/>')
    assert len(model.loop_closures) == 1 and not model.loop_closures[0].active
    assert model.n_constraint_rows == 1
    assert len(mujoco_rows(xml, model, model.reference_configuration)) == 1  # MuJoCo: eq_active0 false too
    # (the solref is read, solimp MuJoCo's default: a soft equality under soft constraints)
    assert model.constraint_softness("coupling", 0) == ((0.02, 1.0), (0.9, 0.95, 0.001, 0.5, 2.0))
    assert model.constraint_softness("loop", 0) == ((0.02, 1.0), (0.9, 0.95, 0.001, 0.5, 2.0))


FOUR_BAR = """<mujoco>
  <worldbody>
    <body name="crank">
      <joint name="j1" type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0 0 0.1" size="0.01"/>
      <body name="coupler" pos="0 0 0.1">
        <joint name="j2" type="hinge" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0.4 0 0.1" size="0.01"/>
        <body name="rocker" pos="0.4 0 0.1">
          <joint name="j3" type="hinge" axis="0 1 0"/>
          <geom type="capsule" fromto="0 0 0 0 0 -0.2" size="0.01"/>
        </body>
      </body>
    </body>
  </worldbody>
  <equality>
    <connect body1="rocker" body2="world" anchor="0 0 -0.2" SOFT/>
  </equality>
</mujoco>"""


def test_four_bar_keeps_its_loop_over_five_seconds():
    """A planar Grashof crank-rocker (crank 0.1, coupler 0.41, rocker 0.2, ground 0.41) closed by
    <equality connect>, started at rest and spun up by a torque on the crank: td.simulate keeps
    |C| at the projection's 1e-10 by default, and below 1e-4 with Baumgarte alone."""
    model = td.Model.from_mjcf(FOUR_BAR.replace("SOFT", ""))
    for project, limit in ((True, 1e-10), (False, 1e-4)):
        r = td.simulate(model, "drumwright", np.zeros(3), np.zeros(3), 5.0, tau=np.array([0.01, 0, 0]), project=project)
        assert r.success and abs(r.q[-1, 0]) > 2 * np.pi  # the crank turned round
        worst = max(model.constraint_residual(q) for q in r.q)
        assert worst < limit, (project, worst)


@pytest.mark.parametrize("seed", range(4))
def test_accelerations_are_mujocos_with_its_regularisation(seed):
    """MuJoCo's soft constraint solves (A + R) λ = a_ref − J q̈₀ with R = efc_R; the same rows and
    bias through our Delassus matrix with its R give its q̈ to rounding, and as its impedance → 1
    (R → 0) its q̈ tends to our hard one."""
    mujoco = pytest.importorskip("mujoco")
    xml = FOUR_BAR.replace("SOFT", 'solimp="0.9999 0.9999 0.001" solref="0.001 1"')
    model = td.Model.from_mjcf(xml)
    solver = td.make_solver("drumwright", model)
    rng = np.random.default_rng(seed)
    q = project_positions(solver, 0.3 * rng.standard_normal(3))
    v = project_velocities(solver, q, rng.standard_normal(3))
    tau = rng.standard_normal(3)
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    d.qpos[:], d.qvel[:], d.qfrc_applied[:] = q, v, tau
    mujoco.mj_forward(m, d)
    G, C, Gdv = constraint_terms(model, q, v)
    # MuJoCo's J is −G here (its residual is x_1 − x_2); its reference acceleration is J̇v minus its
    # spring–damper terms B·(Jv) + K·(residual), B = 2/(d·τ), K = 1/(d²τ²ζ²) for solref (τ, ζ) =
    # (0.001, 1), d = 0.9999: at our projected state those terms are tiny but not zero
    B, K = 2 / (0.9999 * 1e-3), 1 / (0.9999**2 * 1e-6)
    spring = B * np.abs(d.efc_vel).max() + K * np.abs(d.efc_pos).max()
    assert_below(d.efc_aref - Gdv, spring + rounding_bound(8) * (np.abs(Gdv).max() + 1), "a_ref = −J̇v = Ġv")
    qdd0 = solver.forward_dynamics(q, v, tau)
    Y = solver.inverse_inertia(q, G.T)
    A, R = G @ Y, np.diag(d.efc_R)
    # MuJoCo's rows: J q̈ = a_ref, i.e. G q̈ = −a_ref, solved with its regulariser R
    lam = np.linalg.solve(A + R, -d.efc_aref - G @ qdd0)
    soft = qdd0 + Y @ lam
    scale = np.abs(qdd0).max() + np.abs(Y).max() * np.abs(lam).max()
    assert_below(soft - d.qacc, rounding_bound(3) * 1e3 * scale, "MuJoCo's q̈ = ours with its R", size=scale)
    hard, lam_hard = td.constrained_forward_dynamics(solver, q, v, tau, return_multipliers=True)
    # R = r·I (one constraint, equal rows): on each eigendirection of A with eigenvalue μ > 0,
    # λ_soft = λ·μ/(μ + r), so ‖Δq̈‖₂ ≤ ‖Y‖₂·(r/μ_min)·‖λ‖₂ (the identically zero out-of-plane row
    # has Y's column and its right-hand side zero: it adds nothing)
    r = d.efc_R.max()
    assert np.ptp(d.efc_R) <= 1e-12 * r
    mu = np.linalg.eigvalsh(0.5 * (A + A.T))
    mu_min = mu[mu > 1e-10 * mu.max()].min()
    bound = np.linalg.norm(Y, 2) * r / mu_min * np.linalg.norm(lam_hard)
    assert_below(np.linalg.norm(hard - d.qacc), bound, "hard q̈ − MuJoCo's (its softness)", size=np.abs(hard).max())


@pytest.mark.parametrize(
    "eq,message",
    [
        ('<connect body1="nope" anchor="0 0 0"/>', "no body named 'nope'"),
        ('<connect site1="sa"/>', "both site1 and site2"),
        ('<connect site1="sa" site2="zz"/>', "no site named 'zz'"),
        ('<weld body1="a2" body2="a2"/>', "same body"),
        ('<joint joint1="bb"/>', "couplings join revolute and prismatic"),
        ('<joint joint1="zz"/>', "no joint named 'zz'"),
        ('<tendon tendon1="zz"/>', "no fixed tendon named 'zz'"),
        ('<joint joint1="h1" active="maybe"/>', "true or false"),
        ('<flex flex="f"/>', "not supported"),
    ],
)
def test_errors_name_the_equality(eq, message):
    with pytest.raises(ModelFileError, match=message) as e:
        load(eq)
    assert e.value.line is not None


def test_mujocos_trajectories_converge_to_ours_as_its_constraint_stiffens():
    """The four-bar spun up for 1 s: MuJoCo (RK4, h = 1e-4) with its soft connect at impedance d
    = 0.99, 0.999, 0.9999 (its largest) ends at q_d; |q_d − q| shrinks like (1 − d), ten times per
    step (measured 1.6e-4, 1.6e-5, 1.6e-6): our hard constraint is the limit of MuJoCo's soft ones."""
    mujoco = pytest.importorskip("mujoco")
    model = td.Model.from_mjcf(FOUR_BAR.replace("SOFT", ""))
    tau = np.array([0.01, 0, 0])
    ours = td.simulate(model, "drumwright", np.zeros(3), np.zeros(3), 1.0, tau=tau, rtol=1e-10, atol=1e-10).q[-1]
    gaps = []
    for d in (0.99, 0.999, 0.9999):
        m = mujoco.MjModel.from_xml_string(FOUR_BAR.replace("SOFT", f'solimp="{d} {d} 0.001" solref="0.002 1"'))
        m.opt.timestep, m.opt.integrator = 1e-4, mujoco.mjtIntegrator.mjINT_RK4
        data = mujoco.MjData(m)
        data.qfrc_applied[:] = tau
        for _ in range(10000):
            mujoco.mj_step(m, data)
        gaps.append(np.abs(data.qpos - ours).max())
    # first order in (1 − d): each tenfold stiffening divides the gap by 10 (RK4's own error at
    # h = 1e-4, ~1e-12, and ours at rtol 1e-10 stay far below the smallest gap)
    assert 5 < gaps[0] / gaps[1] < 20 and 5 < gaps[1] / gaps[2] < 20, gaps
    assert gaps[2] < 1e-5, gaps
