"""td.simplify (featherstone-part3, "Simplifying the Model"): the simplified model has the original's
M(q), c(q, q̇) and forward dynamics with every built-in solver, on random trees of every joint kind
and on real robots, with fewer nonzero inertia parameters; the input is not changed and everything
else the model carries is kept.

Tolerances: the simplified model is a second computation of the same M and c from the same numbers
(the moved pieces rounded once per body they pass), compared as a peer is (conftest's
assert_agrees_with_peer: δ = 64·n·u of the magnitudes summed), and δ ≤ 1e-12 at every size here."""

import pickle
import warnings

import numpy as np
import pytest
from conftest import (
    assert_agrees_with_peer,
    assert_same_accelerations,
    assert_same_solution,
    assert_within_rounding,
    random_models,
    rounding_bound,
)

import treedyn as td
from treedyn.model.simplify import inertia_parameter_count, inertia_parameters, simplify
from treedyn.scenes import chain, random_tree
from treedyn.solvers import registry

MODELS = random_models() + [
    ("tree-fixed-joints", random_tree(16, 3, joints=("revolute", "fixed", "prismatic"))),
    ("bushy", random_tree(30, 9, branching=0.9)),
    ("chain-100", chain(100)),
]

#: (id, path in example-robot-data, floating base, mimic joints)
ROBOTS = [
    ("ur5", "ur_description/urdf/ur5_robot.urdf", False, "error"),
    ("panda", "panda_description/urdf/panda.urdf", False, "independent"),
    ("solo12", "solo_description/robots/solo12.urdf", True, "error"),
    ("talos", "talos_data/robots/talos_reduced.urdf", True, "independent"),
]


def load_robot(relative, floating_base, mimic):
    from treedyn.tools.peers import example_robot_path

    try:
        path = example_robot_path(relative)
    except (ImportError, FileNotFoundError) as e:
        pytest.skip(str(e))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # <gazebo>, <transmission>, inconsistent inertias
        return td.Model.from_urdf(path, floating_base=floating_base, mimic=mimic)


def builtin_solvers():
    """{name: class} of the solvers treedyn itself registers (plugins of other packages left out)."""
    return {n: c for n, c in registry.list_solver_classes().items() if c.__module__.startswith("treedyn.")}


def assert_same_dynamics(model, simple, rng, n_states=3):
    """M, c, q̈ (ABA) and M⁻¹ of the simplified model against the original's, as a peer's."""
    assert rounding_bound(model.nv) <= 1e-12  # the tolerance asked for, at most
    aba = td.make_solver("aba", simple)
    for _ in range(n_states):
        q = td.random_configuration(model, rng)
        v, tau = rng.standard_normal(model.nv), rng.standard_normal(model.nv)
        assert_agrees_with_peer(
            model,
            q,
            v,
            tau,
            M_peer=td.mass_matrix(simple, q),
            b_peer=td.bias_forces(simple, q, v),
            qdd_peer=aba.forward_dynamics(q, v, tau),
            Minv_peer=aba.inverse_inertia(q, np.eye(model.nv)),
            what="simplified",
        )


def snapshot(model):
    """Everything a model carries, each part pickled, to compare before and after."""
    return tuple(
        pickle.dumps(x)
        for x in (
            model.body_names,
            model.parents.tolist(),
            model.joints,
            model.body_joint_names,
            model.placements,
            model.inertias,
            inertia_parameters(model).tolist(),
            model.frames,
            model.geoms,
            model.joint_limits,
            model.gravity.tolist(),
            model.springs,
            model.loop_closures,
            model.couplings,
            model.force_elements,
            model.baumgarte,
            None if model.reference_configuration is None else model.reference_configuration.tolist(),
        )
    )


# ---------------------------------------------------------------- the same equation of motion


@pytest.mark.parametrize("name,model", MODELS, ids=[m[0] for m in MODELS])
def test_random_trees_keep_M_and_c_with_fewer_parameters(name, model):
    before = snapshot(model)
    simple = simplify(model)
    assert snapshot(model) == before  # the input is not changed
    assert_same_dynamics(model, simple, np.random.default_rng(7))
    assert inertia_parameter_count(simple) < inertia_parameter_count(model)
    # the moved inertia is gone from the bodies that carried it: every body whose joint lets its
    # mass through (revolute, spherical, universal, fixed) ends massless
    P = inertia_parameters(simple)
    for i, j in enumerate(simple.joints[1:], start=1):
        if isinstance(j, (td.Revolute, td.Spherical, td.Universal, td.Fixed)):
            assert P[i, 0] == 0.0, simple.body_names[i]
        if isinstance(j, td.Fixed):
            assert not P[i].any()
        if isinstance(j, td.Prismatic):
            assert not P[i, 4:].any()  # its whole rotational inertia went to the parent


