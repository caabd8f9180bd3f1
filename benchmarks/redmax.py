"""baxter2019 §4 (Figs. 3-4, 8, 10, 14-15, 17, 19-20, 22, 25-26): RedMax PCG against direct solvers.

    python -m benchmarks redmax [--scenes bridge-rigid bridge-flexible bridge-car bridge-heavy
                                     umbrella tree tree-square] [--steps 50] [--warmup 1]
                                    [--size FAMILY=N1,N2,...] [--max-nv NV] [--threads N]
                                    [--solvers redmax-pcg redmax-direct pardiso] [--fit-min 100]
                                    [--h 1e-2] [--bridge-params sim|video] [--umbrella-params video|sim]
                                    [--out DIR] [--quick] [--no-plot] [--no-progress]

For every scene family, over increasing sizes, the scene (``treedyn.scenes``) is simulated from
its initial state for --steps steps of h = 1e-2 (after --warmup untimed steps) by
  redmax-pcg     the projected block Jacobi PCG (tol 1e-8, warm starts, loop columns over OpenMP)
  redmax-direct  the sparse assembly of M̃_r and Eigen's SimplicialLDLT (AMD ordering)
  pardiso        Intel MKL Pardiso (pypardiso) on the same assembled matrix (``sparse_system`` of
                 a redmax-direct solver: the assembly in C++ is part of its time), symmetric
                 indefinite (mtype -2, upper triangle, minimum-degree ordering, the pattern
                 analysed once: M̃ is not always positive definite, compressed springs make −h²K
                 indefinite), one factorisation for the right-hand sides [f̃_r, Gᵀ], then
                 the dual solve for λ (least squares, rcond 1e-10) and v = v₀ − Yλ; only when
                 pypardiso is installed.
Time per step = wall time of the timed steps / steps (each solver starts from the same state),
the minimum over --repeat runs (default 3; a run longer than --repeat-max = 5 s is not repeated).
The thesis simulates 5 s (500 steps); the default here is 50 steps, the first 0.5 s (--steps 500
for the full 5 s; the PCG iterations, which depend on the motion, change along the run: the
first half second of the car scenes has the car on the first tenth of the deck).

Families (size parameter -> reduced DOF nv):
  bridge-rigid     bridge_rigid(n_deck): nv = n_deck
  bridge-flexible  bridge(n, n, params): deck and towers n blocks each (the thesis' thirds), nv = 3n
  bridge-car       the same with the car (4800 N crossing the deck in 5 s)
  bridge-heavy     the same with the heavy car (500x); with params "sim" it blows up at h = 1e-2
                   (a known limitation): such runs are written as failed and the sweep goes on
  umbrella         umbrella(n): 8 ribs of n bodies, 8 stretchers of n//2, nv = 1 + 16n + 16(n//2)
  tree             tree(levels): nv = 3(2^levels - 1), springs between siblings
  tree-square      tree(levels, springs="square"): the alternate tree (Figs. 23-26)

Writes redmax.csv (one row per scene, size and solver, appended as soon as it is measured: Ctrl-C
keeps what was measured and still prints the summary), redmax_time.png (time per step against DOF,
one panel per family, log-log) and redmax_iterations.png (PCG iterations per step and per solve).
Prints the log-log slopes fitted on the points with nv >= --fit-min (the thesis drops its first,
small sizes from its fits too), the crossover DOF from which PCG stays faster than each direct
solver, and the thesis' values beside them.

Threads: --threads sets td.set_num_threads (PCG's loop-closure columns) and MKL's threads
(Pardiso) alike. Default: all cores (2 here), as the thesis ran its loop-closure solves in
parallel and Pardiso uses its threads; PCG keeps a small system's solves serial (fewer than
8192 columns x DOF). On a shared host a parallel region can wait for a time slice (~5-8 ms)
while another process holds a core: --threads 1 gives steadier numbers.

What this machine found (2026-11-21 09:38, defaults: 50 steps, minimum of 3 runs, 2 threads,
pypardiso 0.4.7 / MKL 2026.2, load average 0.9-1.1; slopes fitted on nv >= 100):
  scene            PCG [thesis]  direct [thesis]  Pardiso  PCG faster than direct / Pardiso from
  bridge-rigid     0.87 [0.94]   2.48 [2.74]      1.75     ~16 / every size (10 DOF)        [thesis 60]
  bridge-flexible  1.05 [1.00]   2.39 [2.39]      1.74     ~135 / every size
  bridge-car       1.07 [1.21]   2.44 [2.47]      1.71     ~135 / every size                [thesis 270]
  bridge-heavy     fails at 60 DOF and up ("sim", h = 1e-2: the deck flails under 2.4e6 N; with
                   --bridge-params video it runs) [thesis 306]
  umbrella         0.77 [1.38]   2.04 [2.35]      1.58     ~256 / ~231                      [~350]
  tree             1.25          1.24             1.09     direct faster at every size (thesis: direct faster)
  tree-square      1.50          1.47             1.20     direct faster at every size (thesis: direct faster)
Umbrella at 1153 DOF: PCG 5.9 ms per step, redmax-direct 42.0, Pardiso 24.1 (18.2 of it our
assembly of M̃_r; its factorisation and solves alone: PCG is faster from ~805 DOF).
PCG iterations per step: rigid bridge 3 at every size (7 solves, none over 1 iteration: the exact
preconditioner); flexible bridge 14.8 -> 22.6 (12 -> 1500 DOF, slope 0.08); umbrella 44 -> 114
(49 -> 1153, 34 solves per step, 3.3 per solve; slope 0.24); tree 2 -> 33 (9 -> 1533, slope
0.34); alternate tree 3.7 -> 90 (9 -> 1533, slope 0.58).
Caveats: (1) the assembly of M̃_r (``sparse_system``) is most of Pardiso's time (column "P f+s":
Pardiso without it). (2) The flexible bridge with the ordinary car ("sim") diverges at 999 DOF
at t ≈ 4.2 s in all three solvers (a 500-step run), so 50 steps are timed. (3) On one thread
(--threads 1) the umbrella's loop-closure block is solved by one core: PCG slope 1.05, faster than
direct from ~350 DOF and than Pardiso from ~500 (10.0 ms against 42.0 and 26.8 ms at 1153 DOF).
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import platform
import sys
import time
from collections.abc import Sequence

import numpy as np

import treedyn as td
from treedyn import scenes

from ._common import crossover, fit, log_ticks, pyplot, save

SOLVERS = ("redmax-pcg", "redmax-direct", "pardiso")
PCG, DIRECT, PARDISO = SOLVERS
#: Pardiso's time without the assembly (derived from the pardiso rows, not a solver of its own)
PARDISO_FS = "pardiso-factor-solve"

#: family -> (label, builder(size, args) -> Scene, default sizes, quick sizes)
FAMILIES: dict[str, tuple] = {
    "bridge-rigid": (
        "bridge, rigid towers",
        lambda n, a: scenes.bridge_rigid(n),
        [10, 20, 40, 60, 100, 150, 250, 400, 600, 1000, 1500],
        [10, 40, 150],
    ),
    "bridge-flexible": (
        "bridge, flexible towers",
        lambda n, a: scenes.bridge(n, n, params=a.bridge_params),
        [4, 7, 12, 20, 35, 50, 80, 120, 200, 333, 500],
        [4, 12, 50],
    ),
    "bridge-car": (
        "bridge, flexible towers, car",
        lambda n, a: scenes.bridge(n, n, params=a.bridge_params, car="car"),
        [4, 7, 12, 20, 35, 50, 80, 120, 200, 333, 500],
        [4, 12, 50],
    ),
    "bridge-heavy": (
        "bridge, flexible towers, heavy car",
        lambda n, a: scenes.bridge(n, n, params=a.bridge_params, car="heavy"),
        [4, 7, 12, 20, 35, 50, 80, 120, 200, 333, 500],
        [4, 12, 50],
    ),
    "umbrella": (
        "umbrella",
        lambda n, a: scenes.umbrella(n, params=a.umbrella_params),
        [2, 4, 6, 8, 12, 16, 20, 28, 34, 48],
        [2, 4, 8],
    ),
    "tree": ("tree (sibling springs)", lambda n, a: scenes.tree(n), [2, 3, 4, 5, 6, 7, 8, 9], [2, 3, 5]),
    "tree-square": (
        "alternate tree (square springs)",
        lambda n, a: scenes.tree(n, springs="square"),
        [2, 3, 4, 5, 6, 7, 8, 9],
        [2, 3, 5],
    ),
}

#: the thesis' numbers (baxter2019 §4): slopes of time vs DOF fitted without the first points, and
#: the DOF from which PCG (RedMax) is faster than the direct solver (Pardiso)
THESIS = {
    "bridge-rigid": dict(pcg=0.94, direct=2.74, crossover="60", note="PCG: 1 iteration"),
    "bridge-flexible": dict(pcg=1.00, direct=2.39, crossover="-", note=""),
    "bridge-car": dict(
        pcg=1.21, direct=2.47, crossover="270", note="slopes: 'even for the scene with lots of movement'"
    ),
    "bridge-heavy": dict(pcg=None, direct=None, crossover="306", note="slopes not given apart (1.21/2.47 above)"),
    "umbrella": dict(pcg=1.38, direct=2.35, crossover="~350", note="iterations clearly sublinear"),
    "tree": dict(pcg=None, direct=None, crossover="never", note="direct faster; iterations ~linear"),
    "tree-square": dict(pcg=None, direct=None, crossover="never", note="direct faster; slopes close"),
}

FIELDS = [
    "scene",
    "size",
    "nv",
    "solver",
    "threads",
    "h",
    "steps",
    "steps_done",
    "repeats",
    "seconds_per_step",
    "seconds_per_step_median",
    "seconds_total",
    "solver_seconds_per_step",
    "assembly_seconds_per_step",
    "pcg_iterations_per_step",
    "pcg_iterations_per_solve",
    "pcg_max_iterations",
    "solves_per_step",
    "unconverged",
    "constraint_rows",
    "position_residual",
    "max_abs_v",
    "failed",
    "error",
    "load",
]


# ---------------------------------------------------------------------------------------------
# Pardiso on the assembled matrix


def _pypardiso():
    """the pypardiso module, or None. Sets KMP_BLOCKTIME=0 first (unless set) so that MKL's Intel
    OpenMP threads do not spin after a Pardiso call and take a core from treedyn's threads."""
    os.environ.setdefault("KMP_BLOCKTIME", "0")
    try:
        import pypardiso
    except ImportError:
        return None
    return pypardiso


