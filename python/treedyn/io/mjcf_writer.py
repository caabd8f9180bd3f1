"""Write a Model as MJCF (MuJoCo XML), so that MuJoCo can run the same robot: ``model.to_mjcf()``.

Each body becomes a ``<body>`` at its joint's placement (the body frame at q = 0), nested as the
tree; its joint: Revolute → hinge, Prismatic → slide, Spherical → ball, Free → freejoint, Fixed →
none, Universal → two hinges (MuJoCo composes a body's joints in order: the second axis turns with
the first, as treedyn's). ``<inertial>`` with the full inertia about the centre of mass; geoms
(sphere, capsule, box, plane) with their friction (sliding, torsional, rolling), condim, margin, priority,
contype, conaffinity, solref, solimp and solmix; gravity in
``<option>``. Angles in radians. q and v map as in treedyn.peers (quaternions (w, x, y, z); a free
joint's linear velocity in world coordinates). A free joint's MJCF coordinates are the body's world
pose (its body's pos/quat, the placement, only set the initial qpos), where treedyn's are relative
to the placement: q_mjcf = placement ∘ q (the same when the placement is the identity, as for
scenes.centipede's head). treedyn.load_mjcf reads the file back to an
equivalent model (a universal joint then becomes two revolute joints with a massless body between).

Also written: each joint's damping, stiffness and springref, armature, frictionloss, actuator force range, range and its
solreflimit/solimplimit; cylinders, ellipsoids and convex meshes (an inline ``<mesh vertex>``);
``<option>``'s timestep, integrator, cone, impratio and fluid; fixed tendons; every actuator as a
``<general>`` with affine gain and bias (the same force), its dynamics and ranges; ``<contact>``'s
excludes and pairs; the keyframes (in MuJoCo's layout). A free body is written at its reference
pose (MuJoCo's qpos0). What has no MJCF element (springs between bodies, body damping, sensors,
per-coordinate stiffness of a ball joint) is named in a warning.

Constraints: a Spherical loop closure becomes ``<equality><connect>`` and a Fixed one ``<weld>``,
each between two sites at the closure's frames (``loop<k>_a``, ``loop<k>_b``); a coupling of two
joints becomes ``<equality><joint>``, of linear combinations ``<tendon><fixed>`` and
``<equality><tendon>``, its polynomial re-expanded about MuJoCo's qpos0 (every hinge and slide at
0); inactive ones ``active="false"``. Hinge and universal closures have no MJCF equivalent: a
ValueError says so.
"""

from __future__ import annotations

from math import comb
from xml.sax.saxutils import quoteattr

import numpy as np

from .. import _checks
from ..model import Fixed, Free, Inertia, Model, Prismatic, Revolute, Spherical, Universal
from ..model.shapes import Box, Capsule, ConvexMesh, Cylinder, Ellipsoid, Plane, Sphere
from ._common import matrix_to_quat

__all__ = ["to_mjcf"]


def _writable_inertia(I: Inertia, body: str) -> Inertia:
    """The inertia as <inertial> says it: mass, centre of mass, a rotational inertia about it. One given as
    parameters (m, h, Ī_O; a simplified model's, td.simplify) that is not a rigid body's cannot be written:
    refused, rather than written as something else."""
    if I._given != "parameters":
        return I
    try:
        if I.mass == 0 and (np.any(I.first_moment) or np.any(I.inertia_origin)):
            raise ValueError("mass 0 with a nonzero first moment or rotational inertia")
        return Inertia(I.mass, I.com, I.inertia)
    except ValueError as e:
        raise ValueError(
            f"to_mjcf: the inertia of body {body!r}, given as parameters (m, h, Ī_O), is no rigid body's ({e}); "
            "MJCF's <inertial> cannot say it (a simplified model, td.simplify: write the model before simplifying)"
        ) from None


def _num(x) -> str:
    return " ".join(repr(float(v)) for v in np.ravel(x))


def _pose(T) -> str:
    return f'pos="{_num(T.translation)}" quat="{_num(matrix_to_quat(T.rotation))}"'


