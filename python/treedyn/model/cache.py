"""The one per-model cache of what is made from a model and worth keeping: C++ engines and solvers
(their workspaces are reused from call to call).

``cached(model, key, make)`` returns ``make(model, key)``, made once per (model, make, key) and made
again when the model has changed since: one staleness rule for every user, the model's
``_revision``, which every change of the model bumps (Model._changed).

- Kept with the model: an attribute of the model (``_cache``), so that what it holds may refer to
  the model (a solver does) and still goes when the model goes (a module-level weak dictionary of
  solvers keeps every model alive through its solver). A copy or an unpickled model starts with an
  empty cache: the attribute pickles and copies as an empty one.
- Thread-safe: a read takes no lock (the model's entries are replaced whole when the model has
  changed, never edited in a way a reader could see half done); making an object and storing it
  happen under one lock, so each (model, key, revision) gets one object, whichever threads ask.
- Fast for repeated calls on one model: a read is two look-ups in the model's ``__dict__`` (its
  entries and its ``_revision``, which every change of the model bumps) and two in the entries.
- Below the Model (tree.py uses it for its constraint system): it knows a model only as an object
  with a ``_revision``.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Hashable

from .. import _checks as C

__all__ = ["cached", "clear", "changes_model"]

_ATTR = "_cache"  # the model's attribute holding its entries
_lock = threading.RLock()  # reentrant: a make() may itself ask for a cached object
_MISSING = object()


class _Entries:
    """The objects made from one model at one revision. Pickles and copies as an empty cache (the
    objects are made again from the model itself), and every cache equals every other (a cache is
    no part of what a model is)."""

    __slots__ = ("revision", "objects")

    def __init__(self, revision=None):
        self.revision = revision
        self.objects: dict = {}

    def __reduce__(self):
        return _Entries, ()

    def __copy__(self):
        return _Entries()

    def __deepcopy__(self, memo):
        return _Entries()

    def __eq__(self, other):
        return isinstance(other, _Entries)

    __hash__ = None

    def __repr__(self):
        return f"<treedyn model cache: {len(self.objects)} objects>"


def cached(model, key: Hashable, make: Callable[[object, Hashable], object]):
    """``make(model, key)``, made once for (``model``, ``make``, ``key``) and kept with the model
    until the model changes (``revision``); then made again on the next call. ``make`` names what
    is made (each user passes its own function, so users never share objects by accident), ``key``
    tells apart what one ``make`` makes (a dtype, a method). An exception from ``make`` propagates
    and nothing is stored; an unhashable key is not stored either (``make`` may refuse it)."""
    d = getattr(model, "__dict__", None)
    if d is None or "_revision" not in d:
        raise TypeError(f"model must be a treedyn.Model, got {C._kind(model)}")
    entries = d.get(_ATTR)  # the fast path: no lock, no allocation
    if entries is not None and entries.revision == d["_revision"]:
        try:
            return entries.objects[make][key]
        except (KeyError, TypeError):
            pass
    try:
        hash(key)
    except TypeError:
        return make(model, key)
    rev = d["_revision"]
    with _lock:
        entries = model.__dict__.get(_ATTR)
        if entries is None or entries.revision != rev:
            entries = _Entries(rev)
        per_make = entries.objects.get(make, {})
        obj = per_make.get(key, _MISSING)
        if obj is _MISSING:
            obj = make(model, key)
            # new dicts, swapped in whole: a reader never sees one being edited
            entries.objects = {**entries.objects, make: {**per_make, key: obj}}
        model.__dict__[_ATTR] = entries
        return obj


def clear(model) -> None:
    """Forget every object made from ``model`` (they are made again on use)."""
    with _lock:
        model.__dict__.pop(_ATTR, None)


def changes_model(method):
    """Marks a Model method that changes the model: its revision is bumped when it returns or
    raises (a half-done change counts as a change), so what was made from the model is remade."""

    @functools.wraps(method)
    def changing(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        finally:
            self._changed()

    return changing
