"""Pictures of a mechanism (matplotlib, optional): ``draw`` one configuration in one projection;
``trajectory_figure`` the final state in several views with the centre of mass over time; ``animate``
a trajectory into a GIF (matplotlib.animation with PillowWriter)."""

from __future__ import annotations

import numpy as np

from .. import _checks as C

__all__ = ["draw", "animate", "trajectory_figure", "frame_indices", "tree_segments"]


def draw(
    model,
    q,
    ax=None,
    *,
    axes: tuple[int, int] | None = None,
    title: str | None = None,
    shapes: dict | None = None,
    geoms: bool = True,
    t: float | None = None,
    legend: bool = True,
):
    """Draw the bodies of ``model`` at ``q`` as segments (a body's frame origin to its children's,
    or to twice its centre of mass for a leaf), springs as thin lines and loop closures as rings,
    projected on two world axes (default: the two along which the mechanism spreads most).
    t: the time of q (s): the moving forces acting then (Model.add_moving_force: the car crossing
    a bridge scene's deck) are drawn where they act, as a square with an arrow along the force.
    shapes: {body name: {"shape": "box"|"cylinder", "size", "centre", "axes"}} in body coordinates
    (a Scene's ``info["shapes"]``): each is drawn as the outline of its projection.
    geoms: also draw ``model.geoms`` (spheres, capsules and boxes as their projected outlines, a
    plane as the line where it cuts the view unless the view looks straight at it). The first
    artist of each kind carries a legend label; legend: show them in a legend right of the Axes
    (when draw makes the figure, its layout leaves room for it). Axis labels are in metres. Returns
    the matplotlib Axes."""
    import matplotlib.pyplot as plt

    R, p = model.body_poses(q)
    segments, com = tree_segments(model, R, p)
    pts = np.concatenate([p[1:], com[1:]]) if len(p) > 1 else np.zeros((1, 3))
    if axes is None:
        spread = pts.max(axis=0) - pts.min(axis=0)
        axes = tuple(sorted(np.argsort(spread)[-2:]))
    a, b = axes
    own = ax is None
    if own:
        _, ax = plt.subplots(figsize=(8, 5))
    names = model.body_names
    filled = 0
    for i, name in enumerate(names):
        if shapes and name in shapes:
            corners = _corners(shapes[name]) @ R[i].T + p[i]
            hull = _hull(corners[:, [a, b]])
            ax.fill(
                hull[:, 0],
                hull[:, 1],
                facecolor="lightsteelblue",
                edgecolor="tab:blue",
                lw=0.6,
                alpha=0.8,
                label=None if filled else "body shapes",
            )
            filled += 1
    if geoms:
        _draw_geoms(ax, model, R, p, a, b)
    for k, (s, e) in enumerate(segments):
        ax.plot(
            [s[a], e[a]],
            [s[b], e[b]],
            "-",
            color="tab:blue",
            lw=2 if not shapes else 0.5,
            solid_capstyle="round",
            label=None if k else "tree (frame to child frame)" if shapes else "bodies",
        )
    ax.plot(p[1:, a], p[1:, b], ".", color="k", ms=3, label="body origins")
    for k, sp in enumerate(model.springs):
        xa = R[sp.body_a] @ sp.point_a + p[sp.body_a]
        xb = R[sp.body_b] @ sp.point_b + p[sp.body_b]
        ax.plot([xa[a], xb[a]], [xa[b], xb[b]], "-", color="tab:orange", lw=0.7, label="springs" if k == 0 else None)
    for k, lc in enumerate(model.loop_closures):
        x = R[lc.body_a] @ lc.placement_a.translation + p[lc.body_a]
        ax.plot([x[a]], [x[b]], "o", mfc="none", color="tab:red", ms=7, label="loop closures" if k == 0 else None)
    if t is not None:
        _draw_moving_forces(ax, model, t, R, p, a, b, pts)
    ax.set_xlabel(f"{'xyz'[a]} [m]")
    ax.set_ylabel(f"{'xyz'[b]} [m]")
    ax.set_aspect("equal", adjustable="datalim")
    if title:
        ax.set_title(title)
    if legend:
        ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=8, frameon=False)
        if own:
            ax.figure.tight_layout()
    return ax


