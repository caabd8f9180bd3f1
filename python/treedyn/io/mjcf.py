"""MJCF (MuJoCo XML) → treedyn.Model: the subset that describes articulated mechanisms.

What is read:

* ``<worldbody>`` and nested ``<body>`` (``name``, ``pos``, and one of ``quat`` (w, x, y, z),
  ``axisangle``, ``euler``, ``xyaxes``, ``zaxis``; ``childclass``), ``<frame>`` (a pose and a
  childclass for what it holds), ``<include file>``;
* ``<joint>`` of type hinge, slide, ball and free (``pos``, ``axis``, ``ref``, ``range``),
  ``<freejoint>``; several joints in one body compose in order, as in MuJoCo;
* ``<inertial>`` (``mass``, ``pos``, orientation, ``diaginertia`` or ``fullinertia``); without it
  (``inertiafromgeom="auto"``, the default) the inertia of the body's ``<geom>``s of type sphere,
  ellipsoid, box, capsule and cylinder (``size`` or ``fromto``, ``pos``, orientation, ``density``
  (default 1000) or ``mass``, ``group`` within ``inertiagrouprange``);
* ``<default>`` classes (nested, inherited) for joint and geom attributes;
* ``<compiler angle eulerseq inertiafromgeom inertiagrouprange settotalmass>`` (``angle`` is
  "degree" by default, as in MuJoCo: it applies to euler, axisangle and hinge ref/range);
* ``<option gravity>`` (default 0 0 -9.81) and ``<option><flag gravity="disable"/>``.

How bodies and coordinates map (so that q and v are MuJoCo's, up to the quaternion order and the
free joint's linear velocity):

* each MJCF body with joints is a treedyn body named after it (unnamed bodies are ``"body<id>"``
  and unnamed joints ``"joint<id>"`` with MuJoCo's ids); a body with several joints becomes a
  chain of massless bodies ``"<body>#<joint>"`` ending in the body; a body without joints is
  welded and merged into its parent (``model.frames`` says where each MJCF body went).
* a treedyn body frame sits on its joint: a hinge or ball joint with ``pos`` p puts the body's
  treedyn frame at p in the MJCF body frame (with the same axes); ``model.frames[body]`` holds
  that offset.
* joints are in MuJoCo's order (bodies depth-first in file order, a body's joints in file
  order), so ``model.joint_names`` lists MuJoCo's joints in ``jnt`` order.
* hinge and slide: the same q as MuJoCo's qpos, ``ref`` included (the pose written in the file
  is at q = ref). Ball: q = MuJoCo's quaternion reordered (x, y, z, w); v the same body-frame
  angular velocity. Free: q = (position, quaternion (x, y, z, w)) of the body frame in the world,
  and v = (linear, angular) velocity in body coordinates, where MuJoCo's qvel has the linear
  velocity in world coordinates (v_linear = Rᵀ qvel[0:3]).

Collision geometry: every sphere, capsule (``fromto`` too), box and plane geom with a non-zero
``contype`` or ``conaffinity`` becomes a geom of its body (``model.geoms``: ``friction``'s first
value, ``contype``, ``conaffinity``); cylinders, ellipsoids and meshes are skipped (not collision
shapes yet).

Not modelled, with one IgnoredElementWarning per file that says so: joint ``damping``,
``stiffness``, ``frictionloss`` and ``armature``, body ``gravcomp``, fluid forces (treedyn takes
forces as inputs and has no rotor inertia, so M differs from MuJoCo's by the armature);
``<actuator>``, ``<tendon>``, ``<sensor>``, ``<contact>`` (forces are inputs). Silently ignored:
``<asset>``, ``<visual>``, ``<statistic>``, ``<size>``, ``<keyframe>``, ``<custom>``,
``<extension>``, sites, cameras, lights, joint ranges (kept in ``model.joint_limits``).

Errors (ModelFileError naming the element, file and line): ``<equality>`` (loop closures and
couplings), flexes, composites, ``<replicate>``, ``<attach>``, a geom whose inertia treedyn
cannot compute (mesh, hfield, sdf, or ``shellinertia``) in a body that needs it, a free joint
below the top level, ``compiler coordinate="global"``, ``boundmass``/``boundinertia``/
``balanceinertia``/``alignfree``.
"""

