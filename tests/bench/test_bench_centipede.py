"""python -m benchmarks centipede (benchmarks/centipede.py): drumwright2012 Fig. 4 on tiny
centipedes: the CSV (columns, every method at every size, finite positive times, the contacts),
the summary's ratios and slopes, the PNG when matplotlib is there. No timing assertions."""

import csv
import importlib.util
import math

from figcheck import assert_readable

from benchmarks import SCRIPTS
from benchmarks import centipede as bench

HAS_MUJOCO = importlib.util.find_spec("mujoco") is not None
HAS_MPL = importlib.util.find_spec("matplotlib") is not None


def test_registered():
    assert SCRIPTS["centipede"] == "benchmarks.centipede"


def test_quick_run_writes_the_csv_and_the_figure(tmp_path, saved_figures):
    rc = bench.main(["--quick", "--segments", "2", "3", "--repeat", "1", "--out", str(tmp_path)])
    assert rc == 0
    with open(tmp_path / "drumwright2012_fig4.csv") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == bench.FIELDS
    methods = set(bench.METHODS) | ({bench.PEER} if HAS_MUJOCO else set())
    assert {(r["method"], int(r["segments"])) for r in rows} == {(m, n) for m in methods for n in (2, 3)}
    assert len(rows) == 2 * len(methods)
    for r in rows:
        n = int(r["segments"])
        assert int(r["legs"]) == 2 * n and int(r["nv"]) == 11 * n + 3 and int(r["steps"]) >= 2
        assert 0 < int(r["contacts"]) <= 2 * n  # the feet on the ground
        times = [r["total_s"], r["total_median_s"]]
        if r["method"] != bench.PEER:
            assert int(r["contacts"]) == 2 * n  # standing: every foot touches
            # the C++ step (ENGINE) never forms the contact-space inertia: that column is blank
            blank = {"contact_inertia"} if r["method"] == bench.ENGINE else set()
            assert all(r[f"{p}_s"] == "" for p in blank)
            times += [r[f"{p}_s"] for p in bench.PHASES if p not in blank]
            assert int(r["qp_iterations"]) > 0
        else:
            assert all(r[f"{p}_s"] == "" for p in bench.PHASES)
        assert all(math.isfinite(float(t)) and float(t) > 0 for t in times), r
    png = tmp_path / "drumwright2012_fig4.png"
    assert png.exists() == HAS_MPL
    if HAS_MPL:
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert_readable(saved_figures, 1 if HAS_MPL else 0)  # units, legends, nothing clipped (tests/figcheck.py)


def test_summary_states_the_ratio_beside_the_paper():
    rows = bench.run([2, 3], repeat=1, warmup=1, budget=0.1, log=lambda *_: None)
    lines = []
    out = bench.summarize(rows, 0.0, log=lines.append)
    text = "\n".join(lines)
    assert "crba-cholesky / by drumwright" in text and "order of magnitude" in text
    assert out[("crba-cholesky", "ratio")] > 0 and out[("crba-ltl", "ratio")] > 0
    assert all(out[(m, "contact_inertia_s", "slope")] is not None for m in bench.DENSE)
    assert math.isclose(sum(out["drumwright_shares"].values()), 1.0)
    if HAS_MUJOCO:
        assert out[(bench.PEER, "step_ratio")] > 0 and out[(bench.PEER, "total_s", "slope")] is not None
