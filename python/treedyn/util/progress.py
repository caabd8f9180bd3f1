"""Progress bars (tqdm) with one policy for ``simulate``, the ``treedyn`` command and the figure
scripts: numbers rounded for reading, and no flood of a log written to a file or a pipe.

tqdm redraws its line with a carriage return up to ten times a second; on a terminal that is one
line, in a captured log (CI, ``2> run.log``, a pipe) it is a new record every tenth of a second.
So a bar that is only nice to have (the command's, the scripts') is shown on a terminal only
(tqdm's ``disable=None``), and a bar that was asked for (``simulate(progress=True)``, the
command's ``--progress``) is shown everywhere but redrawn at most every ``LOG_INTERVAL`` seconds
where stderr is not a terminal (a notebook's stderr is not one either, and still gets its bar)."""

from __future__ import annotations

import math
import sys

__all__ = ["progress_bar", "time_format", "LOG_INTERVAL"]

#: seconds between two redraws of a requested bar on a stderr that is not a terminal
LOG_INTERVAL = 10.0


def time_format(total: float) -> str:
    """tqdm's bar_format for a bar over simulated time ``total`` (s): ``t=1.65/2.00 s``, the
    current time and the total with the same decimals, three significant digits of the total."""
    decimals = min(6, max(0, 2 - math.floor(math.log10(total)))) if total > 0 else 2
    number = f".{decimals}f"
    return "{desc}: {percentage:3.0f}%|{bar}| t={n:" + number + "}/{total:" + number + "} s [{elapsed}<{remaining}]"


def progress_bar(iterable=None, *, total=None, desc: str, unit: str = "it", show: bool | None = None, seconds=False):
    """A tqdm bar on stderr over ``iterable`` or up to ``total``.

    show: None — on a terminal only (tqdm's ``disable=None``); True — always, redrawn at most every
    LOG_INTERVAL s when stderr is not a terminal; False — never (a bar that does nothing).
    seconds: ``total`` is a span of simulated time (a float): the bar reads ``t=1.65/2.00 s``
    (time_format) instead of tqdm's unrounded ``1.6497321197741646/2.0s``."""
    from tqdm import tqdm

    tty = bool(getattr(sys.stderr, "isatty", lambda: False)())
    options = dict(desc=desc, unit=unit, file=sys.stderr, leave=False, disable=None if show is None else not show)
    if show and not tty:
        options["mininterval"] = LOG_INTERVAL
    if seconds and total is not None:
        options["bar_format"] = time_format(float(total))
    return tqdm(iterable, total=total, **options)
