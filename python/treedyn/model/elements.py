"""The model's force elements and constraints — joint spring–dampers, body damping, point springs,
point and moving forces (the RedMax terms of baxter2019 eq. (2.13)), loop closures and couplings —
as value types and as the Model methods that add them (``ElementsMixin``, one of Model's bases:
the methods live on the Model, the code by its subject), and the joints' armature. Actuators and
tendons: model/actuation.py."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Union

import numpy as np

from .. import _checks
from .cache import changes_model
from .constraint_checks import check_added, check_anchor, check_coefficients, check_not_self, model_extent
from .joints import _LOOP_LAYOUTS, Fixed, Free, Joint, Prismatic, Revolute, Spherical, Universal
from .spatial import Transform, _frozen, _vec3


class UnknownNameError(KeyError, ValueError):
    """A body or joint name the model does not have. A ``KeyError`` (a lookup by name) and a
    ``ValueError`` (a bad argument), so either ``except`` catches it."""

    def __str__(self):  # KeyError would print the message in quotes
        return str(self.args[0]) if self.args else ""


#: how a body is named: None or "world" (the world), a body name, or an index add_body returned
ParentRef = Union[None, str, int]  # noqa: UP007 (a runtime alias: X | None needs Python 3.10 objects)


def _nonneg(x, n: int, what: str) -> np.ndarray:
    a = np.array(x, dtype=float).reshape(-1)
    if a.size == 1:
        a = np.full(n, a[0])
    if a.shape != (n,):
        raise ValueError(f"{what} must be a scalar or {n} values, got shape {np.shape(x)}")
    if not np.all(np.isfinite(a)) or np.any(a < 0):
        raise ValueError(f"{what} must be finite and >= 0, got {x}")
    return a


def _read_only(x) -> np.ndarray:
    a = np.array(x, dtype=float)
    a.flags.writeable = False
    return a


def _field_values(x) -> tuple:
    """A dataclass's field values, not copied (dataclasses.astuple copies them deeply)."""
    return tuple(getattr(x, f.name) for f in fields(x))


def _unpickle_frozen(cls, values):
    """A frozen dataclass of the model (Spring, LoopClosure) with its arrays read-only again."""
    return cls(*(_frozen(v) if isinstance(v, np.ndarray) else v for v in values))


@dataclass(frozen=True)
class Spring:
    """A point-to-point spring–damper (see Model.add_spring)."""

    body_a: int
    point_a: np.ndarray
    body_b: int
    point_b: np.ndarray
    stiffness: float
    damping: float
    rest_length: float

    def __reduce__(self):
        return _unpickle_frozen, (type(self), _field_values(self))


_LOOP_ROWS = {l["kind"]: l["rows"] for l in _LOOP_LAYOUTS.values()}


@dataclass(frozen=True)
class LoopClosure:
    """A loop-closing joint (see Model.add_loop_closure)."""

    body_a: int
    placement_a: Transform
    body_b: int
    placement_b: Transform
    joint: Joint
    kind: int
    axis: np.ndarray
    axis2: np.ndarray
    active: bool = True

    @property
    def n_rows(self) -> int:
        return _LOOP_ROWS[self.kind]

    def __reduce__(self):
        return _unpickle_frozen, (type(self), _field_values(self))


@dataclass(frozen=True)
class Coupling:
    """A coupling of joint coordinates (see Model.add_coupling): L_f(q) − y0 = p(L_l(q) − x0) with
    p(x) = Σ_k polycoef[k] x^k and L(q) = Σ coef·q over (joint index, coef) pairs."""

    follower: tuple
    leader: tuple
    polycoef: tuple
    y0: float
    x0: float
    active: bool = True

    n_rows = 1