def moving_force_points(model, t: float, R=None, p=None, q=None) -> list[tuple[np.ndarray, np.ndarray]]:
    """[(world point, world force)] of the moving forces acting at time t (Model.add_moving_force:
    the point moves at constant speed along its path of body segments over [0, duration], as the
    RedMax step applies it; none once it has left the path). R, p: body_poses at q."""
    if R is None:
        R, p = model.body_poses(q)
    out = []
    for f, segs, T in getattr(model, "_moving_forces", ()):
        if not 0.0 <= t <= T:
            continue
        lengths = [float(np.linalg.norm(e - s)) for _, s, e in segs]
        left = sum(lengths) * t / T
        for k, ((body, s, e), length) in enumerate(zip(segs, lengths)):
            if left <= length or k == len(segs) - 1:
                x = s + (e - s) * (min(left / length, 1.0) if length > 0 else 0.0)
                out.append((R[body] @ x + p[body], np.asarray(f, dtype=float)))
                break
            left -= length
    return out


def _newtons(F: float) -> str:
    """4800 -> "4.8 kN", 2.4e6 -> "2.4 MN"."""
    for scale, unit in ((1e6, "MN"), (1e3, "kN")):
        if F >= scale:
            return f"{F / scale:.3g} {unit}"
    return f"{F:.3g} N"


def _draw_moving_forces(ax, model, t, R, p, a, b, pts):
    """The moving forces at time t (the car) as a square where each acts and an arrow along it,
    one tenth of the drawing's size long."""
    from matplotlib.patches import FancyArrowPatch

    size = 0.1 * max(float(np.max(pts.max(axis=0) - pts.min(axis=0))), 1e-3)
    for k, (x, f) in enumerate(moving_force_points(model, t, R, p)):
        d = np.array([f[a], f[b]])
        n = float(np.linalg.norm(d))
        label = f"car ({_newtons(float(np.linalg.norm(f)))} moving load)" if k == 0 else None
        ax.plot([x[a]], [x[b]], "s", color="tab:purple", mec="k", ms=8, zorder=5, label=label)
        if n > 0:
            tail = np.array([x[a], x[b]]) - size * d / n
            ax.add_patch(
                FancyArrowPatch(
                    tail, (x[a], x[b]), arrowstyle="-|>", mutation_scale=12, shrinkB=5, color="tab:purple", lw=1.5
                )
            )


def tree_segments(model, R, p) -> tuple[np.ndarray, np.ndarray]:
    """How the tree is drawn at body rotations R (n, 3, 3) and origins p (n, 3): segments (k, 2, 3)
    from each body's origin to its children's, and from a leaf's origin to twice its centre of mass;
    and every body's centre of mass (n, 3) in world coordinates."""
    parents = model.parents
    n = len(parents)
    com = np.zeros((n, 3))
    for i in range(1, n):
        com[i] = R[i] @ _com(model.inertias[i]) + p[i]
    segments = []
    has_child = np.zeros(n, dtype=bool)
    for i in range(1, n):
        if parents[i] > 0:
            segments.append((p[parents[i]], p[i]))
            has_child[parents[i]] = True
    for i in range(1, n):
        if not has_child[i]:
            segments.append((p[i], p[i] + 2 * (com[i] - p[i])))
    return (np.array(segments) if segments else np.zeros((0, 2, 3))), com


def _com(inertia) -> np.ndarray:
    """Where a body's centre of mass is drawn: its origin when it has none (mass 0 with a first
    moment: a simplified model's body, td.simplify)."""
    return inertia.com if inertia.has_com else np.zeros(3)


