"""What the viewer plays: a trajectory as times t (K,), configurations q (K, nq) and, where the run
recorded them, the contacts of each kept state (treedyn.sim.result.RecordedContacts)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ... import _checks
from ...algorithms.kinematics import center_of_mass
from ...sim.result import RecordedContacts, SimulationResult

__all__ = ["Playback", "playback_of", "contact_arrows"]


@dataclass
class Playback:
    t: np.ndarray  # (K,) increasing
    q: np.ndarray  # (K, nq)
    contacts: list | None  # K RecordedContacts, or None

    def __len__(self) -> int:
        return len(self.t)

    def index(self, time: float) -> int:
        """The last kept state at or before ``time`` (the first before t[0])."""
        return int(np.clip(np.searchsorted(self.t, time, side="right") - 1, 0, len(self.t) - 1))

    def com_path(self, model) -> np.ndarray:
        """(K, 3) centre of mass of every kept state."""
        return np.atleast_2d(center_of_mass(model, self.q))


def playback_of(model, trajectory=None, q=None) -> Playback:
    """A Playback of what td.view was given: a SimulationResult or ContactTrajectory (its t, q and
    contacts), a pair (t, q) of arrays, a mapping with "t" and "q" (an .npz of ``treedyn simulate
    --out``), a (K, nq) array of configurations (one per 1/30 s) — or, with no trajectory, the one
    configuration q (default: the model's reference configuration)."""
    nq = model.nq
    contacts = None
    if trajectory is None:
        q0 = model._reference_q() if q is None else q
        Q = _checks.array(q0, "q", shape=(nq,))[None, :]
        return Playback(np.zeros(1), Q, None)
    if q is not None:
        raise TypeError("td.view: give a trajectory or one configuration q, not both")
    if isinstance(trajectory, SimulationResult):
        t, Q, contacts = trajectory.t, trajectory.q, getattr(trajectory, "contacts", None)
    elif isinstance(trajectory, tuple) and len(trajectory) == 2:
        t, Q = trajectory
    elif hasattr(trajectory, "keys") and "t" in trajectory.keys() and "q" in trajectory.keys():
        t, Q = trajectory["t"], trajectory["q"]
    elif isinstance(trajectory, np.ndarray) or isinstance(trajectory, list):
        Q = trajectory
        t = np.arange(len(np.atleast_2d(np.asarray(Q)))) / 30.0
    else:
        raise TypeError(
            "td.view: trajectory must be a SimulationResult or ContactTrajectory, a pair (t, q), a mapping "
            f"with 't' and 'q' (an .npz), or a (K, nq) array, got {type(trajectory).__name__}"
        )
    Q = _checks.array(Q, "trajectory q")
    if Q.ndim != 2 or Q.shape[1] != nq or len(Q) == 0:
        raise ValueError(f"trajectory q must be (K >= 1, nq = {nq}), got shape {Q.shape}")
    t = _checks.array(t, "trajectory t", shape=(len(Q),))
    if len(t) > 1 and not np.all(np.diff(t) >= 0):
        raise ValueError("trajectory t must be non-decreasing")
    if contacts is not None and (len(contacts) != len(t) or not all(isinstance(c, RecordedContacts) for c in contacts)):
        raise ValueError("trajectory contacts must be one RecordedContacts per kept state")
    return Playback(t, Q, contacts)


def contact_arrows(c: RecordedContacts, scale: float):
    """The contact points (k, 3), and the force each contact puts on the robot's body (the body that
    is not the world; the second when neither is) split into its normal and friction parts, as
    arrows (k, 2, 3) from the point, ``scale`` metres per newton; and the two magnitudes (N)."""
    if len(c) == 0 or c.h <= 0:
        z = np.zeros((0, 2, 3))
        return np.zeros((0, 3)), z, z, np.zeros(0), np.zeros(0)
    sign = np.where(c.bodies[:, 1] == 0, -1.0, 1.0)[:, None]  # the impulse is on the second body
    F = sign * c.impulses / c.h  # mean force over the step (N)
    n = c.normals
    Fn = np.sum(F * n, axis=1)[:, None] * n
    Ft = F - Fn
    P = c.points
    normal = np.stack([P, P + scale * Fn], axis=1)
    friction = np.stack([P, P + scale * Ft], axis=1)
    return P, normal, friction, np.linalg.norm(Fn, axis=1), np.linalg.norm(Ft, axis=1)
