"""drumwright2012 Fig. 2 and Fig. 3 on this machine, and (--counts) Tables 1 and 2.

    python -m benchmarks drumwright [--n 10 20 50 100 200 300 500 1000] [--threads 1 2]
                                       [--repeat 7] [--out DIR] [--counts] [--quick]

Time of the full M⁻¹ from q against n, for
  serial chains of n revolute joints (``treedyn.scenes.chain``), and
  branched bodies of expected depth n/2 built as drumwright2012 §6.1 does: each new link is added
  at the end of the chain, or with probability 0.5 as a sibling of the last link (never more than
  two children per link),
by
  drumwright      treedyn's Θ(n²) method (Alg. 1/2, all columns at once), 1 and 2 threads
  crba-cholesky   CRBA + dense Cholesky (Eigen LLᵀ) + n back-substitutions (threads: no effect)
  crba-ltl        CRBA + Featherstone's branch-induced-sparsity LTL + n back-substitutions (columns in parallel)
  pinocchio       Pinocchio's computeMinverse (upper triangle only; same model through treedyn.peers)
  mujoco          MuJoCo's mj_kinematics, mj_comPos, mj_crb, mj_factorM, mj_solveM(1) on the same
                  tree of hinges built here with MuJoCo's model-spec API (MJCF's compiled form; not
                  the same inertias and placements as treedyn's model: for timing only; armature 0)
Each time is the minimum over --repeat samples (a sample averages enough calls to last ~5 ms);
the median is written to the CSV too. Writes drumwright2012.csv always and drumwright2012_fig2.png,
drumwright2012_fig3.png when matplotlib is installed. Prints the fitted log-log slopes (n = 100 to
1000), the crossover n against each other method, the ratio to Pinocchio at n = 300 and the
2-thread speedup at n = 1000.
"""

from __future__ import annotations

import argparse
import os
import platform
from collections.abc import Callable

import numpy as np

import treedyn as td
from treedyn.model import Inertia, Model, Revolute, Transform
from treedyn.scenes import chain

from ._common import crossover, log_ticks, pyplot, save, slope, time_call, write_csv

#: one call slower than this (s) stops a method's sweep at larger n
SLOW_CALL = 2.0
#: Pinocchio's Data grows as n²-ish (2 GB at n = 300, 5 GB at 400 on this machine): not above this
PINOCCHIO_MAX_N = 400


# ---------------------------------------------------------------------------------------------
# models


def branched(n: int, seed: int = 0) -> Model:
    """drumwright2012 §6.1: each new link is added at the end of the chain or, with probability
    0.5, as a sibling of another link (a random link whose parent has fewer than two children), so
    that no link has more than two children and the depth is n/2 in expectation. The links are then
    numbered depth-first (treedyn's order: every subtree a contiguous range)."""
    rng = np.random.default_rng(seed)
    parent = [-1, 0]  # link 1 starts the chain (0: the world)
    kids = {0: [1], 1: []}
    end = 1
    for i in range(2, n + 1):
        p = end
        if rng.uniform() < 0.5:
            room = [x for x in range(1, i) if parent[x] > 0 and len(kids[parent[x]]) < 2]
            if room:
                p = parent[room[int(rng.integers(len(room)))]]
        parent.append(p)
        kids[p].append(i)
        kids[i] = []
        if p == end:
            end = i
    model = Model()
    rod = Inertia.box(1.0, (0.1, 0.01, 0.01), com=(0.05, 0, 0))
    number = {0: 0}
    stack = list(reversed(kids[0]))
    while stack:
        x = stack.pop()
        k = len(number)
        axis = (0, 0, 1) if k % 2 else (0, 1, 0)
        number[x] = model.add_body(
            f"link{k}", number[parent[x]], Revolute(axis), Transform(translation=(0.1 if parent[x] else 0.0, 0, 0)), rod
        )
        stack.extend(reversed(kids[x]))
    return model


