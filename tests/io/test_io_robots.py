"""Real robots: URDFs of example-robot-data loaded by treedyn and by Pinocchio's own parser agree
on M(q), the bias forces, forward dynamics and M⁻¹ at random states (to 1e-9 relative).

Skipped when pinocchio or example-robot-data is not installed (optional test extras)."""

import warnings

import numpy as np
import pytest
from conftest import assert_peer_agrees_at_random_states, assert_same_solution, assert_within_rounding

import treedyn as td

pin = pytest.importorskip("pinocchio")
from treedyn.tools.peers import PinocchioFromFile, example_robot_path  # noqa: E402

#: (id, path in example-robot-data's robots folder, floating base, mimic joints, what it covers)
ROBOTS = [
    (
        "panda",
        "panda_description/urdf/panda.urdf",
        False,
        "independent",
        "7-DoF arm, prismatic fingers with an unaligned axis, a <mimic> joint made independent (M and b "
        "are the same coupled or not: the coupling is a constraint)",
    ),
    ("xarm7", "xarm_description/urdf/xarm7.urdf", False, "error", "7-DoF arm, root link 'world'"),
    ("ur5", "ur_description/urdf/ur5_robot.urdf", False, "error", "6-DoF arm, fixed tool frames"),
    (
        "kinova",
        "kinova_description/robots/kinova.urdf",
        False,
        "error",
        "6-DoF arm with continuous joints (Pinocchio: (cos, sin))",
    ),
    ("solo12", "solo_description/robots/solo12.urdf", True, "error", "quadruped, floating base"),
    (
        "anymal-c",
        "anymal_c_simple_description/urdf/anymal.urdf",
        True,
        "error",
        "quadruped, floating base, unaligned axes, physically inconsistent inertias",
    ),
    ("allegro", "allegro_hand_description/urdf/allegro_right_hand.urdf", False, "error", "16-DoF hand"),
    ("talos", "talos_data/robots/talos_reduced.urdf", True, "independent", "humanoid, floating base"),
    (
        "tiago",
        "tiago_description/robots/tiago_no_hand.urdf",
        False,
        "error",
        "mobile manipulator: prismatic torso, continuous wheels",
    ),
    ("ur5-floating", "ur_description/urdf/ur5_robot.urdf", True, "error", "a fixed arm made floating"),
]


def robot_path(relative):
    try:
        return example_robot_path(relative)
    except FileNotFoundError as e:
        pytest.skip(str(e))


def load(relative, floating_base, mimic):
    path = robot_path(relative)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # <gazebo>, <transmission>, inconsistent inertias
        model = td.Model.from_urdf(path, floating_base=floating_base, mimic=mimic)
    return model, PinocchioFromFile(model, path, floating_base)


@pytest.mark.parametrize("relative,floating_base,mimic", [r[1:4] for r in ROBOTS], ids=[r[0] for r in ROBOTS])
def test_robot_agrees_with_pinocchio(relative, floating_base, mimic):
    model, peer = load(relative, floating_base, mimic)
    assert (model.nv, model.nq) == (peer.pm.nv, model.nq) and model.nv == peer.nv_peer
    assert sorted(model.joint_names) == sorted(peer.pm.names[1:])
    assert_peer_agrees_at_random_states(model, peer, np.random.default_rng(2024), n=5, what="Pinocchio")


def test_joint_coordinates_are_found_by_name_not_by_position():
    """Pinocchio numbers Talos' joints in its own order; q_index/v_index locate ours."""
    model, peer = load("talos_data/robots/talos_reduced.urdf", True, "independent")
    ours = [model.v_index(n) for n in model.joint_names]
    theirs = [peer.pm.joints[peer.pm.getJointId(n)].idx_v for n in model.joint_names]
    assert ours == sorted(ours) and theirs != ours  # the two orders differ
    q = td.neutral(model)
    q[model.q_index("arm_left_4_joint")] = -1.2
    qp = peer.q(q)
    assert qp[peer.pm.joints[peer.pm.getJointId("arm_left_4_joint")].idx_q] == -1.2
    assert len(theirs) == len(set(theirs))


