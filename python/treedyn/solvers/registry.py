"""Solver plugins found through the entry point group ``treedyn.solvers``.

Modelled on xarray's backend entry points: discovery is lazy and cached; a plugin that fails to
import gives a RuntimeWarning naming it and is skipped; when two plugins share a name the first
wins and a RuntimeWarning says so; :func:`make_solver` also takes a Solver subclass directly.
"""

from __future__ import annotations

import functools
import warnings
from importlib.metadata import entry_points

from .. import _checks
from ..util.plugins import load_group
from .base import Solver

__all__ = ["available_solvers", "make_solver", "get_solver_class", "list_solver_classes", "refresh"]

GROUP = "treedyn.solvers"


def _entry_points():
    eps = entry_points()
    if hasattr(eps, "select"):
        return list(eps.select(group=GROUP))
    return list(eps.get(GROUP, []))  # Python < 3.10


@functools.cache
def _solver_classes() -> dict[str, type[Solver]]:
    # treedyn's own entry points first, so a third-party plugin cannot shadow a built-in
    eps = sorted(_entry_points(), key=lambda ep: not ep.value.startswith("treedyn."))
    return load_group(
        eps, "solver", lambda cls: isinstance(cls, type) and issubclass(cls, Solver), "a treedyn.Solver subclass"
    )


def refresh() -> None:
    """Forget the cached plugins (after installing one in a running interpreter)."""
    _solver_classes.cache_clear()


def list_solver_classes() -> dict[str, type[Solver]]:
    return dict(_solver_classes())


def available_solvers() -> dict[str, str]:
    """{name: description} of every solver plugin that loads, built-ins included."""
    return {
        name: (cls.description or (cls.__doc__ or "").strip().split("\n")[0]) for name, cls in _solver_classes().items()
    }


def get_solver_class(name: str) -> type[Solver]:
    """The Solver subclass registered as ``name`` (e.g. to ask ``.supports(model)`` before making one)."""
    classes = _solver_classes()
    if name not in classes:
        raise ValueError(f"unknown solver {name!r}; available solvers: {', '.join(sorted(classes))}")
    return classes[name]


def make_solver(solver: str | type[Solver], model, *, internal: bool = False, **options) -> Solver:
    """A solver instance for ``model``: ``solver`` is a registered name or a Solver subclass.

    Options (e.g. ``dtype=np.float32``) go to the solver's constructor. ``device=`` ("cpu", "gpu"
    or a jax.Device) or ``backend="jax"`` picks treedyn's XLA backend instead of the C++ solvers:
    the same algorithm written in JAX, on that device (treedyn.xla; ``pip install 'treedyn[gpu]'``).
    A model with constraints (loop closures, couplings) given to a solver that does not keep them warns
    (UnenforcedConstraintWarning) unless ``internal`` (treedyn's own simulators, which keep them).
    """
    backend = options.pop("backend", None)
    if backend is not None or "device" in options:
        return _xla_solver(solver, model, backend, **options)
    if isinstance(solver, type):
        if not issubclass(solver, Solver):
            raise TypeError(f"{solver.__name__} is not a treedyn.Solver subclass")
        cls = solver
    elif isinstance(solver, str):
        cls = get_solver_class(solver)
    else:
        raise TypeError(f"solver must be a name or a Solver subclass, got {solver!r}")
    from ..model import Model

    _checks.instance(model, Model, "model")
    if model.n_constraint_rows and not getattr(cls, "keeps_constraints", False) and not internal:
        from ..model.constraint_checks import UnenforcedConstraintWarning

        warnings.warn(
            f"make_solver({cls.name!r}): the model's {model.n_constraint_rows} constraint row(s) (loop closures, "
            "couplings: URDF mimic joints, MJCF equalities) are not kept by this solver's forward_dynamics, which "
            "is the tree's alone; td.constrained_forward_dynamics(solver, ...), td.simulate, td.ContactSimulator "
            "and the redmax-* solvers keep them",
            UnenforcedConstraintWarning,
            stacklevel=2,
        )
    return cls(model, **options)


def _xla_solver(solver, model, backend, **options):
    """make_solver's route to treedyn.xla's solvers."""
    if backend not in (None, "jax"):
        raise ValueError(f"unknown backend {backend!r}: treedyn's backends are the C++ solvers (no backend) and 'jax'")
    try:
        from ..xla import SOLVERS
    except ImportError as e:
        raise ImportError(
            f"treedyn's XLA backend (device=, backend='jax') needs JAX ({e}): pip install 'treedyn[gpu]'"
        ) from None
    from ..xla.solvers import XlaSolver

    if isinstance(solver, type) and issubclass(solver, XlaSolver):
        cls = solver
    elif not isinstance(solver, str):
        raise TypeError(
            f"with device= or backend='jax', solver must be one of the names {sorted(SOLVERS)}, got {solver!r}"
        )
    elif solver not in SOLVERS:
        raise ValueError(f"no solver named {solver!r} on the XLA backend; it has {', '.join(sorted(SOLVERS))}")
    else:
        cls = SOLVERS[solver]
    from ..model import Model

    _checks.instance(model, Model, "model")
    return cls(model, **options)
