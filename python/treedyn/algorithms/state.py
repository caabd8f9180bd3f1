"""The state a time stepper advances: configuration q, velocity v, time t."""

from __future__ import annotations

import numpy as np

from .. import _checks as C

__all__ = ["State"]


class State:
    """(q, v, t) of a model. The arrays are the state's own copies (float64); a stepper such as
    ``solver.step(state, h)`` advances them in place."""

    __slots__ = ("q", "v", "t")

    def __init__(self, q, v, t: float = 0.0):
        # boolean arrays are taken as 0/1, as the C++ kernels take them (tests/test_fuzz_api.py)
        self.q = C.vector(q, "q", booleans=True)
        self.v = C.vector(v, "v", booleans=True)
        self.t = C.real(t, "t")

    @classmethod
    def neutral(cls, model) -> State:
        """The neutral configuration at rest, t = 0."""
        from .configuration import neutral

        return cls(neutral(model), np.zeros(model.nv))

    def copy(self) -> State:
        return State(self.q, self.v, self.t)

    def __repr__(self):
        return f"treedyn.State(t={self.t:g}, nq={self.q.size}, nv={self.v.size})"
