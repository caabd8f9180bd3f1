"""One-shot dynamics of a model (each call allocates its own O(N) workspace; solvers keep theirs)."""

from __future__ import annotations

import numpy as np

from .. import _checks as C
from .. import _core
from ..model import Model

__all__ = ["forward_kinematics", "rnea", "bias_forces", "mass_matrix"]


def _cpp(model) -> _core.Model:
    return C.instance(model, Model, "model").core


def forward_kinematics(model: Model, q):
    """World rotation R (n_bodies, 3, 3) and origin p (n_bodies, 3) of every body frame at q
    (body 0, the world: identity): a point x in body i's coordinates is at R[i] @ x + p[i]."""
    return _core.forward_kinematics(_cpp(model), q)


def rnea(model: Model, q, v, a, f_ext=None) -> np.ndarray:
    """Inverse dynamics τ = M(q) a + c(q, v) − Σ Jᵀ f_ext (recursive Newton–Euler), gravity included.

    f_ext: (n_bodies, 6) spatial forces [n; f] on each body in body coordinates (row 0 ignored).

    A batch: q (B, nq), v and a (B, nv), f_ext (B, n_bodies, 6) give τ (B, nv), the items spread
    over treedyn's threads (td.set_num_threads) with the GIL released; item b is the single call on
    item b bit for bit.
    """
    return _core.rnea(_cpp(model), q, v, a, f_ext)


def bias_forces(model: Model, q, v, f_ext=None) -> np.ndarray:
    """c(q, v): Coriolis, centrifugal and gravity forces (minus external forces): RNEA with a = 0."""
    return _core.bias_forces(_cpp(model), q, v, f_ext)


def mass_matrix(model: Model, q) -> np.ndarray:
    """The joint-space inertia matrix M(q) (composite-rigid-body algorithm), (nv, nv).

    A batch q (B, nq) gives (B, nv, nv), the items spread over treedyn's threads with the GIL
    released; item b is the single call on item b bit for bit."""
    return _core.mass_matrix(_cpp(model), q)
