"""drumwright2012 Fig. 4 (§6.3): time per simulation step of a walking centipede against its size.

    python -m benchmarks centipede [--segments 5 10 25 50 100 175 250] [--repeat 5] [--warmup 1]
                                      [--budget 20] [--fit-min 25] [--out DIR] [--quick] [--no-plot]

The centipede of ``treedyn.scenes.centipede(n)`` (n body segments, 2 legs each: 2n legs, 2n feet
on the ground, nv = 11n + 3) walks by its gait (``scene.tau``) on the plane. From the scene's
standing state (every foot touches the ground from the first step) --warmup untimed steps, then
whole ``td.ContactSimulator`` steps of explicit Euler at h = 1e-5, as the paper's experiment
(collision, the free motion, the contact-space inertia NᵀM⁻¹N, NᵀM⁻¹D, DᵀM⁻¹D, the two
maximum-dissipation QPs, the integration), one thread, with the contact-space inertia (M⁻¹[N D]
and the product with [N D]ᵀ) computed by
  drumwright      treedyn's Θ(n²) method (drumwright2012 Alg. 1, a column per contact direction)
  crba-cholesky   CRBA + dense Cholesky (Eigen LLᵀ) and a back-substitution per column
  crba-ltl        CRBA + Featherstone's LTL with branch-induced sparsity, a back-substitution per column
(the same solver gives the free motion: ABA for drumwright, CRBA + its factorisation for the
others), and, as a peer in the same process,
  mujoco          MuJoCo's ``mj_step`` on the same centipede (``model.to_mjcf()``: same bodies,
                  inertias, joints, feet and ground), the same h and the same gait torques
                  (``qfrc_applied``, set untimed before each step); MuJoCo's defaults otherwise
                  (Newton solver, pyramidal cones of condim 3, soft constraints, its semi-implicit
                  Euler): the same task, not the same contact model.
The gait's torques are computed outside the timed step for both. Timing: ``treedyn.util.timing.
time_call`` drives the steps (samples of at least 50 ms, a pause between samples, the first call
left out); each phase of the CSV is its minimum over the timed steps, the total the minimum of the
whole steps (at least the sum of the phases' minima), total_median_s their median. Each size gets
at most ~--budget seconds per method (at least 2 timed steps).

Writes drumwright2012_fig4.csv and, with matplotlib, drumwright2012_fig4.png (log-log: the
contact-space inertia alone; the whole step with MuJoCo's). Prints the log-log slopes (against the
number of legs, sizes >= --fit-min segments), the crossovers, the ratio of the contact-space
inertia by dense Cholesky over drumwright at the largest size beside the paper's claim (about an
order of magnitude), the whole step against MuJoCo's and where the step's time goes. The
contact_inertia phase is everything between the free motion and the QPs: the contact directions
N, D (Jacobians walked to the root: the same for every method), M⁻¹[N D] by the method, and the
product [N D]ᵀM⁻¹[N D] (inverse._contact_product, the same for every method: it uses the columns'
supports, ~6x fewer operations than the dense product at 250 segments, which would otherwise
take ~0.8 s there and hide the methods' difference).

What this machine found (2 shared cores, load average ~3, one thread; defaults):
  segments (nv)     contact-space inertia (ms)          whole step (ms)
                    drumwright  Cholesky     LTL        drumwright  Cholesky  LTL     MuJoCo
  50 (553)          14          34           70         95          106       132     2.9
  100 (1103)        64          224          491        425         634       892     17
  250 (2753)        427         3337         12903      5659        8841      18812   224
  slopes (legs >= 50): contact-space inertia 2.24, 2.80, 3.16; whole step 2.55, 2.60, 2.89; MuJoCo 2.60
  At 250 segments the contact-space inertia by dense Cholesky takes 7.8x drumwright's (LTL 30x;
  the paper: about an order of magnitude); drumwright is faster than both from the smallest size.
  The whole step is dominated by the two dense ProxQP solves (92% of drumwright's at 250
  segments, m = 2500 variables): drumwright's step is 1.6x faster than Cholesky's, but 25x slower
  than MuJoCo's mj_step (its sparse Newton solver on soft contacts: not the same contact model).
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np

import treedyn as td
from treedyn.scenes import centipede

from ._common import crossover, log_ticks, pyplot, save, slope, time_call, write_csv

H = 1e-5  # drumwright2012 §6.3: explicit Euler at h = 1e-5
METHODS = ("drumwright", "crba-cholesky", "crba-ltl", "admm")
#: the method that is the C++ step (ContactSimulator(contact_solver="admm"): ADMM on the tree
#: Delassus operator, G never formed); the others form G by the named solver and solve by ProxQP
ENGINE = "admm"
DENSE = METHODS[:3]  # the methods that form G (the contact-space inertia columns and crossovers)
PEER = "mujoco"
PHASES = ("collision", "dynamics", "contact_inertia", "qp", "integrate")
FIELDS = [
    "segments",
    "legs",
    "nv",
    "contacts",
    "method",
    *(f"{p}_s" for p in PHASES),
    "total_s",
    "total_median_s",
    "steps",
    "qp_iterations",
]
SIZES = [5, 10, 25, 50, 100, 175, 250]
QUICK_SIZES = [2, 3, 5]
#: samples of at least this many seconds (time_call's min_time), a pause of PAUSE between them
MIN_TIME, PAUSE = 0.05, 0.05
PAPER = "about an order of magnitude faster (drumwright2012 §6.3, Fig. 4)"


# ---------------------------------------------------------------------------------------------
# the timed steps


def _timed(step, seconds_of, repeat: int, warmup: int, budget: float) -> list:
    """warmup untimed steps (at least one: its duration sets the samples), then step() under
    time_call with at most ~budget seconds of steps (at least 2 timed steps after time_call's first
    call, which is left out); returns what seconds_of gives for each timed step."""
    out = []

    def call():
        out.append(seconds_of(step()))

    for _ in range(max(warmup, 1)):
        t0 = time.perf_counter()
        step()
        per_step = time.perf_counter() - t0
    repeat = max(2, min(repeat, int(budget / max(per_step, 1e-9))))
    time_call(call, repeat=repeat, min_time=MIN_TIME, pause=PAUSE)
    return out[1:]


def simulator(scene, method: str, h: float = H, integrator: str = "euler"):
    """The ContactSimulator of a method: the C++ step (ENGINE) or G by a solver and ProxQP."""
    if method == ENGINE:
        return td.ContactSimulator(scene.model, h, integrator=integrator, contact_solver=ENGINE)
    return td.ContactSimulator(scene.model, h, solver=method, integrator=integrator, contact_solver="proxqp")


def _phase(step, p):
    """A phase's seconds; the C++ step's contact phase (rows, ADMM, M⁻¹Jᵀz) stands in the qp column."""
    if p == "qp" and "contact" in step.phases:
        return step.phases["contact"]
    return step.phases.get(p, np.nan)


def treedyn_row(scene, method: str, repeat: int, warmup: int, budget: float) -> dict:
    sim = simulator(scene, method)
    state = scene.initial_state()
    gait = scene.tau

    def step():
        return sim.step(state, gait(state.t, state.q, state.v))

    steps = _timed(step, lambda s: s, repeat, warmup, budget)
    total = np.array([s.seconds for s in steps])
    n = scene.info["n_segments"]
    return dict(
        segments=n,
        legs=2 * n,
        nv=scene.model.nv,
        contacts=max(s.n_contacts for s in steps),  # the most over the timed steps: their number follows the clock
        method=method,
        **{
            f"{p}_s": "" if method == ENGINE and p == "contact_inertia" else min(_phase(s, p) for s in steps)
            for p in PHASES
        },
        total_s=float(total.min()),
        total_median_s=float(np.median(total)),
        steps=len(steps),
        qp_iterations=max(s.qp_iterations for s in steps),
    )


class MujocoCentipede:
    """MuJoCo's model of the scene's centipede (``model.to_mjcf()``) at h, started from the scene's
    state, with treedyn's gait: ``step()`` sets qfrc_applied from the gait (untimed) and returns
    the seconds of one mj_step. q, v and τ map by treedyn.peers' block maps (PeerCoordinates:
    ``from_peer`` for the state, τ_peer = T τ for the torques)."""

    def __init__(self, scene, h: float = H):
        import mujoco

        from treedyn.tools.peers import MujocoFromFile

        self.mj = mujoco
        model, state = scene.model, scene.initial_state()
        xml = model.to_mjcf(scene.name.replace(":", "_"))
        self.coords = MujocoFromFile(model, xml)  # the maps (its own MjModel has contacts off: not stepped)
        self.m = mujoco.MjModel.from_xml_string(xml)
        self.m.opt.timestep = h
        self.d = mujoco.MjData(self.m)
        self.gait = scene.tau
        self.d.qpos[:] = self.coords.q(state.q)
        self.d.qvel[:] = self.coords.apply_T(state.q, state.v)
        mujoco.mj_forward(self.m, self.d)

    def step(self) -> float:
        d = self.d
        q, v = self.coords.from_peer(d.qpos, d.qvel)
        d.qfrc_applied[:] = self.coords.apply_T(q, self.gait(d.time, q, v))  # τ_peer = T⁻ᵀτ = Tτ
        t0 = time.perf_counter()
        self.mj.mj_step(self.m, d)
        return time.perf_counter() - t0


def mujoco_row(scene, repeat: int, warmup: int, budget: float) -> dict | None:
    try:
        peer = MujocoCentipede(scene)
    except ImportError:
        return None
    total = np.array(_timed(peer.step, float, repeat, warmup, budget))
    n = scene.info["n_segments"]
    return dict(
        segments=n,
        legs=2 * n,
        nv=scene.model.nv,
        contacts=int(peer.d.ncon),
        method=PEER,
        **{f"{p}_s": "" for p in PHASES},
        total_s=float(total.min()),
        total_median_s=float(np.median(total)),
        steps=len(total),
        qp_iterations="",
    )


def run(sizes, repeat: int = 5, warmup: int = 1, budget: float = 20.0, log=print) -> list[dict]:
    rows = []
    before = td.get_num_threads()
    td.set_num_threads(1)
    try:
        for n in sizes:
            scene = centipede(n)
            for method in METHODS:
                rows.append(treedyn_row(scene, method, repeat, warmup, budget))
            r = mujoco_row(scene, repeat, warmup, budget)
            if r is not None:
                rows.append(r)
            log(
                f"segments={n:4d} nv={scene.model.nv:5d}  "
                + "  ".join(
                    f"{r['method']}: step {r['total_s'] * 1e3:.4g} ms"
                    + (
                        f" (contact inertia {r['contact_inertia_s'] * 1e3:.4g}, qp {r['qp_s'] * 1e3:.4g})"
                        if r["contact_inertia_s"] != ""
                        else (f" (contact {r['qp_s'] * 1e3:.4g})" if r["qp_s"] != "" else "")
                    )
                    for r in rows
                    if r["segments"] == n
                )
            )
    finally:
        td.set_num_threads(before)
    return rows


# ---------------------------------------------------------------------------------------------


def series(rows, method: str, column: str) -> tuple[np.ndarray, np.ndarray]:
    pts = sorted((r["legs"], float(r[column])) for r in rows if r["method"] == method and r[column] != "")
    return np.array([p[0] for p in pts], dtype=float), np.array([p[1] for p in pts])


def summarize(rows, fit_min: float = 25.0, log=print) -> dict:
    out = {}
    legs_min = 2 * fit_min
    log(f"\nlog-log slope against the number of legs (sizes >= {fit_min:g} segments; minimum over the steps):")
    log(f"  {'method':14s} {'contact-space inertia':>22s} {'whole step':>11s} {'QP':>6s}")
    for method in (*METHODS, PEER):
        cells = []
        for column in ("contact_inertia_s", "total_s", "qp_s"):
            x, t = series(rows, method, column)
            s = slope(x, t, legs_min) if len(x) else None
            out[(method, column, "slope")] = s
            cells.append("—" if s is None else f"{s:.2f}")
        if any(c != "—" for c in cells):
            log(f"  {method:14s} {cells[0]:>22s} {cells[1]:>11s} {cells[2]:>6s}")
    log("\ncrossover (legs from which drumwright stays faster; ~ interpolated, <= at every size, > never):")
    x1, t1 = series(rows, "drumwright", "contact_inertia_s")
    for method in DENSE[1:]:
        x2, t2 = series(rows, method, "contact_inertia_s")
        c = crossover(list(x1), list(t1), list(x2), list(t2))
        out[(method, "contact_inertia_s", "crossover")] = c
        log(f"  contact-space inertia against {method:14s}: {c}")
    x1, t1 = series(rows, "drumwright", "total_s")
    for method in (*DENSE[1:], PEER):
        x2, t2 = series(rows, method, "total_s")
        if len(x2):
            c = crossover(list(x1), list(t1), list(x2), list(t2))
            out[(method, "total_s", "crossover")] = c
            log(f"  whole step against {method:24s}: {c}")
    n = max(r["segments"] for r in rows)
    at = {r["method"]: r for r in rows if r["segments"] == n}
    d = at["drumwright"]
    log(f"\nat {n} segments ({2 * n} legs, nv = {d['nv']}, {d['contacts']} contacts), one thread:")
    for method in DENSE[1:]:
        ratio = at[method]["contact_inertia_s"] / d["contact_inertia_s"]
        out[(method, "ratio")] = ratio
        log(
            f"  contact-space inertia by {method} / by drumwright: {ratio:.1f}x "
            f"({at[method]['contact_inertia_s'] * 1e3:.4g} ms / {d['contact_inertia_s'] * 1e3:.4g} ms)"
            + (f"; the paper: the Θ(n²) method is {PAPER}" if method == "crba-cholesky" else "")
        )
    for method in DENSE[1:]:
        ratio = at[method]["total_s"] / d["total_s"]
        out[(method, "step_ratio")] = ratio
        log(f"  whole step with {method} / with drumwright: {ratio:.2f}x")
    if PEER in at:
        ratio = d["total_s"] / at[PEER]["total_s"]
        out[(PEER, "step_ratio")] = ratio
        log(
            f"  whole step with drumwright / MuJoCo's mj_step: {ratio:.3g}x "
            f"({d['total_s'] * 1e3:.4g} ms / {at[PEER]['total_s'] * 1e3:.4g} ms; MuJoCo {at[PEER]['contacts']} contacts)"
        )
    if PEER in at and ENGINE in at:
        ratio = at[PEER]["total_s"] / at[ENGINE]["total_s"]
        out[(ENGINE, "peer_ratio")] = ratio
        log(
            f"  MuJoCo's mj_step / the C++ step (admm): {ratio:.3g}x "
            f"({at[PEER]['total_s'] * 1e3:.4g} ms / {at[ENGINE]['total_s'] * 1e3:.4g} ms)"
        )
    share = {p: d[f"{p}_s"] / sum(d[f"{k}_s"] for k in PHASES) for p in PHASES}
    out["drumwright_shares"] = share
    log("  drumwright's step: " + ", ".join(f"{p} {100 * s:.1f}%" for p, s in share.items()))
    return out


def plot(rows, out_dir, fit_min: float = 25.0, log=print) -> list[str]:
    plt = pyplot(log)
    if plt is None:
        return []
    styles = {
        "drumwright": ("C3", "-.", "o", "drumwright (Θ(n²) M⁻¹)"),
        "crba-cholesky": ("C0", "-", "s", "CRBA + dense Cholesky"),
        "crba-ltl": ("C2", "--", "^", "CRBA + LTL (branch-induced sparsity)"),
        PEER: ("C1", ":", "D", "MuJoCo mj_step"),
    }
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.6))
    panels = (
        ("contact_inertia_s", "contact-space inertia NᵀM⁻¹N, NᵀM⁻¹D, DᵀM⁻¹D"),
        ("total_s", "whole simulation step (h = 1e-5, explicit Euler)"),
    )
    for ax, (column, title) in zip(axes, panels):
        for method, (color, ls, marker, label) in styles.items():
            x, t = series(rows, method, column)
            if len(x) == 0:
                continue
            s = slope(x, t, 2 * fit_min)
            ax.loglog(
                x, t, color=color, ls=ls, marker=marker, ms=4, label=label + ("" if s is None else f" (slope {s:.2f})")
            )
        ax.set_xlabel("legs [count] (2 per segment)")
        ax.set_ylabel("time per step [s], 1 thread")
        ax.set_title(title, fontsize=10)
        log_ticks(ax.xaxis)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle("drumwright2012 Fig. 4 on this machine: the walking centipede", fontsize=11)
    fig.tight_layout()
    return [save(fig, os.path.join(out_dir, "drumwright2012_fig4.png"))]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks centipede", description=__doc__.split("\n")[0])
    ap.add_argument("--segments", type=int, nargs="+", help=f"centipede sizes (default {SIZES}; --quick {QUICK_SIZES})")
    ap.add_argument("--repeat", type=int, default=5, help="time_call's samples per point (default 5)")
    ap.add_argument("--warmup", type=int, default=1, help="untimed steps first (default and at least 1)")
    ap.add_argument("--budget", type=float, default=20.0, help="~seconds of timed steps per method and size")
    ap.add_argument("--fit-min", type=float, help="fit slopes on sizes >= this many segments (default 25; --quick 0)")
    ap.add_argument("--out", default=".", help="directory for the CSV and PNG files")
    ap.add_argument("--quick", action="store_true", help=f"segments {QUICK_SIZES}, 2 samples")
    ap.add_argument("--no-plot", action="store_true")
    args = ap.parse_args(argv)
    sizes = args.segments or (QUICK_SIZES if args.quick else SIZES)
    if args.quick:
        args.repeat = min(args.repeat, 2)
    if args.fit_min is None:
        args.fit_min = 0.0 if args.quick else 25.0
    if any(n < 1 for n in sizes) or args.repeat < 1 or args.warmup < 0:
        ap.error("--segments and --repeat must be positive, --warmup >= 0")
    os.makedirs(args.out, exist_ok=True)
    print(
        f"treedyn {td.__version__}, {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
        f"one thread (treedyn and BLAS when run as python -m benchmarks); h = {H:g}, explicit Euler; "
        f"phases: minimum over the timed steps"
    )
    rows = run(sorted(set(sizes)), args.repeat, args.warmup, args.budget)
    path = os.path.join(args.out, "drumwright2012_fig4.csv")
    write_csv(path, rows, FIELDS)
    print(f"\nwrote {path}")
    summarize(rows, args.fit_min)
    if not args.no_plot:
        for p in plot(rows, args.out, args.fit_min):
            print(f"wrote {p}")
    return 0
