"""The hanging binary tree of baxter2019 §4.3 (published ``loadSimpleTree``, and ``loadTree`` for
the square springs)."""

from __future__ import annotations

import math

import numpy as np

from ..model import Fixed, Revolute
from .redmax import _Builder, _count, _rot, _scene
from .scene import Scene

__all__ = ["tree"]


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
