"""A scene: a model with its initial state, time step and duration (the RedMax scenes of
baxter2019 §4 and docs/scenes.md), and ``scene_from_spec`` for the command line."""
from __future__ import annotations

from typing import Optional

import numpy as np

from ..model import Model
from ..state import State

__all__ = ["Scene", "scene_from_spec", "SCENE_KINDS"]


class Scene:
    """A model, the state it starts from, and how to run it.

    Attributes: ``model`` (treedyn.Model), ``state`` (treedyn.State; a stepper advances it in
    place), ``h`` (time step, 1e-2 as in the published RedMax code), ``duration`` (simulated
    seconds, 5.0 as in the thesis' timings), ``name`` and ``info`` (the parameters the scene was
    built with and derived numbers: block lengths, masses, spring and loop counts, the initial
    loop-closure residual, ...).

    ``model, state = scene`` unpacks it. ``scene.initial_state()`` is a fresh copy of the state
    the scene was built with (``scene.state`` itself is the one a stepper advances).
    """

    def __init__(self, model: Model, state: State, *, name: str, h: float = 1e-2, duration: float = 5.0,
                 info: Optional[dict] = None):
        if not isinstance(model, Model):
            raise TypeError(f"Scene model must be a treedyn.Model, got {type(model).__name__}")
        if not isinstance(state, State):
            raise TypeError(f"Scene state must be a treedyn.State, got {type(state).__name__}")
        if state.q.size != model.nq or state.v.size != model.nv:
            raise ValueError(f"Scene state has nq={state.q.size}, nv={state.v.size}; the model has "
                             f"nq={model.nq}, nv={model.nv}")
        h, duration = float(h), float(duration)
        if not (np.isfinite(h) and h > 0):
            raise ValueError(f"Scene h must be positive, got {h}")
        if not (np.isfinite(duration) and duration > 0):
            raise ValueError(f"Scene duration must be positive, got {duration}")
        self.model = model
        self.state = state
        self.h = h
        self.duration = duration
        self.name = str(name)
        self.info = dict(info or {})
        self._initial = state.copy()

    @classmethod
    def from_model(cls, model: Model, name: str, h: float = 1e-2, duration: float = 5.0) -> "Scene":
        """A scene of a plain model: neutral configuration, zero velocity, t = 0."""
        from ..configuration import neutral
        state = State(neutral(model), np.zeros(model.nv))
        return cls(model, state, name=name, h=h, duration=duration,
                   info={"nq": model.nq, "nv": model.nv, "n_bodies": model.n_bodies})

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
        return (f"treedyn.scenes.Scene({self.name!r}, nv={self.model.nv}, h={self.h:g}, "
                f"duration={self.duration:g})")


# ----------------------------------------------------------------------------- specs
def _chain_scene(n: int) -> Scene:
    from .chain import chain
    return Scene.from_model(chain(n), name=f"chain:{n}")


def _kinds():
    from . import redmax
    # name: (builder, [(parameter, type)] in positional order)
    return {
        "bridge": (redmax.bridge, [("n_deck", int), ("n_tower", int), ("params", str), ("car", str)]),
        "bridge-rigid": (redmax.bridge_rigid, [("n_deck", int)]),
        "umbrella": (redmax.umbrella, [("n", int), ("params", str)]),
        "tree": (redmax.tree, [("levels", int), ("springs", str)]),
        "chain": (_chain_scene, [("n", int)]),
    }


SCENE_KINDS = ("bridge", "bridge-rigid", "umbrella", "tree", "chain")
_ALIASES = {"bridge_rigid": "bridge-rigid"}


def scene_from_spec(spec: str) -> Scene:
    """A scene from a string: ``NAME`` or ``NAME:ARG,ARG,...,KEY=VALUE,...``.

    - ``bridge``, ``bridge:N_DECK,N_TOWER``, e.g. ``bridge:20,20,params=video,car=heavy``
      (params: sim | video; car: none | car | heavy)
    - ``bridge-rigid:N_DECK``
    - ``umbrella:N`` (and ``params=video|sim``: canopy spring stiffness 6 or 1)
    - ``tree:LEVELS``, ``tree:LEVELS,springs=square``
    - ``chain:N`` (``treedyn.scenes.chain(N)`` at rest)

    Positional arguments fill the builder's parameters in order; KEY=VALUE names one. Omitted
    ones take the builder's defaults. Raises ValueError naming the problem (unknown scene,
    unknown or repeated parameter, a count that is not an integer, a bad value).
    """
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"scene spec must be a non-empty string, got {spec!r}")
    name, _, rest = spec.strip().partition(":")
    name = _ALIASES.get(name.strip().lower(), name.strip().lower())
    kinds = _kinds()
    if name not in kinds:
        raise ValueError(f"scene spec {spec!r}: unknown scene {name!r} (known: {', '.join(SCENE_KINDS)})")
    builder, params = kinds[name]
    names = [p for p, _ in params]
    types = dict(params)
    kwargs: dict = {}
    if rest.strip():
        parts = [p.strip() for p in rest.split(",")]
        positional = True
        for i, part in enumerate(parts):
            if not part:
                raise ValueError(f"scene spec {spec!r}: empty argument at position {i + 1}")
            if "=" in part:
                positional = False
                key, _, value = part.partition("=")
                key, value = key.strip(), value.strip()
                if key not in types:
                    raise ValueError(f"scene spec {spec!r}: {name} has no parameter {key!r} "
                                     f"(parameters: {', '.join(names)})")
            else:
                if not positional:
                    raise ValueError(f"scene spec {spec!r}: positional argument {part!r} after a key=value one")
                if i >= len(names):
                    raise ValueError(f"scene spec {spec!r}: {name} takes at most {len(names)} arguments "
                                     f"({', '.join(names)}), got {len(parts)}")
                key, value = names[i], part
            if key in kwargs:
                raise ValueError(f"scene spec {spec!r}: parameter {key!r} given twice")
            kwargs[key] = _convert(spec, key, value, types[key])
    return builder(**kwargs)


def _convert(spec: str, key: str, value: str, typ):
    if typ is int:
        try:
            return int(value)
        except ValueError:
            raise ValueError(f"scene spec {spec!r}: {key} must be an integer, got {value!r}") from None
    if not value:
        raise ValueError(f"scene spec {spec!r}: {key} needs a value")
    if key == "car" and value.lower() in ("none", "no", "off"):
        return None
    return value