def test_continuous_joints_map_to_cos_sin():
    model, peer = load("kinova_description/robots/kinova.urdf", False, "error")
    assert peer.nq_peer > model.nq  # Pinocchio's unbounded joints have 2 coordinates, ours 1
    q = td.random_configuration(model, np.random.default_rng(0))
    qp = peer.q(q)
    for name in model.joint_names:
        j = peer.pm.joints[peer.pm.getJointId(name)]
        if j.nq == 2:
            th = q[model.q_index(name)]
            assert_within_rounding(qp[j.idx_q : j.idx_q + 2], [np.cos(th), np.sin(th)], 1, 1, what=name)


def test_panda_mimic_is_an_error_on_request():
    from treedyn.io._xml import ModelFileError

    path = robot_path("panda_description/urdf/panda.urdf")
    with pytest.raises(ModelFileError, match=r"panda\.urdf, line \d+: joint 'panda_finger_joint2' has a <mimic"):
        td.Model.from_urdf(path, mimic="error")


MIMIC_ROBOTS = [
    ("panda", "panda_description/urdf/panda.urdf", False),
    ("baxter", "baxter_description/urdf/baxter.urdf", False),
    ("pr2", "pr2_description/urdf/pr2.urdf", False),
    ("tiago-pro", "tiago_pro_description/robots/tiago_pro.urdf", False),
]


@pytest.mark.parametrize(
    "relative,rows",
    [
        ("talos_data/robots/talos_reduced.urdf", 0),
        ("talos_data/robots/talos_full_v2.urdf", 12),
        ("romeo_description/urdf/romeo.urdf", 22),  # massless finger links: no dynamics, only loading
    ],
)
def test_humanoids_with_grippers_load_by_default_and_keep_their_couplings(relative, rows):
    """Talos' reduced model has <mimic> only on fixed joints (nothing to couple); its full model and
    Romeo couple their gripper and hand joints, some to leaders later in the file (Pinocchio 3's
    mimic joints refuse these files: "the parent joint of the mimic joint is not in the kinematic
    tree"; a constraint row does not care about the order)."""
    path = robot_path(relative)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = td.Model.from_urdf(path, floating_base=True)
    assert model.n_constraint_rows == rows
    if "talos_full" not in relative:
        return
    solver = td.make_solver("drumwright", model)
    rng = np.random.default_rng(3)
    q = td.constraints.project_positions(solver, td.random_configuration(model, rng))
    v = td.constraints.project_velocities(solver, q, rng.standard_normal(model.nv))
    qdd = td.constrained_forward_dynamics(solver, q, v, rng.standard_normal(model.nv), stabilization=None)
    G, _, Gdv = td.constraints.constraint_terms(model, q, v)
    assert model.constraint_residual(q) <= 1e-10
    # G q̈ = −Ġq̇ (= 0: the couplings are linear) to the rounding of the Delassus solve
    assert_within_rounding(G @ qdd, -Gdv, np.abs(G).max() * np.abs(qdd).max(), model.nv, what="G q̈ = 0")


