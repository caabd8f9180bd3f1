"""treedyn's own solvers: single-call and batched forward dynamics, M(q)⁻¹R, peak memory.

Models are revolute chains from ``treedyn.scenes.chain``; inputs are random but seeded. The
solver list is read from ``td.available_solvers()`` at import, so installed plugins are measured
too; a solver that refuses a model (its ``supports`` returns a reason) or lacks a capability is
skipped through ``NotImplementedError`` in ``setup``.
"""

import numpy as np

import treedyn as td

from .common import SOLVERS, chain_model, declares, inputs, make_solver_or_skip, warm_up_or_skip


class ForwardDynamics:
    """One call ``solver.forward_dynamics(q, v, tau)`` on an n-joint chain (unbatched)."""

    params = ([7, 30, 100, 300, 1000], SOLVERS)
    param_names = ["n", "solver"]

    def setup(self, n, solver):
        model = chain_model(n)
        self.solver = make_solver_or_skip(solver, model)
        self.q, self.v, self.tau = inputs(model)
        # an O(n³) solver is only skipped if one call exceeds ~1 s (crba-cholesky at n = 1000
        # takes ~0.05 s, so it is kept)
        warm_up_or_skip(self.solver.forward_dynamics, self.q, self.v, self.tau)

    def time_forward_dynamics(self, n, solver):
        """Wall time of one unbatched forward_dynamics call (q, v, tau of shape (n,))."""
        self.solver.forward_dynamics(self.q, self.v, self.tau)


class BatchedForwardDynamics:
    """``solver.forward_dynamics(Q, V, T)`` on B robots at once, spread over the threads."""

    params = ([1, 64, 1024], [10, 100], [1, 2], SOLVERS)
    param_names = ["B", "n", "threads", "solver"]

    def setup(self, B, n, threads, solver):
        model = chain_model(n)
        self.solver = make_solver_or_skip(solver, model, capability="batch")
        self.Q, self.V, self.T = inputs(model, batch=B)
        self._threads_before = td.get_num_threads()
        td.set_num_threads(threads)
        try:
            warm_up_or_skip(
                self.solver.forward_dynamics,
                self.Q,
                self.V,
                self.T,
                warmup_calls=10,
                tolerate_errors=not declares(self.solver, "batch"),
            )
        except BaseException:
            td.set_num_threads(self._threads_before)  # asv does not run teardown when setup fails
            raise

    def teardown(self, B, n, threads, solver):
        if hasattr(self, "_threads_before"):  # (not when setup skipped before setting it)
            td.set_num_threads(self._threads_before)

    def time_forward_dynamics_batch(self, B, n, threads, solver):
        """Wall time of one batched call: (B, nq), (B, nv), (B, nv) -> (B, nv) with `threads` threads."""
        self.solver.forward_dynamics(self.Q, self.V, self.T)


class InverseInertia:
    """``solver.inverse_inertia(q, R)``: M(q)⁻¹R for R with m columns on an n-joint chain."""

    params = ([30, 300], [6, 60], SOLVERS)
    param_names = ["n", "m", "solver"]

    def setup(self, n, m, solver):
        model = chain_model(n)
        self.solver = make_solver_or_skip(solver, model, capability="inverse_inertia")
        self.q, _, _ = inputs(model)
        self.R = np.random.default_rng(1).standard_normal((model.nv, m))
        # Solver.inverse_inertia's default raises NotImplementedError, which skips
        warm_up_or_skip(
            self.solver.inverse_inertia, self.q, self.R, tolerate_errors=not declares(self.solver, "inverse_inertia")
        )

    def time_inverse_inertia(self, n, m, solver):
        """Wall time of one inverse_inertia call with R of shape (nv, m)."""
        self.solver.inverse_inertia(self.q, self.R)


class PeakMemory:
    """Peak resident memory of the benchmark process (asv's peakmem counts imports and setup too)."""

    def setup(self):
        self.model = chain_model(10000)
        self.q, self.v, self.tau = inputs(self.model)

    def peakmem_aba_chain_10000(self):
        """Peak RSS while constructing an "aba" solver for a 10000-joint chain (the model is built
        in setup) and running one forward_dynamics call."""
        solver = td.make_solver("aba", self.model)
        solver.forward_dynamics(self.q, self.v, self.tau)
