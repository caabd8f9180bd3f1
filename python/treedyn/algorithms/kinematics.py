"""Frames, Jacobians, centre of mass and energies (the kinematics contact and control start from).

A frame is a body (by name or index) or a named frame of ``model.frames`` (a URDF link merged
by a fixed joint, an MJCF site). ``point``, in the frame's coordinates, moves the frame's origin
there (the Jacobian of a point on a body). Jacobians and J̇q̇ have treedyn's spatial row order
[angular; linear] (Featherstone's) by default; ``rows="linear-angular"`` gives Pinocchio's
[linear; angular]. ``reference`` says in which coordinates the frame's velocity is given:

- ``"world"``: the spatial velocity at the world origin, world axes ([ω; v_O], Pinocchio's WORLD);
- ``"local"``: the frame's own axes at its origin (Pinocchio's LOCAL);
- ``"local_world_aligned"``: world axes at the frame's origin, [ω; ṗ] (Pinocchio's
  LOCAL_WORLD_ALIGNED: the linear rows are the velocity of the point).

C++ kernels: cpp/include/treedyn/algorithms/jacobians.hpp.
"""

from __future__ import annotations

import numpy as np

from .. import _checks as C
from .. import _core
from ..model import Model, Transform, UnknownNameError

__all__ = [
    "frame_placement",
    "frame_jacobian",
    "frame_bias_acceleration",
    "center_of_mass",
    "kinetic_energy",
    "potential_energy",
]

_REFERENCES = {"world": 0, "local": 1, "local_world_aligned": 2}
_ROWS = ("angular-linear", "linear-angular")


def _cpp(model) -> _core.Model:
    return C.instance(model, Model, "model").core


def _frame(model: Model, name, point) -> tuple[int, np.ndarray, np.ndarray]:
    """(body index, rotation, origin) of the frame in its body's coordinates, origin moved to point."""
    if isinstance(name, (int, np.integer)) and not isinstance(name, bool):
        if not 0 <= int(name) < model.n_bodies:
            raise ValueError(f"no body {int(name)} (bodies are 0..{model.n_bodies - 1})")
        body, placement = int(name), Transform()
    elif isinstance(name, str):
        if name in model.frames:
            body_name, placement = model.frames[name]
            body = model.body_index(body_name)
        elif name == "world":
            body, placement = 0, Transform()
        else:
            try:
                body = model.body_index(name)
            except UnknownNameError:
                raise UnknownNameError(
                    f"no body or frame named {name!r}; bodies are {model.body_names[1:]}, frames {list(model.frames)}"
                ) from None
            placement = Transform()
    else:
        raise TypeError(f"frame must be a body or frame name or a body index, got {name!r}")
    R, p = np.asarray(placement.rotation, dtype=float), np.asarray(placement.translation, dtype=float)
    if point is not None:
        x = C.array(point, "point", finite=False)
        if x.shape != (3,) or not np.all(np.isfinite(x)):
            raise ValueError(f"point must be 3 finite real numbers in the frame's coordinates, got {point!r}")
        p = p + R @ x
    return body, R, p


def _reference(reference: str) -> int:
    return _REFERENCES[C.choice(reference, "reference", _REFERENCES)]


def _ordered(x: np.ndarray, rows: str, axis: int) -> np.ndarray:
    """x's six spatial rows (along axis) in the order ``rows`` (checked) asks for (treedyn's: as computed)."""
    if rows == "angular-linear":
        return x
    return np.concatenate([np.take(x, [3, 4, 5], axis=axis), np.take(x, [0, 1, 2], axis=axis)], axis=axis)


def frame_placement(model: Model, q, frame, point=None) -> Transform:
    """The world pose of a body or named frame at q: ``x_world = rotation @ x_frame + translation``."""
    body, R, p = _frame(model, frame, point)
    Rb, pb = _core.forward_kinematics(_cpp(model), q)
    return Transform(rotation=Rb[body] @ R, translation=Rb[body] @ p + pb[body])


def frame_jacobian(
    model: Model, q, frame, point=None, reference: str = "world", rows: str = "angular-linear"
) -> np.ndarray:
    """J(q), (6, nv) — or (B, 6, nv) for q of shape (B, nq) — with the frame's velocity
    [ω; v] = J q̇ in ``reference`` coordinates (see the module's docstring); ``rows="linear-angular"``:
    [v; ω], Pinocchio's getFrameJacobian."""
    body, R, p = _frame(model, frame, point)
    rows = C.choice(rows, "rows", _ROWS)
    return _ordered(_core.frame_jacobian(_cpp(model), q, body, R, p, _reference(reference)), rows, -2)


def frame_bias_acceleration(
    model: Model, q, v, frame, point=None, reference: str = "world", rows: str = "angular-linear"
) -> np.ndarray:
    """J̇(q, q̇) q̇, (6,): the frame's acceleration at q̈ = 0 without gravity, so that its
    acceleration is J q̈ + J̇ q̇ in ``reference`` coordinates ("local_world_aligned": the classical
    acceleration of the frame's origin, the operational-space controller's ẍ); ``rows`` as
    frame_jacobian's."""
    body, R, p = _frame(model, frame, point)
    rows = C.choice(rows, "rows", _ROWS)
    return _ordered(_core.frame_bias_acceleration(_cpp(model), q, v, body, R, p, _reference(reference)), rows, -1)


def center_of_mass(model: Model, q, jacobian: bool = False):
    """The centre of mass (3,) in world coordinates — (B, 3) for q of shape (B, nq) — and with
    ``jacobian=True`` also its Jacobian (3, nv) (or (B, 3, nv)): ċ = J_c q̇. Of the bodies that
    can move: bodies welded to the world (a fixed arm's base) are left out, as in Pinocchio. Mass 0
    with a first moment (a simplified model whose moving mass went to the world, td.simplify) has
    none: ValueError."""
    return _core.center_of_mass(_cpp(model), q, C.boolean(jacobian, "jacobian"))


def kinetic_energy(model: Model, q, v) -> float:
    """½ q̇ᵀ M(q) q̇."""
    return _core.kinetic_energy(_cpp(model), q, v)


def potential_energy(model: Model, q) -> float:
    """−Σ m_i g · c_i over the world centres of mass of the bodies that can move (model.gravity;
    zero at the world origin), summed as −g · Σ (m_i p_i + R_i h_i) over their first moments, so
    also for the massless bodies of a simplified model (td.simplify)."""
    return _core.potential_energy(_cpp(model), q)
