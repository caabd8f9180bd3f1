"""A picture of a mechanism in one configuration (matplotlib, optional)."""

from __future__ import annotations

import numpy as np

__all__ = ["draw"]


def draw(
    model, q, ax=None, *, axes: tuple[int, int] | None = None, title: str | None = None, shapes: dict | None = None
):
    """Draw the bodies of ``model`` at ``q`` as segments (a body's frame origin to its children's,
    or to twice its centre of mass for a leaf), springs as thin lines and loop closures as rings,
    projected on two world axes (default: the two along which the mechanism spreads most).
    shapes: {body name: {"shape": "box"|"cylinder", "size", "centre", "axes"}} in body coordinates
    (a Scene's ``info["shapes"]``): each is drawn as the outline of its projection.
    Returns the matplotlib Axes."""
    import matplotlib.pyplot as plt

    R, p = model.body_poses(q)
    parents = model.parents
    n = len(parents)
    com = np.zeros((n, 3))
    for i in range(1, n):
        com[i] = R[i] @ model.inertias[i].com + p[i]
    segments = []
    has_child = np.zeros(n, dtype=bool)
    for i in range(1, n):
        if parents[i] > 0:
            segments.append((p[parents[i]], p[i]))
            has_child[parents[i]] = True
    for i in range(1, n):
        if not has_child[i]:
            segments.append((p[i], p[i] + 2 * (com[i] - p[i])))
    pts = np.concatenate([p[1:], com[1:]]) if n > 1 else np.zeros((1, 3))
    if axes is None:
        spread = pts.max(axis=0) - pts.min(axis=0)
        axes = tuple(sorted(np.argsort(spread)[-2:]))
    a, b = axes
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 5))
    names = model.body_names
    for i, name in enumerate(names):
        if shapes and name in shapes:
            corners = _corners(shapes[name]) @ R[i].T + p[i]
            hull = _hull(corners[:, [a, b]])
            ax.fill(hull[:, 0], hull[:, 1], facecolor="lightsteelblue", edgecolor="tab:blue", lw=0.6, alpha=0.8)
    for s, e in segments:
        ax.plot([s[a], e[a]], [s[b], e[b]], "-", color="tab:blue", lw=2 if not shapes else 0.5, solid_capstyle="round")
    ax.plot(p[1:, a], p[1:, b], ".", color="k", ms=3)
    for sp in model.springs:
        xa = R[sp.body_a] @ sp.point_a + p[sp.body_a]
        xb = R[sp.body_b] @ sp.point_b + p[sp.body_b]
        ax.plot([xa[a], xb[a]], [xa[b], xb[b]], "-", color="tab:orange", lw=0.7)
    for lc in model.loop_closures:
        x = R[lc.body_a] @ lc.placement_a.translation + p[lc.body_a]
        ax.plot([x[a]], [x[b]], "o", mfc="none", color="tab:red", ms=7)
    ax.set_xlabel("xyz"[a])
    ax.set_ylabel("xyz"[b])
    ax.set_aspect("equal", adjustable="datalim")
    if title:
        ax.set_title(title)
    return ax


def _corners(shape: dict) -> np.ndarray:
    """the 8 corners (body coordinates) of a box, or of the box around a cylinder (radius, height
    along its third axis)"""
    size = np.asarray(shape["size"], dtype=float)
    half = (np.array([size[0], size[0], size[1]]) if shape.get("shape") == "cylinder" else size) / 2
    if shape.get("shape") == "cylinder":
        half[:2] = size[0]
    axes = np.asarray(shape.get("axes", np.eye(3)), dtype=float)
    signs = np.array([[i, j, k] for i in (-1, 1) for j in (-1, 1) for k in (-1, 1)], dtype=float)
    return np.asarray(shape.get("centre", (0, 0, 0)), dtype=float) + (signs * half) @ axes


def _hull(pts: np.ndarray) -> np.ndarray:
    """convex hull of 2-D points (monotone chain), closed"""
    pts = np.unique(np.round(pts, 12), axis=0)
    if len(pts) < 3:
        return np.vstack([pts, pts[:1]])
    pts = pts[np.lexsort((pts[:, 1], pts[:, 0]))]

    def half(points):
        out = []
        for pt in points:
            while len(out) >= 2 and _cross2(out[-1] - out[-2], pt - out[-2]) <= 0:
                out.pop()
            out.append(pt)
        return out

    lower, upper = half(pts), half(pts[::-1])
    h = np.array(lower[:-1] + upper[:-1])
    return np.vstack([h, h[:1]])


def _cross2(u, v) -> float:
    return float(u[0] * v[1] - u[1] * v[0])
