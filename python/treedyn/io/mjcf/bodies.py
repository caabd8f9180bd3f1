"""The bodies pass: ``<worldbody>``'s tree of ``<body>``s (through ``<frame>``s) as the nodes
``treedyn.io._tree.build_model`` assembles: each body's joints as steps (MuJoCo's composition of
several joints, hinge and ball anchors), its limits, its inertia (``inertia``) and collision geoms
(``collision``)."""

from __future__ import annotations

import numpy as np

from ...model import Free, Prismatic, Revolute, Spherical, Transform
from .._common import axis_angle_matrix, tiny, unit
from .._tree import IDENTITY, Node, Step, compose, shift
from .collision import collision_geoms, softness
from .inertia import body_inertia

__all__ = ["read_bodies"]

_BODY_ERRORS = {"composite", "flexcomp", "replicate", "attach", "plugin", "skin"}


def read_bodies(r, worldbodies):
    nodes = [Node("world", None)]
    r.body_id, r.joint_id = 0, 0
    names = {"world"}
    # stack of (body element, parent node name, pose of the body's parent frame in the parent body, class)
    stack = []
    for wb in reversed(worldbodies):
        contents = _contents(r, wb, IDENTITY, "main", world=True)
        nodes[0].geoms[:0] = collision_geoms(r, contents, "world")
        nodes[0].visuals[:0] = r.visual_geoms.pop("world", [])
        for kind, e, X, cls in reversed(contents):
            if kind == "body":
                stack.append((e, "world", X, cls))
    while stack:
        elem, parent, X, cls = stack.pop()
        r.current = elem
        r.body_id += 1
        name = elem.get("name") or f"body{r.body_id}"
        if name in names:
            raise r.err(f"two bodies are named {name!r}", elem)
        names.add(name)
        r.body_names[id(elem)] = name
        childclass = elem.get("childclass", cls)
        if childclass not in r.defaults:
            raise r.err(f"<body childclass={childclass!r}>: no such default class", elem)
        if elem.get("gravcomp") not in (None, "0"):
            r.ignored.note("body gravcomp not modelled (gravity compensation is a force; forces are inputs)")
        contents = _contents(r, elem, IDENTITY, childclass)
        node = Node(name, parent, elem=elem)
        body_pose = compose(X, r.pose(elem))
        _joints(r, node, elem, body_pose, [c for c in contents if c[0] == "joint"], parent)
        node.inertia = body_inertia(r, elem, name, contents)
        node.geoms = collision_geoms(r, contents, name)
        node.visuals = r.visual_geoms.pop(name, [])
        nodes.append(node)
        for kind, e, Xc, c in reversed(contents):
            if kind == "body":
                stack.append((e, name, Xc, c))
    return nodes


def _contents(r, elem, X, cls, world=False):
    """[(kind, element, pose of its parent frame in the body, default class)] in file order:
    a body's joints, inertials, geoms and child bodies, looking through <frame>s."""
    out = []
    for e in elem:
        tag = e.tag
        if not isinstance(tag, str):
            continue
        if tag == "frame":
            fc = e.get("childclass", cls)
            if fc not in r.defaults:
                raise r.err(f"<frame childclass={fc!r}>: no such default class", e)
            out += _contents(r, e, X @ r.pose(e), fc, world)
        elif tag == "body":
            out.append(("body", e, X, cls))
        elif tag in ("joint", "freejoint"):
            if world:
                raise r.err(f"<{tag}> in <worldbody>: the world cannot move", e)
            out.append(("joint", e, X, cls))
        elif tag == "inertial":
            if not world:
                out.append(("inertial", e, X, cls))
        elif tag == "geom":
            out.append(("geom", e, X, cls))
        elif tag in _BODY_ERRORS or tag in ("flex",):
            raise r.err(f"<{tag}> is not supported by treedyn's MJCF loader", e)
        elif tag not in ("site", "camera", "light"):
            r.ignored.add(tag)
    return out


