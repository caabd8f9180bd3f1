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
the Delassus operator's set-up, contact, integrate, Python). Then the same centipedes with MuJoCo's
physics (``soft=True``) as a MuJoCo user steps them: ``td.StepData`` (one call into C++ a step, the
gait's torque set on ``data.tau`` outside the timer) against ``mj_step`` at MuJoCo's default and at
its fastest settings (PGS, the dense Jacobian, elliptic cones). Then ``--batch`` worlds (8 and 32)
stepped at once (``ContactSimulator.step_batch``) on 1 and 2 threads, with pauses between calls: the
speed-up.

Then the models MuJoCo users run (``--models``): Gymnasium's (the installed ``gymnasium``'s files)
and the DeepMind Control suite's with contacts (``dmc/<name>``: the dm_control wheel's files as the
tests unpack them) and robots whose collision geoms are convex meshes (``erd/<name>``: Solo-12, Go2
and TALOS of example-robot-data, as MuJoCo imports their URDFs, on a floor with position actuators:
treedyn.tools.peers.example_robot_mjcf), each as ``td.load_mjcf`` reads it (MuJoCo's soft constraints, the file's integrator)
against ``mj_step`` on the same file, from qpos0, with zero and with random controls, 1 s at the file's
timestep, interleaved, one thread: ``td.StepData`` (one call into C++ a step) and ``sim.step(state)``
against MuJoCo's default settings and its fastest (PGS, where cheaper); the iterations, the steps whose
solve did not converge and the roots' distance after 1 s.

Writes contact_step.csv, contact_soft.csv, contact_models.csv and, with matplotlib, contact_step.png.
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


SOFT_FIELDS = ["segments", "nv", "treedyn_ms", "mujoco_ms", "mujoco_fastest_ms", "ratio", "ratio_fastest", "iterations"]


def fastest(m):
    """MuJoCo's fastest settings for a step of model m, in place: PGS, the dense Jacobian, elliptic cones
    (the centipede's: 0.75x the default's step at 10 segments)."""
    import mujoco

    m.opt.solver, m.opt.jacobian, m.opt.cone = (
        mujoco.mjtSolver.mjSOL_PGS,
        mujoco.mjtJacobian.mjJAC_DENSE,
        mujoco.mjtCone.mjCONE_ELLIPTIC,
    )
    return m


def run_soft(n: int, steps: int, log=print) -> dict:
    """The centipede with MuJoCo's physics (soft=True) as a MuJoCo user steps it: ``td.StepData``'s
    step (one call into C++; the gait's torque set on ``data.tau`` outside the timer, as MuJoCo's
    qfrc_applied), interleaved with mj_step at MuJoCo's default and its fastest settings."""
    scene = centipede(n)
    data = td.ContactSimulator(scene.model, H, soft=True).data(scene.initial_state())
    peers = [MujocoCentipede(scene, H), MujocoCentipede(scene, H)]
    fastest(peers[1].m)
    ours, theirs, its = [], [[], []], []
    for _ in range(steps):
        data.tau[:] = scene.tau(data.time, data.q, data.v)
        t0 = time.perf_counter()
        data.step()
        ours.append(time.perf_counter() - t0)
        its.append(data.iterations)
        for peer, t in zip(peers, theirs):
            t.append(peer.step())
    warm = steps // 10
    t_ours = float(np.median(ours[warm:]))
    t_default, t_fast = (float(np.median(t[warm:])) for t in theirs)
    row = dict(
        segments=n,
        nv=scene.model.nv,
        treedyn_ms=1e3 * t_ours,
        mujoco_ms=1e3 * t_default,
        mujoco_fastest_ms=1e3 * t_fast,
        ratio=t_default / t_ours,
        ratio_fastest=t_fast / t_ours,
        iterations=float(np.median(its[warm:])),
    )
    log(
        f"segments={n:4d} soft, td.StepData {row['treedyn_ms']:.4g} ms  mj_step {row['mujoco_ms']:.4g} ms (fastest "
        f"{row['mujoco_fastest_ms']:.4g} ms)  MuJoCo/treedyn {row['ratio']:.2f}x (fastest {row['ratio_fastest']:.2f}x)  "
        f"iterations {row['iterations']:.0f}"
    )
    return row


