"""The joints' passive terms as model data of every solver (algorithms/passive.hpp): the armature
in M (M + diag(armature)) and the spring–damper force τ_p = −k (q ⊖ rest) − d v in forward and
inverse dynamics, their derivatives, against the bare tree's dynamics, Pinocchio and MuJoCo."""

import numpy as np
import pytest
from conftest import assert_same_accelerations, assert_same_solution, assert_within_rounding, random_models
from scipy.spatial.transform import Rotation

import treedyn as td
from treedyn.scenes import chain, random_tree

RIGID = ("aba", "aba-modified", "crba-cholesky", "crba-ltl", "drumwright", "cfa-oee", "jsiia")


def with_passive(model, seed=0, armature=True, springs=True):
    """A copy of ``model`` with random armature on every moving joint and a random spring–damper
    (a free joint: damping only) about a random rest configuration."""
    out = model.__copy__()
    rng = np.random.default_rng(seed)
    rest = td.random_configuration(out, rng)
    for i, j in enumerate(out.joints):
        if not j.nv:
            continue
        if armature:
            out.set_joint_armature(i, rng.uniform(0.01, 0.5, j.nv))
        if springs:
            free = isinstance(j, td.Free)
            qi = out.q_indices[i]
            out.set_joint_spring(
                i,
                stiffness=0.0 if free else rng.uniform(0.5, 5.0, j.nv),
                damping=rng.uniform(0.05, 1.0, j.nv),
                rest=rest[qi : qi + j.nq],
            )
    return out


def passive_force(model, bare, q, v):
    """τ_p computed here, independently: q ⊖ rest by scipy's rotations for spherical joints."""
    k, d = model.joint_stiffness, model.joint_damping
    rest = model.core.q_rest
    x = np.zeros(model.nv)
    for i, j in enumerate(model.joints):
        qi, vi = model.q_indices[i], model.v_indices[i]
        if isinstance(j, td.Spherical):
            r = Rotation.from_quat(rest[qi : qi + 4]).inv() * Rotation.from_quat(q[qi : qi + 4])
            x[vi : vi + 3] = r.as_rotvec()
        elif j.nv and not isinstance(j, td.Free):
            x[vi : vi + j.nv] = q[qi : qi + j.nq] - np.asarray(rest[qi : qi + j.nq])
    return -k * x - d * v


def reference(model, bare, q, v, tau):
    """M = M_tree + diag(armature) and q̈ = M⁻¹(τ + τ_p − c) from the bare tree's M and c."""
    M = td.mass_matrix(bare, q) + np.diag(model.armature)
    tau_eff = tau + passive_force(model, bare, q, v)
    return M, np.linalg.solve(M, tau_eff - td.bias_forces(bare, q, v)), tau_eff


def solvers_for(model):
    """The rigid-body solvers that take ``model``."""
    from treedyn.solvers import registry

    return [n for n in RIGID if registry.get_solver_class(n).supports(model) is None]


@pytest.mark.parametrize("name, base", random_models(), ids=[n for n, _ in random_models()])
def test_every_solver_has_the_armature_and_the_springs(name, base):
    model = with_passive(base, seed=len(name))
    bare = base
    rng = np.random.default_rng(7)
    for _ in range(2):
        q = td.random_configuration(model, rng)
        v, tau = rng.standard_normal(model.nv), rng.standard_normal(model.nv)
        M, qdd, tau_eff = reference(model, bare, q, v, tau)
        assert_within_rounding(td.mass_matrix(model, q), M, M, model.nv, what="M + diag(armature)")
        for s in solvers_for(model):
            solver = td.make_solver(s, model)
            assert_same_accelerations(model, q, v, tau_eff, solver.forward_dynamics(q, v, tau), qdd, what=f"{s} q̈")
            Minv = solver.inverse_inertia(q, np.eye(model.nv))
            assert_same_solution(M, Minv, np.linalg.inv(M), what=f"{s} M⁻¹")
            if "float32" in type(solver).capabilities:
                s32 = td.make_solver(s, model, dtype=np.float32)
                assert_same_accelerations(
                    model, q, v, tau_eff, s32.forward_dynamics(q, v, tau), qdd, dtype=np.float32, what=f"{s} f32"
                )
        # inverse dynamics: τ = M q̈ + c − τ_p, so ID(FD(τ)) = τ
        assert_within_rounding(
            td.rnea(model, q, v, qdd), tau, np.abs(M) @ np.abs(qdd) + np.abs(tau_eff), model.nv, what="ID(FD(τ))"
        )
        assert_same_solution(M, td.inverse_mass_matrix(model, q), np.linalg.inv(M), what="inverse_mass_matrix")


def test_a_batch_is_its_items():
    model = with_passive(random_tree(10, 3, floating_base=True))
    rng = np.random.default_rng(2)
    Q = np.stack([td.random_configuration(model, rng) for _ in range(5)])
    V, T = rng.standard_normal((5, model.nv)), rng.standard_normal((5, model.nv))
    for s in ("aba", "crba-cholesky", "drumwright"):
        solver = td.make_solver(s, model)
        out = solver.forward_dynamics(Q, V, T)
        for b in range(5):
            np.testing.assert_array_equal(out[b], solver.forward_dynamics(Q[b], V[b], T[b]))
    tau = td.rnea(model, Q, V, out)
    for b in range(5):
        np.testing.assert_array_equal(tau[b], td.rnea(model, Q[b], V[b], out[b]))