def depth(model: Model) -> int:
    parents = model.parents
    d = [0] * model.n_bodies
    for i in range(1, model.n_bodies):
        d[i] = d[parents[i]] + 1
    return max(d)


def mujoco_model(model: Model):
    """The same tree of hinges for MuJoCo (same parents and axes; not the same inertias and
    placements), built with MuJoCo's model-spec API, which is what an MJCF file compiles to
    (``spec.to_xml()`` prints it). Not an XML string: MuJoCo's XML parser refuses bodies nested
    more than ~500 deep, and a serial chain of n links is nested n deep."""
    import mujoco

    spec = mujoco.MjSpec()
    bodies = [spec.worldbody]
    parents = model.parents
    for i in range(1, model.n_bodies):
        p = int(parents[i])
        b = bodies[p].add_body(
            name=f"b{i}", pos=[0.1 if p else 0.0, 0, 0], mass=1.0, ipos=[0.05, 0, 0], inertia=[1e-4, 8.4e-4, 8.4e-4]
        )
        b.add_joint(name=f"j{i}", type=mujoco.mjtJoint.mjJNT_HINGE, axis=list(model.joints[i].axis), armature=0.0)
        bodies.append(b)
    return spec.compile()


# ---------------------------------------------------------------------------------------------
# the timed calls (each returns a no-argument function computing M⁻¹ from q, or None)


def treedyn_call(name: str, model: Model, q):
    solver = td.make_solver(name, model)
    return lambda: solver.inverse_mass_matrix(q)


def pinocchio_call(model: Model, q):
    try:
        import pinocchio as pin

        from treedyn.tools.peers import to_pinocchio
    except ImportError:
        return None
    if model.nv > PINOCCHIO_MAX_N:
        return None
    pm = to_pinocchio(model)
    pd = pm.createData()
    return lambda: pin.computeMinverse(pm, pd, q)


def mujoco_call(model: Model, q):
    try:
        import mujoco
    except ImportError:
        return None
    m = mujoco_model(model)
    d = mujoco.MjData(m)
    d.qpos[:] = q
    eye = np.eye(m.nv)
    X = np.empty_like(eye)

    def call():
        mujoco.mj_kinematics(m, d)
        mujoco.mj_comPos(m, d)
        mujoco.mj_crb(m, d)
        mujoco.mj_factorM(m, d)
        mujoco.mj_solveM(m, d, X, eye)
        return X

    return call


def measure(call: Callable, repeat: int) -> tuple[float, float, float]:
    """(min, median, first call) seconds per call; a sample lasts >= 5 ms (a call slower than
    SLOW_CALL is timed once)."""
    t = time_call(call, repeat, min_time=5e-3, slow=SLOW_CALL)
    return t.best, t.median, t.first


# ---------------------------------------------------------------------------------------------


def run(ns: list[int], threads: list[int], repeat: int, log=print) -> list[dict]:
    rows: list[dict] = []
    too_slow: dict[tuple[str, str, int], bool] = {}
    before = td.get_num_threads()
    try:
        for kind, make in (("serial", chain), ("branched", branched)):
            for n in ns:
                model = make(n)
                q = td.random_configuration(model, np.random.default_rng(n))
                d = depth(model)
                jobs = []
                for name in ("drumwright", "crba-cholesky", "crba-ltl"):
                    for k in threads if name != "crba-cholesky" else threads[:1]:
                        jobs.append((name, k, lambda name=name: treedyn_call(name, model, q)))
                jobs.append(("pinocchio", 1, lambda: pinocchio_call(model, q)))
                jobs.append(("mujoco", 1, lambda: mujoco_call(model, q)))
                for name, k, make_call in jobs:
                    if too_slow.get((kind, name, k)):
                        continue
                    td.set_num_threads(k)
                    call = make_call()
                    if call is None:
                        continue
                    tmin, tmed, first = measure(call, repeat)
                    if first > SLOW_CALL:
                        too_slow[(kind, name, k)] = True
                        log(
                            f"  {kind} n={n} {name} ({k} thread{'s' if k > 1 else ''}): one call takes "
                            f"{first:.2f} s; not measured at larger n"
                        )
                    rows.append(
                        dict(
                            model=kind,
                            n=n,
                            nv=model.nv,
                            depth=d,
                            method=name,
                            threads=k,
                            time_min_s=tmin,
                            time_median_s=tmed,
                            repeats=repeat,
                        )
                    )
                    del call
                log(
                    f"{kind:8s} n={n:5d} depth={d:5d}  "
                    + "  ".join(
                        f"{r['method']}/{r['threads']}={r['time_min_s'] * 1e3:.3g}ms"
                        for r in rows
                        if r["model"] == kind and r["n"] == n
                    )
                )
    finally:
        td.set_num_threads(before)
    return rows