def assert_every_solver_agrees(model, simple, rng):
    """Every built-in solver's q̈ on the simplified model against ABA's on the original. cfa-oee
    inverts each body's spatial inertia: on a body left without one it refuses, saying so."""
    q = td.random_configuration(model, rng)
    v, tau = rng.standard_normal(model.nv), rng.standard_normal(model.nv)
    ref = td.make_solver("aba", model).forward_dynamics(q, v, tau)
    singular = any(np.linalg.eigvalsh(simple.core.spatial_inertia(i)).min() <= 0 for i in range(1, simple.n_bodies))
    checked = 0
    for solver, cls in builtin_solvers().items():
        if cls.supports(model) is not None:
            continue
        if solver == "cfa-oee" and singular:
            with pytest.raises(td.SingularInertiaError, match="singular spatial inertia"):
                td.make_solver(solver, simple).forward_dynamics(q, v, tau)
            continue
        options = {"tol": 1e-13} if solver == "redmax-pcg" else {}
        qdd = td.make_solver(solver, simple, **options).forward_dynamics(q, v, tau)
        if solver == "redmax-pcg":  # an iterative solve to ‖r‖ ≤ 1e-13‖b‖
            M = td.mass_matrix(model, q)
            assert_same_solution(M, qdd, ref, tol=1e-13, what=f"{solver} q̈ (simplified) = aba q̈")
        else:
            assert_same_accelerations(model, q, v, tau, qdd, ref, what=f"{solver} q̈ (simplified) = aba q̈")
        checked += 1
    assert checked >= 4


@pytest.mark.parametrize("name,model", MODELS, ids=[m[0] for m in MODELS])
def test_every_builtin_solver_agrees_on_the_simplified_model(name, model):
    assert_every_solver_agrees(model, simplify(model), np.random.default_rng(3))


@pytest.mark.parametrize("relative,floating_base,mimic", [r[1:] for r in ROBOTS], ids=[r[0] for r in ROBOTS])
def test_robots_keep_M_c_and_every_solvers_dynamics(relative, floating_base, mimic):
    model = load_robot(relative, floating_base, mimic)
    before = snapshot(model)
    simple = simplify(model)
    assert snapshot(model) == before
    assert inertia_parameter_count(simple) < inertia_parameter_count(model)
    rng = np.random.default_rng(11)
    assert_same_dynamics(model, simple, rng)
    assert_every_solver_agrees(model, simple, rng)


def test_rnea_with_any_acceleration_and_external_forces_is_kept():
    model = random_tree(20, 5, floating_base=True)
    simple = simplify(model)
    rng = np.random.default_rng(0)
    q = td.random_configuration(model, rng)
    v, a = rng.standard_normal(model.nv), rng.standard_normal(model.nv)
    f_ext = rng.standard_normal((model.n_bodies, 6))
    tau = td.rnea(model, q, v, a, f_ext)
    scale = np.abs(td.mass_matrix(model, q)) @ np.abs(a) + np.abs(td.bias_forces(model, q, v, f_ext)) + np.abs(tau)
    assert_within_rounding(td.rnea(simple, q, v, a, f_ext), tau, scale, model.nv, what="rnea (simplified)")


def test_kinetic_energy_is_kept_and_potential_energy_moves_by_a_constant():
    """Mass moved onto the world is dropped: it sits on a fixed axis, so it only shifts V by a constant."""
    model = random_tree(12, 4, joints=("revolute", "spherical"))
    simple = simplify(model)
    rng = np.random.default_rng(1)
    shifts = []
    for _ in range(4):
        q, v = td.random_configuration(model, rng), rng.standard_normal(model.nv)
        T = td.kinetic_energy(model, q, v)
        assert_within_rounding(td.kinetic_energy(simple, q, v), T, abs(T), model.nv, what="T (simplified)")
        shifts.append(td.potential_energy(model, q) - td.potential_energy(simple, q))
    scale = max(abs(td.potential_energy(model, q)), 1.0)
    assert_within_rounding(shifts, np.full(4, shifts[0]), scale, model.nv, what="V − V_simplified constant")


def test_floating_base_keeps_its_centre_of_mass():
    """Nothing crosses a free joint to the world: the moving mass and its centre stay."""
    model = random_tree(15, 8, floating_base=True)
    simple = simplify(model)
    q = td.random_configuration(model, np.random.default_rng(2))
    c, J = td.center_of_mass(model, q, jacobian=True)
    cs, Js = td.center_of_mass(simple, q, jacobian=True)
    assert_within_rounding(cs, c, np.abs(c).max() + 1, model.nv, what="centre of mass (simplified)")
    assert_within_rounding(Js, J, np.abs(J).max(), model.nv, what="its Jacobian (simplified)")


# ---------------------------------------------------------------- the pieces each joint lets through