def pardiso_available() -> bool:
    return _pypardiso() is not None


class PardisoStepper:
    """One RedMax step with MKL Pardiso on M̃_r assembled by redmax-direct's ``sparse_system``.

    ``step(state, h)`` advances a td.State in place like the RedMax solvers: M̃ X = [f̃, Gᵀ] with one
    factorisation (v₀ = X[:, 0], Y = X[:, 1:]), λ by least squares on (Gᵀ)ᵀY λ = Gv₀ + βC (rcond
    1e-10: redundant rows of planar loops), v = v₀ − Yλ, q ← integrate(q, v, h), t += h.
    mtype -2 (symmetric indefinite, upper triangle: default, like redmax-direct's LDLᵀ), 2
    (symmetric positive definite; on a matrix that is not, falls back to -2 for the rest of the
    run — Pardiso's failing factorisation costs ~0.6 s at 1533 DOF) or 11 (general, both
    triangles). The sparsity pattern is analysed (phase 11) when it first appears or changes;
    every step then factors and solves (phase 23)."""

    name = PARDISO

    def __init__(self, model, h: float = 1e-2, mtype: int = -2, threads: int | None = None):
        pp = _pypardiso()
        if pp is None:
            raise ImportError("pypardiso is not installed (pip install pypardiso)")
        if mtype not in (2, -2, 11):
            raise ValueError(f"mtype must be 2, -2 or 11, got {mtype}")
        self.model, self.h, self.mtype = model, float(h), mtype
        self.direct = td.make_solver("redmax-direct", model, h=h)
        self._pp = pp
        self.ps = self._new(mtype)
        self._indefinite = None
        self.fallback_step = None  # the step from which mtype -2 was used (M̃ not positive definite)
        self.steps = 0
        self._pattern = None
        self._upper = None
        if threads is not None:
            set_mkl_threads(self.ps, threads)

    def _new(self, mtype):
        ps = self._pp.PyPardisoSolver(mtype=mtype)
        # pypardiso looks for libmkl_rt by a recursive glob of sys.prefix (~0.6 s) unless told
        os.environ.setdefault("PYPARDISO_MKL_RT", ps.libmkl._name)
        # explicit iparm (iparm[1] = 1): minimum-degree ordering (like Eigen's AMD; faster than
        # the METIS default on these matrices), pivot perturbation 1e-8, the rest Pardiso's defaults
        for i, v in ((1, 1), (2, 0), (10, 8), (12, 0)):
            ps.set_iparm(i, v)
        return ps

    def _matrix(self, s):
        import scipy.sparse as sp

        n = self.model.nv
        # the CSC arrays of a symmetric matrix read as CSR are the same matrix
        indptr, indices, data = s["indptr"], s["indices"], s["data"]
        key = (indptr.tobytes(), indices.tobytes())
        if key != self._pattern:
            self._pattern = key
            if self.mtype in (2, -2):
                rows = np.repeat(np.arange(n), np.diff(indptr))
                self._upper = indices >= rows
                counts = np.bincount(rows[self._upper], minlength=n)
                self._indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
                self._indices = indices[self._upper].astype(np.int32)
            fresh = True
            self._analysed = self._analysed_indefinite = False
        else:
            fresh = False
        if self.mtype in (2, -2):
            A = sp.csr_matrix((data[self._upper], self._indices, self._indptr), shape=(n, n))
        else:
            A = sp.csr_matrix((data, indices, indptr), shape=(n, n))
        return A, fresh

    def solve_system(self, s) -> np.ndarray:
        """M̃⁻¹ [f̃, Gᵀ] for a ``sparse_system`` dict. With mtype 2, once a matrix is not positive
        definite (compressed springs make −h²K indefinite: the tree at 1533 DOF does within a few
        steps), that step and the rest are solved by a second, symmetric indefinite (mtype −2)
        Pardiso instance."""
        A, fresh = self._matrix(s)
        B = np.asfortranarray(np.column_stack([s["rhs"], s["Gt"]]))
        if self._indefinite is None:
            try:
                return self._solve(self.ps, A, B, fresh, "_analysed").reshape(B.shape)
            except self._pp.pardiso_wrapper.PyPardisoError as e:
                if self.mtype != 2 or e.value != -4:
                    raise
                self._indefinite = self._new(-2)  # from now on, for the rest of the run
                self.fallback_step = self.steps
        return self._solve(self._indefinite, A, B, fresh, "_analysed_indefinite").reshape(B.shape)

    def _solve(self, ps, A, B, fresh, flag):
        if fresh or not getattr(self, flag, False):
            ps.set_phase(11)
            ps._call_pardiso(A, B)  # A is CSR with sorted indices; iparm 12 = 0 (not transposed)
            setattr(self, flag, True)
        ps.set_phase(23)
        return ps._call_pardiso(A, B)

    def step(self, state, h: float | None = None) -> dict:
        h = self.h if h is None else float(h)
        t0 = time.perf_counter()
        s = self.direct._impl.sparse_system(state.q, state.v, state.t, h)
        t1 = time.perf_counter()
        X = self.solve_system(s)
        self.steps += 1
        v = X[:, 0].copy()
        Gt = s["Gt"]
        l = Gt.shape[1]
        if l:
            Y = X[:, 1:]
            A = Gt.T @ Y
            b = Gt.T @ v + s["baumgarte"] * s["C"]
            lam = np.linalg.lstsq(A, b, rcond=1e-10)[0]
            v -= Y @ lam
        if not np.all(np.isfinite(v)):
            raise ValueError("the Pardiso step overflowed to inf/NaN")
        state.q = td.integrate(self.model, state.q, v, h)
        state.v = v
        state.t = state.t + h
        return dict(
            iterations=0,
            max_iterations=0,
            solves=1 + l,
            unconverged=0,
            constraint_rows=l,
            pardiso_indefinite_from=self.fallback_step,
            position_residual=self.direct.constraint_residual(state.q) if l else 0.0,
            seconds=time.perf_counter() - t0,
            assembly_seconds=t1 - t0,
        )

    def close(self):
        for ps in (self.ps, self._indefinite):
            try:
                if ps is not None:
                    ps.free_memory(everything=False)
            except Exception:
                pass