@pytest.mark.parametrize("relative,floating_base", [r[1:] for r in MIMIC_ROBOTS], ids=[r[0] for r in MIMIC_ROBOTS])
def test_mimic_couplings_agree_with_pinocchios_mimic_joints(relative, floating_base):
    """Loaded by default, each <mimic> joint is a coupling row; Pinocchio's mimic joints have no
    coordinate of their own (v = S v_r). The coupled dynamics are Pinocchio's reduced ones:
    SᵀMS = M_r, Sᵀb = b_r, and the constrained q̈ = S M_r⁻¹ Sᵀ(τ − D v − b) (D: the joints' damping)."""
    path = robot_path(relative)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = td.Model.from_urdf(path, floating_base=floating_base)
    assert model.couplings and all(len(c.follower) == len(c.leader) == 1 for c in model.couplings)
    args = (pin.JointModelFreeFlyer(),) if floating_base else ()
    try:
        pm = pin.buildModelFromUrdf(path, *args, mimic=True)
    except TypeError:
        pytest.skip("this Pinocchio has no mimic joints")
    pm.gravity = pin.Motion(np.r_[model.gravity, 0.0, 0.0, 0.0])
    pd = pm.createData()
    names = model.body_joint_names
    follows = {c.follower[0][0]: (c.leader[0][0], c.polycoef) for c in model.couplings}
    assert pm.nv == model.nv - len(follows)
    rng = np.random.default_rng(5)
    S = np.zeros((model.nv, pm.nv))
    q = td.random_configuration(model, rng)
    q_r = np.zeros(pm.nq)
    for i, j in enumerate(model.joints):
        if j.nv and i not in follows:
            pj = pm.joints[pm.getJointId(names[i])]
            assert pj.nv == j.nv and pj.nq in (j.nq, j.nq + 1)
            S[model.v_indices[i] : model.v_indices[i] + j.nv, pj.idx_v : pj.idx_v + j.nv] = np.eye(j.nv)
            x = q[model.q_indices[i] : model.q_indices[i] + j.nq]
            q_r[pj.idx_q : pj.idx_q + pj.nq] = x if pj.nq == j.nq else (np.cos(x[0]), np.sin(x[0]))  # continuous
    for f, (l, (offset, mult)) in follows.items():  # q_f = multiplier·q_l + offset
        S[model.v_indices[f]] = mult * S[model.v_indices[l]]
        q[model.q_indices[f]] = mult * q[model.q_indices[l]] + offset
    assert model.constraint_residual(q) <= 1e-15
    v_r, tau = rng.standard_normal(pm.nv), rng.standard_normal(model.nv)
    v = S @ v_r
    M, b = td.mass_matrix(model, q), td.bias_forces(model, q, v)
    M_r = pin.crba(pm, pd, q_r)
    M_r = np.triu(M_r) + np.triu(M_r, 1).T
    b_r = pin.rnea(pm, pd, q_r, v_r, np.zeros(pm.nv))
    assert_within_rounding(S.T @ M @ S, M_r, np.abs(M_r).max(), model.nv, what="SᵀMS = M_r")
    assert_within_rounding(S.T @ b, b_r, np.abs(S.T) @ np.abs(b) + np.abs(b_r), model.nv, what="Sᵀb = b_r")
    qdd = td.constrained_forward_dynamics(td.make_solver("drumwright", model), q, v, tau)
    qdd_r = np.linalg.lstsq(S, qdd, rcond=None)[0]
    assert_within_rounding(S @ qdd_r, qdd, np.abs(qdd).max(), model.nv, what="q̈ = S q̈_r")
    tau_p = -model.joint_damping * v  # the URDF's <dynamics damping>, in treedyn's q̈ (Pinocchio's aba leaves it out)
    assert_same_solution(
        M_r, qdd_r, np.linalg.solve(M_r, S.T @ (tau + tau_p) - b_r), what="q̈_r = Pinocchio's reduced q̈"
    )


