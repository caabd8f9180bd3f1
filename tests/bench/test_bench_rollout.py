"""python -m benchmarks rollout (benchmarks/rollout.py) on tiny sizes: the CSV, its columns, positive
times and ratios. No timing assertions."""

import csv

import pytest

from benchmarks import SCRIPTS
from benchmarks import rollout as bench

pytest.importorskip("mujoco")
pytest.importorskip("gymnasium")


def test_registered():
    assert SCRIPTS["rollout"] == "benchmarks.rollout"


def test_tiny_run_writes_the_table(tmp_path):
    rc = bench.main(["--worlds", "3", "--steps", "4", "--threads", "1", "2", "--repeats", "1", "--out", str(tmp_path)])
    assert rc == 0
    with open(tmp_path / "rollout.csv") as f:
        rows = list(csv.DictReader(f))
    assert [int(r["threads"]) for r in rows] == [1, 2] and set(rows[0]) == set(bench.FIELDS)
    for r in rows:
        assert float(r["treedyn_s"]) > 0 and float(r["mujoco_s"]) > 0
        assert float(r["ratio"]) == pytest.approx(float(r["mujoco_s"]) / float(r["treedyn_s"]))
    assert float(rows[0]["treedyn_speedup"]) == 1.0
