"""The whole contact step against MuJoCo's mj_step.

    python -m benchmarks contact_step [--segments 10 50 100 250] [--steps 200] [--batch 8 32]
                                      [--models ant humanoid ...] [--out DIR]

The walking centipede of ``treedyn.scenes.centipede(n)``, semi-implicit Euler at h = 1e-3 (the
ContactSimulator's default, MuJoCo's default integrator), the scene's gait: from the standing state,
``--steps`` steps of each, interleaved in one process on one thread (treedyn's
``ContactSimulator.step``, Python call included, the gait computed outside the timed call for both;
MuJoCo's ``mj_step`` on ``model.to_mjcf()`` with its defaults: Newton solver, pyramidal cones, soft
constraints). Per size: the median step of each, the ratio MuJoCo / treedyn (> 1: treedyn is
faster), the ADMM iterations (median, max) and where treedyn's step goes (collision, dynamics,
the Delassus operator's set-up, contact, integrate, Python). Then ``--batch`` worlds (8 and 32) stepped at once (``ContactSimulator.step_batch``) on 1 and 2
threads, with pauses between calls: the speed-up.

Then the Gymnasium MuJoCo models (``--models``; the files of the installed ``gymnasium`` package,
the benchmark extra): each model as ``td.load_mjcf`` reads it against ``mj_step`` on the same file,
both from the file's qpos0 at rest, zero control, for 1 s at the file's own timestep,
interleaved, one thread, by ``sim.step(state)`` and by ``td.StepData`` (``sim.data()``: one call into
C++ a step): the median step of each, the ratios, the iterations (median, max) and the steps whose
solve did not converge. The models differ from MuJoCo's where treedyn does not read the
file yet (joint damping, stiffness, armature, actuators: the docs' model guide), so the rest poses
differ; the contacts are those of the same geoms.

Writes contact_step.csv, contact_models.csv and, with matplotlib, contact_step.png.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

import treedyn as td
from treedyn.scenes import centipede
from treedyn.sim.engine import ENGINE_PHASES

from ._common import log_ticks, pyplot, save, slope, write_csv
from .centipede import MujocoCentipede

H = 1e-3
SIZES = [10, 50, 100, 250]
FIELDS = [
    "segments",
    "nv",
    "contacts",
    "treedyn_ms",
    "mujoco_ms",
    "ratio",
    "treedyn_mean_ms",
    "mujoco_mean_ms",
    "iterations_median",
    "iterations_max",
    "collision_ms",
    "dynamics_ms",
    "delassus_ms",
    "contact_ms",
    "integrate_ms",
    "python_ms",
    "mujoco_contacts",
]


def run_size(n: int, steps: int, log=print) -> dict:
    scene = centipede(n)
    sim = td.ContactSimulator(scene.model, H, contact_solver="admm")
    state = scene.initial_state()
    peer = MujocoCentipede(scene, H)
    ours, theirs, stats = [], [], []
    for _ in range(steps):  # interleaved: one step of each
        tau = scene.tau(state.t, state.q, state.v)
        t0 = time.perf_counter()
        s = sim.step(state, tau)  # the public step: its checks and its contacts included
        ours.append(time.perf_counter() - t0)
        stats.append(s)
        theirs.append(peer.step())
    ours, theirs = np.array(ours[steps // 10 :]), np.array(theirs[steps // 10 :])  # the first tenth: warm-up
    stats = stats[steps // 10 :]
    phases = {p: np.median([s.phases[p] for s in stats]) for p in ENGINE_PHASES}
    python = np.median(ours - np.array([s.seconds for s in stats]))  # per step: the call less the C++ phases
    its = np.array([s.qp_iterations for s in stats])
    t_ours, t_theirs = float(np.median(ours)), float(np.median(theirs))
    row = dict(
        segments=n,
        nv=scene.model.nv,
        contacts=int(np.median([s.n_contacts for s in stats])),
        treedyn_ms=1e3 * t_ours,
        mujoco_ms=1e3 * t_theirs,
        ratio=t_theirs / t_ours,
        treedyn_mean_ms=1e3 * float(ours.mean()),
        mujoco_mean_ms=1e3 * float(theirs.mean()),
        iterations_median=float(np.median(its)),
        iterations_max=int(its.max()),
        **{f"{p}_ms": 1e3 * t for p, t in phases.items()},
        python_ms=1e3 * python,
        mujoco_contacts=int(peer.d.ncon),
    )
    log(
        f"segments={n:4d} nv={row['nv']:5d} contacts={row['contacts']:4d}  treedyn {row['treedyn_ms']:.4g} ms  "
        f"mj_step {row['mujoco_ms']:.4g} ms  MuJoCo/treedyn {row['ratio']:.2f}x (means {row['treedyn_mean_ms']:.4g}, "
        f"{row['mujoco_mean_ms']:.4g} ms)  ADMM iterations "
        f"{row['iterations_median']:.0f} (max {row['iterations_max']})  [collision {row['collision_ms']:.3g}, "
        f"dynamics {row['dynamics_ms']:.3g}, delassus {row['delassus_ms']:.3g}, contact {row['contact_ms']:.3g}, integrate {row['integrate_ms']:.3g}, "
        f"Python {row['python_ms']:.3g} ms]"
    )
    return row


MODELS = ["ant", "humanoid", "hopper", "walker2d", "half_cheetah"]
MODEL_FIELDS = [
    "model",
    "nv",
    "timestep",
    "treedyn_ms",
    "mujoco_ms",
    "ratio",
    "data_ms",
    "data_ratio",
    "treedyn_mean_ms",
    "mujoco_mean_ms",
    "iterations_median",
    "iterations_max",
    "unconverged",
    "contacts_median",
    "mujoco_contacts_median",
]


def run_model(name: str, seconds: float = 1.0, log=print) -> dict | None:
    """A Gymnasium model against mj_step on its file (None when gymnasium or mujoco is absent)."""
    import warnings

    try:
        import gymnasium
        import mujoco
    except ImportError as e:
        log(f"{name}: skipped ({e})")
        return None
    path = os.path.join(os.path.dirname(gymnasium.__file__), "envs", "mujoco", "assets", f"{name}.xml")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # what treedyn does not read yet (IgnoredElementWarning)
        model = td.load_mjcf(path)
    m = mujoco.MjModel.from_xml_path(path)
    d = mujoco.MjData(m)
    h = m.opt.timestep
    sim = td.ContactSimulator(model, h)
    state = td.State(np.array(model.reference_configuration, dtype=float), np.zeros(model.nv))
    data = sim.data(state)  # (the same run through td.StepData: one call into C++ a step)
    ours, theirs, by_data, its, contacts, peer_contacts, unconverged = [], [], [], [], [], [], 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", td.SimulationWarning)  # counted below
        for _ in range(int(round(seconds / h))):
            t0 = time.perf_counter()
            s = sim.step(state)
            ours.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            data.step()
            by_data.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            mujoco.mj_step(m, d)
            theirs.append(time.perf_counter() - t0)
            its.append(s.qp_iterations)
            contacts.append(s.n_contacts)
            peer_contacts.append(d.ncon)
            unconverged += not s.converged
    t_ours, t_theirs = float(np.median(ours)), float(np.median(theirs))
    row = dict(
        model=name,
        nv=model.nv,
        timestep=h,
        treedyn_ms=1e3 * t_ours,
        mujoco_ms=1e3 * t_theirs,
        ratio=t_theirs / t_ours,
        data_ms=1e3 * float(np.median(by_data)),
        data_ratio=t_theirs / float(np.median(by_data)),
        treedyn_mean_ms=1e3 * float(np.mean(ours)),
        mujoco_mean_ms=1e3 * float(np.mean(theirs)),
        iterations_median=float(np.median(its)),
        iterations_max=int(max(its)),
        unconverged=unconverged,
        contacts_median=float(np.median(contacts)),
        mujoco_contacts_median=float(np.median(peer_contacts)),
    )
    log(
        f"{name:>12s} nv={model.nv:3d} h={h:g}  treedyn {row['treedyn_ms']:.4g} ms  mj_step {row['mujoco_ms']:.4g} ms  "
        f"MuJoCo/treedyn {row['ratio']:.2f}x (means {row['treedyn_mean_ms']:.4g}, {row['mujoco_mean_ms']:.4g} ms)  "
        f"td.StepData {row['data_ms']:.4g} ms: {row['data_ratio']:.2f}x  "
        f"iterations {row['iterations_median']:.0f} (max {row['iterations_max']}), "
        f"{unconverged} unconverged  contacts {row['contacts_median']:.0f} (MuJoCo {row['mujoco_contacts_median']:.0f})"
    )
    return row


def batch_speedup(n: int, B: int, steps: int, log=print) -> dict:
    """B worlds of the n-segment centipede stepped together on 1 and 2 threads (a pause between calls)."""
    scene = centipede(n)
    sim = td.ContactSimulator(scene.model, H, contact_solver="admm")
    s0 = scene.initial_state()
    out = {}
    for threads in (1, 2):
        q = np.tile(s0.q, (B, 1))
        v = np.tile(s0.v, (B, 1))
        tau = np.stack([scene.tau(0.0, s0.q, s0.v)] * B)
        times = []
        for _ in range(steps):
            t0 = time.perf_counter()
            sim.step_batch(q, v, tau, threads=threads)
            times.append(time.perf_counter() - t0)
            time.sleep(0.002)
        out[threads] = float(np.median(times[steps // 10 :]))
    log(
        f"batch of {B} worlds, {n} segments: 1 thread {out[1] * 1e3:.4g} ms, 2 threads {out[2] * 1e3:.4g} ms "
        f"(speed-up {out[1] / out[2]:.2f}x)"
    )
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks contact_step", description=__doc__.split("\n\n")[0])
    ap.add_argument("--segments", type=int, nargs="+", default=SIZES)
    ap.add_argument("--steps", type=int, default=200, help="steps per size (the first tenth untimed)")
    ap.add_argument("--batch", type=int, nargs="*", default=[8, 32], help="worlds in the batched step (none: skip)")
    ap.add_argument("--models", nargs="*", default=MODELS, help="Gymnasium MuJoCo models (none: skip)")
    ap.add_argument("--out", default=".")
    args = ap.parse_args(argv)
    before = td.get_num_threads()
    td.set_num_threads(1)
    try:
        rows = [run_size(n, args.steps) for n in args.segments]
        model_rows = [r for r in (run_model(name) for name in args.models) if r is not None]
    finally:
        td.set_num_threads(before)
    for B in args.batch:
        batch_speedup(min(args.segments), B, max(20, args.steps // 4))
    os.makedirs(args.out, exist_ok=True)
    write_csv(os.path.join(args.out, "contact_step.csv"), rows, FIELDS)
    if model_rows:
        write_csv(os.path.join(args.out, "contact_models.csv"), model_rows, MODEL_FIELDS)
    plot(rows, model_rows, args.out)
    return 0


def plot(rows, model_rows, out_dir, log=print) -> list[str]:
    """contact_step.png: the centipede's step against its segments (log-log), and each Gymnasium
    model's step beside mj_step's (medians; the means as thin marks)."""
    plt = pyplot(log)
    if plt is None:
        return []
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.4), width_ratios=(1, 1.2))
    ax = axes[0]
    n = [r["segments"] for r in rows]
    for key, color, marker, label in (
        ("treedyn", "C3", "o", "treedyn (C++ step, ADMM)"),
        ("mujoco", "C1", "D", "MuJoCo mj_step"),
    ):
        t = [r[f"{key}_ms"] for r in rows]
        ax.loglog(
            n, t, color=color, marker=marker, ms=4, label=label + (f" (slope {slope(n, t):.2f})" if len(n) > 1 else "")
        )
    for r in rows:
        ax.annotate(
            f"{r['ratio']:.1f}x",
            (r["segments"], r["treedyn_ms"]),
            textcoords="offset points",
            xytext=(4, -12),
            fontsize=7,
        )
    ax.set_xlabel("segments (2 legs each)")
    ax.set_ylabel("median step [ms], 1 thread")
    ax.set_title("walking centipede, h = 1e-3, semi-implicit (ratio: MuJoCo / treedyn)", fontsize=9)
    log_ticks(ax.xaxis)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    ax = axes[1]
    if model_rows:
        x = np.arange(len(model_rows))
        for dx, key, color, label in ((-0.2, "treedyn", "C3", "treedyn"), (0.2, "mujoco", "C1", "MuJoCo mj_step")):
            ax.bar(x + dx, [1e3 * r[f"{key}_ms"] for r in model_rows], 0.4, color=color, label=label + " (median)")
            ax.scatter(x + dx, [1e3 * r[f"{key}_mean_ms"] for r in model_rows], color="k", marker="_", s=120, zorder=3)
        ax.set_xticks(x, [f"{r['model']}\n{r['ratio']:.2f}x" for r in model_rows], fontsize=8)
        ax.set_ylabel("step [µs], 1 thread (—: mean)")
        ax.set_title("Gymnasium models at their timesteps, at rest, zero control", fontsize=9)
        ax.legend(fontsize=7)
    else:
        ax.set_axis_off()
    fig.tight_layout()
    return [save(fig, os.path.join(out_dir, "contact_step.png"))]
