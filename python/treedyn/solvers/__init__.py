from .base import Solver
from .registry import available_solvers, make_solver

__all__ = ["Solver", "available_solvers", "make_solver"]
