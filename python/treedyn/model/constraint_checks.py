"""The checks a constraint passes when it is added (Model.add_loop_closure, Model.add_coupling;
issue 31, item 4): a constraint that cannot hold with the others is refused where it is made,
with a ValueError naming it and the constraints it conflicts with, not found by a simulation that
stops after its first step.

- A coupling of a joint (or of a fixed combination of joints) to itself is refused, with an
  offset (q = q + a0: it cannot hold) and without (q = q: it says nothing). MuJoCo refuses both
  ("element is repeated in equality constraint"), Pinocchio a URDF joint that mimics itself.
- An anchor — the translation of a loop closure's frame in its body — farther from its body than
  ``ANCHOR_REACH`` = 1e6 times the model's extent (the largest distance of a body origin from the
  world's at the reference configuration, at least 1 m) is refused: float64 keeps 16 digits, so
  the rows of a point 1e6 extents out keep only 10 digits of the model's own motion, and the
  projection's tolerance (1e-10) can no longer be met; 1e300 overflows C(q) itself. (NaN and inf
  are refused by Transform.)
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

import numpy as np

from .. import _core
from .constraint_projection import gauss_newton
from .joints import _LOOP_LAYOUTS

__all__ = [
    "ANCHOR_REACH",
    "RedundantConstraintWarning",
    "model_extent",
    "check_anchor",
    "check_not_self",
    "check_added",
    "describe",
]

#: how far an anchor may lie from its body, in units of the model's extent (see the module)
ANCHOR_REACH = 1e6
_DEPENDENT = 1e-9  # a singular value of unit-length rows below this: a dependent direction
_SCREEN = 1e-9  # |wᵀC| of a dependent direction above this (joint units): the rows may conflict
_HOLDS = 1e-9  # Gauss–Newton's target in the conflict test, times the model's extent (m, rad)
_STEPS = 50  # its steps at most (it stops sooner when it stalls)
_NEAR = 0.3  # the other starting points: q_ref ⊕ δ, δ ~ N(0, 0.3²) per coordinate (seeded)

_KIND_NAMES = {layout["kind"]: name for name, layout in _LOOP_LAYOUTS.items()}


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


def _layout(model) -> list:
    """[(kind, index, first row, rows)] of the active constraints, in the order of C's rows."""
    out, start = [], 0
    for kind, items in (("loop", model._loops), ("coupling", model._couplings)):
        for i, c in enumerate(items):
            if c.active:
                out.append((kind, i, start, c.n_rows))
                start += c.n_rows
    return out


def _linked(G: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(rows, columns) of G reachable from ``rows`` through shared joints: the only rows a
    combination with the new ones can cancel against."""
    touched = G != 0
    cols = touched[rows].any(axis=0)
    while True:
        more = rows | touched[:, cols].any(axis=1)
        if np.array_equal(more, rows):
            return rows, cols
        rows, cols = more, touched[more].any(axis=0)


class _Dependence:
    """What the screen found: the old rows that take part, |wᵀC| at worst, and whether every new
    direction is dependent (the constraint adds nothing)."""

    def __init__(self, partners, mismatch: float, redundant: bool):
        self.partners, self.mismatch, self.redundant = partners, mismatch, redundant


def _dependence(G: np.ndarray, C: np.ndarray, new: np.ndarray) -> _Dependence | None:
    """The screen (see the module): None when the new rows add directions of their own only."""
    rows, cols = _linked(G, new.copy())
    G, C, new = G[rows][:, cols], C[rows], new[rows]
    norms = np.linalg.norm(G, axis=1)
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
        Ub, Sb, _ = np.linalg.svd(B - (B @ V.T) @ V, full_matrices=True)
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
    partner_rows = np.flatnonzero(rows)[~new][~zero[~new]][weights > 1e-6 * max(weights.max(initial=0.0), 1e-300)]
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


def _redundant_near(model, system, q: np.ndarray, new: np.ndarray) -> bool:
    """Whether the new rows add nothing near q as well: a duplicate does so everywhere; rows that
    are dependent only where the constraints hold (a coupling that picks a parallelogram's branch
    of a four-bar) are not one."""
    (near,) = _near(model, q, 1)
    G, C, _ = system.constraint_terms(near, np.zeros(model.nv))
    found = _dependence(np.asarray(G), np.asarray(C), new)
    return found is not None and found.redundant


def check_added(model, kind: str, index: int, q: np.ndarray) -> None:
    """The conflict test (see the module) of the model's constraint ``kind`` ("loop" or
    "coupling") ``index``, just appended, at the configuration q it is defined at: ValueError
    naming it and the constraints it conflicts with; a RedundantConstraintWarning for a duplicate."""
    new_c = (model._loops if kind == "loop" else model._couplings)[index]
    if not new_c.active:  # kept, not enforced: nothing to hold
        return
    layout = _layout(model)
    system = model._loop_system()
    G, C, _ = system.constraint_terms(q, np.zeros(model.nv))
    new = np.zeros(G.shape[0], dtype=bool)
    for k, i, start, n in layout:
        if (k, i) == (kind, index):
            new[start : start + n] = True
    found = _dependence(np.asarray(G), np.asarray(C), new)
    if found is None:
        return
    owner = {row: (k, i) for k, i, start, n in layout for row in range(start, start + n)}
    partners = sorted({owner[row] for row in found.partners} - {(kind, index)})
    if found.mismatch <= _SCREEN:
        if found.redundant and _redundant_near(model, system, q, new):
            others = ", ".join(describe(model, k, i) for k, i in partners) or "the tree's joints"
            warnings.warn(
                f"{describe(model, kind, index)} adds nothing to {others} at the reference configuration: its rows "
                "depend on theirs and agree with them (a duplicate?); it is kept, and its rows are dropped as redundant",
                RedundantConstraintWarning,
                stacklevel=4,
            )
        return
    holds, least = _holds_somewhere(model, system, q)
    if holds:
        return
    if partners:
        who = "conflicts with " + ", ".join(describe(model, k, i) for k, i in partners)
    else:
        who = "cannot hold with the tree's joints"
    raise ValueError(
        f"{describe(model, kind, index)} {who}: at the reference configuration their rows are dependent but ask for "
        f"different values (by {found.mismatch:.3g} in joint coordinates), and no configuration near it meets them all "
        f"(max |C| stays {least:.3g}); the constraint is not added"
    )