def set_mkl_threads(ps, threads: int) -> None:
    import ctypes

    for fn in ("MKL_Set_Num_Threads", "mkl_set_num_threads"):
        f = getattr(ps.libmkl, fn, None)
        if f is not None:
            f(ctypes.c_int(int(threads)))
            return


def make_stepper(name: str, model, h: float, threads: int, tol: float = 1e-8):
    if name == PARDISO:
        return PardisoStepper(model, h, threads=threads)
    if name == PCG:
        return td.make_solver(PCG, model, h=h, tol=tol)
    return td.make_solver(name, model, h=h)


# ---------------------------------------------------------------------------------------------
# the sweep


def run_one(scene, name: str, steps: int, warmup: int, threads: int, tol: float = 1e-8, h: float | None = None) -> dict:
    """Simulate ``scene`` from a copy of its initial state: ``warmup`` untimed steps, then
    ``steps`` timed ones of h (default the scene's). Failures (exceptions, non-finite state) give
    failed = 1."""
    h = scene.h if h is None else float(h)
    row = dict(solver=name, threads=threads, h=h, steps=steps, steps_done=0, failed=0, error="")
    state = scene.state.copy()
    its = solves = unconverged = maxit = 0
    cpp = assembly = 0.0
    stepper = None
    wall = 0.0
    last = {}
    try:
        stepper = make_stepper(name, scene.model, h, threads, tol)
        for _ in range(warmup):
            stepper.step(state, h)
            _check(state)
        t0 = time.perf_counter()
        for k in range(steps):
            last = stepper.step(state, h)
            _check(state)
            its += int(last.get("iterations", 0))
            solves += int(last.get("solves", 0))
            unconverged += int(last.get("unconverged", 0))
            maxit = max(maxit, int(last.get("max_iterations", 0)))
            cpp += float(last.get("seconds", 0.0))
            assembly += float(last.get("assembly_seconds", 0.0))
            row["steps_done"] = k + 1
        wall = time.perf_counter() - t0
    except (ValueError, RuntimeError, ArithmeticError, np.linalg.LinAlgError, FloatingPointError) as e:
        row["failed"], row["error"] = 1, f"step {warmup + row['steps_done']}: {type(e).__name__}: {e}"[:300]
    except Exception as e:  # e.g. PyPardisoError
        row["failed"], row["error"] = 1, f"step {warmup + row['steps_done']}: {type(e).__name__}: {e}"[:300]
    finally:
        if isinstance(stepper, PardisoStepper):
            stepper.close()
    done = row["steps_done"]
    row.update(
        constraint_rows=last.get("constraint_rows", ""),
        position_residual=last.get("position_residual", ""),
        max_abs_v=float(np.abs(state.v).max()) if state.v.size and np.all(np.isfinite(state.v)) else "",
    )
    if not row["failed"] and done:
        if name == PARDISO:
            row.update(assembly_seconds_per_step=assembly / done)
        row.update(
            seconds_per_step=wall / done,
            seconds_total=wall,
            solver_seconds_per_step=cpp / done,
            solves_per_step=solves / done,
            unconverged=unconverged,
        )
        if name == PCG:
            row.update(
                pcg_iterations_per_step=its / done,
                pcg_iterations_per_solve=its / max(solves, 1),
                pcg_max_iterations=maxit,
            )
    return row


