"""yang-wu-pan Figs. 2-3 on a GPU: treedyn's XLA backend (treedyn.xla) against treedyn's C++ batch,
Pinocchio's abaInParallel and MJX, in one run.

    python -m benchmarks gpu [--quick] [--device gpu|cpu] [--fig 2 3] [--n ...] [--B ...]
                             [--robots panda talos] [--dtype float32|float64] [--repeat 5] [--out DIR] [--no-plot]

Fig. 2 (one robot): time of one forward dynamics call against the links n of a revolute chain
(``treedyn.scenes.chain(n)``) on the device: ``aba`` (three passes over the tree's levels: for a
chain, n sequential steps), ``cfa-oee`` (yang-wu-pan's constraint force algorithm: odd–even
elimination and scans, ⌈log₂ n⌉ parallel levels), ``crba-cholesky`` (n ≤ 256); beside treedyn's C++
``aba`` on one CPU thread.
Fig. 3 (many robots): time of B robots' forward dynamics against B for Panda (7 DoF, fixed base) and
Talos (example-robot-data's talos_reduced: a humanoid, 38 DoF, floating base) on the device
(``aba`` and ``crba-cholesky`` under ``jax.vmap``), beside treedyn's C++ batch on all of this
machine's cores (``td.set_num_threads``), ``pin.abaInParallel`` on as many threads, and MJX's
``mjx.forward`` under ``jax.vmap`` on the same device, the same model (written by ``to_mjcf``; contacts
and constraints disabled, so that it computes the smooth dynamics: kinematics, CRBA, the bias by
RNEA and a Cholesky solve); for Panda (fixed base, the same coordinates) the CSV gives MJX's q̈ against
treedyn's (``mjx_qacc_rel_diff``: float32 rounding). The models are the robots' trees alone (no geoms,
no joint damping).

Each device time is the minimum over --repeat samples of a jitted call on arrays already on the
device, waited for (``block_until_ready``); compile time is not counted but printed. --quick (about
5 minutes on a GPU machine, longer on a 2-core CPU): n = 8 … 256, B = 1, 64, 1024, 4096, float32,
3 repeats. Writes gpu_fig2.csv, gpu_fig3.csv (and .png with matplotlib), each row naming the device
it was measured on: a figure measured on a CPU is not a GPU figure.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np

import treedyn as td

from ._common import log_ticks, pyplot, save, write_csv


def bare(model):
    """The model's tree alone (bodies, joints, placements, inertias): no geoms, no passive terms."""
    out = td.Model(gravity=model.gravity)
    names = model.body_names
    for i in range(1, model.n_bodies):
        p = model.parents[i]
        out.add_body(
            names[i],
            parent=None if p == 0 else names[p],
            joint=model.joints[i],
            placement=model.placements[i],
            inertia=model.inertias[i],
            joint_name=model.body_joint_names[i],
        )
    return out


def robot(which):
    from treedyn.tools.peers import example_robot_path

    rel, floating = {
        "panda": ("panda_description/urdf/panda.urdf", False),
        "talos": ("talos_data/robots/talos_reduced.urdf", True),
    }[which]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return bare(td.Model.from_urdf(example_robot_path(rel), floating_base=floating, mimic="independent"))


def timed(f, repeat, min_sample=5e-3):
    """min over repeat samples of the seconds per call of f() (f waits for its result)."""
    f()
    calls, t = 1, 0.0
    while True:
        t0 = time.perf_counter()
        for _ in range(calls):
            f()
        t = time.perf_counter() - t0
        if t >= min_sample or calls >= 1 << 16:
            break
        calls *= 4
    best = t / calls
    for _ in range(repeat - 1):
        t0 = time.perf_counter()
        for _ in range(calls):
            f()
        best = min(best, (time.perf_counter() - t0) / calls)
    return best


