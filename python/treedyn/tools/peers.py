"""The same model in the peers we check against and measure with (optional dependencies).

``to_pinocchio(model)`` builds a ``pinocchio.Model`` with the same bodies, joints, placements and
inertias; q and v layouts are the same (Pinocchio's: quaternions (x, y, z, w), free-flyer velocity
(linear, angular) in body coordinates), so vectors pass unchanged. Fixed joints are folded into
their parent, as Pinocchio has no fixed joint.

``PinocchioFromFile(model, urdf)`` and ``MujocoFromFile(model, mjcf)`` are the other check: the
peer's *own* parser reads the file treedyn loaded, and its M(q), bias forces and forward dynamics
are mapped into treedyn's coordinates (joints matched by name; the joints whose parametrisations
differ — Pinocchio's (cos, sin) and planar joints, MuJoCo's quaternion order and world-frame
free-joint velocity — mapped explicitly). ``example_robot_path`` finds a robot of the
``example-robot-data`` package, ``example_robot_mjcf`` a MuJoCo file of one of its URDFs (MuJoCo's
own import, on a floor, with position actuators): the robots with convex-mesh collision geoms that the
contact benchmarks and tests run against ``mj_step``.
"""

from __future__ import annotations

import numpy as np

from ..algorithms.layout import CoordinateMap
from ..model import Fixed, Free, Model, Prismatic, Revolute, Spherical, Universal

__all__ = [
    "to_pinocchio",
    "pinocchio_forces",
    "PeerCoordinates",
    "PinocchioFromFile",
    "MujocoFromFile",
    "example_robot_path",
    "example_robot_mjcf",
    "MESH_ROBOTS",
    "gymnasium_asset_path",
]


def to_pinocchio(model: Model):
    return _build_pinocchio(model)[0]


def pinocchio_forces(model: Model, f_ext):
    """Our f_ext ((n_bodies, 6), [n; f] in body frames) as Pinocchio's list of joint forces
    (linear, angular) in joint frames, summing the bodies a joint carries."""
    import pinocchio as pin

    pm, carrier = _build_pinocchio(model)
    out = [pin.Force.Zero() for _ in range(pm.njoints)]
    for i in range(1, model.n_bodies):
        jid, pose = carrier[i]
        f = np.asarray(f_ext[i], dtype=float)
        out[jid] = out[jid] + pose.act(pin.Force(f[3:], f[:3]))
    return out


def _pinocchio_inertia(pin, inertia, body: str):
    """pin.Inertia of a treedyn.Inertia. Pinocchio keeps (m, c, I_c): an inertia given as parameters
    (m, h, Ī_O; a simplified model's, td.simplify) goes through its dynamic parameters when m > 0 (which
    it does not check for physical consistency); m = 0 with h ≠ 0 has no centre of mass and no
    Pinocchio inertia (its dynamic parameters divide h by m): refused."""
    if inertia._given != "parameters":
        return pin.Inertia(inertia.mass, inertia.com, inertia.inertia)
    m, h, I = inertia.mass, inertia.first_moment, inertia.inertia_origin
    if m == 0 and np.any(h):
        raise ValueError(
            f"to_pinocchio: body {body!r} has mass 0 and first moment h = {h.tolist()} ≠ 0 (a simplified model, "
            "td.simplify): Pinocchio keeps (mass, centre of mass, inertia) and cannot hold it; use the model before "
            "simplifying"
        )
    # Pinocchio's order: m, h, then Ī_O's xx, xy, yy, xz, yz, zz (InertiaTpl::FromDynamicParameters)
    v = np.array([m, *h, I[0, 0], I[0, 1], I[1, 1], I[0, 2], I[1, 2], I[2, 2]])
    return pin.Inertia.FromDynamicParameters(v) if m > 0 else pin.Inertia(0.0, np.zeros(3), I)


