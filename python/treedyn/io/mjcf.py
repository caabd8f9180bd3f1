"""MJCF (MuJoCo XML) → treedyn.Model: the subset that describes articulated mechanisms.

What is read:

* ``<worldbody>`` and nested ``<body>`` (``name``, ``pos``, and one of ``quat`` (w, x, y, z),
  ``axisangle``, ``euler``, ``xyaxes``, ``zaxis``; ``childclass``), ``<frame>`` (a pose and a
  childclass for what it holds), ``<include file>``;
* ``<joint>`` of type hinge, slide, ball and free (``pos``, ``axis``, ``ref``, ``range`` and
  ``limited``: hinge and slide limits by MuJoCo's rules, ``model.set_joint_limits``, in radians and
  metres), ``<freejoint>``; several joints in one body compose in order, as in MuJoCo;
* ``<inertial>`` (``mass``, ``pos``, orientation, ``diaginertia`` or ``fullinertia``); without it
  (``inertiafromgeom="auto"``, the default) the inertia of the body's ``<geom>``s of type sphere,
  ellipsoid, box, capsule, cylinder (``size`` or ``fromto``) and mesh (``pos``, orientation,
  ``density`` (default 1000) or ``mass``, ``group`` within ``inertiagrouprange``; ``shellinertia``
  for the primitives: the mass on the surface, as MuJoCo computes it);
* ``<asset><mesh>`` for those mesh geoms (``treedyn.io.mesh``): an STL (binary or ASCII), OBJ or
  MSH ``file`` (``content_type``; relative to the main file's folder through ``<compiler meshdir>``
  or ``assetdir``, also when the mesh is declared in an ``<include>``d file) or inline ``vertex``/
  ``face``; ``scale``, ``refpos``, ``refquat``; ``inertia`` legacy (MuJoCo's default), exact,
  convex or shell; ``class`` and ``<default><mesh>``. A mesh is read only when a body's inertia
  needs it;
* ``<default>`` classes (nested, inherited) for joint and geom attributes;
* ``<compiler angle autolimits eulerseq inertiafromgeom inertiagrouprange settotalmass boundmass
  boundinertia balanceinertia>`` (``angle`` is
  "degree" by default, as in MuJoCo: it applies to euler, axisangle and hinge ref/range);
* ``<option gravity>`` (default 0 0 -9.81) and ``<option><flag gravity="disable"/>``.
* ``<equality>`` connect, weld, joint and tendon (fixed tendons, ``<tendon><fixed>``), ``active``,
  as the model's hard constraints (``Model.add_loop_closure``, ``Model.add_coupling``; the rules:
  ``treedyn.io.mjcf_equality``), with MuJoCo's qpos0 kept as ``model.reference_configuration``;
  ``solref``/``solimp`` are noted as not used (treedyn's constraints are hard).

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
shapes yet: a mesh geom adds only its mass and inertia).

Not modelled, with one IgnoredElementWarning per file that says so: joint ``damping``,
``stiffness``, ``frictionloss`` and ``armature``, body ``gravcomp``, fluid forces (treedyn takes
forces as inputs and has no rotor inertia, so M differs from MuJoCo's by the armature);
``<actuator>``, ``<tendon>``, ``<sensor>``, ``<contact>`` (forces are inputs). Silently ignored:
``<asset>`` but its meshes, ``<visual>``, ``<statistic>``, ``<size>``, ``<keyframe>``, ``<custom>``,
``<extension>``, sites, cameras, lights. A ball joint's range is noted as not modelled.

Errors (ModelFileError naming the element, file and line): flex equalities and tendon equalities
on spatial tendons, flexes, composites, ``<replicate>``, ``<attach>``, a geom whose inertia treedyn
cannot compute (hfield, sdf, a primitive fitted to a mesh, ``shellinertia`` on a mesh (MuJoCo's
error too), a mesh made by ``builtin`` or a plugin, ``maxhullvert`` with ``inertia="convex"``) in a
body that needs it; a mesh file that is missing or unreadable, and the meshes MuJoCo refuses (fewer
than 4 vertices, all in one plane, a negative or too small volume, faces not consistently oriented
for ``inertia="exact"``), each naming the mesh, its file and the line of its ``<mesh>``; a free
joint below the top level, ``compiler coordinate="global"``, ``alignfree``.
"""

from __future__ import annotations

import math
import os

import numpy as np

from ..model import Free, Inertia, Model, Prismatic, Revolute, Spherical, Transform
from ..model.shapes import Box, Capsule, Plane, Sphere
from ._common import (
    IgnoredTags,
    axis_angle_matrix,
    file_inertia,
    quat_to_matrix,
    tiny,
    unchecked_inertia,
    unit,
    warn_inconsistent_inertias,
    z_to_vector,
)
from ._tree import Node, Step, build_model, fold_inertias
from ._xml import ModelFileError, file_errors, parse_xml_text, read_xml
from .mesh import MESH_INERTIA, MeshError, inline_mesh, mass_properties, place_vertices, read_mesh_file
from .mjcf_equality import add_equalities, fixed_tendons, reference_configuration, site_poses