def _joint_attributes(model: Model, i: int) -> str:
    """A scalar joint's damping, stiffness (springref), armature, frictionloss, actuator force range, range and
    its softness;
    a ball or free joint's damping and armature (MuJoCo takes one value per joint: their first)."""
    out = ""
    k, d, rest = model._joint_springs.get(i, (None, None, None))
    arm = model._joint_armature.get(i)
    if d is not None and np.any(d):
        out += f' damping="{float(d[0])!r}"'
    if k is not None and np.any(k):
        out += f' stiffness="{float(k[0])!r}" springref="{float(rest[0])!r}"'
    if arm is not None and np.any(arm):
        out += f' armature="{float(arm[0])!r}"'
    name = model._joint_names[i]
    if name and name in model.__dict__.get("_frictionloss", {}):
        out += f' frictionloss="{float(model.__dict__["_frictionloss"][name][0])!r}"'
    if name and name in model.__dict__.get("_actuator_force_range", {}):
        out += f' actuatorfrclimited="true" actuatorfrcrange="{_num(model.__dict__["_actuator_force_range"][name])}"'
    if i in model._joint_limits:
        lo, hi = model._joint_limits[i]
        out += f' limited="true" range="{_num([lo, hi])}"'
        ref, imp = model.limit_softness(name)
        out += f' solreflimit="{_num(ref)}" solimplimit="{_num(imp)}"'
    return out


def _joint(joint, name: str, extra: str = "") -> list[str]:
    n = quoteattr(name)
    if isinstance(joint, Fixed):
        return []
    if isinstance(joint, Free):
        return [f"<freejoint name={n}/>"] if not extra else [f'<joint name={n} type="free"{extra}/>']
    if isinstance(joint, Spherical):
        return [f'<joint name={n} type="ball"{extra}/>']
    if isinstance(joint, Revolute):
        return [f'<joint name={n} type="hinge" axis="{_num(joint.axis)}"{extra}/>']
    if isinstance(joint, Prismatic):
        return [f'<joint name={n} type="slide" axis="{_num(joint.axis)}"{extra}/>']
    if isinstance(joint, Universal):
        return [
            f'<joint name={quoteattr(name + "_1")} type="hinge" axis="{_num(joint.axis1)}"/>',
            f'<joint name={quoteattr(name + "_2")} type="hinge" axis="{_num(joint.axis2)}"/>',
        ]
    raise ValueError(f"to_mjcf: joint {name!r} of type {type(joint).__name__} has no MJCF equivalent")


def _geom(g) -> str:
    s = g.shape
    if isinstance(s, Sphere):
        kind, size = "sphere", [s.radius]
    elif isinstance(s, Capsule):
        kind, size = "capsule", [s.radius, s.half_length]
    elif isinstance(s, Box):
        kind, size = "box", list(s.half_extents)
    elif isinstance(s, Plane):
        kind, size = "plane", [0.0, 0.0, 1.0]  # infinite (MuJoCo draws 0 as the whole view)
    elif isinstance(s, Cylinder):
        kind, size = "cylinder", [s.radius, s.half_length]
    elif isinstance(s, Ellipsoid):
        kind, size = "ellipsoid", list(s.radii)
    else:  # a convex mesh: its vertices as an asset (<mesh vertex>), hulled by MuJoCo as by treedyn
        kind, size = "mesh", None
    if kind == "mesh":
        shape = f'type="mesh" mesh={quoteattr("mesh_" + g.name)}'
    else:
        shape = f"type={quoteattr(kind)} size={quoteattr(_num(size))}"
    soft = f' solref="{_num(g.solref)}" solimp="{_num(g.solimp)}" solmix="{float(g.solmix)!r}"'  # (MuJoCo's model)
    soft += f' condim="{g.condim}" margin="{float(g.margin)!r}"' + (f' priority="{g.priority}"' if g.priority else "")
    friction = _num([g.friction, g.torsional_friction, g.rolling_friction])
    return (
        f"<geom name={quoteattr(g.name)} {shape} {_pose(g.placement)} "
        f'friction="{friction}" contype="{g.contype}" conaffinity="{g.conaffinity}"{soft}/>'
    )


