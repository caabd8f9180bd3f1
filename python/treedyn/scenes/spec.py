"""Model specifications on the command line: ``chain:100``, ``tree:200``, or a file path."""
from __future__ import annotations

import os

from ..model import Model
from .chain import chain
from .random_tree import random_tree


def from_spec(spec: str, *, floating_base: bool = False, mimic: str = "error") -> Model:
    """``chain:N`` (revolute chain), ``chain-fb:N`` (floating base), ``tree:N`` (random tree of
    revolute joints, seed 0), ``tree-all:N`` (every joint kind), or a .urdf / .xml (MJCF) path.

    floating_base, mimic: passed to ``Model.from_urdf`` for a URDF file."""
    if ":" in spec and not os.path.exists(spec):
        kind, _, arg = spec.partition(":")
        try:
            n = int(arg)
        except ValueError:
            raise ValueError(f"model spec {spec!r}: expected an integer after ':'") from None
        if kind == "chain":
            return chain(n)
        if kind == "chain-fb":
            return chain(n, floating_base=True)
        if kind == "tree":
            return random_tree(n, 0, joints=("revolute",))
        if kind == "tree-all":
            return random_tree(n, 0)
        raise ValueError(f"model spec {spec!r}: unknown kind {kind!r} (chain, chain-fb, tree, tree-all)")
    if os.path.exists(spec):
        low = spec.lower()
        if low.endswith(".urdf") and hasattr(Model, "from_urdf"):
            return Model.from_urdf(spec, floating_base=floating_base, mimic=mimic)
        if low.endswith((".xml", ".mjcf")) and hasattr(Model, "from_mjcf"):
            return Model.from_mjcf(spec)
        raise ValueError(f"model spec {spec!r}: this treedyn cannot read that file type yet")
    raise ValueError(f"model spec {spec!r}: not 'chain:N', 'tree:N', ... nor an existing file")
