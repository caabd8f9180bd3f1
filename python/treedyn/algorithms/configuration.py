"""Configurations: the neutral one, random ones, q ⊕ v dt on the joints' manifolds, and its
inverse q1 ⊖ q0 (difference) and the geodesic between two configurations (interpolate)."""

from __future__ import annotations

import numpy as np

from .. import _checks as C
from .. import _core
from ..model import Free, Model, Prismatic, Revolute, Spherical, Universal
from ..model.joints import _JOINT_LAYOUTS

__all__ = ["neutral", "random_configuration", "integrate", "difference", "interpolate"]


def neutral(model: Model) -> np.ndarray:
    """q with every joint at zero and every quaternion the identity (x, y, z, w) = (0, 0, 0, 1)."""
    _model(model)
    return _core.neutral(model.core)


def random_configuration(model: Model, rng=None, *, angle=np.pi, distance=1.0, size=None) -> np.ndarray:
    """A random q: angles uniform in [-angle, angle], displacements and floating-base positions
    uniform in [-distance, distance], quaternions uniform on SO(3). A limited coordinate
    (model.set_joint_limits) is uniform inside its limits: in [lower, upper] when both are
    finite; with one side unbounded, in the part of [-angle, angle] (or [-distance, distance])
    within the limit, or, when none of it is, in the interval of that width from the bound
    inwards. The same draws from rng as without limits, one per coordinate.

    size: None (one (nq,) configuration) or an integer B >= 0: a (B, nq) batch of independent
    configurations, drawn joint by joint for the whole batch (so row b is not what the b-th of B
    successive single calls would return; the same rng seed gives the same batch)."""
    _model(model)
    for name, x in (("angle", angle), ("distance", distance)):
        # the uniform draw spans 2x: its width must stay finite
        x = C.real(x, f"random_configuration: {name}", finite=False)
        if not (0 <= x <= 1e300):
            raise ValueError(f"random_configuration: {name} must be finite, >= 0 and <= 1e300, got {x}")
    size = C.integer(size, "random_configuration: size", minimum=0, optional=True)
    rng = np.random.default_rng(rng)
    B = 1 if size is None else size
    q = np.empty((B, model.nq))
    lower, upper = model.lower_position_limit, model.upper_position_limit
    for j, k in zip(model.joints, model.q_indices):
        if isinstance(j, (Revolute, Prismatic)) and (lower[k] > -np.inf or upper[k] < np.inf):
            q[:, k] = _uniform_within(rng, lower[k], upper[k], angle if isinstance(j, Revolute) else distance, B)
        elif isinstance(j, (Revolute, Universal)):
            q[:, k : k + j.nq] = rng.uniform(-angle, angle, (B, j.nq))
        elif isinstance(j, Prismatic):
            q[:, k] = rng.uniform(-distance, distance, B)
        elif isinstance(j, Spherical):
            q[:, k : k + 4] = _random_quaternion(rng, B)
        elif isinstance(j, Free):
            q[:, k : k + 3] = rng.uniform(-distance, distance, (B, 3))
            q[:, k + 3 : k + 7] = _random_quaternion(rng, B)
    return q[0] if size is None else q


def quaternion_slices(model: Model):
    """[(slice of q holding a quaternion, joint name)] for the spherical and free joints."""
    out = []
    for j, k, name in zip(model.joints, model.q_indices, model.body_joint_names):
        s = _JOINT_LAYOUTS[type(j).__name__.lower()]["quaternion"]
        if s >= 0:
            out.append((slice(k + s, k + s + 4), name))
    return out


def _uniform_within(rng, lower: float, upper: float, width: float, B: int) -> np.ndarray:
    """One uniform draw in [lower, upper] if both are finite, else in [lower, upper] ∩ [-width,
    width] (see random_configuration), computed from the midpoint and half-width so that a span
    wider than the largest double (limits of ±1e308) does not overflow, and clipped to the limits
    against the rounding of mid + half·u. B draws."""
    lo, hi = (lower, upper) if np.isfinite(lower) and np.isfinite(upper) else (max(lower, -width), min(upper, width))
    if lo > hi:  # the default interval misses the limits: take its width from the finite bound
        lo, hi = (lower, min(upper, lower + 2 * width)) if lower > width else (max(lower, upper - 2 * width), upper)
    mid, half = 0.5 * lo + 0.5 * hi, 0.5 * hi - 0.5 * lo
    return np.clip(mid + half * rng.uniform(-1.0, 1.0, B), lower, upper)


