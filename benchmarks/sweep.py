"""A parameter sweep on Dask (treedyn.distributed.sweep): the cable-stayed bridge's maximum deck
deflection against its cable stiffness, under gravity alone and with the car crossing.

Each point is one RedMax simulation (``td.scenes.bridge`` with the "sim" parameters but the
cable stiffness, redmax-direct, h = 1e-2, the scene's 5 s) run as one task on a LocalCluster (one
single-threaded worker process per core, ``--workers``) or on the cluster at ``--scheduler``. The
deflection is the largest downward displacement of the deck at midspan (the hinge of deck block
n_deck/2) from where it starts, unloaded, over the run (gravity is switched on at t = 0, so it
includes the first overshoot).

Writes bridge_cable_sweep.csv and bridge_cable_sweep.png; prints the sweep's wall time beside the
same simulations run one after the other in this process (a ratio from one run; a shared machine
makes it noisy).
"""

from __future__ import annotations

import argparse
import importlib
import os
import platform
import sys
import time

import numpy as np

import treedyn as td
from treedyn.scenes import BRIDGE_PARAMS, bridge

from ._common import pyplot, write_csv

FIELDS = ["cable_k", "car", "max_deflection_m", "max_loop_residual", "n_deck", "n_tower", "steps"]
CARS = {None: "gravity", "car": "gravity + car (4.8 kN crossing in 5 s)"}


def max_deflection(cable_k: float, car=None, n_deck: int = 20, n_tower: int = 10) -> dict:
    """One simulation of the bridge with cable stiffness ``cable_k`` (per unit strain): the
    largest downward displacement (m) of the deck at midspan over the scene's duration."""
    scene = bridge(n_deck, n_tower, params=dict(BRIDGE_PARAMS["sim"], cable_k=cable_k), car=car)
    model, state = scene
    mid = model.body_index(f"deck{n_deck // 2}")  # its frame is its hinge: midspan for an even n_deck
    y0 = model.body_poses(state.q)[1][mid, 1]
    solver = td.make_solver("redmax-direct", model, h=scene.h)
    steps = round(scene.duration / scene.h)
    sag = residual = 0.0
    for _ in range(steps):
        residual = max(residual, solver.step(state)["position_residual"])
        sag = max(sag, float(y0 - model.body_poses(state.q)[1][mid, 1]))
    return dict(
        cable_k=cable_k,
        car=car or "",
        max_deflection_m=sag,
        max_loop_residual=residual,
        n_deck=n_deck,
        n_tower=n_tower,
        steps=steps,
    )


def _point(p):
    return max_deflection(*p)


def run(stiffness, n_deck: int, n_tower: int, client=None) -> tuple[list[dict], float]:
    """The sweep on ``client`` (treedyn.distributed's default when None): rows, wall seconds."""
    import cloudpickle

    from treedyn.tools import distributed

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # workers need not have benchmarks/
    params = [(float(k), car, n_deck, n_tower) for car in CARS for k in stiffness]
    t0 = time.perf_counter()
    rows = distributed.sweep(_point, params, client=client)
    return rows, time.perf_counter() - t0


def plot(rows, out: str) -> str | None:
    plt = pyplot()
    if plt is None:
        return None
    fig, ax = plt.subplots(figsize=(6.4, 4.4), layout="constrained")
    for car, label in CARS.items():
        sel = [r for r in rows if (r["car"] or None) == car]
        ax.loglog([r["cable_k"] for r in sel], [r["max_deflection_m"] for r in sel], "o-", label=label)
    n_deck, n_tower = rows[0]["n_deck"], rows[0]["n_tower"]
    ax.set_xlabel("cable stiffness k (N per unit strain)")
    ax.set_ylabel("maximum deck deflection at midspan (m)")
    ax.set_title(f"Bridge ({n_deck} deck blocks, towers of {n_tower}), 5 s of RedMax, h = 0.01 s", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    path = os.path.join(out, "bridge_cable_sweep.png")
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks sweep", description=__doc__.split("\n")[0])
    ap.add_argument("--points", type=int, help="stiffness values from 1e5 to 1e8 (default 13; --quick 4)")
    ap.add_argument("--deck", type=int, help="deck blocks (default 20; --quick 8)")
    ap.add_argument("--tower", type=int, help="blocks per tower (default 10; --quick 4)")
    ap.add_argument("--workers", type=int, help="LocalCluster worker processes (default: one per core)")
    ap.add_argument("--scheduler", help="a running cluster's scheduler address instead of a LocalCluster")
    ap.add_argument("--serial", action=argparse.BooleanOptionalAction, default=True, help="time the serial run too")
    ap.add_argument("--out", default=".", help="directory for the CSV and PNG files")
    ap.add_argument("--quick", action="store_true", help="4 points on a bridge of 8 deck blocks, towers of 4")
    ap.add_argument("--no-plot", action="store_true")
    args = ap.parse_args(argv)
    points = args.points or (4 if args.quick else 13)
    n_deck, n_tower = args.deck or (8 if args.quick else 20), args.tower or (4 if args.quick else 10)
    if points < 2 or n_deck < 4 or n_deck % 2 or n_tower < 1 or (args.workers is not None and args.workers < 1):
        ap.error("--points >= 2, --deck even and >= 4 (a hinge at midspan), --tower >= 1, --workers >= 1")
    from distributed import Client, LocalCluster

    os.makedirs(args.out, exist_ok=True)
    if args.scheduler:
        cluster, client = None, Client(args.scheduler)
    else:
        workers = args.workers or os.cpu_count() or 1
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0")
        client = Client(cluster)
    try:
        n = len(client.nthreads())
        print(
            f"treedyn {td.__version__}, {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs; "
            f"{n} dask workers, {sum(client.nthreads().values())} threads"
        )
        client.run(importlib.import_module, "treedyn.scenes")  # the workers' imports, before the clock
        stiffness = np.logspace(5, 8, points)
        rows, wall = run(stiffness, n_deck, n_tower, client)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    path = os.path.join(args.out, "bridge_cable_sweep.csv")
    write_csv(path, rows, FIELDS)
    print(f"wrote {path}")
    for r in rows:
        print(f"  k = {r['cable_k']:9.3g}  {CARS[r['car'] or None]:40s} {r['max_deflection_m']:.4g} m")
    if args.serial:
        t0 = time.perf_counter()
        for r in rows:
            max_deflection(r["cable_k"], r["car"] or None, n_deck, n_tower)
        serial = time.perf_counter() - t0
        print(
            f"{len(rows)} simulations: {wall:.2f} s on the cluster, {serial:.2f} s one after the other here "
            f"(x{serial / wall:.2f}, on a machine shared with other work)"
        )
    if not args.no_plot:
        p = plot(rows, args.out)
        if p:
            print(f"wrote {p}")
    return 0
