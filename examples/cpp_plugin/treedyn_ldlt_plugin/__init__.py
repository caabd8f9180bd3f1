"""An example treedyn solver plugin in C++ (docs/plugins.md): forward dynamics by treedyn's CRBA and
RNEA (its headers, compiled into this package) and Eigen's pivoted LDLᵀ, O(n³) like
``crba-cholesky``. A template to copy for a solver of one's own.

The Python class checks the arguments (``Solver.check_inputs``, the checks every solver owes its
users), then hands contiguous float64 arrays to the C++ engine, which runs with the GIL released
and locks its own workspace: ``thread_safe = True``.
"""

from __future__ import annotations

import numpy as np

import treedyn
from treedyn.sdk import model_capsule

from . import _crba_ldlt

__all__ = ["CrbaLdltSolver"]


class CrbaLdltSolver(treedyn.Solver):
    name = "example-crba-ldlt"
    description = "example C++ plugin: CRBA + Eigen's pivoted LDLᵀ, RNEA for the bias, on treedyn's headers"
    capabilities = frozenset({"batch", "inverse_inertia", "branched", "floating_base", "multi_dof", "f_ext"})
    thread_safe = True  # the C++ engine holds a mutex around its workspace

    def __init__(self, model, dtype=np.float64, **options):
        super().__init__(model, dtype, **options)  # float64 only: no "float32" capability
        # the model as treedyn's capsule, refused (RuntimeError) if this extension was built
        # against another treedyn C++ ABI; the engine copies it
        self._engine = _crba_ldlt.CrbaLdlt(model_capsule(model, _crba_ldlt.TREEDYN_ABI_VERSION))

    def forward_dynamics(self, q, v, tau, f_ext=None, *, out=None):
        q0, v0, tau0, f0 = q, v, tau, f_ext
        q, v, tau, batch = self.check_inputs(q, v, tau)
        lead = (len(q),) if batch else ()
        if f_ext is not None:
            f_ext = self._check_f_ext(f_ext, lead)
        if out is None:
            out = np.empty(v.shape)
        else:
            self.check_out(out, v.shape, q=q0, v=v0, tau=tau0, f_ext=f0)
        nq, nv = self.model.nq, self.model.nv
        self._engine.forward_dynamics(
            q.reshape(-1, nq),
            v.reshape(-1, nv),
            tau.reshape(-1, nv),
            None if f_ext is None else f_ext.reshape(-1, *f_ext.shape[-2:]),
            out.reshape(-1, nv),  # a view: the engine writes into out
        )
        return out

    def inverse_inertia(self, q, R):
        # no ``out`` in the signature: treedyn.Solver adds the generic out= (checks, then a copy)
        nv = self.model.nv
        q, _, _, batch = self.check_inputs(q, np.zeros(nv), np.zeros(nv))
        if batch:
            raise ValueError(f"q must have shape (nq,) = ({self.model.nq},), got {q.shape}")
        R = np.asarray(R)
        if R.dtype.kind not in "biuf":
            raise TypeError(f"R must be real, got dtype {R.dtype}")
        if R.ndim not in (1, 2) or R.shape[0] != nv:
            raise ValueError(f"R must have shape (nv,) or (nv, m) with nv = {nv}, got {R.shape}")
        if not np.isfinite(R).all():
            raise ValueError("R must be finite (it has NaN or inf)")
        Y = self._engine.inverse_inertia(q, np.ascontiguousarray(R.reshape(nv, -1), dtype=np.float64))
        return Y.reshape(R.shape)

    def _check_f_ext(self, f_ext, lead):
        f = np.asarray(f_ext)
        if f.dtype.kind not in "biuf":
            raise TypeError(f"f_ext must be real, got dtype {f.dtype}")
        shape = (*lead, self.model.core.N + 1, 6)
        if f.shape != shape:
            raise ValueError(f"f_ext must have shape {shape} (row 0 of each, the world, is ignored), got {f.shape}")
        if not np.isfinite(f).all():
            raise ValueError("f_ext must be finite (it has NaN or inf)")
        return np.ascontiguousarray(f, dtype=np.float64)