class ElementsMixin:
    """Model's methods for its force elements and constraints."""

    # The joints' passive terms (armature, spring–dampers) are model data of every solver (as
    # MuJoCo's); the other terms of the RedMax step (baxter2019 eq. (2.13)) are the redmax-*
    # solvers' only: the rigid-body solvers (aba, ...) compute the dynamics of the tree without them.

    def _moving_joint(self, joint: str | int, what: str) -> int:
        """The body index of a moving joint given by its name or its body's index."""
        if isinstance(joint, str):
            if joint not in self._joint_index:
                why = "the world has no joint" if joint == "world" else f"no moving joint is named {joint!r}"
                raise UnknownNameError(f"{what}: {why}; joints are {self.joint_names}")
            i = self._joint_index[joint]
        else:
            i = self._body_ref(joint, what)
        if i == 0:
            raise ValueError(f"{what}: body 0 is the world, which has no joint")
        if self._joints[i].nv == 0:
            raise ValueError(
                f"{what}: joint {self._joint_names[i]!r} is fixed (no coordinates; body {self.body_names[i]!r})"
            )
        return i

    @changes_model
    def set_joint_spring(self, joint: str | int, stiffness=0.0, damping=0.0, rest=None) -> None:
        """A spring–damper on a moving joint: the passive generalized force
        τ_p = −stiffness (q ⊖ rest) − damping q̇, per velocity coordinate (MuJoCo's joint stiffness,
        springref and damping; K_r, D_r and f_r of baxter2019 eq. (2.13)).

        Every solver uses it: the rigid-body solvers' forward dynamics add τ_p to τ (and td.rnea
        subtracts it: inverse dynamics is M q̈ + c − τ_p), the redmax-* solvers take it implicitly
        in their step, and the C++ contact step (ContactSimulator) takes the damping implicitly
        (M + h·diag(damping), as MuJoCo's Euler integrator).

        joint: its name or its body's index. stiffness, damping: a scalar or one value per
        velocity coordinate of the joint, >= 0. rest: the joint's rest coordinates (nq of the
        joint; default zero, or the identity quaternion). A spherical joint's spring acts on the
        rotation vector of rest⁻¹ q; a free joint takes damping only.
        """
        i = self._moving_joint(joint, "joint spring")
        jt = self._joints[i]
        k = _nonneg(stiffness, jt.nv, "joint spring stiffness")
        d = _nonneg(damping, jt.nv, "joint spring damping")
        if isinstance(jt, Free) and np.any(k):
            raise ValueError("joint spring: a free joint takes damping only (no stiffness)")
        if rest is None:
            rest = np.zeros(jt.nq)
            if isinstance(jt, Spherical):
                rest[3] = 1.0
            elif isinstance(jt, Free):
                rest[6] = 1.0
        rest = np.array(rest, dtype=float).reshape(-1)
        if rest.shape != (jt.nq,) or not np.all(np.isfinite(rest)):
            raise ValueError(f"joint spring: rest must be {jt.nq} finite joint coordinates, got {rest}")
        self._joint_springs[i] = (k, d, rest)
        self._push_passive()

    @changes_model
    def set_joint_armature(self, joint: str | int, armature) -> None:
        """The rotor inertia of a moving joint (MuJoCo's armature): added to the diagonal of the
        joint-space inertia matrix, M ← M + diag(armature), in every solver (M, M⁻¹, forward and
        inverse dynamics, their derivatives, the contact step).

        joint: its name or its body's index. armature: a scalar or one value per velocity
        coordinate of the joint, finite and >= 0.
        """
        i = self._moving_joint(joint, "joint armature")
        self._joint_armature[i] = _nonneg(armature, self._joints[i].nv, "joint armature")
        self._push_passive()

    @property
    def armature(self) -> np.ndarray:
        """The rotor inertia per velocity coordinate (nv,), read-only (set_joint_armature)."""
        return _read_only(self._cpp.armature)

    @property
    def joint_stiffness(self) -> np.ndarray:
        """The joint springs' stiffness per velocity coordinate (nv,), read-only (set_joint_spring)."""
        return _read_only(self._cpp.stiffness)

    @property
    def joint_damping(self) -> np.ndarray:
        """The joint dampers' coefficient per velocity coordinate (nv,), read-only (set_joint_spring)."""
        return _read_only(self._cpp.damping)

    @changes_model
    def set_body_damping(self, body: ParentRef, damping) -> None:
        """Viscous damping of a body's twist (D_m of eq. (2.13), body coordinates, [ω; v]):
        a scalar d (d·1₆), 6 diagonal values, or a symmetric positive semi-definite 6x6 matrix."""
        i = self._body_ref(body, "body damping")
        if i == 0:
            raise ValueError(f"body damping: body {body!r} is the world, which does not move")
        D = np.array(damping, dtype=float)
        if D.ndim == 0 or D.shape == (6,):
            D = np.eye(6) * D
        if D.shape != (6, 6) or not np.all(np.isfinite(D)):
            raise ValueError(f"body damping must be a scalar, 6 values or a 6x6 matrix, got shape {D.shape}")
        if not np.allclose(D, D.T) or np.linalg.eigvalsh(0.5 * (D + D.T)).min() < -1e-12 * max(1.0, np.abs(D).max()):
            raise ValueError("body damping must be symmetric positive semi-definite")
        self._body_damping[i] = 0.5 * (D + D.T)

    @changes_model
    def add_spring(
        self,
        body_a: ParentRef,
        point_a,
        body_b: ParentRef,
        point_b,
        stiffness: float,
        damping: float = 0.0,
        rest_length: float | None = None,
        q=None,
    ) -> int:
        """A spring–damper between a point of body a and a point of body b (body coordinates):
        force stiffness·(l − rest_length) + damping·l̇ along the line between them (stiffness in
        force per length; the RedMax scenes' k per unit strain is k/L). rest_length: default the
        distance at configuration q (default the neutral one). Returns the spring's index.
        Its stiffness couples the two bodies (K_m off the block diagonal, eq. (2.39)–(2.41)).
        """
        a, b = self._body_ref(body_a, "spring body_a"), self._body_ref(body_b, "spring body_b")
        if a == b:
            raise ValueError(f"spring: body_a and body_b are the same body ({self.body_names[a]!r})")
        xa, xb = _frozen(_vec3(point_a, "spring point_a")), _frozen(_vec3(point_b, "spring point_b"))
        k = float(_nonneg(stiffness, 1, "spring stiffness")[0])
        d = float(_nonneg(damping, 1, "spring damping")[0])
        if rest_length is None:
            R, p = self.body_poses(q)
            rest_length = float(np.linalg.norm((R[b] @ xb + p[b]) - (R[a] @ xa + p[a])))
        L = float(_nonneg(rest_length, 1, "spring rest_length")[0])
        self._springs.append(Spring(a, xa, b, xb, k, d, L))
        return len(self._springs) - 1

    @changes_model
    def add_point_force(self, body: ParentRef, point, force) -> None:
        """A constant force (world coordinates) applied at a point of a body (body coordinates)."""
        i = self._body_ref(body, "point force")
        if i == 0:
            raise ValueError(f"point force: body {body!r} is the world, which does not move")
        self._point_forces.append((i, _vec3(point, "point force point"), _vec3(force, "point force")))

    @changes_model
    def add_moving_force(self, force, path, duration: float) -> None:
        """A constant force (world coordinates) whose point of application moves at constant
        speed along ``path`` — a list of (body, start, end) segments in body coordinates — from
        t = 0 to t = duration; then it has left the path and stops acting (a car crossing a deck).
        """
        f = _vec3(force, "moving force")
        if not path:
            raise ValueError("moving force: the path needs at least one (body, start, end) segment")
        segs = []
        for k, seg in enumerate(path):
            if len(seg) != 3:
                raise ValueError(f"moving force: path segment {k} must be (body, start, end), got {seg!r}")
            segs.append(
                (
                    self._body_ref(seg[0], f"moving force segment {k}"),
                    _vec3(seg[1], f"moving force segment {k} start"),
                    _vec3(seg[2], f"moving force segment {k} end"),
                )
            )
        T = float(duration)
        if not (np.isfinite(T) and T > 0):
            raise ValueError(f"moving force: duration must be positive, got {duration!r}")
        self._moving_forces.append((f, segs, T))

    @changes_model
    def add_loop_closure(
        self,
        body_a: ParentRef,
        body_b: ParentRef,
        joint: Joint,
        placement_a: Transform | None = None,
        placement_b: Transform | None = None,
        q=None,
        active: bool = True,
    ) -> int:
        """Close a loop: a joint between a frame on body a and a frame on body b, kept by the
        constraint C(q) = 0. The constraint rows follow from the joint: Spherical (the frame origins
        coincide: 3 rows; MJCF's connect), Revolute(axis) (and the axis, given in the frames'
        coordinates, stays common: 5 rows), Universal(axis1, axis2) (and axis1 of frame a keeps its
        angle to axis2 of frame b: 4 rows), Fixed() (and the frames keep their orientation: 6 rows;
        MJCF's weld). placement_a / placement_b: the frame in body a / b coordinates (default
        identity / the frame that coincides with frame a at configuration q, default the model's
        reference configuration). An inactive closure is kept in the model but not enforced.
        Returns the loop's index.

        One definition, two formulations: the redmax-* solvers keep it at the velocity level in
        their implicit step (G q̇ = −βC, baxter2019 §2.2.5, β = ``model.baumgarte``, None: 1/h);
        ``td.simulate``, ``td.ContactSimulator`` and ``td.constrained_forward_dynamics`` keep it
        at the acceleration level with any solver (treedyn.constraints).
        """
        a, b = self._body_ref(body_a, "loop closure body_a"), self._body_ref(body_b, "loop closure body_b")
        if a == b:
            raise ValueError("loop closure: body_a and body_b are the same body")
        kinds = {
            Spherical: _LOOP_LAYOUTS["ball"]["kind"],
            Revolute: _LOOP_LAYOUTS["hinge"]["kind"],
            Universal: _LOOP_LAYOUTS["universal"]["kind"],
            Fixed: _LOOP_LAYOUTS["weld"]["kind"],
        }
        if type(joint) not in kinds:
            raise ValueError(
                "loop closure: the joint must be Spherical(), Revolute(axis), Universal(axis1, axis2) or Fixed(), "
                f"got {joint!r}"
            )
        pa = Transform() if placement_a is None else placement_a
        if not isinstance(pa, Transform):
            raise TypeError(f"loop closure placement_a must be a treedyn.Transform, got {type(pa).__name__}")
        q_ref = self._reference_q() if q is None else _checks.configuration(self._cpp, q)
        extent = model_extent(self, q_ref)
        check_anchor(pa, "loop closure: placement_a (the anchor on body_a)", extent)
        if placement_b is None:
            R, p = self.body_poses(q_ref)
            world_R, world_p = R[a] @ pa.rotation, R[a] @ pa.translation + p[a]
            placement_b = Transform(rotation=R[b].T @ world_R, translation=R[b].T @ (world_p - p[b]))
        if not isinstance(placement_b, Transform):
            raise TypeError(f"loop closure placement_b must be a treedyn.Transform, got {type(placement_b).__name__}")
        check_anchor(placement_b, "loop closure: placement_b (the anchor on body_b)", extent)
        a1, a2 = joint._axes()
        self._loops.append(LoopClosure(a, pa, b, placement_b, joint, kinds[type(joint)], a1, a2, bool(active)))
        try:  # a loop closure that cannot hold with the others is refused here (constraint_checks.py)
            check_added(self, "loop", len(self._loops) - 1, q_ref)
        except ValueError:
            self._loops.pop()
            raise
        return len(self._loops) - 1

    @changes_model
    def add_coupling(self, follower, leader=None, polycoef=(0.0, 1.0), reference=None, active: bool = True) -> int:
        """Couple joint coordinates: L_f(q) − y0 = p(L_l(q) − x0), p(x) = a0 + a1 x + … + a4 x⁴
        (``polycoef`` = (a0, a1, ...), at most 5), one constraint row kept like a loop closure.

        follower / leader: a joint (name or body index) of one coordinate (revolute or prismatic),
        or a dict {joint: coefficient} for a fixed linear combination Σ c·q (a MuJoCo fixed
        tendon). leader None: L_f(q) = y0 + a0. (x0, y0) = (L_l, L_f) at the configuration
        ``reference`` (default zeros: then a URDF mimic joint q_f = m·q_l + o is polycoef (o, m);
        MJCF's joint and tendon equalities pass qpos0). An inactive coupling is kept but not
        enforced. Returns the coupling's index."""

        def terms(x, what):
            items = x.items() if isinstance(x, dict) else [(x, 1.0)]
            out = []
            for j, c in items:
                i = j if isinstance(j, (int, np.integer)) and not isinstance(j, bool) else self._joint_body(j)
                if not 0 < i < self.n_bodies or type(self._joints[i]) not in (Revolute, Prismatic):
                    kind = type(self._joints[i]).__name__ if 0 <= i < self.n_bodies else "no such joint"
                    raise ValueError(f"coupling {what}: {j!r} is {kind}; couplings join revolute and prismatic joints")
                c = float(c)
                if not np.isfinite(c):
                    raise ValueError(f"coupling {what}: the coefficient of {j!r} is {c}")
                out.append((int(i), c))
            return tuple(out)

        f = terms(follower, "follower")
        if not f:
            raise ValueError("coupling: the follower has no joint")
        lead = () if leader is None else terms(leader, "leader")
        try:
            a = np.array(polycoef, dtype=float).reshape(-1)
        except (TypeError, ValueError):
            a = np.array([np.nan])
        if not 1 <= a.size <= 5 or not np.all(np.isfinite(a)):
            raise ValueError(f"coupling: polycoef must be 1 to 5 finite numbers (a0 .. a4), got {polycoef!r}")
        check_not_self(self, f, lead)
        check_coefficients(f, lead, a)
        y0 = x0 = 0.0
        q_ref = self._reference_q()
        if reference is not None:
            try:
                q_ref = _checks.configuration(self._cpp, reference, "reference")
            except (TypeError, ValueError) as e:
                raise ValueError(f"coupling: reference must be a configuration (nq = {self.nq},): {e}") from None
            qi = self._cpp.q_index
            y0 = sum(c * q_ref[qi[i]] for i, c in f)
            x0 = sum(c * q_ref[qi[i]] for i, c in lead)
        self._couplings.append(Coupling(f, lead, tuple(a), float(y0), float(x0), bool(active)))
        try:  # a coupling that cannot hold with the others is refused here (constraint_checks.py)
            check_added(self, "coupling", len(self._couplings) - 1, q_ref)
        except ValueError:
            self._couplings.pop()
            raise
        return len(self._couplings) - 1

    @property
    def couplings(self) -> list[Coupling]:
        return list(self._couplings)

    @property
    def n_constraint_rows(self) -> int:
        """The rows of C(q) that are enforced: the active loop closures' and couplings'."""
        return sum(c.n_rows for c in self._loops + self._couplings if c.active)

    def constraint_residual(self, q=None) -> float:
        """max |C(q)| over the active loop closures and couplings at q (default: the reference
        configuration); 0.0 without constraints."""
        q = _checks.configuration(self._cpp, self._reference_q() if q is None else q)
        if not self.n_constraint_rows:
            return 0.0
        return float(np.abs(self._constraint_system().loop_rows(q)[1]).max())

    @property
    def force_elements(self) -> list[str]:
        """The terms this model carries beyond the tree ("joint springs", "body damping", "springs",
        "point forces", "moving forces", "loop closures", "couplings"): the solvers with the
        "springs" capability (redmax-*) include them in their step; every other solver's
        forward_dynamics computes the tree with its joint springs (set_joint_spring) and armature
        alone (loop closures and couplings are kept by td.constrained_forward_dynamics,
        td.simulate and td.ContactSimulator)."""
        terms = {
            "joint springs": self._joint_springs,
            "body damping": self._body_damping,
            "springs": self._springs,
            "point forces": self._point_forces,
            "moving forces": self._moving_forces,
            "loop closures": self._loops,
            "couplings": self._couplings,
        }
        return [name for name, items in terms.items() if items]

    @property
    def springs(self) -> list[Spring]:
        return list(self._springs)

    @property
    def loop_closures(self) -> list[LoopClosure]:
        return list(self._loops)

    def loop_residual(self, q=None) -> np.ndarray:
        """C(q), the residuals of the active loop closures and then couplings at q (default: the
        reference configuration), their rows one after the other (n_rows each; zero when every
        constraint holds). Empty without constraints."""
        q = _checks.configuration(self._cpp, self._reference_q() if q is None else q)
        if not self.n_constraint_rows:
            return np.zeros(0)
        return np.asarray(self._constraint_system().loop_rows(q)[1])
