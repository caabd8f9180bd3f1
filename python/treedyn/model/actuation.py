"""Tendons and actuators as model data, with MuJoCo's meaning:

* a fixed tendon is a linear combination of scalar joint coordinates, L(q) = Σ_k c_k q_k
  (MuJoCo's ``<tendon><fixed>``), with a spring–damper on its length: the generalized force
  −Jᵀ (k (L − L₀) + d L̇), J = ∂L/∂q (a dead band [L₀, L₁] when two rest lengths are given);
* an actuator turns a control u into a generalized force through a transmission (a scalar joint
  or a fixed tendon) with a gear g: its length l = g·q_j (or g·L), its velocity l̇ = g·v_j (or
  g·L̇) and its force (MuJoCo's mju_muscle-free actuator model, "gain" and "bias" of
  ``mjModel.actuator_gainprm``/``biasprm``)

      f = (a₀ + a₁ l + a₂ l̇) · w + b₀ + b₁ l + b₂ l̇,   clamped to forcerange,
      τ = g·e_j f   (or g Jᵀ f for a tendon),

  the actuators' τ summed, each hinge or slide coordinate's clamped to its joint's actuator force
  range (``set_joint_actuator_force_range``, MuJoCo's joint ``actuatorfrcrange``),

  where w is the control (clamped to ctrlrange) or, with activation dynamics, the actuator's
  activation: "integrator" ẇ = u, "filter" ẇ = (u − w)/T (stepped by explicit Euler, as MuJoCo's
  Euler integrator; the activation starts at the control's value one step late, MuJoCo's default
  ``actearly="false"``).

``<motor>`` is (a = (1, 0, 0), b = 0); ``<position kp kv>`` (a = (kp, 0, 0), b = (0, −kp, −kv));
``<velocity kv>`` (a = (kv, 0, 0), b = (0, 0, −kv)); ``<general>`` gives a and b. The arrays the
simulators use (``actuation_terms``) are made once per revision of the model (model/cache.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import _checks
from .cache import cached, changes_model
from .joints import Prismatic, Revolute

__all__ = ["Tendon", "Actuator", "ActuationMixin", "actuation_terms"]

DYNAMICS = ("none", "integrator", "filter")


@dataclass(frozen=True)
class Tendon:
    """A fixed tendon (see Model.add_tendon): L(q) = Σ coef·q over (joint name, coef) pairs."""

    name: str
    joints: tuple
    stiffness: float = 0.0
    damping: float = 0.0
    rest_length: tuple = (0.0, 0.0)  # the spring's dead band [L₀, L₁] (L₀ = L₁: a plain spring)
    range: tuple | None = None  # (lower, upper) limits of L, or None
    frictionloss: float = 0.0  # dry friction along the tendon (a force)


@dataclass(frozen=True)
class Actuator:
    """An actuator (see Model.add_actuator)."""

    name: str
    transmission: str  # "joint" or "tendon"
    target: str  # the joint's or the tendon's name
    gear: float = 1.0
    gain: tuple = (1.0, 0.0, 0.0)
    bias: tuple = (0.0, 0.0, 0.0)
    ctrlrange: tuple | None = None
    forcerange: tuple | None = None
    dynamics: str = "none"
    time_constant: float = 1.0  # T of the "filter" dynamics
    actrange: tuple | None = None


def _range(x, what: str):
    if x is None:
        return None
    lo, hi = (float(v) for v in np.asarray(x, dtype=float).reshape(2))
    if not (lo < hi) or np.isnan(lo) or np.isnan(hi):
        raise ValueError(f"{what} must be (lower, upper) with lower < upper, got {x!r}")
    return (lo, hi)


def _three(x, what: str) -> tuple:
    a = np.zeros(3)
    v = np.asarray(x, dtype=float).reshape(-1)
    if v.size > 3 or not np.all(np.isfinite(v)):
        raise ValueError(f"{what} must be at most 3 finite numbers, got {x!r}")
    a[: v.size] = v
    return tuple(float(t) for t in a)


class ActuationMixin:
    """Model's methods for its tendons and actuators."""

    @changes_model
    def add_tendon(
        self, name: str, joints, stiffness=0.0, damping=0.0, rest_length=0.0, range=None, frictionloss=0.0
    ) -> int:
        """A fixed tendon L(q) = Σ coef·q_joint over ``joints`` ({joint name: coef} or (name, coef)
        pairs; revolute and prismatic joints). stiffness, damping (>= 0): its spring–damper, force
        −(stiffness (L − rest) + damping L̇) along the tendon; rest_length: L₀ or a dead band
        (L₀, L₁). range: (lower, upper) limits of L, kept by the contact step (a unilateral row,
        treedyn.sim.rows). frictionloss: dry friction along it (a force >= 0). Returns its index."""
        if not isinstance(name, str) or not name or name in self._name_set("_tendons"):
            raise ValueError(f"tendon name must be a new non-empty string, got {name!r}")
        pairs = list(joints.items()) if isinstance(joints, dict) else list(joints)
        if not pairs:
            raise ValueError(f"tendon {name!r} has no joints")
        terms = []
        for j, c in pairs:
            if j not in self._joint_index:
                raise ValueError(f"tendon {name!r}: no moving joint is named {j!r}; joints are {self.joint_names}")
            if not isinstance(self._joints[self._joint_index[j]], (Revolute, Prismatic)):
                raise ValueError(f"tendon {name!r}: joint {j!r} is not a revolute or prismatic joint")
            terms.append((j, _checks.real(c, f"tendon {name!r} coefficient of {j!r}")))
        rest = np.asarray(rest_length, dtype=float).reshape(-1)
        if rest.size == 1:
            rest = np.r_[rest, rest]
        if rest.shape != (2,) or not np.all(np.isfinite(rest)) or rest[0] > rest[1]:
            raise ValueError(f"tendon {name!r}: rest_length must be L0 or (L0, L1) with L0 <= L1, got {rest_length!r}")
        k = _checks.real(stiffness, f"tendon {name!r} stiffness", nonnegative=True)
        d = _checks.real(damping, f"tendon {name!r} damping", nonnegative=True)
        fl = _checks.real(frictionloss, f"tendon {name!r} frictionloss", nonnegative=True)
        rng = _range(range, f"tendon {name!r} range")
        t = Tendon(name, tuple(terms), k, d, (float(rest[0]), float(rest[1])), rng, fl)
        return self._append("_tendons", t)

    @changes_model
    def add_actuator(
        self,
        name: str,
        target: str,
        transmission: str = "joint",
        gear=1.0,
        gain=(1.0,),
        bias=(0.0,),
        ctrlrange=None,
        forcerange=None,
        dynamics: str = "none",
        time_constant=1.0,
        actrange=None,
    ) -> int:
        """An actuator on a scalar joint or a fixed tendon (``target``, its name), MuJoCo's
        ``<general>``: force (gain₀ + gain₁ l + gain₂ l̇)·w + bias₀ + bias₁ l + bias₂ l̇ (see the
        module), clamped to forcerange, times gear. ctrlrange clamps the control; dynamics "none"
        (w = u), "integrator" or "filter" (with time_constant) and actrange clamps the activation.
        Returns its index (the control's)."""
        if not isinstance(name, str) or not name or name in self._name_set("_actuators"):
            raise ValueError(f"actuator name must be a new non-empty string, got {name!r}")
        transmission = _checks.choice(transmission, f"actuator {name!r} transmission", ("joint", "tendon"))
        if transmission == "joint":
            if target not in self._joint_index:
                raise ValueError(
                    f"actuator {name!r}: no moving joint is named {target!r}; joints are {self.joint_names}"
                )
            if not isinstance(self._joints[self._joint_index[target]], (Revolute, Prismatic)):
                raise ValueError(
                    f"actuator {name!r}: joint {target!r} is not a revolute or prismatic joint "
                    "(actuators on ball and free joints are not supported)"
                )
        elif target not in self._name_set("_tendons"):
            raise ValueError(f"actuator {name!r}: no tendon is named {target!r}; tendons are {self.tendon_names}")
        dynamics = _checks.choice(dynamics, f"actuator {name!r} dynamics", DYNAMICS)
        a = Actuator(
            name,
            transmission,
            target,
            _checks.real(gear, f"actuator {name!r} gear"),
            _three(gain, f"actuator {name!r} gain"),
            _three(bias, f"actuator {name!r} bias"),
            _range(ctrlrange, f"actuator {name!r} ctrlrange"),
            _range(forcerange, f"actuator {name!r} forcerange"),
            dynamics,
            _checks.real(time_constant, f"actuator {name!r} time_constant", positive=True),
            _range(actrange, f"actuator {name!r} actrange"),
        )
        return self._append("_actuators", a)

    # the tendons and actuators are kept in lists and their names in sets, so that adding n of them
    # costs O(n), not O(n²) (a model file may have an actuator per joint)
    def _append(self, key: str, item) -> int:
        """Append ``item`` to the list under ``key`` (a tuple in a model pickled before: made a list)."""
        items = self.__dict__.get(key)
        if not isinstance(items, list):
            items = self.__dict__[key] = list(items or ())
        items.append(item)
        names = self.__dict__.get("_name_sets", {}).get(key)
        if names is not None:
            names.add(item.name)
        return len(items) - 1

    def _name_set(self, key: str) -> set:
        """The names of the items under ``key``, remade when they disagree with the items."""
        sets = self.__dict__.setdefault("_name_sets", {})
        items = self.__dict__.get(key, ())
        names = sets.get(key)
        if names is None or len(names) != len(items):
            names = sets[key] = {x.name for x in items}
        return names

    @changes_model
    def set_joint_frictionloss(self, joint: str, frictionloss) -> None:
        """Dry friction on a joint (MuJoCo's ``frictionloss``): a force (N·m or N) >= 0 per velocity
        coordinate (a scalar for all of them) that resists motion up to its size; the contact step
        keeps it as a bounded impulse (treedyn.sim.rows). 0 removes it."""
        i = self._moving_joint(joint, "joint friction")
        joint, n = self._joint_names[i], self._joints[i].nv
        f = np.array(frictionloss, dtype=float).reshape(-1)
        f = np.full(n, f[0]) if f.size == 1 else f
        if f.shape != (n,) or not np.all(np.isfinite(f)) or np.any(f < 0):
            raise ValueError(
                f"joint friction of {joint!r} must be a scalar or {n} finite values >= 0, got {frictionloss!r}"
            )
        self.__dict__.setdefault("_frictionloss", {})[joint] = f  # (in place: O(1) per joint)

    @changes_model
    def set_joint_actuator_force_range(self, joint: str, lower=None, upper=None) -> None:
        """Clamp the actuators' total force on a hinge or slide joint to [lower, upper] (MuJoCo's joint
        ``actuatorfrcrange``): the sum of every actuator's generalized force on its coordinate is
        clamped, and while it is saturated the actuators acting on it add no velocity gain to the
        implicit integrators (MuJoCo 4.0). None, None removes the clamp."""
        i = self._moving_joint(joint, "joint actuator force range")
        joint = self._joint_names[i]
        ranges = self.__dict__.setdefault("_actuator_force_range", {})
        if lower is None and upper is None:
            ranges.pop(joint, None)
            return
        if lower is None or upper is None:
            raise ValueError(f"joint actuator force range of {joint!r}: give both lower and upper (or neither)")
        if not isinstance(self._joints[i], (Revolute, Prismatic)):
            raise ValueError(f"joint actuator force range: joint {joint!r} is not a hinge or slide joint")
        lo, hi = float(lower), float(upper)
        if not lo < hi:  # (also NaN)
            raise ValueError(
                f"joint actuator force range of {joint!r}: needs lower < upper, got ({lower!r}, {upper!r})"
            )
        ranges[joint] = (lo, hi)

    @property
    def joint_actuator_force_range(self) -> np.ndarray:
        """(nv, 2) each velocity coordinate's clamp of the actuators' total force (±inf: none;
        set_joint_actuator_force_range; a copy)."""
        out = np.tile([-np.inf, np.inf], (self.nv, 1))
        for joint, r in self.__dict__.get("_actuator_force_range", {}).items():
            out[self.v_index(joint)] = r
        return out

    @property
    def joint_frictionloss(self) -> np.ndarray:
        """(nv,) dry friction of every velocity coordinate (set_joint_frictionloss; a copy)."""
        out = np.zeros(self.nv)
        for joint, f in self.__dict__.get("_frictionloss", {}).items():
            i = self.v_index(joint)
            out[i : i + len(f)] = f
        return out

    @property
    def tendons(self) -> tuple:
        return tuple(self.__dict__.get("_tendons", ()))

    @property
    def tendon_names(self) -> list[str]:
        return [t.name for t in self.tendons]

    @property
    def actuators(self) -> tuple:
        return tuple(self.__dict__.get("_actuators", ()))

    @property
    def actuator_names(self) -> list[str]:
        return [a.name for a in self.actuators]

    @property
    def nu(self) -> int:
        """The number of controls (one per actuator)."""
        return len(self.__dict__.get("_actuators", ()))

    @property
    def na(self) -> int:
        """The number of activations (actuators with dynamics)."""
        return sum(a.dynamics != "none" for a in self.actuators)

    def tendon_lengths(self, q) -> np.ndarray:
        """L(q) of every tendon."""
        T = actuation_terms(self)
        return T.tendon_q @ _checks.vector(q, "q", self.nq)

    def spring_energy(self, q) -> float:
        """The potential energy of the model's springs at q: ½ Σ k (q ⊖ rest)² of the joint springs
        (set_joint_spring; a spherical joint's on its rotation vector) and ½ k s² of the tendons'
        (s: the stretch beyond the dead band). With kinetic_energy (½ q̇ᵀ M q̇, the armature in M)
        and potential_energy (gravity), the total energy of an unactuated model."""
        q = _checks.vector(q, "q", self.nq)
        E = 0.0
        for i, (k, _, r) in self._joint_springs.items():
            qi = self._q_start[i]
            x = q[qi : qi + len(r)]
            if len(r) == 4:  # spherical (x, y, z, w): the rotation vector of rest⁻¹ q
                w = r[3] * x[:3] - x[3] * r[:3] - np.cross(r[:3], x[:3])  # vector part of r* ⊗ x
                c = r[3] * x[3] + r[:3] @ x[:3]
                n = np.linalg.norm(w)
                d = (2.0 * np.arctan2(n, abs(c)) * np.sign(c or 1.0) / n) * w if n > 0 else np.zeros(3)
            else:
                d = x - r if len(r) == len(k) else np.zeros(len(k))  # (a free joint: damping only)
            E += 0.5 * float(k @ d**2)
        T = actuation_terms(self)
        return E + float(0.5 * T.k @ T.stretch(T.tendon_q @ q) ** 2)

    def actuator_forces(self, q, v, ctrl, act=None) -> np.ndarray:
        """The generalized force (nv,) of the actuators at (q, v) under controls ``ctrl`` (nu,)
        (clamped to their ctrlrange) and activations ``act`` (na,; the actuators with dynamics,
        in order)."""
        return actuation_terms(self).forces(q, v, ctrl, act)


