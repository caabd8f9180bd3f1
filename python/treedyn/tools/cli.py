"""The ``treedyn`` command.

treedyn solvers                    list the solver plugins, dynamics and contact
treedyn compare chain:100          run every solver that supports the model, check that they
                                   agree, and print their times
treedyn compare robot.urdf --peers the same on a URDF (or MJCF .xml) file, and Pinocchio's (or
                                   MuJoCo's) own parser and dynamics on that file
treedyn simulate bridge:20,20 --steps 500 --out bridge.npz --plot bridge.png
                                   run a RedMax scene (bridge, bridge-rigid, umbrella, tree, chain) with
                                   redmax-direct or -pcg, write the trajectory and a picture of the end
treedyn simulate centipede:50 --plot walk.png --animate walk.gif
                                   a scene with contact through td.ContactSimulator (its gait as tau);
                                   prints contacts, penetration, iterations, the distance walked
treedyn view robot.urdf            the model, a scene or --trajectory RUN.npz in the 3D browser
                                   viewer; simulate ... --view / --html / --png: the run
treedyn info                       what this build has (OpenMP, SIMD, Eigen)
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings

import numpy as np

from .. import _checks
from .._version import __version__
from ..util.timing import time_call
from .cli_args import check_args
from .view_command import add_run_options, add_view_parser, show_run

# the widest a view of a contact scene gets, relative to its height: a long centipede is shown in a
# window around its centre of mass rather than as a thin line
MAX_ASPECT = 8.0


class Diverged(Exception):
    """treedyn simulate blew up: the message names scene, time, cause, a smaller step; exit EXIT_DIVERGED."""

    def __init__(self, scene: str, h: float, t: float, cause: str):
        super().__init__(
            f"{scene}: the simulation diverged at t = {t:.6g} s ({cause}). "
            f"The time step may be too large for this scene: try a smaller one, e.g. --h {h / 10:.3g} "
            f"(now h = {h:.3g})."
        )


EXIT_DIVERGED = 3  # 2: bad input (argparse's usage errors too)


def _cmd_solvers(args) -> int:
    from ..sim.contact_solvers import available_contact_solvers
    from ..solvers.registry import available_solvers, list_solver_classes

    classes = list_solver_classes()
    width = max((len(n) for n in classes), default=4)
    for name, desc in sorted(available_solvers().items()):
        caps = ", ".join(sorted(classes[name].capabilities))
        print(f"{name:<{width}}  {desc}" + (f"  [{caps}]" if args.verbose and caps else ""))
    print("\ncontact solvers (td.ContactSimulator(model, dt, contact_solver=name)):")
    for name, desc in available_contact_solvers().items():
        print(f"{name:<{width}}  {desc}")
    return 0


def _cmd_info(args) -> int:
    from .cli_args import readable_build_info

    print(json.dumps(readable_build_info(), indent=2))
    return 0


def _cmd_compare(args) -> int:
    from .._core import set_num_threads
    from ..algorithms.configuration import random_configuration
    from ..scenes import from_spec
    from ..solvers.registry import list_solver_classes, make_solver

    if args.threads:
        set_num_threads(args.threads)
    model = from_spec(args.model, floating_base=args.floating_base, mimic=args.mimic)
    if model.nv == 0:
        raise ValueError(
            f"model {args.model}: no moving joints (nv = 0), nothing to compare"
            + (
                "; --floating-base makes the root link free"
                if args.model.lower().endswith(".urdf") and not args.floating_base
                else ""
            )
        )
    rng = np.random.default_rng(args.seed)
    B = args.batch
    if B:
        q = np.stack([random_configuration(model, rng) for _ in range(B)])
        v, tau = rng.standard_normal((B, model.nv)), rng.standard_normal((B, model.nv))
    else:
        q = random_configuration(model, rng)
        v, tau = rng.standard_normal(model.nv), rng.standard_normal(model.nv)
    print(
        f"model {args.model}: {model.n_bodies - 1} bodies, nq = {model.nq}, nv = {model.nv}"
        + (f", batch of {B}" if B else "")
    )

    rows, skipped = [], []  # peer rows: Pinocchio on treedyn's model; with a file, the peer's own parser
    classes = sorted(list_solver_classes().items(), key=lambda kv: kv[0] != "aba")
    from ..util.progress import progress_bar

    bar = progress_bar(classes, desc="solvers", unit="solver", show=True if args.progress else None)
    reference = None
    # RedMax terms: only the solvers that model them are compared (joint springs: every solver's)
    terms = [t for t in model.force_elements if t != "joint springs"]
    if terms:
        classes = [(n, c) for n, c in classes if "springs" in c.capabilities] + [
            (n, c) for n, c in classes if "springs" not in c.capabilities
        ]
    for name, cls in bar:
        bar.set_postfix_str(name)
        reason = cls.supports(model)
        if not reason and terms and "springs" not in cls.capabilities:
            reason = f"the model has {', '.join(terms)}, which this solver leaves out"
        if reason:
            skipped.append((name, reason))
            continue
        if B and "batch" not in cls.capabilities:
            skipped.append((name, "no batched forward dynamics"))
            continue
        try:
            solver = make_solver(cls, model, internal=True)
            out = solver.forward_dynamics(q, v, tau)
        except Exception as e:  # a plugin that fails is reported, not fatal
            skipped.append((name, f"failed: {type(e).__name__}: {e}"))
            continue
        if reference is None:
            reference = out
        err = float(np.abs(out - reference).max() / max(1.0, np.abs(reference).max()))
        best, med = time_call(lambda: solver.forward_dynamics(q, v, tau), args.repeat)[:2]
        rows.append((name, best, med, err))
    if args.peers and terms:
        skipped.append(("peers", f"the model has {', '.join(terms)}, which the peers' tree dynamics leave out"))
    elif args.peers and not B and reference is not None:
        rows += _peer_rows(model, q, v, tau, reference, args)
        rows += _file_peer_rows(model, q, v, tau, reference, args)

    ok = True
    print(f"{'solver':<18}{'min [us]':>12}{'median [us]':>14}{'us/joint':>10}{'rel. diff':>12}  agree")
    for name, best, med, err in rows:
        agree = err <= args.rtol
        ok &= agree
        per = best * 1e6 / max(1, model.nv) / (B or 1)
        print(f"{name:<18}{best * 1e6:>12.2f}{med * 1e6:>14.2f}{per:>10.3f}{err:>12.2e}  {'yes' if agree else 'NO'}")
    for name, reason in skipped:
        print(f"{name:<18}skipped: {reason}")
    ref_name = rows[0][0] if rows else "aba"
    print(
        f"times: min and median of {args.repeat} samples per solver; "
        f"rel. diff: max |q̈ − q̈_{ref_name}| / max(1, max |q̈_{ref_name}|)"
    )
    if not ok:
        print(f"error: some solvers disagree beyond rtol = {args.rtol}", file=sys.stderr)
    return 0 if ok else 1


def _peer_rows(model, q, v, tau, reference, args):
    rows = []
    try:
        import pinocchio as pin

        from .peers import to_pinocchio
    except ImportError:
        return rows
    if model.nv > 300:  # Pinocchio's Data grows too large beyond a few hundred joints
        return rows
    pm = to_pinocchio(model)
    pd = pm.createData()
    out = pin.aba(pm, pd, q, v, tau).copy()
    err = float(np.abs(out - reference).max() / max(1.0, np.abs(reference).max()))
    best, med = time_call(lambda: pin.aba(pm, pd, q, v, tau), args.repeat)[:2]
    rows.append(("pinocchio.aba", best, med, err))
    return rows


def _file_peer_rows(model, q, v, tau, reference, args):
    """Pinocchio's (MuJoCo's) own parser on the URDF (MJCF) file: a check of the loader and the dynamics."""
    import os

    from ..scenes.spec import file_kind

    kind = file_kind(args.model) if os.path.isfile(args.model) else None
    if kind is None:
        return []
    try:
        from . import peers

        if kind == "urdf":
            peer, label = peers.PinocchioFromFile(model, args.model, args.floating_base), "pinocchio (URDF)"
        else:
            peer, label = peers.MujocoFromFile(model, args.model), "mujoco (MJCF)"
    except ImportError:
        return []
    except Exception as e:  # (the peer's own parser refuses the file: said, never a traceback)
        print(f"{'file peer':<18}skipped: {type(e).__name__}: {e}", file=sys.stderr)
        return []
    out = peer.forward_dynamics(q, v, tau)
    err = float(np.abs(out - reference).max() / max(1.0, np.abs(reference).max()))
    best, med = time_call(peer.peer_call(q, v, tau), args.repeat)[:2]
    return [(label, best, med, err)]


def _has_contact(scene) -> bool:
    """A scene for the ContactSimulator: a controller (gait) or geoms that can collide."""
    from ..sim.collision import collision_pairs

    return getattr(scene, "tau", None) is not None or bool(collision_pairs(scene.model))


def _steps_bar(steps: int, desc: str, always: bool):
    """A progress bar over ``steps`` steps on stderr (a terminal's, or always: --progress)."""
    from ..util.progress import progress_bar

    return progress_bar(total=steps, desc=desc, unit="step", show=True if always else None)


def _cmd_simulate(args) -> int:
    from .._core import set_num_threads
    from ..scenes import scene_from_spec

    if args.steps is not None and args.steps < 1:
        raise ValueError(f"--steps must be >= 1, got {args.steps}")
    if args.every < 1:
        raise ValueError(f"--every must be >= 1, got {args.every}")
    if args.h is not None:
        _checks.real(args.h, "--h", positive=True)
    if args.animate:
        if not args.animate.lower().endswith(".gif"):
            raise ValueError(
                f"--animate writes a GIF (matplotlib's PillowWriter): give a .gif file, got {args.animate!r}"
            )
        if args.frames < 2:
            raise ValueError(f"--frames must be >= 2, got {args.frames}")
        _checks.real(args.fps, "--fps", positive=True)
    if args.threads:
        set_num_threads(args.threads)
    scene = scene_from_spec(args.scene)
    if _has_contact(scene):
        return _simulate_contact(scene, args)
    for option, given in (("--integrator", args.integrator), ("--contact-solver", args.contact_solver)):
        if given is not None:
            raise ValueError(
                f"{option} is for scenes with contact; {scene.name} is stepped by the RedMax solvers' implicit step"
            )
    return _simulate_redmax(scene, args)


def _simulate_redmax(scene, args) -> int:
    """A RedMax scene: the solver's own (linearly implicit) step, td.sim.step.solver_step."""
    from ..sim.result import SolverStepTrajectory
    from ..sim.step import StepFailed, run_steps, solver_step
    from ..solvers import make_solver

    solver_name = args.solver or "redmax-direct"
    steps = 500 if args.steps is None else args.steps
    h = scene.h if args.h is None else args.h
    solver = make_solver(solver_name, scene.model, h=h, internal=True)
    state = scene.state.copy()
    keys = ("position_residual", "velocity_residual", "iterations", "max_iterations", "unconverged", "seconds")
    bar = _steps_bar(steps, f"{scene.name} ({scene.model.nv} DOF, {solver_name})", args.progress)
    t0 = time.perf_counter()
    kept, per_step, failure = run_steps(
        state,
        lambda state, h: solver_step(solver, state, h),
        steps,
        h,
        record_every=args.every,
        bar=bar,
        stop=StepFailed,
    )
    if failure is not None:  # a singular step matrix, a PCG breakdown, an overflow; or inf/NaN
        k = len(per_step)
        cause = f"step {k + 1} failed: {failure}" if failure.__cause__ else f"the state is NaN/inf after step {k + 1}"
        raise Diverged(scene.name, h, state.t, cause)
    wall = time.perf_counter() - t0
    t, q, v = kept.arrays()
    traj = SolverStepTrajectory(
        t=t,
        q=q,
        v=v,
        method=solver_name,
        n_evals=len(per_step),
        n_accepted=len(per_step),
        min_step=h,
        stats={key: np.array([st.get(key, 0) for st in per_step]) for key in keys},
    )
    stats = traj.stats
    res = stats["position_residual"]
    print(
        f"{scene.name}: {scene.model.nv} DOF, {steps} steps of h = {h:g} ({state.t:g} s simulated) "
        f"in {wall:.3f} s with {solver_name}"
    )
    if scene.model.loop_closures:
        print(f"  loop-closure residual: max {res.max():.3e}, final {res[-1]:.3e}")
    if solver_name == "redmax-pcg":
        it = stats["iterations"]
        print(
            f"  PCG iterations per step: mean {it.mean():.1f}, max {it.max()}; "
            f"unconverged solves {int(np.sum(stats['unconverged']))}"
        )
    if args.out:
        np.savez_compressed(args.out, t=traj.t, q=traj.q, v=traj.v, scene=scene.name, solver=solver_name, h=h, **stats)
        print(f"  trajectory: {args.out} ({len(traj.t)} states)")
    show_run(scene.model, traj, scene.name, args)
    shapes = scene.info.get("shapes") if isinstance(scene.info, dict) else None
    plt = _pyplot() if args.plot or args.animate else None
    if plt is None:
        return 0
    if args.plot:
        from .plot import draw

        ax = draw(scene.model, state.q, title=f"{scene.name} at t = {state.t:.4g} s", shapes=shapes, t=state.t)
        ax.figure.savefig(args.plot, dpi=120, bbox_inches="tight")
        plt.close(ax.figure)
        print(f"  final state: {args.plot}")
    if args.animate:
        _animate(scene, args, traj.t, traj.q, shapes=shapes, views=None, com=False, max_aspect=None)
    return 0


def _simulate_contact(scene, args) -> int:
    """A scene with contact: td.ContactSimulator driven by the scene's tau (its gait), if any."""
    from ..algorithms.kinematics import center_of_mass
    from ..sim.contact import ContactSimulator
    from ..sim.contact_solvers import CONTACT_SOLVERS
    from ..sim.simulate import SimulationError
    from ..solvers.registry import get_solver_class

    contact_solver = _checks.choice(args.contact_solver or "admm", "--contact-solver", CONTACT_SOLVERS)
    in_engine = CONTACT_SOLVERS[contact_solver].in_engine
    if args.solver is not None and in_engine:
        raise ValueError(
            f"--solver {args.solver} gives the dynamics and M⁻¹[N D] of a contact solver in Python (proxqp, plugins); "
            "the C++ step (admm, the default) has its own articulated-body passes: add --contact-solver proxqp or drop --solver"
        )
    solver_name = args.solver or "drumwright"
    if "inverse_inertia" not in get_solver_class(solver_name).capabilities:
        raise ValueError(
            f"solver {solver_name!r} has no inverse_inertia: the contact impulses need M⁻¹[N D] "
            "(drumwright, aba, crba-cholesky, crba-ltl, ...)"
        )
    h = scene.h if args.h is None else args.h
    steps = scene.steps if args.steps is None else args.steps
    model, tau = scene.model, scene.tau
    sim = ContactSimulator(model, h, solver=solver_name, integrator=args.integrator, contact_solver=contact_solver)
    integrator = sim.integrator + (", MuJoCo's soft constraints" if sim.soft else "")
    label = "the C++ step" if in_engine else solver_name
    state = scene.state.copy()
    t0 = time.perf_counter()
    try:
        traj = sim.run(
            state,
            state.t + steps * h,
            tau=tau,
            record_every=args.every,
            progress=args.progress or sys.stderr.isatty(),
            max_steps=steps + 1,  # (the steps asked for: t_end's rounding may add one)
            record_contacts=bool(args.view or args.html or args.png),
        )
    except (SimulationError, ValueError, ArithmeticError) as e:  # non-finite state, an overflowed q̈ or v
        raise Diverged(scene.name, h, state.t, str(e)) from None
    wall = time.perf_counter() - t0
    t, q, n_contacts, qp_it = traj.t, traj.q, traj.n_contacts, traj.qp_iterations
    com = np.atleast_2d(center_of_mass(model, q))
    walked = com[-1, 0] - com[0, 0]
    print(
        f"{scene.name}: {model.nv} DOF, {steps} steps of h = {h:g} ({state.t:g} s simulated) "
        f"in {wall:.3f} s with {label} ({integrator}, contact solver {contact_solver})"
    )
    print(
        f"  contacts per step: mean {n_contacts.mean():.2f}, max {n_contacts.max()}; "
        f"max penetration {traj.max_penetration.max():.3e} m; QP iterations per step: mean {qp_it.mean():.1f}, max {qp_it.max()}"
    )
    print(
        f"  centre of mass {'walked' if tau is not None else 'moved'} {walked:+.4g} m along x "
        f"({walked / max(t[-1] - t[0], 1e-300):+.3g} m/s; x from {com[0, 0]:.4g} to {com[-1, 0]:.4g} m)"
    )
    if model.n_constraint_rows:
        worst = max(model.constraint_residual(x) for x in q)
        print(f"  constraints (loop closures, couplings): {model.n_constraint_rows} rows, max |C(q)| {worst:.3e}")
    if traj.n_limits.any():
        print(f"  joint limits in the problem per step: mean {traj.n_limits.mean():.2f}, max {traj.n_limits.max()}")
    if args.out:
        np.savez_compressed(
            args.out,
            t=t,
            q=q,
            v=traj.v,
            com=com,
            scene=scene.name,
            solver="" if in_engine else solver_name,
            contact_solver=contact_solver,
            integrator=sim.integrator,
            h=h,
            n_contacts=n_contacts,
            max_penetration=traj.max_penetration,
            qp_iterations=qp_it,
            seconds=traj.seconds,
        )
        print(f"  trajectory: {args.out} ({len(t)} states)")
    show_run(model, traj, scene.name, args)
    plt = _pyplot() if args.plot or args.animate else None
    if plt is None:
        return 0
    views = ((0, 2), (0, 1))  # side (x–z) and top (x–y): the ground is z = 0, the walk along x
    if args.plot:
        from .plot import trajectory_figure

        fig = trajectory_figure(model, t, q, views=views, title=scene.name, com=True, max_aspect=MAX_ASPECT)
        fig.savefig(args.plot, dpi=120, bbox_inches="tight")
        plt.close(fig)
        print(f"  final state and centre of mass: {args.plot}")
    if args.animate:
        _animate(scene, args, t, q, shapes=None, views=views, com=True, max_aspect=MAX_ASPECT)
    return 0


def _pyplot():
    """matplotlib.pyplot on the Agg backend, or None (with a note) when matplotlib is missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("treedyn: matplotlib is not installed: no plot (pip install matplotlib)", file=sys.stderr)
        return None
    return plt


def _animate(scene, args, t, q, *, shapes, views, com, max_aspect):
    from .plot import animate

    t0 = time.perf_counter()
    n = animate(
        scene.model,
        t,
        q,
        args.animate,
        views=views,
        shapes=shapes,
        title=scene.name,
        frames=args.frames,
        fps=args.fps,
        com=com,
        max_aspect=max_aspect,
    )
    print(f"  animation: {args.animate} ({n} frames of {len(t)} recorded states, {time.perf_counter() - t0:.1f} s)")


#: the examples ``treedyn --help`` ends with (tests/tools/test_cli.py runs each)
EXAMPLES = (
    ("treedyn solvers -v", "list the solver plugins and what each can do"),
    ("treedyn compare chain:100", "run every solver on a 100-link chain, check that they agree, time them"),
    ("treedyn compare robot.urdf --peers", "the same on a URDF (or MJCF) file, with Pinocchio's (MuJoCo's) parser"),
    ("treedyn simulate bridge:20,20 --steps 500 --out bridge.npz", "a RedMax scene, its trajectory to a file"),
    ("treedyn simulate centipede:10 --steps 200 --plot walk.png", "the centipede walking with contact"),
    ("treedyn info", "what this build has (OpenMP, SIMD, Eigen)"),
)


def _version() -> str:
    return __version__


def build_parser() -> argparse.ArgumentParser:
    """The ``treedyn`` command's argument parser."""
    p = argparse.ArgumentParser(
        prog="treedyn",
        description="Dynamics of highly articulated rigid-body trees.",
        epilog="examples:\n" + "\n".join(f"  {cmd}\n      {what}" for cmd, what in EXAMPLES),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--version", action="version", version=f"treedyn {_version()}")
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("solvers", help="list the solver plugins")
    s.add_argument("-v", "--verbose", action="store_true", help="also list capabilities")
    s.set_defaults(func=_cmd_solvers)
    c = sub.add_parser("compare", help="run every solver on a model, check agreement, time them")
    c.add_argument(
        "model",
        help="chain:N, chain-fb:N, random:N, random-all:N, a RedMax scene (tree:LEVELS, bridge, ...), or a model file",
    )
    c.add_argument("--repeat", type=int, default=7, help="timing samples per solver (default 7)")
    c.add_argument("--batch", type=int, default=0, help="time a batch of B random states")
    c.add_argument("--threads", type=int, default=0, help="OpenMP threads (default: all)")
    c.add_argument("--seed", type=int, default=0)
    c.add_argument("--rtol", type=float, default=1e-8, help="agreement tolerance (default 1e-8)")
    c.add_argument(
        "--peers",
        action="store_true",
        help="also time Pinocchio's aba when installed; for a URDF / MJCF file, also run "
        "Pinocchio's / MuJoCo's own parser on it and compare",
    )
    c.add_argument("--floating-base", action="store_true", help="URDF: a free joint at the root link")
    c.add_argument(
        "--mimic",
        choices=("couple", "independent", "error"),
        default="couple",
        help="URDF: a <mimic> joint follows its leader (couple, the default: a constraint kept by simulate), "
        "is an ordinary independent joint, or is an error",
    )
    # a file is read as URDF or MJCF after its root element (<robot>, <mujoco>)
    c.add_argument("--progress", action="store_true", help="always show the progress bar")
    c.set_defaults(func=_cmd_compare)
    r = sub.add_parser(
        "simulate",
        help="run a scene (RedMax, or with contact: the centipede) and write its trajectory",
        description="A RedMax scene runs with the redmax-* implicit step; a scene with contact (a gait, or "
        "geoms that can collide) runs through td.ContactSimulator, driven by the scene's tau. Exit status: 0; "
        "2 for bad input; 3 when the simulation diverges (NaN/inf or a failed step: the message suggests a "
        "smaller --h).",
    )
    r.add_argument(
        "scene",
        help="bridge[:N_DECK,N_TOWER,params=sim|video,car=car|heavy], bridge-rigid:N, "
        "umbrella:N, tree:LEVELS[,springs=square], centipede[:N_SEGMENTS,friction=MU], chain:N, random:N, ..., "
        "or a model file",
    )
    r.add_argument(
        "--steps",
        type=int,
        default=None,
        help="time steps (default: 500 for a RedMax scene; the scene's duration / h with contact, "
        "2000 for the centipede)",
    )
    r.add_argument(
        "--h", type=float, default=None, help="time step (default: the scene's: 0.01 RedMax, 0.001 centipede)"
    )
    r.add_argument(
        "--solver",
        default=None,
        help="RedMax scenes: redmax-direct (default) or redmax-pcg; contact scenes with --contact-solver proxqp: "
        "the solver giving the dynamics and M⁻¹[N D], drumwright (default), aba, crba-cholesky, ...",
    )
    r.add_argument(
        "--contact-solver",
        default=None,
        help="contact scenes: admm (default: the whole step in C++), proxqp (the reference, with --solver) or a plugin's",
    )
    r.add_argument(
        "--integrator",
        choices=("semi-implicit", "euler", "rk4"),
        default=None,
        help="contact scenes: semi-implicit (default; an MJCF file's own), explicit euler, or rk4 (soft constraints)",
    )
    r.add_argument("--out", default=None, help="write the trajectory to this .npz file")
    r.add_argument("--every", type=int, default=1, help="keep every k-th state in the trajectory")
    r.add_argument(
        "--plot",
        default=None,
        help="draw the final state to this image (matplotlib); contact scenes: side and top views and "
        "the centre of mass x over time",
    )
    r.add_argument(
        "--animate",
        default=None,
        metavar="FILE.gif",
        help="write an animation of the kept states to this GIF (matplotlib.animation, PillowWriter)",
    )
    r.add_argument("--frames", type=int, default=100, help="at most this many animation frames (default 100)")
    r.add_argument("--fps", type=float, default=20.0, help="animation frames per second (default 20)")
    r.add_argument("--threads", type=int, default=0, help="OpenMP threads (default: all)")
    r.add_argument("--progress", action="store_true", help="always show the progress bar")
    add_run_options(r)
    r.set_defaults(func=_cmd_simulate)
    add_view_parser(sub)
    i = sub.add_parser("info", help="what this build has")
    i.set_defaults(func=_cmd_info)
    return p


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        check_args(args)
        with warnings.catch_warnings():  # warnings as plain lines while the command runs
            warnings.showwarning = lambda message, category, *rest, **kw: print(
                f"treedyn: {category.__name__}: {message}", file=sys.stderr
            )
            return args.func(args)
    except Diverged as e:
        print(f"treedyn: error: {e}", file=sys.stderr)
        return EXIT_DIVERGED
    except (ValueError, TypeError, KeyError, OSError) as e:  # (OSError: a file the run could not write)
        print(f"treedyn: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
