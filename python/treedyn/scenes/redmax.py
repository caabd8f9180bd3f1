"""The RedMax scenes of baxter2019 §4 — bridge, bridge with rigid towers, umbrella, tree — built
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
from ..model import Fixed, Inertia, Model, Prismatic, Revolute, Transform, Universal
from .scene import Scene

__all__ = ["bridge", "bridge_rigid", "umbrella", "tree", "BRIDGE_PARAMS"]

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


# --------------------------------------------------------------------------- bridge

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
_CARS = {None: 0.0, "car": 1.0, "heavy": 500.0}
_DECK_SPAN = 24.0  # anchor to anchor
_TOWER_HEIGHT = 10.0
_N_CABLES = 30


def _arch_angles(n: int) -> np.ndarray:
    """The deck's initial relative hinge angles, as the published loadBridge computes them
    (``anglecoeffs``): a shallow sinh arch of scale 0.5/n, antisymmetric in its cumulative
    angles so that the deck ends at the height it starts. The published code divides by
    (⌊n/2⌋ − 1), zero for n = 3; there we divide by 1, which gives a flat deck."""
    scale = 0.05 * 10 / n
    na = n // 2  # (int) std::ceil(nbridge / 2) with integer division
    denom = max(na - 1, 1)
    c = np.zeros(n + 1)
    total = 0.0
    for i in range(na):
        a = -math.sinh(scale * (i + 1) / denom)
        c[na - 1 - i] = a
        c[n - na + 1 + i] = a
        total += a
    c[0] -= total
    return c[:n]


def _bridge(n_deck: int, *, rigid: bool, P: dict, car_factor: float, name: str, info: dict) -> Scene:
    density = 1e3
    b = _Builder(gravity=(0.0, -9.8, 0.0))
    m = b.model
    zt, zd = P["tower_depth"], P["deck_depth"]
    deck_height = 0.5 if rigid else 0.15
    ground = b.add("ground", None, Fixed(), size=(_DECK_SPAN + 1, 0.5, zt), density=density)
    anchor_r = b.add("anchorR", ground, Fixed(), translation=(12, 1.5, 0), size=(0.5, 3, zt), density=density)
    tops = {}
    n_tower = info.get("n_tower", 1)
    for side, x in (("R", 5.0), ("L", -5.0)):
        if rigid:
            # one fixed 0.5 x 10 x 0.5 block, centre 5 above the ground (loadSimpleBridge)
            t = b.add(
                f"tower{side}",
                ground,
                Fixed(),
                translation=(x, _TOWER_HEIGHT / 2, 0),
                size=(0.5, _TOWER_HEIGHT, zt),
                density=density,
            )
            tops[side] = (t, np.array([0.0, _TOWER_HEIGHT / 2, 0.0]))
        else:
            bt = _TOWER_HEIGHT / n_tower
            parent = ground
            for i in range(n_tower):
                parent = b.add(
                    f"tower{side}{i}",
                    parent,
                    Revolute((0, 0, 1)),
                    translation=(x, 0, 0) if i == 0 else (0, bt, 0),
                    centre=(0, bt / 2, 0),
                    size=(0.5, bt, zt),
                    density=density,
                    q0=0.0,
                    stiffness=P["tower_k"],
                    damping=P["tower_d"],
                )
            tops[side] = (parent, np.array([0.0, bt, 0.0]))
    anchor_l = b.add("anchorL", ground, Fixed(), translation=(-12, 1.5, 0), size=(0.5, 3, zt), density=density)

    rel = _arch_angles(n_deck)
    cum = np.cumsum(rel)
    # Block length: the deck must close on anchor R's top, 24 to the right at the same height.
    # The published code takes bl = (1/n) Σ (24/n)/cos θᵢ (an "arc length"), which leaves a gap
    # of O(θ⁴); bl = 24 / Σ cos θᵢ closes it exactly (Σ sin θᵢ = 0 by the arch's antisymmetry).
    bl = _DECK_SPAN / float(np.sum(np.cos(cum)))
    bl_published = float(np.sum(np.abs((_DECK_SPAN / n_deck) / np.cos(cum)))) / n_deck
    deck = []
    parent = anchor_l
    for i in range(n_deck):
        k, d = (0.0, 0.0) if i == 0 else (P["deck_k"], P["deck_d"])
        parent = b.add(
            f"deck{i}",
            parent,
            Revolute((0, 0, 1)),
            translation=(0, 1.5, 0) if i == 0 else (bl, 0, 0),
            centre=(bl / 2, 0, 0),
            size=(bl, deck_height, zd),
            density=density,
            q0=rel[i],
            stiffness=k,
            damping=d,
        )
        deck.append(parent)
    q0 = b.q0()

    # cables: deck points at (i+1) L_deck / 31 along the deck, 15 to each tower's top
    L_deck = bl * n_deck
    rest = []
    for i in range(_N_CABLES):
        s = (i + 1) * n_deck / (_N_CABLES + 1)  # position in blocks
        j = min(int(math.floor(s)), n_deck - 1)
        tower, top = tops["L"] if i < _N_CABLES // 2 else tops["R"]
        rest.append(b.spring(q0, deck[j], np.array([(s - j) * bl, 0.0, 0.0]), tower, top, P["cable_k"], P["cable_d"]))

    # loop closure: the last deck block's right end hinged (z) to the top of anchor R; frame b
    # is given (not computed from q0), so the residual below is the true closing error
    m.add_loop_closure(
        deck[-1],
        anchor_r,
        Revolute((0, 0, 1)),
        placement_a=Transform(translation=(bl, 0, 0)),
        placement_b=Transform(translation=(0, 1.5, 0)),
        q=q0,
    )
    end = b.world(q0, deck[-1], (bl, 0, 0))
    end_published = np.array([-12.0, 3.0, 0.0]) + bl_published * np.array([np.sum(np.cos(cum)), np.sum(np.sin(cum)), 0])

    if car_factor:
        # the car: 4800 (x 500 heavy) down, at a point crossing the deck in 5 s, block by block
        m.add_moving_force(
            (0.0, -4800.0 * car_factor, 0.0), [(blk, (0.0, 0.0, 0.0), (bl, 0.0, 0.0)) for blk in deck], duration=5.0
        )
    info.update(
        block_length=bl,
        block_length_published=bl_published,
        deck_length=L_deck,
        arch_angle_max=float(np.abs(cum).max()),
        closing_gap=float(np.linalg.norm(end - np.array([12.0, 3.0, 0.0]))),
        closing_gap_published=float(np.linalg.norm(end_published - np.array([12.0, 3.0, 0.0]))),
        cable_rest_lengths=(float(min(rest)), float(max(rest))),
        car_force=4800.0 * car_factor,
        gravity=(0.0, -9.8, 0.0),
        density=density,
        baumgarte="1/h",
    )
    return _scene(b, name, info)


def bridge(n_deck: int = 20, n_tower: int = 20, params: str = "sim", car=None) -> Scene:
    """The cable-stayed bridge with flexible towers (baxter2019 §4.1, Figs. 2–9; published
    ``loadBridge``). Reduced DOF n_deck + 2·n_tower.

    Gravity (0, −9.8, 0), density 1e3. A fixed ground 25 × 0.5 × depth, anchors L and R fixed on
    it at x = ∓12 (0.5 × 3 × depth, centres 1.5 above the ground's centre line). Two towers hinged
    (z) to the ground at x = ±5, each n_tower blocks 0.5 × (10/n_tower) × depth stacked with z
    hinges (joint springs tower k/d about 0). A deck of n_deck blocks bl × 0.15 × deck depth
    hinged (z) in a chain from the top of anchor L; initial relative angles are the published
    shallow sinh arch (scale 0.5/n_deck), rest angles = initial angles, the first deck hinge
    k = d = 0, the others deck k/d. 30 cables from deck points (i+1)·L_deck/31 to the top of the
    left tower (first 15) or the right one (last 15), cable k per unit strain and d. Loop closure:
    the right end of the last deck block hinged (z) to the top of anchor R (5 constraint rows; in
    this planar scene the 2 axis rows and the z row vanish identically and the solver must drop
    them). Baumgarte 1/h.

    params: "sim" — deck 1e3/1, towers 9.2e6/1e3, cables 1e7/1e3, depths 2 and 2 (the set the
        thesis timings most likely used); "video" — deck 1e8/1e4, towers 1e8/1e3, cables
        2.5e7/1e4, deck depth 1.6, tower depth 1.8 (the values active in the published code); or
        a dict with the keys of BRIDGE_PARAMS, e.g. ``dict(BRIDGE_PARAMS["sim"], cable_k=1e6)``
        (info["params"] is then "custom").
    car: None; "car" — a constant force 4800·(0, −1, 0) whose point moves at constant speed
        along the deck's centre line, one segment per deck block from its left to its right end,
        crossing the deck in 5 s (then it stops acting); "heavy" — 500 times that force. (The
        published code moves the point 24/500 per step across blocks; its lines are commented out.)

    Interpretation: the published block length (arc length / n_deck) leaves the deck's end a
    small distance (info["closing_gap_published"]) from anchor R's top; here bl = 24 / Σ cos θᵢ
    closes it exactly (info["closing_gap"], info["initial_residual"] < 1e-12); the two lengths
    differ by O(θ⁴). For n_deck = 3 the published arch divides by zero; this gives a flat deck.

    Known limit: with params="sim" and car="heavy" (2.4e6 N on a deck of 360 kg blocks with
    joint k = 1e3) the deck flails at h = 1e-2 (|v| ~ 1e2, loop residual ~ 0.5) and the step
    diverges near step 50. It is the load, not a missing term of eq. (2.13): a dense step with the
    exact reduced stiffness (the finite-difference Hessian of the potential) does not diverge but
    flails alike. It runs calmly at h = 2.5e-3 (residual 1.3e-4 over 5 s), and with
    params="video" (a stiff deck) at h = 1e-2.
    """
    n_deck = _count(n_deck, "bridge n_deck", 3)
    n_tower = _count(n_tower, "bridge n_tower", 1)
    if isinstance(params, dict):  # a set of its own: every key of BRIDGE_PARAMS, finite, >= 0, depths > 0
        keys = set(BRIDGE_PARAMS["sim"])
        if set(params) != keys:
            raise ValueError(f"bridge params as a dict must have exactly the keys {sorted(keys)}, got {sorted(params)}")
        P = {k: float(v) for k, v in params.items()}
        bad = [k for k, v in P.items() if not (math.isfinite(v) and (v > 0 if k.endswith("depth") else v >= 0))]
        if bad:
            raise ValueError(f"bridge params {bad} must be finite, >= 0 (depths > 0), got {[params[k] for k in bad]}")
        params = "custom"
    elif params in BRIDGE_PARAMS:
        P = BRIDGE_PARAMS[params]
    else:
        raise ValueError(f"bridge params must be one of {sorted(BRIDGE_PARAMS)} or a dict like them, got {params!r}")
    if car not in _CARS:
        raise ValueError(f"bridge car must be None, 'car' or 'heavy', got {car!r}")
    info = dict(scene="bridge", n_deck=n_deck, n_tower=n_tower, params=params, car=car, **P)
    name = f"bridge:{n_deck},{n_tower},params={params}" + (f",car={car}" if car else "")
    return _bridge(n_deck, rigid=False, P=P, car_factor=_CARS[car], name=name, info=info)


def bridge_rigid(n_deck: int = 20) -> Scene:
    """The bridge with rigid towers (baxter2019 §4.1, Figs. 3–4 left; published
    ``loadSimpleBridge``). Reduced DOF n_deck.

    Same layout as :func:`bridge`, but each tower is one fixed 0.5 × 10 × 0.5 block (centre 5
    above the ground), ground 25 × 0.5 × 0.5, anchors 0.5 × 3 × 0.5, deck blocks bl × 0.5 × 0.5,
    deck joints k = 10, d = 1 (the first k = d = 0), cables k = 1e7 per unit strain, d = 1e3,
    density 1e3, gravity (0, −9.8, 0). Every cable ends on a fixed body, so K_m is block diagonal
    (the thesis' projected block Jacobi preconditioner is then exact). Same deck arch, block
    length and loop closure as :func:`bridge`.
    """
    n_deck = _count(n_deck, "bridge_rigid n_deck", 3)
    P = dict(deck_k=10.0, deck_d=1.0, cable_k=1e7, cable_d=1e3, deck_depth=0.5, tower_depth=0.5)
    info = dict(scene="bridge-rigid", n_deck=n_deck, **P)
    return _bridge(n_deck, rigid=True, P=P, car_factor=0.0, name=f"bridge-rigid:{n_deck}", info=info)


# --------------------------------------------------------------------------- umbrella

_UMBRELLA_CANOPY_K = {"video": 6.0, "sim": 1.0}


def umbrella(n: int = 16, *, params: str = "video") -> Scene:
    """The deployable umbrella (baxter2019 §4.2, Figs. 13–17; published ``loadUmbrella``).
    Reduced DOF 1 + 16n + 16⌊n/2⌋ (385 at n = 16).

    Gravity 0, no Baumgarte stabilisation (``model.baumgarte = 0``), density 1, every body a
    solid cylinder. The tube: fixed, radius 0.5, height 60, along y over [0, 60]. The runner:
    radius 1, height 5, axis y, on a prismatic joint along y starting with its centre at y = 10,
    pushed up by a constant 5e3 along +y at its centre. 8 ribs at θ = k·45° about y, each a chain
    of n cylinders of radius 0.3 and length 50/n joined by universal joints (x, then y; published
    Q = Rx(q₁) Ry(q₂)), the first at the top of the tube, its joint frame Ry(θ)·Rx(80°) (the rib
    hangs 10° off the tube: the umbrella starts closed); rib-to-tube joints k = d = 0, rib-to-rib
    joints k = 1e5, d = 1 about 0. 8 stretchers, each a chain of ⌊n/2⌋ cylinders of radius 0.3
    joined by universal joints, from the runner's centre straight to the centre of rib body
    ⌊n/2⌋ − 1 (length |x₁ − x₀| / ⌊n/2⌋ each; first joint frame AngleAxis(−acos(d_y), d × e_y)·
    Rx(−90°)·Rz(θ) as published, so the chain points along d = (x₁ − x₀)/|x₁ − x₀|); first joint
    k = d = 0, the others k = 1e5, d = 1. Canopy: 8n springs between body i of rib k and body i
    of rib k + 1 (mod 8), centre to centre, k = 6 ("video", the value active in the published
    code) or 1 ("sim"), d = 1, per unit strain.

    Loop closures: each stretcher's tip is joined to the centre of its rib body by a universal
    joint (4 rows each, 32 in all; the published code enforces only 2 point rows). Interpretation:
    the joint's frame has x along the rib plane's normal (cos θ, 0, −sin θ) — the hinge the
    umbrella opens about, axis1, fixed in the stretcher — and y in the rib plane perpendicular
    to the stretcher — axis2, fixed in the rib. The stretchers are built to end exactly at the
    rib centres, so the initial residual is round-off (info["initial_residual"]).

    Bodies are added depth-first (tube, ribs, runner, stretchers), not in the published order.

    The runner force never stops (the published stop at runner height 36 is commented out): the
    canopy reaches horizontal at t ≈ 3.5 s and by 5 s has turned past it. Without Baumgarte
    stabilisation the loop residual drifts, O(h): ≈ 0.09 after 5 s at n = 16, h = 1e-2.
    """
    n = _count(n, "umbrella n", 2)
    if params not in _UMBRELLA_CANOPY_K:
        raise ValueError(f"umbrella params must be one of {sorted(_UMBRELLA_CANOPY_K)}, got {params!r}")
    ns = n // 2
    b = _Builder(gravity=(0.0, 0.0, 0.0))
    m = b.model
    m.baumgarte = 0.0
    rho = 1.0
    tube = b.add(
        "tube",
        None,
        Fixed(),
        centre=(0, 30, 0),
        shape="cylinder",
        size=(0.5, 60.0),
        density=rho,
        shape_rotation=_Z_TO_Y,
    )
    h = 50.0 / n
    ribs = []
    for k in range(8):
        theta = k * math.pi / 4
        R0 = _rot((0, 1, 0), theta) @ _rot((1, 0, 0), math.radians(80))
        chain, parent = [], tube
        for i in range(n):
            kk, dd = (0.0, 0.0) if i == 0 else (1e5, 1.0)
            parent = b.add(
                f"rib{k}_{i}",
                parent,
                Universal((1, 0, 0), (0, 1, 0)),
                rotation=R0 if i == 0 else None,
                translation=(0, 60, 0) if i == 0 else (0, 0, h),
                centre=(0, 0, h / 2),
                shape="cylinder",
                size=(0.3, h),
                density=rho,
                q0=(0.0, 0.0),
                stiffness=kk,
                damping=dd,
            )
            chain.append(parent)
        ribs.append(chain)
    runner = b.add(
        "runner",
        tube,
        Prismatic((0, 1, 0)),
        translation=(0, 10, 0),
        shape="cylinder",
        size=(1.0, 5.0),
        density=rho,
        shape_rotation=_Z_TO_Y,
        q0=0.0,
    )
    m.add_point_force(runner, (0, 0, 0), (0, 5e3, 0))

    q_partial = b.q0()
    x0 = b.world(q_partial, runner, (0, 0, 0))
    targets = [ribs[k][ns - 1] for k in range(8)]
    x1s = [b.world(q_partial, rib, b.centre[rib]) for rib in targets]
    ends = []
    for k in range(8):
        theta = k * math.pi / 4
        rib, x1 = targets[k], x1s[k]
        dx = x1 - x0
        length = float(np.linalg.norm(dx))
        dx = dx / length
        ax = np.cross(dx, (0, 1, 0))
        ax = ax / np.linalg.norm(ax)
        R0 = _rot(ax, -math.acos(dx[1])) @ _rot((1, 0, 0), -math.pi / 2) @ _rot((0, 0, 1), theta)
        hs = length / ns
        parent = runner
        for i in range(ns):
            kk, dd = (0.0, 0.0) if i == 0 else (1e5, 1.0)
            parent = b.add(
                f"stretcher{k}_{i}",
                parent,
                Universal((1, 0, 0), (0, 1, 0)),
                rotation=R0 if i == 0 else None,
                translation=(0, 0, 0) if i == 0 else (0, 0, hs),
                centre=(0, 0, hs / 2),
                shape="cylinder",
                size=(0.3, hs),
                density=rho,
                q0=(0.0, 0.0),
                stiffness=kk,
                damping=dd,
            )
        ends.append((parent, rib, hs, theta, dx))
    q0 = b.q0()
    Rw, _ = m.body_poses(q0)
    for tip, rib, hs, theta, dx in ends:
        t = np.array([math.cos(theta), 0.0, -math.sin(theta)])  # normal of the rib's plane
        Rf = np.column_stack([t, np.cross(dx, t), dx])  # the joint frame, world axes
        m.add_loop_closure(
            tip,
            rib,
            Universal((1, 0, 0), (0, 1, 0)),
            placement_a=Transform(rotation=Rw[tip].T @ Rf, translation=(0, 0, hs)),
            placement_b=Transform(rotation=Rw[rib].T @ Rf, translation=b.centre[rib]),
            q=q0,
        )
    kc = _UMBRELLA_CANOPY_K[params]
    for k in range(8):
        for i in range(n):
            a, c = ribs[k][i], ribs[(k + 1) % 8][i]
            b.spring(q0, a, b.centre[a], c, b.centre[c], kc, 1.0)
    info = dict(
        scene="umbrella",
        n=n,
        params=params,
        stretcher_bodies=ns,
        rib_body_length=h,
        stretcher_body_length=ends[0][2],
        canopy_k=kc,
        canopy_d=1.0,
        joint_k=1e5,
        joint_d=1.0,
        runner_force=5e3,
        gravity=(0.0, 0.0, 0.0),
        density=rho,
        baumgarte=0.0,
    )
    return _scene(b, f"umbrella:{n}" + ("" if params == "video" else f",params={params}"), info)


# --------------------------------------------------------------------------- tree


def tree(levels: int = 4, springs: str = "siblings") -> Scene:
    """The hanging binary tree (baxter2019 §4.3, Figs. 18–26; published ``loadSimpleTree``, and
    ``loadTree`` for the square springs). Reduced DOF 3·(2^levels − 1).

    Gravity (0, −980, 0), density 1, all joints hinges with k = 1e3, d = 1 about their initial
    angles. Root: a fixed 3 × 0.5 × 0.5 block along y over y ∈ [−3, 0]. Each level ℓ = 1..levels
    adds to each node a cross block 12·0.75^(ℓ−1) × 0.5 × 0.5 hinged at its centre to the
    parent's lower end (initial angle π/2) and two leaves 3·0.95^ℓ × 0.5 × 0.5 hinged at their
    upper ends to the cross at ±5.9·0.75^(ℓ−1) (initial angles 3π/2, π/2 at ℓ = 1), so the tree
    hangs below the root with crosses alternately along x and z. Hinge axes: z (in the parent's
    frame) on odd levels, y on even ones.

    springs: "siblings" — at every node a spring between its two leaves, centre to centre,
        k = 1e5 per unit strain, d = 1 (2^levels − 1 springs); "square" — the alternate tree
        (Figs. 23–26): instead, between each lowest-level leaf and its nearest neighbours along
        the world x and z grid lines, attached at the leaves' lower ends, same k and d (as the
        published loadTree; it uses a slightly different geometry, 10·0.8^(ℓ−1) crosses and
        ±4.9·0.8^(ℓ−1) leaf hinges, but we keep the sibling tree's to change only the springs).

    The four corner leaves of the last level (extreme in ±x ± z) are pulled at their centres by
    constant forces 10·M·(±1, −1, ±1), M the total mass including the root (the published
    direction is not normalised). With levels = 1 the two "corners" on each side coincide.
    """
    levels = _count(levels, "tree levels", 1)
    if springs not in ("siblings", "square"):
        raise ValueError(f"tree springs must be 'siblings' or 'square', got {springs!r}")
    b = _Builder(gravity=(0.0, -980.0, 0.0))
    m = b.model
    rho, k_j, d_j = 1.0, 1e3, 1.0
    root = b.add(
        "root",
        None,
        Fixed(),
        rotation=_rot((0, 0, 1), math.pi / 2),
        translation=(0, -1.5, 0),
        size=(3.0, 0.5, 0.5),
        density=rho,
    )
    pairs, last = [], []

    def branch(level: int, parent: int, tag: str):
        if level > levels:
            return
        axis = (0, 1, 0) if level % 2 == 0 else (0, 0, 1)
        attach = (-1.5, 0, 0) if level == 1 else (1.5 * 0.95 ** (level - 1), 0, 0)  # parent's lower end
        cross = b.add(
            f"x{tag}",
            parent,
            Revolute(axis),
            translation=b.point(parent, attach),
            size=(12 * 0.75 ** (level - 1), 0.5, 0.5),
            density=rho,
            q0=math.pi / 2,
            stiffness=k_j,
            damping=d_j,
        )
        angle = math.pi / 2 if level == 1 else 1.5 * math.pi
        half = 1.5 * 0.95**level
        leaves = []
        for side, sign in (("0", -1.0), ("1", 1.0)):
            leaf = b.add(
                f"l{tag}{side}",
                cross,
                Revolute(axis),
                translation=(sign * 5.9 * 0.75 ** (level - 1), 0, 0),
                centre=(half, 0, 0),
                size=(2 * half, 0.5, 0.5),
                density=rho,
                q0=angle,
                stiffness=k_j,
                damping=d_j,
            )
            leaves.append(leaf)
            if level == levels:
                last.append(leaf)
            branch(level + 1, leaf, tag + side)
        pairs.append(tuple(leaves))

    branch(1, root, "")
    q0 = b.q0()
    R, p = m.body_poses(q0)
    centres = {i: R[i] @ b.centre[i] + p[i] for i in last}
    if springs == "siblings":
        for a, c in pairs:
            b.spring(q0, a, b.centre[a], c, b.centre[c], 1e5, 1.0)
    else:
        done = set()
        for i in last:
            xi = centres[i]
            best = {}
            for j in last:
                if j == i:
                    continue
                d = centres[j] - xi
                for axis, other in ((0, 2), (2, 0)):
                    if abs(d[other]) < 1e-2 and abs(d[axis]) > 1e-9:
                        key = (axis, d[axis] > 0)
                        if key not in best or abs(d[axis]) < best[key][0]:
                            best[key] = (abs(d[axis]), j)
            for _, j in best.values():
                pair = (min(i, j), max(i, j))
                if pair not in done:
                    done.add(pair)
                    end_i, end_j = b.point(i, (b.centre[i][0], 0, 0)), b.point(j, (b.centre[j][0], 0, 0))
                    b.spring(q0, i, end_i, j, end_j, 1e5, 1.0)
    M = float(sum(b.mass.values()))
    corners = []
    for sx in (-1.0, 1.0):
        for sz in (-1.0, 1.0):
            leaf = max(last, key=lambda i: sx * centres[i][0] + sz * centres[i][2])
            m.add_point_force(leaf, b.centre[leaf], 10.0 * M * np.array([sx, -1.0, sz]))
            corners.append(m.body_names[leaf])
    info = dict(
        scene="tree",
        levels=levels,
        springs=springs,
        joint_k=k_j,
        joint_d=d_j,
        spring_k=1e5,
        spring_d=1.0,
        corner_leaves=corners,
        corner_force=10.0 * M,
        gravity=(0.0, -980.0, 0.0),
        density=rho,
        baumgarte="1/h",
    )
    return _scene(b, f"tree:{levels}" + ("" if springs == "siblings" else f",springs={springs}"), info)
