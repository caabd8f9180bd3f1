"""The 3D browser viewer (viser): the public module ``treedyn.viewer``, an alias of
``treedyn.tools.viewer`` (``td.view`` opens one)."""

import sys

from .tools import viewer as _module

sys.modules[__name__] = _module
