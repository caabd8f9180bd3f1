"""RedMax (baxter2019): one implicit step of the thesis' scenes with ``redmax-pcg`` and
``redmax-direct``, PCG's iterations per step, and the ratio of a MKL Pardiso step to a PCG step (``python -m
benchmarks redmax`` is the full scaling study; these are its regression checks).

Scenes at two sizes, ~100 and ~800 reduced DOF (the scenes' size parameter -> nv):
  bridge-rigid     bridge_rigid(100) -> 100,      bridge_rigid(800) -> 800
  bridge-flexible  bridge(33, 33) -> 99,          bridge(267, 267) -> 801   (params "sim")
  umbrella         umbrella(4) -> 97,             umbrella(33) -> 785       (32 loop rows)
  tree             tree(5) -> 93,                 tree(8) -> 765            (sibling springs)
One thread (on a shared 2-core machine a 2-thread parallel region can wait ~5-8 ms for a time
slice, more than a whole step). Each benchmark advances one trajectory: a few untimed steps in
``setup``, then every timed call is one more step; after ``RESET`` steps the state goes back to
the snapshot taken after the warm-up, so that however many calls asv makes the scene stays in its
first simulated second (the umbrella keeps opening, the tree keeps swinging).
"""

import functools

import numpy as np

import treedyn as td
from treedyn import scenes
from treedyn.util.timing import speedup

from .common import Threads, figure_script, make_solver_or_skip

#: scene -> {DOF target: size parameter}
SIZES = {
    "bridge-rigid": {100: 100, 800: 800},
    "bridge-flexible": {100: 33, 800: 267},
    "umbrella": {100: 4, 800: 33},
    "tree": {100: 5, 800: 8},
}
BUILD = {
    "bridge-rigid": scenes.bridge_rigid,
    "bridge-flexible": lambda n: scenes.bridge(n, n),
    "umbrella": scenes.umbrella,
    "tree": scenes.tree,
}
SOLVERS = ["redmax-pcg", "redmax-direct"]
WARMUP = 3
RESET = 100


@functools.cache
def scene(name, dof):
    """The scene, built once per benchmark process (callers step copies of its state)."""
    return BUILD[name](SIZES[name][dof])


class RedMaxStep(Threads):
    """``solver.step(state, h)``: one linearly implicit RedMax step (h = 1e-2) of a scene."""

    params = (list(SIZES), [100, 800], SOLVERS)
    param_names = ["scene", "dof", "solver"]
    timeout = 120

    def setup(self, name, dof, solver):
        sc = scene(name, dof)
        self.h = sc.h
        self.solver = make_solver_or_skip(solver, sc.model)
        self._set_threads(1)
        try:
            self.state = sc.state.copy()
            for _ in range(WARMUP):
                self.solver.step(self.state, self.h)
            self.snapshot = self.state.copy()
            self.k = 0
        except BaseException:
            td.set_num_threads(self._threads_before)  # asv does not run teardown when setup fails
            raise

    def time_step(self, name, dof, solver):
        """Wall time of one step (assembly or preconditioner, the solves with the loop-closure
        columns, the dual solve, the position update)."""
        self.k += 1
        if self.k > RESET:
            self.k = 1
            self.state = self.snapshot.copy()
        self.solver.step(self.state, self.h)


class RedMaxPCGIterations(Threads):
    """PCG iterations per step (all the solves of a step: f̃, the loop-closure columns and the
    final one), averaged over 10 steps after 3 untimed ones, from the scene's initial state with a
    fresh solver (deterministic). The rigid-tower bridge's preconditioner is exact: one iteration
    per solve at most."""

    params = (list(SIZES), [100, 800])
    param_names = ["scene", "dof"]
    steps = 10

    def setup(self, name, dof):
        self.sc = scene(name, dof)
        make_solver_or_skip("redmax-pcg", self.sc.model)
        self._set_threads(1)

    def _run(self):
        sc = self.sc
        solver = td.make_solver("redmax-pcg", sc.model, h=sc.h)
        state = sc.state.copy()
        for _ in range(WARMUP):
            solver.step(state, sc.h)
        stats = [solver.step(state, sc.h) for _ in range(self.steps)]
        if not np.all(np.isfinite(state.v)):
            raise RuntimeError("the scene diverged")
        return stats

    def track_pcg_iterations_per_step(self, name, dof):
        """Mean PCG iterations per step (every solve of the step counted)."""
        return float(np.mean([s["iterations"] for s in self._run()]))

    track_pcg_iterations_per_step.unit = "iterations"

    def track_pcg_max_iterations_per_solve(self, name, dof):
        """The largest iteration count of a single PCG solve over the 10 steps."""
        return float(max(s["max_iterations"] for s in self._run()))

    track_pcg_max_iterations_per_solve.unit = "iterations"


class RedMaxSpeedupOverPardiso(Threads):
    """time(MKL Pardiso's step) / time(redmax-pcg's step) on each scene, one thread: Pardiso on M̃_r
    assembled by redmax-direct (``benchmarks.redmax.PardisoStepper``, the figure script's peer),
    each side advancing its own trajectory from the same warmed-up state (back to it every
    ``RESET`` steps), samples alternating. Skipped without pypardiso."""

    params = (list(SIZES), [100, 800])
    param_names = ["scene", "dof"]
    repeats = 9
    timeout = 120

    def setup(self, name, dof):
        self._set_threads(1)  # first: asv runs teardown after a skip (NotImplementedError) too
        try:
            script = figure_script("redmax")
            if not script.pardiso_available():
                raise NotImplementedError("pypardiso unavailable")
            sc = scene(name, dof)
            pcg = make_solver_or_skip("redmax-pcg", sc.model)
            pardiso = script.PardisoStepper(sc.model, sc.h, threads=1)
            state = sc.state.copy()
            for _ in range(WARMUP):
                pcg.step(state, sc.h)
            self.f_pardiso = self._trajectory(pardiso, state, sc.h)
            self.f_pcg = self._trajectory(pcg, state, sc.h)
            self.f_pardiso(), self.f_pcg()
        except BaseException:
            td.set_num_threads(self._threads_before)  # asv does not run teardown when setup fails
            raise

    @staticmethod
    def _trajectory(stepper, snapshot, h):
        state, k = snapshot.copy(), 0

        def step():
            nonlocal state, k
            k += 1
            if k > RESET:
                state, k = snapshot.copy(), 1
            stepper.step(state, h)

        return step

    def track_step_speedup_vs_pardiso(self, name, dof):
        """Median time of a Pardiso step over that of a redmax-pcg step (above 1: PCG is faster)."""
        return speedup(self.f_pardiso, self.f_pcg, self.repeats)

    track_step_speedup_vs_pardiso.unit = "ratio"