def states(model, B, dtype, seed=0):
    rng = np.random.default_rng(seed)
    Q = np.stack([td.random_configuration(model, rng) for _ in range(max(B, 1))]).astype(dtype)
    V = rng.standard_normal((max(B, 1), model.nv)).astype(dtype)
    T = rng.standard_normal((max(B, 1), model.nv)).astype(dtype)
    return Q, V, T


def device_call(jax, name, model, dtype, device, batched, Q, V, T):
    """(call, compile seconds): a jitted treedyn.xla forward dynamics on device arrays, waited for."""
    from treedyn import xla

    kernel = {"aba": xla.aba, "cfa-oee": xla.cfa, "crba-cholesky": xla.crba_cholesky}[name]
    dm = xla.DeviceModel(model, dtype, device)
    st = dm.structure
    one = lambda A, q, v, t: kernel(st, A, q, v, t)  # noqa: E731
    f = jax.jit(jax.vmap(one, in_axes=(None, 0, 0, 0)) if batched else one)
    args = [jax.device_put(x if batched else x[0], device) for x in (Q, V, T)]
    t0 = time.perf_counter()
    f(dm.arrays, *args).block_until_ready()
    return (lambda: f(dm.arrays, *args).block_until_ready()), time.perf_counter() - t0


def mjx_call(jax, model, dtype, device, Q, V, T):
    """(call, compile seconds, the first robot's q̈) of jax.vmap(mjx.forward) on the same tree, or None
    without MJX."""
    try:
        import mujoco
        from mujoco import mjx
    except ImportError:
        return None
    mj = mujoco.MjModel.from_xml_string(model.to_mjcf())
    mj.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONTACT | mujoco.mjtDisableBit.mjDSBL_CONSTRAINT
    mx = mjx.put_model(mj, device=device)
    if mj.nq != Q.shape[1]:
        raise ValueError(f"MJX model has nq = {mj.nq}, treedyn {Q.shape[1]}")
    qpos = Q.copy()
    for i, k in enumerate(model.joint_kinds):  # quaternions (x, y, z, w) -> (w, x, y, z)
        if k in ("free", "spherical"):
            s = model.q_indices[i] + (3 if k == "free" else 0)
            qpos[:, s : s + 4] = np.roll(Q[:, s : s + 4], 1, axis=1)
    d0 = mjx.make_data(mx)
    batch = jax.vmap(lambda q, v, t: d0.replace(qpos=q, qvel=v, qfrc_applied=t))(
        *[jax.device_put(x.astype(dtype), device) for x in (qpos, V, T)]
    )
    f = jax.jit(jax.vmap(lambda d: mjx.forward(mx, d).qacc))
    t0 = time.perf_counter()
    qacc = f(batch).block_until_ready()
    return (lambda: f(batch).block_until_ready()), time.perf_counter() - t0, np.asarray(qacc[0])


def fig2(jax, device, dtype, ns, repeat, log):
    rows = []
    for n in ns:
        model = td.scenes.chain(n)
        Q, V, T = states(model, 1, dtype)
        row = {"n": n, "device": device.device_kind, "dtype": np.dtype(dtype).name}
        for name in ("aba", "cfa-oee", "crba-cholesky"):
            if name == "crba-cholesky" and n > 256:
                continue
            call, compile_s = device_call(jax, name, model, dtype, device, False, Q, V, T)
            row[f"{name}_s"] = timed(call, repeat)
            row[f"{name}_compile_s"] = compile_s
        cpu = td.make_solver("aba", model, dtype=dtype)
        row["cpp_aba_1thread_s"] = timed(lambda: cpu.forward_dynamics(Q[0], V[0], T[0]), repeat)
        rows.append(row)
        log(
            f"fig2 n={n:4d}  aba {row['aba_s'] * 1e6:9.1f} us  cfa-oee {row['cfa-oee_s'] * 1e6:9.1f} us  "
            + (f"crba-cholesky {row['crba-cholesky_s'] * 1e6:9.1f} us  " if "crba-cholesky_s" in row else "")
            + f"C++ aba (CPU, 1 thread) {row['cpp_aba_1thread_s'] * 1e6:8.2f} us"
        )
    return rows


