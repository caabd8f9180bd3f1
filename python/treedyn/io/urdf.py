"""URDF → treedyn.Model.

What is read: ``<link>`` with ``<inertial>`` (``<origin xyz rpy>``, ``<mass>``, the full
``<inertia>`` tensor about the centre of mass in the inertial frame); ``<joint>`` of type
revolute, continuous, prismatic, fixed, floating and planar, with ``<origin xyz rpy>``,
``<parent>``, ``<child>``, ``<axis>`` (any non-zero direction, normalised) and ``<limit>``
(revolute and prismatic ``lower``/``upper``: ``model.set_joint_limits``).

How the tree becomes a Model (the same choices as Pinocchio's ``buildModel``, so nq, nv and M(q)
agree with it):

* the root link is the one link that is no joint's child. Without ``floating_base`` it is the
  fixed world (body 0; its own inertia plays no part); with ``floating_base=True`` it is hinged to
  the world by a free joint named ``"root_joint"`` (a root link named "world", as in many arm
  descriptions, floats too, as in Pinocchio; its body is then named "floating_base").
* a fixed joint merges its child link into the parent's body: the child's inertia is folded in
  at the right pose and the child's own children hang from that body with composed placements.
  ``model.frames[link] = (body name, pose of the link frame in that body's frame)`` says where
  every link went.
* every moving joint makes one body named after its child link (``model.body_names``); the joint
  keeps its URDF name (``model.joint_names``). A continuous joint is a revolute joint with one
  angle coordinate (Pinocchio uses (cos, sin) there; treedyn does not).
* a planar joint is exactly two prismatic joints along the plane's axes followed by a revolute
  joint about its normal (the URDF ``axis``), through two massless bodies ``"<child>#x"`` and
  ``"<child>#y"``; its coordinates are (x, y, θ) with q_index(name) pointing at x, and the second
  and third joints are named ``"<name>#y"`` and ``"<name>#theta"``. For axis z the plane's axes
  are the joint frame's x and y, as in Pinocchio's JointModelPlanar (whose velocity is expressed in
  the moving frame, where treedyn's (ẋ, ẏ) is in the joint frame).
* a floating joint is a free joint; treedyn allows one only between the world and a body, i.e.
  from a fixed root link.

q ordering: bodies, hence joints, are numbered depth-first from the root (the floating base first),
each link's children in the order their joints appear in the file, or by their joints' names with
``joint_order="pinocchio"`` (Pinocchio's order); ``model.q_index(name)`` / ``v_index`` say where.

``<mimic joint multiplier offset>``: by default (``mimic="couple"``) the joint follows its leader
exactly, q = multiplier·q_leader + offset, as one constraint row of the model
(``Model.add_coupling``) that ``td.simulate``, ``td.ContactSimulator`` and
``td.constrained_forward_dynamics`` keep; the mimic joint keeps its own coordinate, so the tree,
its solvers and its q layout are those of the robot without the tag (a ``<mimic>`` on a fixed
joint has nothing to couple and is ignored, as Pinocchio does). ``mimic="independent"``
makes it an ordinary independent joint (Pinocchio's ``buildModel`` without ``mimic=True``);
``mimic="error"`` refuses the file.

Not supported (a ModelFileError naming the tag, the joint and the file): kinematic loops (a link that
is the child of two joints, joints that form a cycle), several root links, unknown joint types, xacro.

Collision geometry: each ``<collision>`` sphere, box, cylinder, capsule (the common extension,
``radius`` and ``length``) and mesh (by its convex hull, trimesh reading STL, OBJ and, with
pycollada, DAE; ``scale`` applied) becomes a geom of its link (``model.geoms``, named
``link/name``; a link merged by a fixed joint keeps its geoms at their place in the body), with
``contype`` 1 and ``conaffinity`` 0: it touches the geoms added with the default masks (a floor:
``model.add_geom(0, td.Plane())``) but not the robot's own (URDF says nothing of self-collision;
the hulls of neighbouring links overlap on Solo-12, TALOS; PyBullet also leaves it off by default;
``model.add_contact_pair`` adds the pairs wanted). A mesh that cannot be found or read is dropped
and recorded in ``model.dropped_geoms`` (``td.ContactSimulator`` warns about it). A ``<visual>``
becomes a visual of its link (``model.visuals``: what td.view draws; a mesh as a MeshFile, read
when drawn) with its ``<material>``'s colour; ``<transmission>`` and ``<gazebo>`` (ROS's and
Gazebo's configuration), ``<calibration>``, ``<safety_controller>`` are read past silently, any
unknown element with one ``IgnoredElementWarning`` per file. A joint's ``<dynamics damping
friction>`` (revolute, continuous, prismatic) is its viscous damping (``Model.set_joint_spring``'s
damping, used by every solver) and dry friction (``Model.set_joint_frictionloss``, kept by the
contact step); ``joint_dynamics=False`` leaves both out, as Pinocchio's ``aba`` does.

Meshes are looked for as ``package://pkg/file`` in ``<dir>/pkg/file`` for each of ``package_dirs``
(every directory in it must exist: FileNotFoundError naming it otherwise), then in a folder named
``pkg`` above the URDF file (or ``<folder>/pkg/file``: a ROS share folder, example-robot-data);
relative names beside the URDF file. With ``package_dirs`` given, meshes not found are listed in
one ``MissingMeshWarning``; the model still loads.
"""

