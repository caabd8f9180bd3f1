"""Structured linear solvers: block tri-diagonal (odd-even elimination) and bi-diagonal (scan): the public module ``treedyn.linalg``, an alias of ``treedyn.algorithms.linalg``."""

import sys

from .algorithms import linalg as _module

sys.modules[__name__] = _module
