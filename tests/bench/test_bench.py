"""python -m benchmarks drumwright (benchmarks/): the branched bodies of
drumwright2012 §6.1, the CSV, the summary and the operation-count table, on tiny sizes."""

import csv
import importlib.util
import pathlib
import subprocess
import sys

import numpy as np
from figcheck import assert_readable

from benchmarks import drumwright as bench

ROOT = pathlib.Path(__file__).resolve().parents[2]  # benchmarks/ runs from the repository's root


def test_branched_bodies_have_depth_n_over_2_and_at_most_two_children():
    for seed in range(3):
        model = bench.branched(400, seed)
        assert model.nv == 400
        assert 0.4 * 400 < bench.depth(model) < 0.6 * 400
        parents = np.asarray(model.parents)
        counts = np.bincount(parents[1:], minlength=model.n_bodies)
        assert counts[1:].max() <= 2


def test_bench_writes_csv_and_summary(tmp_path, saved_figures):
    lines = []
    rows = bench.run([4, 8], [1, 2], repeat=1, log=lines.append)
    methods = {r["method"] for r in rows}
    assert {"drumwright", "crba-cholesky", "crba-ltl"} <= methods
    assert all(r["time_min_s"] > 0 for r in rows)
    out = bench.summarize(rows, [1, 2], log=lines.append)
    assert ("speedup", 8) in out
    rc = bench.main(["--n", "4", "6", "--repeat", "1", "--threads", "1", "--out", str(tmp_path)])
    assert rc == 0
    # Fig. 2 and Fig. 3: units, legends, nothing clipped (tests/figcheck.py)
    assert_readable(saved_figures, 2 if importlib.util.find_spec("matplotlib") else 0)
    with open(tmp_path / "drumwright2012.csv") as f:
        got = list(csv.DictReader(f))
    assert {r["model"] for r in got} == {"serial", "branched"}
    assert {"n", "nv", "depth", "method", "threads", "time_min_s", "time_median_s"} <= set(got[0])


def test_counts_table_prints_beside_the_paper():
    lines = []
    out = bench.counts_table(log=lines.append)
    text = "\n".join(lines)
    assert "45n²/2 + 216n" in text and "19n²" in text and "12.5n²" in text
    assert round(out["fits"][("mMultInv", 0)][0], 6) == 19


def test_command_line_lists_scripts():
    r = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--list"], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert "drumwright" in r.stdout
    r = subprocess.run([sys.executable, "-m", "benchmarks", "nope"], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 2 and "unknown bench script" in r.stderr