from __future__ import annotations

import os
import warnings

import numpy as np

from .. import _checks
from ..model import Free, Inertia, Model, Prismatic, Revolute, Transform
from ..model.shapes import Box, Capsule, ConvexMesh, Cylinder, MeshFile, Sphere
from ._common import (
    IgnoredTags,
    file_inertia,
    floats,
    gc_paused,
    tiny,
    unit,
    user_stacklevel,
    warn_inconsistent_inertias,
    z_to_vector,
)
from ._files import Budget
from ._tree import IDENTITY, Node, Step, build_model, rotates, shift
from ._xml import ModelFileError, file_errors, read_xml
from .mesh import MeshError, read_mesh_bytes, trimesh_input

__all__ = ["load_urdf", "MissingMeshWarning"]


class MissingMeshWarning(UserWarning):
    """A mesh referenced by a <visual> or <collision> was not found in ``package_dirs``."""


_JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed", "floating", "planar")
_LINK_SILENT = {"inertial", "visual", "collision"}
_JOINT_SILENT = {"origin", "parent", "child", "axis", "limit", "dynamics", "calibration", "safety_controller", "mimic"}
# (<transmission> and <gazebo>: ROS's and Gazebo's configuration, in most robot files, not the robot's
# dynamics: read past without a word; an element no tool defines still warns)
_ROBOT_SILENT = {"link", "joint", "material", "transmission", "gazebo"}


MIMIC = ("couple", "independent", "error")
JOINT_ORDERS = ("file", "pinocchio")
_ZERO = np.zeros(3)
_ZERO.flags.writeable = False


def load_urdf(
    path_or_xml, floating_base=False, package_dirs=None, *, mimic="couple", joint_dynamics=True, joint_order="file"
) -> Model:
    """Load a URDF file (a path) or URDF text (a string starting with '<') as a treedyn Model.

    floating_base: hinge the root link to the world with a free joint named "root_joint".
    package_dirs: directories where ``package://`` meshes (collision shapes) are looked for first
        (missing ones are then warned about; see the module).
    mimic: "couple" (default): a ``<mimic>`` joint follows its leader exactly (a coupling constraint, see
        the module); "independent": an ordinary independent joint; "error": a ``<mimic>`` is an error.
    joint_dynamics: read the joints' ``<dynamics damping friction>`` (default), or leave them out
        (False), as Pinocchio's ``aba`` and ``rnea`` do (they keep them in ``model.damping`` only).
    joint_order: "file" (default: a link's children in file order) or "pinocchio" (by their joints' names,
        ``buildModelFromUrdf``'s order; q still differs at continuous joints: (cos, sin) in Pinocchio).
    """
    _checks.choice(mimic, "mimic", MIMIC)
    floating_base = _checks.boolean(floating_base, "floating_base")
    joint_dynamics = _checks.boolean(joint_dynamics, "joint_dynamics")
    _checks.choice(joint_order, "joint_order", JOINT_ORDERS)
    budget = Budget()  # what this load may read (the file and its meshes: treedyn.io._files)
    with gc_paused():
        doc = read_xml(path_or_xml, "URDF", budget)
        return _Reader(doc, floating_base, mimic, budget, joint_dynamics, joint_order).build(package_dirs)


