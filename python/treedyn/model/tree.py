"""The model builder: bodies, joints, placements and inertias.

Conventions (see docs/design.md): bodies are numbered 1..N in the order they are added, 0 is the
fixed world; a parent is always added before its children (``parent[i] < i``). Spatial vectors
are ordered [angular; linear].
"""

from __future__ import annotations

import copy
from collections.abc import Sequence

import numpy as np

from .. import _checks as C
from .. import _core
from .actuation import ActuationMixin
from .cache import changes_model
from .contact_settings import ContactSettings, checked_softness
from .describe import DescribeMixin
from .elements import Coupling, ElementsMixin, LoopClosure, ParentRef, Spring, UnknownNameError
from .joints import Fixed, Free, Joint, Prismatic, Revolute, Spherical, Universal
from .sensors import SensorsMixin
from .shapes import CONDIM, SHAPES, VISUAL_SHAPES, Geom, Visual, checked_rgba, friction_triple
from .spatial import Inertia, Transform, _vec3
from .to_core import CoreMixin

__all__ = [
    "UnknownNameError",
    "Transform",
    "Inertia",
    "Joint",
    "Revolute",
    "Prismatic",
    "Fixed",
    "Universal",
    "Spherical",
    "Free",
    "Model",
]


# The file readers behind Model.from_urdf / from_mjcf (and the writer of to_mjcf): treedyn.io registers them on import (the
# loaders depend on the model, never the reverse)
_FILE_READERS: dict = {}


