"""Loading models from files: URDF (ROS, example-robot-data) and MJCF (MuJoCo).

``load_urdf`` / ``load_mjcf`` are also ``treedyn.Model.from_urdf`` / ``Model.from_mjcf``. Both take
a path or the XML text itself (a string starting with '<'). A file that cannot be loaded raises
``ModelFileError`` (a ValueError) naming the file, the line and the problem; elements that are read
past are reported in one ``IgnoredElementWarning`` per file; physically inconsistent inertias (kept,
as Pinocchio keeps them) in an ``InertiaWarning``; joints that move no mass in a ``MassWarning``.
Every file a load reads (the model, its includes, its meshes) is read only if it is a regular file
and within the load's limits (``treedyn.io._files``: TREEDYN_MAX_XML_BYTES, TREEDYN_MAX_INCLUDES,
TREEDYN_MAX_MESH_BYTES); numbers only as MJCF and URDF write them (``_common.parse_numbers``).
"""

from ..model.tree import _FILE_READERS
from ._common import IgnoredElementWarning, InertiaWarning
from ._files import limit, regular_file_problem
from ._tree import MassWarning
from ._xml import ModelFileError
from .mjcf import load_mjcf
from .mjcf_writer import to_mjcf
from .urdf import MissingMeshWarning, load_urdf

_FILE_READERS.update(urdf=load_urdf, mjcf=load_mjcf, to_mjcf=to_mjcf)  # Model.from_urdf / from_mjcf / to_mjcf

#: The model files a path can name (``treedyn compare``/``simulate``, ``scenes.from_spec``): kind ->
#: (how the file is opened there: loader(path, floating_base, mimic), its root element, its file
#: extensions, how errors name it). The one place to register a new loader (docs/architecture-notes-io.md).
LOADERS = {
    "urdf": (
        lambda path, floating_base, mimic: load_urdf(path, floating_base=floating_base, mimic=mimic),
        "robot",
        (".urdf",),
        "a URDF (.urdf, <robot>)",
    ),
    "mjcf": (
        lambda path, floating_base, mimic: load_mjcf(path),
        "mujoco",
        (".xml", ".mjcf"),
        "an MJCF (.xml, <mujoco>)",
    ),
}


def file_kind(path: str):
    """The LOADERS kind of a file ("urdf", "mjcf") from its root element (<robot>, <mujoco>), else
    from its extension (.urdf; .xml, .mjcf) when the XML cannot be read or the path is no regular
    file or over the XML size limit (never opened then: a FIFO would block; the loader then says
    why); None otherwise."""
    import os
    import xml.etree.ElementTree as ET

    try:
        readable = regular_file_problem(path) is None and os.path.getsize(path) <= limit("TREEDYN_MAX_XML_BYTES")
        if readable:
            for _, elem in ET.iterparse(path, events=("start",)):
                return {root: kind for kind, (_, root, _, _) in LOADERS.items()}.get(elem.tag)
    except (ET.ParseError, OSError):
        pass
    low = path.lower()
    return next((kind for kind, (_, _, ext, _) in LOADERS.items() if low.endswith(ext)), None)


def load_model_file(path: str, *, floating_base: bool = False, mimic: str = "error"):
    """The model in the file at ``path``, by its ``file_kind``; floating_base, mimic: for a URDF.
    A file of no known kind: ValueError."""
    kind = file_kind(path)
    if kind is None:
        known = " nor ".join(row[3] for row in LOADERS.values())
        raise ValueError(f"model spec {path!r}: not {known} file")
    return LOADERS[kind][0](path, floating_base, mimic)


__all__ = [
    "LOADERS",
    "file_kind",
    "load_model_file",
    "load_urdf",
    "to_mjcf",
    "load_mjcf",
    "ModelFileError",
    "IgnoredElementWarning",
    "InertiaWarning",
    "MissingMeshWarning",
    "MassWarning",
]