class ActuationTerms:
    """The arrays of a model's tendons and actuators (actuation_terms)."""

    def __init__(self, model):
        nq, nv = model.nq, model.nv
        tendons, acts = model.tendons, model.actuators
        nt, nu = len(tendons), len(acts)
        self.tendon_q, self.tendon_v = np.zeros((nt, nq)), np.zeros((nt, nv))
        for r, t in enumerate(tendons):
            for j, c in t.joints:
                self.tendon_q[r, model.q_index(j)] += c
                self.tendon_v[r, model.v_index(j)] += c
        self.k = np.array([t.stiffness for t in tendons])
        self.d = np.array([t.damping for t in tendons])
        self.rest = np.array([t.rest_length for t in tendons]).reshape(nt, 2)
        self.passive = bool(np.any(self.k) or np.any(self.d))
        self.frictionloss = np.array([t.frictionloss for t in tendons])
        self.friction = np.flatnonzero(self.frictionloss)  # the tendons with dry friction
        self.limited = np.array([r for r, t in enumerate(tendons) if t.range is not None], dtype=int)
        self.range_lo = np.array([tendons[r].range[0] for r in self.limited])
        self.range_hi = np.array([tendons[r].range[1] for r in self.limited])
        self.moment_q, self.moment_v = np.zeros((nu, nq)), np.zeros((nu, nv))
        row = {name: i for i, name in enumerate(model.tendon_names)}
        for r, a in enumerate(acts):
            if a.transmission == "joint":
                self.moment_q[r, model.q_index(a.target)] = a.gear
                self.moment_v[r, model.v_index(a.target)] = a.gear
            else:
                i = row[a.target]
                self.moment_q[r], self.moment_v[r] = a.gear * self.tendon_q[i], a.gear * self.tendon_v[i]
        self.gain = np.array([a.gain for a in acts]).reshape(nu, 3)
        self.bias = np.array([a.bias for a in acts]).reshape(nu, 3)
        inf = np.inf
        self.ctrl_lo = np.array([-inf if a.ctrlrange is None else a.ctrlrange[0] for a in acts])
        self.ctrl_hi = np.array([inf if a.ctrlrange is None else a.ctrlrange[1] for a in acts])
        self.force_lo = np.array([-inf if a.forcerange is None else a.forcerange[0] for a in acts])
        self.force_hi = np.array([inf if a.forcerange is None else a.forcerange[1] for a in acts])
        self.joint_lo, self.joint_hi = model.joint_actuator_force_range.T.copy()
        self.clip_joint = bool(nu and (np.isfinite(self.joint_lo).any() or np.isfinite(self.joint_hi).any()))
        self.dyn = np.array([a.dynamics != "none" for a in acts], dtype=bool)
        self.integrator = np.array([a.dynamics == "integrator" for a in acts if a.dynamics != "none"], dtype=bool)
        self.T = np.array([a.time_constant for a in acts if a.dynamics != "none"])
        self.act_lo = np.array([-inf if a.actrange is None else a.actrange[0] for a in acts if a.dynamics != "none"])
        self.act_hi = np.array([inf if a.actrange is None else a.actrange[1] for a in acts if a.dynamics != "none"])
        self.nu, self.na, self.nv = nu, int(self.dyn.sum()), nv
        self.affine = bool(np.any(self.gain[:, 1:]) or np.any(self.bias))
        self.clip_ctrl = bool(np.isfinite(self.ctrl_lo).any() or np.isfinite(self.ctrl_hi).any())
        self.clip_force = bool(np.isfinite(self.force_lo).any() or np.isfinite(self.force_hi).any())
        # whether anything acts at zero control: a bias (a servo), an activation, a tendon's spring
        self.acts_at_rest = bool(
            self.passive or self.na or np.any(self.bias) or np.any(self.force_lo > 0) or np.any(self.force_hi < 0)
        ) or (self.clip_joint and bool(np.any(self.joint_lo > 0) or np.any(self.joint_hi < 0)))

    def control(self, ctrl) -> np.ndarray:
        if not (type(ctrl) is np.ndarray and ctrl.dtype == np.float64 and ctrl.shape == (self.nu,)):
            ctrl = _checks.vector(ctrl, "ctrl", self.nu)
        elif not np.isfinite(ctrl).all():
            raise ValueError("ctrl has NaN or inf")
        return np.clip(ctrl, self.ctrl_lo, self.ctrl_hi) if self.clip_ctrl else ctrl

    def forces(self, q, v, ctrl, act=None) -> np.ndarray:
        """Σ actuators' τ (see the module); ctrl None: zero controls."""
        w = np.zeros(self.nu) if ctrl is None else self.control(ctrl)
        if self.na:
            w = w.copy()
            w[self.dyn] = np.zeros(self.na) if act is None else _checks.vector(act, "act", self.na)
        if self.affine:  # (gain and bias as affine functions of the length and its velocity)
            l, ldot = self.moment_q @ q, self.moment_v @ v
            f = (self.gain[:, 0] + self.gain[:, 1] * l + self.gain[:, 2] * ldot) * w
            f += self.bias[:, 0] + self.bias[:, 1] * l + self.bias[:, 2] * ldot
        else:  # (motors: gain₀ w)
            f = self.gain[:, 0] * w
        if self.clip_force:
            f = np.clip(f, self.force_lo, self.force_hi)
        tau = self.moment_v.T @ f
        return np.clip(tau, self.joint_lo, self.joint_hi) if self.clip_joint else tau

    def tendon_passive(self, q, v) -> np.ndarray:
        """−Jᵀ (k (L − rest) + d L̇) of the tendons' spring–dampers (rest: the dead band's nearer end)."""
        return -self.tendon_v.T @ (self.k * self.stretch(self.tendon_q @ q) + self.d * (self.tendon_v @ v))

    def stretch(self, L) -> np.ndarray:
        """The tendons' stretch beyond their dead bands [L₀, L₁] at lengths L (0 inside)."""
        return np.where(L > self.rest[:, 1], L - self.rest[:, 1], np.minimum(L - self.rest[:, 0], 0.0))

    def applied(self, q, v, ctrl, act) -> np.ndarray | None:
        """The actuators' and tendons' generalized force, or None when there is none."""
        out = None
        if self.nu:
            out = self.forces(q, v, ctrl, act)
        if self.passive:
            p = self.tendon_passive(q, v)
            out = p if out is None else out + p
        return out

    def activate(self, act, ctrl, h: float) -> np.ndarray:
        """The activations after a step h (explicit Euler, MuJoCo's Euler), clamped to actrange."""
        u = (np.zeros(self.nu) if ctrl is None else self.control(ctrl))[self.dyn]
        rate = np.where(self.integrator, u, (u - act) / self.T)
        return np.clip(act + h * rate, self.act_lo, self.act_hi)


