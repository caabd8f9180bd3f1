"""The state a time stepper advances: configuration q, velocity v, time t."""

from __future__ import annotations

import numpy as np

from .. import _checks as C

__all__ = ["State"]


def neutral_or_reference(model) -> np.ndarray:
    if getattr(model, "reference_configuration", None) is not None:
        return np.array(model.reference_configuration, dtype=float)
    from .configuration import neutral

    return neutral(model)


class State:
    """(q, v, t) of a model, and the activations ``act`` of its actuators with dynamics (model.na;
    empty by default: zero activations). The arrays are the state's own copies (float64); a stepper
    such as ``solver.step(state, h)`` advances them in place."""

    __slots__ = ("q", "v", "t", "act")

    def __init__(self, q, v, t: float = 0.0, act=None):
        # boolean arrays are taken as 0/1, as the C++ kernels take them (tests/test_fuzz_api.py)
        self.q = C.vector(q, "q", booleans=True)
        self.v = C.vector(v, "v", booleans=True)
        self.t = C.real(t, "t")
        self.act = np.zeros(0) if act is None else C.vector(act, "act")

    @classmethod
    def neutral(cls, model) -> State:
        """The neutral configuration at rest, t = 0."""
        from .configuration import neutral

        return cls(neutral(model), np.zeros(model.nv))

    @classmethod
    def initial(cls, model) -> State:
        """The model's starting state, as MuJoCo starts a model: its reference configuration (the
        file's qpos0: ``model.reference_configuration``; the neutral one when it has none), at rest,
        t = 0, zero activations."""
        q = neutral_or_reference(model)
        return cls(q, np.zeros(model.nv), act=np.zeros(getattr(model, "na", 0)))

    def copy(self) -> State:
        return State(self.q, self.v, self.t, self.act)

    def __repr__(self):
        return f"treedyn.State(t={self.t:g}, nq={self.q.size}, nv={self.v.size})"