def _check(state):
    if not (np.all(np.isfinite(state.q)) and np.all(np.isfinite(state.v))):
        raise FloatingPointError("non-finite state")


def _load() -> str:
    return f"{os.getloadavg()[0]:.2f}" if hasattr(os, "getloadavg") else ""


def sweep(
    families: Sequence[str],
    sizes: dict[str, list[int]],
    solvers: Sequence[str],
    steps: int,
    warmup: int,
    threads: int,
    args,
    csv_path: str | None = None,
    max_nv: int | None = None,
    progress: bool = True,
    log=print,
    repeat: int = 1,
    repeat_max: float = 5.0,
) -> list[dict]:
    """Measure every (family, size, solver); rows appended to csv_path as each size is done. Each
    run is repeated ``repeat`` times (the solvers' order rotated from one repeat to the next, so a
    busy moment of the machine does not always hit the same solver) unless its first run failed
    or took longer than ``repeat_max`` s; seconds_per_step is the minimum over the repeats. A
    KeyboardInterrupt stops the sweep and returns what was measured."""
    from .groups import Progress

    rows: list[dict] = []
    plan = [(f, n) for f in families for n in sizes[f]]
    bar = Progress(len(plan) * len(solvers), "redmax", progress, log)
    f = open(csv_path, "w", newline="") if csv_path else None
    w = None
    if f is not None:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        f.flush()
    before = td.get_num_threads()
    td.set_num_threads(threads)
    try:
        for fam, n in plan:
            build = FAMILIES[fam][1]
            try:
                scene = build(n, args)
            except (ValueError, RuntimeError) as e:
                bar.write(f"{fam} size {n}: the scene cannot be built: {e}")
                bar.update(len(solvers))
                continue
            nv = scene.model.nv
            if max_nv is not None and nv > max_nv:
                bar.update(len(solvers))
                continue
            results: dict[str, dict] = {}
            try:
                for r in range(repeat):
                    order = solvers[r % len(solvers) :] + solvers[: r % len(solvers)]  # rotate the order
                    for name in order:
                        prev = results.get(name)
                        if prev is not None and (prev["failed"] or prev["seconds_total"] > repeat_max):
                            continue
                        if hasattr(bar.bar, "set_postfix_str"):
                            bar.bar.set_postfix_str(f"{fam} nv={nv} {name} ({r + 1}/{repeat})")
                        new = run_one(scene, name, steps, warmup, threads, tol=args.tol, h=args.h)
                        if prev is None:
                            new.update(scene=fam, size=n, nv=nv, load=_load(), repeats=1)
                            new["_samples"] = (
                                [(new["seconds_per_step"], new.get("assembly_seconds_per_step", ""))]
                                if not new["failed"]
                                else []
                            )
                            results[name] = new
                        elif new["failed"]:  # a repeat of the same run failed: keep the earlier samples
                            prev["error"] = "a repeat failed: " + new["error"]
                        else:
                            prev["_samples"].append((new["seconds_per_step"], new.get("assembly_seconds_per_step", "")))
                            prev["repeats"] += 1
            finally:
                cells = []
                for name in solvers:
                    row = results.get(name)
                    if row is None:
                        continue
                    samples = row.pop("_samples")
                    if samples:
                        best = min(samples, key=lambda x: x[0])
                        row["seconds_per_step"], row["assembly_seconds_per_step"] = best
                        samples = [x[0] for x in samples]
                        row["seconds_total"] = row["seconds_per_step"] * row["steps_done"]
                        row["seconds_per_step_median"] = float(np.median(samples))
                    rows.append(row)
                    if w is not None:
                        w.writerow({k: row.get(k, "") for k in FIELDS})
                    if row["failed"]:
                        cells.append(f"{name} FAILED ({row['error'][:70]})")
                    else:
                        cell = f"{name} {row['seconds_per_step'] * 1e3:8.3f} ms"
                        if name == PCG:
                            cell += (
                                f" ({row['pcg_iterations_per_step']:.1f} it/step, "
                                f"{row['pcg_iterations_per_solve']:.2f}/solve)"
                            )
                        cells.append(cell)
                if f is not None:
                    f.flush()
                bar.update(len(solvers))
                if cells:
                    bar.write(f"{fam:15s} size {n:5d} nv {nv:5d}: " + "; ".join(cells))
    except KeyboardInterrupt:
        bar.write("interrupted: summarising what was measured")
    finally:
        td.set_num_threads(before)
        bar.close()
        if f is not None:
            f.close()
    return rows


