"""Analytic derivatives of the dynamics against Pinocchio in the same run:

    python -m benchmarks derivatives [--n 5 10 20 50 100 200] [--robots ur5 solo12 talos]
                                     [--repeat 60] [--out DIR] [--quick] [--no-plot]

Time per call, one thread, of td.rnea_derivatives (∂τ/∂q, ∂τ/∂v, M) and td.aba_derivatives
(∂q̈/∂q, ∂q̈/∂v, M⁻¹) against pinocchio.computeRNEADerivatives / computeABADerivatives on serial
chains of n revolute joints and on UR5 (fixed base, nv = 6), Solo12 (floating, nv = 18) and Talos
(floating, nv = 38) from example-robot-data. Pinocchio gets the same model through
treedyn.peers.to_pinocchio (the same q and v layout), and the same arrays. The two sides' samples
alternate (a drifting load affects both alike); each side's time is its minimum sample (the least
disturbed), and the ratio is Pinocchio's over treedyn's (above 1: treedyn is faster). Writes
derivatives.csv, and derivatives.png (time against nv, and the ratio) when matplotlib is installed.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np

import treedyn as td
from treedyn.scenes import chain

from ._common import log_ticks, pyplot, save, write_csv

ROBOTS = {
    "ur5": ("ur_description/urdf/ur5_robot.urdf", False, "error"),
    "solo12": ("solo_description/robots/solo12.urdf", True, "error"),
    "talos": ("talos_data/robots/talos_reduced.urdf", True, "independent"),
}
KINDS = {
    "rnea": ("rnea_derivatives", "computeRNEADerivatives"),
    "aba": ("aba_derivatives", "computeABADerivatives"),
}
FIELDS = ["model", "kind", "nv", "treedyn_s", "pinocchio_s", "ratio", "samples", "calls_per_sample"]


def _pinocchio():
    """(pinocchio, treedyn.peers.to_pinocchio), or None when Pinocchio is not installed."""
    try:
        import pinocchio

        from treedyn.tools.peers import to_pinocchio
    except ImportError:
        return None
    return pinocchio, to_pinocchio


def models(ns, robots, log=print):
    """[(name, model)]: chains of n joints, then the robots example-robot-data has."""
    out = [(f"chain{n}", chain(n)) for n in ns]
    for name in robots:
        path, floating, mimic = ROBOTS[name]
        try:
            from treedyn.tools.peers import example_robot_path

            p = example_robot_path(path)
        except (ImportError, FileNotFoundError) as e:
            log(f"{name}: skipped ({e})")
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out.append((name, td.Model.from_urdf(p, floating_base=floating, mimic=mimic)))
    return out


def interleaved(f_ours, f_peer, repeat: int, min_time: float):
    """(best ours, best peer, samples, calls per sample): `repeat` samples of each, alternating,
    each of as many calls as make the peer's first sample last min_time seconds."""
    f_ours(), f_peer()  # warm up (workspaces, caches)
    number = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(number):
            f_peer()
        if time.perf_counter() - t0 >= min_time or number >= 1 << 20:
            break
        number *= 2
    best = [np.inf, np.inf]
    for _ in range(repeat):
        for k, f in enumerate((f_ours, f_peer)):
            t0 = time.perf_counter()
            for _ in range(number):
                f()
            best[k] = min(best[k], (time.perf_counter() - t0) / number)
    return best[0], best[1], repeat, number


def measure(ns, robots, repeat: int, min_time: float = 5e-3, log=print) -> list[dict]:
    pin_api = _pinocchio()
    if pin_api is None:
        raise RuntimeError("this figure compares with Pinocchio: pip install pin (or treedyn[bench])")
    pin, to_pinocchio = pin_api
    rows = []
    before = td.get_num_threads()
    td.set_num_threads(1)
    try:
        for name, model in models(ns, robots, log):
            rng = np.random.default_rng(0)
            q, v, x = td.random_configuration(model, rng), rng.standard_normal(model.nv), rng.standard_normal(model.nv)
            pm = to_pinocchio(model)
            pd = pm.createData()
            for kind, (ours, theirs) in KINDS.items():
                f_ours = getattr(td, ours)
                f_pin = getattr(pin, theirs)
                t_ours, t_pin, samples, number = interleaved(
                    lambda: f_ours(model, q, v, x), lambda: f_pin(pm, pd, q, v, x), repeat, min_time
                )
                rows.append(
                    {
                        "model": name,
                        "kind": kind,
                        "nv": model.nv,
                        "treedyn_s": t_ours,
                        "pinocchio_s": t_pin,
                        "ratio": round(t_pin / t_ours, 3),
                        "samples": samples,
                        "calls_per_sample": number,
                    }
                )
                log(
                    f"{name:9s} nv={model.nv:4d} {kind:4s}  treedyn {t_ours * 1e6:9.2f} µs  "
                    f"pinocchio {t_pin * 1e6:9.2f} µs  pinocchio / treedyn = {t_pin / t_ours:5.2f}"
                )
    finally:
        td.set_num_threads(before)
    return rows