def one_joint(joint, inertia, placement=None, parent_inertia=None):
    m = td.Model()
    m.add_body("base", None, td.Free(), inertia=parent_inertia or td.Inertia(2.0, (0.1, 0.2, 0.3), np.eye(3)))
    m.add_body("body", "base", joint, placement or td.Transform.from_rpy((0.1, 0.2, 0.3), (0.3, -0.2, 0.1)), inertia)
    return m


def test_revolute_joint_moves_the_mass_the_first_moment_along_the_axis_and_one_moment():
    I = td.Inertia(1.5, (0.1, 0.2, 0.3), np.diag([0.04, 0.05, 0.06]))
    simple = simplify(one_joint(td.Revolute((0, 0, 1)), I))
    m, h, I_O = inertia_parameters(simple)[2][0], inertia_parameters(simple)[2][1:4], inertia_parameters(simple)[2][4:]
    assert m == 0.0 and h[2] == 0.0 and h[0] == 1.5 * 0.1 and h[1] == 1.5 * 0.2  # the slides' point P
    assert np.count_nonzero(I_O) == 5  # xx or yy (about the axis zz stays: Ī s = 0 forbids moving it)
    assert I_O[5] == simple.inertias[2].inertia_origin[2, 2] != 0.0


def test_prismatic_joint_moves_the_whole_rotational_inertia_and_keeps_mass_and_first_moment():
    I = td.Inertia(1.5, (0.1, 0.2, 0.3), np.diag([0.04, 0.05, 0.06]))
    P = inertia_parameters(simplify(one_joint(td.Prismatic((1, 1, 0)), I)))
    assert P[2, 0] == 1.5 and np.array_equal(P[2, 1:4], 1.5 * np.array([0.1, 0.2, 0.3])) and not P[2, 4:].any()


@pytest.mark.parametrize("joint", [td.Spherical(), td.Universal((1, 0, 0), (0, 1, 1))], ids=["spherical", "universal"])
def test_spherical_and_universal_joints_move_a_point_mass_at_the_centre(joint):
    I = td.Inertia(1.5, (0.1, 0.2, 0.3), np.diag([0.04, 0.05, 0.06]))
    model = one_joint(joint, I)
    P0, P = inertia_parameters(model), inertia_parameters(simplify(model))
    assert P[2, 0] == 0.0 and np.array_equal(P[2, 1:], P0[2, 1:])


def test_fixed_joint_moves_everything_and_a_joint_to_the_world_drops_it():
    m = td.Model()
    m.add_body("a", None, td.Revolute((0, 1, 0)), inertia=td.Inertia(1.0, (0, 0.3, 0), np.diag([0.1, 0.2, 0.1])))
    m.add_body("b", "a", td.Fixed(), td.Transform(translation=(0, 0, 0.5)), td.Inertia(0.5, (0.1, 0, 0)))
    m.add_body("c", "a", td.Revolute((1, 0, 0)), td.Transform(translation=(0, 0, 1.0)))
    simple = simplify(m)
    P = inertia_parameters(simple)
    assert not P[2].any()
    # body a pivots on a fixed axis through the world's origin: its mass (b's included) and its
    # first moment along the axis went to the world and are gone
    assert P[1, 0] == 0.0 and P[1, 2] == 0.0
    assert_same_dynamics(m, simple, np.random.default_rng(0))


def test_free_joint_moves_nothing():
    m = td.Model()
    m.add_body("a", None, td.Free(), inertia=td.Inertia(1.0, (0.1, 0.2, 0.3), np.diag([0.1, 0.2, 0.15])))
    np.testing.assert_array_equal(inertia_parameters(simplify(m)), inertia_parameters(m))


# ---------------------------------------------------------------- the model around the inertias


