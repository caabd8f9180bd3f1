"""Plugins from an entry point group: the dynamics solvers' (``treedyn.solvers``) and the contact
solvers' (``treedyn.contact_solvers``). Modelled on xarray's backend entry points: a plugin that fails
to import, is not what its group takes, or takes a name already used is skipped with a RuntimeWarning
that names it (the first of two with one name is kept), and never breaks treedyn."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable


def load_group(eps: Iterable, what: str, accept: Callable[[object], bool], kind: str, taken=()) -> dict:
    """{name: loaded object} of the entry points ``eps`` (in the order given) that load and that
    ``accept`` takes; ``what`` names the group in the warnings ("solver", "contact solver"), ``kind``
    what ``accept`` asks for ("a treedyn.Solver subclass"), ``taken`` the names already in use (the
    built-ins, which a plugin cannot shadow)."""
    found: dict = {}
    origin: dict = dict.fromkeys(taken, "built in")
    for ep in eps:
        if ep.name in origin:
            warnings.warn(
                f"treedyn: two {what} plugins are named {ep.name!r} ({origin[ep.name]} and {ep.value}); using the first",
                RuntimeWarning,
                stacklevel=4,
            )
            continue
        try:
            obj = ep.load()
        except Exception as e:  # a broken plugin must never break treedyn
            warnings.warn(
                f"treedyn: {what} plugin {ep.name!r} ({ep.value}) failed to load and is skipped: {type(e).__name__}: {e}",
                RuntimeWarning,
                stacklevel=4,
            )
            continue
        if not accept(obj):
            warnings.warn(
                f"treedyn: {what} plugin {ep.name!r} ({ep.value}) is not {kind} and is skipped",
                RuntimeWarning,
                stacklevel=4,
            )
            continue
        found[ep.name], origin[ep.name] = obj, ep.value
    return found
