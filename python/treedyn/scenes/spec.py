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

Each name means the same model in every command: a scene kind gives its model to ``from_spec``,
a model kind becomes a scene at rest (neutral configuration, zero velocity) in ``scene_from_spec``.
"""

from __future__ import annotations

import os

from ..model import Model
from . import redmax
from .centipede import centipede
from .chain import chain
from .random_tree import random_tree
from .scene import Scene

__all__ = ["from_spec", "scene_from_spec", "SPEC_KINDS", "file_kind"]


def _model_kind(build):
    """A model builder taking N, as a scene builder (a scene at rest named after the spec)."""

    def scene(n: int, *, _spec: str) -> Scene:
        if n < 1:
            raise ValueError(f"scene spec {_spec!r}: N must be >= 1, got {n}")
        return Scene.from_model(build(n), name=_spec)

    return scene


# name: (scene builder, [(parameter, type)] in positional order, whether every parameter is required)
_KINDS = {
    "chain": (_model_kind(chain), [("n", int)], True),
    "chain-fb": (_model_kind(lambda n: chain(n, floating_base=True)), [("n", int)], True),
    "random": (_model_kind(lambda n: random_tree(n, 0, joints=("revolute",))), [("n", int)], True),
    "random-all": (_model_kind(lambda n: random_tree(n, 0)), [("n", int)], True),
    "bridge": (redmax.bridge, [("n_deck", int), ("n_tower", int), ("params", str), ("car", str)], False),
    "bridge-rigid": (redmax.bridge_rigid, [("n_deck", int)], False),
    "centipede": (centipede, [("n_segments", int), ("friction", float)], False),
    "umbrella": (redmax.umbrella, [("n", int), ("params", str)], False),
    "tree": (redmax.tree, [("levels", int), ("springs", str)], False),
}
SPEC_KINDS = tuple(_KINDS)
_ALIASES = {"bridge_rigid": "bridge-rigid", "chain_fb": "chain-fb", "random_all": "random-all"}
_GRAMMAR = (
    "chain:N, chain-fb:N, random:N, random-all:N, bridge[:N_DECK,N_TOWER,params=,car=], "
    "bridge-rigid[:N_DECK], umbrella[:N,params=], tree[:LEVELS,springs=], centipede[:N_SEGMENTS,friction=], "
    "or a .urdf / .xml file"
)


def from_spec(spec: str, *, floating_base: bool = False, mimic: str = "error") -> Model:
    """The model a spec names (see the module's grammar). floating_base, mimic: passed to
    ``Model.from_urdf`` for a URDF file."""
    if isinstance(spec, str) and os.path.exists(spec):
        kind = file_kind(spec)
        if kind == "urdf":
            return Model.from_urdf(spec, floating_base=floating_base, mimic=mimic)
        if kind == "mjcf":
            return Model.from_mjcf(spec)
        raise ValueError(f"model spec {spec!r}: not a URDF (.urdf, <robot>) nor an MJCF (.xml, <mujoco>) file")
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
    if name not in _KINDS:
        raise ValueError(f"spec {spec!r}: unknown scene {name!r} and no such file (known: {_GRAMMAR})")
    builder, params, required = _KINDS[name]
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
            return int(value)
        except ValueError:
            raise ValueError(f"spec {spec!r}: {key} must be an integer, got {value!r}") from None
    if not value:
        raise ValueError(f"spec {spec!r}: {key} needs a value")
    if key == "car" and value.lower() in ("none", "no", "off"):
        return None
    return value


def file_kind(path: str):
    """ "urdf" or "mjcf" from the file's root element (<robot>, <mujoco>), else from its extension
    (.urdf; .xml, .mjcf) when the XML cannot be read (the loader then says why); None otherwise."""
    import xml.etree.ElementTree as ET

    try:
        for _, elem in ET.iterparse(path, events=("start",)):
            return {"robot": "urdf", "mujoco": "mjcf"}.get(elem.tag)
    except (ET.ParseError, OSError):
        pass
    low = path.lower()
    return "urdf" if low.endswith(".urdf") else "mjcf" if low.endswith((".xml", ".mjcf")) else None