MODELS = ["ant", "humanoid", "hopper", "walker2d", "half_cheetah", "swimmer"]
MODELS += ["dmc/walker", "dmc/cheetah", "dmc/humanoid", "dmc/quadruped", "dmc/dog"]
MODELS += ["erd/solo12", "erd/go2", "erd/talos"]
MODEL_FIELDS = [
    "model",
    "controls",
    "nv",
    "timestep",
    "treedyn_ms",
    "mujoco_ms",
    "ratio",
    "data_ms",
    "data_ratio",
    "mujoco_fastest_ms",
    "data_ratio_fastest",
    "iterations_median",
    "iterations_max",
    "unconverged",
    "contacts_median",
    "mujoco_contacts_median",
    "root_gap",
]


def model_path(name: str) -> str | None:
    """A Gymnasium model's file (the installed gymnasium's assets), a DeepMind Control suite model's
    ("dmc/<name>": the dm_control wheel's files as the tests unpack them, TREEDYN_PUBLIC_MJCF or
    ~/.cache/treedyn/public-mjcf) or a robot of example-robot-data with convex-mesh collision geoms
    ("erd/<name>", treedyn.tools.peers.MESH_ROBOTS: MuJoCo's import of its URDF on a floor, written to
    ~/.cache/treedyn/mesh-robots), or None when absent."""
    if name.startswith("erd/"):  # a robot with convex-mesh collision geoms (treedyn.tools.peers)
        from treedyn.tools.peers import MESH_ROBOTS, example_robot_mjcf

        try:
            return example_robot_mjcf(MESH_ROBOTS[name[4:]])
        except (ImportError, FileNotFoundError):
            return None
    if name.startswith("dmc/"):
        base = os.environ.get("TREEDYN_PUBLIC_MJCF") or os.path.join(
            os.path.expanduser("~"), ".cache", "treedyn", "public-mjcf"
        )
        path = os.path.join(base, "dm_control-1.0.50", "dm_control", "suite", name[4:] + ".xml")
        return path if os.path.isfile(path) else None
    try:
        import gymnasium
    except ImportError:
        return None
    return os.path.join(os.path.dirname(gymnasium.__file__), "envs", "mujoco", "assets", f"{name}.xml")


