"""Loop closures and couplings: constrained forward dynamics and projections: the public module ``treedyn.constraints``, an alias of ``treedyn.sim.constraints``."""

import sys

from .sim import constraints as _module

sys.modules[__name__] = _module