def series(rows, kind, method, threads) -> tuple[np.ndarray, np.ndarray]:
    pts = sorted(
        (r["n"], r["time_min_s"])
        for r in rows
        if r["model"] == kind and r["method"] == method and r["threads"] == threads
    )
    return np.array([p[0] for p in pts], dtype=float), np.array([p[1] for p in pts])


def summarize(rows, threads, log=print) -> dict:
    out = {}
    log("\nlog-log slope of the time of M⁻¹, n = 100 .. 1000 (minimum over the repeats):")
    for kind in ("serial", "branched"):
        for method in ("drumwright", "crba-cholesky", "crba-ltl", "pinocchio", "mujoco"):
            for k in threads:
                n, t = series(rows, kind, method, k)
                if len(n) == 0:
                    continue
                s = slope(n, t, 100, 1000)
                out[(kind, method, k, "slope")] = s
                log(
                    f"  {kind:8s} {method:14s} {k} thread{'s' if k > 1 else ' '}: "
                    + ("n/a (fewer than 2 points in 100..1000)" if s is None else f"{s:.2f}")
                    + f"   [{n.min():.0f} .. {n.max():.0f}]"
                )
    log("\ncrossover (drumwright, 1 thread, against):")
    for kind in ("serial", "branched"):
        n1, t1 = series(rows, kind, "drumwright", threads[0])
        for method in ("crba-cholesky", "crba-ltl", "pinocchio", "mujoco"):
            n2, t2 = series(rows, kind, method, threads[0] if method == "crba-ltl" else 1)
            if len(n2):
                c = crossover(list(n1), list(t1), list(n2), list(t2))
                out[(kind, method, "crossover")] = c
                log(f"  {kind:8s} {method:14s}: {c}")
    for k in threads:
        npin, tpin = series(rows, "serial", "pinocchio", 1)
        nd, tdw = series(rows, "serial", "drumwright", k)
        if 300 in npin and 300 in nd:
            r = tpin[list(npin).index(300)] / tdw[list(nd).index(300)]
            out[("ratio_pinocchio_300", k)] = r
            log(
                f"Pinocchio computeMinverse / drumwright ({k} thread{'s' if k > 1 else ''}) at n = 300, serial: {r:.2f}x"
            )
    if len(threads) > 1:
        n1, t1 = series(rows, "serial", "drumwright", threads[0])
        n2, t2 = series(rows, "serial", "drumwright", threads[1])
        nmax = max(set(n1) & set(n2)) if set(n1) & set(n2) else None
        if nmax:
            sp = t1[list(n1).index(nmax)] / t2[list(n2).index(nmax)]
            out[("speedup", nmax)] = sp
            log(f"drumwright {threads[1]} threads vs {threads[0]} at n = {nmax:.0f}, serial: {sp:.2f}x")
    return out