def _build_pinocchio(model: Model):
    import pinocchio as pin

    pm = pin.Model()
    pm.gravity = pin.Motion(np.r_[model.gravity, 0.0, 0.0, 0.0])
    parents, placements, inertias = model.parents, model.placements, model.inertias
    # body i -> (pinocchio joint id carrying it, pose of body i's frame in that joint's frame)
    carrier = {0: (0, pin.SE3.Identity())}
    for i in range(1, model.n_bodies):
        j = model.joints[i]
        place = pin.SE3(placements[i].rotation, placements[i].translation)
        pj, pose = carrier[parents[i]]
        place = pose * place
        inertia = _pinocchio_inertia(pin, inertias[i], model.body_names[i])
        if isinstance(j, Fixed):
            pm.appendBodyToJoint(pj, inertia, place)
            carrier[i] = (pj, place)
            continue
        if isinstance(j, Revolute):
            jm = _aligned(pin, "Revolute", j.axis)
        elif isinstance(j, Prismatic):
            jm = _aligned(pin, "Prismatic", j.axis)
        elif isinstance(j, Spherical):
            jm = pin.JointModelSpherical()
        elif isinstance(j, Free):
            jm = pin.JointModelFreeFlyer()
        elif isinstance(j, Universal):
            jm = pin.JointModelUniversal(j.axis1, j.axis2)
        else:
            raise TypeError(f"no Pinocchio joint for {j!r}")
        jid = pm.addJoint(pj, jm, place, model.body_names[i])
        pm.appendBodyToJoint(jid, inertia, pin.SE3.Identity())
        carrier[i] = (jid, pin.SE3.Identity())
    return pm, carrier


def _aligned(pin, kind, axis):
    """Pinocchio's joint about a coordinate axis (RX, RY, RZ, PX, ...) when ``axis`` is one, as its
    URDF parser chooses (its fastest joints), else the unaligned joint."""
    for k, name in enumerate("XYZ"):
        if np.array_equal(axis, np.eye(3)[k]):
            return getattr(pin, f"JointModel{kind[0]}{name}")()
    return getattr(pin, f"JointModel{kind}Unaligned")(axis)


# --------------------------------------------------------------------------------------------
# The same file loaded by the peer itself (an independent check of treedyn.io)


class PeerCoordinates(CoordinateMap):
    """treedyn's coordinates of a model loaded from a file ↔ a peer's coordinates for the same
    file loaded by the peer's own parser (treedyn.algorithms.layout.CoordinateMap's blocks), joints
    matched by name (the peer may number them differently), and the peer's quantities in treedyn's
    coordinates."""

    # the peer's quantities in treedyn's coordinates
    def mass_matrix(self, q) -> np.ndarray:
        T = self.T(q)
        return T.T @ self._peer_M(q) @ T

    def bias_forces(self, q, v) -> np.ndarray:
        T = self.T(q)
        vp = T @ v
        return T.T @ (self._peer_bias(q, vp) + self._peer_M(q) @ self.Tdot_v(q, v))

    def forward_dynamics(self, q, v, tau) -> np.ndarray:
        T = self.T(q)
        tau_p = np.linalg.solve(T.T, tau)
        a_p = self._peer_aba(q, T @ v, tau_p)
        return np.linalg.solve(T, a_p - self.Tdot_v(q, v))

    def peer_call(self, q, v, tau):
        """A no-argument callable running only the peer's forward dynamics on (q, v, tau) mapped
        once beforehand, for timing the peer without the mapping."""
        T = self.T(q)
        return self._peer_call(self.q(q), T @ v, np.linalg.solve(T.T, tau))


