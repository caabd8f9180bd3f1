"""featherstone-part3's two efficiency techniques on this machine, each against Pinocchio in the
same run (the quantities its goals are stated in):

    python -m benchmarks speed [--repeat 9] [--out DIR] [--quick] [--no-plot] [--minv-only]

1. One robot per call, one thread: time of pinocchio.aba over that of treedyn's "aba" solver —
   generic, specialised (``specialise=True``: ABA generated as C++ for the model, treedyn.codegen)
   and specialised on ``td.simplify(model)`` (point masses moved towards the root) — on a 100-joint
   chain and on UR5, Panda, Solo12 (floating) and Talos (floating) from example-robot-data, with
   the multiplications and additions of one call for each (the counting scalar for the generic
   kernel, the emitted code's counts for the others).
2. Batches on 2 threads: time of pin.abaInParallel over that of treedyn's batched call, 4096
   robots of 7 joints and 256 of 200 (chains), generic and specialised in float64 and float32
   (the specialised batch runs several robots per vector register).
3. The full M⁻¹ ("drumwright", inverse_mass_matrix into out=) at n = 1000 (chain and random
   tree): time on 1 thread over time on 2, back to back and with calls 50 ms apart (alone, with
   no Pinocchio needed: --minv-only).

Each ratio is the median over --repeat samples alternating between the two sides (treedyn.util.timing
.speedup); a batch sample lasts ~50 ms (see batches()). Writes speed.csv, and speed.png when matplotlib is installed.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np

import treedyn as td
from treedyn.scenes import chain, random_tree
from treedyn.util.timing import speedup

from ._common import pyplot, save, write_csv

ROBOTS = {
    "ur5": ("ur_description/urdf/ur5_robot.urdf", False, "error"),
    "panda": ("panda_description/urdf/panda.urdf", False, "independent"),
    "solo12": ("solo_description/robots/solo12.urdf", True, "error"),
    "talos": ("talos_data/robots/talos_reduced.urdf", True, "independent"),
}


def models(quick: bool):
    """[(name, model, pinocchio callable maker)]: the chain through treedyn.peers.to_pinocchio, the
    robots through Pinocchio's own URDF parser (treedyn.peers.PinocchioFromFile)."""
    import pinocchio as pin

    from treedyn.tools.peers import PinocchioFromFile, example_robot_path, to_pinocchio

    n = 20 if quick else 100
    m = chain(n)
    pm = to_pinocchio(m)
    pd = pm.createData()
    out = [(f"chain{n}", m, lambda q, v, tau: lambda: pin.aba(pm, pd, q, v, tau))]
    for name, (path, floating, mimic) in ROBOTS.items():
        try:
            p = example_robot_path(path)
        except (ImportError, FileNotFoundError):
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = td.Model.from_urdf(p, floating_base=floating, mimic=mimic)
        out.append((name, model, PinocchioFromFile(model, p, floating).peer_call))
        if quick:
            break
    return out


def single_calls(repeat: int, quick: bool, log=print) -> list[dict]:
    import treedyn.solvers.codegen as codegen

    rows = []
    for name, model, peer_call in models(quick):
        rng = np.random.default_rng(0)
        q, v, tau = td.random_configuration(model, rng), rng.standard_normal(model.nv), rng.standard_normal(model.nv)
        f_pin = peer_call(q, v, tau)
        simplified = td.simplify(model)
        variants = {
            "generic": (model, td.make_solver("aba", model)),
            "specialised": (model, td.make_solver("aba", model, specialise=True)),
            "simplified+specialised": (simplified, td.make_solver("aba", simplified, specialise=True)),
        }
        for kernel, (m, solver) in variants.items():
            counts = codegen.op_counts(m)["generic" if kernel == "generic" else "specialised"]
            ratio = speedup(f_pin, lambda solver=solver: solver.forward_dynamics(q, v, tau), repeat)
            rows.append(
                {
                    "part": "single",
                    "model": name,
                    "nv": model.nv,
                    "kernel": kernel,
                    "dtype": "float64",
                    "threads": 1,
                    "ratio": round(ratio, 3),
                    "multiplications": counts["multiplications"],
                    "additions": counts["additions"],
                }
            )
            log(
                f"{name:9s} {kernel:23s} pinocchio.aba / treedyn = {ratio:5.2f}   "
                f"{counts['multiplications']:6d}m {counts['additions']:6d}a"
            )
    return rows