# ---------------------------------------------------------------------------------------------
# summary


def series(rows, fam, solver, key="seconds_per_step"):
    """(nv, values) of a family's successful runs, sorted by nv. ``solver`` PARDISO_FS: Pardiso's
    time per step without the assembly of M̃_r (its factorisation, solves and dual step)."""
    if solver == PARDISO_FS:
        nv, t = series(rows, fam, PARDISO)
        nva, ta = series(rows, fam, PARDISO, "assembly_seconds_per_step")
        a = dict(zip(nva.tolist(), ta))
        pts = [(x, y - a[x]) for x, y in zip(nv.tolist(), t) if x in a and y > a[x]]
        return np.array([p[0] for p in pts], dtype=float), np.array([p[1] for p in pts])
    pts = sorted(
        (r["nv"], float(r[key]))
        for r in rows
        if r["scene"] == fam
        and r["solver"] == solver
        and not int(r["failed"])
        and r.get(key, "") not in ("", None)
        and float(r[key]) > 0
    )
    return np.array([p[0] for p in pts], dtype=float), np.array([p[1] for p in pts])


def summarize(rows, families, fit_min: float, log=print) -> dict:
    out = {}
    solvers = [s for s in SOLVERS if any(r["solver"] == s for r in rows)]
    if PARDISO in solvers:
        solvers.append(PARDISO_FS)
    log(
        f"\nlog-log slopes of the time per step against DOF, fitted on the points with nv >= {fit_min:g} "
        f"(the range and count of PCG's points shown; thesis values in brackets), the DOF from which PCG "
        f"stays faster (~X interpolated, <=X at every point, >X slower at the largest, * faster somewhere "
        f"below), and PCG's iterations. 'P f+s': Pardiso without the assembly of M̃_r (sparse_system), "
        f"its factorisation, solves and dual step only:"
    )
    # (title, width) of the columns after the scene name, in order; a line fills the same list
    pardiso = PARDISO in solvers
    columns = (
        [("fit nv (points)", -18), ("PCG", 12), ("direct", 12)]
        + ([("Pardiso", 8), ("P f+s", 6)] if pardiso else [])
        + [(" PCG<direct", 11)]
        + ([("PCG<Pardiso", 11), ("PCG<P f+s", 9)] if pardiso else [])
        + [("(thesis)", 8), (" PCG it/step at max nv", 22), ("it slope", 8)]
    )

    def row(first: str, cells) -> str:
        return f"{first:16s}" + "".join(f" {c:<{-w}s}" if w < 0 else f" {c:>{w}s}" for c, (_, w) in zip(cells, columns))

    log(row("scene", [t for t, _ in columns]))
    for fam in families:
        th = THESIS[fam]
        res = {}
        rng = ""
        for s in solvers:
            nv, t = series(rows, fam, s)
            fr = fit(nv, t, fit_min)
            res[s] = fr[0] if fr else None
            if fr and s == PCG:
                rng = f"{fr[2][0]:.0f}-{fr[2][-1]:.0f} ({len(fr[2])})"
            elif fr and not rng:
                rng = f"{fr[2][0]:.0f}-{fr[2][-1]:.0f} ({len(fr[2])})"
            out[(fam, s, "slope")] = res[s]
        nvp, tp = series(rows, fam, PCG)
        cross = {}
        for s in solvers:
            if s == PCG:
                continue
            nvo, to = series(rows, fam, s)
            cross[s] = crossover(nvp, tp, nvo, to) if len(nvp) and len(nvo) else None
            out[(fam, s, "crossover")] = cross[s]
        nvi, it = series(rows, fam, PCG, "pcg_iterations_per_step")
        fi = fit(nvi, np.maximum(it, 1e-12), fit_min) if len(nvi) else None
        out[(fam, "iterations_slope")] = fi[0] if fi else None
        itmax = f"{it[-1]:.1f} at {nvi[-1]:.0f}" if len(nvi) else "-"
        fails: dict[tuple, list[int]] = {}
        real = [s for s in solvers if s != PARDISO_FS]
        for nv_ in sorted({r["nv"] for r in rows if r["scene"] == fam}):
            who = tuple(
                s
                for s in real
                if any(r["scene"] == fam and r["nv"] == nv_ and r["solver"] == s and int(r["failed"]) for r in rows)
            )
            if who:
                fails.setdefault(who, []).append(nv_)

        def sl(x, ref=None):
            s = "-" if x is None else f"{x:.2f}"
            return s + (f" [{ref:.2f}]" if ref is not None else "")

        cells = [rng or "-", sl(res.get(PCG), th["pcg"]), sl(res.get(DIRECT), th["direct"])]
        if pardiso:
            cells += [sl(res.get(PARDISO)), sl(res.get(PARDISO_FS))]
        cells += [cross.get(DIRECT) or "-"]
        if pardiso:
            cells += [cross.get(PARDISO) or "-", cross.get(PARDISO_FS) or "-"]
        cells += [th["crossover"], itmax, sl(fi[0] if fi else None)]
        log(row(fam, cells))
        for who, nvs in fails.items():
            log(
                f"{'':16s} failed: {'all solvers' if len(who) == len(real) else ', '.join(who)} at nv "
                + ", ".join(str(x) for x in nvs)
            )
    log("thesis notes: " + "; ".join(f"{fam}: {THESIS[fam]['note']}" for fam in families if THESIS[fam]["note"]))
    return out