def plot(rows, threads, out_dir, log=print) -> list[str]:
    plt = pyplot(log)
    if plt is None:
        return []
    paths = []
    styles = {
        "drumwright": ("C3", "-."),
        "crba-cholesky": ("C0", "-"),
        "crba-ltl": ("C2", "--"),
        "pinocchio": ("C4", ":"),
        "mujoco": ("C1", ":"),
    }
    # Fig. 2: the methods on serial chains, and the branched bodies
    fig, ax = plt.subplots(figsize=(6.4, 4.8))
    k1 = threads[0]
    for method, (color, ls) in styles.items():
        for kind, marker in (("serial", None), ("branched", "D")):
            n, t = series(rows, kind, method, k1 if method in ("drumwright", "crba-ltl") else 1)
            if len(n) == 0:
                continue
            ax.loglog(
                n,
                t,
                color=color,
                ls=ls if kind == "serial" else "none",
                marker=marker,
                ms=4,
                label=f"{method} ({kind}{', depth ~n/2' if kind == 'branched' else ''})",
            )
    ax.set_xlabel("joints n [count]")
    ax.set_ylabel(f"time of M⁻¹ from q [s], {k1} thread")
    ax.set_title("drumwright2012 Fig. 2 on this machine")
    log_ticks(ax.xaxis)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    paths.append(save(fig, os.path.join(out_dir, "drumwright2012_fig2.png")))
    # Fig. 3: Cholesky against drumwright with 1, 2 threads
    fig, ax = plt.subplots(figsize=(6.4, 4.8))
    n, t = series(rows, "serial", "crba-cholesky", threads[0])
    ax.loglog(n, t, color="C0", ls="-", label="CRBA + Cholesky (Eigen LLᵀ)")
    for k, ls in zip(threads, ("-.", "--", ":")):
        n, t = series(rows, "serial", "drumwright", k)
        ax.loglog(n, t, color="C3", ls=ls, label=f"drumwright, {k} thread{'s' if k > 1 else ''}")
    ax.set_xlabel("joints n [count]")
    ax.set_ylabel("time of M⁻¹ from q [s]")
    ax.set_title("drumwright2012 Fig. 3 on this machine (serial chains)")
    log_ticks(ax.xaxis)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    paths.append(save(fig, os.path.join(out_dir, "drumwright2012_fig3.png")))
    return paths


# ---------------------------------------------------------------------------------------------
# Tables 1 and 2


def _fit(counts, ns, stage, k) -> np.ndarray:
    y = np.array([counts[n][stage][k] for n in ns], dtype=float)
    deg = 3 if stage in ("cholesky", "cholesky_inverse", "ltl", "ltl_inverse") else 2
    return np.polyfit(ns, y, deg)


def _poly(c) -> str:
    deg = len(c) - 1
    terms = []
    for p, x in zip(range(deg, -1, -1), c):
        x = round(float(x), 2)
        if abs(x) < 1e-9:
            continue
        terms.append(f"{x:g}" + ("" if p == 0 else "n" if p == 1 else f"n{'²³'[p - 2]}"))
    return " + ".join(terms).replace("+ -", "- ") or "0"