def batches(repeat: int, quick: bool, log=print) -> list[dict]:
    import pinocchio as pin

    from treedyn.tools.peers import to_pinocchio

    rows = []
    before = td.get_num_threads()
    td.set_num_threads(2)
    try:
        for B, n in [(256, 7), (32, 50)] if quick else [(4096, 7), (256, 200)]:
            model = chain(n)
            rng = np.random.default_rng(0)
            Q = np.stack([td.random_configuration(model, rng) for _ in range(B)])
            V, T = rng.standard_normal((B, n)), rng.standard_normal((B, n))
            pool = pin.ModelPool(to_pinocchio(model), 2)
            QT, VT, TT = (np.asfortranarray(x.T) for x in (Q, V, T))
            A = np.zeros((n, B))

            def f_pin(QT=QT, VT=VT, TT=TT, A=A, pool=pool):
                pin.abaInParallel(2, pool, QT, VT, TT, A)

            for kernel, dtype in [("generic", "float64"), ("specialised", "float64"), ("specialised", "float32")]:
                solver = td.make_solver("aba", model, specialise=kernel == "specialised", dtype=dtype)
                args = (Q.astype(dtype), V.astype(dtype), T.astype(dtype))
                for _ in range(5):  # the first calls on 2 threads build the thread team
                    solver.forward_dynamics(*args)
                # samples of ~50 ms: a call right after the peer's shares the 2 cores with its OpenMP
                # threads, which spin for milliseconds after their work (libgomp's default wait
                # policy: measured, our generic batch 3.1 ms back to back, 5.9 ms right after a
                # pin.abaInParallel call; Pinocchio's after ours: unchanged)
                ratio = speedup(f_pin, lambda solver=solver, args=args: solver.forward_dynamics(*args), repeat, 0.05)
                rows.append(
                    {
                        "part": "batch",
                        "model": f"{B}x{n}",
                        "nv": n,
                        "kernel": kernel,
                        "dtype": dtype,
                        "threads": 2,
                        "ratio": round(ratio, 3),
                    }
                )
                log(f"{B:5d} x {n:3d} {kernel:12s} {dtype}  pin.abaInParallel / treedyn = {ratio:5.2f}  (2 threads)")
    finally:
        td.set_num_threads(before)
    return rows


def inverse_threads(repeat: int, quick: bool, log=print) -> list[dict]:
    """M⁻¹ at n = 1000 into an out= array on 1 and 2 threads: back to back (samples of 20 calls,
    the thread counts alternating) and one call 50 ms after the last (the pool's workers asleep,
    the caches cold)."""
    n = 200 if quick else 1000
    rows = []
    before = td.get_num_threads()
    try:
        for name, model in [(f"chain{n}", chain(n)), (f"tree{n}", random_tree(n, 0))]:
            solver = td.make_solver("drumwright", model)
            q = td.random_configuration(model, np.random.default_rng(0))
            out = np.empty((model.nv, model.nv))
            for mode, calls, pause in [("back to back", 20, 0.0), ("50 ms apart", 1, 0.05)]:
                times = {1: [], 2: []}
                for _ in range(max(repeat, 3) * 3):
                    for k in (1, 2):
                        td.set_num_threads(k)
                        solver.inverse_mass_matrix(q, out=out)  # the thread count's first call
                        time.sleep(pause)
                        t0 = time.perf_counter()
                        for _ in range(calls):
                            solver.inverse_mass_matrix(q, out=out)
                        times[k].append((time.perf_counter() - t0) / calls)
                ratio = float(np.median(times[1]) / np.median(times[2]))
                rows.append(
                    {"part": f"minv ({mode})", "model": name, "nv": model.nv, "kernel": "drumwright",
                     "dtype": "float64", "threads": 2, "ratio": round(ratio, 3)}
                )  # fmt: skip
                log(
                    f"M⁻¹ {name:10s} {mode:12s} 1 thread {np.median(times[1]) * 1e3:.3f} ms, 2 threads "
                    f"{np.median(times[2]) * 1e3:.3f} ms: {ratio:.2f}x"
                )
    finally:
        td.set_num_threads(before)
    return rows


