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
from ..model.shapes import Box, Capsule, Plane, Sphere
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


def _joint(joint, name: str) -> list[str]:
    n = quoteattr(name)
    if isinstance(joint, Fixed):
        return []
    if isinstance(joint, Free):
        return [f"<freejoint name={n}/>"]
    if isinstance(joint, Spherical):
        return [f'<joint name={n} type="ball"/>']
    if isinstance(joint, Revolute):
        return [f'<joint name={n} type="hinge" axis="{_num(joint.axis)}"/>']
    if isinstance(joint, Prismatic):
        return [f'<joint name={n} type="slide" axis="{_num(joint.axis)}"/>']
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
    else:  # pragma: no cover - Model.add_geom accepts the four shapes only
        raise ValueError(f"to_mjcf: geom {g.name!r} has an unknown shape {s!r}")
    soft = f' solref="{_num(g.solref)}" solimp="{_num(g.solimp)}" solmix="{float(g.solmix)!r}"'  # (MuJoCo's model)
    soft += f' condim="{g.condim}" margin="{float(g.margin)!r}"' + (f' priority="{g.priority}"' if g.priority else "")
    friction = _num([g.friction, g.torsional_friction, g.rolling_friction])
    return (
        f"<geom name={quoteattr(g.name)} type={quoteattr(kind)} size={quoteattr(_num(size))} {_pose(g.placement)} "
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


def to_mjcf(model: Model, name: str = "treedyn") -> str:
    """The model as MJCF text (see the module's docstring)."""
    _checks.instance(model, Model, "model")
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
        f'  <option gravity="{_num(model.gravity)}"/>',
        "  <worldbody>",
    ]
    lines += ["    " + _geom(g) for g in geoms.get(0, [])]
    sites, tendons, equalities = _sites_and_equalities(model)
    lines += ["    " + x for x in sites.get(0, [])]

    def body(i: int, indent: str):
        lines.append(f"{indent}<body name={quoteattr(names[i])} {_pose(placements[i])}>")
        inner = indent + "  "
        I = _writable_inertia(inertias[i], names[i])
        if I.mass > 0:
            J = np.asarray(I.inertia)
            full = [J[0, 0], J[1, 1], J[2, 2], J[0, 1], J[0, 2], J[1, 2]]
            lines.append(f'{inner}<inertial pos="{_num(I.com)}" mass="{float(I.mass)!r}" fullinertia="{_num(full)}"/>')
        lines.extend(inner + x for x in _joint(joints[i], jnames[i] or names[i]))
        lines.extend(inner + _geom(g) for g in geoms.get(i, []))
        lines.extend(inner + x for x in sites.get(i, []))
        for c in children.get(i, []):
            body(c, inner)
        lines.append(f"{indent}</body>")

    for c in children.get(0, []):
        body(c, "    ")
    lines.append("  </worldbody>")
    for tag, items in (("tendon", tendons), ("equality", equalities)):
        if items:
            lines += [f"  <{tag}>"] + ["    " + x for x in items] + [f"  </{tag}>"]
    lines += ["</mujoco>", ""]
    return "\n".join(lines)
