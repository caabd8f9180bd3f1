"""The document passes: the root element, ``<include>``s, and which top-level sections are read,
noted as ignored (one IgnoredElementWarning per file), or refused."""

from __future__ import annotations

import os

from .._errors import ModelFileError
from .._files import regular_file_problem
from .._xml import parse_xml_text

__all__ = ["check_root", "expand_includes", "check_sections"]

_SILENT_SECTIONS = {"asset", "visual", "statistic", "size", "keyframe", "custom", "extension"}
_ERROR_SECTIONS = {
    "deformable": "deformable bodies (flexes, skins) are not articulated rigid bodies",
}
# read by their own passes: the bodies, the default classes, the compiler, the options, the
# constraints, tendons and actuators (once the tree is built), the contact filters
# (collision.read_contact), the sensors (sensors.read_sensors); includes are expanded first
_READ_SECTIONS = (
    "worldbody", "default", "compiler", "option", "include", "equality", "tendon", "actuator", "contact", "sensor"
)  # fmt: skip


def check_root(r, root):
    if root.tag != "mujoco":
        hint = " (this is URDF: use Model.from_urdf)" if root.tag == "robot" else ""
        raise r.err(f"the root element is <{root.tag}>, an MJCF file has <mujoco>{hint}", root)


def expand_includes(r, root, base_dir, chain):
    """Replace each <include file=...> by the children of the included file's root element
    (iteratively: bodies may nest thousands deep). Included elements resolve their own includes
    against their file's folder; ``origin`` remembers it for them."""
    origin = {}  # id(element) -> (folder, chain of including files) when not the parent's
    stack = [(root, base_dir, chain)]
    while stack:
        parent, base, ch = stack.pop()
        i = 0
        while i < len(parent):
            e = parent[i]
            eb, ech = origin.get(id(e), (base, ch))
            if e.tag != "include":
                stack.append((e, eb, ech))
                i += 1
                continue
            r.current = e
            fn = e.get("file")
            if not fn:
                raise r.err("<include> without a file attribute", e)
            path = fn if os.path.isabs(fn) else os.path.join(eb, fn)
            if regular_file_problem(path) == "not found":
                raise r.err(f"<include file={fn!r}>: file not found ({path})", e)
            if os.path.abspath(path) in ech:
                raise r.err(f"<include file={fn!r}> includes itself", e)
            try:  # a regular file only, counted: an include fan-out is refused (treedyn.io._files)
                data = r.budget.include(path, "included file")
            except (OSError, ModelFileError) as ex:
                raise r.err(f"<include file={fn!r}>: {ex}", e) from None
            sub = parse_xml_text(data, path, os.path.dirname(os.path.abspath(path)))
            r.locate(sub)
            kids = list(sub.root)
            parent[i : i + 1] = kids  # (one splice: inserting one by one is quadratic in the kids)
            where = (sub.base_dir, ech + [os.path.abspath(path)])
            for kid in kids:
                origin[id(kid)] = where
            # the kids are looked at next, in place (one of them may be an <include> itself)


def check_sections(r, root):
    """Refuse the sections treedyn cannot load and note unknown ones; the others are read by their
    own passes or silently ignored."""
    for e in root:
        if not isinstance(e.tag, str) or e.tag in _READ_SECTIONS:
            continue
        if e.tag in _ERROR_SECTIONS:
            raise r.err(f"<{e.tag}>: {_ERROR_SECTIONS[e.tag]}; treedyn cannot load this model", e)
        if e.tag not in _SILENT_SECTIONS:
            r.ignored.add(e.tag)
