"""The ``<default>`` pass: the default classes (nested, inherited), whose attributes
``Reader.attrs`` puts under an element's own."""

from __future__ import annotations

__all__ = ["read_defaults"]


def read_defaults(r, root):
    """{class: {tag: {attribute: value}}}, nested classes inheriting from their parents."""
    out = {"main": {}}
    for top in [e for e in root if e.tag == "default"]:
        _default_class(r, top, out.get(top.get("class", "main"), {}), out, top=True)
    return out


def _default_class(r, elem, inherited, out, top=False):
    r.current = elem
    name = elem.get("class", "main" if top else None)
    if name is None:
        raise r.err("a nested <default> needs a class attribute", elem)
    if name in out and not (top and name == "main"):
        raise r.err(f"default class {name!r} is defined twice", elem)
    mine = {tag: dict(attrs) for tag, attrs in inherited.items()}
    for child in elem:
        if not isinstance(child.tag, str) or child.tag == "default":
            continue
        mine.setdefault(child.tag, {}).update(child.attrib)
    out[name] = mine
    for child in elem:
        if child.tag == "default":
            _default_class(r, child, mine, out)
