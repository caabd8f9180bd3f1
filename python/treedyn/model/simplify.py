"""Model simplification (featherstone-part3, "Simplifying the Model" and "Example: Adding Point
Masses"): infinitely many trees share one equation of motion, so replace a model by one with the same
M(q) and c(q, q̇) and fewer nonzero inertia parameters.

The rule. Move an inertia I_δ from body i to its parent λ(i) — add −I_δ to body i, +I_δ to λ(i) —
where both bodies carry it alike: I_δ must not see the joint's motion. In body i's coordinates the
kinetic energy of I_δ is ½ v_iᵀ I_δ v_i with v_i = X_J(q) X_T v_λ + S_i q̇ (X_T the joint's placement,
X_J(q) its motion, body i's frame the joint frame at q = 0). With

    (a) X_J(q)ᵀ I_δ X_J(q) = I_δ for every q  (I_δ invariant under the joint's motion) and
    (b) I_δ S_i = 0                            (the joint's own velocity gives it no energy)

this is ½ (X_T v_λ)ᵀ I_δ (X_T v_λ): the kinetic energy of I_δ fixed to λ(i) at the joint frame, which
is I_δ in λ's coordinates through X_T alone. Its first moment, and so its potential energy in gravity,
stays as well. T and V are unchanged for every q, q̇: so is the equation of motion. An I_δ moved onto
the world (λ(i) = 0) is dropped: it never moves.

What each joint lets through, as rbi(m, h, Ī) with Ī about the joint frame's origin (s: the axis):

    revolute    (m, μ s, a(1 − ssᵀ)), any m, μ, a: a point mass on the axis (the slides' P: m_i at
                the axis point nearest the CoM is μ = s·h_i) and a rotational inertia symmetric about
                the axis with Ī s = 0 — three parameters;
    prismatic   (0, 0, J), J any symmetric 3x3: a pure rotational inertia (translation changes no
                rotational inertia; (b) forbids mass and first moment) — six;
    spherical,
    universal   (m, 0, 0): a point mass at the joint centre (invariant under all rotations: (a)
                leaves h = 0, Ī = a1, and (b) a = 0) — one;
    fixed       everything — ten;
    free        nothing ((b) with S = 1₆).

Which of them to move. Bodies are taken from the leaves to the root (children have larger indices),
so what a body receives moves on with its own pieces. Each piece of body i is either left or moved
with an amount that zeroes one parameter of body i; an amount divides by an entry of s or 1 − ssᵀ
that is at least a quarter of the largest, so no piece is more than 4x the body's own parameters
(no cancellation). Among the combinations, one pass takes the most pieces moved (the slides' aim:
every mass as far towards the root as it goes), another the fewest nonzero parameters left in body
i and λ(i) together (λ(i) = 0: in body i alone); each breaks ties by the other, then by the
smallest amounts. Neither is best on every tree — moving a mass puts new nonzeros in the parent
(the point mass away from its origin), which its own joint may or may not pass on — so both run
and the result with fewer nonzero parameters is kept. For an axis along a coordinate axis the
moved pieces are the slides': m_i to zero with h_i along the axis (the point nearest the CoM) and
one of Ī's two moments across the axis.

The result's bodies are inertias given as parameters (``td.Inertia.from_parameters``): valid for the
tree, often not for a body alone — many have mass 0 with a first moment h ≠ 0 and no centre of mass.
M(q), c(q, q̇) and every solver's pivots are those of the original in exact arithmetic (the moved
pieces cancel in the articulated inertias' S_iᵀ I^A_i S_i by (b)), so the solvers run on it as on the
original; ``cfa-oee``, which inverts each body's spatial inertia, refuses a body left with a
singular one (SingularInertiaError). The mass dropped onto the world leaves ``td.center_of_mass``
and ``td.potential_energy`` (of the bodies that move) changed: the energy by a constant, the centre
of mass by the dropped mass (none at all when no moving mass is left: ValueError); compute them on
the original model.
"""

from __future__ import annotations

import itertools

import numpy as np

from . import Fixed, Inertia, Model, Prismatic, Revolute, Spherical, Transform, Universal

__all__ = ["simplify", "inertia_parameters", "inertia_parameter_count"]

# the 10 parameters of rbi(m, h, Ī) (featherstone-part3, "Iv"): m, h, then Ī's lower triangle in the
# C++ order (spatial/vec3.hpp Sym3: xx, yx, yy, zx, zy, zz)
_LOWER = ((0, 0), (1, 0), (1, 1), (2, 0), (2, 1), (2, 2))
_H, _I = slice(1, 4), slice(4, 10)


def _skew(x: np.ndarray) -> np.ndarray:
    return np.array([[0.0, -x[2], x[1]], [x[2], 0.0, -x[0]], [-x[1], x[0], 0.0]])


def _vector(m: float, h: np.ndarray, I: np.ndarray) -> np.ndarray:
    return np.r_[m, h, [I[j, k] for j, k in _LOWER]]


def _split(p: np.ndarray):
    I = np.zeros((3, 3))
    for x, (j, k) in zip(p[_I], _LOWER):
        I[j, k] = I[k, j] = x
    return p[0], p[_H].copy(), I


def inertia_parameters(model: Model) -> np.ndarray:
    """(n_bodies, 10): each body's m, h, and Ī's lower triangle (xx, yx, yy, zx, zy, zz) about its
    frame's origin, as the C++ kernels hold them (the world's row zero)."""
    out = np.zeros((model.n_bodies, 10))
    for i in range(1, model.n_bodies):
        X = np.asarray(model.core.spatial_inertia(i))  # [Ī, h×; −h×, m1]
        hx = X[:3, 3:]
        out[i] = _vector(X[3, 3], np.array([hx[2, 1], hx[0, 2], hx[1, 0]]), X[:3, :3])
    return out