def _sites_and_equalities(model: Model):
    """({body: [site lines]}, [<tendon> lines], [<equality> lines]) of the model's constraints."""
    sites, tendons, equalities = {}, [], []
    for k, c in enumerate(model.loop_closures):
        if not isinstance(c.joint, (Spherical, Fixed)):
            raise ValueError(
                f"to_mjcf: loop closure {k} is a {type(c.joint).__name__} joint; MJCF's equalities are connect "
                "(Spherical) and weld (Fixed)"
            )
        for side, body, X in (("a", c.body_a, c.placement_a), ("b", c.body_b, c.placement_b)):
            sites.setdefault(body, []).append(f'<site name="loop{k}_{side}" {_pose(X)}/>')
        tag = "connect" if isinstance(c.joint, Spherical) else "weld"
        active = "" if c.active else ' active="false"'
        equalities.append(f'<{tag} site1="loop{k}_a" site2="loop{k}_b"{active}/>')
    jn = [j or b for j, b in zip(model.body_joint_names, model.body_names)]
    for k, c in enumerate(model.couplings):
        # y − y0 = p(x − x0) about qpos0 = 0: y = b(x) with b_j = [j = 0]·y0 + Σ_i a_i C(i, j) (−x0)^(i−j)
        a = list(c.polycoef) + [0.0] * (5 - len(c.polycoef))
        b = [sum(a[i] * comb(i, j) * (-c.x0) ** (i - j) for i in range(j, 5)) for j in range(5)]
        b[0] += c.y0
        if not c.leader:
            b = [c.y0 + a[0], 0.0, 0.0, 0.0, 0.0]
        active = "" if c.active else ' active="false"'
        simple = all(len(t) <= 1 and all(x == 1.0 for _, x in t) for t in (c.follower, c.leader))
        if simple:
            lead = f" joint2={quoteattr(jn[c.leader[0][0]])}" if c.leader else ""
            equalities.append(f'<joint joint1={quoteattr(jn[c.follower[0][0]])}{lead} polycoef="{_num(b)}"{active}/>')
            continue
        names = []
        for side, terms in (("f", c.follower), ("l", c.leader)):
            if terms:
                names.append(f"coupling{k}_{side}")
                parts = "".join(f"<joint joint={quoteattr(jn[i])} coef={quoteattr(repr(x))}/>" for i, x in terms)
                tendons.append(f'<fixed name="{names[-1]}">{parts}</fixed>')
        lead = f' tendon2="{names[1]}"' if len(names) > 1 else ""
        equalities.append(f'<tendon tendon1="{names[0]}"{lead} polycoef="{_num(b)}"{active}/>')
    return sites, tendons, equalities


def _unwritten(model: Model) -> list[str]:
    """What the model has that MJCF (or this writer) does not say."""
    out = []
    if model.springs:
        out.append(f"{len(model.springs)} spring(s) between bodies")
    if model._body_damping:
        out.append("body damping (set_body_damping)")
    if model._point_forces or model._moving_forces:
        out.append("point and moving forces (inputs of a simulation, not of the model)")
    if model.sensors:
        out.append(f"{len(model.sensors)} sensor(s)")
    for i, (k, d, _) in model._joint_springs.items():
        if len(set(np.ravel(k))) > 1 or len(set(np.ravel(d))) > 1:
            out.append(f"joint {model._joint_names[i]!r}'s per-coordinate stiffness or damping (MJCF: one value)")
    return out