class PinocchioFromFile(PeerCoordinates):
    """Pinocchio's own URDF parser on the file treedyn loaded (``pinocchio.buildModelFromUrdf``, a
    free-flyer root named "root_joint" when ``floating_base``), matched joint by joint by name. Its
    forward dynamics subtracts the damping Pinocchio read from the URDF (treedyn's q̈ has it)."""

    def __init__(self, model: Model, path_or_xml, floating_base: bool = False):
        import os

        import pinocchio as pin

        self.pin = pin
        args = (pin.JointModelFreeFlyer(),) if floating_base else ()
        src = os.fspath(path_or_xml)
        if src.lstrip().startswith("<"):
            pm = pin.buildModelFromXML(src, *args)
        else:
            pm = pin.buildModelFromUrdf(src, *args)
        pm.gravity = pin.Motion(np.r_[model.gravity, 0.0, 0.0, 0.0])
        self.pm, self.pd = pm, pm.createData()
        blocks, used = [], set()
        for i, (j, name) in enumerate(zip(model.joints, model.body_joint_names)):
            if not j.nv or "#" in name:  # planar sub-joints belong to their planar joint
                continue
            jid = pm.getJointId(name)
            if jid >= pm.njoints:
                raise ValueError(f"Pinocchio's model of {src[:80]!r} has no joint named {name!r}")
            used.add(jid)
            pj = pm.joints[jid]
            short = pj.shortname()
            iq, iv = model.q_indices[i], model.v_indices[i]
            if "Planar" in short:
                kind = "planar"
            elif "RevoluteUnbounded" in short or short.startswith("JointModelRUB"):
                kind = "angle-cs"
            elif pj.nq == j.nq and pj.nv == j.nv:
                kind = ("same", j.nq, j.nv)
            else:
                raise ValueError(
                    f"joint {name!r}: Pinocchio's {short} (nq={pj.nq}, nv={pj.nv}) does not match treedyn's {j!r}"
                )
            blocks.append((kind, iq, iv, pj.idx_q, pj.idx_v))
        missing = [pm.names[k] for k in range(1, pm.njoints) if k not in used]
        if missing:
            raise ValueError(f"treedyn's model has no joints named {missing}, which Pinocchio's has")
        super().__init__(model, pm.nq, pm.nv, blocks)

    def _peer_M(self, q):
        M = self.pin.crba(self.pm, self.pd, self.q(q))
        return np.triu(M) + np.triu(M, 1).T

    def _peer_bias(self, q, vp):
        return self.pin.nonLinearEffects(self.pm, self.pd, self.q(q), vp).copy()

    def _peer_aba(self, q, vp, tau_p):
        # the URDF's joint damping (<dynamics damping>, which Pinocchio reads into model.damping but
        # its aba leaves out) as the force −d q̇, as treedyn's q̈ has it
        return self.pin.aba(self.pm, self.pd, self.q(q), vp, tau_p - self.pm.damping * vp).copy()

    def _peer_call(self, qp, vp, tau_p):
        aba, pm, pd = self.pin.aba, self.pm, self.pd
        return lambda: aba(pm, pd, qp, vp, tau_p)


