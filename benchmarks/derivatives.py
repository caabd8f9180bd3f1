"""Analytic derivatives against Pinocchio in the same process, one thread (issue 18's judged speed):

    python -m benchmarks derivatives [--repeat 21] [--min-time 0.005] [--out DIR]

For a 50-joint revolute chain, UR5, Solo12 (floating) and Talos (floating): time of Pinocchio's
computeRNEADerivatives / computeABADerivatives (its Python API, its Data made once) over that of
td.rnea_derivatives / td.aba_derivatives (the one-shot functions: the engine and its workspace are
cached per model, the three outputs are new arrays each call), Python call overhead included on
both sides. Samples alternate between the two (each lasts about --min-time); printed: the ratio of
the minima (the least disturbed samples) and of the medians, above 1 when treedyn is faster. The
calls are asv_benchmarks/derivatives.py's. Writes derivatives.csv.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

import treedyn as td

from ._common import write_csv

MODELS = ["chain50", "ur5", "solo12", "talos"]


def _calls(name, kind):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if root not in sys.path:
        sys.path.insert(0, root)
    from asv_benchmarks.derivatives import _calls as calls

    return calls(name, kind)


def interleaved(f_peer, f_ours, repeat: int, min_time: float):
    """(min, median) seconds per call of f_peer and of f_ours, from `repeat` samples each taken in
    turn; a sample runs the number of calls that makes the peer's last about min_time."""
    for f in (f_peer, f_ours):  # warm up
        for _ in range(3):
            f()
    number = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(number):
            f_peer()
        if time.perf_counter() - t0 >= min_time:
            break
        number *= 2
    t_peer, t_ours = [], []
    for _ in range(repeat):
        for f, out in ((f_peer, t_peer), (f_ours, t_ours)):
            t0 = time.perf_counter()
            for _ in range(number):
                f()
            out.append((time.perf_counter() - t0) / number)
    return (min(t_peer), float(np.median(t_peer))), (min(t_ours), float(np.median(t_ours)))


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m benchmarks derivatives", description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=21)
    ap.add_argument("--min-time", type=float, default=0.005)
    ap.add_argument("--models", nargs="*", default=MODELS, choices=MODELS)
    ap.add_argument("--kinds", nargs="*", default=["rnea", "aba"], choices=["rnea", "aba"])
    ap.add_argument("--out", default=".")
    args = ap.parse_args(argv)
    before = td.get_num_threads()
    td.set_num_threads(1)
    rows = []
    try:
        print(
            f"{'model':8s} {'kind':5s} {'pinocchio µs':>13s} {'treedyn µs':>11s} {'ratio(min)':>11s} {'ratio(med)':>11s}"
        )
        for name in args.models:
            for kind in args.kinds:
                try:
                    ours, peer = _calls(name, kind)
                except NotImplementedError as e:
                    print(f"{name:8s} {kind:5s} skipped: {e}")
                    continue
                (pmin, pmed), (omin, omed) = interleaved(peer, ours, args.repeat, args.min_time)
                rows.append(
                    dict(
                        model=name,
                        kind=kind,
                        pinocchio_min_s=pmin,
                        pinocchio_median_s=pmed,
                        treedyn_min_s=omin,
                        treedyn_median_s=omed,
                        ratio_min=pmin / omin,
                        ratio_median=pmed / omed,
                    )
                )
                print(
                    f"{name:8s} {kind:5s} {pmin * 1e6:13.2f} {omin * 1e6:11.2f} {pmin / omin:11.2f} {pmed / omed:11.2f}",
                    flush=True,
                )
    finally:
        td.set_num_threads(before)
    os.makedirs(args.out, exist_ok=True)
    if rows:
        write_csv(os.path.join(args.out, "derivatives.csv"), rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