def print_table(rows, families, log=print):
    solvers = [s for s in SOLVERS if any(r["solver"] == s for r in rows)]
    log("\ntime per step (ms, the minimum over the repeats) and PCG iterations per step / per solve:")
    fs = PARDISO in solvers
    log(
        f"{'scene':16s} {'size':>5s} {'nv':>5s} "
        + " ".join(f"{s:>14s}" for s in solvers)
        + (f" {'(its assembly)':>14s}" if fs else "")
        + "   PCG it/step  it/solve"
    )
    for fam in families:
        for size, nv in sorted({(r["size"], r["nv"]) for r in rows if r["scene"] == fam}, key=lambda x: x[1]):
            cells, its = [], ""
            for s in solvers:
                r = next((r for r in rows if r["scene"] == fam and r["nv"] == nv and r["solver"] == s), None)
                if r is None:
                    cells.append(f"{'':>14s}")
                elif int(r["failed"]):
                    cells.append(f"{'failed':>14s}")
                else:
                    cells.append(f"{float(r['seconds_per_step']) * 1e3:14.3f}")
                    if s == PCG:
                        its = (
                            f"   {float(r['pcg_iterations_per_step']):11.1f} "
                            f"{float(r['pcg_iterations_per_solve']):9.2f}"
                        )
            if fs:
                r = next((r for r in rows if r["scene"] == fam and r["nv"] == nv and r["solver"] == PARDISO), None)
                ok = r is not None and not int(r["failed"]) and r.get("assembly_seconds_per_step", "") != ""
                cells.append(f"{float(r['assembly_seconds_per_step']) * 1e3:14.3f}" if ok else f"{'':>14s}")
            log(f"{fam:16s} {size:5d} {nv:5d} " + " ".join(cells) + its)


