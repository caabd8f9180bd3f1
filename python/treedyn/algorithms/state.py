"""The state a time stepper advances: configuration q, velocity v, time t."""

from __future__ import annotations

import numpy as np

__all__ = ["State"]


class State:
    """(q, v, t) of a model. The arrays are the state's own copies (float64); a stepper such as
    ``solver.step(state, h)`` advances them in place."""

    __slots__ = ("q", "v", "t")

    def __init__(self, q, v, t: float = 0.0):
        self.q = _real_vector(q, "q")
        self.v = _real_vector(v, "v")
        self.t = float(t)
        if not np.isfinite(self.t):
            raise ValueError(f"t must be finite, got {t}")

    @classmethod
    def neutral(cls, model) -> State:
        """The neutral configuration at rest, t = 0."""
        from .configuration import neutral

        return cls(neutral(model), np.zeros(model.nv))

    def copy(self) -> State:
        return State(self.q, self.v, self.t)

    def __repr__(self):
        return f"treedyn.State(t={self.t:g}, nq={self.q.size}, nv={self.v.size})"


def _real_vector(x, name: str) -> np.ndarray:
    a = np.asarray(x)
    if a.dtype.kind not in "fiub":
        raise TypeError(f"{name} must be a real numeric array, got dtype {a.dtype}")
    if a.ndim != 1:
        raise ValueError(f"{name} must be a vector, got shape {a.shape}")
    a = np.array(a, dtype=np.float64)
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} contains NaN or inf")
    return a
