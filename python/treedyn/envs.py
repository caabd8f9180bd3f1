"""Gymnasium's MuJoCo locomotion tasks stepped by treedyn: the public module ``treedyn.envs``, an alias of ``treedyn.tools.envs``."""

import sys

from .tools import envs as _module

sys.modules[__name__] = _module
