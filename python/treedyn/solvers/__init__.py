from .base import Solver
from .registry import available_solvers, get_solver_class, make_solver

__all__ = ["Solver", "available_solvers", "get_solver_class", "make_solver"]
