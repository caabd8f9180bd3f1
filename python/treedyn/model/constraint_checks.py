"""The checks a constraint passes when it is added (Model.add_loop_closure, Model.add_coupling): a
constraint that cannot hold with the others is refused where it is made, with a ValueError naming it
and the constraints it conflicts with, not found by a simulation that stops after its first step.

- A coupling of a joint (or of a fixed combination of joints) to itself is refused, with an
  offset (q = q + a0: it cannot hold) and without (q = q: it says nothing). MuJoCo refuses both
  ("element is repeated in equality constraint"), Pinocchio a URDF joint that mimics itself.
- An anchor — the translation of a loop closure's frame in its body — farther from its body than
  ``ANCHOR_REACH`` = 1e6 times the model's extent (the largest distance of a body origin from the
  world's at the reference configuration, at least 1 m) is refused: float64 keeps 16 digits, so
  the rows of a point 1e6 extents out keep only 10 digits of the model's own motion, and the
  projection's tolerance (1e-10) can no longer be met; 1e300 overflows C(q) itself. (NaN and inf
  are refused by Transform.)
- A coupling coefficient (of a joint, or of the polynomial, its offset a0 included) over
  ``COEFFICIENT_LIMIT`` = 1e6 in magnitude is refused, for the anchors' reason: the coupling's
  row then carries entries a million times the others' (a gear ratio of a million), and beyond
  ~1e150 the Delassus matrix G M⁻¹ Gᵀ overflows and the rank test drops the coupling, which would
  vanish from the dynamics without a word.
- Conflicts. At the reference configuration q_ref (the one the constraint is defined at) the new
  rows G_new are compared with the rows of the constraints linked to them through shared joints,
  each row scaled to unit length (C_i/|G_i| is then a distance in joint coordinates). A
  combination w of rows with wᵀG = 0 that involves the new rows (they are dependent on the others,
  or identically zero) must have wᵀC = 0 for G δ = −C to have a solution. When it has not, the
  linearisation may still mislead (a singular q_ref; nonlinear rows that are dependent only
  to first order, consistent but off by O(|C|²) away from where they hold), so Gauss–Newton
  decides (model/constraint_projection.py): from q_ref and from two configurations near it, it
  either reaches C = 0 — the constraint is kept — or stalls everywhere: the constraints conflict
  (q₁ = q₀ and q₁ = q₀ + 1, two welds of one body to different poses) and the new one is refused.
- A constraint whose rows all depend on the others' and agree with them, at q_ref and at a
  configuration near it (a duplicate: a structural redundancy, not one of the configurations
  where the constraints hold), is kept, with a ``RedundantConstraintWarning``: the solvers drop
  dependent rows (minimum-norm multipliers, treedyn.constraints), and MuJoCo loads files that
  repeat an equality. Rows dependent only where the constraints hold (a coupling that keeps a
  parallelogram four-bar on its branch), or some rows of a constraint dependent on others (a planar
  loop closed by a spatial joint), are common and pass silently.

The cost is one C(q), G at q_ref per added constraint, and a singular value decomposition of the
rows linked to the new ones (the projections run only for suspected conflicts).
"""

from __future__ import annotations

import warnings
from typing import NamedTuple

import numpy as np

from .. import _core
from .constraint_projection import gauss_newton
from .joints import _LOOP_LAYOUTS

__all__ = [
    "ANCHOR_REACH",
    "COEFFICIENT_LIMIT",
    "check_coefficients",
    "RedundantConstraintWarning",
    "model_extent",
    "check_anchor",
    "check_not_self",
    "check_added",
    "describe",
]

#: how far an anchor may lie from its body, in units of the model's extent (see the module)
ANCHOR_REACH = 1e6
#: the largest coupling coefficient (a gear ratio of a million; see the module)
COEFFICIENT_LIMIT = 1e6
_DEPENDENT = 1e-9  # a singular value of unit-length rows below this: a dependent direction
_SCREEN = 1e-9  # |wᵀC| of a dependent direction above this (joint units): the rows may conflict
_HOLDS = 1e-9  # Gauss–Newton's target in the conflict test, times the model's extent (m, rad)
_STEPS = 500  # its steps at most (it stops sooner when it stalls; 130 were needed, see constraint_projection)
_NEAR = 0.3  # the other starting points: q_ref ⊕ δ, δ ~ N(0, 0.3²) per coordinate (seeded)

_KIND_NAMES = {layout["kind"]: name for name, layout in _LOOP_LAYOUTS.items()}


class UnenforcedConstraintWarning(UserWarning):
    """A solver made for a model with constraints computes the tree's dynamics without them
    (td.make_solver; td.constrained_forward_dynamics keeps them)."""