def _terms(model, _key) -> ActuationTerms:
    return ActuationTerms(model)


def actuation_terms(model) -> ActuationTerms:
    """The model's ActuationTerms, made once per revision of the model."""
    return cached(model, "actuation", _terms)


def control_function(ctrl, nu: int):
    """ctrl(t, q, v) -> a (nu,) array or None: ctrl an array, a function or None (zero controls)."""
    if ctrl is None:
        return lambda t, q, v: None
    if callable(ctrl):

        def control(t, q, v):
            u = ctrl(t, q, v)
            try:
                return _checks.vector(u, "ctrl", nu)
            except (TypeError, ValueError) as e:
                raise type(e)(f"the function ctrl(t, q, v) returned a bad value at t = {t:.6g}: {e}") from None

        return control
    u = _checks.vector(ctrl, "ctrl", nu)
    return lambda t, q, v: u


def driven(model) -> bool:
    """Whether the model's actuators or tendons act at zero control (forces beyond the caller's τ)."""
    return bool((model.actuators or model.tendons) and actuation_terms(model).acts_at_rest)


def drive(model, state, tau: np.ndarray, ctrl) -> np.ndarray:
    """τ plus the actuators' force under ``ctrl`` (and the state's activations) and the tendons'
    spring–dampers at the state."""
    T = actuation_terms(model)
    extra = T.applied(state.q, state.v, ctrl, state.act if T.na and state.act.size else None)
    return tau if extra is None else tau + extra


def activate(model, state, ctrl, h: float) -> None:
    """Advance the state's activations by h under ``ctrl`` (in place; they start at zero)."""
    T = actuation_terms(model)
    if T.na:
        act = state.act if state.act.size == T.na else np.zeros(T.na)
        state.act = T.activate(act, ctrl, h)