def to_mjcf(model: Model, name: str = "treedyn") -> str:
    """The model as MJCF text (see the module's docstring); a warning names what it cannot write."""
    _checks.instance(model, Model, "model")
    left = _unwritten(model)
    if left:
        import warnings

        warnings.warn(f"to_mjcf: not written (MJCF has no such element): {'; '.join(left)}", UserWarning, stacklevel=3)
    parents, joints, names = model.parents, model.joints, model.body_names
    placements, inertias, jnames = model.placements, model.inertias, model.body_joint_names
    geoms = {}
    for g in model.geoms:
        geoms.setdefault(g.body, []).append(g)
    children = {}
    for i in range(1, model.n_bodies):
        children.setdefault(int(parents[i]), []).append(i)

    lines = [
        f"<mujoco model={quoteattr(name)}>",
        '  <compiler angle="radian" autolimits="true" inertiafromgeom="false"/>',
        f"  {_option(model)}",
    ]
    meshes = [g for g in model.geoms if isinstance(g.shape, ConvexMesh)]
    if meshes:
        lines.append("  <asset>")
        for g in meshes:
            vertex = _num(np.asarray(g.shape.vertices, dtype=float))
            lines.append(f"    <mesh name={quoteattr('mesh_' + g.name)} vertex={quoteattr(vertex)}/>")
        lines.append("  </asset>")
    lines.append("  <worldbody>")
    lines += ["    " + _geom(g) for g in geoms.get(0, [])]
    sites, tendons, equalities = _sites_and_equalities(model)
    lines += ["    " + x for x in sites.get(0, [])]

    q_ref = model.reference_configuration

    def body(i: int, indent: str):
        pose = _pose(placements[i])
        if isinstance(joints[i], Free) and q_ref is not None:  # (MuJoCo's qpos0: the reference pose)
            iq = model.q_indices[i]
            quat = q_ref[iq + 3 : iq + 7]
            p, wxyz = _world_pose(placements[i], q_ref[iq : iq + 3], np.r_[quat[3], quat[:3]])
            pose = f'pos="{_num(p)}" quat="{_num(wxyz)}"'
        lines.append(f"{indent}<body name={quoteattr(names[i])} {pose}>")
        inner = indent + "  "
        I = _writable_inertia(inertias[i], names[i])
        if I.mass > 0:
            J = np.asarray(I.inertia)
            full = [J[0, 0], J[1, 1], J[2, 2], J[0, 1], J[0, 2], J[1, 2]]
            lines.append(f'{inner}<inertial pos="{_num(I.com)}" mass="{float(I.mass)!r}" fullinertia="{_num(full)}"/>')
        lines.extend(inner + x for x in _joint(joints[i], jnames[i] or names[i], _joint_attributes(model, i)))
        lines.extend(inner + _geom(g) for g in geoms.get(i, []))
        lines.extend(inner + x for x in sites.get(i, []))
        for c in children.get(i, []):
            body(c, inner)
        lines.append(f"{indent}</body>")

    for c in children.get(0, []):
        body(c, "    ")
    lines.append("  </worldbody>")
    tendons = _tendons(model) + tendons
    for tag, items in (
        ("tendon", tendons),
        ("equality", equalities),
        ("actuator", _actuators(model)),
        ("contact", _contact(model)),
        ("keyframe", _keyframes(model)),
    ):
        if items:
            lines += [f"  <{tag}>"] + ["    " + x for x in items] + [f"  </{tag}>"]
    lines += ["</mujoco>", ""]
    return "\n".join(lines)


_INTEGRATORS = {"semi-implicit": "Euler", "rk4": "RK4", "implicitfast": "implicitfast", "implicit": "implicit"}


def _optional(**attrs) -> str:
    """' key="value"' for each attribute given (not None): numbers and arrays as _num writes them."""
    return "".join(f' {k}="{v if isinstance(v, str) else _num(v)}"' for k, v in attrs.items() if v is not None)


def _option(model: Model) -> str:
    """<option>: gravity, and what the model has of timestep, integrator, cone, impratio and the fluid."""
    density, viscosity, wind = model.fluid
    fluid = density or viscosity
    out = "<option" + _optional(
        gravity=model.gravity,
        timestep=model.timestep,
        integrator=None if model.integrator is None else _INTEGRATORS[model.integrator],
        cone=model.friction_cone,
        impratio=model.impratio,
        density=density if fluid else None,
        viscosity=viscosity if fluid else None,
        wind=wind if fluid else None,
    )
    return out + ('><flag contact="disable"/></option>' if not model.contact_enabled else "/>")


def _tendons(model: Model) -> list[str]:
    out = []
    for t in model.tendons:
        attrs = f" stiffness={quoteattr(repr(float(t.stiffness)))} damping={quoteattr(repr(float(t.damping)))}"
        attrs += f' springlength="{_num(t.rest_length)}"'
        if t.range is not None:
            attrs += f' limited="true" range="{_num(t.range)}"'
        if t.frictionloss:
            attrs += f' frictionloss="{float(t.frictionloss)!r}"'
        parts = "".join(f"<joint joint={quoteattr(j)} coef={quoteattr(repr(float(c)))}/>" for j, c in t.joints)
        out.append(f"<fixed name={quoteattr(t.name)}{attrs}>{parts}</fixed>")
    return out


