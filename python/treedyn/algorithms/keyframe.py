"""A named state of a model: MJCF's ``<keyframe><key>`` (MuJoCo's 'home' pose and its controls)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Keyframe"]


@dataclass(frozen=True, eq=False)
class Keyframe:
    """A state and the controls that hold it, in treedyn's coordinates (``model.keyframes[name]``):
    time, q (nq), v (nv), act (na), ctrl (nu). ``state()`` makes a ``td.State`` of it (its own
    copies); ``sim.data(name)`` a StepData with its controls too."""

    name: str
    time: float
    q: np.ndarray
    v: np.ndarray
    act: np.ndarray
    ctrl: np.ndarray

    def __post_init__(self):
        for f in ("q", "v", "act", "ctrl"):
            a = np.array(getattr(self, f), dtype=float)
            a.flags.writeable = False
            object.__setattr__(self, f, a)

    def state(self):
        """A td.State at this keyframe (t, q, v, act)."""
        from .state import State

        return State(self.q, self.v, self.time, self.act)

    def __repr__(self):
        return f"treedyn.Keyframe({self.name!r}, t={self.time:g}, nq={self.q.size}, nu={self.ctrl.size})"