from __future__ import annotations

import math
import os

import numpy as np

from ..geometry import Box, Capsule, Plane, Sphere
from ..model import Free, Inertia, Model, Prismatic, Revolute, Spherical, Transform
from ._common import (
    IgnoredTags,
    axis_angle_matrix,
    file_inertia,
    quat_to_matrix,
    tiny,
    unit,
    warn_inconsistent_inertias,
    z_to_vector,
)
from ._tree import Node, Step, build_model, fold_inertias
from ._xml import ModelFileError, file_errors, parse_xml_text, read_xml

__all__ = ["load_mjcf"]

_SILENT_SECTIONS = {"asset", "visual", "statistic", "size", "keyframe", "custom", "extension"}
_WARN_SECTIONS = {
    "actuator": "actuators",
    "tendon": "tendons",
    "sensor": "sensors",
    "contact": "contact pairs and exclusions",
}
_ERROR_SECTIONS = {
    "equality": "equality constraints (loop closures, couplings) cannot be part of a tree model",
    "deformable": "deformable bodies (flexes, skins) are not articulated rigid bodies",
}
_BODY_ERRORS = {"composite", "flexcomp", "replicate", "attach", "plugin", "skin"}
_ORIENTATIONS = ("quat", "axisangle", "euler", "xyaxes", "zaxis")
_GEOM_SOLIDS = ("sphere", "ellipsoid", "box", "capsule", "cylinder")


def load_mjcf(path_or_xml) -> Model:
    """Load an MJCF file (a path) or MJCF text (a string starting with '<') as a treedyn Model."""
    doc = read_xml(path_or_xml, "MJCF")
    return _Reader(doc).build()


