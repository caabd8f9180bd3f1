"""From a kinematic tree read from a file to a treedyn Model.

Both loaders describe the file as a list of ``Node``s (a URDF link, an MJCF body) in depth-first
order. A node hangs from its parent node through zero or more joint ``Step``s:

* no step: the node is welded to its parent and is merged into it — its inertia is folded into
  the body that carries the parent, at the right pose, and its children are re-parented with
  composed placements (what Pinocchio's URDF parser does with fixed joints);
* one step: a URDF joint, or an MJCF body with one joint;
* several steps: an MJCF body with several joints, or a URDF planar joint (two prismatic joints
  and a revolute one). The intermediate bodies are massless; the last one is the node.

``offset`` is the pose of the node's frame in the frame of the last step's body (the identity for
URDF; a translation for an MJCF joint whose anchor is not at the body origin, because a treedyn
body frame sits on its joint).
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from dataclasses import dataclass, field

import numpy as np

from ..model import Free, Inertia, Joint, Model, Transform
from ._common import unchecked_inertia, user_stacklevel

__all__ = ["Step", "Node", "build_model", "fold_inertias", "MassWarning", "IDENTITY", "compose", "shift", "rotates"]

#: The identity placement, shared (a Transform is immutable): the loaders need it several times
#: per body, and making one costs as much as the rest of a body's reading.
IDENTITY = Transform._translation(np.zeros(3))


def rotates(X: Transform) -> bool:
    """Whether X has a rotation: False for IDENTITY and the translations ``shift`` makes (they
    share IDENTITY's rotation array), so that callers skip products with the identity."""
    return X.rotation is not IDENTITY.rotation


class MassWarning(UserWarning):
    """A moving joint carries no mass or inertia at all: forward dynamics will be singular."""


@dataclass
class Step:
    joint_name: str
    joint: Joint
    placement: Transform  # joint frame in the previous frame (parent node, or previous step's body)
    body_name: str | None = None  # name of the body this step moves (None for the last: the node's name)


@dataclass
class Node:
    name: str
    parent: str | None  # None for the root
    steps: list = field(default_factory=list)
    offset: Transform = IDENTITY
    inertia: Inertia | None = None  # in the node's frame
    placement: Transform = IDENTITY  # node in parent node, when welded (no steps)
    elem: object = None  # the XML element errors about the node name (its file and line)
    body_name: str | None = None  # name of the node's body when it is not the node's name
    geoms: list = field(default_factory=list)  # [(shape, pose in the node's frame, add_geom keywords)]
    visuals: list = field(default_factory=list)  # [(shape, pose in the node's frame, add_visual keywords)]


def fold_inertias(parts) -> Inertia:
    """One Inertia equal to the sum of ``parts``: (Inertia, pose of its frame in the result's frame)."""
    if len(parts) == 1 and parts[0][1] is IDENTITY:  # the common case: one part, already in place
        return parts[0][0]
    m = sum(I.mass for I, _ in parts)
    coms = [X.rotation @ I.com + X.translation for I, X in parts]
    c = sum(I.mass * ci for (I, _), ci in zip(parts, coms)) / m if m > 0 else np.zeros(3)
    Ic = np.zeros((3, 3))
    for (I, X), ci in zip(parts, coms):
        d = ci - c
        Ic += X.rotation @ I.inertia @ X.rotation.T + I.mass * (d @ d * np.eye(3) - np.outer(d, d))
    try:
        return Inertia(m, c, 0.5 * (Ic + Ic.T))
    except ValueError:  # a part was physically inconsistent (the loader has warned about it)
        return unchecked_inertia(m, c, Ic)


def build_model(nodes, gravity, error, source: str) -> Model:
    """Model from ``nodes`` (depth-first, root first). ``error(message, element)`` makes the exception
    to raise. The root node, if it has no steps, is the world: its own inertia is dropped.

    Adds ``model.frames``: {node name: (name of the body it is part of, pose of the node's frame in
    that body's frame)}, so that merged links stay findable.
    """
    # node -> (index of the pending body that carries it (0: world), pose of node frame in it)
    carrier: dict[str, tuple[int, Transform]] = {}
    pending = []  # [name, parent index, joint, placement, joint name, inertia parts, element]
    for node in nodes:
        if node.parent is None:
            body, pose = 0, IDENTITY
            if not node.steps:  # the fixed root is the world itself
                carrier[node.name] = (0, IDENTITY)
                continue
        else:
            if node.parent not in carrier:
                raise error(f"internal: parent {node.parent!r} of {node.name!r} not placed yet", node.elem)
            body, pose = carrier[node.parent]
        if not node.steps:
            pose = compose(pose, node.placement)
            carrier[node.name] = (body, pose)
            if node.inertia is not None and body > 0:
                pending[body - 1][5].append((node.inertia, pose))
            continue
        placement = pose
        for k, step in enumerate(node.steps):
            last = k == len(node.steps) - 1
            name = (node.body_name or node.name) if last else step.body_name
            if isinstance(step.joint, Free) and body != 0:
                raise error(
                    f"joint {step.joint_name!r} is a free (floating) joint between {node.parent!r} "
                    f"and {node.name!r}; treedyn supports free joints only between the world and a "
                    f"body (the floating base)",
                    node.elem,
                )
            pending.append([name, body, step.joint, compose(placement, step.placement), step.joint_name, [], node.elem])
            body, placement = len(pending), IDENTITY
        carrier[node.name] = (body, node.offset)
        if node.inertia is not None:
            pending[body - 1][5].append((node.inertia, node.offset))

    model = Model(gravity=gravity)
    zero = Inertia(0.0, np.zeros(3), np.zeros((3, 3)))
    for name, parent, joint, placement, jname, parts, elem in pending:
        try:
            inertia = fold_inertias(parts) if parts else zero
            model.add_body(name, parent=parent, joint=joint, placement=placement, inertia=inertia, joint_name=jname)
        except (ValueError, TypeError) as e:
            raise error(f"body {name!r} (joint {jname!r}): {e}", elem) from None
    model._add_frames((n, b, X) for n, (b, X) in carrier.items())
    for node in nodes:
        b, X = carrier[node.name]
        for shape, pose, kw in node.geoms:
            try:
                k = model.add_geom(b, shape, compose(X, pose), **kw)
            except (ValueError, TypeError) as e:
                raise error(f"geom {kw.get('name')!r} of {node.name!r}: {e}", node.elem) from None
            if node.inertia is not None:  # (its file body's centre of mass: Geom.weight_point)
                c = X.rotation @ np.asarray(node.inertia.com, dtype=float) + X.translation
                model._geoms[k] = dataclasses.replace(model._geoms[k], weight_point=tuple(c.tolist()))
        for shape, pose, kw in node.visuals:
            model.add_visual(b, shape, compose(X, pose), **kw)
    _warn_massless(model, source)
    return model


def compose(X: Transform, Y: Transform) -> Transform:
    """X @ Y, skipping the product when one of them is the shared identity (most are)."""
    return Y if X is IDENTITY else X if Y is IDENTITY else X @ Y


def shift(v: np.ndarray) -> Transform:
    """The translation by ``v`` (IDENTITY for 0); ValueError if v is not finite."""
    x, y, z = v.tolist()  # (Python floats: numpy's reductions cost more on 3 numbers)
    if x == y == z == 0.0:
        return IDENTITY
    if not (math.isfinite(x) and math.isfinite(y) and math.isfinite(z)):
        raise ValueError(f"a translation is not finite: {v}")
    return Transform._translation(v)


def _warn_massless(model: Model, source: str) -> None:
    """Warn about joints whose whole subtree has no mass and no rotational inertia."""
    N, parents = model.n_bodies, model.parents
    weight = np.zeros(N)
    for i, inertia in enumerate(model.inertias[1:], start=1):
        # only whether a subtree weighs nothing matters: a positive mass says so without Ī
        weight[i] = inertia.mass if inertia.mass > 0 else np.abs(inertia.inertia_origin).max()
    for i in range(N - 1, 0, -1):
        weight[parents[i]] += weight[i]
    joints, names = model.joints, model.body_joint_names  # (each property is a copy: read once)
    empty = [names[i] for i in range(1, N) if joints[i].nv and weight[i] == 0.0]
    if empty:
        shown = ", ".join(repr(n) for n in empty[:5]) + (", ..." if len(empty) > 5 else "")
        warnings.warn(
            f"{source}: {len(empty)} joint(s) move nothing with mass or inertia ({shown}): "
            f"the mass matrix is singular and forward dynamics will fail",
            MassWarning,
            stacklevel=user_stacklevel(),
        )