def plot(rows, path, log=print):
    plt = pyplot(log)
    if plt is None:
        return None
    fig, (ax_t, ax_r) = plt.subplots(1, 2, figsize=(11, 4.4), layout="constrained")
    colours = {"rnea": "tab:blue", "aba": "tab:red"}
    names = {"rnea": "∂τ (RNEA derivatives)", "aba": "∂q̈ (ABA derivatives)"}
    robot_markers = {"ur5": "s", "solo12": "^", "talos": "D"}
    for kind in KINDS:
        ch = sorted((r for r in rows if r["kind"] == kind and r["model"].startswith("chain")), key=lambda r: r["nv"])
        rb = [r for r in rows if r["kind"] == kind and not r["model"].startswith("chain")]
        c = colours[kind]
        if ch:
            nv = [r["nv"] for r in ch]
            ax_t.plot(
                nv, [r["treedyn_s"] * 1e6 for r in ch], "-o", color=c, ms=4, label=f"treedyn {names[kind]}, chains"
            )
            ax_t.plot(
                nv,
                [r["pinocchio_s"] * 1e6 for r in ch],
                "--o",
                color=c,
                ms=4,
                mfc="none",
                label=f"Pinocchio {names[kind]}, chains",
            )
            ax_r.plot(nv, [r["ratio"] for r in ch], "-o", color=c, ms=4, label=f"{names[kind]}, chains")
        for r in rb:
            m = robot_markers.get(r["model"], "P")
            ax_t.plot([r["nv"]], [r["treedyn_s"] * 1e6], m, color=c, ms=7, linestyle="none")
            ax_t.plot([r["nv"]], [r["pinocchio_s"] * 1e6], m, color=c, ms=7, mfc="none", linestyle="none")
            ax_r.plot([r["nv"]], [r["ratio"]], m, color=c, ms=7, linestyle="none", label=f"{names[kind]}, {r['model']}")
    ax_t.set_xscale("log")
    ax_t.set_yscale("log")
    ax_t.set_xlabel("degrees of freedom nv [count]")
    ax_t.set_ylabel("time per call [µs]")
    ax_t.set_title("time per call, one thread (filled: treedyn, open: Pinocchio)", fontsize=10)
    log_ticks(ax_t.xaxis)
    log_ticks(ax_t.yaxis)
    for name in dict.fromkeys(r["model"] for r in rows if not r["model"].startswith("chain")):
        ax_t.plot([], [], robot_markers.get(name, "P"), color="0.4", ms=6, linestyle="none", label=name)
    ax_t.legend(fontsize=7, loc="upper left")
    ax_r.axhline(1.0, color="0.3", lw=0.8)
    ax_r.axhline(1.5, color="0.6", lw=0.8, ls=":")
    ax_r.set_xscale("log")
    ax_r.set_xlabel("degrees of freedom nv [count]")
    ax_r.set_ylabel("Pinocchio time / treedyn time [ratio]")
    ax_r.set_title("above 1: treedyn faster (dotted: the 1.5× goal)", fontsize=10)
    log_ticks(ax_r.xaxis)
    ax_r.legend(fontsize=7, loc="best")
    return save(fig, path)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks derivatives", description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, nargs="+", help="chain lengths (default 5 10 20 50 100 200)")
    ap.add_argument("--robots", nargs="*", choices=sorted(ROBOTS), help="default: ur5 solo12 talos")
    ap.add_argument("--repeat", type=int, help="samples per side (default 60; --quick 3)")
    ap.add_argument("--out", default=".", help="directory for the CSV and PNG files")
    ap.add_argument("--quick", action="store_true", help="chains of 5 and 20 joints, UR5, 3 samples of ~1 ms")
    ap.add_argument("--no-plot", action="store_true")
    args = ap.parse_args(argv)
    ns = args.n or ([5, 20] if args.quick else [5, 10, 20, 50, 100, 200])
    robots = args.robots if args.robots is not None else (["ur5"] if args.quick else list(ROBOTS))
    repeat = args.repeat or (3 if args.quick else 60)
    os.makedirs(args.out, exist_ok=True)
    rows = measure(ns, robots, repeat, 1e-3 if args.quick else 1e-2)
    write_csv(os.path.join(args.out, "derivatives.csv"), rows, FIELDS)
    if not args.no_plot:
        plot(rows, os.path.join(args.out, "derivatives.png"))
    return 0
