"""python -m benchmarks groups (benchmarks/groups.py): yang-wu-pan Fig. 2 and Fig. 3
on tiny sizes: the CSV files, their columns, positive times, the PNGs when matplotlib is there."""

import csv
import importlib.util

import pytest
from figcheck import assert_readable

from benchmarks import SCRIPTS
from benchmarks import groups as bench

HAS_PIN = importlib.util.find_spec("pinocchio") is not None
HAS_MPL = importlib.util.find_spec("matplotlib") is not None


def read(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def test_registered():
    assert SCRIPTS["groups"] == "benchmarks.groups"


def test_quick_run_writes_both_figures(tmp_path, saved_figures):
    rc = bench.main(
        [
            "--quick",
            "--out",
            str(tmp_path),
            "--n",
            "2",
            "6",
            "--links",
            "3",
            "--B",
            "1",
            "5",
            "--threads",
            "1",
            "2",
            "--repeat",
            "1",
            "--no-progress",
        ]
    )
    assert rc == 0
    fig2 = read(tmp_path / "groups_fig2.csv")
    assert set(bench.FIG2_FIELDS) <= set(fig2[0])
    assert {r["method"] for r in fig2} >= set(bench.METHODS) | ({bench.PEER} if HAS_PIN else set())
    assert {int(r["n"]) for r in fig2} == {2, 6}
    assert all(float(r["time_min_s"]) > 0 for r in fig2)
    fig3 = read(tmp_path / "groups_fig3.csv")
    assert set(bench.FIG3_FIELDS) <= set(fig3[0])
    assert {(int(r["B"]), int(r["threads"])) for r in fig3} == {(1, 1), (1, 2), (5, 1), (5, 2)}
    assert {r["method"] for r in fig3} >= set(bench.METHODS) | ({bench.PEER} if HAS_PIN else set())
    assert all(float(r["time_min_s"]) > 0 and float(r["robots_per_s"]) > 0 for r in fig3)
    if HAS_PIN:
        assert all(float(r["throughput_ratio_vs_pinocchio"]) > 0 for r in fig3)
    for name in ("groups_fig2.png", "groups_fig3.png"):
        assert (tmp_path / name).exists() == HAS_MPL
    assert_readable(saved_figures, 2 if HAS_MPL else 0)  # units, legends, nothing clipped (tests/figcheck.py)


def test_without_pinocchio_the_peer_columns_are_empty(tmp_path, monkeypatch):
    monkeypatch.setattr(bench, "_pinocchio", lambda: (None, None))
    rc = bench.main(
        [
            "--quick",
            "--fig",
            "3",
            "--out",
            str(tmp_path),
            "--links",
            "2",
            "--B",
            "3",
            "--threads",
            "1",
            "--repeat",
            "1",
            "--no-plot",
            "--no-progress",
        ]
    )
    assert rc == 0
    fig3 = read(tmp_path / "groups_fig3.csv")
    assert {r["method"] for r in fig3} == set(bench.METHODS)
    assert all(r["throughput_ratio_vs_pinocchio"] == "" for r in fig3)
    assert not (tmp_path / "groups_fig2.csv").exists()


@pytest.mark.skipif(not HAS_PIN, reason="Pinocchio is not installed")
def test_headline_compares_the_same_batch():
    lines = []
    out = bench.headline(pairs=((3, 8),), threads=1, repeat=1, progress=False, log=lines.append)
    assert out[0]["ratio_min"] > 0 and "throughput ratio" in lines[0]


@pytest.mark.skipif(not HAS_PIN, reason="Pinocchio is not installed")
def test_headline_on_two_threads_reports_the_speedup():
    lines = []
    out = bench.headline(pairs=((3, 8),), threads=2, repeat=1, progress=False, log=lines.append)
    assert len(out) == 1 and out[0]["aba_speedup_vs_1_thread"] > 0
    assert set(out[0]) == set(bench.HEADLINE_FIELDS)
