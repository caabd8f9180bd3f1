"""What the RedMax scenes of baxter2019 §4 share — bridge (``bridge.py``), bridge with rigid towers
(``bridge_rigid.py``), umbrella (``umbrella.py``), tree (``tree.py``), each built
as the published RedMax code (sueda/redmax, ``c++/PCG/src/RigidBodyCreator.cpp``) builds them;
``docs/scenes.md`` lists their numbers and the published code's defects, which are not reproduced here.

Frames. The published code puts every body frame at the centre of its block or cylinder and
places a joint at ``parent_pos`` in the parent's centre frame and at ``pos`` in the child's. In
treedyn a body frame is its joint frame moved by the joint, so here a hinged body's frame sits
at its joint, with the same axes as the published centre frame, and its centre of mass (the
shape's centre) at −pos; fixed bodies keep their frame at their centre. The motion is the same.

Common modelling (docs/scenes.md): inertias of solid cuboids (sizes x, y, z) and solid cylinders
(radius, height; axis along the shape's z) from a density; every body a maximal damping D = 1·I₆
of its twist at its centre (passed to treedyn as the equivalent 6x6 matrix at the body frame,
AᵀA with A = [[1, 0], [−[c]×, 1]] the change of reference point to the centre c); joint springs
−k(q − q₀) − d q̇ about the initial angle; point-to-point springs with rest length L the initial
distance and force k(l − L)/L + d l̇/L (k per unit strain, so treedyn's stiffness is k/L and its
damping d/L); Baumgarte factor 1/h (``model.baumgarte = None``) unless a scene says otherwise.
"""

from __future__ import annotations

import math

import numpy as np

from ..algorithms.configuration import neutral
from ..algorithms.state import State
from ..model import Inertia, Model, Transform
from .scene import Scene

__all__ = ["BRIDGE_PARAMS", "CARS", "UMBRELLA_CANOPY_K"]

# --------------------------------------------------------------------------- published parameter tables

#: Published parameter sets of the flexible-tower bridge (RigidBodyCreator::loadBridge):
#: joint k/d of the deck and the towers, cable k (per unit strain) / d, depth (z size) of the
#: deck blocks and of the towers, ground and anchors.
BRIDGE_PARAMS = {
    "sim": dict(
        deck_k=1e3, deck_d=1e0, tower_k=9.2e6, tower_d=1e3, cable_k=1e7, cable_d=1e3, deck_depth=2.0, tower_depth=2.0
    ),
    "video": dict(
        deck_k=1e8, deck_d=1e4, tower_k=1e8, tower_d=1e3, cable_k=2.5e7, cable_d=1e4, deck_depth=1.6, tower_depth=1.8
    ),
}
#: the bridge's car: its weight as a multiple of the published 4800 (none, "car", "heavy")
CARS = {None: 0.0, "car": 1.0, "heavy": 500.0}
#: the umbrella's canopy springs, k per unit strain: 6 (the value active in the published code), 1 ("sim")
UMBRELLA_CANOPY_K = {"video": 6.0, "sim": 1.0}


# --------------------------------------------------------------------------- helpers


def _rot(axis, angle: float) -> np.ndarray:
    """Rotation by ``angle`` about ``axis`` (Rodrigues)."""
    a = np.asarray(axis, dtype=float)
    a = a / np.linalg.norm(a)
    K = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    return np.eye(3) + math.sin(angle) * K + (1 - math.cos(angle)) * (K @ K)


def _skew(c) -> np.ndarray:
    return np.array([[0, -c[2], c[1]], [c[2], 0, -c[0]], [-c[1], c[0], 0]])


def _centre_damping(c, d: float = 1.0) -> np.ndarray:
    """The body-frame 6x6 damping ([ω; v], v of the frame origin) equal to d·1₆ on the twist at
    the point c (same axes): D = d AᵀA, A = [[1, 0], [−[c]×, 1]]."""
    A = np.eye(6)
    A[3:, :3] = -_skew(c)
    return d * (A.T @ A)


_Z_TO_Y = _rot((1, 0, 0), -math.pi / 2)  # shape axes whose z is the body's y (cylinders along y)