def counts_table(log=print) -> dict:
    from treedyn import _core

    ns = (8, 16, 32, 64)
    counts = {n: _core._minv_op_counts(n) for n in ns}
    fits = {(s, k): _fit(counts, ns, s, k) for s in counts[ns[0]] for k in (0, 1)}
    log("Operation counts, fixed-base serial chain of n revolute joints (counting scalar; sin/cos, sqrt,")
    log("divisions not counted as multiplications: treedyn's divisions are n per configuration).")
    log("\ndrumwright2012 Table 1 (Θ(n²) inversion, Alg. 1) beside treedyn:")
    rows = [
        (
            "ŝ, Î in the global frame",
            "24n + 84n",
            "6n + 57n",
            "global_frame",
            "treedyn's from q: the transforms ^iX_0 too",
        ),
        ("articulated inertias Î^A", "108n", "107n", "articulated", "with Î^Aŝ, ŝᵀÎ^Aŝ, Ũ"),
        ("impulse propagation (l. 4-5)", "13n²", "13n²", "impulse", "R = 1, from joint k (§5.2)"),
        ("velocity updates (l. 7-10)", "19n²/2", "26n²/2", "velocity", "ŝᵀŶ kept from line 5"),
        ("total Alg. 1", "45n²/2 + 216n", "26n² + 170n", None, ""),
    ]
    log(f"  {'operation':32s} {'paper ×':>16s} {'treedyn ×':>18s} {'paper +':>14s} {'treedyn +':>18s}")
    for label, pm, pa, stage, note in rows:
        if stage is None:
            m = sum(fits[(s, 0)] for s in ("global_frame", "articulated", "impulse", "velocity"))
            a = sum(fits[(s, 1)] for s in ("global_frame", "articulated", "impulse", "velocity"))
        else:
            m, a = fits[(stage, 0)], fits[(stage, 1)]
        log(f"  {label:32s} {pm:>16s} {_poly(m):>18s} {pa:>14s} {_poly(a):>18s}  {note}")
    log(
        f"  {'treedyn full M⁻¹ (mInv)':32s} {'':>16s} {_poly(fits[('mInv', 0)]):>18s} {'':>14s} "
        f"{_poly(fits[('mInv', 1)]):>18s}  upper triangle + cross-branch dot products, mirrored"
    )
    log("\ndrumwright2012 Table 2 (CRBA + Cholesky) beside treedyn:")
    rows2 = [
        ("CRBA (M)", "3n² + 145n (global frame)", "crba", "link frame, compact transforms: Xᵀf per pair"),
        ("Cholesky factorisation", "n³/2 + n²/2 + n (naive)", "cholesky", "Eigen LLᵀ (blocked)"),
        ("M⁻¹ from LLᵀ (n solves)", "—", "cholesky_inverse", "not in Table 2"),
        ("LTL (Featherstone 2005)", "—", "ltl", "a chain: depth n, no sparsity"),
        ("M⁻¹ from LTL (n solves)", "—", "ltl_inverse", ""),
    ]
    for label, paper, stage, note in rows2:
        log(f"  {label:28s} paper: {paper:28s} treedyn: {_poly(fits[(stage, 0)]):>24s} ×  {note}")
    return {"counts": counts, "fits": fits}


# ---------------------------------------------------------------------------------------------


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks drumwright", description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, nargs="+", default=[10, 20, 50, 100, 200, 300, 500, 1000])
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--repeat", type=int, default=9)
    ap.add_argument("--out", default=".", help="directory for the CSV and PNG files")
    ap.add_argument("--counts", action="store_true", help="print the operation counts beside Tables 1 and 2")
    ap.add_argument("--counts-only", action="store_true", help="only the operation counts")
    ap.add_argument("--quick", action="store_true", help="n = 10, 30, 100, 300; 3 repeats")
    ap.add_argument("--no-plot", action="store_true")
    args = ap.parse_args(argv)
    if args.counts or args.counts_only:
        counts_table()
        if args.counts_only:
            return 0
        print()
    if args.quick:
        args.n, args.repeat = [10, 30, 100, 300], 3
    if any(k < 1 for k in args.threads) or any(n < 1 for n in args.n):
        ap.error("--n and --threads must be positive")
    os.makedirs(args.out, exist_ok=True)
    info = td.build_info()
    print(
        f"treedyn {td.__version__}: OpenMP {info['openmp']} (max threads {info['max_threads']}), "
        f"M⁻¹ loops {info.get('minv_kernels', '?')}, {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} CPUs; times: minimum of {args.repeat} samples"
    )
    print(
        "MuJoCo's model is the same tree of hinges built here with mujoco.MjSpec (other inertias and "
        "placements, armature 0): timing only. Pinocchio's computeMinverse fills the upper triangle only; "
        f"not run above n = {PINOCCHIO_MAX_N} (its Data takes GBs)."
    )
    rows = run(sorted(set(args.n)), args.threads, args.repeat)
    path = os.path.join(args.out, "drumwright2012.csv")
    write_csv(path, rows)
    print(f"\nwrote {path}")
    summarize(rows, args.threads)
    if not args.no_plot:
        for p in plot(rows, args.threads, args.out):
            print(f"wrote {p}")
    return 0