def plot(rows, out_dir, log=print):
    plt = pyplot(log)
    if plt is None:
        return
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.8))
    single = [r for r in rows if r["part"] == "single"]
    names = list(dict.fromkeys(r["model"] for r in single))
    kernels = list(dict.fromkeys(r["kernel"] for r in single))
    w = 0.8 / max(len(kernels), 1)
    for k, kernel in enumerate(kernels):
        ys = [next((r["ratio"] for r in single if r["model"] == m and r["kernel"] == kernel), 0) for m in names]
        axes[0].bar(np.arange(len(names)) + k * w, ys, w, label=f"treedyn aba, {kernel}")
    axes[0].set_xticks(np.arange(len(names)) + w * (len(kernels) - 1) / 2, names)
    axes[0].set_xlabel("robot")
    axes[0].set_ylabel("time(pinocchio.aba) / time(treedyn aba) [×]")
    axes[0].set_title("one robot per call, 1 thread")
    batch = [r for r in rows if r["part"] == "batch"]
    labels = [f"{r['model']}\n{r['kernel']}\n{r['dtype']}" for r in batch]
    axes[1].bar(range(len(batch)), [r["ratio"] for r in batch], color="C1", label="treedyn's batched aba")
    axes[1].set_xticks(range(len(batch)), labels, fontsize=7)
    axes[1].set_xlabel("batch: robots × joints, kernel, dtype")
    axes[1].set_ylabel("time(pin.abaInParallel) / time(treedyn) [×]")
    axes[1].set_title("batches, 2 threads")
    for ax in axes:
        ax.axhline(2, color="k", ls="--", lw=0.8, label="2× Pinocchio (goal)")
        ax.set_ylim(0, 1.4 * max([2.0, *(b.get_height() for b in ax.patches)]))  # room for the legend
        ax.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    log(f"wrote {save(fig, os.path.join(out_dir, 'speed.png'))}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks speed", description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=9)
    ap.add_argument("--out", default=".")
    ap.add_argument("--quick", action="store_true", help="small sizes, one robot (a smoke run)")
    ap.add_argument("--no-plot", action="store_true")
    ap.add_argument("--minv-only", action="store_true", help="only the M⁻¹ thread speedup (no pinocchio needed)")
    args = ap.parse_args(argv)
    if args.minv_only:
        inverse_threads(args.repeat, args.quick)
        return 0
    try:
        import pinocchio  # noqa: F401
    except ImportError:
        print("python -m benchmarks speed needs pinocchio (pip install pin)")
        return 1
    rows = single_calls(args.repeat, args.quick) + batches(args.repeat, args.quick)
    rows += inverse_threads(args.repeat, args.quick)
    os.makedirs(args.out, exist_ok=True)
    write_csv(os.path.join(args.out, "speed.csv"), rows, ["part", "model", "nv", "kernel", "dtype", "threads", "ratio",
                                                          "multiplications", "additions"])  # fmt: skip
    print(f"wrote {os.path.join(args.out, 'speed.csv')}")
    if not args.no_plot:
        plot(rows, args.out)
    return 0
