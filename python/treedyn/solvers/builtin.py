"""The built-in solvers: thin shells around the C++ engines."""
from __future__ import annotations

import numpy as np

from .. import _core
from .base import Solver

__all__ = ["ABASolver", "CRBACholeskySolver"]

_ALL = frozenset({"batch", "inverse_inertia", "float32", "floating_base", "branched", "multi_dof", "f_ext"})


class _EngineSolver(Solver):
    _method = -1
    capabilities = _ALL

    def __init__(self, model, dtype=np.float64, **options):
        super().__init__(model, dtype, **options)
        engine = _core.Engine32 if self.dtype == np.float32 else _core.Engine64
        self._engine = engine(model._cpp, self._method)

    def forward_dynamics(self, q, v, tau, f_ext=None):
        return self._engine.forward_dynamics(q, v, tau, f_ext)

    def inverse_inertia(self, q, R):
        return self._engine.inverse_inertia(q, R)


class ABASolver(_EngineSolver):
    """Featherstone's articulated-body algorithm in link coordinates, O(N)."""

    name = "aba"
    description = "articulated-body algorithm (Featherstone), O(n), link coordinates"
    _method = 0


class CRBACholeskySolver(_EngineSolver):
    """RNEA bias + CRBA mass matrix + dense Cholesky, O(N³)."""

    name = "crba-cholesky"
    description = "RNEA bias + CRBA mass matrix + dense Cholesky (LLᵀ), O(n³)"
    _method = 1