def test_cfa_refuses_armature_but_takes_springs():
    with pytest.raises(ValueError, match="armature"):
        td.make_solver("cfa-oee", with_passive(chain(5)))
    td.make_solver("cfa-oee", with_passive(chain(5), armature=False))


def test_the_redmax_solvers_count_the_springs_once():
    base = chain(6)
    model = with_passive(base, seed=3)
    rng = np.random.default_rng(3)
    q, v, tau = td.random_configuration(model, rng), rng.standard_normal(6), rng.standard_normal(6)
    M, qdd, tau_eff = reference(model, base, q, v, tau)
    out = td.make_solver("redmax-direct", model).forward_dynamics(q, v, tau)
    assert_same_accelerations(model, q, v, tau_eff, out, qdd, what="redmax-direct")


def test_derivatives_match_finite_differences():
    """∂τ/∂(q, v) of td.rnea and ∂q̈/∂(q, v) of ABA against central differences in the tangent
    space (q ⊕ ε e_k): the springs' partials, spherical joints' J_r⁻¹ included; truncation O(ε²)."""
    model = with_passive(random_tree(8, 11, floating_base=True))
    rng = np.random.default_rng(5)
    q, v, tau = td.random_configuration(model, rng), rng.standard_normal(model.nv), rng.standard_normal(model.nv)
    aba = td.make_solver("aba", model)
    a = aba.forward_dynamics(q, v, tau)
    dq, dv, M = td.rnea_derivatives(model, q, v, a)
    fq, fv, Minv = td.aba_derivatives(model, q, v, tau)
    np.testing.assert_allclose(M, td.mass_matrix(model, q), rtol=0, atol=1e-12 * np.abs(M).max())
    np.testing.assert_allclose(Minv @ M, np.eye(model.nv), atol=1e-10)
    eps = 1e-6
    for k in range(model.nv):
        e = np.zeros(model.nv)
        e[k] = eps
        qp, qm = td.integrate(model, q, e, 1.0), td.integrate(model, q, -e, 1.0)
        num_tq = (td.rnea(model, qp, v, a) - td.rnea(model, qm, v, a)) / (2 * eps)
        num_tv = (td.rnea(model, q, v + e, a) - td.rnea(model, q, v - e, a)) / (2 * eps)
        num_aq = (aba.forward_dynamics(qp, v, tau) - aba.forward_dynamics(qm, v, tau)) / (2 * eps)
        num_av = (aba.forward_dynamics(q, v + e, tau) - aba.forward_dynamics(q, v - e, tau)) / (2 * eps)
        for x, y, what in ((dq, num_tq, "∂τ/∂q"), (dv, num_tv, "∂τ/∂v"), (fq, num_aq, "∂q̈/∂q"), (fv, num_av, "∂q̈/∂v")):
            # O(ε²) truncation with O(1) third derivatives plus u/ε rounding: 1e-6 of the column's size
            np.testing.assert_allclose(x[:, k], y, rtol=0, atol=1e-6 * (1 + np.abs(y).max()), err_msg=what)


def test_against_pinocchio():
    pin = pytest.importorskip("pinocchio", reason="Pinocchio is an optional test dependency")
    from treedyn.tools.peers import to_pinocchio

    models = [random_tree(12, 20 + s, floating_base=s == 1) for s in range(3)]
    try:
        from treedyn.tools.peers import example_robot_path

        models.append(td.load_urdf(example_robot_path("ur_description/urdf/ur5_robot.urdf")))
    except Exception:  # example-robot-data not installed
        pass
    for base in models:
        model = with_passive(base, springs=False)
        pm = to_pinocchio(model)
        pm.armature = np.asarray(model.armature)
        pd = pm.createData()
        rng = np.random.default_rng(1)
        for _ in range(3):
            q = td.random_configuration(model, rng)
            v, tau = rng.standard_normal(model.nv), rng.standard_normal(model.nv)
            Mp = pin.crba(pm, pd, q)
            Mp = np.triu(Mp) + np.triu(Mp, 1).T
            M = td.mass_matrix(model, q)
            assert_within_rounding(M, Mp, M, model.nv, what="M = Pinocchio's")
            for s in solvers_for(model):
                qdd = td.make_solver(s, model).forward_dynamics(q, v, tau)
                assert_same_accelerations(model, q, v, tau, qdd, pin.aba(pm, pd, q, v, tau), what=f"{s} = Pinocchio")