# ---------------------------------------------------------------------------------------------
# plots

STYLE = {
    PCG: ("C0", "o-", "RedMax PCG"),
    DIRECT: ("C3", "s--", "redmax-direct (Eigen LDLᵀ)"),
    PARDISO: ("C2", "^:", "Pardiso (MKL)"),
    PARDISO_FS: ("C8", "v:", "Pardiso without the assembly"),
}


def plot(rows, families, fit_min, out_dir, log=print) -> list[str]:
    plt = pyplot(log)
    if plt is None:
        return []
    paths = []
    ncol = 4
    nrow = int(math.ceil(len(families) / ncol))
    fig, axes = plt.subplots(nrow, ncol, figsize=(4.2 * ncol, 3.6 * nrow), squeeze=False)
    for k, fam in enumerate(families):
        ax = axes[k // ncol][k % ncol]
        for s, (color, style, label) in STYLE.items():
            nv, t = series(rows, fam, s)
            if not len(nv):
                continue
            fr = fit(nv, t, fit_min)
            ax.loglog(nv, t, style, color=color, ms=4, label=label + (f", n^{fr[0]:.2f}" if fr else ""))
            if fr:
                x = fr[2]
                ax.loglog(x, np.exp(fr[1]) * x ** fr[0], "-", color=color, lw=3, alpha=0.25)
        ax.set_title(FAMILIES[fam][0], fontsize=9)
        ax.set_xlabel("reduced DOF [count]")
        ax.set_ylabel("time per step [s]")
        log_ticks(ax.xaxis)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=6)
    for k in range(len(families), nrow * ncol):
        axes[k // ncol][k % ncol].axis("off")
    fig.suptitle("baxter2019 §4 on this machine: time per step (h = 1e-2) against DOF; shaded: fits", fontsize=10)
    fig.tight_layout()
    paths.append(save(fig, os.path.join(out_dir, "redmax_time.png"), dpi=110))

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.4))
    markers = "osD^v<>p"  # families with the same counts (the bridges with and without a car) stay visible
    for k, fam in enumerate(families):
        for ax, key in zip(axes, ("pcg_iterations_per_step", "pcg_iterations_per_solve")):
            nv, it = series(rows, fam, PCG, key)
            if len(nv):
                m = markers[k % len(markers)]
                ax.loglog(nv, it, "-", marker=m, color=f"C{k}", ms=6 - 0.4 * k, mfc="none", label=FAMILIES[fam][0])
    allnv = [r["nv"] for r in rows]
    for ax, title in zip(axes, ("PCG iterations per step (all solves)", "PCG iterations per solve")):
        if allnv:
            x = np.array([min(allnv), max(allnv)], dtype=float)
            ax.loglog(x, x / x[0], color="0.6", lw=1, label="linear growth")
        ax.set_xlabel("reduced DOF [count]")
        ax.set_ylabel(title.split(" (")[0] + " [count]")
        ax.set_title(title, fontsize=10)
        log_ticks(ax.xaxis)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(f"baxter2019 §4 on this machine: {STYLE[PCG][2]} iterations against DOF", fontsize=10)
    fig.tight_layout()
    paths.append(save(fig, os.path.join(out_dir, "redmax_iterations.png"), dpi=110))
    return paths


# ---------------------------------------------------------------------------------------------