class _Reader:
    def __init__(self, doc, floating_base, mimic, budget, joint_dynamics=True, joint_order="file"):
        self.doc = doc
        self.budget = budget
        self.floating_base = floating_base
        self.mimic = mimic
        self.mimics: list = []  # (joint, its <mimic> element) to couple once the tree is built
        self.ignored = IgnoredTags(doc.source)
        self.inconsistent: list[str] = []
        self.current = doc.root  # the element being read, for errors the checks did not foresee
        self.package_dirs: list = []  # where package:// meshes are looked for first
        self.dropped: list[str] = []  # collision shapes not made into geoms, and why
        self.dynamics: dict = {}  # joint name -> (damping, friction) of its <dynamics>
        self.joint_dynamics, self.joint_order = joint_dynamics, joint_order  # (load_urdf's)
        self.hulls: dict = {}  # (mesh path, scale) -> ConvexMesh, or why it could not be read

    def err(self, message, elem=None) -> ModelFileError:
        return self.doc.error(message, elem)

    # ------------------------------------------------------------------ the document
    def build(self, package_dirs) -> Model:
        if package_dirs is not None:
            dirs = [package_dirs] if isinstance(package_dirs, (str, os.PathLike)) else package_dirs
            self.package_dirs = [os.fspath(d) for d in dirs]
        with file_errors(self.err, lambda: self.current):
            return self._build(package_dirs)

    def _build(self, package_dirs) -> Model:
        doc, robot = self.doc, self.doc.root
        self._refuse_xacro(robot)
        if robot.tag != "robot":
            hint = " (this is MJCF: use Model.from_mjcf)" if robot.tag == "mujoco" else ""
            raise self.err(f"the root element is <{robot.tag}>, a URDF file has <robot>{hint}", robot)
        links, joints = {}, []
        for elem in robot:
            if not isinstance(elem.tag, str):
                continue
            if elem.tag == "link":
                name = self._name(elem, "link")
                if name in links:
                    raise self.err(
                        f"two links are named {name!r} (lines {doc.line(links[name])} and {doc.line(elem)})", elem
                    )
                links[name] = elem
            elif elem.tag == "joint":
                joints.append(elem)
            elif elem.tag not in _ROBOT_SILENT:
                self.ignored.add(elem.tag)
        if not links:
            xacro = " (is it an unexpanded xacro file?)" if "xacro" in str(robot.attrib) else ""
            raise self.err(f"no <link> in <robot>: this is not a robot description{xacro}", robot)
        tree, joint_of = self._tree(links, joints)
        root = self._root(links, joint_of)
        nodes, limits = self._nodes(root, links, tree, joint_of)
        if package_dirs is not None:
            self._check_meshes(links.values(), package_dirs)
        model = build_model(nodes, (0.0, 0.0, -9.81), self.err, doc.source)
        for name, (lower, upper) in limits.items():
            model.set_joint_limits(name, lower, upper)
        with model._passive_batch():  # <dynamics>: viscous and dry joint friction
            for name, (damping, friction) in self.dynamics.items() if self.joint_dynamics else ():
                if damping:
                    model.set_joint_spring(name, damping=damping)
                if friction:
                    model.set_joint_frictionloss(name, friction)
        model.source = doc.source
        for why in self.dropped:
            model._drop_geom(why)
        for j, mimic in self.mimics:
            self._couple(model, j, mimic)
        self.ignored.warn()
        warn_inconsistent_inertias(doc.source, self.inconsistent)
        return model

    def _couple(self, model, j, mimic):
        """joint j = multiplier·leader + offset (URDF's <mimic>), a coupling row of the model."""
        name, leader = j.get("name"), mimic.get("joint")
        what = f"joint {name!r} <mimic>"
        if leader is None:
            raise self.err(f"{what} has no joint attribute (the joint it follows)", mimic)
        if leader not in model._joint_index:  # (a moving joint; joint_names is a new list per call)
            raise self.err(
                f"{what}: no moving joint named {leader!r} to follow (load with mimic='independent' to ignore the tag)",
                mimic,
            )
        multiplier = floats(self.doc, mimic, "multiplier", 1, 1.0, what)
        offset = floats(self.doc, mimic, "offset", 1, 0.0, what)
        try:
            model.add_coupling(name, leader, polycoef=(offset, multiplier))
        except ValueError as e:
            raise self.err(f"{what}: {e}", mimic) from None

    def _refuse_xacro(self, robot):
        for elem in robot.iter():
            if isinstance(elem.tag, str) and elem.tag.startswith(("xacro:", "{http://www.ros.org/wiki/xacro}")):
                raise self.err(
                    f"<{elem.tag}> is a xacro macro: expand the file with xacro first "
                    f"(`xacro robot.urdf.xacro > robot.urdf`)",
                    elem,
                )

    def _name(self, elem, what) -> str:
        name = elem.get("name")
        if not name:
            raise self.err(f"a <{what}> has no name", elem)
        return name

    # ------------------------------------------------------------------ structure
    def _tree(self, links, joints):
        """children[link] = [joint elements in file order, or by name]; joint_of[child link] = its joint."""
        children = {name: [] for name in links}
        joint_of, names = {}, {}
        for j in joints:
            self.current = j
            name = self._name(j, "joint")
            if name in names:
                raise self.err(
                    f"two joints are named {name!r} (lines {self.doc.line(names[name])} and {self.doc.line(j)})", j
                )
            names[name] = j
            parent, child = self._link_ref(j, "parent", links), self._link_ref(j, "child", links)
            if parent == child:
                raise self.err(f"joint {name!r} connects link {parent!r} to itself", j)
            if child in joint_of:
                other = joint_of[child]
                raise self.err(
                    f"link {child!r} is the child of two joints, {other.get('name')!r} (line "
                    f"{self.doc.line(other)}) and {name!r}: a kinematic loop, which treedyn "
                    f"(a tree) cannot represent",
                    j,
                )
            joint_of[child] = j
            children[parent].append(j)
        if self.joint_order == "pinocchio":  # (names are unique: checked above)
            return {link: sorted(js, key=lambda j: j.get("name")) for link, js in children.items()}, joint_of
        return children, joint_of

    def _link_ref(self, joint, tag, links) -> str:
        e = joint.find(tag)
        jn = joint.get("name")
        if e is None or not e.get("link"):
            raise self.err(f"joint {jn!r} has no <{tag} link=...>", joint)
        name = e.get("link")
        if name not in links:
            raise self.err(f"joint {jn!r}: {tag} link {name!r} is not defined", e)
        return name

    def _root(self, links, joint_of) -> str:
        roots = [n for n in links if n not in joint_of]
        if not roots:
            raise self.err("every link is the child of a joint, so the joints form a loop: no root link", self.doc.root)
        if len(roots) > 1:
            shown = ", ".join(repr(r) for r in roots[:6]) + (", ..." if len(roots) > 6 else "")
            raise self.err(
                f"{len(roots)} links are no joint's child ({shown}); a URDF must be a single tree with one root link",
                self.doc.root,
            )
        return roots[0]

    def _nodes(self, root, links, children, joint_of):
        """Depth-first list of Nodes (iterative: URDF chains can be deeper than Python's stack)."""
        nodes, limits, seen = [], {}, set()
        stack = [root]
        while stack:
            link = stack.pop()
            seen.add(link)
            elem = self.current = links[link]
            if link == root:
                node = Node(link, None, elem=elem)
                if self.floating_base:
                    # a root link named "world" (as in many arm descriptions) floats too, as in
                    # Pinocchio; its body cannot take the world's name
                    node.steps = [Step("root_joint", Free(), IDENTITY)]
                    if link == "world":
                        node.body_name = "floating_base"
            else:
                if link == "world":
                    raise self.err(
                        "a link that is not the root is named 'world', the name treedyn gives the fixed world", elem
                    )
                self.current = joint_of[link]
                node = self._joint_node(joint_of[link], link, limits)
            self.current = elem
            node.inertia = self._inertia(elem, link)
            node.geoms = self._collisions(elem, link)
            node.visuals = self._visuals(elem, link)
            nodes.append(node)
            stack.extend(reversed([j.find("child").get("link") for j in children[link]]))
        if len(seen) != len(links):
            lost = [n for n in links if n not in seen]
            raise self.err(
                f"links {lost[:6]} are not connected to the root link {root!r}: their joints form a kinematic loop",
                links[lost[0]],
            )
        return nodes, limits

    # ------------------------------------------------------------------ elements
    def _origin(self, elem, what) -> Transform:
        o = elem.find("origin")
        if o is None:
            return IDENTITY
        xyz = floats(self.doc, o, "xyz", 3, _ZERO, what)
        rpy = floats(self.doc, o, "rpy", 3, None, what) if o.get("rpy") is not None else None
        if rpy is None or rpy.tolist() == [0.0, 0.0, 0.0]:  # (most origins do not rotate)
            return shift(xyz)
        return Transform.from_rpy(rpy, xyz)

    def _joint_node(self, j, child, limits) -> Node:
        doc = self.doc
        name = j.get("name")
        what = f"joint {name!r}"
        for e in j:
            if isinstance(e.tag, str) and e.tag not in _JOINT_SILENT:
                self.ignored.add(e.tag)
        kind = j.get("type")
        if kind not in _JOINT_TYPES:
            raise self.err(f"joint {name!r} has type {kind!r}; the URDF joint types are {', '.join(_JOINT_TYPES)}", j)
        mimic = j.find("mimic")
        if mimic is not None and self.mimic == "error":
            raise self.err(
                f"joint {name!r} has a <mimic joint={mimic.get('joint')!r}> tag, refused with mimic='error'; "
                f"load with mimic='couple' (the default: it follows its leader) or mimic='independent' "
                f"(command line: --mimic independent) to make it an ordinary independent joint",
                mimic,
            )
        if mimic is not None and self.mimic == "couple" and kind != "fixed":  # a fixed joint has nothing to couple
            self.mimics.append((j, mimic))
        parent = j.find("parent").get("link")
        origin = self._origin(j, what)
        node = Node(child, parent, elem=j)
        if kind == "fixed":
            node.placement = origin
            return node
        if kind == "floating":
            node.steps = [Step(name, Free(), origin)]
            return node
        ax = j.find("axis")
        axis = np.array([1.0, 0.0, 0.0]) if ax is None else floats(doc, ax, "xyz", 3, np.array([1.0, 0, 0]), what)
        if tiny(axis):
            raise self.err(f"joint {name!r} has a zero <axis xyz={ax.get('xyz')!r}>", ax)
        if kind in ("revolute", "prismatic"):
            lim = j.find("limit")
            if lim is not None and (lim.get("lower") is not None or lim.get("upper") is not None):
                limits[name] = (floats(doc, lim, "lower", 1, 0.0, what), floats(doc, lim, "upper", 1, 0.0, what))
                if not limits[name][0] <= limits[name][1]:
                    raise self.err(
                        f"joint {name!r}: <limit lower={lim.get('lower')!r} upper={lim.get('upper')!r}> "
                        "has lower > upper",
                        lim,
                    )
        dyn = j.find("dynamics")
        if dyn is not None and kind in ("revolute", "continuous", "prismatic"):  # (planar, floating: not read)
            damping = floats(doc, dyn, "damping", 1, 0.0, what)
            friction = floats(doc, dyn, "friction", 1, 0.0, what)
            if damping < 0 or friction < 0:
                raise self.err(f"joint {name!r}: <dynamics damping friction> must be >= 0", dyn)
            self.dynamics[name] = (damping, friction)
        if kind in ("revolute", "continuous"):
            node.steps = [Step(name, Revolute(axis), origin)]
        elif kind == "prismatic":
            node.steps = [Step(name, Prismatic(axis), origin)]
        else:  # planar: motion in the plane normal to axis = prismatic u, prismatic w, revolute axis
            axis = unit(axis)  # (the joints normalise their own axes)
            R = z_to_vector(axis)
            node.steps = [
                Step(name, Prismatic(R[:, 0]), origin, body_name=f"{child}#x"),
                Step(f"{name}#y", Prismatic(R[:, 1]), IDENTITY, body_name=f"{child}#y"),
                Step(f"{name}#theta", Revolute(axis), IDENTITY),
            ]
        return node

    def _visuals(self, link_elem, link) -> list:
        """The link's <visual>s as (shape, pose in the link frame, add_visual keywords): spheres,
        boxes, cylinders, capsules, and meshes as MeshFile (read when drawn; not found: left out),
        coloured by their <material>'s <color rgba> (inline, or the robot's material of that name)."""
        out = []
        for k, v in enumerate(link_elem.findall("visual")):
            what = f"link {link!r} <visual>"
            shape = _geometry(v)
            if shape is None:
                continue  # (nothing to draw; visuals are no part of the dynamics)
            try:
                if shape.tag == "mesh":
                    path = self._find_mesh(shape.get("filename", ""), self.package_dirs)
                    if path is None:
                        continue
                    geom = MeshFile(os.path.abspath(path), floats(self.doc, shape, "scale", 3, (1.0, 1.0, 1.0), what))
                else:
                    geom = self._primitive(shape, what)
            except (ValueError, TypeError) as e:
                raise self.err(f"{what}: {e}", shape) from None
            if geom is not None:
                name = f"{link}/{v.get('name') or f'visual{k}'}"
                out.append((geom, self._origin(v, what), {"name": name, "rgba": self._rgba(v.find("material"), what)}))
        return out

    def _rgba(self, material, what):
        """A <material>'s colour: its <color rgba>, else the robot's <material> of its name's; None."""
        if material is None:
            return None
        color = material.find("color")
        if color is None and material.get("name"):
            if not hasattr(self, "_materials"):  # the robot's <material>s by name, found once
                self._materials = {m.get("name"): m for m in self.doc.root.findall("material")}
            named = self._materials.get(material.get("name"))
            color = None if named is None else named.find("color")
        rgba = None if color is None else floats(self.doc, color, "rgba", 4, None, what + " <color>")
        return None if rgba is None else tuple(float(x) for x in np.clip(rgba, 0.0, 1.0))

    def _collisions(self, link_elem, link) -> list:
        """The link's <collision> spheres, boxes, cylinders, capsules (the common extension: radius,
        length) and meshes (by their convex hull, ``scale`` applied) as (shape, pose in the link
        frame, add_geom keywords); a mesh that cannot be found or read is recorded as dropped."""
        out = []
        for k, c in enumerate(link_elem.findall("collision")):
            what = f"link {link!r} <collision>"
            shape = _geometry(c)
            if shape is None:
                raise self.err(f"{what} has no <geometry>", c)
            name = f"{link}/{c.get('name') or f'collision{k}'}"
            try:
                if shape.tag == "mesh":
                    scale = floats(self.doc, shape, "scale", 3, (1.0, 1.0, 1.0), what)
                    geom = self._mesh_hull(shape.get("filename", ""), scale, name)
                    if geom is None:
                        continue
                else:
                    geom = self._primitive(shape, what)
                    if geom is None:
                        self.dropped.append(f"collision {name!r}: <{shape.tag}> is not a URDF shape")
                        continue
            except (ValueError, TypeError) as e:
                raise self.err(f"{what}: {e}", shape) from None
            # conaffinity 0: no self-collision (module docstring), the world's geoms still touched
            out.append((geom, self._origin(c, what), {"name": name, "conaffinity": 0}))
        return out

    def _primitive(self, shape, what):
        """A <geometry>'s sphere, box, cylinder or capsule (the common extension: radius, length);
        None for another element."""
        if shape.tag == "sphere":
            return Sphere(floats(self.doc, shape, "radius", 1, None, what))
        if shape.tag == "box":
            return Box(0.5 * floats(self.doc, shape, "size", 3, None, what))
        if shape.tag in ("capsule", "cylinder"):
            length = floats(self.doc, shape, "length", 1, None, what)
            kind = Capsule if shape.tag == "capsule" else Cylinder
            return kind(floats(self.doc, shape, "radius", 1, None, what), 0.5 * length)
        return None

    def _mesh_hull(self, filename, scale, name):
        """The convex hull of a collision mesh (ConvexMesh), read once per file and scale by trimesh;
        None (recorded in self.dropped) when it cannot be found or read."""
        path = self._find_mesh(filename, self.package_dirs) if filename else None
        if not path:
            self.dropped.append(f"collision {name!r}: mesh {filename!r} not found")
            return None
        key = (path, tuple(scale))
        if key not in self.hulls:
            try:
                import trimesh

                # read here (a regular file, within the load's budget: treedyn.io._files), parsed from memory
                kind = os.path.splitext(path)[1].lower().lstrip(".")
                stream = trimesh_input(path, read_mesh_bytes(path, self.budget), kind)
                mesh = trimesh.load(stream, file_type=kind, force="mesh")
                self.hulls[key] = ConvexMesh.hull(np.asarray(mesh.vertices, dtype=float) * scale)
            except MeshError as e:
                self.hulls[key] = f"mesh {filename!r} unreadable ({e})"
            except Exception as e:  # trimesh's readers raise many kinds (a .dae without pycollada: ImportError)
                self.hulls[key] = f"mesh {filename!r} unreadable ({type(e).__name__}: {e})"
        if isinstance(self.hulls[key], str):
            self.dropped.append(f"collision {name!r}: {self.hulls[key]}")
            return None
        return self.hulls[key]

    def _inertia(self, link_elem, link) -> Inertia | None:
        for e in link_elem:
            if isinstance(e.tag, str) and e.tag not in _LINK_SILENT:
                self.ignored.add(e.tag)
        inertial = link_elem.find("inertial")
        if inertial is None:
            return None
        doc, what = self.doc, f"link {link!r} <inertial>"
        X = self._origin(inertial, what)
        m = inertial.find("mass")
        if m is None:
            raise self.err(f"{what} has no <mass>", inertial)
        mass = floats(doc, m, "value", 1, None, what + " <mass>")
        i = inertial.find("inertia")
        if i is None:
            raise self.err(f"{what} has no <inertia>", inertial)
        ixx, ixy, ixz, iyy, iyz, izz = (
            floats(doc, i, k, 1, None, what + " <inertia>") for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")
        )
        I = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
        I = X.rotation @ I @ X.rotation.T if rotates(X) else I
        try:
            return file_inertia(mass, X.translation, I, f"link {link!r}", self.inconsistent)
        except ValueError as e:
            raise self.err(f"{what}: {e}", inertial) from None

    # ------------------------------------------------------------------ meshes
    def _check_meshes(self, link_elems, package_dirs) -> None:
        if isinstance(package_dirs, (str, os.PathLike)):
            package_dirs = [package_dirs]
        dirs = [os.fspath(d) for d in package_dirs]
        for d in dirs:
            if not os.path.isdir(d):
                raise FileNotFoundError(
                    f"{self.doc.source}: package directory not found: {d!r} (given in package_dirs to look for meshes)"
                )
        missing = []
        for link in link_elems:
            for mesh in link.iterfind("./*/geometry/mesh"):
                fn = mesh.get("filename", "")
                if fn and not self._find_mesh(fn, dirs):
                    missing.append(fn)
        if missing:
            shown = ", ".join(repr(m) for m in missing[:3]) + (", ..." if len(missing) > 3 else "")
            warnings.warn(
                f"{self.doc.source}: {len(missing)} mesh file(s) not found in package_dirs "
                f"{dirs} ({shown}); the collisions among them have no geom (model.dropped_geoms)",
                MissingMeshWarning,
                stacklevel=user_stacklevel(),
            )

    def _find_mesh(self, fn: str, dirs) -> str | None:
        """The path of a mesh file: ``package://pkg/file`` as ``<dir>/pkg/file`` for a dir of
        ``dirs``, and without them (or not found there) as ``<folder>/file`` for a folder named pkg
        above the URDF file, or ``<folder>/pkg/file`` (the layout of a ROS share folder or of
        example-robot-data); ``file://`` and absolute paths as they are; relative names beside the
        URDF file or in ``dirs``. None when not found."""
        dirs = list(dirs or [])
        if fn.startswith("package://"):
            rel = fn[len("package://") :]
            pkg, _, rest = rel.partition("/")
            found = [os.path.join(d, rel) for d in dirs]
            folder = os.path.abspath(self.doc.base_dir) if self.doc.base_dir else None
            while folder and os.path.dirname(folder) != folder:
                found += [os.path.join(folder, rest)] if os.path.basename(folder) == pkg else []
                found.append(os.path.join(folder, rel))
                folder = os.path.dirname(folder)
        elif fn.startswith("file://"):
            found = [fn[len("file://") :]]
        elif os.path.isabs(fn):
            found = [fn]
        else:
            found = [os.path.join(d, fn) for d in [self.doc.base_dir, *dirs] if d is not None]
        return next((f for f in found if os.path.isfile(f)), None)


def _geometry(elem):
    """The shape element (<box>, <mesh>, ...) of a <visual>'s or <collision>'s <geometry>; None."""
    g = elem.find("geometry")
    return None if g is None else next((e for e in g if isinstance(e.tag, str)), None)