def _random_quaternion(rng, B: int) -> np.ndarray:
    x = rng.standard_normal((B, 4))
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def integrate(model: Model, q, v, dt: float) -> np.ndarray:
    """q ⊕ v·dt: vector joints add, quaternions turn by the body-frame angular velocity, a free
    joint moves along the SE(3) screw exp(dt·[v; ω]) (Pinocchio's convention). Returns a new q.

    q (nq,) and v (nv,), or batches (B, nq) and (B, nv) (one dt for all): then (B, nq)."""
    _model(model)
    return _core.integrate(model.core, q, v, C.real(dt, "integrate: dt"))


def difference(model: Model, q0, q1) -> np.ndarray:
    """q1 ⊖ q0: the velocity v with ``integrate(model, q0, v, 1.0) == q1`` (to rounding),
    Pinocchio's ``difference``. Per joint, on its Lie group:

    - revolute, prismatic, universal: q1 − q0 (no wrapping of angles: the difference of the
      coordinates, as integrate adds them);
    - spherical: log(q0⁻¹ ⊗ q1), the rotation vector of the relative rotation R0ᵀR1 in body
      coordinates, of angle in [0, π] (the shorter way round; at exactly π either way);
    - free: the SE(3) logarithm log(M0⁻¹ M1) = (linear, angular) in body coordinates, the exact
      inverse of integrate's screw motion (Pinocchio's free-flyer convention: not the R³ × SO(3)
      split, whose linear part would be the world displacement R0ᵀ(p1 − p0)).

    q0, q1: (nq,) each, or batches (B, nq) alike: then (B, nv). Quaternions need not be exactly
    unit (within 1e-3 of it, as every kernel checks): the logarithm uses only their direction.
    The pair q0, q0 ⊕ v returns v while the rotation angle of v's spherical and free parts is
    below π (beyond, the shorter rotation is returned)."""
    _model(model)
    q0, q1, single = _configurations(model, ("q0", q0), ("q1", q1))
    v = np.empty((q0.shape[0], model.nv))
    vec_q, vec_v, lie = _layout_of(model)
    v[:, vec_v] = q1[:, vec_q] - q0[:, vec_q]
    for k, vk, free in lie:
        a, b = q0[:, k + 3 * free : k + 3 * free + 4], q1[:, k + 3 * free : k + 3 * free + 4]
        w = _quat_log(_quat_mul(_quat_conj(a), b))
        if free:
            dp = _rotate_back(a, q1[:, k : k + 3] - q0[:, k : k + 3])  # R0ᵀ(p1 − p0)
            v[:, vk : vk + 3], v[:, vk + 3 : vk + 6] = _se3_left_jacobian_inverse(w, dp), w
        else:
            v[:, vk : vk + 3] = w
    return v[0] if single else v


def interpolate(model: Model, q0, q1, u) -> np.ndarray:
    """The configuration a fraction u of the way from q0 to q1 along the joints' geodesics:
    ``integrate(model, q0, u · difference(model, q0, q1), 1.0)`` (Pinocchio's ``interpolate``):
    u = 0 gives q0, u = 1 gives q1 (to rounding); u outside [0, 1] extrapolates.

    q0, q1: (nq,) each, or batches (B, nq) alike with u a number or (B,) values: then (B, nq)."""
    _model(model)
    d = difference(model, q0, q1)
    u = C.array(u, "interpolate: u")
    if not (u.ndim == 0 or (d.ndim == 2 and u.shape == (d.shape[0],))):
        want = "a number" if d.ndim == 1 else f"a number or ({d.shape[0]},) values (one per batch item)"
        raise ValueError(f"interpolate: u must be {want}, got shape {u.shape}")
    return _core.integrate(model.core, q0, (u[:, None] if u.ndim else u) * d, 1.0)


def _model(model) -> None:
    C.instance(model, Model, "model")


