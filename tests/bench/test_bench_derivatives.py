"""python -m benchmarks derivatives (benchmarks/derivatives.py) on tiny sizes: the CSV's columns,
positive times and ratios, both kinds on every model, the PNG readable (tests/figcheck.py)."""

import csv
import importlib.util

import pytest
from figcheck import assert_readable

from benchmarks import SCRIPTS
from benchmarks import derivatives as bench

HAS_MPL = importlib.util.find_spec("matplotlib") is not None
pytest.importorskip("pinocchio", reason="the figure compares with Pinocchio (pip install pin)")


def test_registered():
    assert SCRIPTS["derivatives"] == "benchmarks.derivatives"


def test_quick_run_writes_the_csv_and_a_readable_figure(tmp_path, saved_figures):
    assert bench.main(["--quick", "--out", str(tmp_path), "--n", "3", "8", "--repeat", "1"]) == 0
    with open(tmp_path / "derivatives.csv") as f:
        rows = list(csv.DictReader(f))
    assert set(bench.FIELDS) <= set(rows[0])
    has_robots = bool(bench.models([], ["ur5"], log=lambda _: None))  # example-robot-data is installed
    expected = {"chain3", "chain8"} | ({"ur5"} if has_robots else set())
    assert {r["model"] for r in rows} == expected
    assert {(r["model"], r["kind"]) for r in rows} == {(m, k) for m in expected for k in bench.KINDS}
    for r in rows:
        assert float(r["treedyn_s"]) > 0 and float(r["pinocchio_s"]) > 0
        assert float(r["ratio"]) == pytest.approx(float(r["pinocchio_s"]) / float(r["treedyn_s"]), rel=1e-2)
    assert (tmp_path / "derivatives.png").exists() == HAS_MPL
    assert_readable(saved_figures, 1 if HAS_MPL else 0)  # units, legends, nothing clipped


def test_without_pinocchio_it_says_so(monkeypatch, tmp_path):
    monkeypatch.setattr(bench, "_pinocchio", lambda: None)
    with pytest.raises(RuntimeError, match="compares with Pinocchio"):
        bench.main(["--quick", "--out", str(tmp_path), "--no-plot"])
