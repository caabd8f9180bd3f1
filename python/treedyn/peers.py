"""Pinocchio and MuJoCo as oracles and baselines: treedyn models converted to theirs: the public module ``treedyn.peers``, an alias of ``treedyn.tools.peers``."""

import sys

from .tools import peers as _module

sys.modules[__name__] = _module
