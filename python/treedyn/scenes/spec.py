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
        kind = file_kind(spec)
        if kind == "urdf":
            return Model.from_urdf(spec, floating_base=floating_base, mimic=mimic)
        if kind == "mjcf":
            return Model.from_mjcf(spec)
        raise ValueError(f"model spec {spec!r}: not a URDF (.urdf, <robot>) nor an MJCF (.xml, <mujoco>) file")
    raise ValueError(f"model spec {spec!r}: not 'chain:N', 'tree:N', ... nor an existing file")


def file_kind(path: str):
    """"urdf" or "mjcf" from the file's root element (<robot>, <mujoco>), else from its extension
    (.urdf; .xml, .mjcf) when the XML cannot be read (the loader then says why); None otherwise."""
    import xml.etree.ElementTree as ET

    try:
        for _, elem in ET.iterparse(path, events=("start",)):
            return {"robot": "urdf", "mujoco": "mjcf"}.get(elem.tag)
    except (ET.ParseError, OSError):
        pass
    low = path.lower()
    return "urdf" if low.endswith(".urdf") else "mjcf" if low.endswith((".xml", ".mjcf")) else None