class RedundantConstraintWarning(UserWarning):
    """An added constraint that adds nothing at the reference configuration: its rows depend on
    those of the constraints already there and agree with them (a duplicate), or are zero and hold."""


def model_extent(model, q) -> float:
    """The model's size for the anchor and tolerance rules: the largest distance of a body origin
    from the world's at q, at least 1 m."""
    _, p = model.body_poses(q)
    return max(1.0, float(np.linalg.norm(p, axis=1).max(initial=0.0)))


def check_anchor(placement, what: str, extent: float) -> None:
    """ValueError when ``placement``'s translation lies over ANCHOR_REACH extents from its body."""
    t = np.abs(placement.translation)
    big = float(t.max())
    d = big * float(np.linalg.norm(t / big)) if big > 0 else 0.0  # |t| without overflowing at 1e300
    if d > ANCHOR_REACH * extent:
        raise ValueError(
            f"{what} is {d:.3g} from its body, over {ANCHOR_REACH:g} times the model's extent ({extent:.3g} m): "
            "its rows would keep too few digits of the model's motion to be met (a unit or typing error?)"
        )


def check_coefficients(follower, leader, polycoef) -> None:
    """ValueError for a coupling coefficient (of a joint, or of its polynomial) over
    COEFFICIENT_LIMIT in magnitude (see the module)."""
    named = [("the follower's", c) for _, c in follower] + [("the leader's", c) for _, c in leader]
    named += [(f"polycoef a{k}", a) for k, a in enumerate(polycoef)]
    for what, c in named:
        if abs(c) > COEFFICIENT_LIMIT:
            raise ValueError(
                f"coupling: {what} coefficient {c:.3g} is over {COEFFICIENT_LIMIT:g} in magnitude (a gear ratio or an "
                "offset of a million): its row would keep too few digits of the others', and past ~1e150 the Delassus "
                "matrix overflows and the coupling drops out of the dynamics without a word"
            )


def _combination(terms) -> dict:
    out: dict = {}
    for i, c in terms:
        out[i] = out.get(i, 0.0) + c
    return out


def check_not_self(model, follower, leader) -> None:
    """ValueError when a coupling's leader is its follower (the same joint, or the same combination)."""
    f = _combination(follower)
    if leader and f == _combination(leader):
        what = f"joint {_terms(model, follower)}" if len(f) == 1 else f"combination {_terms(model, follower)}"
        raise ValueError(
            f"coupling: {what} is coupled to itself (follower and leader are the same): with an offset it cannot "
            "hold (q = q + a0), without one it says nothing; MuJoCo and Pinocchio refuse it too"
        )


def _terms(model, terms) -> str:
    names = model._joint_names
    if len(terms) == 1 and terms[0][1] == 1.0:
        return repr(names[terms[0][0]])
    return " + ".join(f"{c:g}·{names[i]!r}" for i, c in terms)


def describe(model, kind: str, index: int) -> str:
    """How a constraint is named in errors: 'loop closure 2 (weld of 'a' to 'world')', 'coupling 0 (...)'."""
    if kind == "loop":
        c = model._loops[index]
        names = model._cpp.name
        return f"loop closure {index} ({_KIND_NAMES[c.kind]} of {names[c.body_a]!r} to {names[c.body_b]!r})"
    c = model._couplings[index]
    lead = _terms(model, c.leader) if c.leader else "a constant"
    poly = ", ".join(f"{a:g}" for a in c.polycoef)
    return f"coupling {index} ({_terms(model, c.follower)} following {lead}, polycoef ({poly}))"


def _coupling_block(c, q, q_index, v_index):
    """(columns, G (1, k), C (1,)) of a coupling's row at q, the C++ row's
    (redmax/constraints.hpp): C = L_f(q) − y0 − p(L_l(q) − x0), computed here for its few joints
    (no C++ system, whose copy of the tree costs O(bodies), per added coupling)."""
    a = c.polycoef
    x = sum(w * q[q_index[i]] for i, w in c.leader) - c.x0
    p = sum(a[k] * x**k for k in range(len(a)))
    dp = sum(k * a[k] * x ** (k - 1) for k in range(1, len(a)))
    g: dict = {}
    for i, w in c.follower:
        g[v_index[i]] = g.get(v_index[i], 0.0) + w
    for i, w in c.leader:
        g[v_index[i]] = g.get(v_index[i], 0.0) - dp * w
    value = sum(w * q[q_index[i]] for i, w in c.follower) - c.y0 - p
    return np.array(list(g), dtype=int), np.array([list(g.values())], dtype=float), np.array([value])