_DYNAMICS = {"none": "none", "integrator": "integrator", "filter": "filter"}


def _actuators(model: Model) -> list[str]:
    """Each actuator as MuJoCo's <general> with affine gain and bias: the force it computes is the same."""
    out = []
    for a in model.actuators:
        attrs = f"name={quoteattr(a.name)} {a.transmission}={quoteattr(a.target)} gear={quoteattr(repr(float(a.gear)))}"
        attrs += f' gaintype="affine" gainprm="{_num(a.gain)}" biastype="affine" biasprm="{_num(a.bias)}"'
        attrs += f' dyntype="{_DYNAMICS[a.dynamics]}"'
        if a.dynamics == "filter":
            attrs += f' dynprm="{float(a.time_constant)!r}"'
        for key, r in (("ctrl", a.ctrlrange), ("force", a.forcerange), ("act", a.actrange)):
            if r is not None:
                attrs += f' {key}limited="true" {key}range="{_num(r)}"'
        out.append(f"<general {attrs}/>")
    return out


def _contact(model: Model) -> list[str]:
    names, geoms = model.body_names, model.geoms
    out = [f"<exclude body1={quoteattr(names[a])} body2={quoteattr(names[b])}/>" for a, b in model.contact_excludes]
    for c in model.contact_pairs:
        friction = None
        if c.friction is not None:  # (MJCF's five: sliding twice, torsional, rolling twice)
            spin = c.torsional_friction if c.torsional_friction is not None else 0.005
            roll = c.rolling_friction if c.rolling_friction is not None else 0.0001
            friction = [c.friction, c.friction, spin, roll, roll]
        condim = None if c.condim is None else str(c.condim)
        attrs = f"geom1={quoteattr(geoms[c.geom1].name)} geom2={quoteattr(geoms[c.geom2].name)}"
        attrs += _optional(condim=condim, friction=friction, margin=c.margin, solref=c.solref, solimp=c.solimp)
        out.append(f"<pair {attrs}/>")
    return out


def _keyframes(model: Model) -> list[str]:
    """The keyframes in MuJoCo's layout (a free joint's qpos is its body's world pose: placement ∘ q)."""
    from ..algorithms.layout import mujoco_layout

    layout, out = mujoco_layout(model), []
    where = {iq: (pq, pv) for _, iq, _, pq, pv in layout.blocks}
    for name, k in model.keyframes.items():
        qpos, qvel = layout.qpos(k.q), layout.qvel(k.q, k.v)
        for b in range(1, model.n_bodies):
            if isinstance(model.joints[b], Free):
                pq, pv = where[model.q_indices[b]]
                p, quat = _world_pose(model.placements[b], qpos[pq : pq + 3], qpos[pq + 3 : pq + 7])
                qpos[pq : pq + 3], qpos[pq + 3 : pq + 7] = p, quat
                qvel[pv : pv + 3] = np.asarray(model.placements[b].rotation) @ qvel[pv : pv + 3]
        attrs = f'name={quoteattr(name)} time="{float(k.time)!r}" qpos="{_num(qpos)}" qvel="{_num(qvel)}"'
        if k.act.size:
            attrs += f' act="{_num(k.act)}"'
        if k.ctrl.size:
            attrs += f' ctrl="{_num(k.ctrl)}"'
        out.append(f"<key {attrs}/>")
    return out


def _world_pose(P, p, wxyz) -> tuple:
    """(position, quaternion w x y z) of placement P composed with a free joint's (p, wxyz)."""
    R = np.asarray(P.rotation)
    w0, v0 = _quat_wxyz(R)
    w1, v1 = float(wxyz[0]), np.asarray(wxyz[1:], dtype=float)
    quat = np.r_[w0 * w1 - v0 @ v1, w0 * v1 + w1 * v0 + np.cross(v0, v1)]
    return R @ np.asarray(p, dtype=float) + np.asarray(P.translation), quat


def _quat_wxyz(R) -> tuple:
    q = matrix_to_quat(R)  # (w, x, y, z)
    return float(q[0]), np.asarray(q[1:], dtype=float)
