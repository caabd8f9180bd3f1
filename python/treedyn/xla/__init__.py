"""treedyn on XLA (JAX): the rigid-body kernels written once for the CPU and the GPU.

Solvers, as the C++ ones (numpy in and out, or JAX arrays left on the device)::

    solver = td.make_solver("aba", model, device="gpu")        # or "cpu", or backend="jax"
    qdd = solver.forward_dynamics(Q, V, T)                     # (B, nq), (B, nv), (B, nv) -> (B, nv)
    tau = solver.inverse_dynamics(Q, V, A); M = solver.mass_matrix(Q)

Functions, for use inside the caller's own ``jax.jit``, ``jax.vmap`` and ``jax.grad`` (no checks)::

    from treedyn import xla
    dm = xla.DeviceModel(model, np.float32, device)            # the model on the device, once
    qdd = xla.forward_dynamics(dm, q, v, tau)                  # one configuration; vmap for a batch

Names: ``aba`` (three passes over the tree's levels), ``crba-cholesky``, ``cfa-oee`` (yang-wu-pan's
constraint force algorithm, odd–even elimination and scans; chains). docs/guide/gpu.md says why
JAX, and what each was measured to cost on which device."""

from __future__ import annotations

from .aba import aba
from .cfa import cfa
from .crba import crba, crba_cholesky
from .device_model import DeviceModel
from .rnea import rnea
from .solvers import SOLVERS, resolve_device

__all__ = [
    "DeviceModel",
    "SOLVERS",
    "resolve_device",
    "forward_dynamics",
    "inverse_dynamics",
    "mass_matrix",
    "forward_dynamics_cfa",
    "forward_dynamics_crba",
]


def forward_dynamics(dm: DeviceModel, q, v, tau, f_ext=None):
    """q̈ by ABA for one configuration (nv,); traceable (jit, vmap, grad)."""
    return aba(dm.structure, dm.arrays, q, v, tau, f_ext)


def forward_dynamics_crba(dm: DeviceModel, q, v, tau, f_ext=None):
    """q̈ by CRBA and a dense Cholesky solve."""
    return crba_cholesky(dm.structure, dm.arrays, q, v, tau, f_ext)


def forward_dynamics_cfa(dm: DeviceModel, q, v, tau, f_ext=None):
    """q̈ by the constraint force algorithm (chains of 1-DoF joints; dm made by ``cfa_model``)."""
    return cfa(dm.structure, dm.arrays, q, v, tau, f_ext)


def inverse_dynamics(dm: DeviceModel, q, v, a, f_ext=None):
    """τ by RNEA."""
    return rnea(dm.structure, dm.arrays, q, v, a, f_ext)


def mass_matrix(dm: DeviceModel, q):
    """M(q) by CRBA."""
    return crba(dm.structure, dm.arrays, q)
