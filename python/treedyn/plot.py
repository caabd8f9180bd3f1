"""A picture of a mechanism in one configuration (matplotlib, optional)."""
from __future__ import annotations

import numpy as np

__all__ = ["draw"]


def draw(model, q, ax=None, *, axes: tuple[int, int] | None = None, title: str | None = None):
    """Draw the bodies of ``model`` at ``q`` as segments (a body's frame origin to its children's,
    or to twice its centre of mass for a leaf), springs as thin lines and loop closures as rings,
    projected on two world axes (default: the two along which the mechanism spreads most).
    Returns the matplotlib Axes."""
    import matplotlib.pyplot as plt

    R, p = model.body_poses(q)
    parents = model.parents
    n = len(parents)
    com = np.zeros((n, 3))
    for i in range(1, n):
        I6 = model._cpp.spatial_inertia(i)
        mass = I6[3, 3]
        c = np.array([I6[2, 4], I6[0, 5], I6[1, 3]]) / mass if mass > 0 else np.zeros(3)
        com[i] = R[i] @ c + p[i]
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
    for s, e in segments:
        ax.plot([s[a], e[a]], [s[b], e[b]], "-", color="tab:blue", lw=2, solid_capstyle="round")
    ax.plot(p[1:, a], p[1:, b], ".", color="k", ms=3)
    for sp in model.springs:
        xa = R[sp.body_a] @ sp.point_a + p[sp.body_a]
        xb = R[sp.body_b] @ sp.point_b + p[sp.body_b]
        ax.plot([xa[a], xb[a]], [xa[b], xb[b]], "-", color="tab:orange", lw=0.7)
    for lc in model.loop_closures:
        x = R[lc.body_a] @ lc.placement_a.translation + p[lc.body_a]
        ax.plot([x[a]], [x[b]], "o", mfc="none", color="tab:red", ms=7)
    names = "xyz"
    ax.set_xlabel(names[a])
    ax.set_ylabel(names[b])
    ax.set_aspect("equal", adjustable="datalim")
    if title:
        ax.set_title(title)
    return ax
