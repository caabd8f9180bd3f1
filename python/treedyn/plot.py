"""Pictures of models and trajectories (matplotlib): the public module ``treedyn.plot``, an alias of
``treedyn.tools.plot``."""

import sys

from .tools import plot as _module

sys.modules[__name__] = _module