def _joints(r, node, body, body_pose, joints, parent):
    """The body's joints as Steps: X0 · J1(q1) · J2(q2) ⋯ as MuJoCo composes them, each hinge and
    ball turning about its anchor p (treedyn's body frame sits on the anchor: offset −p)."""
    prev = body_pose  # pose of the next joint frame's parent: X0, then the previous anchor frame
    anchor = np.zeros(3)
    steps = []
    for k, (_, e, F, cls) in enumerate(joints):  # F: pose of an enclosing <frame> in the body
        r.current = e
        r.joint_id += 1
        a = r.attrs(e, cls) if e.tag == "joint" else dict(e.attrib)
        kind = "free" if e.tag == "freejoint" else a.get("type", "hinge")
        name = a.get("name") or f"joint{r.joint_id - 1}"
        last = k == len(joints) - 1
        body_name = node.name if last else f"{node.name}#{name}"
        if kind == "free":
            if len(joints) > 1:
                raise r.err(f"body {node.name!r}: a free joint must be the body's only joint", e)
            if parent != "world":
                raise r.err(
                    f"free joint {name!r} in body {node.name!r}: free joints can only be used "
                    f"on top-level bodies (children of the world)",
                    e,
                )
            # MuJoCo's free body pose is qpos itself, in world coordinates (body pos/quat only set qpos0)
            _passive(r, name, kind, a, e)
            steps.append(Step(name, Free(), IDENTITY, body_name))
            r.qpos0[name] = body_pose
            anchor = np.zeros(3)
            continue
        if kind not in ("hinge", "slide", "ball"):
            raise r.err(f"joint {name!r} has type {kind!r}; MJCF joint types are hinge, slide, ball and free", e)
        _passive(r, name, kind, a, e)
        p = np.zeros(3) if kind == "slide" else _placed(F, r.vec(e, "pos", 3, a, (0, 0, 0)))
        axis = r.vec(e, "axis", 3, a, (0, 0, 1))
        axis = axis if F is IDENTITY else F.rotation @ axis
        if kind != "ball" and tiny(axis):
            raise r.err(f"joint {name!r} has a zero axis", e)
        ref = r.num(e, "ref", a, 0) if kind != "ball" else 0.0
        if kind != "ball":
            r.qpos0[name] = r.angle(ref) if kind == "hinge" else ref
        if kind == "hinge":
            ref = r.angle(ref)
            joint = Revolute(axis)
            # the file's pose is q = ref
            pre = Transform(axis_angle_matrix(axis, -ref), np.zeros(3)) if ref else IDENTITY
        elif kind == "slide":
            joint = Prismatic(axis)
            pre = shift(-ref * unit(axis))
        else:
            joint, pre = Spherical(), IDENTITY
        _range(r, name, kind, a, e)
        placement = compose(compose(prev, shift(p - anchor)), pre)
        steps.append(Step(name, joint, placement, body_name))
        prev, anchor = IDENTITY, p
    node.steps = steps
    if steps:
        node.offset = shift(-anchor)
    else:
        node.placement = body_pose


def _placed(F, p):
    """The point p of an enclosing <frame> F in the body's frame (most joints have no frame)."""
    return p if F is IDENTITY else F.rotation @ p + F.translation


def _range(r, name, kind, a, e):
    """The joint's limits into r.limits, by MuJoCo's rules (mjCJoint::Compile): limited="true"
    limits, "false" does not, and "auto" (the default) limits when range[0] < range[1] — an error
    if the range is given (not "0 0") while <compiler autolimits="false">. A limited joint needs
    range[0] < range[1]. Hinge ranges are in <compiler angle> units (degrees by default) and
    stored in radians, slide ranges in metres. A ball's range (a cone on its rotation angle) is
    not modelled."""
    limited = a.get("limited", "auto")
    if limited not in ("auto", "true", "false"):
        raise r.err(f"joint {name!r}: limited={limited!r} must be 'true', 'false' or 'auto'", e)
    lo, hi = r.vec(e, "range", 2, a, (0.0, 0.0))
    if limited == "auto" and (lo != 0 or hi != 0) and r.autolimits == "false":
        raise r.err(
            f"joint {name!r} has a range but no limited attribute while <compiler autolimits='false'>: "
            "give limited='true' or 'false' (MuJoCo refuses it too)",
            e,
        )
    if not (limited == "true" or (limited == "auto" and lo < hi)):
        return
    if kind == "ball":
        r.ignored.note(f"ball joint {name!r}: its range (a cone on the rotation angle) is not modelled")
        return
    if not lo < hi:
        raise r.err(
            f"joint {name!r} is limited with range {a['range'] if 'range' in a else '0 0'!r}: "
            "range[0] must be smaller than range[1]",
            e,
        )
    if kind == "hinge":
        lo, hi = r.angle(lo), r.angle(hi)
    r.limits[name] = (float(lo), float(hi))
    soft = softness(r, e, a, ("solreflimit", "solimplimit"))
    if soft:
        r.__dict__.setdefault("limit_softness", {})[name] = soft


def _passive(r, name, kind, a, e):
    """The joint's passive attributes (damping, stiffness, springref, armature, frictionloss) and its
    actuators' force range (actuatorfrcrange, a hinge's or slide's) into r.passive[name], those set
    non-zero only; springref in the compiler's angle unit for a hinge."""
    vals = {}
    for attr in ("damping", "stiffness", "springref", "armature", "frictionloss"):
        if attr in a:
            x = r.num(e, attr, a)
            if attr != "springref" and x < 0:
                raise r.err(f"joint {name!r}: {attr}={a[attr]!r} must be >= 0", e)
            vals[attr] = r.angle(x) if attr == "springref" and kind == "hinge" else x
    if "springdamper" in a:  # (time constant, damping ratio): stiffness and damping from M at qpos0
        tc, ratio = r.vec(e, "springdamper", 2, a)
        if (tc, ratio) != (0, 0) and not (tc > 0 and ratio > 0):  # (MuJoCo's refusal too)
            raise r.err(f"joint {name!r}: springdamper={a['springdamper']!r}: when given, both must be positive", e)
        if tc > 0:
            vals["springdamper"] = (float(tc), float(ratio))
    if kind in ("hinge", "slide") and (frc := r.limited(e, a, "actuatorfrcrange", f"joint {name!r}")):
        vals["actuatorfrcrange"] = frc  # (MuJoCo ignores it on ball and free joints)
    if a.get("actuatorgravcomp") == "true":
        r.ignored.note(f"joint {name!r}: actuatorgravcomp not modelled (treedyn has no gravity compensation)")
    if any(vals.values()):
        r.passive[name] = (kind, vals)
    soft = softness(r, e, a, ("solreffriction", "solimpfriction"))
    if soft and vals.get("frictionloss"):  # (the dry friction's rows: Model.set_row_softness)
        r.__dict__.setdefault("row_softness", {})[("joint friction", name)] = soft