def fig3(jax, device, dtype, Bs, repeat, log, robots=("panda", "talos")):
    rows = []
    threads = os.cpu_count() or 1
    try:
        import pinocchio as pin

        from treedyn.tools.peers import to_pinocchio
    except ImportError:
        pin = None
    for which in robots:
        try:
            model = robot(which)
        except FileNotFoundError as e:
            log(f"fig3: {which} skipped ({e})")
            continue
        for B in Bs:
            Q, V, T = states(model, B, dtype)
            row = {"robot": which, "nv": model.nv, "B": B, "device": device.device_kind, "dtype": np.dtype(dtype).name}
            for name in ("aba", "crba-cholesky"):
                call, compile_s = device_call(jax, name, model, dtype, device, True, Q, V, T)
                row[f"{name}_s"] = timed(call, repeat)
                row[f"{name}_compile_s"] = compile_s
            mjx = mjx_call(jax, model, dtype, device, Q, V, T)
            cpu = td.make_solver("aba", model, dtype=dtype)
            if mjx is not None:
                row["mjx_s"] = timed(mjx[0], repeat)
                row["mjx_compile_s"] = mjx[1]
                if not any(k == "free" for k in model.joint_kinds):  # same q̈ (a free joint's v differs)
                    ref = cpu.forward_dynamics(Q[0], V[0], T[0])
                    row["mjx_qacc_rel_diff"] = float(np.abs(mjx[2] - ref).max() / max(1.0, np.abs(ref).max()))
            before = td.get_num_threads()
            td.set_num_threads(threads)
            try:
                row["cpp_batch_s"] = timed(lambda: cpu.forward_dynamics(Q, V, T), repeat)
            finally:
                td.set_num_threads(before)
            if pin is not None:
                pm = to_pinocchio(model)
                pool = pin.ModelPool(pm, threads)
                Qp, Vp, Tp = (np.asfortranarray(X.T.astype(np.float64)) for X in (Q, V, T))
                row["pin_parallel_s"] = timed(lambda: pin.abaInParallel(threads, pool, Qp, Vp, Tp), repeat)
            row["cpu_threads"] = threads
            rows.append(row)
            log(
                f"fig3 {which:5s} B={B:5d}  aba {row['aba_s'] * 1e3:8.3f} ms  crba-cholesky {row['crba-cholesky_s'] * 1e3:8.3f} ms  "
                + (f"MJX {row['mjx_s'] * 1e3:8.3f} ms  " if "mjx_s" in row else "MJX -  ")
                + f"C++ batch ({threads} threads) {row['cpp_batch_s'] * 1e3:8.3f} ms  "
                + (f"pin.abaInParallel {row['pin_parallel_s'] * 1e3:8.3f} ms" if "pin_parallel_s" in row else "")
            )
    return rows


