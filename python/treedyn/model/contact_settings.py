"""A model's contact filters and overrides (MuJoCo's <contact> section and its contact flag): body
pairs excluded, explicit geom pairs with their own parameters, contact switched off, and the
collision shapes a loader dropped. Model inherits these; treedyn.sim.collision.collision_pairs
reads them (docs/contact.md)."""

from __future__ import annotations

import dataclasses

import numpy as np

from .. import _checks as C
from .cache import changes_model
from .shapes import CONDIM, DEFAULT_SOLIMP, DEFAULT_SOLREF, ContactPair, friction_triple


def checked_solref(solref, what: str) -> tuple:
    """solref as 2 floats, both > 0 (time constant, damping ratio) or both ≤ 0 (−stiffness, −damping)."""
    x = C.array(solref, what, (2,))
    if not (np.all(x > 0) or np.all(x <= 0)):
        raise ValueError(f"{what} must be (timeconst > 0, dampratio > 0) or (-stiffness, -damping), got {x.tolist()}")
    return tuple(x.tolist())


def checked_solimp(solimp, what: str) -> tuple:
    """solimp as 5 floats: 0 <= d0, dmax, midpoint <= 1, width >= 0, power > 0 (kept as given; the step
    bounds them as MuJoCo does: d0, dmax, midpoint to [1e-4, 0.9999], power to >= 1)."""
    x = C.array(solimp, what, (5,))
    if not (0 <= x[0] <= 1 and 0 <= x[1] <= 1 and x[2] >= 0 and 0 <= x[3] <= 1 and x[4] > 0):
        raise ValueError(
            f"{what} must be (d0, dmax, width, midpoint, power) with 0 <= d0, dmax, midpoint <= 1, width >= 0 "
            f"and power > 0, got {x.tolist()}"
        )
    return tuple(x.tolist())


