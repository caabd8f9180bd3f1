"""MuJoCo's soft contacts, limits and equalities for the C++ step (``ContactSimulator(soft=True)``;
cpp/include/treedyn/contact/soft.hpp, docs/contact.md "Soft constraints"): each candidate pair's
solref and solimp (an explicit pair's own, else its two geoms' mixed by their solmix, as MuJoCo's
mj_contactParam mixes them), each limit bound's, each soft equality's, and MuJoCo's approximate
inverse inertias at the model's reference pose (its body_invweight0, dof_invweight0 and
tendon_invweight0, mj_setConst)."""

from __future__ import annotations

import warnings

import numpy as np

from .. import _checks
from ..algorithms.kinematics import frame_jacobian
from ..algorithms.state import neutral_or_reference
from ..model.cache import cached
from ..model.shapes import DEFAULT_SOLIMP, DEFAULT_SOLREF
from ..solvers.inverse import _solver_for, inverse_mass_matrix
from .contact_solvers import MAX_FRICTION_EDGES
from .result import SimulationWarning

#: the contact simulator's integrators, as the step core names them (None: the C++ step's alone)
INTEGRATORS = {"semi-implicit": "semi-implicit-euler", "euler": "euler", "rk4": None, "implicitfast": None}
INTEGRATORS["implicit"] = None


def _mixed(a, b) -> tuple:
    """Two geoms' (solref, solimp) mixed: weight solmix_a/(solmix_a + solmix_b) (0.5 if both are 0,
    the other's alone if one is); solref mixed when both are time constants, else the smaller of each.
    Of two priorities, the higher one's alone (MuJoCo's mj_contactParam)."""
    if a.priority != b.priority:
        top = a if a.priority > b.priority else b
        return tuple(top.solref), tuple(top.solimp)
    tiny = 1e-15
    if a.solmix >= tiny and b.solmix >= tiny:
        w = a.solmix / (a.solmix + b.solmix)
    else:
        w = 0.5 if a.solmix < tiny and b.solmix < tiny else (0.0 if a.solmix < tiny else 1.0)
    ra, rb = np.array(a.solref), np.array(b.solref)
    ref = w * ra + (1 - w) * rb if ra[0] > 0 and rb[0] > 0 else np.minimum(ra, rb)
    imp = w * np.array(a.solimp) + (1 - w) * np.array(b.solimp)
    return tuple(ref), tuple(imp)


def _explicit(model, _key=None) -> dict:
    """{(i, j): (solref, solimp)} of the explicit pairs: their own, MuJoCo's defaults where None (a
    <pair> takes its class's, not its geoms')."""
    return {(c.geom1, c.geom2): (c.solref or DEFAULT_SOLREF, c.solimp or DEFAULT_SOLIMP) for c in model.contact_pairs}


def pair_softness(model, pairs) -> np.ndarray:
    """(len(pairs), 7): each geom pair's solref (2) and solimp (5), each pair's made once per model
    revision (the pairs collided in Python ask every step)."""
    rows = cached(model, "soft", _explicit)  # (filled in below with the mixed pairs as they come)
    geoms = model.geoms
    out = np.empty((len(pairs), 7))
    for k, (i, j) in enumerate(pairs):
        key = (int(i), int(j))
        if key not in rows:
            rows[key] = _mixed(geoms[key[0]], geoms[key[1]])
        ref, imp = rows[key]
        out[k, :2], out[k, 2:] = ref, imp
    return out


def limit_softness(model, names_low, names_high) -> np.ndarray:
    """(bounds, 7): each limit bound's solref and solimp (its joint's: Model.limit_softness)."""
    rows = [model.limit_softness(n) for n in list(names_low) + list(names_high)]
    return np.array([list(r) + list(i) for r, i in rows], dtype=float).reshape(-1, 7)


def _reference_minv(model, _key=None) -> np.ndarray:
    """M⁻¹ at the reference configuration (the file's qpos0, else td.neutral), once per model revision: the
    approximate inverse inertias below all read it."""
    return inverse_mass_matrix(model, neutral_or_reference(model))