def inertia_parameter_count(model: Model) -> int:
    """The nonzero inertia parameters of the model's bodies (10 each: m, h, Ī's six; exact zeros
    only): what a simplification lowers."""
    return int(np.count_nonzero(inertia_parameters(model)))


def _to_parent(p: np.ndarray, X: Transform) -> np.ndarray:
    """An rbi(m, h, Ī) in the joint frame, in the parent's coordinates (x_λ = R x + r): m, R h + m r,
    R Ī Rᵀ − (Rh)× r× − r× (Rh)× − m r× r× (Ī = −Σ m x× x× of the moved points); linear in p."""
    m, h, I = _split(p)
    R, r = X.rotation, X.translation
    Rh, rx = R @ h, _skew(X.translation)
    Rhx = _skew(Rh)
    return _vector(m, Rh + m * r, R @ I @ R.T - Rhx @ rx - rx @ Rhx - m * rx @ rx)


def _zeroing(x: np.ndarray, d: np.ndarray, offset: int) -> list:
    """The amounts t of a piece t·d that zero one entry of x (x_k − t d_k = 0), as (t, zeroed index):
    only over the entries with |d_k| ≥ ¼ max |d| (no large t from a small d_k)."""
    big = np.abs(d) >= 0.25 * np.abs(d).max()
    return [(x[k] / d[k], (offset + k,)) for k in range(len(d)) if big[k] and x[k] != 0]


def _pieces(joint, p: np.ndarray) -> list:
    """The transferable pieces of body i across its joint, each (basis b, [(amount t, the entries of
    body i it zeroes), ...]), the piece moved being t·b in body i's coordinates (see the module)."""
    unit_mass = np.r_[1.0, np.zeros(9)]
    if isinstance(joint, Revolute):
        s = joint.axis
        b_h = np.r_[0.0, s, np.zeros(6)]  # (0, μ s, 0)
        b_I = np.r_[np.zeros(4), _vector(0.0, np.zeros(3), np.eye(3) - np.outer(s, s))[_I]]  # (0, 0, a(1 − ssᵀ))
        return [
            (unit_mass, [(p[0], (0,))] if p[0] else []),
            (b_h, _zeroing(p[_H], b_h[_H], 1)),
            (b_I, _zeroing(p[_I], b_I[_I], 4)),
        ]
    if isinstance(joint, Prismatic):  # (0, 0, J): the whole Ī
        return [(np.r_[np.zeros(4), p[_I]], [(1.0, tuple(range(4, 10)))] if p[_I].any() else [])]
    if isinstance(joint, (Spherical, Universal)):  # (m, 0, 0) at the centre
        return [(unit_mass, [(p[0], (0,))] if p[0] else [])]
    if isinstance(joint, Fixed):  # everything
        return [(p.copy(), [(1.0, tuple(range(10)))] if p.any() else [])]
    return []  # free: nothing


def _transfer(model: Model, P: np.ndarray, move_first: bool) -> np.ndarray:
    """One pass from the leaves to the root over the parameters P (n_bodies, 10), changed in place.
    Each body's choice of pieces is scored by the nonzero parameters left in it and its parent;
    move_first: the most pieces moved first (the slides' aim: every mass as far towards the root as
    it goes), then that score."""
    parents, joints, placements = model.parents, model.joints, model.placements
    for i in range(model.n_bodies - 1, 0, -1):  # leaves to root: children come after their parent
        lam = int(parents[i])
        pieces = _pieces(joints[i], P[i])
        # each piece in λ's coordinates through X_T alone (condition (a)); onto the world: dropped
        moved = [_to_parent(b, placements[i]) if lam else None for b, _ in pieces]
        best = None
        for choice in itertools.product(*[[(0.0, ())] + cands for _, cands in pieces]):
            child = P[i] - sum((t * b for (b, _), (t, _) in zip(pieces, choice)), np.zeros(10))
            for _, zeroed in choice:
                child[list(zeroed)] = 0.0  # exactly: x_k − (x_k/d_k) d_k need not round to 0
            parent = P[lam] + sum((t * Xb for Xb, (t, _) in zip(moved, choice)), np.zeros(10)) if lam else None
            count = np.count_nonzero(child) + (np.count_nonzero(parent) if lam else 0)
            n_moved = sum(t != 0 for t, _ in choice)
            size = sum(abs(t) for t, _ in choice)
            key = (-n_moved, count, size) if move_first else (count, n_moved, size)
            if best is None or key < best[0]:
                best = (key, child, parent)
        if best is not None:
            _, P[i], parent = best
            if lam:
                P[lam] = parent
    return P


def simplify(model: Model) -> Model:
    """A model with the same M(q) and c(q, q̇) as ``model`` — the same bodies, joints, names,
    placements, frames, geoms, limits, springs, forces, loop closures and couplings — and fewer
    nonzero inertia parameters: inertia moved from leaves to root across the joints that cannot
    feel it (featherstone-part3, "Simplifying the Model"; the rule, the pieces each joint kind
    lets through and the choice among them: treedyn.model.simplify's module docstring). ``model`` is
    not changed. Compare ``inertia_parameter_count`` before and after."""
    if not isinstance(model, Model):
        raise TypeError(f"simplify: model must be a treedyn.Model, got {type(model).__name__}")
    P = inertia_parameters(model)
    # two passes, the one with fewer nonzero parameters kept (a tie: the one that moved more mass)
    P = min(
        (_transfer(model, P.copy(), move_first) for move_first in (True, False)),
        key=np.count_nonzero,
    )
    inertias = [Inertia.from_parameters(*_split(p)) for p in P[1:]]
    return model.with_inertias([model.inertias[0], *inertias])