def run_model(name: str, controls: str = "zero", seconds: float = 1.0, log=print) -> dict | None:
    """A model against mj_step on its file, from qpos0, zero or random (uniform in ctrlrange, seed 0)
    controls, at the file's timestep: treedyn's ``sim.step(state)`` and ``td.StepData``, MuJoCo's
    ``mj_step`` with its default settings and with its fastest (PGS, the cheaper of the two per model),
    interleaved, one thread (None when mujoco or the file is absent)."""
    import warnings

    try:
        import mujoco
    except ImportError as e:
        log(f"{name}: skipped ({e})")
        return None
    path = model_path(name)
    if path is None:
        log(f"{name}: skipped (its file is not here: gymnasium, or the tests' dm_control files)")
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (what treedyn does not read: IgnoredElementWarning)
        model = td.load_mjcf(path)
    m = mujoco.MjModel.from_xml_path(path)
    fast = mujoco.MjModel.from_xml_path(path)
    fast.opt.solver = mujoco.mjtSolver.mjSOL_PGS
    d, d_fast = mujoco.MjData(m), mujoco.MjData(fast)
    sim = td.ContactSimulator(model)
    state = td.State.initial(model)
    data = sim.data(state)  # (the same run through td.StepData: one call into C++ a step)
    n = int(round(seconds / m.opt.timestep))
    rng = np.random.default_rng(0)
    lo, hi = (m.actuator_ctrlrange[:, 0], m.actuator_ctrlrange[:, 1]) if m.nu else (np.zeros(0), np.zeros(0))
    lo, hi = np.where(m.actuator_ctrllimited, lo, -1.0), np.where(m.actuator_ctrllimited, hi, 1.0)
    U = rng.uniform(lo, hi, (n, m.nu)) if controls == "random" else np.zeros((n, m.nu))
    times = {k: [] for k in ("step", "data", "mujoco", "mujoco_fast")}
    its, contacts, peer_contacts, unconverged = [], [], [], 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", td.SimulationWarning)  # counted below
        for k in range(n):
            d.ctrl[:] = d_fast.ctrl[:] = data.ctrl[:] = U[k]
            for key, call in (("step", lambda: sim.step(state, ctrl=U[k])), ("data", data.step),
                              ("mujoco", lambda: mujoco.mj_step(m, d)), ("mujoco_fast", lambda: mujoco.mj_step(fast, d_fast))):  # fmt: skip
                t0 = time.perf_counter()
                out = call()
                times[key].append(time.perf_counter() - t0)
                if key == "step":
                    its.append(out.qp_iterations), contacts.append(out.n_contacts)
                    unconverged += not out.converged
            peer_contacts.append(d.ncon)
    med = {k: float(np.median(v)) for k, v in times.items()}
    best = min(med["mujoco"], med["mujoco_fast"])
    row = dict(
        model=name,
        controls=controls,
        nv=model.nv,
        timestep=m.opt.timestep,
        treedyn_ms=1e3 * med["step"],
        mujoco_ms=1e3 * med["mujoco"],
        ratio=med["mujoco"] / med["step"],
        data_ms=1e3 * med["data"],
        data_ratio=med["mujoco"] / med["data"],
        mujoco_fastest_ms=1e3 * best,
        data_ratio_fastest=best / med["data"],
        iterations_median=float(np.median(its)),
        iterations_max=int(max(its)),
        unconverged=unconverged,
        contacts_median=float(np.median(contacts)),
        mujoco_contacts_median=float(np.median(peer_contacts)),
        root_gap=float(np.abs(data.q[:3] - d.qpos[:3]).max()) if m.nq >= 3 else 0.0,
    )
    log(
        f"{name:>16s} {controls:6s} nv={model.nv:3d} h={m.opt.timestep:g}  td.StepData {row['data_ms']:.4g} ms  "
        f"mj_step {row['mujoco_ms']:.4g} ms (fastest {row['mujoco_fastest_ms']:.4g})  MuJoCo/treedyn "
        f"{row['data_ratio']:.2f}x (fastest {row['data_ratio_fastest']:.2f}x; sim.step {row['ratio']:.2f}x)  "
        f"iterations {row['iterations_median']:.0f} (max {row['iterations_max']}), {unconverged} unconverged  "
        f"contacts {row['contacts_median']:.0f} (MuJoCo {row['mujoco_contacts_median']:.0f})"
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
    ap.add_argument("--models", nargs="*", default=MODELS, help="Gymnasium models, dmc/<name> (none: skip)")
    ap.add_argument("--out", default=".")
    args = ap.parse_args(argv)
    before = td.get_num_threads()
    td.set_num_threads(1)
    try:
        rows = [run_size(n, args.steps) for n in args.segments]
        soft_rows = [run_soft(n, args.steps) for n in args.segments]
        model_rows = [r for c in ("zero", "random") for name in args.models if (r := run_model(name, c)) is not None]
    finally:
        td.set_num_threads(before)
    for B in args.batch:
        batch_speedup(min(args.segments), B, max(20, args.steps // 4))
    os.makedirs(args.out, exist_ok=True)
    write_csv(os.path.join(args.out, "contact_step.csv"), rows, FIELDS)
    write_csv(os.path.join(args.out, "contact_soft.csv"), soft_rows, SOFT_FIELDS)
    if model_rows:
        write_csv(os.path.join(args.out, "contact_models.csv"), model_rows, MODEL_FIELDS)
    plot(rows, model_rows, args.out)
    return 0


def plot(rows, model_rows, out_dir, log=print) -> list[str]:
    """contact_step.png: the centipede's step against its segments (log-log), and each model's step
    (td.StepData) beside mj_step's with MuJoCo's default and fastest settings (medians)."""
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
        for dx, key, color, label in (
            (-0.27, "data", "C3", "treedyn td.StepData"),
            (0.0, "mujoco", "C1", "mj_step, default"),
            (0.27, "mujoco_fastest", "C2", "mj_step, fastest"),
        ):
            ax.bar(x + dx, [1e3 * r[f"{key}_ms"] for r in model_rows], 0.27, color=color, label=label + " (median)")
        ax.set_xticks(
            x,
            [f"{r['model'].replace('dmc/', 'DMC ')}\n{r['controls']}\n{r['data_ratio']:.2f}x" for r in model_rows],
            fontsize=6,
        )
        ax.set_ylabel("step [µs], 1 thread")
        ax.set_title(
            "Gymnasium and DeepMind Control models from qpos0, 1 s (ratio: MuJoCo default / treedyn)", fontsize=8
        )
        ax.legend(fontsize=7)
    else:
        ax.set_axis_off()
    fig.tight_layout()
    return [save(fig, os.path.join(out_dir, "contact_step.png"))]