def checked_softness(key: str, x):
    """A geom's solref, solimp or solmix, checked."""
    if key == "solmix":
        return C.real(x, "geom solmix", nonnegative=True)
    return (checked_solref if key == "solref" else checked_solimp)(x, f"geom {key}")


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
    def add_contact_pair(self, geom1, geom2, friction=None, margin=None, condim=None, solref=None, solimp=None) -> None:
        """Make geoms ``geom1`` and ``geom2`` (names or indices) a candidate pair whatever their masks,
        bodies or exclusions (MJCF's <contact><pair>), with its own ``friction`` (a coefficient, or sliding,
        torsional, rolling), ``margin``, ``condim``, ``solref`` and ``solimp`` (None: friction, margin,
        condim from the geoms, as for any pair; solref and solimp MuJoCo's defaults, as a <pair> takes them)."""
        a, b = self._geom_ref(geom1, "add_contact_pair", "geom1"), self._geom_ref(geom2, "add_contact_pair", "geom2")
        if a == b:
            raise ValueError(f"add_contact_pair: geom1 and geom2 are the same geom ({self._geoms[a].name!r})")
        spin = roll = None
        if friction is not None:  # (one coefficient, or MuJoCo's sliding, torsional, rolling)
            friction, spin, roll = friction_triple(friction, "contact pair friction", (None, None))
        if margin is not None:
            margin = C.real(margin, "contact pair margin", nonnegative=True)
        if condim is not None and (condim not in CONDIM or isinstance(condim, bool)):
            raise ValueError(f"contact pair condim must be one of {CONDIM}, got {condim!r}")
        solref = None if solref is None else checked_solref(solref, "contact pair solref")
        solimp = None if solimp is None else checked_solimp(solimp, "contact pair solimp")
        pair = ContactPair(a, b, friction, margin, None if condim is None else int(condim), solref, solimp, spin, roll)
        self.__dict__.setdefault("_contact_pairs", []).append(pair)

    def _geom_ref(self, g, method: str, what: str = "geom") -> int:
        """A geom's index from its name or index; ValueError naming ``method`` otherwise."""
        index, n = self._geom_index(), len(self._geoms)  # (a dict: O(1) per pair, not a list per call)
        if isinstance(g, str):
            if g not in index:
                raise ValueError(f"{method}: no geom named {g!r}")
            return index[g]
        if isinstance(g, bool) or not isinstance(g, (int, np.integer)) or not 0 <= g < n:
            raise ValueError(f"{method}: {what} must be a geom name or index below {n}, got {g!r}")
        return int(g)

    @changes_model
    def set_geom_softness(self, geom, solref=None, solimp=None, solmix=None) -> None:
        """A geom's MuJoCo soft-contact parameters, used by ``ContactSimulator(soft=True)``
        (docs/contact.md, "Soft constraints"); None leaves one as it is. ``solref``: (time
        constant > 0, damping ratio > 0) or (−stiffness, −damping); ``solimp``: (d0, dmax, width,
        midpoint, power), the impedance rising from d0 at the surface to dmax at ``width`` deep
        (in [0, 1], but width ≥ 0 and power > 0; the step bounds them as MuJoCo does); ``solmix``: the geom's weight when a
        pair mixes its two geoms' parameters (MuJoCo's rule; ≥ 0)."""
        k = self._geom_ref(geom, "set_geom_softness")
        change = {"solref": solref, "solimp": solimp, "solmix": solmix}
        change = {key: checked_softness(key, x) for key, x in change.items() if x is not None}
        self._geoms[k] = dataclasses.replace(self._geoms[k], **change)

    @changes_model
    def set_limit_softness(self, joint: str, solref=None, solimp=None) -> None:
        """A joint's limits' MuJoCo soft-constraint parameters (MJCF's solreflimit, solimplimit),
        used by ``ContactSimulator(soft=True)``; as set_geom_softness's. ``joint``: its name."""
        if joint not in self.joint_names:
            raise ValueError(f"set_limit_softness: no joint named {joint!r}")
        ref, imp = self.limit_softness(joint)
        ref = ref if solref is None else checked_solref(solref, "limit solref")
        imp = imp if solimp is None else checked_solimp(solimp, "limit solimp")
        self.__dict__.setdefault("_limit_softness", {})[joint] = (ref, imp)

    def limit_softness(self, joint: str) -> tuple:
        """(solref, solimp) of a joint's limits (set_limit_softness; MuJoCo's defaults if never set)."""
        return self.__dict__.get("_limit_softness", {}).get(joint, (DEFAULT_SOLREF, DEFAULT_SOLIMP))

    def set_row_softness(self, kind: str, name: str, solref=None, solimp=None) -> None:
        """MuJoCo's soft-constraint parameters of a joint's dry friction (kind "joint friction": MJCF's joint
        solreffriction/solimpfriction) or a fixed tendon's (kind "tendon friction") or a tendon's limits
        ("tendon limit": solreflimit/solimplimit), used by ``ContactSimulator(soft=True)``; MuJoCo's
        defaults where never set or None. ``name``: the joint's or the tendon's."""
        names = {"joint friction": self.joint_names, "tendon friction": self.tendon_names}
        names["tendon limit"] = names["tendon friction"]
        if kind not in names:
            raise ValueError(f"set_row_softness: kind must be one of {list(names)}, got {kind!r}")
        if name not in names[kind]:
            raise ValueError(f"set_row_softness: no {kind.split()[0]} named {name!r}")
        ref, imp = self.row_softness(kind, name)
        ref = ref if solref is None else checked_solref(solref, f"{kind} solref")
        imp = imp if solimp is None else checked_solimp(solimp, f"{kind} solimp")
        self.__dict__.setdefault("_row_softness", {})[(kind, name)] = (ref, imp)
        self._changed()

    def row_softness(self, kind: str, name: str) -> tuple:
        """(solref, solimp) of a dry friction's or a tendon limit's rows (set_row_softness; MuJoCo's defaults)."""
        return self.__dict__.get("_row_softness", {}).get((kind, name), (DEFAULT_SOLREF, DEFAULT_SOLIMP))

    def set_constraint_softness(self, kind: str, index: int, solref=None, solimp=None) -> None:
        """Make a loop closure (kind "loop": add_loop_closure's index) or a coupling ("coupling":
        add_coupling's) one of MuJoCo's soft equalities under ``ContactSimulator(soft=True)``, with these
        solref/solimp (MuJoCo's defaults where None; MJCF's <equality> sets its own). A constraint never
        set stays hard (its rows kept exactly, Baumgarte's push back), whatever the simulator."""
        n = {"loop": len(self._loops), "coupling": len(self._couplings)}.get(kind)
        if n is None:
            raise ValueError(f'set_constraint_softness: kind must be "loop" or "coupling", got {kind!r}')
        index = C.integer(index, "index", minimum=0, maximum=max(n - 1, 0))
        if index >= n:
            raise ValueError(f"set_constraint_softness: the model has no {kind} {index}")
        ref = DEFAULT_SOLREF if solref is None else checked_solref(solref, "equality solref")
        imp = DEFAULT_SOLIMP if solimp is None else checked_solimp(solimp, "equality solimp")
        self.__dict__.setdefault("_constraint_softness", {})[(kind, index)] = (ref, imp)
        self._changed()

    def constraint_softness(self, kind: str, index: int):
        """(solref, solimp) of a soft loop closure or coupling (set_constraint_softness), None if hard."""
        return self.__dict__.get("_constraint_softness", {}).get((kind, index))

    @property
    def fluid(self) -> tuple:
        """(density, viscosity, wind (3,)) of the fluid the bodies move in (MJCF's <option density viscosity
        wind>; MuJoCo's inertia-box model, in the C++ contact step: docs/contact.md); (0, 0, (0, 0, 0)): none."""
        return self.__dict__.get("_fluid", (0.0, 0.0, (0.0, 0.0, 0.0)))

    @fluid.setter
    def fluid(self, value) -> None:
        try:
            rho, eta, wind = value
            rho, eta = C.real(rho, "fluid density", nonnegative=True), C.real(eta, "fluid viscosity", nonnegative=True)
            wind = tuple(float(x) for x in C.vector(wind, "fluid wind", 3))
        except (TypeError, ValueError) as e:
            raise ValueError(f"model.fluid must be (density >= 0, viscosity >= 0, wind (3,)): {e}") from None
        self.__dict__["_fluid"] = (rho, eta, wind)
        self._changed()

    @property
    def soft_constraints(self) -> bool:
        """Whether ``td.ContactSimulator`` steps this model's contacts and joint limits as MuJoCo's
        soft constraints by default (its ``soft=None``): True for a model read from MJCF, whose
        solref/solimp it carries; False otherwise (hard contacts). Settable."""
        return self.__dict__.get("_soft_constraints", False)

    @soft_constraints.setter
    def soft_constraints(self, value) -> None:
        self.__dict__["_soft_constraints"] = C.boolean(value, "soft_constraints")
        self._changed()

    def _option(self, key: str, value, choices: tuple) -> None:
        """Set one of the file's options (``key`` among ``choices``, or None), ValueError naming it."""
        if value is not None and value not in choices:
            raise ValueError(f"{key} must be None or one of {choices}, got {value!r}")
        self.__dict__["_" + key] = value
        self._changed()

    @property
    def integrator(self) -> str | None:
        """The file's integrator, ContactSimulator's default: "rk4" (MJCF <option integrator="RK4">, with soft
        constraints), "implicitfast", "implicit", "semi-implicit" (Euler), or None."""
        return self.__dict__.get("_integrator")

    @integrator.setter
    def integrator(self, value) -> None:
        self._option("integrator", value, ("rk4", "semi-implicit", "implicitfast", "implicit"))

    @property
    def friction_cone(self) -> str | None:
        """The file's friction cone (MJCF <option cone>): "pyramidal", "elliptic" or None; with soft
        constraints ContactSimulator's default friction_edges is 4 or 0 by it."""
        return self.__dict__.get("_friction_cone")

    @friction_cone.setter
    def friction_cone(self, value) -> None:
        self._option("friction_cone", value, ("pyramidal", "elliptic"))

    @property
    def impratio(self) -> float:
        """MuJoCo's impratio (MJCF <option impratio>): a soft contact's friction rows are regularised
        by its normal's R / impratio (ContactSimulator(soft=True)). Default 1."""
        return self.__dict__.get("_impratio", 1.0)

    @impratio.setter
    def impratio(self, value) -> None:
        self.__dict__["_impratio"] = C.real(value, "impratio", positive=True)
        self._changed()

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
