"""python -m benchmarks redmax (benchmarks/redmax.py): baxter2019 §4's scaling study on
tiny sizes (the CSV, its columns and values, the summary), and one Pardiso step on the assembled
matrix against one redmax-direct step."""

import csv
import importlib.util

import numpy as np
import pytest
from conftest import assert_below, rounding_bound
from figcheck import assert_readable
from support.redmax import step_bound

import treedyn as td
from benchmarks import SCRIPTS
from benchmarks import redmax as bench
from treedyn import scenes

HAS_PARDISO = bench.pardiso_available()
HAS_MPL = importlib.util.find_spec("matplotlib") is not None
NO_PARDISO = "pypardiso (MKL Pardiso) is not installed: pip install pypardiso"


def read(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def test_registered():
    assert SCRIPTS["redmax"] == "benchmarks.redmax"


def test_quick_run_writes_the_csv(tmp_path, saved_figures):
    rc = bench.main(
        [
            "--quick",
            "--out",
            str(tmp_path),
            "--steps",
            "2",
            "--no-progress",
            "--scenes",
            "bridge-rigid",
            "bridge-flexible",
            "umbrella",
            "tree",
            "tree-square",
            "--size",
            "bridge-rigid=4,8",
            "--size",
            "bridge-flexible=3,4",
            "--size",
            "umbrella=2,3",
            "--size",
            "tree=2,3",
            "--size",
            "tree-square=2,3",
        ]
    )
    assert rc == 0
    rows = read(tmp_path / "redmax.csv")
    assert set(bench.FIELDS) == set(rows[0])
    solvers = {bench.PCG, bench.DIRECT} | ({bench.PARDISO} if HAS_PARDISO else set())
    assert {r["solver"] for r in rows} == solvers
    nv = {(r["scene"], int(r["size"])): int(r["nv"]) for r in rows}
    assert nv == {
        ("bridge-rigid", 4): 4,
        ("bridge-rigid", 8): 8,
        ("bridge-flexible", 3): 9,
        ("bridge-flexible", 4): 12,
        ("umbrella", 2): 1 + 32 + 16,
        ("umbrella", 3): 1 + 48 + 16,
        ("tree", 2): 9,
        ("tree", 3): 21,
        ("tree-square", 2): 9,
        ("tree-square", 3): 21,
    }
    assert len(rows) == len(nv) * len(solvers)
    for r in rows:
        assert r["failed"] == "0", r
        assert int(r["steps"]) == int(r["steps_done"]) == 2 and r["repeats"] == "1"
        assert float(r["seconds_per_step"]) > 0 and float(r["seconds_total"]) > 0
        assert float(r["seconds_total"]) == 2 * float(r["seconds_per_step"])  # ×2 and /2 are exact
        assert int(r["threads"]) == td.get_num_threads() and float(r["h"]) == 1e-2
        if r["solver"] == bench.PCG:
            its, per_solve = float(r["pcg_iterations_per_step"]), float(r["pcg_iterations_per_solve"])
            assert its >= 1 and 0 < per_solve <= its
            assert int(r["pcg_max_iterations"]) >= 1 and r["unconverged"] == "0"
        else:
            assert r["pcg_iterations_per_step"] == ""
        if r["solver"] == bench.PARDISO:  # the assembly of M̃_r is part of Pardiso's step, and timed apart
            assert 0 < float(r["assembly_seconds_per_step"]) < float(r["seconds_per_step"])
        else:
            assert r["assembly_seconds_per_step"] == ""
    # loop rows: the planar bridges' hinge closure (5 rows), the umbrella's 8 universal joints (32)
    assert {int(r["constraint_rows"]) for r in rows if r["scene"].startswith("bridge")} == {5}
    assert {int(r["constraint_rows"]) for r in rows if r["scene"] == "umbrella"} == {32}
    # the rigid-tower bridge: the preconditioner is exact, every solve takes at most one iteration
    assert {r["pcg_max_iterations"] for r in rows if r["scene"] == "bridge-rigid" and r["solver"] == bench.PCG} == {"1"}
    for name in ("redmax_time.png", "redmax_iterations.png"):
        assert (tmp_path / name).exists() == HAS_MPL
    assert_readable(saved_figures, 2 if HAS_MPL else 0)  # units, legends, nothing clipped (tests/figcheck.py)


def test_repeats_keep_the_minimum(tmp_path):
    rc = bench.main(
        [
            "--out",
            str(tmp_path),
            "--steps",
            "2",
            "--repeat",
            "2",
            "--no-progress",
            "--no-plot",
            "--scenes",
            "tree",
            "--size",
            "tree=2",
            "--solvers",
            "redmax-pcg",
            "redmax-direct",
        ]
    )
    assert rc == 0
    rows = read(tmp_path / "redmax.csv")
    assert [r["solver"] for r in rows] == ["redmax-pcg", "redmax-direct"]
    for r in rows:
        assert r["repeats"] == "2"
        assert 0 < float(r["seconds_per_step"]) <= float(r["seconds_per_step_median"])
        assert float(r["seconds_total"]) == 2 * float(r["seconds_per_step"])  # ×2 and /2 are exact


def test_failures_are_recorded_and_the_sweep_goes_on(tmp_path, monkeypatch):
    def build(n, args):
        if n == 5:
            raise ValueError("cannot")
        return scenes.bridge_rigid(n)

    class Diverging:
        def __init__(self, model):
            self.model, self.calls = model, 0

        def step(self, state, h):
            self.calls += 1
            if self.calls == 2:
                raise RuntimeError("blew up")
            return dict(iterations=1, solves=1)

    make = bench.make_stepper
    monkeypatch.setattr(
        bench,
        "make_stepper",
        lambda name, model, *a, **k: Diverging(model) if model.nv == 6 else make(name, model, *a, **k),
    )
    monkeypatch.setitem(bench.FAMILIES, "bridge-rigid", ("broken", build, [4, 5, 6], [4, 5, 6]))
    rc = bench.main(
        [
            "--quick",
            "--out",
            str(tmp_path),
            "--steps",
            "3",
            "--no-progress",
            "--no-plot",
            "--scenes",
            "bridge-rigid",
            "--solvers",
            "redmax-pcg",
            "redmax-direct",
        ]
    )
    assert rc == 0
    rows = read(tmp_path / "redmax.csv")
    assert [(r["nv"], r["failed"]) for r in rows] == [("4", "0"), ("4", "0"), ("6", "1"), ("6", "1")]
    for r in rows[2:]:
        assert r["seconds_per_step"] == "" and r["steps_done"] == "0"
        assert r["error"] == "step 1: RuntimeError: blew up"


def test_fit_and_crossover():
    nv = np.array([10.0, 100.0, 1000.0])
    s, c, used = bench.fit(nv, 2e-6 * nv**1.5, 50)
    # a least-squares slope of exact power-law data in log-log: a few roundings of log(1e3) ≈ 7
    assert abs(s - 1.5) <= rounding_bound(2) * 7 and list(used) == [100, 1000]
    assert bench.fit(nv, nv, 5000) is None
    pcg, direct = 1e-4 * nv, 1e-6 * nv**2  # equal at nv = 100
    assert bench.crossover(nv, pcg * 2, nv, direct) == "~200"
    assert bench.crossover(nv, pcg / 100, nv, direct) == "<=10"
    assert bench.crossover(nv, pcg * 100, nv, direct) == ">1000"
    assert bench.crossover(nv, np.array([1.0, 0.1, 1.0]), nv, np.ones(3) * 0.5) == ">1000*"


@pytest.mark.skipif(not HAS_PARDISO, reason=NO_PARDISO)
@pytest.mark.parametrize(
    "make",
    [lambda: scenes.bridge(6, 5), lambda: scenes.umbrella(3), lambda: scenes.tree(3, springs="square")],
    ids=["bridge", "umbrella", "tree"],
)
def test_a_pardiso_step_equals_a_redmax_direct_step(make):
    scene = make()
    direct = td.make_solver("redmax-direct", scene.model, h=scene.h)
    a, b = scene.state.copy(), scene.state.copy()
    for mtype in (-2, 2, 11):
        pardiso = bench.PardisoStepper(scene.model, scene.h, mtype=mtype, threads=1)
        a, b = scene.state.copy(), scene.state.copy()
        sa = direct.step(a, scene.h)
        sb = pardiso.step(b, scene.h)
        pardiso.close()
        # two direct solves of the same step (eq. (2.42)): within step_bound; q ⊕ h v⁺ carries h
        # times that, plus rounding; the position residual |C(q)| moves by ≤ ‖G‖·Δq
        bound_v = step_bound(direct.terms(scene.state), scene.state, scene.h)[1]
        bound_q = scene.h * bound_v + rounding_bound(1) * (1 + np.abs(a.q).max())
        assert_below(a.v - b.v, bound_v, f"Pardiso v = direct v, mtype {mtype}", size=np.abs(a.v).max())
        assert_below(a.q - b.q, bound_q, f"Pardiso q = direct q, mtype {mtype}")
        assert b.t == a.t
        assert sb["constraint_rows"] == sa["constraint_rows"]
        G = np.abs(direct.terms(a)["G"])
        G_norm = G.sum(axis=1).max() if G.size else 0.0
        assert_below(
            sb["position_residual"] - sa["position_residual"],
            G_norm * bound_q + rounding_bound(1) * (1 + np.abs(a.q).max()),
            "position residual",
        )


def test_without_pardiso_the_column_is_left_out(tmp_path, monkeypatch):
    monkeypatch.setattr(bench, "pardiso_available", lambda: False)
    rc = bench.main(
        [
            "--quick",
            "--out",
            str(tmp_path),
            "--steps",
            "1",
            "--no-progress",
            "--no-plot",
            "--scenes",
            "tree",
            "--size",
            "tree=2",
        ]
    )
    assert rc == 0
    assert {r["solver"] for r in read(tmp_path / "redmax.csv")} == {bench.PCG, bench.DIRECT}
    with pytest.raises(SystemExit):
        bench.main(["--out", str(tmp_path), "--solvers", "pardiso", "--scenes", "tree", "--size", "tree=2"])