def _lowest(model, q):
    """The lowest world height of the robot's geoms at q (their vertices, corners, rims, caps)."""
    from treedyn import _core

    R, p = _core.forward_kinematics(model.core, q)
    low = np.inf
    ring = np.c_[np.cos(np.linspace(0, 2 * np.pi, 73)), np.sin(np.linspace(0, 2 * np.pi, 73)), np.zeros(73)]
    for g in model.geoms:
        s = g.shape
        if isinstance(s, td.Plane):
            continue
        if isinstance(s, td.ConvexMesh):
            pts = s.vertices
        elif isinstance(s, td.Box):
            pts = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]) * s.half_extents
        elif isinstance(s, td.Cylinder):
            pts = np.r_[s.radius * ring + [0, 0, s.half_length], s.radius * ring - [0, 0, s.half_length]]
        else:  # sphere, capsule: their centres, less the radius below
            h = getattr(s, "half_length", 0.0)
            pts = np.array([[0, 0, h], [0, 0, -h]])
        Rg, pg = (
            R[g.body] @ np.asarray(g.placement.rotation),
            R[g.body] @ np.asarray(g.placement.translation) + p[g.body],
        )
        z = (pts @ Rg.T + pg)[:, 2].min() - (s.radius if isinstance(s, (td.Sphere, td.Capsule)) else 0.0)
        low = min(low, z)
    return low


def _standing_drop(relative, steps, pose, kp):
    """The robot (floating base, its URDF collisions) above a floor, its lowest geom 1 cm up, held
    at ``pose`` ({joint suffix: angle}) by a PD on its joints, dropped for ``steps`` of 1 ms:
    (model, base height at the end, deepest contact)."""

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = td.Model.from_urdf(robot_path(relative), floating_base=True)
    assert model.geoms and not model.dropped_geoms
    model.add_geom(0, td.Plane(), name="floor")
    q = model.neutral_configuration() if hasattr(model, "neutral_configuration") else None
    if q is None:
        q = np.zeros(model.nq)
        q[6] = 1.0
    joints = [n for n in model.joint_names if n != "root_joint"]
    ref = np.array([pose(n) for n in joints])
    qi, vi = [model.q_index(n) for n in joints], [model.v_index(n) for n in joints]
    q[qi] = ref
    q[2] -= _lowest(model, q) - 0.01
    if steps == 0:
        return model, q, 0.0
    sim = td.ContactSimulator(model, 1e-3)
    state, deepest = td.State(q, np.zeros(model.nv)), 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a few solves end at the stall rule (residuals ~1e-5 m/s)
        for _ in range(steps):
            tau = np.zeros(model.nv)
            tau[vi] = kp * (ref - state.q[qi]) - 0.02 * kp * state.v[vi]
            deepest = max(deepest, sim.step(state, tau).contacts.depths.max(initial=0.0))
    return model, state.q[2], deepest


def test_solo12_stands_on_its_collision_meshes():
    """Solo-12's 17 collision meshes (their convex hulls) on a floor: dropped from 1 cm with its
    legs held bent, it stands (base above 0.1 m after 2 s) and sinks less than 1 mm."""
    pytest.importorskip("coal")

    def pose(name):
        s = 1.0 if name.startswith(("FL", "FR")) else -1.0
        return {"HAA": 0.0, "HFE": 0.8 * s, "KFE": -1.6 * s}[name[-3:]]

    model, z, deepest = _standing_drop("solo_description/robots/solo12.urdf", 2000, pose, kp=5.0)
    assert len(model.geoms) == 18  # 17 meshes and the floor
    assert z > 0.1 and deepest < 1e-3


@pytest.mark.parametrize(
    "relative", ["talos_data/robots/talos_reduced.urdf", "anymal_c_simple_description/urdf/anymal.urdf"]
)
def test_big_robots_load_their_collisions_and_touch_the_floor(relative):
    """TALOS (meshes) and ANYmal C (boxes, cylinders): every <collision> becomes a geom; lowered
    onto the floor (its lowest point 1 cm up, then 5 mm down) only the geoms of the lowest links
    touch it, and within 5 mm."""
    import xml.etree.ElementTree as ET

    model, q, _ = _standing_drop(relative, 0, lambda name: 0.0, kp=0.0)
    n = len(ET.parse(robot_path(relative)).getroot().findall("./link/collision"))
    assert len(model.geoms) == n + 1
    q[2] -= 0.015
    c = td.collide(model, q)
    assert len(c) > 0 and c.depths.max() == pytest.approx(0.005, abs=1e-9)


