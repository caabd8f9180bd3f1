"""What a figure must have to be read as a picture (issue 17, "Figures and CLI"), checked on the
drawn figure with matplotlib's renderer: every Axes that shows data has an x and a y label with a
unit in brackets or parentheses (a shared axis may carry it on one of its siblings; an axis whose
ticks are names, as the bars of a bar chart, needs a label but no unit), a legend when
it shows several series, and no text clipped by the figure's edge or overlapping other text (the
suptitle, titles, axis labels, tick labels, legends).

``figure_problems(fig)`` lists what is wrong; the ``saved_figures`` fixture (conftest.py) runs it
on every figure saved while a test runs (the scripts save and close their figures themselves), and
``assert_readable`` checks what it recorded."""

from __future__ import annotations

import re

UNIT = re.compile(r"[\[(][^\])]+[\])]")  # "t [s]", "time (s)", "links n [count]"


def _series(ax) -> int:
    """The data series an Axes shows: lines, bar containers, collections, labelled patches (the
    bars of a container counted once)."""
    in_bars = {id(p) for c in ax.containers for p in c}
    patches = [p for p in ax.patches if id(p) not in in_bars and not str(p.get_label() or "_").startswith("_")]
    return len(ax.lines) + len(ax.containers) + len(ax.collections) + len(patches)


def _texts(fig, ax):
    """The visible, non-empty text artists of an Axes (name, artist)."""
    out = [(f"title {t.get_text()!r}", t) for t in (ax.title, ax._left_title, ax._right_title)]
    out += [("xlabel", ax.xaxis.label), ("ylabel", ax.yaxis.label)]
    for name, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
        lo, hi = sorted(axis.get_view_interval())
        for tick in axis.get_major_ticks() + axis.get_minor_ticks():
            if lo - 1e-12 * abs(hi - lo) <= tick.get_loc() <= hi + 1e-12 * abs(hi - lo):
                out += [(f"{name} tick label {lab.get_text()!r}", lab) for lab in (tick.label1, tick.label2)]
    legend = ax.get_legend()
    if legend is not None:
        out.append(("legend", legend))
    return [(n, a) for n, a in out if a.get_visible() and (not hasattr(a, "get_text") or a.get_text().strip())]


def _overlap(a, b, slack: float = 0.5) -> bool:
    return a.x0 < b.x1 - slack and b.x0 < a.x1 - slack and a.y0 < b.y1 - slack and b.y0 < a.y1 - slack


def _inside(a, b, slack: float = 1.0) -> bool:
    return a.x0 >= b.x0 - slack and a.x1 <= b.x1 + slack and a.y0 >= b.y0 - slack and a.y1 <= b.y1 + slack


def _named_ticks(axis) -> bool:
    """Ticks set one by one (a FixedLocator, as set_xticks makes) labelled with words, not numbers."""
    from matplotlib.ticker import FixedLocator

    def number(text):
        try:
            float(text.replace("\u2212", "-"))
            return True
        except ValueError:
            return False

    labels = [t.get_text() for t in axis.get_ticklabels() if t.get_text()]
    return isinstance(axis.get_major_locator(), FixedLocator) and any(not number(t) for t in labels)


def _labelled(ax, which: str) -> str:
    """The axis label of ax, or of an axis shared with it (a shared axis labelled once)."""
    shared = ax.get_shared_x_axes() if which == "x" else ax.get_shared_y_axes()
    for a in [ax, *shared.get_siblings(ax)]:
        text = (a.get_xlabel() if which == "x" else a.get_ylabel()).strip()
        if text:
            return text
    return ""


def figure_problems(fig) -> list[str]:
    """What is wrong with the figure as a picture (an empty list: nothing found)."""
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    frame = fig.bbox
    problems = []
    texts = []  # (owner, name, bbox) of every text, for the clipping and overlap checks
    if fig._suptitle is not None and fig._suptitle.get_visible() and fig._suptitle.get_text().strip():
        texts.append(("figure", f"suptitle {fig._suptitle.get_text()!r}", fig._suptitle.get_window_extent(r)))
    for k, legend in enumerate(fig.legends):
        texts.append(("figure", f"figure legend {k}", legend.get_window_extent(r)))
    for i, ax in enumerate(fig.axes):
        if not ax.get_visible() or not ax.axison:
            continue
        where = f"axes {i} ({ax.get_title() or ax.get_title('left') or 'untitled'})"
        n = _series(ax)
        if n:
            for which in "xy":
                label = _labelled(ax, which)
                axis = ax.xaxis if which == "x" else ax.yaxis
                named = _named_ticks(axis)
                if not label:
                    problems.append(f"{where}: no {which} label")
                elif not named and not UNIT.search(label):
                    problems.append(f"{where}: {which} label {label!r} names no unit in [] or ()")
        if n > 1 and ax.get_legend() is None and not fig.legends:
            problems.append(f"{where}: {n} series and no legend")
        for name, artist in _texts(fig, ax):
            texts.append((where, name, artist.get_window_extent(r)))
    for owner, name, box in texts:
        if not _inside(box, frame):
            problems.append(f"{owner}: {name} clipped by the figure's edge ({box} outside {frame})")
    for k, (o1, n1, b1) in enumerate(texts):
        for o2, n2, b2 in texts[k + 1 :]:
            if _overlap(b1, b2):
                problems.append(f"{o1}: {n1} overlaps {o2}: {n2}")
    return problems


def assert_readable(saved, expected: int) -> None:
    """``expected`` figures were saved (the saved_figures fixture's records), none with a problem."""
    assert len(saved) == expected, [name for name, *_ in saved]
    bad = {name: problems for name, problems, _ in saved if problems}
    assert not bad, bad
