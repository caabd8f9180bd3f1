"""The built-in solvers: thin shells around the C++ engines."""

from __future__ import annotations

import numpy as np

from .. import _checks as C
from .. import _core
from .base import Solver

__all__ = [
    "ABASolver",
    "ABAModifiedSolver",
    "CRBACholeskySolver",
    "DrumwrightSolver",
    "CRBALTLSolver",
    "CFASolver",
    "JSIIASolver",
]

_ALL = frozenset({"batch", "inverse_inertia", "float32", "floating_base", "branched", "multi_dof", "f_ext"})


class _EngineSolver(Solver):
    _kernel = ""  # the bound C++ engine: _core.<_kernel>64 / <_kernel>32 (cpp/bindings/solvers.cpp)
    capabilities = _ALL
    thread_safe = True  # the C++ engine locks its workspaces (with the GIL released)

    def __init__(self, model, dtype=np.float64, *kernel_options, **options):
        super().__init__(model, dtype, **options)
        engine = getattr(_core, self._kernel + ("32" if self.dtype == np.float32 else "64"))
        self._engine = engine(model.core, *kernel_options)
        if type(self).forward_dynamics is _EngineSolver.forward_dynamics:
            # the engine's method itself (same signature): a call then costs no Python frame, about
            # 60 ns of the 1 µs forward dynamics of a 6-joint arm
            self.forward_dynamics = self._engine.forward_dynamics

    # out= is checked and written to in C++ (cpp/bindings/arrays.hpp, out_arg)
    def forward_dynamics(self, q, v, tau, f_ext=None, *, out=None):
        return self._engine.forward_dynamics(q, v, tau, f_ext, out=out)

    def inverse_inertia(self, q, R, *, out=None):
        return self._engine.inverse_inertia(q, R, out=out)

    def inverse_mass_matrix(self, q, *, out=None):
        return self._engine.inverse_mass_matrix(q, out=out)

    def mass_matrix(self, q):
        """M(q) by CRBA, computed in this solver's precision (``dtype``)."""
        return self._engine.mass_matrix(q)


class _DerivativesSolver(_EngineSolver):
    """An engine solver that also gives the analytic derivatives of its forward dynamics: those of
    ``td.aba_derivatives`` (carpentier-mansard2018's ∂τ/∂(q, v), then −M⁻¹ ∂τ/∂(q, v) with M⁻¹ from
    drumwright2012's Θ(n²) inverse), in the solver's precision."""

    capabilities = _ALL | {"derivatives"}

    def derivatives(self, q, v, tau, f_ext=None):
        from ..algorithms.derivatives import aba_derivatives

        return aba_derivatives(self.model, q, v, tau, f_ext, dtype=self.dtype)


class ABASolver(_DerivativesSolver):
    """Featherstone's articulated-body algorithm in link coordinates, O(N).

    ``specialise=True``: featherstone-part3's symbolic simplification — ABA written out as C++
    for this model (its zeros, ±1s and axis-aligned joints folded away), compiled with the
    system compiler on first use and cached (treedyn.codegen); batches then run several robots
    per vector register. Results equal the generic kernel's up to rounding (the same operations,
    minus those on constants); calls with ``f_ext``, and any the generated code flags, run the
    generic kernel. Without a compiler, or when the library cannot be built or trusted, it warns
    (treedyn.codegen.CodegenWarning) and runs the generic kernel.
    """

    name = "aba"
    description = "articulated-body algorithm (Featherstone), O(n), link coordinates"
    _kernel = "ABA"

    def __init__(self, model, dtype=np.float64, specialise: bool = False, **options):
        library = None
        if specialise:
            from .codegen import compiled_aba

            library = compiled_aba(model, dtype)
        rebuilds = 1
        while True:
            try:
                super().__init__(model, dtype, library or "", **options)
                break
            except RuntimeError as e:  # the loader refused a library we built: rebuilt once, then generic
                if not library or "generated kernel" not in str(e):
                    raise
                from .codegen import refused_library

                library = refused_library(library, model, dtype, e, rebuild=rebuilds > 0)
                rebuilds -= 1
        self.specialised = library is not None

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
    _kernel = "ABAModified"

    def joint_inertias(self, q):
        """The pivots D_i = S_iᵀ I^A_i S_i at q, one (nv_i, nv_i) array per moving joint."""
        return self._engine.joint_inertias(q)


class CRBACholeskySolver(_EngineSolver):
    """RNEA bias + CRBA mass matrix + dense Cholesky, O(N³)."""

    name = "crba-cholesky"
    description = "RNEA bias + CRBA mass matrix + dense Cholesky (LLᵀ), O(n³)"
    _kernel = "CRBACholesky"