def _configurations(model: Model, *named):
    """The named configurations as float64 (B, nq) copies, checked like the kernels check q (real,
    shape (nq,) or (B, nq) alike, finite, unit quaternions to 1e-3); single: they were (nq,)."""
    out, shapes = [], []
    for name, x in named:
        a = C.array(x, name, finite=False)
        if not (a.ndim in (1, 2) and a.shape[-1] == model.nq):
            raise ValueError(f"{name} must have shape (nq,) = ({model.nq},) or (B, {model.nq}), got {a.shape}")
        a = a[None] if a.ndim == 1 else a
        bad = ~np.isfinite(a)
        if bad.any():
            raise ValueError(f"{name} contains NaN or inf (at flat index {np.flatnonzero(bad)[0]})")
        for sl, joint in quaternion_slices(model):
            n = np.linalg.norm(a[:, sl], axis=1)
            b = np.flatnonzero(np.abs(n - 1) > 1e-3)
            if b.size:
                item = f" (batch item {b[0]})" if np.ndim(x) == 2 else ""
                raise ValueError(
                    f"{name}: the quaternion of joint {joint!r} (q[{sl.start}:{sl.stop}]) has norm {n[b[0]]:.6g}, "
                    f"not 1{item}"
                )
        out.append(a)
        shapes.append(np.shape(x))
    if len({s for s in shapes}) > 1:
        raise ValueError(
            f"{', '.join(n for n, _ in named)} must all be single configurations or batches of the same size, "
            f"got shapes {', '.join(map(str, shapes))}"
        )
    return (*out, len(shapes[0]) == 1)


def _layout_of(model: Model):
    """(q indices, v indices) of the vector coordinates; [(q index, v index, is_free)] of the
    spherical and free joints."""
    vec_q, vec_v, lie = [], [], []
    for j, k, vk in zip(model.joints, model.q_indices, model.v_indices):
        if isinstance(j, (Spherical, Free)):
            lie.append((int(k), int(vk), isinstance(j, Free)))
        else:
            vec_q.extend(range(k, k + j.nq))
            vec_v.extend(range(vk, vk + j.nv))
    return np.array(vec_q, dtype=int), np.array(vec_v, dtype=int), lie


# quaternions (x, y, z, w), batched along the first axis
def _quat_conj(a):
    return np.concatenate([-a[:, :3], a[:, 3:]], axis=1)


def _quat_mul(a, b):
    """The Hamilton product a ⊗ b."""
    av, aw, bv, bw = a[:, :3], a[:, 3:], b[:, :3], b[:, 3:]
    return np.concatenate([aw * bv + bw * av + np.cross(av, bv), aw * bw - np.sum(av * bv, axis=1, keepdims=True)], 1)


def _quat_log(r):
    """The rotation vector θ·n of the rotation r (any norm > 0), θ in [0, π]: 2·atan2(|r_xyz|,
    |r_w|) about ±r_xyz — atan2 of the two parts is accurate at every angle (no arccos of w near 1
    or arcsin near π), and scale-free."""
    r = np.where(r[:, 3:] < 0, -r, r)  # the shorter way: w ≥ 0
    s = np.linalg.norm(r[:, :3], axis=1, keepdims=True)
    theta = 2 * np.arctan2(s, r[:, 3:])
    with np.errstate(invalid="ignore", divide="ignore"):
        k = np.where(s > 0, theta / s, 2 / r[:, 3:])  # s = 0: the identity (w > 0), θ/s → 2/w
    return k * r[:, :3]


def _rotate_back(a, x):
    """R(a)ᵀ x for the rotation R(a) of the quaternion a normalised (as the kernels' quat_rotation)."""
    a = a / np.linalg.norm(a, axis=1, keepdims=True)
    av, aw = a[:, :3], a[:, 3:]
    t = 2 * np.cross(x, av)  # the conjugate's rotation: Rᵀx = x + w·t − a_v × t, t = 2 x × a_v
    return x + aw * t - np.cross(av, t)


def _se3_left_jacobian_inverse(w, p):
    """V(w)⁻¹ p, with V(w) = 1 + (1 − cos θ)/θ² w× + (θ − sin θ)/θ³ w×² the matrix of integrate's
    free-joint translation: V⁻¹ = 1 − ½ w× + c(θ) w×², c = (1 − (θ/2) cot(θ/2)) / θ², whose series
    1/12 + θ²/720 + θ⁴/30240 (next term θ⁶/1209600) is used below θ = 1e-2 (cancellation)."""
    th = np.linalg.norm(w, axis=1, keepdims=True)
    half = 0.5 * th
    with np.errstate(invalid="ignore", divide="ignore"):
        exact = (1 - half * np.cos(half) / np.sin(half)) / th**2
    c = np.where(th < 1e-2, 1 / 12 + th**2 / 720 + th**4 / 30240, exact)
    wp = np.cross(w, p)
    return p - 0.5 * wp + c * np.cross(w, wp)