__all__ = ["load_mjcf"]

_SILENT_SECTIONS = {"asset", "visual", "statistic", "size", "keyframe", "custom", "extension"}
_WARN_SECTIONS = {
    "actuator": "actuators",
    "tendon": "tendons' springs, dampers and limits (a fixed tendon named by an <equality> is kept)",
    "sensor": "sensors",
    "contact": "contact pairs and exclusions",
}
_ERROR_SECTIONS = {
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
        self.qpos0: dict = {}  # joint name -> MuJoCo's qpos0: hinge/slide ref, a free body's pose
        self.body_names: dict[int, str] = {}  # id(<body> element) -> its name (given or made)
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
        self.meshes = self._mesh_assets(root)
        worldbodies = [e for e in root if e.tag == "worldbody"]
        for e in root:
            if not isinstance(e.tag, str) or e.tag in ("worldbody", "default", "compiler", "option", "include"):
                continue
            if e.tag == "equality":
                continue  # read once the tree is built (mjcf_equality)
            if e.tag in _ERROR_SECTIONS:
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
        for name, (lower, upper) in self.limits.items():
            model.set_joint_limits(name, lower, upper)
        model.source = self.doc.source
        model.reference_configuration = reference_configuration(model, self.qpos0)
        self.tendons, self.sites = fixed_tendons(self, root), site_poses(self, root)
        add_equalities(self, model, [e for e in root if e.tag == "equality"], model.reference_configuration)
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
        # lower bounds on each body's mass and principal moments, and the fix of moments that break the
        # triangle inequality (their mean), as MuJoCo applies them to every body but the world
        self.boundmass = float(self._vec(elem, "boundmass", 1, c, (0.0,))[0])
        self.boundinertia = float(self._vec(elem, "boundinertia", 1, c, (0.0,))[0])
        self.balanceinertia = c.get("balanceinertia", "false") == "true"
        if c.get("alignfree", "false") == "true":
            raise self.err("<compiler alignfree='true'> is not supported", elem)
        self.totalmass = float(self._vec(elem, "settotalmass", 1, c, (-1.0,))[0])
        self.autolimits = c.get("autolimits", "true")  # MuJoCo's default since 2.2.2
        if self.autolimits not in ("true", "false"):
            raise self.err(f"<compiler autolimits={self.autolimits!r}>: must be 'true' or 'false'", elem)
        # mesh files: meshdir, else assetdir, relative to the main file's folder (MuJoCo's rule; an
        # <include>d file's meshes too)
        self.meshdir = c.get("meshdir", c.get("assetdir", ""))

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
            self.body_names[id(elem)] = name
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
                self.qpos0[name] = body_pose
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
            if kind != "ball":
                self.qpos0[name] = self._angle(ref) if kind == "hinge" else ref
            if kind == "hinge":
                ref = self._angle(ref)
                joint = Revolute(axis)
                pre = Transform(axis_angle_matrix(axis, -ref), np.zeros(3))  # the file's pose is q = ref
            elif kind == "slide":
                joint = Prismatic(axis)
                pre = Transform(np.eye(3), -ref * unit(axis))
            else:
                joint, pre = Spherical(), Transform()
            self._range(name, kind, a, e)
            placement = prev @ Transform(np.eye(3), p - anchor) @ pre
            steps.append(Step(name, joint, placement, body_name))
            prev, anchor = Transform(), p
        node.steps = steps
        if steps:
            node.offset = Transform(np.eye(3), -anchor)
        else:
            node.placement = body_pose

    def _range(self, name, kind, a, e):
        """The joint's limits into self.limits, by MuJoCo's rules (mjCJoint::Compile): limited="true"
        limits, "false" does not, and "auto" (the default) limits when range[0] < range[1] — an error
        if the range is given (not "0 0") while <compiler autolimits="false">. A limited joint needs
        range[0] < range[1]. Hinge ranges are in <compiler angle> units (degrees by default) and
        stored in radians, slide ranges in metres. A ball's range (a cone on its rotation angle) is
        not modelled."""
        limited = a.get("limited", "auto")
        if limited not in ("auto", "true", "false"):
            raise self.err(f"joint {name!r}: limited={limited!r} must be 'true', 'false' or 'auto'", e)
        lo, hi = self._vec(e, "range", 2, a, (0.0, 0.0))
        if limited == "auto" and (lo != 0 or hi != 0) and self.autolimits == "false":
            raise self.err(
                f"joint {name!r} has a range but no limited attribute while <compiler autolimits='false'>: "
                "give limited='true' or 'false' (MuJoCo refuses it too)",
                e,
            )
        if not (limited == "true" or (limited == "auto" and lo < hi)):
            return
        if kind == "ball":
            self.ignored.note(f"ball joint {name!r}: its range (a cone on the rotation angle) is not modelled")
            return
        if not lo < hi:
            raise self.err(
                f"joint {name!r} is limited with range {a['range'] if 'range' in a else '0 0'!r}: "
                "range[0] must be smaller than range[1]",
                e,
            )
        if kind == "hinge":
            lo, hi = self._angle(lo), self._angle(hi)
        self.limits[name] = (float(lo), float(hi))

    def _passive(self, name, a, e):
        for attr in ("damping", "stiffness", "frictionloss", "armature"):
            if attr in a:
                vals = self._vec(e, attr, None, a)
                if np.any(vals != 0):
                    self.passive.setdefault(attr, []).append(name)

    # ------------------------------------------------------------------ inertia
    def _body_inertia(self, body, name, contents):
        I = self._file_body_inertia(body, name, contents)
        if not (self.boundmass > 0 or self.boundinertia > 0 or self.balanceinertia):
            return I
        if I is None:
            I = Inertia(0.0, np.zeros(3), np.zeros((3, 3)))
        d, V = np.linalg.eigh(I.inertia)  # principal moments about the centre of mass
        d = np.maximum(d, self.boundinertia)
        if self.balanceinertia and d[0] + d[1] < d[2]:
            d[:] = d.mean()
        return unchecked_inertia(max(I.mass, self.boundmass), I.com, (V * d) @ V.T)

    def _file_body_inertia(self, body, name, contents):
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
        shell = a.get("shellinertia", "false") == "true"
        if kind == "mesh":
            if shell:  # MuJoCo's rule: "for mesh geoms, inertia should be specified in the mesh asset"
                raise self.err(f"{what}: shellinertia does not apply to a mesh; set inertia='shell' on its <mesh>", g)
            p = self._mesh(g, a, what)  # per unit density, in the mesh's coordinates = the geom's
            m = mass if explicit_mass else density * p.measure
            inertia = file_inertia(m, p.com, (m / p.measure) * p.inertia, what, self.inconsistent)
            return (inertia, X @ self._pose(g, a))
        if kind not in _GEOM_SOLIDS:
            raise self.err(
                f"{what} is a {kind}: treedyn computes inertias of {', '.join(_GEOM_SOLIDS)} and mesh "
                f"only; give body {body!r} an <inertial>",
                g,
            )
        if "mesh" in a:  # MuJoCo fits the primitive to the mesh (fitscale, fitaabb)
            raise self.err(f"{what}: a {kind} fitted to mesh {a['mesh']!r} is not supported; give it a size", g)
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
        V, I_unit = (_shell if shell else _solid)(kind, size)  # volume (area), inertia per unit mass
        if V <= 0:
            raise self.err(f"{what}: size {a.get('size')!r} gives a {kind} of zero volume", g)
        m = mass if explicit_mass else density * V
        return (Inertia(m, np.zeros(3), m * I_unit), X @ pose)

    # ------------------------------------------------------------------ meshes
    def _mesh_assets(self, root):
        """{name: (<mesh> element, its attributes over its default class)} of <asset><mesh>; a mesh
        without a name is named after its file without folder and extension (MuJoCo's rule)."""
        out = {}
        for sec in (e for e in root if e.tag == "asset"):
            for e in (e for e in sec if e.tag == "mesh"):
                self.current = e
                a = self._attrs(e, "main")
                name = a.get("name") or os.path.splitext(os.path.basename(a.get("file", "")))[0]
                if not name:
                    raise self.err("a <mesh> needs a name or a file", e)
                if name in out:
                    raise self.err(f"two meshes are named {name!r}", e)
                if "file" in a and not os.path.isfile(self._mesh_path(a["file"])):  # MuJoCo's error too
                    raise self.err(f"mesh {name!r}: file {a['file']!r} not found ({self._mesh_path(a['file'])})", e)
                out[name] = (e, a)
        self.mesh_properties = {}  # name -> MassProperties, read when a body's inertia needs it
        return out

    def _mesh_path(self, fn):
        return fn if os.path.isabs(fn) else os.path.join(self.doc.base_dir, self.meshdir, fn)

    def _mesh(self, g, a, what):
        """The mass properties (per unit density) of the mesh a geom refers to, read once."""
        name = a.get("mesh")
        if name not in self.meshes:
            raise self.err(f"{what}: " + (f"no <mesh name={name!r}> in <asset>" if name else "no mesh attribute"), g)
        if name not in self.mesh_properties:
            e, m = self.meshes[name]
            self.current = e
            where = f"mesh {name!r}" + (f" (file {m['file']!r})" if "file" in m else "")
            try:
                self.mesh_properties[name] = self._read_mesh(e, m, where)
            except MeshError as ex:
                raise self.err(f"{where}: {ex}", e) from None
        return self.mesh_properties[name]

    def _read_mesh(self, e, m, where):
        mode = m.get("inertia", "legacy")  # MuJoCo's default, still legacy in 4.0
        if mode not in MESH_INERTIA:
            raise self.err(f"{where}: inertia={mode!r} must be one of {', '.join(MESH_INERTIA)}", e)
        for attr in ("builtin", "plugin"):
            if attr in m:
                raise self.err(f"{where}: a mesh made by {attr}= is not supported; give it a file or vertices", e)
        if mode == "convex" and m.get("maxhullvert", "-1").strip() != "-1":
            raise self.err(f"{where}: maxhullvert with inertia='convex' is not supported", e)
        if "file" in m:
            if "vertex" in m:
                raise self.err(f"{where}: give either a file or vertex, not both", e)
            V, F = read_mesh_file(self._mesh_path(m["file"]), m.get("content_type"))
        elif "vertex" in m:
            V, F = inline_mesh(self._vec(e, "vertex", None, m), self._vec(e, "face", None, m, ()))
        else:
            raise self.err(f"{where}: a mesh needs a file or vertex", e)
        R = quat_to_matrix(self._vec(e, "refquat", 4, m, (1, 0, 0, 0)))
        scale, refpos = self._vec(e, "scale", 3, m, (1, 1, 1)), self._vec(e, "refpos", 3, m, (0, 0, 0))
        return mass_properties(*place_vertices(V, F, scale, refpos, R), mode)

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


_ELLIPSOID_SHELL = 1e-6  # MuJoCo's thickness for an ellipsoid's shell inertia (measured)


def _shell(kind, size):
    """(area, inertia about the centre per unit mass) of a MuJoCo geom with shellinertia="true":
    the mass spread evenly over its surface (a cylinder's end discs included). An ellipsoid's area
    is Thomsen's approximation 4π((aᵖbᵖ + aᵖcᵖ + bᵖcᵖ)/3)^(1/p), p = 1.6075, and its inertia per
    unit mass that of the solid ellipsoid (a + t, b + t, c + t) minus (a, b, c), t = 1e-6 (in the
    model's length unit), both as in MuJoCo 4.0 (measured: tests/test_io_mesh.py; the difference
    cancels all but ~t/a of the digits, in MuJoCo as here)."""
    if kind == "sphere":
        r = size[0]
        return 4.0 * math.pi * r * r, np.eye(3) * (2.0 / 3.0) * r * r
    if kind == "ellipsoid":
        a, b, c = size
        p = 1.6075
        area = 4.0 * math.pi * (((a * b) ** p + (a * c) ** p + (b * c) ** p) / 3.0) ** (1.0 / p)
        t = _ELLIPSOID_SHELL  # a shell of this thickness outside the surface
        outer, inner = np.array([a, b, c]) + t, np.array([a, b, c])
        volume = np.prod(outer) - np.prod(inner)  # ∝ the shell's volume (4π/3 cancels)
        I = [np.prod(e) * (e[j] ** 2 + e[k] ** 2) for e in (outer, inner) for j, k in ((1, 2), (0, 2), (0, 1))]
        return area, np.diag(np.subtract(I[:3], I[3:])) / (5.0 * volume)
    if kind == "box":  # the pair of faces normal to axis k lies at ±size[k]
        s2 = np.asarray(size, dtype=float) ** 2
        A = 8.0 * np.array([size[1] * size[2], size[0] * size[2], size[0] * size[1]])  # both faces of a pair
        I = np.zeros(3)
        for k in range(3):
            for i in range(3):
                j = 3 - i - k  # for i ≠ k: the third axis
                I[i] += A[k] * ((s2.sum() - s2[k]) / 3.0 if i == k else s2[k] + s2[j] / 3.0)
        return A.sum(), np.diag(I) / A.sum()
    r, h = size[0], size[1]
    side = 4.0 * math.pi * r * h  # the lateral surface, length 2h
    if kind == "cylinder":
        disc = math.pi * r * r
        area = side + 2.0 * disc
        ixx = side * (r * r / 2.0 + h * h / 3.0) + 2.0 * disc * (r * r / 4.0 + h * h)
        return area, np.diag([ixx, ixx, side * r * r + disc * r * r]) / area
    # capsule: two hemispherical shells (centroid r/2 from the flat face, 2/3 m r² about the
    # sphere's centre), their centres at ±h
    caps = 4.0 * math.pi * r * r
    area = side + caps
    ixx = side * (r * r / 2.0 + h * h / 3.0) + caps * (2.0 / 3.0 * r * r + h * h + h * r)
    return area, np.diag([ixx, ixx, side * r * r + caps * 2.0 / 3.0 * r * r]) / area


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
