"""A scene: a model with its initial state, time step and duration (the RedMax scenes of
baxter2019 §4 and docs/scenes.md)."""

from __future__ import annotations

from .. import _checks
from ..algorithms.state import State
from ..model import Model

__all__ = ["Scene"]


class Scene:
    """A model, the state it starts from, and how to run it.

    Attributes: ``model`` (treedyn.Model), ``state`` (treedyn.State; a stepper advances it in
    place), ``h`` (time step, 1e-2 as in the published RedMax code), ``duration`` (simulated
    seconds, 5.0 as in the thesis' timings), ``name`` and ``info`` (the parameters the scene was
    built with and derived numbers: block lengths, masses, spring and loop counts, the initial
    loop-closure residual, ...).

    ``tau``: the scene's controller, a function tau(t, q, v) -> (nv,), or None (no actuation).

    ``model, state = scene`` unpacks it. ``scene.initial_state()`` is a fresh copy of the state
    the scene was built with (``scene.state`` itself is the one a stepper advances).
    """

    def __init__(
        self,
        model: Model,
        state: State,
        *,
        name: str,
        h: float = 1e-2,
        duration: float = 5.0,
        info: dict | None = None,
        tau=None,
    ):
        _checks.instance(model, Model, "Scene model")
        _checks.instance(state, State, "Scene state")
        if state.q.size != model.nq or state.v.size != model.nv:
            raise ValueError(
                f"Scene state has nq={state.q.size}, nv={state.v.size}; the model has nq={model.nq}, nv={model.nv}"
            )
        h = _checks.real(h, "Scene h", positive=True)
        duration = _checks.real(duration, "Scene duration", positive=True)
        self.model = model
        self.state = state
        self.h = h
        self.duration = duration
        self.name = str(name)
        self.info = dict(info or {})
        if tau is not None and not callable(tau):
            raise TypeError(f"Scene tau must be a function tau(t, q, v) or None, got {type(tau).__name__}")
        self._initial = state.copy()
        self.tau = tau

    @classmethod
    def from_model(cls, model: Model, name: str, h: float | None = None, duration: float = 5.0) -> Scene:
        """A scene of a plain model: its starting state (State.initial: the file's qpos0, or the
        neutral configuration), at rest, t = 0; h: the file's time step (model.timestep) by default,
        else 1e-2."""
        state = State.initial(model)
        return cls(
            model,
            state,
            name=name,
            h=(model.timestep or 1e-2) if h is None else h,
            duration=duration,
            info={"nq": model.nq, "nv": model.nv, "n_bodies": model.n_bodies},
        )

    def initial_state(self) -> State:
        """A copy of the state the scene started from."""
        return self._initial.copy()

    @property
    def steps(self) -> int:
        """Number of steps of h in the duration."""
        return int(round(self.duration / self.h))

    def __iter__(self):
        yield self.model
        yield self.state

    def __repr__(self):
        return f"treedyn.scenes.Scene({self.name!r}, nv={self.model.nv}, h={self.h:g}, duration={self.duration:g})"