def _supports(model, q) -> tuple[list, dict]:
    """([(key, columns)] of the active constraints, {key: (G block, C block)} of the loop
    closures at q): the loop closures' columns from their rows in C++ (a system of the loops
    alone), the couplings' from their joints (their rows are made only where needed)."""
    out, loop_rows = [], {}
    loops = [(i, c) for i, c in enumerate(model._loops) if c.active]
    if loops:
        keep = {("loop", i) for i, _ in loops}
        G, C, _ = model._loop_system(keep).constraint_terms(q, np.zeros(model.nv))
        G, C, start = np.asarray(G), np.asarray(C), 0
        for i, c in loops:
            rows = slice(start, start + c.n_rows)
            cols = np.flatnonzero((G[rows] != 0).any(axis=0))
            out.append((("loop", i), cols))
            loop_rows[("loop", i)] = (G[rows][:, cols], C[rows])
            start += c.n_rows
    v_index = model._cpp.v_index
    for i, c in enumerate(model._couplings):
        if c.active:
            out.append((("coupling", i), sorted({v_index[j] for j, _ in c.follower + c.leader})))
    return out, loop_rows


def _linked_rows(model, q, key) -> tuple[np.ndarray, np.ndarray, list, np.ndarray]:
    """(G, C, owner of each row (its key), which rows are the new constraint's) at q, over the constraints
    linked to the new one ``key`` through shared joints (the only rows a combination with its rows
    can cancel against) and over their joints only: the rows made grow with them, not with the model."""
    supports, loop_rows = _supports(model, q)
    by_column: dict = {}
    for b, (_, cols) in enumerate(supports):
        for col in cols:
            by_column.setdefault(int(col), []).append(b)
    first = next(b for b, (k, _) in enumerate(supports) if k == key)
    linked, frontier = {first}, [first]
    while frontier:
        for col in supports[frontier.pop()][1]:
            for other in by_column[int(col)]:
                if other not in linked:
                    linked.add(other)
                    frontier.append(other)
    q_index, v_index = model._cpp.q_index, model._cpp.v_index
    chosen = []
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is refused by check_added
        for b in sorted(linked):
            k, cols = supports[b]
            if k in loop_rows:
                chosen.append((k, cols, *loop_rows[k]))
            else:
                chosen.append((k, *_coupling_block(model._couplings[k[1]], q, q_index, v_index)))
    columns = np.unique(np.concatenate([np.asarray(cols, dtype=int) for _, cols, _, _ in chosen]))
    G = np.zeros((sum(len(c) for _, _, _, c in chosen), columns.size))
    C, owners, row = np.concatenate([c for _, _, _, c in chosen]), [], 0
    for owner, cols, g, c in chosen:
        G[row : row + len(c), np.searchsorted(columns, cols)] = g
        owners += [owner] * len(c)
        row += len(c)
    return G, C, owners, np.array([o == key for o in owners])


class _Dependence(NamedTuple):
    """What the screen found: the old rows that take part, |wᵀC| at worst, and whether every new
    direction is dependent (the constraint adds nothing)."""

    partners: list
    mismatch: float
    redundant: bool


def _dependence(G: np.ndarray, C: np.ndarray, new: np.ndarray) -> _Dependence | None:
    """The screen (see the module) on the linked rows G, C (new: the new constraint's): None when
    the new rows add directions of their own only."""
    big = np.abs(G).max(axis=1, initial=0.0)
    norms = big * np.linalg.norm(G / np.where(big > 0, big, 1.0)[:, None], axis=1)  # (no overflow at 1e300)
    zero = norms <= _DEPENDENT * max(float(norms.max(initial=0.0)), 1.0)
    scaled_G = G[~zero] / norms[~zero, None]
    scaled_C = C[~zero] / norms[~zero]
    old, mine = ~new[~zero], new[~zero]
    A, B = scaled_G[old], scaled_G[mine]
    mismatches = list(np.abs(C[zero & new]))  # a zero row holds or fails on its own
    r, V, U, S = 0, np.zeros((0, G.shape[1])), np.zeros((A.shape[0], 0)), np.zeros(0)
    if A.size:
        U, S, Vt = np.linalg.svd(A, full_matrices=False)
        r = int((S > _DEPENDENT * S[0]).sum())
        U, S, V = U[:, :r], S[:r], Vt[:r]
    weights = np.zeros(A.shape[0])
    dependent = 0
    if B.size:
        # U complete (the left null space too) where it costs little: more rows than joints
        Ub, Sb, _ = np.linalg.svd(B - (B @ V.T) @ V, full_matrices=B.shape[0] > B.shape[1])
        sb = np.zeros(B.shape[0])
        sb[: Sb.size] = Sb
        for u in Ub[:, sb <= _DEPENDENT].T:  # uᵀB = xᵀA: these new directions are the old ones'
            x = U @ ((V @ (B.T @ u)) / S) if r else np.zeros(A.shape[0])
            mismatches.append(abs(float(u @ scaled_C[mine] - x @ scaled_C[old])))
            weights = np.maximum(weights, np.abs(x))
            dependent += 1
    if not mismatches:
        return None
    live_new = int(mine.sum())
    partner_rows = np.flatnonzero(~new & ~zero)[weights > 1e-6 * max(weights.max(initial=0.0), 1e-300)]
    redundant = dependent == live_new
    return _Dependence(partner_rows, max(mismatches), redundant)


