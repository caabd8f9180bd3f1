"""Batched dynamics and parameter sweeps on a Dask cluster: the public module ``treedyn.distributed``, an alias of ``treedyn.tools.distributed``."""

import sys

from .tools import distributed as _module

sys.modules[__name__] = _module