class Model(ElementsMixin, ActuationMixin, CoreMixin, DescribeMixin, ContactSettings, SensorsMixin):
    """A tree of rigid bodies, built body by body.

    >>> model = Model(gravity=(0, 0, -9.81))
    >>> b1 = model.add_body("link1", parent=None, joint=Revolute((0, 0, 1)),
    ...                     inertia=Inertia(1.0, (0, 0, 0.05), np.diag([1e-2, 1e-2, 5e-3])))

    ``n_bodies``, ``body_names`` and ``parents`` include the world as body 0
    (``parents[0] == -1``), as MuJoCo's and Pinocchio's models do.
    """

    def __init__(self, gravity: Sequence[float] = (0.0, 0.0, -9.81)):
        # bumped by every change (_changed): what model/cache.py compares to remake what it made from the model
        self._revision = 0
        self._cpp = _core.Model()
        self._joints: list[Joint] = [Fixed()]
        self._joint_names: list[str] = [""]
        self._index: dict[str, int] = {"world": 0}
        # Python mirrors of what each body added to the C++ model (its name, where its coordinates
        # start in q and v): the C++ vectors are copied whole on every read, so reading one entry
        # per body made loading a model O(n²)
        self._names: list[str] = ["world"]
        self._q_start: list[int] = [0]
        self._v_start: list[int] = [0]
        self._joint_index: dict[str, int] = {}
        self._placements: list[Transform] = [Transform()]
        self._inertias: list[Inertia] = [Inertia(mass=0.0, com=(0, 0, 0), inertia=np.zeros((3, 3)))]
        self._frames: dict[str, tuple] = {}
        self._geoms: list = []  # geometry.Geom, in the order added
        self._geom_names: dict[str, int] = {}  # their names -> indices (add_geom, add_contact_pair)
        self._joint_limits: dict[int, tuple[float, float]] = {}  # body index -> (lower, upper), see set_joint_limits
        self.gravity = gravity
        # the joints' passive terms, every solver's (set_joint_spring, set_joint_armature: _push_passive)
        self._joint_springs: dict[int, tuple] = {}
        self._joint_armature: dict[int, np.ndarray] = {}
        # RedMax terms (baxter2019 §2): used by the redmax-* solvers' implicit step
        self._body_damping: dict[int, np.ndarray] = {}
        self._springs: list[Spring] = []
        self._point_forces: list[tuple] = []
        self._moving_forces: list[tuple] = []
        self._loops: list[LoopClosure] = []
        self._couplings: list[Coupling] = []
        self.baumgarte: float | None = None
        # the configuration the file describes (MJCF's qpos0); None: the neutral configuration
        self.reference_configuration: np.ndarray | None = None
        # the file's time step (MJCF's <option timestep>); None: not given. ContactSimulator's default dt
        self.timestep: float | None = None
        # the file's named states (MJCF's <keyframe>: treedyn.Keyframe by name)
        self.keyframes: dict = {}

    def _changed(self) -> None:
        """Mark the model changed: what was made from it (C++ engines, solvers, constraint systems:
        model/cache.py) is made again on its next use. Every mutating method calls it, and so does
        assigning a public attribute (gravity, baumgarte, reference_configuration, ...)."""
        self.__dict__["_revision"] += 1  # (set first in __init__)
        if "_cpp" in self.__dict__:  # (its copy in C++: a StepData compares it without Python)
            self._cpp.revision = self.__dict__["_revision"]

    def __setattr__(self, name: str, value) -> None:
        object.__setattr__(self, name, value)
        if not name.startswith("_"):
            self._changed()

    # ----------------------------------------------------------------- building
    @changes_model
    def add_body(
        self,
        name: str,
        parent: ParentRef = None,
        joint: Joint | None = None,
        placement: Transform | None = None,
        inertia: Inertia | None = None,
        joint_name: str | None = None,
    ) -> int:
        """Add a body hinged to ``parent`` by ``joint``; returns its index (1..N).

        parent: None or "world" (the fixed world), a body name, or an index returned by add_body.
        placement: pose of the joint frame in the parent body's frame (default: identity).
        inertia: the body's inertia (default: 1 kg, unit inertia at the origin).
        joint_name: defaults to the body name.
        """
        if not isinstance(name, str) or not name:
            raise TypeError(f"body name must be a non-empty string, got {name!r}")
        if name in self._index:
            raise ValueError(f"a body named {name!r} already exists")
        p = self._body_ref(parent, f"parent of {name!r}", hint="add parents before children")
        joint = Revolute() if joint is None else joint
        if not isinstance(joint, Joint):
            raise TypeError(f"joint of body {name!r} must be a treedyn joint (Revolute(), Free(), ...), got {joint!r}")
        if isinstance(joint, Free) and p != 0:
            raise ValueError(f"body {name!r}: a Free joint must connect to the world (floating base)")
        placement = Transform() if placement is None else placement
        if not isinstance(placement, Transform):
            raise TypeError(f"placement of body {name!r} must be a treedyn.Transform, got {type(placement).__name__}")
        inertia = Inertia() if inertia is None else inertia
        if not isinstance(inertia, Inertia):
            raise TypeError(f"inertia of body {name!r} must be a treedyn.Inertia, got {type(inertia).__name__}")
        jname = name if joint_name is None else str(joint_name)
        if joint.nv and jname in self._joint_index:
            raise ValueError(f"a joint named {jname!r} already exists")
        a1, a2 = joint._axes()
        q0, v0 = self._cpp.nq, self._cpp.nv  # the new body's coordinates come last (bodies in order)
        # each form of the inertia goes to C++ as given: (m, c, I_c) converted there as always, (m, h, Ī_O) as is
        add = self._cpp.add_body_parameters if inertia._given == "parameters" else self._cpp.add_body
        i = add(
            name,
            p,
            joint.kind,
            placement.rotation.T,
            placement.translation,
            a1,
            a2,
            inertia.mass,
            inertia._a,
            inertia._b,
        )
        self._index[name] = i
        self._names.append(name)
        self._q_start.append(q0)
        self._v_start.append(v0)
        self._joints.append(joint)
        self._joint_names.append(jname)
        self._placements.append(placement)
        self._inertias.append(inertia)
        if joint.nv:
            self._joint_index[jname] = i
        return i

    def add_frame(self, name: str, body: ParentRef, placement: Transform | None = None) -> None:
        """Name a frame fixed to ``body`` (a body name or index; 0/"world"/None: the world) at
        ``placement`` (its pose in the body frame, default identity): a URDF link merged into its
        parent by a fixed joint, an MJCF site. ``model.frames[name] = (body name, placement)``."""
        self._add_frames([(name, body, placement)])

    @changes_model
    def _add_frames(self, frames) -> None:
        """add_frame for each (name, body, placement) of ``frames``, one change in all (the loaders
        name a frame per link: a call each was a tenth of a 50 000-link load)."""
        for name, body, placement in frames:
            if not isinstance(name, str) or not name:
                raise TypeError(f"frame name must be a non-empty string, got {name!r}")
            if name in self._frames:
                raise ValueError(f"a frame named {name!r} already exists")
            b = self._body_ref(body, f"frame {name!r}")
            placement = Transform() if placement is None else placement
            if not isinstance(placement, Transform):
                raise TypeError(
                    f"placement of frame {name!r} must be a treedyn.Transform, got {type(placement).__name__}"
                )
            self._frames[name] = (self._names[b], placement)

    # ----------------------------------------------------------------- files
    @classmethod
    def from_urdf(cls, path_or_xml, floating_base: bool = False, package_dirs=None, **options) -> Model:
        """Load a URDF file, or URDF text (a string starting with '<'): treedyn.io.load_urdf, whose
        keyword options (mimic, joint_dynamics, joint_order) pass through.

        floating_base: hinge the root link to the world by a free joint named "root_joint".
        package_dirs: where ``package://`` meshes live (only checked, with a warning for missing
            ones, when given: meshes play no part in the dynamics).
        Fixed joints are merged into their parent body (``model.frames`` says where each link
        went); joints are numbered depth-first (children in file order, or by name with
        joint_order="pinocchio"): use q_index/v_index.
        """
        return _FILE_READERS["urdf"](path_or_xml, floating_base=floating_base, package_dirs=package_dirs, **options)

    @classmethod
    def from_mjcf(cls, path_or_xml) -> Model:
        """Load an MJCF (MuJoCo XML) file, or MJCF text (a string starting with '<'):
        treedyn.io.load_mjcf (the supported subset and the q/v layout are described there)."""
        return _FILE_READERS["mjcf"](path_or_xml)

    def to_mjcf(self, name: str = "treedyn") -> str:
        """The model as MJCF text, for MuJoCo (treedyn.io.to_mjcf: bodies, joints, inertias, geoms,
        gravity)."""
        return _FILE_READERS["to_mjcf"](self, name)

    # ----------------------------------------------------------------- queries
    @property
    def gravity(self) -> np.ndarray:
        return np.array(self._cpp.gravity)

    @gravity.setter
    def gravity(self, g):
        self._cpp.gravity = _vec3(g, "gravity")

    @property
    def nq(self) -> int:
        return self._cpp.nq

    @property
    def nv(self) -> int:
        return self._cpp.nv

    @property
    def n_bodies(self) -> int:
        """Number of bodies, the world (body 0) included."""
        return self._cpp.N + 1

    @property
    def body_names(self) -> list[str]:
        return list(self._names)

    @property
    def parents(self) -> np.ndarray:
        """parents[i] is the parent of body i; parents[0] = -1 (the world has none)."""
        return np.array(self._cpp.parent, dtype=int)

    @property
    def joints(self) -> list[Joint]:
        return list(self._joints)

    @property
    def joint_names(self) -> list[str]:
        """Names of the joints that move (nv > 0), in coordinate order."""
        return [self._joint_names[i] for i in range(1, self._cpp.N + 1) if self._joints[i].nv]

    @property
    def joint_kinds(self) -> list[str]:
        """The kind of each body's joint ("revolute", "free", ...; body 0, the world: "fixed")."""
        return [type(j).__name__.lower() for j in self._joints]

    @property
    def body_joint_names(self) -> list[str]:
        """The name of each body's joint (body 0, the world: "")."""
        return list(self._joint_names)

    @property
    def q_indices(self) -> np.ndarray:
        """Where each body's joint coordinates start in q (n_bodies,); a joint has joints[i].nq of them."""
        return np.array(self._cpp.q_index, dtype=int)

    @property
    def v_indices(self) -> np.ndarray:
        """Where each body's joint velocity coordinates start in v (n_bodies,)."""
        return np.array(self._cpp.v_index, dtype=int)

    @property
    def placements(self) -> list[Transform]:
        """The pose of each joint frame in its parent body's frame (body 0: identity)."""
        return list(self._placements)

    @property
    def inertias(self) -> list[Inertia]:
        """Each body's inertia (body 0, the world: zero)."""
        return list(self._inertias)

    def with_inertias(self, inertias: Sequence[Inertia]) -> Model:
        """A new model like this one — bodies, names, joints, placements, frames, geoms, joint limits,
        springs, damping, forces, loop closures, couplings, gravity, reference configuration — but
        with body i's inertia ``inertias[i]`` (one per body, the world's first: it must be zero, the
        world does not move). This model is not changed. ``td.simplify`` builds its model so."""
        inertias = list(inertias)
        if len(inertias) != self.n_bodies:
            raise ValueError(f"with_inertias: need {self.n_bodies} inertias (the world's first), got {len(inertias)}")
        for i, I in enumerate(inertias):
            if not isinstance(I, Inertia):
                raise TypeError(f"with_inertias: inertias[{i}] must be a treedyn.Inertia, got {type(I).__name__}")
        w = inertias[0]
        if w.mass or np.any(w.first_moment) or np.any(w.inertia_origin):
            raise ValueError("with_inertias: inertias[0] is the world's and must be zero")
        bodies, rest = self._parts()
        bodies = [(*b[:4], I, b[5]) for b, I in zip(bodies, inertias[1:])]
        return _rebuild_model(self.gravity, bodies, copy.deepcopy(rest))

    # them) and every other attribute, whatever it is (those the file readers add included)
    _REBUILT = frozenset(
        {
            "_cpp",
            "_joints",
            "_joint_names",
            "_index",
            "_joint_index",
            "_placements",
            "_inertias",
            "_names",
            "_q_start",
            "_v_start",
        }
    )

    @changes_model
    def add_geom(
        self,
        body: ParentRef,
        shape,
        placement: Transform | None = None,
        friction=1.0,
        name: str | None = None,
        contype: int = 1,
        conaffinity: int = 1,
        condim: int = 3,
        margin: float = 0.0,
        rgba=None,
        solref=None,
        solimp=None,
        solmix=None,
        priority: int = 0,
    ) -> int:
        """Fix a collision shape (td.Sphere, Capsule, Box, Plane, Cylinder, Ellipsoid, ConvexMesh)
        to ``body`` (a body name or index; None/0/"world": the world) at ``placement`` (its pose in
        the body frame); returns its index in ``model.geoms``. ``friction``: Coulomb coefficient, or
        MuJoCo's three (sliding, torsional, rolling; default 1, 0.005, 0.0001; a pair uses the larger
        of each); ``contype``/``conaffinity``: MuJoCo's collision bit masks; ``condim``: MuJoCo's 1
        (frictionless), 3 (sliding), 4 (and torsional), 6 (and rolling: with MuJoCo's pyramidal
        soft cone, ``ContactSimulator(soft=True)``; otherwise they act as 3); ``margin``: the distance at which the
        geom's pairs touch (docs/contact.md); ``rgba``: its colour in td.view (4 numbers in [0, 1]);
        ``solref``, ``solimp``, ``solmix``: MuJoCo's soft-contact parameters (set_geom_softness;
        None: MuJoCo's defaults); ``priority``: MuJoCo's — a pair of two priorities takes the higher one's
        condim, friction, solref and solimp instead of mixing them. treedyn.collide finds contacts."""
        if not isinstance(shape, SHAPES):
            raise TypeError(
                "shape must be one of td.Sphere, Capsule, Box, Plane, Cylinder, Ellipsoid, ConvexMesh, "
                f"got {type(shape).__name__}"
            )
        if condim not in CONDIM or isinstance(condim, bool):
            raise ValueError(f"geom condim must be one of {CONDIM}, got {condim!r}")
        margin = C.real(margin, "geom margin", nonnegative=True)
        rgba = checked_rgba(rgba, "geom rgba")
        b = self._body_ref(body, "geom")
        placement = Transform() if placement is None else placement
        if not isinstance(placement, Transform):
            raise TypeError(f"geom placement must be a treedyn.Transform, got {type(placement).__name__}")
        friction, spin, roll = friction_triple(friction, "geom friction", (0.005, 0.0001))
        for mask, what in ((contype, "contype"), (conaffinity, "conaffinity")):
            if isinstance(mask, bool) or not isinstance(mask, (int, np.integer)) or mask < 0:
                raise TypeError(f"geom {what} must be a non-negative integer bit mask, got {mask!r}")
        name = f"geom{len(self._geoms)}" if name is None else name
        if not isinstance(name, str) or not name:
            raise TypeError(f"geom name must be a non-empty string, got {name!r}")
        names = self._geom_index()
        if name in names:
            raise ValueError(f"a geom named {name!r} already exists")
        soft = {"solref": solref, "solimp": solimp, "solmix": solmix}
        soft = {k: checked_softness(k, x) for k, x in soft.items() if x is not None}
        soft["priority"] = C.integer(priority, "geom priority", minimum=-(2**31), maximum=2**31 - 1)
        soft["torsional_friction"], soft["rolling_friction"] = spin, roll
        self._geoms.append(
            Geom(name, b, shape, placement, friction, int(contype), int(conaffinity), int(condim), margin, rgba, **soft)
        )
        names[name] = len(self._geoms) - 1
        return len(self._geoms) - 1

    def add_visual(
        self, body: ParentRef, shape, placement: Transform | None = None, rgba=None, name: str | None = None
    ):
        """Say what ``body`` looks like (a body name or index; None/0/"world": the world): ``shape``
        (td.Sphere, Capsule, Box, Cylinder, Ellipsoid, ConvexMesh, TriangleMesh, or a MeshFile read
        when drawn) at ``placement`` in the body frame, coloured ``rgba`` (4 numbers in [0, 1], or
        None). Visuals are drawn by td.view and take no part in the dynamics or the contacts (the
        model's solvers and engines are not remade). Returns its index in ``model.visuals``."""
        if not isinstance(shape, VISUAL_SHAPES):
            raise TypeError(
                "a visual's shape must be one of td.Sphere, Capsule, Box, Cylinder, Ellipsoid, ConvexMesh, "
                f"TriangleMesh, MeshFile, got {type(shape).__name__}"
            )
        b = self._body_ref(body, "visual")
        placement = Transform() if placement is None else placement
        if not isinstance(placement, Transform):
            raise TypeError(f"visual placement must be a treedyn.Transform, got {type(placement).__name__}")
        rgba = checked_rgba(rgba, "visual rgba")
        visuals = self.__dict__.setdefault("_visuals", [])
        name = f"visual{len(visuals)}" if name is None else name
        if not isinstance(name, str) or not name:
            raise TypeError(f"visual name must be a non-empty string, got {name!r}")
        visuals.append(Visual(name, b, shape, placement, rgba))
        return len(visuals) - 1

    @property
    def visuals(self) -> tuple:
        """What the bodies look like (treedyn.model.shapes.Visual: name, body index, shape,
        placement, rgba), in the order added; td.view draws them (and a body's collision geoms
        where it has none)."""
        return tuple(self.__dict__.get("_visuals", ()))

    def _geom_index(self) -> dict:
        """{geom name: index} (kept beside the list, so that adding n geoms is O(n), not O(n²));
        remade from the list when they disagree (a model pickled before it existed)."""
        names = self.__dict__.get("_geom_names")
        if not isinstance(names, dict) or len(names) != len(self._geoms):
            names = {g.name: i for i, g in enumerate(self._geoms)}
            self.__dict__["_geom_names"] = names
        return names

    @property
    def geoms(self) -> tuple:
        """The collision geoms (treedyn.model.shapes.Geom: name, body index, shape, placement,
        friction, contype, conaffinity, condim, margin), in the order added."""
        return tuple(self._geoms)

    @property
    def frames(self) -> dict:
        """Named frames: {name: (body name, pose in that body's frame)} (see add_frame)."""
        return dict(self._frames)

    def body_index(self, name: str) -> int:
        if name not in self._index:
            raise UnknownNameError(f"no body named {name!r}")
        return self._index[name]

    def _joint_body(self, name: str) -> int:
        if name not in self._joint_index:
            raise UnknownNameError(f"no moving joint named {name!r}; joints are {self.joint_names}")
        return self._joint_index[name]

    def q_index(self, name: str) -> int:
        """Where the coordinates of joint ``name`` start in q."""
        return self._q_start[self._joint_body(name)]

    def v_index(self, name: str) -> int:
        """Where the coordinates of joint ``name`` start in v."""
        return self._v_start[self._joint_body(name)]

    @property
    def has_floating_base(self) -> bool:
        return any(isinstance(j, Free) for j in self._joints)

    @property
    def is_chain(self) -> bool:
        """True when every body's parent is the body before it (an unbranched chain)."""
        return all(p == i - 1 for i, p in enumerate(self._cpp.parent) if i > 0)

    def _body_ref(self, body: ParentRef, what: str, hint: str = "") -> int:
        """The index of ``body`` (None or "world": 0, a name, an index): the one lookup of a body by
        name or index; ``what`` names it in errors, ``hint`` ends them."""
        hint = f"; {hint}" if hint else ""
        if body is None or (isinstance(body, str) and body == "world"):
            return 0
        if isinstance(body, (int, np.integer)) and not isinstance(body, bool):
            if not 0 <= int(body) <= self._cpp.N:
                raise ValueError(f"{what}: there is no body {int(body)} (bodies are 0..{self._cpp.N}{hint})")
            return int(body)
        if isinstance(body, str):
            if body not in self._index:
                names = self.body_names
                shown = ", ".join(repr(n) for n in names[:8]) + (", ..." if len(names) > 8 else "")
                raise ValueError(f"{what}: no body named {body!r} (bodies: {shown}{hint})")
            return self._index[body]
        raise TypeError(f"{what} must be None, 'world', a body name or index, got {body!r}")

    # --- joint limits: model data like the springs; td.ContactSimulator keeps them as unilateral
    #     constraints with the contacts, td.random_configuration draws inside them
    @changes_model
    def set_joint_limits(self, joint: str | int, lower=-np.inf, upper=np.inf) -> None:
        """Position limits lower ≤ q ≤ upper on a revolute (radians) or prismatic (metres) joint.

        joint: its name or its body's index. lower, upper: real numbers, lower ≤ upper (equal:
        the joint is locked); -inf / +inf leaves that side free, and both infinite removes the
        joint's limits. Setting them again replaces them.

        Refused, with the reason: the world and fixed joints (no coordinate); universal joints
        (two angles, which would need a pair each: model the joint as two revolute joints, as
        ``to_mjcf`` writes it, to limit them); spherical and free joints (a quaternion: a bound
        on its components is no bound on the rotation, and a cone on the rotation angle, MJCF's
        ball ``range``, is not a box on q).

        ``td.ContactSimulator`` keeps the limits as unilateral constraints solved with the
        contacts; ``td.random_configuration`` draws inside them. ``joint_limits``,
        ``lower_position_limit`` and ``upper_position_limit`` read them back.
        """
        what = "joint limits"
        i = self._moving_joint(joint, what)
        jt, name = self._joints[i], self._joint_names[i]
        if not isinstance(jt, (Revolute, Prismatic)):
            why = {
                Fixed: "is fixed (no coordinate to limit)",
                Universal: "is universal: its two angles would need a pair of limits each (model it as two "
                "revolute joints to limit them)",
                Spherical: "is spherical: its coordinates are a quaternion, whose components bound no rotation",
                Free: "is free: its coordinates include a quaternion, whose components bound no rotation",
            }[type(jt)]
            raise ValueError(
                f"{what}: joint {name or self.body_names[i]!r} {why}; limits are for revolute and prismatic joints"
            )
        bounds = []
        for x, side in ((lower, "lower"), (upper, "upper")):
            if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, float, np.integer, np.floating)):
                raise TypeError(f"{what} of {name!r}: {side} must be a real number, got {x!r}")
            if np.isnan(x):
                raise ValueError(f"{what} of {name!r}: {side} is NaN")
            bounds.append(float(x))
        lo, hi = bounds
        if not lo <= hi or lo == np.inf or hi == -np.inf:
            raise ValueError(
                f"{what} of {name!r}: need lower <= upper, lower < +inf and upper > -inf, got ({lo}, {hi})"
            )
        if lo == -np.inf and hi == np.inf:
            self._joint_limits.pop(i, None)
        else:
            self._joint_limits[i] = (lo, hi)

    @property
    def joint_limits(self) -> dict:
        """{joint name: (lower, upper)} of the limited joints, in coordinate order (a copy: change
        them with set_joint_limits); a side without a bound is -inf or +inf."""
        return {self._joint_names[i]: self._joint_limits[i] for i in sorted(self._joint_limits)}

    @property
    def lower_position_limit(self) -> np.ndarray:
        """(nq,) the lower limit of each coordinate of q, -inf where there is none (quaternions and
        free joints included): Pinocchio's ``lowerPositionLimit``, but unlimited is -inf rather
        than the largest double. A read-only copy: set limits with set_joint_limits."""
        return self._position_limits(0, -np.inf)

    @property
    def upper_position_limit(self) -> np.ndarray:
        """(nq,) the upper limit of each coordinate of q, +inf where there is none (see
        lower_position_limit)."""
        return self._position_limits(1, np.inf)

    def _position_limits(self, side: int, unlimited: float) -> np.ndarray:
        out = np.full(self.nq, unlimited)
        for i, bounds in self._joint_limits.items():
            out[self._q_start[i]] = bounds[side]
        out.flags.writeable = False
        return out

    def _parts(self) -> tuple[list, dict]:
        names, parents = self.body_names, self.parents.tolist()
        bodies = [
            (names[i], parents[i], self._joints[i], self._placements[i], self._inertias[i], self._joint_names[i])
            for i in range(1, self.n_bodies)
        ]
        rest = {k: v for k, v in self.__dict__.items() if k not in self._REBUILT}
        return bodies, rest

    def __reduce__(self):
        """A model pickles as what it is made of (bodies, joints, placements, inertias, frames, geoms,
        limits, springs, damping, forces, loop closures, couplings, gravity, reference
        configuration, ...); unpickling rebuilds the C++ model body by body, to the same bits.
        copy.deepcopy goes the same way."""
        bodies, rest = self._parts()
        return _rebuild_model, (self.gravity, bodies, rest)

    def __copy__(self):  # a model shares no mutable state with its copy
        return copy.deepcopy(self)


def _rebuild_model(gravity, bodies, rest) -> Model:
    """The model of Model._parts (unpickling, copies, with_inertias)."""
    out = Model(gravity)
    for b in bodies:
        out.add_body(*b)
    out.__dict__.update(rest)
    out._push_passive()
    return out