def inverse_weights(model, _key=None) -> tuple[np.ndarray, np.ndarray]:
    """MuJoCo's body_invweight0 (translation) per geom and dof_invweight0 per velocity coordinate at
    the reference configuration (the file's qpos0, else td.neutral): the mean of the diagonal of
    J_c M⁻¹ J_cᵀ over the three translations of its body's centre of mass (Geom.weight_point: the
    file body's, where a welded body was merged), 0 on the world; a coordinate's (M⁻¹)_kk (a ball
    joint's three the mean of theirs, a free joint's translations and rotations each their mean).
    The points' Jacobians J (3 rows each) go through one M⁻¹Jᵀ (drumwright's, Θ(nv) a column)."""
    q0 = neutral_or_reference(model)
    inertias, points = model.inertias, {}  # (body, point) → its column block
    where = []
    for g in model.geoms:
        point = g.weight_point if g.weight_point is not None else tuple(np.asarray(inertias[g.body].com, dtype=float))
        where.append(points.setdefault((g.body, point), len(points)) if g.body else -1)
    Jt = np.zeros((model.nv, 3 * len(points)))
    for (body, point), c in points.items():
        Jt[:, 3 * c : 3 * c + 3] = frame_jacobian(model, q0, body, np.array(point), "local_world_aligned")[3:].T
    W = _solver_for(model, "drumwright", np.float64).inverse_inertia(q0, Jt) if points else Jt
    mean_diag = np.einsum("ij,ij->j", Jt, W).reshape(-1, 3).mean(axis=1)  # trace(J M⁻¹ Jᵀ)/3 per point
    geoms = np.array([mean_diag[c] if c >= 0 else 0.0 for c in where])
    dof = np.diag(cached(model, "reference_minv", _reference_minv)).copy()
    core = model.core
    for i in range(1, model.n_bodies):
        k, n = core.v_index[i], core.nv_i[i]
        for a in range(0, n, 3) if n in (3, 6) else ():
            dof[k + a : k + a + 3] = dof[k + a : k + a + 3].mean()
    return geoms, dof


def equality_weights(model, _key=None) -> list:
    """Per active constraint, in constraint_terms' order (loop closures, then couplings): (its rows, its
    (solref, solimp) or None where hard, each row's Â, whether its J̇v enters a_ref: a loop closure's,
    as MuJoCo's connect and weld; not a coupling's, as its joint and tendon equalities), Â as MuJoCo's diagApprox of an equality at the
    reference configuration q0: a loop closure's point rows the sum of its two bodies' body_invweight0
    (translation: the mean of the diagonal of J M⁻¹ Jᵀ over the three translations of the centre of
    mass), its orientation rows their rotation's; a coupling's the sum of its sides' c M⁻¹ cᵀ (c the
    side's coefficients over the coordinates: a joint's dof_invweight0, a fixed tendon's
    tendon_invweight0)."""
    q0 = neutral_or_reference(model)
    Minv = cached(model, "reference_minv", _reference_minv)
    inertias, vi = model.inertias, model.v_indices

    def body(b) -> tuple:
        if b == 0:
            return 0.0, 0.0
        J = frame_jacobian(model, q0, b, np.asarray(inertias[b].com, dtype=float), "local_world_aligned")
        A = J @ Minv @ J.T  # ([angular; linear])
        return np.trace(A[3:, 3:]) / 3, np.trace(A[:3, :3]) / 3

    def side(terms) -> float:
        c = np.zeros(model.nv)
        for i, x in terms:
            c[vi[i]] += x
        return float(c @ Minv @ c)

    out = []
    for k, c in enumerate(model.loop_closures):
        if c.active:
            (ta, ra), (tb, rb) = body(c.body_a), body(c.body_b)
            A = [ta + tb] * 3 + [ra + rb] * (c.n_rows - 3)
            out.append((c.n_rows, model.constraint_softness("loop", k), A, True))
    for k, c in enumerate(model.couplings):
        if c.active:
            out.append((1, model.constraint_softness("coupling", k), [side(c.follower) + side(c.leader)], False))
    return out


def row_weights(model, _key=None) -> tuple:
    """(per coordinate, per fixed tendon): MuJoCo's dof_invweight0 (inverse_weights') and tendon_invweight0,
    c M⁻¹ cᵀ at the reference configuration for the tendon's coefficients c, the Â of their dry friction
    and limit rows."""
    from ..model.actuation import actuation_terms

    T = actuation_terms(model)
    Minv = cached(model, "reference_minv", _reference_minv)
    tendons = np.einsum("ij,jk,ik->i", T.tendon_v, Minv, T.tendon_v) if T.tendon_v.size else np.zeros(0)
    return cached(model, "soft_inverse_weights", inverse_weights)[1], tendons


