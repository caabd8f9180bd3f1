"""One grammar for the models and scenes named on the command line (``treedyn compare``,
``treedyn simulate``) and in ``from_spec`` / ``scene_from_spec``: ``NAME``, ``NAME:ARG,...,KEY=VALUE``
or the path of a URDF / MJCF file.

    chain:N             a serial chain of N revolute joints (treedyn.scenes.chain)
    chain-fb:N          the same on a floating base
    random:N            a random tree of N revolute joints (seed 0; treedyn.scenes.random_tree)
    random-all:N        a random tree with every joint kind (seed 0)
    bridge[:N_DECK,N_TOWER,params=sim|video,car=none|car|heavy]   the RedMax scenes (docs/scenes.md)
    bridge-rigid[:N_DECK]
    umbrella[:N,params=sim|video]
    tree[:LEVELS,springs=siblings|square]
    centipede[:N_SEGMENTS,friction=MU]   drumwright2012's walking centipede, with contact (scenes.centipede)
    path/to/robot.urdf, path/to/model.xml

The names are the rows of ``SCENES`` (a scene module's builder and its parameters), the files
those of ``treedyn.io.LOADERS``. Each name means the same model in every command: a scene kind gives its model to ``from_spec``,
a model kind becomes a scene at rest (neutral configuration, zero velocity) in ``scene_from_spec``.
"""

from __future__ import annotations

import os

from ..io import file_kind, load_model_file
from ..model import Model
from .bridge import bridge
from .bridge_rigid import bridge_rigid
from .centipede import centipede
from .chain import chain
from .random_tree import random_tree
from .scene import Scene
from .tree import tree
from .umbrella import umbrella

__all__ = ["from_spec", "scene_from_spec", "SPEC_KINDS", "file_kind", "SCENES"]


def _model_kind(build):
    """A model builder taking N, as a scene builder (a scene at rest named after the spec)."""

    def scene(n: int, *, _spec: str) -> Scene:
        if n < 1:
            raise ValueError(f"scene spec {_spec!r}: N must be >= 1, got {n}")
        return Scene.from_model(build(n), name=_spec)

    return scene


def _none_or_text(value: str):
    """A value that "none", "no" or "off" turn into None (the bridge's car)."""
    return None if value.lower() in ("none", "no", "off") else value


#: Every name a spec can use, in the order the errors list them: name -> (scene builder,
#: [(parameter, type)] in positional order (int: converted, with an error naming it; str: passed
#: as written; a function: applied to the text), whether every parameter is required, the grammar
#: shown in errors). A model builder goes through _model_kind (its scene is at rest). The one place
#: to register a new scene (docs/architecture-notes-io.md).
SCENES = {
    "chain": (_model_kind(chain), [("n", int)], True, "chain:N"),
    "chain-fb": (_model_kind(lambda n: chain(n, floating_base=True)), [("n", int)], True, "chain-fb:N"),
    "random": (_model_kind(lambda n: random_tree(n, 0, joints=("revolute",))), [("n", int)], True, "random:N"),
    "random-all": (_model_kind(lambda n: random_tree(n, 0)), [("n", int)], True, "random-all:N"),
    "bridge": (
        bridge,
        [("n_deck", int), ("n_tower", int), ("params", str), ("car", _none_or_text)],
        False,
        "bridge[:N_DECK,N_TOWER,params=,car=]",
    ),
    "bridge-rigid": (bridge_rigid, [("n_deck", int)], False, "bridge-rigid[:N_DECK]"),
    "umbrella": (umbrella, [("n", int), ("params", str)], False, "umbrella[:N,params=]"),
    "tree": (tree, [("levels", int), ("springs", str)], False, "tree[:LEVELS,springs=]"),
    "centipede": (centipede, [("n_segments", int), ("friction", float)], False, "centipede[:N_SEGMENTS,friction=]"),
}
#: the largest count a spec may ask for, per parameter (a spec is typed by hand: beyond these it is a typo,
#: and the model would not fit in memory or time); a 100 000-link chain is well-posed and builds
MAX_COUNT = {"n": 100_000, "n_segments": 10_000, "n_deck": 10_000, "n_tower": 10_000, "levels": 12}
SPEC_KINDS = tuple(SCENES)
_ALIASES = {name.replace("-", "_"): name for name in SCENES if "-" in name}  # bridge_rigid for bridge-rigid
_GRAMMAR = ", ".join(row[3] for row in SCENES.values()) + ", or a .urdf / .xml file"