class _Builder:
    """Adds shaped bodies to a model and remembers each body's centre (body coordinates), its
    initial joint coordinates and its mass."""

    def __init__(self, gravity):
        self.model = Model(gravity=gravity)
        self.centre = {0: np.zeros(3)}
        self.mass = {}
        self.q_init = {}
        self.shapes = {}

    def add(
        self,
        name,
        parent,
        joint,
        *,
        translation=(0, 0, 0),
        rotation=None,
        centre=(0, 0, 0),
        shape="box",
        size=(1, 1, 1),
        density=1.0,
        shape_rotation=None,
        q0=None,
        stiffness=0.0,
        damping=0.0,
        body_damping=1.0,
    ) -> int:
        centre = np.asarray(centre, dtype=float)
        if shape == "box":
            x, y, z = size
            mass = density * x * y * z
            I = mass / 12.0 * np.diag([y * y + z * z, x * x + z * z, x * x + y * y])
        else:  # cylinder: (radius, height), axis along the shape's z
            r, hgt = size
            mass = density * math.pi * r * r * hgt
            a = mass * (3 * r * r + hgt * hgt) / 12.0
            I = np.diag([a, a, 0.5 * mass * r * r])
        if shape_rotation is not None:
            I = shape_rotation @ I @ shape_rotation.T
        place = Transform(rotation=np.eye(3) if rotation is None else rotation, translation=translation)
        i = self.model.add_body(name, parent, joint, place, Inertia(mass, centre, I))
        self.centre[i] = centre
        self.mass[i] = mass
        self.shapes[name] = dict(
            shape=shape,
            size=tuple(float(v) for v in size),
            centre=tuple(centre.tolist()),
            axes=(np.eye(3) if shape_rotation is None else shape_rotation).tolist(),
        )
        if joint.nv:
            q0 = np.zeros(joint.nq) if q0 is None else np.atleast_1d(np.asarray(q0, dtype=float))
            self.q_init[i] = q0
            if stiffness or damping:
                self.model.set_joint_spring(i, stiffness, damping, rest=q0)
        if body_damping:
            self.model.set_body_damping(i, _centre_damping(centre, body_damping))
        return i

    def point(self, body: int, offset_from_centre=(0, 0, 0)) -> np.ndarray:
        """A point given from the body's centre, in body coordinates."""
        return self.centre[body] + np.asarray(offset_from_centre, dtype=float)

    def q0(self) -> np.ndarray:
        q = neutral(self.model)
        for i, qi in self.q_init.items():
            k = self.model.q_indices[i]
            q[k : k + qi.size] = qi
        return q

    def spring(self, q0, a, pa, b, pb, k: float, d: float) -> float:
        """A spring–damper with the published k per unit strain and d / L; returns its rest length L."""
        R, p = self.model.body_poses(q0)
        L = float(np.linalg.norm((R[b] @ pb + p[b]) - (R[a] @ pa + p[a])))
        if L <= 0:
            raise ValueError("a spring of zero rest length")
        self.model.add_spring(a, pa, b, pb, stiffness=k / L, damping=d / L, rest_length=L)
        return L

    def world(self, q0, body, point) -> np.ndarray:
        R, p = self.model.body_poses(q0)
        return R[body] @ np.asarray(point, dtype=float) + p[body]


def _count(x, name: str, minimum: int) -> int:
    if isinstance(x, bool) or not isinstance(x, (int, np.integer)):
        if isinstance(x, float) and x.is_integer():
            x = int(x)
        else:
            raise ValueError(f"{name} must be an integer >= {minimum}, got {x!r}")
    if x < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {x}")
    return int(x)


def _loop_residual(model: Model, q) -> float:
    """max |C(q)| of the model's loop closures."""
    C = model.loop_residual(q)
    return float(np.abs(C).max()) if C.size else 0.0


def _scene(b: _Builder, name: str, info: dict, h=1e-2, duration=5.0) -> Scene:
    m = b.model
    q0 = b.q0()
    info.update(
        nq=m.nq,
        nv=m.nv,
        n_bodies=m.n_bodies,
        n_springs=len(m.springs),
        n_loop_closures=len(m.loop_closures),
        loop_rows=sum(c.n_rows for c in m.loop_closures),
        total_mass=float(sum(b.mass.values())),
    )
    # for drawing: each body's shape ("box" sizes x, y, z; "cylinder" radius, height along the
    # shape's z), its centre and shape axes (columns) in body coordinates
    info["shapes"] = b.shapes
    info["initial_residual"] = _loop_residual(m, q0)
    return Scene(m, State(q0, np.zeros(m.nv)), name=name, h=h, duration=duration, info=info)