class MujocoFromFile(PeerCoordinates):
    """MuJoCo's own MJCF compiler on the file treedyn loaded, with what treedyn's solvers do not
    compute switched off: gravity compensation, fluid density and the tendons' springs and dampers
    (the simulators add them: treedyn.model.actuation) set to 0; constraints (contacts, limits,
    equalities, dry friction) and actuators disabled. The joints' armature, springs and dampers stay:
    treedyn's M has the armature and its q̈ the passive force, as MuJoCo's qacc (its bias forces,
    as MuJoCo's qfrc_bias, do not). MuJoCo's joints are in treedyn's
    order (both number bodies depth-first in file order)."""

    def __init__(self, model: Model, path_or_xml):
        import os

        import mujoco

        self.mj = mujoco
        src = os.fspath(path_or_xml)
        if src.lstrip().startswith("<"):
            m = mujoco.MjModel.from_xml_string(src)
        else:
            m = mujoco.MjModel.from_xml_path(src)
        m.body_gravcomp[:] = 0.0
        if m.ntendon:
            m.tendon_stiffness[:] = 0.0
            m.tendon_damping[:] = 0.0
        D = mujoco.mjtDisableBit
        for flag in ("mjDSBL_CONSTRAINT", "mjDSBL_ACTUATION"):  # by MuJoCo version
            if hasattr(D, flag):
                m.opt.disableflags |= int(getattr(D, flag))
        m.opt.density = m.opt.viscosity = 0.0  # no fluid forces
        self.m, self.d = m, mujoco.MjData(m)
        # MuJoCo precomputes the inertia of "simple" bodies (armature included) at compile time:
        # recompute the model's constants after the changes above
        mujoco.mj_setConst(m, self.d)
        moving = [i for i, j in enumerate(model.joints) if j.nv]
        if len(moving) != m.njnt:
            raise ValueError(f"treedyn has {len(moving)} joints, MuJoCo's model {m.njnt}")
        from ..model import Free, Spherical

        blocks = []
        for k, i in enumerate(moving):
            j, name = model.joints[i], model.body_joint_names[i]
            mj_name = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, k)
            if mj_name and mj_name != name:
                raise ValueError(f"joint {k}: treedyn's {name!r} is MuJoCo's {mj_name!r}")
            jt = int(m.jnt_type[k])
            expected = {Free: 0, Spherical: 1}.get(type(j), 3 if isinstance(j, Revolute) else 2)
            if jt != expected:
                raise ValueError(f"joint {name!r}: MuJoCo's type {jt} does not match treedyn's {j!r}")
            kind = {0: "free-mj", 1: "ball"}.get(jt, ("same", 1, 1))
            blocks.append((kind, model.q_indices[i], model.v_indices[i], int(m.jnt_qposadr[k]), int(m.jnt_dofadr[k])))
        super().__init__(model, m.nq, m.nv, blocks)

    def _forward(self, q, vp, tau_p=None):
        mj, d = self.mj, self.d
        d.qpos[:] = self.q(q)
        d.qvel[:] = vp
        d.qfrc_applied[:] = 0.0 if tau_p is None else tau_p
        mj.mj_forward(self.m, d)

    def _peer_M(self, q):
        self._forward(q, np.zeros(self.nv_peer))
        M = np.zeros((self.nv_peer, self.nv_peer))
        if hasattr(self.d, "qM"):  # MuJoCo < 3.4: mj_fullM(m, dst, qM)
            self.mj.mj_fullM(self.m, M, self.d.qM)
        else:  # MuJoCo >= 4: mj_fullM(m, d, dst)
            self.mj.mj_fullM(self.m, self.d, M)
        return M

    def _peer_bias(self, q, vp):
        self._forward(q, vp)
        return self.d.qfrc_bias.copy()

    def _peer_aba(self, q, vp, tau_p):
        self._forward(q, vp, tau_p)
        return self.d.qacc.copy()

    def _peer_call(self, qp, vp, tau_p):
        forward, m, d = self.mj.mj_forward, self.m, self.d

        def call():
            d.qpos[:], d.qvel[:], d.qfrc_applied[:] = qp, vp, tau_p
            forward(m, d)

        return call


def gymnasium_asset_path(name: str) -> str:
    """Absolute path of Gymnasium's MuJoCo model ``name`` (e.g. "ant.xml", in
    gymnasium/envs/mujoco/assets; ``pip install gymnasium``). FileNotFoundError when Gymnasium or
    the file is missing."""
    import os

    try:
        import gymnasium
    except ImportError:
        raise FileNotFoundError(f"{name}: Gymnasium's model files need Gymnasium (pip install gymnasium)") from None
    path = os.path.join(os.path.dirname(gymnasium.__file__), "envs", "mujoco", "assets", name)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{name}: not among Gymnasium's MuJoCo models ({os.path.dirname(path)})")
    return path


def example_robot_path(relative: str) -> str:
    """Absolute path of ``relative`` (e.g. "ur_description/urdf/ur5_robot.urdf") in the robots
    folder of the ``example-robot-data`` package (its Python module when installed, else the
    files of its wheel). FileNotFoundError when the package or the file is missing."""
    import os

    candidates = []
    try:
        import example_robot_data

        candidates.append(example_robot_data.getModelPath(relative))
        candidates.append(os.path.join(os.path.dirname(example_robot_data.__file__), "robots"))
    except Exception:  # not installed, or an older/newer module layout
        pass
    try:
        from importlib.metadata import PackageNotFoundError, distribution

        dist = distribution("example-robot-data")
        candidates.append(str(dist.locate_file("cmeel.prefix/share/example-robot-data/robots")))
    except PackageNotFoundError:
        pass
    for folder in candidates:
        path = os.path.join(folder, relative)
        if os.path.isfile(path):
            return path
    raise FileNotFoundError(
        f"{relative!r} not found in example-robot-data (pip install example-robot-data); looked in {candidates}"
    )


