"""What the figure scripts share: timing (treedyn.util.timing), CSV, log-log fits, crossovers, and
matplotlib (optional: the scripts always write CSV, and PNG when matplotlib is installed)."""

from __future__ import annotations

import csv
import math
from collections.abc import Sequence

import numpy as np

from treedyn.util.timing import Timing, time_call

__all__ = ["Timing", "time_call", "write_csv", "fit", "slope", "crossover", "pyplot", "log_ticks", "save"]


def write_csv(path, rows: Sequence[dict], fields: Sequence[str] | None = None) -> None:
    """rows (dicts) to a CSV file with a header: ``fields`` in that order (default: the first row's keys)."""
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(fields or rows[0]))
        w.writeheader()
        w.writerows(rows)


def fit(x, y, x_min: float = 0.0, x_max: float = math.inf):
    """(slope, intercept, x used) of the least-squares line log y = slope·log x + intercept over
    x_min <= x <= x_max; None below 2 points."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    sel = (x >= x_min) & (x <= x_max)
    if sel.sum() < 2:
        return None
    p = np.polyfit(np.log(x[sel]), np.log(y[sel]), 1)
    return float(p[0]), float(p[1]), x[sel]


def slope(x, y, x_min: float = 0.0, x_max: float = math.inf) -> float | None:
    """The log-log slope of y against x over [x_min, x_max] (fit), None below 2 points."""
    f = fit(x, y, x_min, x_max)
    return None if f is None else f[0]


def crossover(x, t_ours, x2, t_other) -> str | None:
    """The size from which ours stays faster than the other, over the sizes both measured:
    "~X" (log-log interpolation between the last pair of points where the order changes), "<=X"
    (faster at every point, X the smallest), ">X" (slower at the largest point X; ">X*" when
    faster somewhere below). None without a common size."""
    a = dict(zip(np.asarray(x, dtype=float).tolist(), t_ours))
    b = dict(zip(np.asarray(x2, dtype=float).tolist(), t_other))
    common = sorted(set(a) & set(b))
    if not common:
        return None
    r = [(n, math.log(a[n] / b[n])) for n in common]  # < 0: ours faster
    if all(v < 0 for _, v in r):
        return f"<={common[0]:.0f}"
    if r[-1][1] >= 0:
        return f">{common[-1]:.0f}" + ("*" if any(v < 0 for _, v in r) else "")
    k = max(i for i, (_, v) in enumerate(r) if v >= 0)
    (x0, r0), (x1, r1) = r[k], r[k + 1]
    return f"~{math.exp(math.log(x0) + (math.log(x1) - math.log(x0)) * r0 / (r0 - r1)):.0f}"


def pyplot(log=print):
    """matplotlib.pyplot on the Agg backend, or None (with a line in the log) when it is not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        return plt
    except ImportError:
        log("matplotlib is not installed: no PNG (pip install matplotlib, or treedyn[bench])")
        return None


def log_ticks(axis, plain: bool = True) -> None:
    """Readable labels on a log axis (matplotlib labels the minor ticks of a short range, and
    "2×10⁰3×10⁰4×10⁰" runs together): labels at 1, 2 and 5 × 10^k over up to 2.2 decades (also at
    3, 4, 6 and 8 × 10^k within one, at 10^k only beyond: ten labels of "5000" do not fit a 3-inch
    panel), as plain numbers ("20", "0.5") or,
    with plain=False, as 2×10⁻⁵; no minor labels. Call it once the data is plotted."""
    import matplotlib.ticker as mt

    lo, hi = sorted(axis.get_view_interval())
    decades = math.log10(hi / lo) if lo > 0 else math.inf
    subs = (1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0) if decades <= 1 else (1.0, 2.0, 5.0) if decades <= 2.2 else (1.0,)
    axis.set_major_locator(mt.LogLocator(base=10.0, subs=subs))
    axis.set_minor_locator(mt.LogLocator(base=10.0, subs=np.arange(2, 10) * 1.0))
    axis.set_minor_formatter(mt.NullFormatter())
    axis.set_major_formatter(
        mt.FuncFormatter(lambda x, _: f"{x:g}") if plain else mt.LogFormatterSciNotation(labelOnlyBase=False)
    )


def save(fig, path: str, dpi: int = 120) -> str:
    """Write the figure (its own layout keeps every text inside it, which tests/figcheck.py checks;
    bbox_inches="tight" trims the margins), close it and return the path."""
    import matplotlib.pyplot as plt

    fig.savefig(path, dpi=dpi, bbox_inches="tight")
    plt.close(fig)
    return path