class _Reader:
    def __init__(self, doc):
        self.doc = doc
        self.where: dict[int, tuple[str, int | None]] = {}
        self.ignored = IgnoredTags(doc.source)
        self.inconsistent: list[str] = []
        self.limits: dict[str, tuple[float, float]] = {}
        self.passive: dict[str, list[str]] = {}
        self.current = doc.root  # the element being read, for errors the checks did not foresee

    # ------------------------------------------------------------------ errors
    def err(self, message: str, elem=None) -> ModelFileError:
        source, line = (
            self.where.get(id(elem), (self.doc.source, None)) if elem is not None else (self.doc.source, None)
        )
        return ModelFileError(message, source, line)

    def _locate(self, doc):
        for e in doc.root.iter():
            self.where[id(e)] = (doc.source, doc.line(e))

    # ------------------------------------------------------------------ document
    def build(self) -> Model:
        self._locate(self.doc)
        with file_errors(self.err, lambda: self.current):
            return self._build()

    def _build(self) -> Model:
        root = self.doc.root
        if root.tag != "mujoco":
            hint = " (this is URDF: use Model.from_urdf)" if root.tag == "robot" else ""
            raise self.err(f"the root element is <{root.tag}>, an MJCF file has <mujoco>{hint}", root)
        self._expand_includes(root, self.doc.base_dir, [self.doc.source])
        self._compiler(root)
        gravity = self._gravity(root)
        self.defaults = self._defaults(root)
        worldbodies = [e for e in root if e.tag == "worldbody"]
        for e in root:
            if not isinstance(e.tag, str) or e.tag in ("worldbody", "default", "compiler", "option", "include"):
                continue
            if e.tag in _ERROR_SECTIONS:
                if e.tag == "equality" and not any(isinstance(c.tag, str) for c in e):
                    continue
                raise self.err(f"<{e.tag}>: {_ERROR_SECTIONS[e.tag]}; treedyn cannot load this model", e)
            if e.tag in _WARN_SECTIONS:
                if any(isinstance(c.tag, str) for c in e):
                    self.ignored.note(
                        f"<{e.tag}> ignored: {_WARN_SECTIONS[e.tag]} act through forces, which treedyn takes as inputs"
                    )
            elif e.tag not in _SILENT_SECTIONS:
                self.ignored.add(e.tag)
        nodes = self._nodes(worldbodies)
        self._total_mass(nodes)
        model = build_model(
            nodes, gravity, lambda msg, line: ModelFileError(msg, self.doc.source, line), self.doc.source
        )
        model.joint_limits = self.limits
        model.source = self.doc.source
        for attr, joints in self.passive.items():
            shown = ", ".join(repr(j) for j in joints[:4]) + (", ..." if len(joints) > 4 else "")
            self.ignored.note(
                f"{attr} of joint(s) {shown} not modelled ("
                + (
                    "M differs from MuJoCo's by the armature"
                    if attr == "armature"
                    else "a force, which treedyn takes as an input"
                )
                + ")"
            )
        self.ignored.warn()
        warn_inconsistent_inertias(self.doc.source, self.inconsistent)
        return model

    def _expand_includes(self, root, base_dir, chain):
        """Replace each <include file=...> by the children of the included file's root element
        (iteratively: bodies may nest thousands deep). Included elements resolve their own includes
        against their file's folder; ``origin`` remembers it for them."""
        origin = {}  # id(element) -> (folder, chain of including files) when not the parent's
        stack = [(root, base_dir, chain)]
        while stack:
            parent, base, ch = stack.pop()
            i = 0
            while i < len(parent):
                e = parent[i]
                eb, ech = origin.get(id(e), (base, ch))
                if e.tag != "include":
                    stack.append((e, eb, ech))
                    i += 1
                    continue
                self.current = e
                fn = e.get("file")
                if not fn:
                    raise self.err("<include> without a file attribute", e)
                path = fn if os.path.isabs(fn) else os.path.join(eb, fn)
                if not os.path.isfile(path):
                    raise self.err(f"<include file={fn!r}>: file not found ({path})", e)
                if os.path.abspath(path) in ech:
                    raise self.err(f"<include file={fn!r}> includes itself", e)
                with open(path, "rb") as f:
                    sub = parse_xml_text(f.read(), path, os.path.dirname(os.path.abspath(path)))
                self._locate(sub)
                kids = list(sub.root)
                parent.remove(e)
                for k, kid in enumerate(kids):
                    parent.insert(i + k, kid)
                    origin[id(kid)] = (sub.base_dir, ech + [os.path.abspath(path)])
                # the kids are looked at next, in place (one of them may be an <include> itself)

    def _compiler(self, root):
        c = {}
        for e in root.iter("compiler"):
            c.update(e.attrib)
        elem = self.current = next(iter(root.iter("compiler")), root)
        angle = c.get("angle", "degree")
        if angle not in ("degree", "radian"):
            raise self.err(f"<compiler angle={angle!r}>: must be 'degree' or 'radian'", elem)
        self.deg = angle == "degree"
        self.eulerseq = c.get("eulerseq", "xyz")
        if len(self.eulerseq) != 3 or any(ch not in "xyzXYZ" for ch in self.eulerseq):
            raise self.err(f"<compiler eulerseq={self.eulerseq!r}>: three letters among x, y, z, X, Y, Z", elem)
        self.fromgeom = c.get("inertiafromgeom", "auto")
        if self.fromgeom not in ("auto", "true", "false"):
            raise self.err(f"<compiler inertiafromgeom={self.fromgeom!r}>: must be auto, true or false", elem)
        rng = c.get("inertiagrouprange", "0 5").split()
        try:
            self.groups = (int(rng[0]), int(rng[1]))
        except (ValueError, IndexError):
            raise self.err(f"<compiler inertiagrouprange={c['inertiagrouprange']!r}>: two integers", elem) from None
        if c.get("coordinate", "local") != "local":
            raise self.err(
                "<compiler coordinate='global'> is not supported (MuJoCo itself removed it); use local coordinates",
                elem,
            )
        for attr in ("boundmass", "boundinertia"):
            if attr in c and self._vec(elem, attr, 1, c)[0] > 0:
                raise self.err(f"<compiler {attr}> is not supported: give the bodies their inertias", elem)
        for attr in ("balanceinertia", "alignfree"):
            if c.get(attr, "false") == "true":
                raise self.err(f"<compiler {attr}='true'> is not supported", elem)
        self.totalmass = float(self._vec(elem, "settotalmass", 1, c, (-1.0,))[0])

    def _gravity(self, root):
        g = np.array([0.0, 0.0, -9.81])
        for opt in root.iter("option"):
            self.current = opt
            if opt.get("gravity") is not None:
                g = self._vec(opt, "gravity", 3)
            for a in ("density", "viscosity"):
                if opt.get(a) is not None and self._vec(opt, a, 1)[0] != 0.0:
                    self.ignored.note(f"<option {a}>: fluid forces are not modelled (forces are inputs)")
            for flag in opt.iter("flag"):
                if flag.get("gravity") == "disable":
                    g = np.zeros(3)
        return g

    # ------------------------------------------------------------------ defaults
    def _defaults(self, root):
        """{class: {tag: {attribute: value}}}, nested classes inheriting from their parents."""
        out = {"main": {}}
        for top in [e for e in root if e.tag == "default"]:
            self._default_class(top, out.get(top.get("class", "main"), {}), out, top=True)
        return out

    def _default_class(self, elem, inherited, out, top=False):
        self.current = elem
        name = elem.get("class", "main" if top else None)
        if name is None:
            raise self.err("a nested <default> needs a class attribute", elem)
        if name in out and not (top and name == "main"):
            raise self.err(f"default class {name!r} is defined twice", elem)
        mine = {tag: dict(attrs) for tag, attrs in inherited.items()}
        for child in elem:
            if not isinstance(child.tag, str) or child.tag == "default":
                continue
            mine.setdefault(child.tag, {}).update(child.attrib)
        out[name] = mine
        for child in elem:
            if child.tag == "default":
                self._default_class(child, mine, out)

    def _attrs(self, elem, cls):
        """The element's attributes over its default class's (its own class, else ``cls``)."""
        name = elem.get("class", cls)
        if name not in self.defaults:
            raise self.err(f"<{elem.tag}> uses default class {name!r}, which is not defined", elem)
        a = dict(self.defaults[name].get(elem.tag, {}))
        a.update(elem.attrib)
        return a

    # ------------------------------------------------------------------ numbers and poses
    def _vec(self, elem, key, n, attrs=None, default=None):
        text = (attrs if attrs is not None else elem.attrib).get(key)
        if text is None:
            if default is None:
                raise self.err(f"<{elem.tag}> has no {key!r} attribute", elem)
            return np.array(default, dtype=float)
        try:
            vals = np.array([float(t) for t in text.split()])
        except ValueError:
            raise self.err(f"<{elem.tag} {key}={text!r}>: not a list of numbers", elem) from None
        if n is not None and len(vals) != n:
            raise self.err(f"<{elem.tag} {key}={text!r}>: expected {n} numbers, got {len(vals)}", elem)
        if not np.all(np.isfinite(vals)):
            raise self.err(f"<{elem.tag} {key}={text!r}>: NaN or inf", elem)
        return vals

    def _angle(self, x):
        return x * math.pi / 180.0 if self.deg else x

    def _rotation(self, elem, attrs=None, allowed=_ORIENTATIONS):
        a = elem.attrib if attrs is None else attrs
        given = [k for k in allowed if k in a]
        if len(given) > 1:
            raise self.err(f"<{elem.tag}> has more than one orientation ({', '.join(given)})", elem)
        if not given:
            return np.eye(3)
        k = given[0]
        try:
            if k == "quat":
                return quat_to_matrix(self._vec(elem, k, 4, a))
            if k == "axisangle":
                v = self._vec(elem, k, 4, a)
                return axis_angle_matrix(v[:3], self._angle(v[3]))
            if k == "euler":
                return self._euler(self._vec(elem, k, 3, a))
            if k == "xyaxes":
                v = self._vec(elem, k, 6, a)
                x = unit(v[:3])
                y = unit(v[3:] - (v[3:] @ x) * x)
                return np.column_stack([x, y, np.cross(x, y)])
            return z_to_vector(self._vec(elem, k, 3, a))
        except (ValueError, ZeroDivisionError, FloatingPointError) as e:
            raise self.err(f"<{elem.tag} {k}={a[k]!r}>: {e}", elem) from None

    def _euler(self, angles):
        R = np.eye(3)
        for ch, ang in zip(self.eulerseq, angles):
            axis = np.eye(3)["xyz".index(ch.lower())]
            Ri = axis_angle_matrix(axis, self._angle(ang))
            R = R @ Ri if ch.islower() else Ri @ R  # lower case: axes that move with the frame
        return R

    def _pose(self, elem, attrs=None) -> Transform:
        a = elem.attrib if attrs is None else attrs
        R = self._rotation(elem, a)
        U, _, Vt = np.linalg.svd(R)  # re-orthonormalise what the user typed
        return Transform(U @ Vt, self._vec(elem, "pos", 3, a, (0, 0, 0)))

    # ------------------------------------------------------------------ bodies
    def _nodes(self, worldbodies):
        nodes = [Node("world", None)]
        self.body_id, self.joint_id = 0, 0
        names = {"world"}
        # stack of (body element, parent node name, pose of the body's parent frame in the parent body, class)
        stack = []
        for wb in reversed(worldbodies):
            contents = self._contents(wb, Transform(), "main", world=True)
            nodes[0].geoms[:0] = self._collision_geoms(contents, "world")
            for kind, e, X, cls in reversed(contents):
                if kind == "body":
                    stack.append((e, "world", X, cls))
        while stack:
            elem, parent, X, cls = stack.pop()
            self.current = elem
            self.body_id += 1
            name = elem.get("name") or f"body{self.body_id}"
            if name in names:
                raise self.err(f"two bodies are named {name!r}", elem)
            names.add(name)
            childclass = elem.get("childclass", cls)
            if childclass not in self.defaults:
                raise self.err(f"<body childclass={childclass!r}>: no such default class", elem)
            if elem.get("gravcomp") not in (None, "0"):
                self.ignored.note("body gravcomp not modelled (gravity compensation is a force; forces are inputs)")
            contents = self._contents(elem, Transform(), childclass)
            node = Node(name, parent, line=self.where.get(id(elem), (None, None))[1])
            body_pose = X @ self._pose(elem)
            self._joints(node, elem, body_pose, [c for c in contents if c[0] == "joint"], parent)
            node.inertia = self._body_inertia(elem, name, contents)
            node.geoms = self._collision_geoms(contents, name)
            nodes.append(node)
            for kind, e, Xc, c in reversed(contents):
                if kind == "body":
                    stack.append((e, name, Xc, c))
        return nodes

    def _contents(self, elem, X, cls, world=False):
        """[(kind, element, pose of its parent frame in the body, default class)] in file order:
        a body's joints, inertials, geoms and child bodies, looking through <frame>s."""
        out = []
        for e in elem:
            tag = e.tag
            if not isinstance(tag, str):
                continue
            if tag == "frame":
                fc = e.get("childclass", cls)
                if fc not in self.defaults:
                    raise self.err(f"<frame childclass={fc!r}>: no such default class", e)
                out += self._contents(e, X @ self._pose(e), fc, world)
            elif tag == "body":
                out.append(("body", e, X, cls))
            elif tag in ("joint", "freejoint"):
                if world:
                    raise self.err(f"<{tag}> in <worldbody>: the world cannot move", e)
                out.append(("joint", e, X, cls))
            elif tag == "inertial":
                if not world:
                    out.append(("inertial", e, X, cls))
            elif tag == "geom":
                out.append(("geom", e, X, cls))
            elif tag in _BODY_ERRORS or tag in ("flex",):
                raise self.err(f"<{tag}> is not supported by treedyn's MJCF loader", e)
            elif tag not in ("site", "camera", "light"):
                self.ignored.add(tag)
        return out

    def _joints(self, node, body, body_pose, joints, parent):
        """The body's joints as Steps: X0 · J1(q1) · J2(q2) ⋯ as MuJoCo composes them, each hinge and
        ball turning about its anchor p (treedyn's body frame sits on the anchor: offset −p)."""
        prev = body_pose  # pose of the next joint frame's parent: X0, then the previous anchor frame
        anchor = np.zeros(3)
        steps = []
        for k, (_, e, F, cls) in enumerate(joints):  # F: pose of an enclosing <frame> in the body
            self.current = e
            self.joint_id += 1
            a = self._attrs(e, cls) if e.tag == "joint" else dict(e.attrib)
            kind = "free" if e.tag == "freejoint" else a.get("type", "hinge")
            name = a.get("name") or f"joint{self.joint_id - 1}"
            last = k == len(joints) - 1
            body_name = node.name if last else f"{node.name}#{name}"
            if kind == "free":
                if len(joints) > 1:
                    raise self.err(f"body {node.name!r}: a free joint must be the body's only joint", e)
                if parent != "world":
                    raise self.err(
                        f"free joint {name!r} in body {node.name!r}: free joints can only be used "
                        f"on top-level bodies (children of the world)",
                        e,
                    )
                # MuJoCo's free body pose is qpos itself, in world coordinates (body pos/quat only set qpos0)
                steps.append(Step(name, Free(), Transform(), body_name))
                anchor = np.zeros(3)
                continue
            if kind not in ("hinge", "slide", "ball"):
                raise self.err(f"joint {name!r} has type {kind!r}; MJCF joint types are hinge, slide, ball and free", e)
            self._passive(name, a, e)
            p = F.rotation @ self._vec(e, "pos", 3, a, (0, 0, 0)) + F.translation if kind != "slide" else np.zeros(3)
            axis = F.rotation @ self._vec(e, "axis", 3, a, (0, 0, 1))
            if kind != "ball" and tiny(axis):
                raise self.err(f"joint {name!r} has a zero axis", e)
            ref = float(self._vec(e, "ref", 1, a, (0,))[0]) if kind != "ball" else 0.0
            if kind == "hinge":
                ref = self._angle(ref)
                joint = Revolute(axis)
                pre = Transform(axis_angle_matrix(axis, -ref), np.zeros(3))  # the file's pose is q = ref
            elif kind == "slide":
                joint = Prismatic(axis)
                pre = Transform(np.eye(3), -ref * unit(axis))
            else:
                joint, pre = Spherical(), Transform()
            if "range" in a and kind != "ball" and a.get("limited", "auto") != "false":
                lo, hi = self._vec(e, "range", 2, a)
                if kind == "hinge":
                    lo, hi = self._angle(lo), self._angle(hi)
                self.limits[name] = (float(lo), float(hi))
            placement = prev @ Transform(np.eye(3), p - anchor) @ pre
            steps.append(Step(name, joint, placement, body_name))
            prev, anchor = Transform(), p
        node.steps = steps
        if steps:
            node.offset = Transform(np.eye(3), -anchor)
        else:
            node.placement = body_pose

    def _passive(self, name, a, e):
        for attr in ("damping", "stiffness", "frictionloss", "armature"):
            if attr in a:
                vals = self._vec(e, attr, None, a)
                if np.any(vals != 0):
                    self.passive.setdefault(attr, []).append(name)

    # ------------------------------------------------------------------ inertia
    def _body_inertia(self, body, name, contents):
        inertials = [c for c in contents if c[0] == "inertial"]
        if len(inertials) > 1:
            raise self.err(f"body {name!r} has more than one <inertial>", inertials[1][1])
        if inertials and self.fromgeom != "true":
            I = self._inertial(inertials[0][1], name)
            F = inertials[0][2]  # pose of an enclosing <frame> in the body
            return fold_inertias([(I, F)])
        if self.fromgeom == "false":
            return None
        parts = []
        for _, g, X, cls in (c for c in contents if c[0] == "geom"):
            part = self._geom_inertia(g, X, cls, name)
            if part is not None:
                parts.append(part)
        return fold_inertias(parts) if parts else None

    def _inertial(self, e, name):
        self.current = e
        a = e.attrib
        mass = float(self._vec(e, "mass", 1, a)[0])
        pos = self._vec(e, "pos", 3, a, (0, 0, 0))
        if ("diaginertia" in a) == ("fullinertia" in a):
            raise self.err(f"body {name!r} <inertial>: give exactly one of diaginertia and fullinertia", e)
        if "fullinertia" in a:
            if any(k in a for k in _ORIENTATIONS):
                raise self.err(f"body {name!r} <inertial>: fullinertia cannot have an orientation", e)
            xx, yy, zz, xy, xz, yz = self._vec(e, "fullinertia", 6, a)
            I = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
        else:
            R = self._rotation(e, a)
            I = R @ np.diag(self._vec(e, "diaginertia", 3, a)) @ R.T
        try:
            return file_inertia(mass, pos, I, f"body {name!r}", self.inconsistent)
        except ValueError as ex:
            raise self.err(f"body {name!r} <inertial>: {ex}", e) from None

    def _geom_inertia(self, g, X, cls, body):
        self.current = g
        a = self._attrs(g, cls)
        gname = a.get("name") or "(unnamed)"
        what = f"geom {gname} of body {body!r}"
        group = float(self._vec(g, "group", 1, a, (0,))[0])
        if group != int(group):
            raise self.err(f"<geom group={a['group']!r}>: not an integer", g)
        if not self.groups[0] <= group <= self.groups[1]:
            return None
        kind = a.get("type", "sphere")
        explicit_mass = "mass" in a
        mass = float(self._vec(g, "mass", 1, a)[0]) if explicit_mass else None
        density = float(self._vec(g, "density", 1, a, (1000.0,))[0])
        if (explicit_mass and mass == 0) or (not explicit_mass and density == 0):
            return None
        if kind == "plane":
            raise self.err(f"{what}: a plane can only be in the world body (MuJoCo's rule)", g)
        if kind not in _GEOM_SOLIDS:
            raise self.err(
                f"{what} is a {kind}: treedyn computes inertias of {', '.join(_GEOM_SOLIDS)} "
                f"only; give body {body!r} an <inertial>",
                g,
            )
        if a.get("shellinertia", "false") == "true":
            raise self.err(f"{what}: shellinertia is not supported; give body {body!r} an <inertial>", g)
        size = self._vec(g, "size", None, a, (0, 0, 0))
        size = np.r_[size, np.zeros(3)][:3]
        if "fromto" in a:
            if kind == "sphere":
                raise self.err(f"{what}: fromto does not apply to a sphere", g)
            ft = self._vec(g, "fromto", 6, a)
            d = ft[3:] - ft[:3]
            L = np.linalg.norm(d)
            if L < 1e-12:
                raise self.err(f"{what}: fromto has zero length", g)
            pose = Transform(z_to_vector(d), 0.5 * (ft[:3] + ft[3:]))
            if kind in ("capsule", "cylinder"):
                size = np.array([size[0], 0.5 * L, 0.0])
            else:  # box, ellipsoid: the two transverse sizes are size[0] (as MuJoCo does)
                size = np.array([size[0], size[0], 0.5 * L])
        else:
            pose = self._pose(g, a)
        V, I_unit = _solid(kind, size)  # volume, and inertia per unit mass about the centre
        if V <= 0:
            raise self.err(f"{what}: size {a.get('size')!r} gives a {kind} of zero volume", g)
        m = mass if explicit_mass else density * V
        return (Inertia(m, np.zeros(3), m * I_unit), X @ pose)

    def _collision_geoms(self, contents, body):
        """The body's sphere, capsule, box and plane geoms that collide (contype or conaffinity
        non-zero) as (shape, pose in the body frame, add_geom keywords); other types are skipped."""
        out = []
        for _, g, X, cls in (c for c in contents if c[0] == "geom"):
            self.current = g
            a = self._attrs(g, cls)
            kind = a.get("type", "sphere")
            masks = []
            for key in ("contype", "conaffinity"):
                x = float(self._vec(g, key, 1, a, (1,))[0])
                if not (0 <= x < 2**31 and x == int(x)):
                    raise self.err(f"geom of body {body!r}: {key}={a.get(key)!r} is not a non-negative integer", g)
                masks.append(int(x))
            contype, conaffinity = masks
            if contype == 0 and conaffinity == 0:
                continue  # visual only
            if kind not in ("sphere", "capsule", "box", "plane"):
                continue  # cylinders, ellipsoids, meshes: not collision shapes yet (documented above)
            size = np.r_[self._vec(g, "size", None, a, (0, 0, 0)), np.zeros(3)][:3]
            pose = self._pose(g, a)
            if "fromto" in a and kind in ("capsule", "box"):
                ft = self._vec(g, "fromto", 6, a)
                d = ft[3:] - ft[:3]
                L = float(np.linalg.norm(d))
                if L < 1e-12:
                    raise self.err(f"geom of body {body!r}: fromto has zero length", g)
                pose = Transform(z_to_vector(d), 0.5 * (ft[:3] + ft[3:]))
                size = np.array([size[0], 0.5 * L, 0.0]) if kind == "capsule" else np.array([size[0], size[0], 0.5 * L])
            try:
                shape = {
                    "sphere": lambda: Sphere(size[0]),
                    "capsule": lambda: Capsule(size[0], size[1]),
                    "box": lambda: Box(size),
                    "plane": lambda: Plane(),
                }[kind]()
            except (ValueError, TypeError) as e:
                raise self.err(f"{kind} geom of body {body!r}: {e}", g) from None
            kw = {"friction": float(self._vec(g, "friction", None, a, (1.0,))[0]), "contype": contype}
            kw["conaffinity"] = conaffinity
            if a.get("name"):
                kw["name"] = a["name"]
            out.append((shape, X @ pose, kw))
        return out

    def _total_mass(self, nodes):
        if self.totalmass <= 0:
            return
        total = sum(n.inertia.mass for n in nodes[1:] if n.inertia is not None)
        if total <= 0:
            return
        s = self.totalmass / total
        for n in nodes[1:]:
            if n.inertia is not None:
                I = n.inertia
                n.inertia = file_inertia(I.mass * s, I.com, I.inertia * s, f"body {n.name!r}", [])


