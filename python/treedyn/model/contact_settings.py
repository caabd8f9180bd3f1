"""A model's contact filters and overrides (MuJoCo's <contact> section and its contact flag): body
pairs excluded, explicit geom pairs with their own parameters, contact switched off, and the
collision shapes a loader dropped. Model inherits these; treedyn.sim.collision.collision_pairs
reads them (docs/contact.md)."""

from __future__ import annotations

import numpy as np

from .. import _checks as C
from .cache import changes_model
from .shapes import CONDIM, ContactPair

__all__ = ["ContactSettings"]


class ContactSettings:
    """The contact part of treedyn.Model (a mixin: its state lives in the model's __dict__, so that
    copies and pickles keep it; the model's ``_body_ref``, ``_geom_index``, ``_geoms``, ``body_names`` and
    ``_changed`` are used)."""

    @changes_model
    def exclude_contact(self, body1, body2) -> None:
        """No contact between the geoms of these two bodies (names or indices; MJCF's <contact>
        <exclude>); a pair added by add_contact_pair still collides."""
        a, b = self._body_ref(body1, "exclude_contact"), self._body_ref(body2, "exclude_contact")
        if a == b:
            raise ValueError(f"exclude_contact: body1 and body2 are the same body ({self.body_names[a]!r})")
        self.__dict__.setdefault("_contact_excludes", set()).add((min(a, b), max(a, b)))

    @property
    def contact_excludes(self) -> tuple:
        """The excluded body pairs (i, j), i < j (exclude_contact), sorted."""
        return tuple(sorted(self.__dict__.get("_contact_excludes", ())))

    @changes_model
    def add_contact_pair(self, geom1, geom2, friction=None, margin=None, condim=None) -> None:
        """Make geoms ``geom1`` and ``geom2`` (names or indices) a candidate pair whatever their masks,
        bodies or exclusions (MJCF's <contact><pair>), with its own ``friction``, ``margin`` and
        ``condim`` (None: from the geoms, as for any pair)."""
        index, n = self._geom_index(), len(self._geoms)  # (a dict: O(1) per pair, not a list per call)

        def ref(g, what):
            if isinstance(g, str):
                if g not in index:
                    raise ValueError(f"add_contact_pair: no geom named {g!r}")
                return index[g]
            if isinstance(g, bool) or not isinstance(g, (int, np.integer)) or not 0 <= g < n:
                raise ValueError(f"add_contact_pair: {what} must be a geom name or index below {n}, got {g!r}")
            return int(g)

        a, b = ref(geom1, "geom1"), ref(geom2, "geom2")
        if a == b:
            raise ValueError(f"add_contact_pair: geom1 and geom2 are the same geom ({self._geoms[a].name!r})")
        if friction is not None:
            friction = C.real(friction, "contact pair friction", nonnegative=True)
        if margin is not None:
            margin = C.real(margin, "contact pair margin", nonnegative=True)
        if condim is not None and (condim not in CONDIM or isinstance(condim, bool)):
            raise ValueError(f"contact pair condim must be one of {CONDIM}, got {condim!r}")
        pair = ContactPair(a, b, friction, margin, None if condim is None else int(condim))
        self.__dict__.setdefault("_contact_pairs", []).append(pair)

    @property
    def contact_pairs(self) -> tuple:
        """The explicit pairs (treedyn.model.shapes.ContactPair), in the order added."""
        return tuple(self.__dict__.get("_contact_pairs", ()))

    @property
    def contact_enabled(self) -> bool:
        """False: no contacts at all (MJCF's <option><flag contact="disable"/>); set it to switch."""
        return self.__dict__.get("_contact_enabled", True)

    @contact_enabled.setter
    def contact_enabled(self, value: bool) -> None:
        self.__dict__["_contact_enabled"] = C.boolean(value, "contact_enabled")
        self._changed()

    @property
    def dropped_geoms(self) -> tuple:
        """The file's collision shapes a loader could not make geoms of, each as a sentence naming
        the shape and why (td.ContactSimulator warns about them)."""
        return tuple(self.__dict__.get("_dropped_geoms", ()))

    def _drop_geom(self, why: str) -> None:
        """Record a collision shape a loader dropped (dropped_geoms)."""
        self.__dict__.setdefault("_dropped_geoms", []).append(why)