def _size_arg(text):
    if "=" not in text:
        raise argparse.ArgumentTypeError("expected FAMILY=N1,N2,...")
    fam, values = text.split("=", 1)
    if fam not in FAMILIES:
        raise argparse.ArgumentTypeError(f"unknown family {fam!r}; families: {', '.join(FAMILIES)}")
    try:
        ns = [int(v) for v in values.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"sizes must be integers: {values!r}") from None
    return fam, ns


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks redmax", description=__doc__.split("\n")[0])
    ap.add_argument("--scenes", nargs="+", choices=list(FAMILIES), help="families (default all)")
    ap.add_argument(
        "--size",
        type=_size_arg,
        action="append",
        default=[],
        help="FAMILY=N1,N2,...: the size parameters of a family (see the families above)",
    )
    ap.add_argument("--max-nv", type=int, help="skip the sizes with more DOF than this")
    ap.add_argument("--steps", type=int, help="timed steps per run (default 50; 500 = the thesis' 5 s; --quick 5)")
    ap.add_argument("--warmup", type=int, default=1, help="untimed steps before the timed ones (default 1)")
    ap.add_argument(
        "--repeat",
        type=int,
        help="runs of each point, the minimum time kept (default 3; --quick 1); "
        "a run longer than --repeat-max seconds is not repeated",
    )
    ap.add_argument("--repeat-max", type=float, default=5.0)
    ap.add_argument("--solvers", nargs="+", choices=SOLVERS, help="default all (pardiso when installed)")
    ap.add_argument(
        "--threads", type=int, default=None, help="OpenMP and MKL threads (default: all, td.get_num_threads())"
    )
    ap.add_argument("--tol", type=float, default=1e-8, help="PCG relative tolerance (default 1e-8)")
    ap.add_argument(
        "--h",
        type=float,
        help="time step (default the scenes' 1e-2; e.g. 2.5e-3 for the heavy car, "
        "which blows up at 1e-2 with the 'sim' parameters)",
    )
    ap.add_argument(
        "--bridge-params",
        choices=("sim", "video"),
        default="sim",
        help="parameter set of the flexible bridges (default sim)",
    )
    ap.add_argument(
        "--umbrella-params",
        choices=("sim", "video"),
        default="video",
        help="umbrella canopy stiffness set (default video, the scene's default)",
    )
    ap.add_argument("--fit-min", type=float, help="fit slopes on nv >= this (default 100; --quick 0)")
    ap.add_argument("--out", default=".", help="directory for the CSV and PNG files")
    ap.add_argument("--quick", action="store_true", help="three small sizes per family, 5 steps")
    ap.add_argument("--no-plot", action="store_true")
    ap.add_argument("--no-progress", action="store_true")
    args = ap.parse_args(argv)
    families = args.scenes or list(FAMILIES)
    sizes = {f: list(FAMILIES[f][3] if args.quick else FAMILIES[f][2]) for f in families}
    for fam, ns in args.size:
        sizes[fam] = ns
    if args.steps is None:
        args.steps = 5 if args.quick else 50
    if args.repeat is None:
        args.repeat = 1 if args.quick else 3
    if args.fit_min is None:
        args.fit_min = 0.0 if args.quick else 100.0
    if args.threads is None:
        args.threads = td.get_num_threads()
    if (
        args.steps < 1
        or args.warmup < 0
        or args.threads < 1
        or args.repeat < 1
        or (args.h is not None and not args.h > 0)
    ):
        ap.error("--steps, --repeat, --threads and --h must be positive, --warmup >= 0")
    pardiso = pardiso_available()
    solvers = list(args.solvers or [s for s in SOLVERS if s != PARDISO or pardiso])
    if PARDISO in solvers and not pardiso:
        ap.error("pardiso: pypardiso is not installed (pip install pypardiso)")
    os.makedirs(args.out, exist_ok=True)
    info = td.build_info()
    print(
        f"treedyn {td.__version__}: OpenMP {info['openmp']} (max threads {info['max_threads']}), "
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs; {args.threads} thread(s); "
        "Pardiso: "
        + ("pypardiso " + _pp_version() if pardiso else "not installed (pip install pypardiso): no Pardiso column")
    )
    print(
        f"{args.steps} timed steps of h = {args.h or 1e-2:g} after {args.warmup} untimed, the minimum of "
        f"{args.repeat} run(s) (runs over {args.repeat_max:g} s once); PCG tol {args.tol:g}; "
        f"bridge params {args.bridge_params!r}, umbrella {args.umbrella_params!r}; "
        f"load average at the start {_load()}"
    )
    csv_path = os.path.join(args.out, "redmax.csv")
    rows = sweep(
        families,
        sizes,
        solvers,
        args.steps,
        args.warmup,
        args.threads,
        args,
        csv_path,
        args.max_nv,
        progress=not args.no_progress,
        repeat=args.repeat,
        repeat_max=args.repeat_max,
    )
    print(f"wrote {csv_path}")
    if not rows:
        return 0
    print_table(rows, families)
    summarize(rows, families, args.fit_min)
    print(f"load average at the end {_load()}")
    if not args.no_plot:
        for p in plot(rows, families, args.fit_min, args.out):
            print(f"wrote {p}")
    return 0


def _pp_version() -> str:
    try:
        from importlib.metadata import version

        return version("pypardiso")
    except Exception:
        return "?"


if __name__ == "__main__":
    sys.exit(main())
