"""Contact detection between a model's geoms.

The shapes are ``treedyn.model.shapes``' values; ``model.add_geom`` fixes one to a body or to the
world. :func:`collide` returns the contacts at q: world point (midway between the
two surfaces), unit normal from the first geom towards the second, and depth (> 0: penetration).

Every pair of shapes but plane–plane has a closed form in C++ (``contact/collision.hpp``, the code
the C++ contact step runs too; ``_core.collide_geoms`` here): a plane touches each penetrating
sphere, cap centre or box corner (a box resting on a face: 4 points); sphere–sphere, –capsule and
–box and crossing capsules touch at their nearest points; parallel overlapping capsules at the
overlap's 2 ends, a capsule lying along a box's face at its 2 ends over the face; box–box by
separating axes, a face axis giving a patch (the incident face clipped to the reference face: up to
8 points, so that a stack of boxes resists tipping and twisting), an edge axis one point.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import _core
from ..model.cache import cached
from ..model.shapes import Box, Capsule, Plane, Sphere
from .result import SimulationWarning

__all__ = [
    "Contacts",
    "collide",
    "collision_pairs",
    "pair_parameters",
    "geom_pose",
    "native",
    "untouchable_bodies",
    "warn_no_contact",
]

#: the shapes' codes in the C++ collision (contact/collision.hpp ShapeKind)
SHAPE_KIND = {Plane: 0, Sphere: 1, Capsule: 2, Box: 3}


@dataclass(frozen=True)
class Contacts:
    """Contacts at one configuration, one row each."""

    geoms: np.ndarray  # (k, 2) geom indices (a, b)
    bodies: np.ndarray  # (k, 2) their bodies
    points: np.ndarray  # (k, 3) world points midway between the surfaces
    normals: np.ndarray  # (k, 3) unit normals from a towards b
    depths: np.ndarray  # (k,) penetration depths (> 0)
    friction: np.ndarray  # (k,) the pair's friction coefficient: max of the two (MuJoCo's rule)

    def __len__(self) -> int:
        return len(self.depths)


def collision_pairs(model) -> list[tuple[int, int]]:
    """The geom pairs that may touch, MuJoCo's rules (mj_collision's filters): none when the model's
    contact is off (``model.contact_enabled``); otherwise different bodies, neither the other's
    parent unless that is the world (the parent filter), the bit masks compatible, not two planes,
    the body pair not excluded (``model.contact_excludes``), and then the explicit pairs
    (``model.contact_pairs``) whatever the filters, in the order added. A body's parent here is its
    link's: the joint-only bodies between (massless, no geom: a multi-joint MJCF body's or a URDF's
    chain of joints, as the loaders split them) are passed over, so a thigh on three hip hinges does
    not touch the pelvis it hangs from, as in MuJoCo (whose parent filter compares weld bodies: a
    jointless MJCF body is merged into its parent in treedyn as welded in MuJoCo)."""
    if not model.contact_enabled:
        return []
    geoms, parents = model.geoms, model.parents
    has_geom = np.zeros(model.n_bodies, dtype=bool)
    has_geom[[g.body for g in geoms]] = True
    joint_only = [not has_geom[i] and model.inertias[i].mass == 0.0 for i in range(model.n_bodies)]
    excluded = set(model.contact_excludes)
    explicit = {(min(c.geom1, c.geom2), max(c.geom1, c.geom2)) for c in model.contact_pairs}

    def link_parent(i):
        p = parents[i]
        while p > 0 and joint_only[p]:
            p = parents[p]
        return p

    out = []
    for i, a in enumerate(geoms):
        for j in range(i + 1, len(geoms)):
            b = geoms[j]
            if a.body == b.body or (i, j) in explicit:
                continue
            # a body and its parent (not the world: a robot on its base still touches the ground)
            if (link_parent(a.body) == b.body and b.body != 0) or (link_parent(b.body) == a.body and a.body != 0):
                continue
            if not (a.contype & b.conaffinity or b.contype & a.conaffinity):
                continue
            if isinstance(a.shape, Plane) and isinstance(b.shape, Plane):
                continue
            if (min(a.body, b.body), max(a.body, b.body)) in excluded:
                continue
            out.append((i, j))
    return out + [(c.geom1, c.geom2) for c in model.contact_pairs]


def pair_parameters(model, _key=None) -> dict:
    """{(i, j): (friction, margin, condim, torsional, rolling)} of every geom pair whose parameters are
    not the geoms' default (friction, torsional and rolling friction the larger of the two, margin the
    sum of the two, condim the larger: MuJoCo 4.0's rules, measured): an explicit pair's own
    (``model.contact_pairs``; what it leaves None from the geoms), a pair of two condim-1 geoms
    (frictionless), a pair of two priorities (the higher one's condim and coefficients). condim,
    torsional, rolling NaN: the geoms' rule. Only those pairs and explicit pairs are listed; made once
    per model revision."""
    geoms, nan = model.geoms, float("nan")
    out = {}
    ones = [k for k, g in enumerate(geoms) if g.condim == 1]
    for x, i in enumerate(ones):
        for j in ones[x + 1 :]:
            out[(i, j)] = (0.0, geoms[i].margin + geoms[j].margin, 1.0, nan, nan)
    ranked = [k for k, g in enumerate(geoms) if g.priority != 0]
    for i in ranked:  # (of two priorities, the higher one's condim and friction: MuJoCo's mj_contactParam)
        for j in range(len(geoms)):
            a, b = geoms[i], geoms[j]
            if a.priority != b.priority and (j not in ranked or i < j):
                top = a if a.priority > b.priority else b
                mu = 0.0 if top.condim == 1 else top.friction
                dims = (float(top.condim), top.torsional_friction, top.rolling_friction)
                out[(min(i, j), max(i, j))] = (mu, a.margin + b.margin, *dims)
    for c in model.contact_pairs:
        a, b = geoms[c.geom1], geoms[c.geom2]
        condim = c.condim if c.condim is not None else max(a.condim, b.condim)
        mu = c.friction if c.friction is not None else max(a.friction, b.friction)
        margin = c.margin if c.margin is not None else a.margin + b.margin
        spin = c.torsional_friction if c.torsional_friction is not None else nan
        roll = c.rolling_friction if c.rolling_friction is not None else nan
        out[(c.geom1, c.geom2)] = (0.0 if condim == 1 else mu, margin, float(condim), spin, roll)
    return out


def _size(shape) -> tuple[float, float, float]:
    """A shape's sizes as contact/collision.hpp's GeomData takes them (zeros for the shapes it does
    not know: they are in no pair it collides)."""
    if isinstance(shape, Sphere):
        return (shape.radius, 0.0, 0.0)
    if isinstance(shape, Capsule):
        return (shape.radius, shape.half_length, 0.0)
    if isinstance(shape, Box):
        return tuple(shape.half_extents)
    return (0.0, 0.0, 0.0)


def _geom_arrays(model, _key) -> tuple:
    """The geoms as _core.collide_geoms takes them (kinds, bodies, rotations, translations, sizes,
    friction), made once per model revision (model/cache.py), read-only. A shape the C++ collision
    does not know has kind 0 and sizes 0: no pair the C++ side collides holds it (NATIVE)."""
    geoms = model.geoms
    G = len(geoms)
    out = (
        np.array([SHAPE_KIND.get(type(g.shape), 0) for g in geoms], dtype=np.int64),
        np.array([g.body for g in geoms], dtype=np.int64),
        np.array([np.asarray(g.placement.rotation, dtype=float) for g in geoms]).reshape(G, 3, 3),
        np.array([np.asarray(g.placement.translation, dtype=float) for g in geoms]).reshape(G, 3),
        np.array([_size(g.shape) for g in geoms], dtype=float).reshape(G, 3),
        np.array([g.friction for g in geoms], dtype=float),
    )
    for a in out:
        a.flags.writeable = False
    return out


def _margins(model, _key) -> np.ndarray:
    m = np.array([g.margin for g in model.geoms], dtype=float)
    m.flags.writeable = False
    return m


def _default_pairs(model, _key) -> np.ndarray:
    pairs = np.array(collision_pairs(model), dtype=np.int64).reshape(-1, 2)
    pairs.flags.writeable = False
    return pairs


def _coal_objects(model, _key) -> list:
    """Each geom's coal shape, made when first asked for (sim/convex.py)."""
    return [None] * len(model.geoms)


def native(model, i: int, j: int) -> bool:
    """Whether the C++ closed forms collide geoms i and j (both shapes known to them)."""
    g = model.geoms
    return type(g[i].shape) in SHAPE_KIND and type(g[j].shape) in SHAPE_KIND


def geom_pose(geom, R, p) -> tuple[np.ndarray, np.ndarray]:
    """The world rotation and position of a geom, from the bodies' world poses (R, p) at q."""
    Rb, X = R[geom.body], geom.placement
    return Rb @ np.asarray(X.rotation), Rb @ np.asarray(X.translation) + p[geom.body]


def collide(model, q, pairs=None) -> Contacts:
    """The contacts between the model's geoms at q (see the module's docstring), pair by pair in the
    order of ``pairs``. pairs: the geom index pairs to test (default: collision_pairs(model), kept
    with the model; a stepper computes them once). Pairs of shapes the C++ closed forms know go to
    them (with each geom's margin), the others to treedyn.sim.convex; a pair with its own friction
    or margin (pair_parameters: explicit pairs, frictionless geoms) gets them."""
    if not hasattr(model, "geoms") or not hasattr(model, "core"):
        raise TypeError(f"model must be a treedyn.Model, got {type(model).__name__}")
    R, p = _core.forward_kinematics(model.core, q)
    if pairs is None:
        pairs = cached(model, "pairs", _default_pairs)
    else:
        pairs = np.asarray(pairs, dtype=np.int64)
        if pairs.size == 0:
            pairs = pairs.reshape(0, 2)
        if pairs.ndim != 2 or pairs.shape[1] != 2:
            raise ValueError(f"pairs must have shape (K, 2), got {pairs.shape}")
    arrays, margins = cached(model, "geoms", _geom_arrays), cached(model, "margins", _margins)
    special = cached(model, "pair_parameters", pair_parameters)
    geoms = model.geoms
    is_native = _native_mask(model, pairs)
    if is_native.all() and not special:
        return Contacts(*_core.collide_geoms(*arrays, pairs, R, p, margins))
    rows = []  # (pair's position, contacts) of each group
    own = cached(model, pairs.astype(np.int64).tobytes(), _own_mask) if special else np.zeros(len(pairs), bool)
    plain = is_native & ~own
    if plain.any():
        rows.append(_core.collide_geoms(*arrays, pairs[plain], R, p, margins))
    coal_objects = None
    rest = np.flatnonzero(~plain)
    for k in rest[_near(model, pairs[rest], R, p)]:  # the others, past the broad phase
        i, j = int(pairs[k, 0]), int(pairs[k, 1])
        mu, margin, *_ = special.get((i, j), (max(geoms[i].friction, geoms[j].friction), None))
        if margin is None:
            margin = geoms[i].margin + geoms[j].margin
        if is_native[k]:
            c = _core.collide_geoms(
                *arrays, pairs[k : k + 1], R, p, np.full(len(geoms), 0.5 * margin)
            )  # (the pair's: the sum)
            rows.append(c[:5] + (np.full(len(c[4]), mu),))
            continue
        if coal_objects is None:
            coal_objects = cached(model, "coal", _coal_objects)
        found = _convex_pair(geoms, i, j, R, p, margin, coal_objects)
        n = len(found)
        rows.append(
            (
                np.tile([i, j], (n, 1)),
                np.tile([geoms[i].body, geoms[j].body], (n, 1)),
                np.array([f[0] for f in found]).reshape(n, 3),
                np.array([f[1] for f in found]).reshape(n, 3),
                np.array([f[2] for f in found], dtype=float),
                np.full(n, mu),
            )
        )
    if not rows:
        return Contacts(np.zeros((0, 2), np.int64), np.zeros((0, 2), np.int64), *np.zeros((2, 0, 3)), *np.zeros((2, 0)))
    out = [np.concatenate([r[c] for r in rows]) for c in range(6)]
    order = {(int(i), int(j)): k for k, (i, j) in enumerate(pairs.tolist())}
    rank = np.array([order[(int(a), int(b))] for a, b in out[0]], dtype=np.int64)
    sort = np.argsort(rank, kind="stable")
    return Contacts(*(a[sort] for a in out))


def _bounding_radii(model, _key) -> np.ndarray:
    """Each geom's bounding sphere about its frame's origin (inf for a plane)."""

    def radius(shape):
        if isinstance(shape, Plane):
            return np.inf
        if isinstance(shape, Sphere):
            return shape.radius
        if isinstance(shape, Capsule):
            return shape.radius + shape.half_length
        if isinstance(shape, Box):
            return float(np.linalg.norm(shape.half_extents))
        if hasattr(shape, "radii"):  # Ellipsoid
            return max(shape.radii)
        if hasattr(shape, "vertices"):  # ConvexMesh
            return float(np.linalg.norm(shape.vertices, axis=1).max())
        return float(np.hypot(shape.radius, shape.half_length))  # Cylinder

    radii = np.array([radius(g.shape) for g in model.geoms])
    margins = np.array([g.margin for g in model.geoms])
    return np.where(np.isinf(radii), 0.0, radii), margins, np.isinf(radii)


def _near(model, pairs, R, p) -> np.ndarray:
    """The broad phase of the pairs collided in Python: whether each pair's bounding spheres (a
    sphere and a plane's half-space) are within the pair's largest margin (the sum of the geoms'
    or an explicit pair's) of each other; the others have no contact."""
    _, bodies, Rl, tl, _, _ = cached(model, "geoms", _geom_arrays)
    radii, margins, plane = cached(model, "bounds", _bounding_radii)
    if len(pairs) == 0:
        return np.zeros(0, dtype=bool)
    i, j = pairs[:, 0], pairs[:, 1]
    Rb = R[bodies]
    centres = np.einsum("gij,gj->gi", Rb, tl) + p[bodies]
    normals = np.einsum("gij,gj->gi", Rb, Rl[:, :, 2])
    reach = margins[i] + margins[j] + cached(model, "pair_margin", _largest_pair_margin)
    d = centres[j] - centres[i]
    with np.errstate(invalid="ignore"):
        apart = np.where(
            plane[i],
            np.einsum("kj,kj->k", normals[i], d) > radii[j] + reach,
            np.where(
                plane[j],
                -np.einsum("kj,kj->k", normals[j], d) > radii[i] + reach,
                np.linalg.norm(d, axis=1) > radii[i] + radii[j] + reach,
            ),
        )
    return ~apart


def _largest_pair_margin(model, _key) -> float:
    return max((p[1] for p in pair_parameters(model).values()), default=0.0)


def _own_mask(model, key: bytes) -> np.ndarray:
    """Which of the pairs (key: their int64 bytes) have their own friction or margin (pair_parameters)."""
    special = cached(model, "pair_parameters", pair_parameters)
    return np.array([(int(i), int(j)) in special for i, j in np.frombuffer(key, np.int64).reshape(-1, 2)], bool)


def _native_mask(model, pairs) -> np.ndarray:
    """native(model, i, j) of each pair, from the geoms' shapes (one vectorised test)."""
    known = cached(model, "native_kinds", _native_kinds)
    return known[pairs[:, 0]] & known[pairs[:, 1]] if len(pairs) else np.zeros(0, dtype=bool)


def _native_kinds(model, _key) -> np.ndarray:
    return np.array([type(g.shape) in SHAPE_KIND for g in model.geoms], dtype=bool)


def _convex_pair(geoms, i, j, R, p, margin, coal_objects):
    from .convex import coal_shape, convex_contacts

    a, b = geoms[i], geoms[j]
    (Ra, pa), (Rb, pb) = geom_pose(a, R, p), geom_pose(b, R, p)
    objects = None
    if not (isinstance(a.shape, Plane) or isinstance(b.shape, Plane)):
        for k in (i, j):
            if coal_objects[k] is None:
                coal_objects[k] = coal_shape(geoms[k].shape)
        objects = (coal_objects[i], coal_objects[j])
    return convex_contacts(a.shape, Ra, pa, b.shape, Rb, pb, margin, objects)


def untouchable_bodies(model, pairs=None) -> list[str]:
    """The moving bodies with mass that nothing of theirs can touch: none of the geoms of the body or
    of the bodies it carries is in a candidate pair (no geom, or every pair filtered), when the
    model has geoms and contact is on; the topmost of each such subtree, [] otherwise. Such a body
    passes through everything (td.ContactSimulator warns about it); a leg's segment carried by a
    foot that touches is held by the foot."""
    if not model.geoms or not model.contact_enabled:
        return []
    pairs = collision_pairs(model) if pairs is None else pairs
    N, parents = model.n_bodies, model.parents
    touches = np.zeros(N, dtype=bool)
    touches[[model.geoms[k].body for pair in pairs for k in pair]] = True
    mass = np.array([I.mass for I in model.inertias])
    for i in range(N - 1, 0, -1):  # children after their parents: subtrees upwards
        touches[parents[i]] |= touches[i]
        mass[parents[i]] += mass[i]
    return [
        model.body_names[i]
        for i in range(1, N)
        if mass[i] > 0 and not touches[i] and (parents[i] == 0 or touches[parents[i]])
    ]


def warn_no_contact(model, pairs=None) -> None:
    """(td.ContactSimulator's construction) A SimulationWarning when some of the model's bodies cannot touch anything while others can,
    or when the file's collision shapes were dropped (model.dropped_geoms): never a silent fall
    through the floor."""
    import warnings

    lost, dropped = untouchable_bodies(model, pairs), model.dropped_geoms
    if lost:
        shown = ", ".join(repr(b) for b in lost[:6]) + (f" and {len(lost) - 6} more" if len(lost) > 6 else "")
        warnings.warn(
            f"ContactSimulator: {len(lost)} moving body(ies) can touch nothing, nor can what they carry (no geom, or every pair filtered): "
            f"{shown}; they pass through the other geoms",
            SimulationWarning,
            stacklevel=4,
        )
    if dropped:
        shown = "; ".join(dropped[:3]) + (f"; and {len(dropped) - 3} more" if len(dropped) > 3 else "")
        warnings.warn(
            f"ContactSimulator: {len(dropped)} collision shape(s) of the model's file were dropped "
            f"(model.dropped_geoms): {shown}",
            SimulationWarning,
            stacklevel=4,
        )