def configure(engine, sim, pairs) -> None:
    """Make the engine's contacts and limits soft (engine.set_soft) with the model's parameters."""
    model = sim.model
    names = list(model.joint_limits)
    lo = [n for n in names if np.isfinite(model.joint_limits[n][0])]
    hi = [n for n in names if np.isfinite(model.joint_limits[n][1])]
    geoms, dof = cached(model, "soft_inverse_weights", inverse_weights)
    engine.set_soft(model.impratio, pair_softness(model, pairs), limit_softness(model, lo, hi), geoms, dof)


def extra_softness(model, geoms) -> np.ndarray:
    """(P, 7): the solref and solimp of contacts found in Python, by their geom pairs."""
    return pair_softness(model, [tuple(g) for g in np.asarray(geoms).reshape(-1, 2)])


def checked_edges(k, exact_cone: bool) -> int:
    """k, the edges of the linearised friction cone: an integer >= 3, or 0 for the exact (second-order)
    cone where the contact solver takes it (exact_cone)."""
    k = _checks.integer(k, "friction_edges", minimum=0, maximum=MAX_FRICTION_EDGES)
    if k == 0 and not exact_cone:
        raise ValueError('friction_edges=0 (the exact friction cone) needs contact_solver="admm"')
    if 0 < k < 3:
        raise ValueError(f"friction_edges must be 0 (the exact cone) or >= 3, got {k}")
    return k


def resolve(model, in_engine: bool, soft, integrator, friction_edges) -> tuple:
    """ContactSimulator's (soft, integrator, friction_edges) where given as None: the model's
    (``model.soft_constraints``, ``model.integrator``, ``model.friction_cone``: an MJCF file's
    constraint model, <option integrator> and <option cone>) where the contact solver is the C++
    step, else hard contacts, "semi-implicit" and the 4-edge pyramid; friction_edges checked. The
    file's RK4 needs soft constraints; its implicitfast is taken with hard ones too."""
    if soft is None:
        soft = bool(model.soft_constraints) and in_engine
    soft = _checks.boolean(soft, "soft")
    if integrator is None:  # (the file's RK4 needs soft constraints; the implicit ones are the C++ step's)
        implicit = model.integrator in ("implicitfast", "implicit")
        integrator = model.integrator if (soft or implicit) and in_engine else None
        integrator = integrator or "semi-implicit"
    elif integrator in ("implicitfast", "implicit") and not in_engine:
        raise ValueError(f'integrator="{integrator}" needs a C++ contact solver ("auto", "newton" or "admm")')
    if not in_engine and (model.fluid[0] > 0 or model.fluid[1] > 0):
        raise ValueError('the model\'s fluid (model.fluid) is the C++ step\'s: use contact_solver "auto" or "admm"')
    if friction_edges is None:
        friction_edges = 0 if soft and model.friction_cone == "elliptic" else 4
    friction_edges = checked_edges(friction_edges, in_engine)
    if soft and friction_edges not in (0, 4):
        raise ValueError(
            f"soft=True takes MuJoCo's cones: friction_edges=4 (pyramidal) or 0 (elliptic), got {friction_edges!r}"
        )
    dims = [g.condim for g in model.geoms] + [c.condim for c in model.contact_pairs if c.condim is not None]
    if max(dims, default=3) > 3 and not (soft and friction_edges == 4 and in_engine):
        warnings.warn(
            "ContactSimulator: condim 4 and 6 (torsional and rolling friction) are modelled with MuJoCo's pyramidal "
            "soft cone (soft=True, friction_edges=4, a C++ contact solver); here they act as 3 (sliding only)",
            SimulationWarning,
            stacklevel=3,
        )
    return soft, integrator, friction_edges


def rk4_unseen(sim) -> None:
    """RK4 on a model with what its stages cannot see (pairs collided in Python, the model's rows):
    refused where asked for, else (the file's <option integrator="RK4">) stepped by semi-implicit
    Euler, said once."""
    if sim._asked_integrator == "rk4":
        raise ValueError(
            'integrator="rk4": the model has pairs collided outside C++ (cylinders, ellipsoids, meshes) or rows '
            '(loop closures, couplings, dry friction, tendon limits), which RK4\'s stages do not see: use "semi-implicit"'
        )
    warnings.warn(
        "ContactSimulator: the model's file asks for RK4, but its pairs collided outside C++ or its rows (loop "
        "closures, dry friction, tendon limits) are not seen by RK4's stages: stepping by semi-implicit Euler",
        SimulationWarning,
        stacklevel=4,
    )
    sim.integrator = "semi-implicit"
