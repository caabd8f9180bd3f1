"""The inverse of the joint-space inertia matrix, and the contact-space inertia built from it.

``inverse_mass_matrix(model, q)`` is the full M(q)⁻¹; by default drumwright2012's Θ(n²) method
(unit impulses propagated through articulated-body inertias). ``contact_inertia(solver, q, N, D)``
gives the contact-space inertia matrices Nᵀ M⁻¹ N, Nᵀ M⁻¹ D and Dᵀ M⁻¹ D of drumwright2012 §6.3
(N, D: the normal and tangent contact Jacobians, transposed: one column per contact direction),
with one M⁻¹[N D] solve whose columns run in parallel.
"""

from __future__ import annotations

import numpy as np

from .. import _checks as C
from ..model import Model
from ..model.cache import cached
from .base import Solver
from .registry import make_solver

__all__ = ["inverse_mass_matrix", "contact_inertia"]


def _solver_for(model: Model, method: str, dtype) -> Solver:
    """The solver of ``method`` and ``dtype`` for ``model``, kept with the model (its workspace
    reused) until the model changes (td.model.cache)."""
    return cached(model, (method, np.dtype(dtype).str), _make)


def _make(model: Model, key: tuple) -> Solver:
    method, dtype = key
    return make_solver(method, model, dtype=dtype, internal=True)


def inverse_mass_matrix(model: Model | Solver, q, method: str = "drumwright", dtype=np.float64) -> np.ndarray:
    """The full M(q)⁻¹, (nv, nv), symmetric.

    model: a ``treedyn.Model`` (a solver of ``method`` is made once and kept with the model), or a
    solver instance (its own method and dtype are used). method: any solver name; the built-ins
    ``"drumwright"`` (Θ(n²), default), ``"crba-ltl"`` (CRBA + branch-induced-sparsity LTL, then
    n back-substitutions, O(n² d)), ``"crba-cholesky"`` (CRBA + dense LLᵀ, O(n³)) and ``"aba"``.
    """
    if isinstance(model, Solver):
        return C.finite_result(model.inverse_mass_matrix(q), "inverse_mass_matrix")
    if not isinstance(model, Model):
        raise TypeError(f"model must be a treedyn.Model or a Solver, got {type(model).__name__}")
    method = C.text(method, "method")
    return C.finite_result(_solver_for(model, method, dtype).inverse_mass_matrix(q), "inverse_mass_matrix")


def _columns(x, name: str, nv: int) -> np.ndarray:
    # boolean arrays are taken as 0/1, as the C++ kernels take them (tests/test_fuzz_api.py)
    a = C.array(x, name, finite=False, booleans=True)
    if a.ndim == 1:
        a = a[:, None]
    if a.ndim != 2 or a.shape[0] != nv:
        raise ValueError(
            f"{name} must have shape (nv, p) = ({nv}, p): one column per contact direction "
            f"(the transposed Jacobian), got {np.shape(x)}"
        )
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} contains NaN or inf")
    # a private float64 C-ordered copy: the products below then take the same BLAS path (the same
    # bits) whatever the layout the user handed over, and the user's array is never touched
    return np.ascontiguousarray(a)


