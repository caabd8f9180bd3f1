"""python -m benchmarks gpu (benchmarks/gpu.py): yang-wu-pan Figs. 2-3 with treedyn's XLA backend, on
tiny sizes on the CPU: the CSV files, their columns, positive times, the device named in every row,
the PNGs. Needs JAX (skipped without it; .ci/interop runs it with JAX installed)."""

import csv
import importlib.util

import numpy as np
import pytest
from figcheck import assert_readable

import treedyn as td
from benchmarks import SCRIPTS

pytest.importorskip("jax", reason="JAX is optional (pip install treedyn[gpu])")
from benchmarks import gpu as bench  # noqa: E402

HAS_MJX = importlib.util.find_spec("mujoco") is not None and importlib.util.find_spec("mujoco.mjx") is not None


def read(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def test_quick_run_writes_both_figures(tmp_path, saved_figures):
    assert SCRIPTS["gpu"] == "benchmarks.gpu"
    rc = bench.main(
        ["--quick", "--device", "cpu", "--out", str(tmp_path), "--n", "4", "8", "--B", "2", "--robots", "panda"]
        + ["--repeat", "1"]
    )
    assert rc == 0
    fig2 = read(tmp_path / "gpu_fig2.csv")
    assert [int(r["n"]) for r in fig2] == [4, 8]
    for r in fig2:
        assert r["device"] == "cpu" and r["dtype"] == "float32"
        assert all(float(r[k]) > 0 for k in ("aba_s", "cfa-oee_s", "crba-cholesky_s", "cpp_aba_1thread_s"))
    fig3 = read(tmp_path / "gpu_fig3.csv")
    assert [(r["robot"], int(r["B"])) for r in fig3] == [("panda", 2)]
    for r in fig3:
        assert all(float(r[k]) > 0 for k in ("aba_s", "crba-cholesky_s", "cpp_batch_s", "pin_parallel_s"))
        if HAS_MJX:  # the peer computes the same q̈: two backward-stable float32 solves differ by at most
            # 2 c n u κ(M) relative (c = 64, as treedyn.testing.check_solver), at the script's first state
            model = bench.robot("panda")
            Q = bench.states(model, 2, np.float32)[0]
            bound = 2 * 64 * model.nv * np.finfo(np.float32).eps / 2 * np.linalg.cond(td.mass_matrix(model, Q[0] * 1.0))
            assert float(r["mjx_s"]) > 0 and float(r["mjx_qacc_rel_diff"]) <= bound
        else:
            assert not r.get("mjx_s")
    pngs = {p.name for p in tmp_path.glob("*.png")}
    assert pngs == {"gpu_fig2.png", "gpu_fig3.png"}
    assert_readable(saved_figures, 2)  # units, legends, nothing clipped (tests/figcheck.py)
