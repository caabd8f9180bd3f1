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
* ``<option gravity>`` (default 0 0 -9.81), ``<option timestep>`` (default 0.002 s, MuJoCo's) and
  ``<option><flag gravity="disable"/>``;
* ``<keyframe>``: ``model.keyframes`` (``treedyn.io.mjcf.keyframes``).
* ``<equality>`` connect, weld, joint and tendon (fixed tendons, ``<tendon><fixed>``), ``active``,
  as the model's constraints (``Model.add_loop_closure``, ``Model.add_coupling``; the rules:
  ``treedyn.io.mjcf.equality``), with MuJoCo's qpos0 kept as ``model.reference_configuration``;
  soft with their ``solref``/``solimp`` (``Model.set_constraint_softness``) where the contacts are.

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

Collision geometry (docs/contact.md): every sphere, capsule, box, plane, cylinder, ellipsoid
(``fromto`` too) and mesh geom (by its convex hull, ``treedyn.ConvexMesh``) with a non-zero
``contype`` or ``conaffinity`` becomes a geom of its body (``model.geoms``: ``friction``'s three
values (sliding, torsional, rolling), ``contype``, ``conaffinity``, ``condim`` (1 frictionless; 4
and 6 add torsional and rolling friction with MuJoCo's pyramidal soft cone), ``margin (a pair's is the sum of its geoms',
as MuJoCo 4.0 adds them)); an hfield, an sdf or a primitive fitted to a mesh is dropped and
recorded in ``model.dropped_geoms``. ``<contact>``: ``<exclude body1 body2>`` as
``model.exclude_contact`` (a body merged into its parent excludes its carrier), ``<pair geom1
geom2 condim friction margin>`` (``class`` too) as ``model.add_contact_pair``;
``<option><flag contact="disable"/>`` (or ``constraint="disable"``) switches contact off
(``model.contact_enabled``). MuJoCo's parent filter is ``treedyn.sim.collision.collision_pairs``'.

MuJoCo's constraint model (docs/contact.md, "Soft constraints"): the geoms' ``solref``,
``solimp``, ``solmix`` (``Geom``), the pairs', the joints' ``solreflimit``/``solimplimit``
(``Model.limit_softness``), ``<option impratio integrator cone>`` (``model.impratio``,
``model.integrator``: "rk4", "implicitfast", "implicit" or "semi-implicit" for Euler,
``model.friction_cone``); ``model.soft_constraints`` is True, so ``td.ContactSimulator`` steps the
model as MuJoCo does. Joint damping, stiffness, armature, frictionloss, actuators and fixed
tendons: docs/guide/mujoco.md.

``<option density viscosity wind>``: ``model.fluid``, MuJoCo's inertia-box fluid forces in the C++
contact step (``contact/fluid.hpp``).

``<sensor>``: ``model.sensors`` (Model.add_sensor), the sites they read as named frames
(io/mjcf/sensors.py); the kinds treedyn does not have are noted.

Not modelled, with one IgnoredElementWarning per file that says so: body ``gravcomp`` and joint
``actuatorgravcomp``, spatial tendons, a tendon's ``actuatorfrcrange``, muscles, a pair's ``gap``. Silently ignored: ``<asset>`` but its meshes, ``<visual>``,
``<statistic>``, ``<size>``, ``<custom>``, ``<extension>``, sites no sensor reads, cameras, lights. A ball joint's range is noted as not modelled.

Errors (ModelFileError naming the element, file and line): flex equalities and tendon equalities
on spatial tendons, flexes, composites, ``<replicate>``, ``<attach>``, a geom whose inertia treedyn
cannot compute (hfield, sdf, a primitive fitted to a mesh, ``shellinertia`` on a mesh (MuJoCo's
error too), a mesh made by ``builtin`` or a plugin, ``maxhullvert`` with ``inertia="convex"``) in a
body that needs it; a mesh file that is missing or unreadable, and the meshes MuJoCo refuses (fewer
than 4 vertices, all in one plane, a negative or too small volume, faces not consistently oriented
for ``inertia="exact"``), each naming the mesh, its file and the line of its ``<mesh>``; a free
joint below the top level, ``compiler coordinate="global"``, ``alignfree``.

The reader is a sequence of passes over one ``Reader`` (``reader.py``: the state of the load and
the attribute readers), one module each: ``document`` (root, includes, top-level sections),
``options`` (``<compiler>``, ``<option>``), ``defaults``, ``meshes`` (``<asset><mesh>``),
``bodies`` (bodies and joints, with ``inertia`` and ``collision`` for each body's inertia and
collision geoms), ``equality``; ``treedyn.io._tree.build_model`` assembles the Model.
"""

from __future__ import annotations

from ...model import Model
from .._common import gc_paused, warn_inconsistent_inertias
from .._files import Budget
from .._tree import build_model
from .._xml import file_errors, read_xml
from . import actuators, bodies, collision, defaults, document, equality, inertia, keyframes, meshes, options, sensors
from .reader import Reader

__all__ = ["load_mjcf"]


def load_mjcf(path_or_xml) -> Model:
    """Load an MJCF file (a path) or MJCF text (a string starting with '<') as a treedyn Model."""
    budget = Budget()  # what this load may read (its files, includes and meshes: treedyn.io._files)
    with gc_paused():
        r = Reader(read_xml(path_or_xml, "MJCF", budget), budget)
        with file_errors(r.err, lambda: r.current):
            return _read(r)


def _read(r: Reader) -> Model:
    """The passes, in order."""
    root = r.doc.root
    document.check_root(r, root)
    document.expand_includes(r, root, r.doc.base_dir, [r.doc.source])
    options.read_compiler(r, root)
    gravity = options.gravity(r, root)
    r.defaults = defaults.read_defaults(r, root)
    r.meshes = meshes.mesh_assets(r, root)
    document.check_sections(r, root)
    nodes = bodies.read_bodies(r, [e for e in root if e.tag == "worldbody"])
    inertia.scale_total_mass(r, nodes)
    model = build_model(nodes, gravity, r.err, r.doc.source)
    for name, (lower, upper) in r.limits.items():
        model.set_joint_limits(name, lower, upper)
    for name, soft in r.__dict__.get("limit_softness", {}).items():
        model.set_limit_softness(name, **soft)
    model.source = r.doc.source
    model.reference_configuration = equality.reference_configuration(model, r.qpos0)
    r.tendons, r.sites = equality.fixed_tendons(r, root), equality.site_poses(r, root)
    equality.add_equalities(r, model, [e for e in root if e.tag == "equality"], model.reference_configuration)
    actuators.joint_passive(r, model)
    actuators.tendons(r, root, model)
    actuators.actuators(r, root, model)
    model.timestep = options.timestep(r, root)
    model.fluid = options.fluid(r, root)
    keyframes.read_keyframes(r, root, model)
    collision.read_contact(r, root, model)
    sensors.read_sensors(r, root, model)
    r.ignored.warn()
    warn_inconsistent_inertias(r.doc.source, r.inconsistent)
    return model
