"""python -m benchmarks derivatives (benchmarks/derivatives.py): it times both sides and writes one
CSV row per model and kind, with ratios that are the quotients of the times it wrote; the ratios
themselves are measurements, not asserted."""

import csv

import pytest

from benchmarks import derivatives

pytest.importorskip("pinocchio")


def test_derivatives_script_writes_a_row_per_model_and_kind(tmp_path):
    args = ["--repeat", "2", "--min-time", "1e-4", "--models", "chain50", "--out", str(tmp_path)]
    assert derivatives.main(args) == 0
    with open(tmp_path / "derivatives.csv") as f:
        rows = list(csv.DictReader(f))
    assert [(r["model"], r["kind"]) for r in rows] == [("chain50", "rnea"), ("chain50", "aba")]
    for r in rows:
        t = {k: float(v) for k, v in r.items() if k not in ("model", "kind")}
        assert 0 < t["pinocchio_min_s"] <= t["pinocchio_median_s"] and 0 < t["treedyn_min_s"] <= t["treedyn_median_s"]
        assert t["ratio_min"] == pytest.approx(t["pinocchio_min_s"] / t["treedyn_min_s"], rel=1e-12)
        assert t["ratio_median"] == pytest.approx(t["pinocchio_median_s"] / t["treedyn_median_s"], rel=1e-12)