def from_spec(spec: str, *, floating_base: bool = False, mimic: str = "error") -> Model:
    """The model a spec names (see the module's grammar). floating_base, mimic: passed to
    ``Model.from_urdf`` for a URDF file."""
    if isinstance(spec, str) and os.path.exists(spec):
        return load_model_file(spec, floating_base=floating_base, mimic=mimic)
    return scene_from_spec(spec).model


def scene_from_spec(spec: str) -> Scene:
    """The scene a spec names (see the module's grammar); a model file or model kind gives a scene
    at rest. Positional arguments fill the builder's parameters in order; KEY=VALUE names one;
    omitted ones take the builder's defaults. Raises ValueError naming the problem (unknown name,
    unknown or repeated parameter, a count that is not an integer, a bad value)."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"spec must be a non-empty string, got {spec!r} (known: {_GRAMMAR})")
    if os.path.exists(spec):
        return Scene.from_model(from_spec(spec), name=os.path.basename(spec))
    name, _, rest = spec.strip().partition(":")
    name = _ALIASES.get(name.strip().lower(), name.strip().lower())
    if name not in SCENES:
        raise ValueError(f"spec {spec!r}: unknown scene {name!r} and no such file (known: {_GRAMMAR})")
    builder, params, required, _ = SCENES[name]
    names = [p for p, _ in params]
    types = dict(params)
    kwargs: dict = {}
    if rest.strip():
        parts = [p.strip() for p in rest.split(",")]
        positional = True
        for i, part in enumerate(parts):
            if not part:
                raise ValueError(f"spec {spec!r}: empty argument at position {i + 1}")
            if "=" in part:
                positional = False
                key, _, value = part.partition("=")
                key, value = key.strip(), value.strip()
                if key not in types:
                    raise ValueError(f"spec {spec!r}: {name} has no parameter {key!r} (parameters: {', '.join(names)})")
            else:
                if not positional:
                    raise ValueError(f"spec {spec!r}: positional argument {part!r} after a key=value one")
                if i >= len(names):
                    raise ValueError(
                        f"spec {spec!r}: {name} takes at most {len(names)} arguments "
                        f"({', '.join(names)}), got {len(parts)}"
                    )
                key, value = names[i], part
            if key in kwargs:
                raise ValueError(f"spec {spec!r}: parameter {key!r} given twice")
            kwargs[key] = _convert(spec, key, value, types[key])
    if required:
        missing = [n for n in names if n not in kwargs]
        if missing:
            raise ValueError(f"spec {spec!r}: {name} needs {', '.join(missing)} (e.g. {name}:100)")
        return builder(**kwargs, _spec=spec.strip())
    return builder(**kwargs)


def _convert(spec: str, key: str, value: str, typ):
    if typ is int:
        try:
            n = int(value)
        except ValueError:
            raise ValueError(f"spec {spec!r}: {key} must be an integer, got {value!r}") from None
        if n > MAX_COUNT.get(key, n):
            raise ValueError(f"spec {spec!r}: {key} = {n} is more than a spec builds (at most {MAX_COUNT[key]})")
        return n
    if not value:
        raise ValueError(f"spec {spec!r}: {key} needs a value")
    if typ is float:
        try:
            return float(value)
        except ValueError:
            raise ValueError(f"spec {spec!r}: {key} must be a number, got {value!r}") from None
    return value if typ is str else typ(value)
