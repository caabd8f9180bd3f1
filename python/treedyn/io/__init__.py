"""Loading models from files: URDF (ROS, example-robot-data) and MJCF (MuJoCo).

``load_urdf`` / ``load_mjcf`` are also ``treedyn.Model.from_urdf`` / ``Model.from_mjcf``. Both take
a path or the XML text itself (a string starting with '<'). A file that cannot be loaded raises
``ModelFileError`` (a ValueError) naming the file, the line and the problem; elements that are read
past are reported in one ``IgnoredElementWarning`` per file; physically inconsistent inertias (kept,
as Pinocchio keeps them) in an ``InertiaWarning``; joints that move no mass in a ``MassWarning``.
"""

from ..model.tree import _FILE_READERS
from ._common import IgnoredElementWarning, InertiaWarning
from ._tree import MassWarning
from ._xml import ModelFileError
from .mjcf import load_mjcf
from .mjcf_writer import to_mjcf
from .urdf import MissingMeshWarning, load_urdf

_FILE_READERS.update(urdf=load_urdf, mjcf=load_mjcf, to_mjcf=to_mjcf)  # Model.from_urdf / from_mjcf / to_mjcf

__all__ = [
    "load_urdf",
    "to_mjcf",
    "load_mjcf",
    "ModelFileError",
    "IgnoredElementWarning",
    "InertiaWarning",
    "MissingMeshWarning",
    "MassWarning",
]