def test_joint_dynamics_false_steps_as_pinocchios_aba():
    """Z1's URDF gives every joint <dynamics damping> (1-2 N m s/rad), which treedyn's q̈ applies and Pinocchio's
    aba does not (it reads them into model.damping only): with joint_dynamics=False treedyn's q̈ is pin.aba's on
    Pinocchio's own parse of the file, to rounding (the joint orders agree on this chain); with the default the
    damping is there: q̈ differs by M⁻¹ D q̇."""
    path = robot_path("z1_description/urdf/z1.urdf")
    pm = pin.buildModelFromUrdf(path)
    pd = pm.createData()
    assert np.all(pm.damping > 0)
    rng = np.random.default_rng(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", td.io.IgnoredElementWarning)
        bare, damped = td.Model.from_urdf(path, joint_dynamics=False), td.Model.from_urdf(path)
    assert bare.joint_names == list(pm.names)[1:]
    for _ in range(5):
        q, v, tau = rng.uniform(-1, 1, (3, bare.nv))
        a = td.make_solver("aba", bare).forward_dynamics(q, v, tau)
        ap = pin.aba(pm, pd, q, v, tau)
        assert_within_rounding(a, ap, 1.0 + np.abs(ap).max(), bare.nv, what="q̈ without the joints' dynamics")
        a_damped = td.make_solver("aba", damped).forward_dynamics(q, v, tau)
        np.testing.assert_allclose(a_damped, pin.aba(pm, pd, q, v, tau - pm.damping * v), rtol=1e-9, atol=1e-9)
    with pytest.raises(TypeError, match="joint_dynamics"):
        td.Model.from_urdf(path, joint_dynamics="no")


@pytest.mark.parametrize(
    "relative",
    [
        "talos_data/robots/talos_reduced.urdf",
        "tiago_description/robots/tiago.urdf",
        "baxter_description/urdf/baxter.urdf",
    ],
)
def test_pinocchio_joint_order_lines_up_with_pinocchios_vectors(relative):
    """joint_order="pinocchio" (a link's children by their joints' names, as urdfdom keeps them) numbers the
    joints as Pinocchio's buildModelFromUrdf (file order does not, on these robots); where no joint is continuous
    (Pinocchio's (cos, sin)) the same q, v and τ go to both unchanged: M(q) and, without the joints' dynamics,
    aba's q̈ agree to rounding, floating base included."""
    path = robot_path(relative)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = td.Model.from_urdf(
            path, floating_base=True, mimic="independent", joint_dynamics=False, joint_order="pinocchio"
        )
        in_file_order = td.Model.from_urdf(path, floating_base=True, mimic="independent")
    pm = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer())
    names = list(pm.names)[2:]  # (universe, the free flyer)
    assert model.joint_names[1:] == names and in_file_order.joint_names[1:] != names
    if pm.nq != model.nq:  # (continuous joints: Pinocchio's q has two numbers each)
        return
    pd = pm.createData()
    rng = np.random.default_rng(1)
    q = pin.randomConfiguration(pm, -np.ones(pm.nq), np.ones(pm.nq))
    v, tau = rng.uniform(-1, 1, (2, model.nv))
    M = td.mass_matrix(model, q)
    Mp = pin.crba(pm, pd, q)
    Mp = np.triu(Mp) + np.triu(Mp, 1).T
    assert_within_rounding(M, Mp, 1.0 + np.abs(Mp).max(), model.nv, what="M(q) in Pinocchio's joint order")
    a = td.make_solver("aba", model).forward_dynamics(q, v, tau)
    ap = pin.aba(pm, pd, q, v, tau)
    assert_within_rounding(a, ap, 1.0 + np.abs(ap).max(), model.nv, what="q̈ in Pinocchio's joint order")
