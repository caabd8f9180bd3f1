"""python -m benchmarks speed (benchmarks/speed.py): every part runs and writes its CSV, on tiny
sizes (--quick); the ratios themselves are measurements, not asserted."""

import csv
import importlib.util

import pytest
from figcheck import assert_readable

import treedyn.solvers.codegen as codegen
from benchmarks import speed
from treedyn.tools.peers import example_robot_path  # noqa: E402

pytest.importorskip("pinocchio")


@pytest.mark.skipif(codegen.compiler() is None, reason="no C++ compiler on this machine")
def test_speed_script_writes_every_part(tmp_path, monkeypatch, saved_figures):
    try:
        example_robot_path(speed.ROBOTS["ur5"][0])
    except FileNotFoundError as e:
        pytest.skip(f"example-robot-data unavailable: {e}")
    monkeypatch.setenv("TREEDYN_CACHE", str(tmp_path / "cache"))
    assert speed.main(["--quick", "--repeat", "1", "--out", str(tmp_path)]) == 0
    # speed.png: units, legends, nothing clipped (tests/figcheck.py)
    assert_readable(saved_figures, 1 if importlib.util.find_spec("matplotlib") else 0)
    with open(tmp_path / "speed.csv") as f:
        rows = list(csv.DictReader(f))
    parts = {(r["part"], r["kernel"], r["dtype"]) for r in rows}
    assert ("single", "specialised", "float64") in parts and ("single", "simplified+specialised", "float64") in parts
    assert ("batch", "specialised", "float32") in parts and ("minv (50 ms apart)", "drumwright", "float64") in parts
    single = [r for r in rows if r["part"] == "single"]
    assert {r["model"] for r in single} == {"chain20", "ur5"}
    for r in rows:
        assert float(r["ratio"]) > 0
    # the specialised code of a model has fewer multiplications than the generic kernel's
    for model in ("chain20", "ur5"):
        m = {r["kernel"]: int(r["multiplications"]) for r in single if r["model"] == model}
        assert m["simplified+specialised"] <= m["specialised"] < m["generic"]