def test_everything_else_the_model_carries_is_kept():
    m = random_tree(8, 2, joints=("revolute", "prismatic"))
    m.add_frame("tip", "body8", td.Transform(translation=(0, 0, 0.1)))
    m.add_geom(None, td.Plane(), friction=0.5)
    m.add_geom("body3", td.Sphere(0.05), td.Transform(translation=(0.1, 0, 0)), name="ball")
    m.set_joint_spring(2, stiffness=3.0, damping=0.2)
    m.set_body_damping(4, 0.1)
    m.add_spring("body1", (0, 0, 0.1), "body5", (0.1, 0, 0), stiffness=10.0)
    m.add_point_force("body6", (0, 0, 0.1), (0, 1.0, 0))
    m.add_loop_closure("body2", "body7", td.Spherical())
    revolute = next(i for i, j in enumerate(m.joints) if isinstance(j, td.Revolute))
    m.add_coupling(revolute, leader=None, polycoef=(0.1,))
    limited = next(i for i, j in enumerate(m.joints) if isinstance(j, td.Prismatic))
    m.set_joint_limits(limited, -0.2, 0.3)
    m.baumgarte = 5.0
    m.reference_configuration = td.random_configuration(m, np.random.default_rng(0))
    m.source = "a test"
    before = snapshot(m)
    s = simplify(m)
    assert snapshot(m) == before
    for k, (x, y) in enumerate(zip(before, snapshot(s))):
        if k not in (5, 6):  # the inertias, and their parameters, are what changes
            assert x == y, k
    assert s.source == "a test" and s.nq == m.nq and s.nv == m.nv
    assert s.reference_configuration is not m.reference_configuration
    q = m.reference_configuration
    np.testing.assert_array_equal(s.loop_residual(q), m.loop_residual(q))
    np.testing.assert_array_equal(td.collide(s, q).depths, td.collide(m, q).depths)
    # the RedMax step, with its springs, damping, forces and loop closure, is the same step
    state = td.State(q=q, v=np.random.default_rng(1).standard_normal(m.nv))
    t0, t1 = (td.make_solver("redmax-direct", x, h=1e-3).terms(state) for x in (m, s))
    for k in ("lhs", "rhs"):
        assert_within_rounding(t1[k], t0[k], np.abs(t0[k]), m.nv, what=f"RedMax {k} (simplified)")


def test_a_singular_tree_stays_singular_and_says_so():
    m = td.Model()
    m.add_body("a", None, td.Revolute((0, 0, 1)), inertia=td.Inertia.point(0.0))
    s = simplify(m)
    with pytest.raises(td.SingularInertiaError, match="joint of body 'a'"):
        td.make_solver("aba", s).forward_dynamics([0.0], [0.0], [1.0])
    # a pendulum hung on its CoM axis: all of it but the moment about the axis goes to the world
    p = td.Model()
    p.add_body("p", None, td.Revolute((0, 0, 1)), inertia=td.Inertia(1.0, (0, 0, 0.2), np.diag([0.1, 0.1, 0.0])))
    with pytest.raises(td.SingularInertiaError):
        td.make_solver("aba", simplify(p)).forward_dynamics([0.0], [0.0], [1.0])


def test_readers_of_the_inertias_work_or_refuse_clearly():
    model = random_tree(12, 4, joints=("revolute", "spherical"))
    simple = simplify(model)
    massless = [I for I in simple.inertias[1:] if I.mass == 0 and I.first_moment.any()]
    assert massless  # the case that has no centre of mass
    with pytest.raises(ValueError, match="no centre of mass"):
        _ = massless[0].com
    with pytest.raises(ValueError, match="no centre of mass"):
        _ = massless[0].inertia
    with pytest.raises(ValueError, match="MJCF's <inertial> cannot say it"):
        simple.to_mjcf()
    # all of this tree's mass went to the world: the moving bodies have first moments and no mass
    q = td.random_configuration(model, np.random.default_rng(0))
    assert sum(I.mass for I in simple.inertias) == 0.0
    with pytest.raises(ValueError, match="no centre of mass"):
        td.center_of_mass(simple, q)
    assert np.isfinite(td.potential_energy(simple, q))  # −g · Σ first moments: defined all the same
    pytest.importorskip("pinocchio")
    from treedyn.tools.peers import to_pinocchio

    with pytest.raises(ValueError, match="Pinocchio keeps .mass, centre of mass, inertia."):
        to_pinocchio(simple)


def test_pinocchio_agrees_where_it_can_hold_the_inertias():
    """Pinocchio keeps (m, c, I_c): a simplified tree whose bodies all keep their mass — prismatic
    joints, which move rotational inertia only — goes to it through its dynamic parameters (not
    checked for physical consistency); its M, c and q̈ agree."""
    pin = pytest.importorskip("pinocchio")
    from treedyn.tools.peers import to_pinocchio

    model = random_tree(12, 6, joints=("prismatic",))
    simple = simplify(model)
    assert all(I.mass > 0 for I in simple.inertias[1:]) and inertia_parameter_count(simple) < inertia_parameter_count(
        model
    )
    pm = to_pinocchio(simple)
    pd = pm.createData()
    rng = np.random.default_rng(5)
    for _ in range(3):
        q = td.random_configuration(model, rng)
        v, tau = rng.standard_normal(model.nv), rng.standard_normal(model.nv)
        Mp = pin.crba(pm, pd, q)
        Mp = np.triu(Mp) + np.triu(Mp, 1).T
        b = pin.rnea(pm, pd, q, v, np.zeros(model.nv))
        assert_agrees_with_peer(
            model, q, v, tau, Mp, b, pin.aba(pm, pd, q, v, tau).copy(), what="Pinocchio (simplified)"
        )


def test_simplify_takes_a_model():
    with pytest.raises(TypeError, match="treedyn.Model"):
        simplify("model")
    assert td.simplify is simplify and td.inertia_parameter_count is inertia_parameter_count