#: robots of example-robot-data whose collision geoms are convex meshes, as example_robot_mjcf makes them
MESH_ROBOTS = {
    "solo12": "solo_description/robots/solo12.urdf",
    "go2": "go2_description/urdf/go2.urdf",
    "talos": "talos_data/robots/talos_reduced.urdf",
}


def example_robot_mjcf(relative: str, folder: str | None = None) -> str:
    """A MuJoCo file made from an example-robot-data URDF as a MuJoCo user makes one, written to
    ``folder/robot.xml`` (default folder: ~/.cache/treedyn/mesh-robots/<the URDF's name>; its path
    returned): MuJoCo's own URDF import (its compiler reads the meshes, linked by file name into
    ``folder``), the root link on a free joint placed so that its lowest geom
    is 2 mm above a floor at qpos0, a position actuator on each hinge (ctrlrange ±0.2 rad about qpos0,
    kp 20 N m/rad per kg of the robot, kv kp/20) and the implicitfast integrator (MuJoCo's advice for
    position actuators). The robot's geoms touch the floor only (contype 1, conaffinity 0: these
    robots' neighbouring hulls overlap at qpos0). Needs mujoco and example-robot-data; FileNotFoundError
    when the URDF is absent."""
    import os
    import re

    import mujoco

    path = example_robot_path(relative)
    robots = path[: path.index(relative)]
    if folder is None:
        stem = os.path.splitext(os.path.basename(relative))[0]
        folder = os.path.join(os.path.expanduser("~"), ".cache", "treedyn", "mesh-robots", stem)
    os.makedirs(folder, exist_ok=True)
    linked = {}

    def link(m):  # a mesh file by its own name in folder (MuJoCo's URDF import strips the path)
        source = re.sub(r"^package://(example-robot-data/robots/)?", robots, m.group(2))
        source = source if os.path.isabs(source) else os.path.join(os.path.dirname(path), source)
        name = os.path.basename(source)
        while linked.get(name, source) != source:
            name = "_" + name
        linked[name] = source
        target = os.path.join(folder, name)
        if not os.path.lexists(target):
            os.symlink(source, target)
        return f'{m.group(1)}filename="{name}"'

    with open(path) as f:
        text = re.sub(r'(<mesh\s+)filename="([^"]+)"', link, f.read())
    children = set(re.findall(r'<child\s+link="([^"]+)"', text))
    root = next(name for name in re.findall(r'<link\s+name="([^"]+)"', text) if name not in children)
    text = re.sub(
        r"(<robot[^>]*>)",
        r'\1<mujoco><compiler meshdir="." balanceinertia="true" discardvisual="true" fusestatic="false"/></mujoco>'
        f'<link name="world"/><joint name="root" type="floating"><parent link="world"/><child link="{root}"/></joint>',
        text,
        count=1,
    )
    urdf = os.path.join(folder, "robot.urdf")
    with open(urdf, "w") as f:
        f.write(text)
    spec = mujoco.MjSpec.from_file(urdf)
    m = spec.compile()
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    low = min(  # each geom's lowest point: its box (geom_aabb: centre, half sizes in its frame) in the world
        d.geom_xpos[g][2] + d.geom_xmat[g][6:] @ m.geom_aabb[g][:3] - np.abs(d.geom_xmat[g][6:]) @ m.geom_aabb[g][3:]
        for g in range(m.ngeom)
    )
    spec.body(root).pos = [0.0, 0.0, 0.002 - low]
    for g in spec.geoms:
        g.contype, g.conaffinity = 1, 0
    floor = spec.worldbody.add_geom(type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0, 0, 0.05], name="floor")
    floor.contype, floor.conaffinity = 1, 1
    spec.option.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    kp = 20.0 * float(m.body_mass.sum())
    for j in spec.joints:
        if j.type == mujoco.mjtJoint.mjJNT_HINGE:
            a = spec.add_actuator(name=j.name, target=j.name, trntype=mujoco.mjtTrn.mjTRN_JOINT)
            a.set_to_position(kp=kp, kv=kp / 20)
            a.ctrllimited, a.ctrlrange = 1, [-0.2, 0.2]
    out = os.path.join(folder, "robot.xml")
    with open(out, "w") as f:
        f.write(spec.to_xml())
    return out
