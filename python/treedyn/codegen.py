"""The code generator (model-specialised ABA kernels compiled at run time): the public module ``treedyn.codegen``, an alias of ``treedyn.solvers.codegen``."""

import sys

from .solvers import codegen as _module

sys.modules[__name__] = _module
