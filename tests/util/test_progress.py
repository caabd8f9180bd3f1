"""treedyn.util.progress: the progress bars' numbers and their manners in a log."""

import re
import time

import numpy as np
import pytest

import treedyn as td
from treedyn.util.progress import LOG_INTERVAL, progress_bar, time_format


@pytest.mark.parametrize(
    "n,total,text",
    [(1.6497321197741646, 2.0, "t=1.65/2.00 s"), (8.25, 10.0, "t=8.2/10.0 s"), (0.0165, 0.02, "t=0.0165/0.0200 s"),
     (82.4, 100.0, "t=82/100 s")],
)  # fmt: skip
def test_simulated_time_is_rounded_to_the_totals_precision(n, total, text):
    from tqdm import tqdm

    line = tqdm.format_meter(n, total, 3.0, bar_format=time_format(total), prefix="simulate rk4", ncols=80)
    assert text in line and line.startswith("simulate rk4:")


def test_simulate_progress_reads_rounded_times(capsys):
    model = td.scenes.chain(3)
    td.simulate(model, "aba", td.neutral(model), np.zeros(3), 2.0, method="rk4", dt=0.1, progress=True)
    err = capsys.readouterr().err
    assert "t=0.00/2.00 s" in err
    assert not re.search(r"\d\.\d{5,}", err)  # no 1.6497321197741646/2.0


def test_a_piped_log_gets_no_bar_unless_asked_and_then_a_slow_one(capsys):
    """stderr is captured here (not a terminal, as in CI or `2> log`)."""
    assert progress_bar(range(3), desc="optional").disable  # show=None: a terminal only
    asked = progress_bar(total=60, desc="asked", show=True)
    assert not asked.disable and asked.mininterval == LOG_INTERVAL
    for _ in range(60):  # 0.6 s: tqdm's default (a redraw every 0.1 s) would write ~6 lines
        time.sleep(0.01)
        asked.update()
    asked.close()
    # at most one redraw every LOG_INTERVAL s: the first line and the last
    assert capsys.readouterr().err.count("asked:") <= 3
    assert progress_bar(range(3), desc="never", show=False).disable