class DrumwrightSolver(_DerivativesSolver):
    """drumwright2012's Θ(n²) inverse inertia: unit impulses propagated through articulated-body
    inertias in the global frame (Alg. 1, fixed base; Alg. 2, floating base).

    ``inverse_inertia(q, R)`` is M⁻¹R in O(nm), its columns spread over the threads;
    ``inverse_mass_matrix(q)`` is the full M⁻¹ in O(n²) (all columns at once, symmetric);
    ``forward_dynamics`` is the RNEA bias, then M⁻¹ applied to τ − c: O(n).
    """

    name = "drumwright"
    description = (
        "RNEA bias + drumwright2012 Θ(n²) inverse inertia (impulses through articulated inertias, global frame)"
    )
    _kernel = "Drumwright"


class CRBALTLSolver(_EngineSolver):
    """RNEA bias + CRBA mass matrix + Featherstone's (2005) branch-induced-sparsity factorisation
    M = LᵀL (``ltdl=True``: M = LᵀDL), O(n d²) for a tree of depth d, and its back-substitutions.
    """

    name = "crba-ltl"
    description = "RNEA bias + CRBA + Featherstone's branch-induced-sparsity LTL factorisation, O(n d²)"
    _kernel = "CRBALTL"

    def __init__(self, model, dtype=np.float64, ltdl: bool = False, **options):
        self.ltdl = C.boolean(ltdl, "ltdl")
        super().__init__(model, dtype, self.ltdl, **options)


def _chain_of_1dof_reason(model, name: str):
    """None for an unbranched chain of 1-DoF joints fixed to the world, else why not."""
    from ..model import Free

    if any(isinstance(j, Free) for j in model.joints):
        return f"{name} handles fixed-base chains only; this model has a floating base (Free joint)"
    parents = model.parents
    for i in range(1, len(parents)):
        if parents[i] != i - 1:
            return (
                f"{name} handles unbranched chains only; body {model.body_names[i]!r} hangs from body "
                f"{model.body_names[parents[i]]!r}, not from the body before it (a branched tree)"
            )
    for i, j in enumerate(model.joints[1:], start=1):
        if j.nv != 1:
            return (
                f"{name} handles 1-DoF joints (revolute, prismatic) only; the joint of body "
                f"{model.body_names[i]!r} is {type(j).__name__} with {j.nv} degrees of freedom"
            )
    return None


class CFASolver(_EngineSolver):
    """Fijany's constraint force algorithm as in yang-wu-pan §III, Alg. 1: the bias by RNEA, the
    blocks of A = WᵀPW, B = WᵀPS, C = SᵀPS (P = (I−Γ)J⁻¹(I−Γ)ᵀ, eq. (10)) joint by joint in
    parallel, A F_c = −Bτ^δ by odd–even elimination (§IV, Alg. 2), q̈ = Cτ^δ + BᵀF_c (eq. (17)).

    Unbranched chains of 1-DoF joints (revolute, prismatic) fixed to the world, every body with a
    positive definite spatial inertia (CFA needs J_i⁻¹), without armature (CFA's equations have no
    place for a joint-space inertia; the joint springs are fine). ``inverse_inertia(q, R)`` is CFA's own
    factorisation M⁻¹ = C − BᵀA⁻¹B (eq. (17)): A F_c = −B R by OEE for all m columns at once.
    """

    name = "cfa-oee"
    description = "constraint force algorithm (Fijany; Yang, Wu & Pan Alg. 1) with odd-even elimination, chains"
    capabilities = frozenset({"batch", "inverse_inertia", "float32", "f_ext"})
    _kernel = "CFA"

    @classmethod
    def supports(cls, model):
        if model.armature.any():
            return f"{cls.name} does not take armature (rotor inertia, set_joint_armature); use aba"
        return _chain_of_1dof_reason(model, cls.name)


class JSIIASolver(_EngineSolver):
    """The joint space inertia inversion algorithm of yang-wu-pan §II-C, eq. (7): the bias by
    RNEA, M(q) by column-wise inverse dynamics, all columns at once as two block bi-diagonal
    systems (velocity-free accelerations forward, forces backward, eqs. (2b)-(2d)) solved by
    parallel scan (§II-B), then a dense Cholesky solve, O(n³).

    Unbranched chains (any joints, fixed or floating base). ``inverse_inertia`` is the same dense
    Cholesky solve of the scanned M.
    """

    name = "jsiia"
    description = (
        "joint space inertia inversion (Yang, Wu & Pan §II-C): M by scanned inverse dynamics + dense Cholesky, chains"
    )
    capabilities = frozenset({"batch", "inverse_inertia", "float32", "floating_base", "multi_dof", "f_ext"})
    _kernel = "JSIIA"

    @classmethod
    def supports(cls, model):
        parents = model.parents
        for i in range(1, len(parents)):
            if parents[i] != i - 1:
                return (
                    f"{cls.name} handles unbranched chains only; body {model.body_names[i]!r} hangs from body "
                    f"{model.body_names[parents[i]]!r}, not from the body before it (a branched tree)"
                )
        return None