def _solid(kind, size):
    """(volume, inertia about the centre per unit mass, principal axes = geom axes) of a MuJoCo
    geom. Capsule: a cylinder of half-length h with two hemispherical caps, mass shared by volume;
    a cap's inertia about the centre by the parallel-axis theorem from its own centre of mass
    (3r/8 from its flat face)."""
    if kind == "sphere":
        r = size[0]
        return 4.0 / 3.0 * math.pi * r**3, np.eye(3) * 0.4 * r * r
    if kind == "ellipsoid":
        a, b, c = size
        return 4.0 / 3.0 * math.pi * a * b * c, np.diag([b * b + c * c, a * a + c * c, a * a + b * b]) / 5.0
    if kind == "box":
        a, b, c = size
        return 8.0 * a * b * c, np.diag([b * b + c * c, a * a + c * c, a * a + b * b]) / 3.0
    r, h = size[0], size[1]
    if kind == "cylinder":
        t = r * r / 4.0 + h * h / 3.0
        return 2.0 * math.pi * r * r * h, np.diag([t, t, r * r / 2.0])
    # capsule
    v_cyl, v_caps = 2.0 * math.pi * r * r * h, 4.0 / 3.0 * math.pi * r**3
    V = v_cyl + v_caps
    H = 2.0 * h
    ixx = v_cyl * (H * H / 12.0 + r * r / 4.0) + v_caps * (0.4 * r * r + H * H / 4.0 + 3.0 * H * r / 8.0)
    izz = v_cyl * r * r / 2.0 + v_caps * 0.4 * r * r
    return V, np.diag([ixx, ixx, izz]) / V
