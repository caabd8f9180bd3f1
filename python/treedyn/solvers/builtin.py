"""The built-in solvers: thin shells around the C++ engines."""
from __future__ import annotations

import numpy as np

from .. import _core
from .base import Solver

__all__ = ["ABASolver", "ABAModifiedSolver", "CRBACholeskySolver", "DrumwrightSolver", "CRBALTLSolver"]

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

    def inverse_mass_matrix(self, q):
        return self._engine.inverse_mass_matrix(q)

    def mass_matrix(self, q):
        """M(q) by CRBA, computed in this solver's precision (``dtype``)."""
        return self._engine.mass_matrix(q)


class ABASolver(_EngineSolver):
    """Featherstone's articulated-body algorithm in link coordinates, O(N)."""

    name = "aba"
    description = "articulated-body algorithm (Featherstone), O(n), link coordinates"
    _method = 0

    def joint_inertias(self, q):
        """The pivots D_i = S_iᵀ I^A_i S_i at q, one (nv_i, nv_i) array per moving joint; a pivot
        that is not positive is returned as computed, the joints nearer the root as NaN."""
        return self._engine.joint_inertias(q)


class ABAModifiedSolver(_EngineSolver):
    """The modified articulated-body algorithm of ascher-pai-cloutier1996 §4, eq. (11): each
    pivot D_i is kept apart from the articulated inertia, so that a light link carrying heavy
    ones keeps its own inertia in single precision. O(n); trees and multi-DoF joints."""

    name = "aba-modified"
    description = "modified articulated-body algorithm (Ascher, Pai & Cloutier 1996, eq. 11): stable pivots"
    _method = 5

    def joint_inertias(self, q):
        """The pivots D_i = S_iᵀ I^A_i S_i at q, one (nv_i, nv_i) array per moving joint."""
        return self._engine.joint_inertias(q)


class CRBACholeskySolver(_EngineSolver):
    """RNEA bias + CRBA mass matrix + dense Cholesky, O(N³)."""

    name = "crba-cholesky"
    description = "RNEA bias + CRBA mass matrix + dense Cholesky (LLᵀ), O(n³)"
    _method = 1


class DrumwrightSolver(_EngineSolver):
    """drumwright2012's Θ(n²) inverse inertia: unit impulses propagated through articulated-body
    inertias in the global frame (Alg. 1, fixed base; Alg. 2, floating base).

    ``inverse_inertia(q, R)`` is M⁻¹R in O(nm), its columns spread over the OpenMP threads;
    ``inverse_mass_matrix(q)`` is the full M⁻¹ in O(n²) (all columns at once, symmetric);
    ``forward_dynamics`` is the RNEA bias, then M⁻¹ applied to τ − c: O(n).
    """

    name = "drumwright"
    description = "RNEA bias + drumwright2012 Θ(n²) inverse inertia (impulses through articulated inertias, global frame)"
    _method = 2


class CRBALTLSolver(_EngineSolver):
    """RNEA bias + CRBA mass matrix + Featherstone's (2005) branch-induced-sparsity factorisation
    M = LᵀL (``ltdl=True``: M = LᵀDL), O(n d²) for a tree of depth d, and its back-substitutions.
    """

    name = "crba-ltl"
    description = "RNEA bias + CRBA + Featherstone's branch-induced-sparsity LTL factorisation, O(n d²)"
    _method = 3

    def __init__(self, model, dtype=np.float64, ltdl: bool = False, **options):
        if not isinstance(ltdl, (bool, np.bool_)):
            raise TypeError(f"ltdl must be True or False, got {ltdl!r}")
        self._method = 4 if ltdl else 3
        self.ltdl = bool(ltdl)
        super().__init__(model, dtype, **options)