def plot(rows2, rows3, out, log):
    plt = pyplot(log)
    if plt is None:
        return
    if rows2:
        fig, ax = plt.subplots(figsize=(5, 3.6), layout="constrained")
        for key, label in (
            ("aba_s", "aba (XLA)"),
            ("cfa-oee_s", "cfa-oee (XLA)"),
            ("crba-cholesky_s", "crba-cholesky (XLA)"),
            ("cpp_aba_1thread_s", "C++ aba, 1 CPU thread"),
        ):
            pts = [(r["n"], r[key] * 1e6) for r in rows2 if key in r]
            ax.loglog(*zip(*pts), marker="o", label=label)
        ax.set(xlabel="links n [-]", ylabel="time per call [µs]", title=f"one robot on {rows2[0]['device']}")
        ax.legend(fontsize=7)
        log_ticks(ax.xaxis)
        log(f"wrote {save(fig, os.path.join(out, 'gpu_fig2.png'))}")
    if rows3:
        robots = sorted({r["robot"] for r in rows3})
        fig, axes = plt.subplots(1, len(robots), figsize=(5 * len(robots), 3.6), layout="constrained", squeeze=False)
        for ax, which in zip(axes[0], robots):
            rs = [r for r in rows3 if r["robot"] == which]
            for key, label in (
                ("aba_s", "aba (XLA)"),
                ("crba-cholesky_s", "crba-cholesky (XLA)"),
                ("mjx_s", "MJX forward"),
                ("cpp_batch_s", f"C++ batch, {rs[0]['cpu_threads']} CPU threads"),
                ("pin_parallel_s", "pin.abaInParallel"),
            ):
                pts = [(r["B"], r[key] * 1e3) for r in rs if key in r]
                if pts:
                    ax.loglog(*zip(*pts), marker="o", label=label)
            ax.set(
                xlabel="robots B [-]",
                ylabel="time per batch [ms]",
                title=f"{which} ({rs[0]['nv']} DoF) on {rs[0]['device']}",
            )
            ax.legend(fontsize=7)
        log(f"wrote {save(fig, os.path.join(out, 'gpu_fig3.png'))}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks gpu", description=__doc__.split("\n")[0])
    ap.add_argument("--device", default=None, help="gpu or cpu (default: the GPU when JAX has one, else the CPU)")
    ap.add_argument("--fig", type=int, choices=(2, 3), action="append")
    ap.add_argument("--n", type=int, nargs="+", help="Fig. 2 links (default 8 16 32 64 128 256 512 1024)")
    ap.add_argument("--B", type=int, nargs="+", help="Fig. 3 robots (default 1 16 256 1024 4096 16384)")
    ap.add_argument("--robots", nargs="+", choices=("panda", "talos"), default=["panda", "talos"])
    ap.add_argument("--dtype", choices=("float32", "float64"), default="float32")
    ap.add_argument("--repeat", type=int)
    ap.add_argument("--quick", action="store_true", help="n = 8 … 256, B = 1, 64, 1024, 4096, 3 repeats")
    ap.add_argument("--out", default=".")
    ap.add_argument("--no-plot", action="store_true")
    args = ap.parse_args(argv)
    defaults = dict(n=[8, 16, 32, 64, 128, 256, 512, 1024], B=[1, 16, 256, 1024, 4096, 16384], repeat=5)
    if args.quick:
        defaults = dict(n=[8, 16, 32, 64, 128, 256], B=[1, 64, 1024, 4096], repeat=3)
    for key, value in defaults.items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    import jax

    from treedyn.xla import resolve_device

    has_gpu = any(d.platform == "gpu" for d in jax.devices())
    device = resolve_device(args.device or ("gpu" if has_gpu else "cpu"))
    dtype = np.dtype(args.dtype)
    os.makedirs(args.out, exist_ok=True)
    log = print
    log(
        f"device: {device.device_kind} ({device.platform}); jax {jax.__version__}; {args.dtype}; CPU cores: {os.cpu_count()}"
    )
    if device.platform != "gpu":
        log("no GPU: these are CPU figures (the XLA code on the CPU), not the GPU's")
    figs = args.fig or [2, 3]
    with jax.enable_x64(dtype == np.float64):
        rows2 = fig2(jax, device, dtype, args.n, args.repeat, log) if 2 in figs else []
        rows3 = fig3(jax, device, dtype, args.B, args.repeat, log, args.robots) if 3 in figs else []
    if rows2:
        write_csv(os.path.join(args.out, "gpu_fig2.csv"), rows2)
    if rows3:
        write_csv(os.path.join(args.out, "gpu_fig3.csv"), rows3)
        for r in rows3:
            if r["B"] == max(args.B):
                ratios = [f"C++ batch / aba = {r['cpp_batch_s'] / r['aba_s']:.2f}x"]
                if "mjx_s" in r:
                    ratios.append(f"MJX / aba = {r['mjx_s'] / r['aba_s']:.2f}x")
                log(f"headline {r['robot']} B={r['B']}: " + ", ".join(ratios) + f" (on {r['device']})")
    if not args.no_plot:
        plot(rows2, rows3, args.out, log)
    return 0