def _holds_somewhere(model, system, q: np.ndarray) -> tuple[bool, float]:
    """(whether Gauss–Newton reaches C = 0 from q_ref or near it, the least max |C| it reached)."""
    zero = np.zeros(model.nv)
    tol = _HOLDS * model_extent(model, q)

    def terms(x):
        G, C, _ = system.constraint_terms(x, zero)
        return G, C

    starts = [q, *_near(model, q, 2)]
    best = np.inf
    for start in starts:
        out = gauss_newton(model.core, terms, start, tol, _STEPS)
        if out.residual <= tol:
            return True, out.residual
        best = min(best, out.residual) if np.isfinite(out.residual) else best
    return False, best


def _near(model, q: np.ndarray, k: int) -> list:
    """k configurations near q, the same ones on every call: q ⊕ δ, δ ~ N(0, _NEAR²) per coordinate."""
    rng = np.random.default_rng(0)
    return [_core.integrate(model.core, q, _NEAR * rng.standard_normal(model.nv), 1.0) for _ in range(k)]


def _redundant_near(model, q: np.ndarray, key) -> bool:
    """Whether the new rows add nothing near q as well: a duplicate does so everywhere; rows that
    are dependent only where the constraints hold (a coupling that picks a parallelogram's branch
    of a four-bar) are not one."""
    (near,) = _near(model, q, 1)
    G, C, _, new = _linked_rows(model, near, key)
    found = _dependence(G, C, new)
    return found is not None and found.redundant


def check_added(model, kind: str, index: int, q: np.ndarray) -> None:
    """The conflict test (see the module) of the model's constraint ``kind`` ("loop" or
    "coupling") ``index``, just appended, at the configuration q it is defined at: ValueError
    naming it and the constraints it conflicts with; a RedundantConstraintWarning for a duplicate."""
    key = (kind, index)
    if not (model._loops if kind == "loop" else model._couplings)[index].active:  # kept, not enforced
        return
    G, C, owners, new = _linked_rows(model, q, key)
    if not (np.all(np.isfinite(G)) and np.all(np.isfinite(C))):
        raise ValueError(f"{describe(model, kind, index)} overflows to inf/NaN at the reference configuration")
    found = _dependence(G, C, new)
    partners = [] if found is None else sorted({owners[row] for row in found.partners} - {key})
    conflict = found is not None and found.mismatch > _SCREEN
    if conflict or np.abs(C).max() > _HOLDS:  # (_HOLDS: the least tolerance, for an extent of 1 m)
        holds, least = _holds_somewhere(model, model._loop_system(set(owners)), q)
        if not holds:
            raise ValueError(_refusal(model, key, partners if conflict else [], found, least))
    if found is not None and found.redundant and not conflict and _redundant_near(model, q, key):
        others = ", ".join(describe(model, k, i) for k, i in partners) or "the tree's joints"
        warnings.warn(
            f"{describe(model, kind, index)} adds nothing to {others} at the reference configuration: its rows "
            "depend on theirs and agree with them (a duplicate?); it is kept, and its rows are dropped as redundant",
            RedundantConstraintWarning,
            stacklevel=4,
        )


def _refusal(model, key, partners, found, least) -> str:
    """The message of a refused constraint: with whom it conflicts, or that it cannot be met."""
    what = describe(model, *key)
    if partners:
        return (
            f"{what} conflicts with {', '.join(describe(model, k, i) for k, i in partners)}: at the reference "
            f"configuration their rows are dependent but ask for different values (by {found.mismatch:.3g} in joint "
            f"coordinates), and no configuration near it meets them all (max |C| stays {least:.3g}); it is not added"
        )
    return (
        f"{what} cannot be met near the reference configuration: Gauss-Newton from it (and from configurations near "
        f"it) stalls with max |C| = {least:.3g} (a target out of the tree's reach?); it is not added"
    )