def contact_inertia(solver: Solver, q, N, D=None) -> np.ndarray | tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Contact-space inertia (drumwright2012 §6.3): Nᵀ M(q)⁻¹ N, or with D the three matrices
    (Nᵀ M⁻¹ N, Nᵀ M⁻¹ D, Dᵀ M⁻¹ D).

    solver: a solver instance providing ``inverse_inertia`` (``td.make_solver("drumwright", model)``
    computes M⁻¹[N D] in Θ(nv (p + r)), its columns in parallel). N: (nv, p), D: (nv, r) (a 1-D
    array is one column). The diagonal blocks are returned exactly symmetric.
    """
    if not isinstance(solver, Solver):  # (not C.instance: the message says how to make one)
        raise TypeError(f"solver must be a treedyn.Solver instance (td.make_solver(...)), got {type(solver).__name__}")
    nv = solver.model.nv
    N = _columns(N, "N", nv)
    p = N.shape[1]
    R = N if D is None else np.hstack([N, _columns(D, "D", nv)])
    with np.errstate(over="ignore"):  # float32: an overflow in the conversion is reported below
        R_cast = np.ascontiguousarray(R, dtype=solver.dtype)
    if not np.all(np.isfinite(R_cast)):
        raise ValueError(
            f"contact_inertia: {'N' if D is None else 'N or D'} has entries too large for the "
            f"solver's dtype {solver.dtype}"
        )
    W = np.asarray(solver.inverse_inertia(q, R_cast))
    if W.ndim == 1:
        W = W[:, None]
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is reported by C.finite_result
        NtWN = N.T @ W[:, :p]
        NtWN = 0.5 * (NtWN + NtWN.T)
        if D is None:
            return C.finite_result(NtWN, "contact_inertia")
        Dm = R[:, p:]
        DtWD = Dm.T @ W[:, p:]
        return C.finite_result((NtWN, N.T @ W[:, p:], 0.5 * (DtWD + DtWD.T)), "contact_inertia")


#: below this many multiply-adds (nv·m²) the dense RᵀW is faster than sorting out R's supports
_DENSE_PRODUCT = 3e7


def _contact_product(R, W, groups, chunk: int = 256) -> np.ndarray:
    """RᵀW, the contact-space inertia G = RᵀM⁻¹R from W = M⁻¹R, in far fewer operations than the
    dense Θ(nv m²) product when R's columns are sparse as contact directions are: a column is
    nonzero only on the dofs between its bodies and the root (the sparsity drumwright2012 §6.3
    exploits). groups: (m,) the contact of each column (a contact's columns share their support).

    Rows of R used by one contact alone (a foot's leg) add R[rows, cols]ᵀ W[rows] to that contact's
    rows of G. Rows shared by several contacts (the spine) are taken in chunks of ``chunk`` columns:
    a column's support among them ends at its last nonzero row e, and as G is symmetric each pair
    of chunks is computed once, from the chunk that ends first, over its rows [0, e) alone, and
    mirrored. Equal to RᵀW to rounding; small products (nv·m² < _DENSE_PRODUCT) are done dense."""
    nv, m = R.shape
    if nv * m * m < _DENSE_PRODUCT:
        return R.T @ W
    order = np.argsort(groups, kind="stable")  # the columns, group by group
    _, starts, ncols = np.unique(np.asarray(groups)[order], return_index=True, return_counts=True)
    nz = R != 0.0
    owner = np.logical_or.reduceat(nz[:, order], starts, axis=1)  # (nv, groups): group g uses row d
    count = owner.sum(axis=1)
    G = np.zeros((m, m), dtype=np.result_type(R, W))
    # rows private to one group: G[cols_g] = R[rows_g, cols_g]ᵀ W[rows_g], batched over the groups
    # with as many private rows and columns
    private = np.flatnonzero(count == 1)
    if len(private):
        who = owner[private].argmax(axis=1)
        o = np.argsort(who, kind="stable")
        private, who = private[o], who[o]
        first = np.searchsorted(who, np.arange(len(starts) + 1))
        nrows = np.diff(first)
        for r, c in sorted(set(zip(nrows.tolist(), ncols.tolist()))):
            if r == 0:
                continue
            gs = np.flatnonzero((nrows == r) & (ncols == c))
            rows = private[first[gs][:, None] + np.arange(r)]  # (groups, r)
            cols = order[starts[gs][:, None] + np.arange(c)]  # (groups, c)
            Rb = R[rows[:, :, None], cols[:, None, :]]  # (groups, r, c)
            G[cols.ravel()] = np.matmul(Rb.transpose(0, 2, 1), W[rows]).reshape(-1, m)
    shared = np.flatnonzero(count > 1)
    if len(shared) == 0:
        return G
    Rs, Ws, used = R[shared], W[shared], nz[shared]
    end = np.where(used.any(axis=0), len(shared) - np.argmax(used[::-1], axis=0), 0)  # rows [0, end)
    bounds = [*range(0, m, chunk), m]
    chunks = [(a, b, int(end[a:b].max())) for a, b in zip(bounds[:-1], bounds[1:])]
    for i, a in enumerate(chunks):
        for b in chunks[i:]:
            (r0, r1, e), (c0, c1, _) = (a, b) if a[2] <= b[2] else (b, a)  # from the chunk that ends first
            G[r0:r1, c0:c1] += Rs[:e, r0:r1].T @ Ws[:e, c0:c1]
            if r0 != c0:
                G[c0:c1, r0:r1] = G[r0:r1, c0:c1].T
    return G
