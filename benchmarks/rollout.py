"""Rollouts: many worlds × many steps in one call, against ``mujoco.rollout``.

    python -m benchmarks rollout [--model ant] [--worlds 32] [--steps 100] [--threads 1 2] [--out DIR]

A Gymnasium model (the installed ``gymnasium`` package's file, as ``td.load_mjcf`` reads it: MuJoCo's
soft constraints, the file's integrator) from its qpos0, ``--worlds`` worlds each under its own random
controls in [−1, 1] for ``--steps`` steps: ``td.rollout`` (each world a ``td.StepData``, spread over
the threads with the GIL released) and ``mujoco.rollout.rollout`` with as many ``MjData`` as threads,
alternated, best of a few repeats. Per thread count: the time of each, per world-step, the ratio
MuJoCo / treedyn (above 1: treedyn is faster) and each one's speed-up over its own single thread.

Writes rollout.csv.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np

import treedyn as td

from ._common import write_csv

FIELDS = ["model", "worlds", "steps", "threads", "treedyn_s", "mujoco_s", "ratio", "treedyn_speedup", "mujoco_speedup"]


def _path(name: str) -> str:
    import gymnasium

    return os.path.join(os.path.dirname(gymnasium.__file__), "envs", "mujoco", "assets", f"{name}.xml")


def run(name: str, worlds: int, steps: int, threads: list[int], repeats: int = 3, log=print) -> list[dict]:
    """The rows of the table (one per thread count); [] when mujoco or gymnasium is absent."""
    try:
        import mujoco
        from mujoco import rollout as mj_rollout
    except ImportError as e:
        log(f"rollout: skipped ({e})")
        return []
    path = _path(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (what treedyn does not read: IgnoredElementWarning)
        model = td.load_mjcf(path)
    sim = td.ContactSimulator(model)
    m = mujoco.MjModel.from_xml_path(path)
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    d0 = mujoco.MjData(m)
    x0 = np.zeros(mujoco.mj_stateSize(m, spec))
    mujoco.mj_getState(m, d0, x0, spec)
    U = np.random.default_rng(0).uniform(-1, 1, (worlds, steps, model.nu))
    start = td.State.initial(model)
    rows, base = [], {}
    for n in threads:
        datas_mj = [mujoco.MjData(m) for _ in range(n)]
        best_ours, best_theirs = np.inf, np.inf
        for _ in range(repeats):
            datas = [sim.data(start) for _ in range(worlds)]  # (made outside the timed call)
            t0 = time.perf_counter()
            td.rollout(datas, U, threads=n)
            best_ours = min(best_ours, time.perf_counter() - t0)
            t0 = time.perf_counter()
            mj_rollout.rollout(m, datas_mj, np.tile(x0, (worlds, 1)), U)
            best_theirs = min(best_theirs, time.perf_counter() - t0)
        base.setdefault("ours", best_ours), base.setdefault("theirs", best_theirs)
        row = dict(
            model=name, worlds=worlds, steps=steps, threads=n, treedyn_s=best_ours, mujoco_s=best_theirs,
            ratio=best_theirs / best_ours, treedyn_speedup=base["ours"] / best_ours,
            mujoco_speedup=base["theirs"] / best_theirs,
        )  # fmt: skip
        rows.append(row)
        per = 1e6 / (worlds * steps)
        log(
            f"{name} {worlds} worlds x {steps} steps, {n} thread(s): treedyn {best_ours * per:.3g} us, "
            f"mujoco.rollout {best_theirs * per:.3g} us a world-step; MuJoCo/treedyn {row['ratio']:.2f}x; "
            f"speed-up over one thread: treedyn {row['treedyn_speedup']:.2f}x, MuJoCo {row['mujoco_speedup']:.2f}x"
        )
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks rollout", description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="ant", help="a Gymnasium MuJoCo model (its assets' file name)")
    ap.add_argument("--worlds", type=int, default=32)
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default=".")
    args = ap.parse_args(argv)
    rows = run(args.model, args.worlds, args.steps, args.threads, args.repeats)
    if rows:
        os.makedirs(args.out, exist_ok=True)
        write_csv(os.path.join(args.out, "rollout.csv"), rows, FIELDS)
    return 0
