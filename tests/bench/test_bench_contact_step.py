"""python -m benchmarks contact_step (benchmarks/contact_step.py): its soft-centipede rows — td.StepData
against mj_step at MuJoCo's default and fastest settings — on a small centipede, and the fastest settings
it names."""

import numpy as np
import pytest

pytest.importorskip("mujoco")

from benchmarks import contact_step as bench  # noqa: E402


def test_soft_rows_time_both_peers_on_the_same_run():
    lines = []
    row = bench.run_soft(2, 12, log=lines.append)
    assert set(row) == set(bench.SOFT_FIELDS)
    assert row["segments"] == 2 and row["nv"] > 6
    for key in ("treedyn_ms", "mujoco_ms", "mujoco_fastest_ms"):
        assert np.isfinite(row[key]) and row[key] > 0
    assert row["ratio"] == pytest.approx(row["mujoco_ms"] / row["treedyn_ms"])
    assert row["ratio_fastest"] == pytest.approx(row["mujoco_fastest_ms"] / row["treedyn_ms"])
    assert "soft, td.StepData" in lines[0] and "fastest" in lines[0]


def test_fastest_is_pgs_dense_elliptic():
    import mujoco

    m = bench.fastest(mujoco.MjModel.from_xml_string("<mujoco><worldbody/></mujoco>"))
    assert m.opt.solver == mujoco.mjtSolver.mjSOL_PGS
    assert m.opt.jacobian == mujoco.mjtJacobian.mjJAC_DENSE
    assert m.opt.cone == mujoco.mjtCone.mjCONE_ELLIPTIC