def frame_indices(n: int, frames: int) -> np.ndarray:
    """Every k-th of n recorded states, k the smallest that keeps at most ``frames`` of them, and
    always the last one."""
    frames = C.integer(frames, "frames", minimum=2)
    if n < 1:
        raise ValueError("no states to draw")
    k = max(1, -(-(n - 1) // (frames - 1)))
    idx = np.arange(0, n, k)
    return idx if idx[-1] == n - 1 else np.append(idx, n - 1)


def spread_axes(model, qs, shapes: dict | None = None) -> tuple[int, int]:
    """The two world axes along which the mechanism spreads most over the configurations ``qs``
    (the projection ``draw`` picks for one configuration, fixed for a whole trajectory)."""
    lo, hi = _bounds(model, qs, shapes)
    return tuple(sorted(np.argsort(hi - lo)[-2:]))


def trajectory_figure(
    model,
    t,
    q,
    *,
    views=((0, 2), (0, 1)),
    shapes: dict | None = None,
    title: str = "",
    com: bool = True,
    max_aspect: float | None = None,
):
    """The final state of a trajectory (t (T,), q (T, nq)) in each view (pairs of world axes,
    default the side x–z and the top x–y), each view's horizontal extent limited to ``max_aspect``
    times its height around the centre of mass when given, and with ``com`` the centre of mass x
    over time below. Returns the matplotlib Figure."""
    import matplotlib.pyplot as plt

    from ..algorithms.kinematics import center_of_mass

    t, q = np.asarray(t, dtype=float), np.atleast_2d(np.asarray(q, dtype=float))
    c = np.atleast_2d(center_of_mass(model, q)) if com else None
    limits, windowed = _view_limits(model, q[-1:], views, shapes, max_aspect, None if c is None else c[-1:])
    heights = [_panel_height(lim) for lim in limits] + ([2.2] if com else [])
    fig, axs = plt.subplots(
        len(heights), 1, figsize=(10, sum(heights) + 1.2), gridspec_kw={"height_ratios": heights}, squeeze=False
    )
    axs = axs[:, 0]
    _draw_views(model, q[-1], axs, views, limits, shapes, None if c is None else c[-1], None, t[-1])
    _view_titles(axs, views, windowed, model)
    legend = _legend(fig, axs[0])
    if com:
        ax = axs[-1]
        dx = c[:, 0] - c[0, 0]
        ax.plot(t, dx, "-", color="tab:red", label="centre of mass x")
        if np.ptp(dx) < 1e-3:  # (a body at rest moves by rounding: drawn on a millimetre, not at full scale)
            ax.set_ylim(0.5 * (dx.max() + dx.min()) - 5e-4, 0.5 * (dx.max() + dx.min()) + 5e-4)
        ax.set_xlabel("t [s]")
        ax.set_ylabel("centre of mass x − x₀ [m]")
        ax.set_title(
            f"centre of mass: x moved {c[-1, 0] - c[0, 0]:+.4g} m in {t[-1] - t[0]:.4g} s (x₀ = {c[0, 0]:.4g} m)",
            fontsize=9,
        )
        ax.grid(alpha=0.3)
    fig.suptitle(f"{title} at t = {t[-1]:.4g} s".strip())
    _layout(fig, legend)
    return fig


def animate(
    model,
    t,
    q,
    path,
    *,
    views=None,
    shapes: dict | None = None,
    title: str = "",
    frames: int = 100,
    fps: float = 20.0,
    com: bool = False,
    max_aspect: float | None = None,
    dpi: int = 80,
) -> int:
    """Write an animation of the trajectory (t (T,), q (T, nq)) to ``path`` (a GIF, by
    matplotlib.animation's PillowWriter): every k-th state, at most ``frames`` frames, each the
    ``draw`` of the state in every view (pairs of world axes; default the two along which the
    trajectory spreads most), fixed axes over the whole run, the time in the title. com: mark the
    centre of mass and its track. max_aspect: as in ``trajectory_figure``. Returns the frame count."""
    import matplotlib.pyplot as plt
    from matplotlib.animation import PillowWriter

    from ..algorithms.kinematics import center_of_mass

    t, q = np.asarray(t, dtype=float), np.atleast_2d(np.asarray(q, dtype=float))
    idx = frame_indices(len(q), frames)
    if views is None:
        views = (spread_axes(model, q[idx], shapes),)
    c = np.atleast_2d(center_of_mass(model, q[idx])) if com else None
    limits, windowed = _view_limits(model, q[idx], views, shapes, max_aspect, c)
    heights = [_panel_height(lim) for lim in limits]
    fig_height = sum(heights) + 1.2
    fig, axs = plt.subplots(
        len(views), 1, figsize=(10, fig_height), gridspec_kw={"height_ratios": heights}, squeeze=False
    )
    axs = axs[:, 0]
    fig.suptitle(title)
    writer = PillowWriter(fps=fps)
    try:
        with writer.saving(fig, str(path), dpi):
            for j, k in enumerate(idx):
                for ax in axs:  # the artists of the last frame go, the axes (ticks, limits) stay
                    for artist in [*ax.lines, *ax.patches, *ax.collections]:
                        artist.remove()
                track = c[: j + 1] if com else None
                _draw_views(model, q[k], axs, views, limits, shapes, None if c is None else c[j], track, t[k])
                fig.suptitle(f"{title}   t = {t[k]:.3f} s".strip())
                if j == 0:  # one legend and layout for the whole animation
                    _view_titles(axs, views, windowed, model)
                    _layout(fig, _legend(fig, axs[0]))
                writer.grab_frame()
    finally:
        plt.close(fig)
    return len(idx)


def _draw_geoms(ax, model, R, p, a, b):
    """model.geoms projected on the world axes a, b (see ``draw``)."""
    from matplotlib.patches import Circle

    from ..model.shapes import Box, Capsule, Plane, Sphere
    from ..sim.collision import geom_pose

    labelled = set()

    def label(kind):
        if kind in labelled:
            return None
        labelled.add(kind)
        return kind

    for g in getattr(model, "geoms", ()):
        Rg, pg = geom_pose(g, R, p)
        s = g.shape
        if isinstance(s, Plane):
            n = Rg[:, 2]
            if abs(n[3 - a - b]) > 1 - 1e-9:  # seen face-on: it fills the view
                continue
            ax.axline(
                (pg[a], pg[b]), (pg[a] - n[b], pg[b] + n[a]), color="saddlebrown", lw=1.5, label=label("plane (ground)")
            )
        elif isinstance(s, Sphere):
            ax.add_patch(
                Circle(
                    (pg[a], pg[b]), s.radius, fc="tab:green", ec="darkgreen", lw=0.6, alpha=0.8, label=label("spheres")
                )
            )
        elif isinstance(s, (Capsule, Box)):
            if isinstance(s, Capsule):
                ends = np.array([pg - s.half_length * Rg[:, 2], pg + s.half_length * Rg[:, 2]])[:, [a, b]]
                ang = np.linspace(0, 2 * np.pi, 24, endpoint=False)
                ring = s.radius * np.stack([np.cos(ang), np.sin(ang)], axis=1)
                pts = (ends[:, None, :] + ring[None]).reshape(-1, 2)
                kind = "capsules"
            else:
                pts = _corners({"shape": "box", "size": 2 * np.asarray(s.half_extents)}) @ Rg.T + pg
                pts, kind = pts[:, [a, b]], "boxes"
            hull = _hull(pts)
            ax.fill(hull[:, 0], hull[:, 1], fc="tab:green", ec="darkgreen", lw=0.6, alpha=0.6, label=label(kind))


def _points(model, q, shapes=None) -> np.ndarray:
    """World points that bound the drawing at q: body origins, centres of mass (twice, for the
    leaves' segments), shape corners, geoms' extremes (planes left out)."""
    from ..model.shapes import Box, Capsule, Sphere
    from ..sim.collision import geom_pose

    R, p = model.body_poses(q)
    n = len(model.parents)
    pts = [p[1:]] if n > 1 else [np.zeros((1, 3))]
    for i in range(1, n):
        pts.append((2 * R[i] @ _com(model.inertias[i]) + p[i])[None])
    for i, name in enumerate(model.body_names):
        if shapes and name in shapes:
            pts.append(_corners(shapes[name]) @ R[i].T + p[i])
    for g in getattr(model, "geoms", ()):
        Rg, pg = geom_pose(g, R, p)
        s = g.shape
        if isinstance(s, Sphere):
            pts.append(pg + s.radius * np.vstack([np.eye(3), -np.eye(3)]))
        elif isinstance(s, Capsule):
            for e in (pg - s.half_length * Rg[:, 2], pg + s.half_length * Rg[:, 2]):
                pts.append(e + s.radius * np.vstack([np.eye(3), -np.eye(3)]))
        elif isinstance(s, Box):
            pts.append(_corners({"shape": "box", "size": 2 * np.asarray(s.half_extents)}) @ Rg.T + pg)
    return np.concatenate(pts)


def _bounds(model, qs, shapes=None):
    lo, hi = np.full(3, np.inf), np.full(3, -np.inf)
    for q in np.atleast_2d(qs):
        pts = _points(model, q, shapes)
        lo, hi = np.minimum(lo, pts.min(axis=0)), np.maximum(hi, pts.max(axis=0))
    return lo, hi


def _view_limits(model, qs, views, shapes, max_aspect, com):
    """(xlim, ylim) of each view: the bounding box of the drawings over qs with a margin; with
    max_aspect, each horizontal axis's extent limited to max_aspect times the tallest height of the
    views it spans (one window for all of them), centred on the centre of mass's mid-range (com:
    (T, 3)). Returns the limits and whether each view is windowed."""
    lo, hi = _bounds(model, qs, shapes)
    pad = 0.05 * max(float(np.max(hi - lo)), 1e-3)
    if max_aspect is not None:
        pad = min(pad, 0.15 * max(float(np.min(hi - lo)), 1e-3))
    lo, hi = lo - pad, hi + pad
    window = {}
    if max_aspect is not None:
        for a, b in views:
            window[a] = max(window.get(a, 0.0), max_aspect * (hi[b] - lo[b]))
    limits, windowed = [], []
    for a, b in views:
        xl, yl = [lo[a], hi[a]], [lo[b], hi[b]]
        cut = a in window and xl[1] - xl[0] > window[a]
        if cut:
            mid = 0.5 * (com[:, a].min() + com[:, a].max()) if com is not None else 0.5 * (xl[0] + xl[1])
            xl = [mid - window[a] / 2, mid + window[a] / 2]
        limits.append((tuple(xl), tuple(yl)))
        windowed.append(cut)
    return limits, windowed


def _panel_height(limits, width: float = 9.0) -> float:
    (x0, x1), (y0, y1) = limits
    return float(np.clip(width * (y1 - y0) / max(x1 - x0, 1e-12), 0.8, 4.0))


def _draw_views(model, q, axs, views, limits, shapes, com, track, t):
    for ax, view, (xl, yl) in zip(axs, views, limits):
        draw(model, q, ax=ax, axes=tuple(view), shapes=shapes, t=t, legend=False)
        a, b = view
        if track is not None:  # from the first frame on, so that the legend (made then) lists it
            ax.plot(track[:, a], track[:, b], "-", color="tab:red", lw=0.8, alpha=0.6, label="centre of mass track")
        if com is not None:
            ax.plot([com[a]], [com[b]], "x", color="tab:red", ms=8, mew=2, label="centre of mass")
        ax.set_aspect("equal", adjustable="box")
        ax.set_xlim(*xl)
        ax.set_ylim(*yl)


def _view_titles(axs, views, windowed, model):
    """A "side view" when the view's vertical axis is up (against gravity), "top view" when it looks
    down, else the axes' names."""
    g = np.asarray(getattr(model, "gravity", (0.0, 0.0, -9.81)), dtype=float)
    up = int(np.argmax(np.abs(g))) if np.count_nonzero(g) == 1 else None
    for ax, (a, b), cut in zip(axs, views, windowed):
        name = {b: "side view", 3 - a - b: "top view"}.get(up, f"{'xyz'[a]}–{'xyz'[b]} view")
        ax.set_title(name + (" (window around the centre of mass)" if cut else ""), fontsize=9, loc="left")


def _legend(fig, ax):
    """The first view's legend along the figure's bottom edge (None when nothing is labelled)."""
    handles, labels = ax.get_legend_handles_labels()
    if not handles:
        return None
    return fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 6), fontsize=8, frameon=False)


def _layout(fig, legend):
    """tight_layout above the figure legend at the bottom: the room it needs measured by the renderer."""
    fig.tight_layout()
    if legend is not None:
        height = legend.get_window_extent(fig.canvas.get_renderer()).height / fig.bbox.height
        fig.tight_layout(rect=(0, height, 1, 1))


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
