"""The RedMax solvers (baxter2019): a linearly implicit step of the reduced/maximal formulation
with springs between any bodies, joint springs, damping and loop closures.

``solver.step(state, h)`` advances a :class:`treedyn.State` in place by eq. (2.13)–(2.15) and
(2.42), then q ← q ⊕ h q̇, and returns the step's statistics. ``inverse_inertia(q, R)`` solves
with M̃_r of eq. (2.14) for the solver's time step ``h`` (M_r⁻¹R as h → 0).
``forward_dynamics`` is the unconstrained continuous dynamics of the model with its springs,
dampers and forces explicit (loop closures are not in it): without those it agrees with ``aba``.
"""

from __future__ import annotations

import threading

import numpy as np

from .. import _checks as C
from .. import _core
from ..algorithms.state import State
from .base import Solver

__all__ = ["RedMaxDirectSolver", "RedMaxPCGSolver"]


class _RedMaxSolver(Solver):
    capabilities = frozenset(
        {"step", "inverse_inertia", "branched", "multi_dof", "floating_base", "springs", "loop_closures", "batch"}
    )
    thread_safe = True  # the C++ solvers lock their workspaces (with the GIL released)
    keeps_constraints = True  # its implicit step keeps the loop closures and couplings (make_solver)

    def __init__(self, model, dtype=np.float64, h: float = 1e-2, **options):
        super().__init__(model, dtype, **options)
        if self.dtype != np.float64:
            raise TypeError(f"solver {self.name!r} runs in float64 only")
        self.h = C.real(h, "h", positive=True)
        self._system = model._redmax_system()
        self._assembler = None  # a redmax-direct engine for terms(), made on first use
        self._assembler_lock = threading.Lock()

    def step(self, state: State, h: float | None = None) -> dict:
        """Advance ``state`` (a treedyn.State, modified in place) by one step of h (default
        ``self.h``). Returns statistics: position_residual (max |C(q)| of the loop closures after
        the step), velocity_residual, constraint_rows, constraint_rank, solves, iterations, seconds.
        """
        if not isinstance(state, State):
            raise TypeError(f"step needs a treedyn.State, got {type(state).__name__}")
        h = self.h if h is None else C.real(h, "h", positive=True)
        q, v, stats = self._impl.step(state.q, state.v, state.t, h)
        state.q, state.v, state.t = q, v, state.t + h
        return stats

    def forward_dynamics(self, q, v, tau, f_ext=None, *, out=None):
        if f_ext is not None:
            raise NotImplementedError(f"solver {self.name!r}: apply external forces as model point forces")
        return self._impl.forward_dynamics(q, v, tau, out=out)  # a batch over the threads, as every engine

    def inverse_inertia(self, q, R, *, out=None):
        """M̃_r(q)⁻¹ R for this solver's h (eq. (2.14); no velocity enters M̃_r). With ``out``, the
        result is copied into it (the sparse solve makes its own)."""
        return self._impl.inverse_inertia(q, self.h, R, out=out)

    def terms(self, state: State, h: float | None = None) -> dict:
        """The terms of eq. (2.13) at ``state`` as dense arrays — J, Jdot, M_m, D_m, K_m, f_m,
        D_r, K_r, f_r, the assembled lhs M̃_r and rhs f̃_r, the loop-closure rows G and errors C,
        and the Baumgarte factor. O(n²) memory: for tests and inspection, not for stepping."""
        h = self.h if h is None else C.real(h, "h", positive=True)
        with self._assembler_lock:  # the assembly lives in the direct solver
            if self._assembler is None:
                self._assembler = (
                    self._impl if isinstance(self._impl, _core.RedMaxDirect) else _core.RedMaxDirect(self._system)
                )
        return self._assembler.terms(state.q, state.v, state.t, h)

    def constraint_residual(self, q) -> float:
        """max |C(q)| of the loop closures at q (0 without loops)."""
        G, C = self._system.loop_rows(q)
        return float(np.abs(C).max()) if C.size else 0.0


class RedMaxDirectSolver(_RedMaxSolver):
    """RedMax with a direct solve: M̃_r assembled sparse from the tree's composite blocks and
    the springs' coupling blocks (no dense J), factored by a sparse LDLᵀ every step, the pattern
    analysed once. ordering: "amd" (fill-reducing, default) or "leaf-to-root" (baxter2019 §3.3)."""

    name = "redmax-direct"
    description = "RedMax implicit step (Baxter 2019), sparse LDLᵀ of the assembled reduced matrix"

    def __init__(self, model, dtype=np.float64, h: float = 1e-2, ordering: str = "amd", **options):
        super().__init__(model, dtype, h, **options)
        self.ordering = C.choice(ordering, "ordering", ("amd", "leaf-to-root"))
        self._impl = _core.RedMaxDirect(self._system, ordering == "leaf-to-root")

    @property
    def nonzeros(self) -> int:
        """Stored entries of M̃_r (both triangles) at the last assembly."""
        return self._impl.nonzeros


class RedMaxPCGSolver(_RedMaxSolver):
    """RedMax with preconditioned conjugate gradients (baxter2019 §3): O(n) products with J, Jᵀ
    and the spring blocks, the projected block Jacobi preconditioner of Alg. 4 rebuilt every step,
    warm starts from the previous step, and the loop-closure columns M̃⁻¹Gᵀ solved in parallel
    (``td.set_num_threads``). tol: relative residual ‖r‖/‖b‖; max_iter: cap per solve.
    ``step`` reports the iterations of every solve (total, and the longest) and how many hit
    the cap (``unconverged``)."""

    name = "redmax-pcg"
    description = "RedMax implicit step (Baxter 2019), PCG with the projected block Jacobi preconditioner"

    def __init__(
        self, model, dtype=np.float64, h: float = 1e-2, tol: float = 1e-8, max_iter: int | None = None, **options
    ):
        super().__init__(model, dtype, h, **options)
        self.tol = C.real(tol, "tol", positive=True)
        if max_iter is None:
            max_iter = max(100, 2 * model.nv)
        elif isinstance(max_iter, (bool, np.bool_, float, np.floating)):
            # a number that is no count is a ValueError here, True included (not _checks' TypeError):
            # tests/solvers/test_redmax_pcg.py::test_bad_options_are_named fixes it
            raise ValueError(f"redmax-pcg: max_iter must be an integer >= 1, got {max_iter!r}")
        self.max_iter = C.integer(max_iter, "redmax-pcg: max_iter", minimum=1, maximum=C.INT_MAX)
        self._impl = _core.RedMaxPcg(self._system, self.tol, self.max_iter)