MJCF = """
<mujoco>
  <option gravity="0 0 -9.81" integrator="Euler"/>
  <worldbody>
    <body name="a" pos="0 0 1">
      <joint name="hinge" type="hinge" axis="0 1 0" armature="0.3" damping="0.7" stiffness="4" springref="0.2"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.04" mass="1.2"/>
      <body name="b" pos="0.3 0 0">
        <joint name="slide" type="slide" axis="1 0 0" armature="0.1" damping="0.4" stiffness="9" springref="-0.05"/>
        <geom type="box" size="0.05 0.04 0.03" mass="0.8"/>
        <body name="c" pos="0.1 0 0">
          <joint name="ball" type="ball" armature="0.05" damping="0.2" stiffness="2"/>
          <geom type="capsule" fromto="0 0 0 0 0 -0.25" size="0.03" mass="0.5"/>
        </body>
      </body>
    </body>
    <body name="free" pos="1 0 1">
      <freejoint name="root"/>
      <geom type="box" size="0.1 0.08 0.05" mass="2"/>
      <body name="d" pos="0.1 0 0">
        <joint name="hinge2" type="hinge" axis="0 0 1" armature="0.2" damping="0.3" stiffness="1.5"/>
        <geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.03" mass="0.4"/>
      </body>
    </body>
  </worldbody>
</mujoco>
"""


def test_against_mujoco():
    """MuJoCo's M (mj_fullM, armature in) and qacc (qfrc_passive in, no contact) on the same MJCF;
    the armature, damping, stiffness and springref set by hand on treedyn's model (the loader does
    not read them yet). The free joint's armature is left 0 (its MuJoCo dofs are world-frame
    linear velocities: the mapping below turns them but a diagonal does not stay diagonal)."""
    mujoco = pytest.importorskip("mujoco", reason="MuJoCo is an optional test dependency")
    import warnings

    from treedyn.tools.peers import MujocoFromFile

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = td.load_mjcf(MJCF)
    model.set_joint_armature("hinge", 0.3)
    model.set_joint_spring("hinge", 4.0, 0.7, rest=[0.2])
    model.set_joint_armature("slide", 0.1)
    model.set_joint_spring("slide", 9.0, 0.4, rest=[-0.05])
    model.set_joint_armature("ball", 0.05)
    model.set_joint_spring("ball", 2.0, 0.2)
    model.set_joint_armature("hinge2", 0.2)
    model.set_joint_spring("hinge2", 1.5, 0.3)
    peer = MujocoFromFile(model, MJCF)
    m, d = peer.m, peer.d
    m.dof_armature[:] = np.array([0.3, 0.1, 0.05, 0.05, 0.05, 0, 0, 0, 0, 0, 0, 0.2])
    m.dof_damping[:] = np.array([0.7, 0.4, 0.2, 0.2, 0.2, 0, 0, 0, 0, 0, 0, 0.3])
    m.jnt_stiffness[:] = [4.0, 9.0, 2.0, 0.0, 1.5]
    m.qpos_spring[:] = np.r_[0.2, -0.05, 1, 0, 0, 0, m.qpos0[7:14], 0.0]
    for flag in ("mjDSBL_PASSIVE", "mjDSBL_SPRING", "mjDSBL_DAMPER"):  # on again (by MuJoCo version)
        if hasattr(mujoco.mjtDisableBit, flag):
            m.opt.disableflags &= ~int(getattr(mujoco.mjtDisableBit, flag))
    mujoco.mj_setConst(m, d)
    rng = np.random.default_rng(4)
    aba = td.make_solver("aba", model)
    for _ in range(3):
        q = td.random_configuration(model, rng)
        v, tau = rng.standard_normal(model.nv), rng.standard_normal(model.nv)
        # the free joint's dofs differ (world-frame linear velocity): M = Tᵀ M_peer T
        M = td.mass_matrix(model, q)
        assert_within_rounding(M, peer.mass_matrix(q), M, model.nv, what="M = MuJoCo's")
        qdd_mj = peer.forward_dynamics(q, v, tau)
        _, _, tau_eff = reference(model, model, q, v, tau)
        assert_same_accelerations(model, q, v, tau_eff, aba.forward_dynamics(q, v, tau), qdd_mj, what="q̈ = MuJoCo's")


def test_the_specialised_aba_has_them(tmp_path, monkeypatch):
    """The generated ABA folds the armature in as a constant (it traces algorithms/aba.hpp on the
    model) and is handed τ + τ_p by the engine; a batch runs item by item (no lanes) then."""
    import treedyn.solvers.codegen as codegen

    if codegen.compiler() is None:
        pytest.skip("no C++ compiler on this machine")
    monkeypatch.setenv("TREEDYN_CACHE", str(tmp_path))
    base = random_tree(5, 9, joints=("revolute", "spherical"))
    model = with_passive(base, seed=9)
    gen = td.make_solver("aba", model, specialise=True)
    assert gen.specialised
    rng = np.random.default_rng(9)
    Q = np.stack([td.random_configuration(model, rng) for _ in range(3)])
    V, T = rng.standard_normal((3, model.nv)), rng.standard_normal((3, model.nv))
    out = gen.forward_dynamics(Q, V, T)
    for b in range(3):
        M, qdd, tau_eff = reference(model, base, Q[b], V[b], T[b])
        assert_same_accelerations(model, Q[b], V[b], tau_eff, out[b], qdd, what="generated q̈")
