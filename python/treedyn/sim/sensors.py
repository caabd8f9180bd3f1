"""The model's sensors' readings (treedyn.model.sensors), MuJoCo's ``sensordata``.

``sensor_data(model, q, v, a, contacts)`` reads every sensor at one state: the position and
velocity kinds from (q, v), the acceleration kinds from a (the generalized acceleration) and the
contact forces. Each is the quantity MuJoCo's sensor reports (mj_sensorPos, mj_sensorVel,
mj_sensorAcc), in treedyn's words:

- a frame's velocity and acceleration are the Jacobian's (treedyn.frame_jacobian,
  frame_bias_acceleration, "local_world_aligned": the origin's classical acceleration), less
  gravity where MuJoCo's are (framelinacc, accelerometer: cacc of the world is −g);
- force and torque are the wrench the body's parent applies to the body's subtree (MuJoCo's
  cfrc_int): Σ over the subtree of m(c̈ − g), I_c α + ω × I_c ω less the contact forces on it, moved
  to the frame's origin and turned into its axes (contact torques of condim 4 and 6 are not included);
- touch adds the normal force of each contact on the frame's body whose normal, cast from the
  contact point away from the body, meets the zone (MuJoCo's mju_rayGeom test).

``StepData.sensordata`` is MuJoCo's ``d.sensordata`` after ``mj_step``: the sensors at the state
the last step started from, with that step's accelerations ((v⁺ − v)/h, a free joint's linear part
from its world velocity) and contact forces (impulse / h).
"""

from __future__ import annotations

import numpy as np

from .. import _checks as C
from ..algorithms.dynamics import mass_matrix
from ..algorithms.kinematics import frame_bias_acceleration, frame_jacobian, frame_placement
from ..algorithms.layout import quaternion_matrix
from ..model import Box, Capsule, Cylinder, Ellipsoid, Model, Sphere, Transform
from ..model.sensors import ACCELERATION_KINDS

__all__ = ["sensor_data"]


def sensor_data(model: Model, q, v, a=None, contacts=None) -> np.ndarray:
    """The model's sensors' readings at (q, v), concatenated in ``model.sensors`` order (MuJoCo's
    sensordata). ``a`` (nv,): the generalized acceleration, and ``contacts``: (bodies (P, 2),
    points (P, 3), normals (P, 3) from the first body towards the second, forces (P, 3) on the
    second body, world N), needed by the acceleration kinds (framelinacc, frameangacc,
    accelerometer, touch, force, torque; contacts None: none)."""
    C.instance(model, Model, "model")
    q = C.array(q, "q", (model.nq,))
    v = C.array(v, "v", (model.nv,))
    sensors = model.sensors
    if a is not None:
        a = C.array(a, "a", (model.nv,))
    elif any(s.kind in ACCELERATION_KINDS for s in sensors):
        need = sorted({s.kind for s in sensors if s.kind in ACCELERATION_KINDS})
        raise ValueError(f"sensor_data: the model's {', '.join(need)} sensors need the acceleration a")
    contacts = _contacts(contacts)
    r = _Reader(model, q, v, a, contacts)
    out = []
    for s in sensors:
        x = np.atleast_1d(np.asarray(getattr(r, s.kind)(s), dtype=float))
        if s.cutoff > 0:
            x = np.clip(x, 0.0 if s.kind == "touch" else -s.cutoff, s.cutoff)
        out.append(x)
    return np.concatenate(out) if out else np.zeros(0)


def step_sensordata(data) -> np.ndarray:
    """StepData.sensordata: the sensors at the state the last step started from, with that step's
    accelerations and contact forces (MuJoCo's d.sensordata after mj_step; the accelerations are
    MuJoCo's qacc under semi-implicit Euler (MuJoCo's Euler: its implicit damping taken out), the
    step's mean under RK4 and the implicit integrators).
    Before the first step: the position and velocity kinds at the current state."""
    model, h = data.model, data.dt
    q0, v0 = data.q_start, data.v_start
    if q0.size == 0:
        if any(s.kind in ACCELERATION_KINDS for s in model.sensors):
            raise ValueError("StepData.sensordata: the acceleration, touch and force sensors read a step: step first")
        return sensor_data(model, data.q, data.v)
    q1, v1 = np.array(data.q), np.array(data.v)
    a = (v1 - v0) / h
    for b in np.flatnonzero(
        np.array(model.joint_kinds) == "free"
    ):  # ṗ = R v_lin: p̈ = (ṗ⁺ − ṗ)/h, v̇_lin = Rᵀp̈ − ω × v_lin
        i, j = model.q_indices[b], model.v_indices[b]
        R0, R1 = quaternion_matrix(q0[i + 3 : i + 7]), quaternion_matrix(q1[i + 3 : i + 7])
        p_ddot = (R1 @ v1[j : j + 3] - R0 @ v0[j : j + 3]) / h
        a[j : j + 3] = R0.T @ p_ddot - np.cross(v0[j + 3 : j + 6], v0[j : j + 3])
    damping = np.asarray(model.joint_damping)
    if data.integrator == "semi-implicit" and damping.any():  # (MuJoCo's Euler: (M + hB) a_step = M qacc)
        a = a + h * np.linalg.solve(mass_matrix(model, q0), damping * a)
    _, bodies, points, normals, _, _, impulses, _ = data.contacts()
    return sensor_data(model, q0, v0, a, (bodies, points, normals, impulses / h))


def _contacts(contacts):
    if contacts is None:
        return np.zeros((0, 2), int), np.zeros((0, 3)), np.zeros((0, 3)), np.zeros((0, 3))
    if len(contacts) != 4:
        raise ValueError("contacts must be (bodies (P, 2), points (P, 3), normals (P, 3), forces (P, 3))")
    bodies = np.asarray(contacts[0], dtype=np.int64).reshape(-1, 2)
    P = len(bodies)
    rest = [
        C.array(x, w, (P, 3)) for x, w in zip(contacts[1:], ("contact points", "contact normals", "contact forces"))
    ]
    return (bodies, *rest)


class _Reader:
    """One state's readings, each frame's kinematics computed once."""

    def __init__(self, model, q, v, a, contacts):
        self.model, self.q, self.v, self.a, self.contacts = model, q, v, a, contacts
        self.g = np.asarray(model.gravity, dtype=float)
        self._cache = {}

    def _kin(self, frame, point=None):
        """(R, p, [ω; ṗ], [α; p̈]) of a frame (or a point of it), world axes (p̈ None without a)."""
        key = (frame, None if point is None else tuple(point))
        if key not in self._cache:
            m, q = self.model, self.q
            X = frame_placement(m, q, frame, point)
            J = frame_jacobian(m, q, frame, point, "local_world_aligned")
            acc = None
            if self.a is not None:
                acc = J @ self.a + frame_bias_acceleration(m, q, self.v, frame, point, "local_world_aligned")
            self._cache[key] = (np.asarray(X.rotation), np.asarray(X.translation), J @ self.v, acc)
        return self._cache[key]

    # joints
    def jointpos(self, s):
        return self.q[self.model.q_index(s.target)]

    def jointvel(self, s):
        return self.v[self.model.v_index(s.target)]

    # frames: pose, world velocities and accelerations
    def framepos(self, s):
        return self._kin(s.target)[1]

    def framequat(self, s):
        x, y, z, w = Transform(self._kin(s.target)[0], np.zeros(3)).quat  # (x, y, z, w), w >= 0
        return np.array([w, x, y, z])  # (MuJoCo's order)

    def framexaxis(self, s):
        return self._kin(s.target)[0][:, 0]

    def frameyaxis(self, s):
        return self._kin(s.target)[0][:, 1]

    def framezaxis(self, s):
        return self._kin(s.target)[0][:, 2]

    def framelinvel(self, s):
        return self._kin(s.target)[2][3:]

    def frameangvel(self, s):
        return self._kin(s.target)[2][:3]

    def framelinacc(self, s):
        return self._kin(s.target)[3][3:] - self.g

    def frameangacc(self, s):
        return self._kin(s.target)[3][:3]

    # the frame's own axes
    def gyro(self, s):
        R, _, vel, _ = self._kin(s.target)
        return R.T @ vel[:3]

    def velocimeter(self, s):
        R, _, vel, _ = self._kin(s.target)
        return R.T @ vel[3:]

    def accelerometer(self, s):
        R, _, _, acc = self._kin(s.target)
        return R.T @ (acc[3:] - self.g)

    # forces
    def _body(self, frame) -> int:
        m = self.model
        return m.body_index(m.frames[frame][0] if frame in m.frames else frame)

    def touch(self, s):
        R, p, _, _ = self._kin(s.target)
        b = self._body(s.target)
        bodies, points, normals, forces = self.contacts
        total = 0.0
        for k in np.flatnonzero((bodies == b).any(axis=1)):
            fn = float(forces[k] @ normals[k])
            if fn <= 0:
                continue
            ray = normals[k] if bodies[k, 0] == b else -normals[k]  # (away from the sensor's body)
            if _ray_meets(s.zone, R.T @ (points[k] - p), R.T @ ray):
                total += fn
        return total

    def _subtree(self, b) -> list:
        """The bodies of b's subtree (b first), once per reading."""
        key = ("subtree", b)
        if key not in self._cache:
            parents, out = self.model.parents, []
            for i in range(b, self.model.n_bodies):
                j = i
                while j > b:
                    j = parents[j]
                if j == b:
                    out.append(i)
            self._cache[key] = out
        return self._cache[key]

    def _wrench(self, s):
        """The parent's wrench on the frame's body's subtree: force, moment about the frame's origin (world)."""
        _, o, _, _ = self._kin(s.target)
        b = self._body(s.target)
        F, T = np.zeros(3), np.zeros(3)
        for i in self._subtree(b):
            I = self.model.inertias[i]
            if I.mass <= 0:
                continue
            R, c, vel, acc = self._kin(i, I.com)
            w, Ic = vel[:3], R @ I.inertia @ R.T
            f = I.mass * (acc[3:] - self.g)
            F += f
            T += Ic @ acc[:3] + np.cross(w, Ic @ w) + np.cross(c - o, f)
        bodies, points, _, forces = self.contacts
        members = set(self._subtree(b))
        for k in range(len(bodies)):
            for side, sign in ((0, -1.0), (1, 1.0)):  # (the force on the first body is the second's, negated)
                if bodies[k, side] in members:
                    F -= sign * forces[k]
                    T -= sign * np.cross(points[k] - o, forces[k])
        return F, T

    def force(self, s):
        R = self._kin(s.target)[0]
        return R.T @ self._wrench(s)[0]

    def torque(self, s):
        R = self._kin(s.target)[0]
        return R.T @ self._wrench(s)[1]

    # subtrees (world axes)
    def _mass_points(self, body: str):
        out = []
        for i in self._subtree(self.model.body_index(body)):
            I = self.model.inertias[i]
            if I.mass > 0:
                R, c, vel, _ = self._kin(i, I.com)
                out.append((I.mass, c, vel, R @ I.inertia @ R.T))
        return out

    def subtreecom(self, s):
        pts = self._mass_points(s.target)
        M = sum(m for m, *_ in pts)
        return sum(m * c for m, c, *_ in pts) / M if M > 0 else self._kin(s.target)[1]

    def subtreelinvel(self, s):
        pts = self._mass_points(s.target)
        M = sum(m for m, *_ in pts)
        return sum(m * vel[3:] for m, _, vel, _ in pts) / M if M > 0 else np.zeros(3)

    def subtreeangmom(self, s):
        pts = self._mass_points(s.target)
        M = sum(m for m, *_ in pts)
        if M <= 0:
            return np.zeros(3)
        com = sum(m * c for m, c, *_ in pts) / M
        vcom = sum(m * vel[3:] for m, _, vel, _ in pts) / M
        return sum(Ic @ vel[:3] + m * np.cross(c - com, vel[3:] - vcom) for m, c, vel, Ic in pts)


def _ray_meets(zone, o, d) -> bool:
    """Whether the ray o + t d, t >= 0 (the zone's coordinates) meets the solid zone."""
    if isinstance(zone, Sphere):
        return _quadric(d @ d, 2 * o @ d, o @ o - zone.radius**2, 0.0, np.inf)
    if isinstance(zone, Ellipsoid):
        r = np.asarray(zone.radii, dtype=float)
        o, d = o / r, d / r
        return _quadric(d @ d, 2 * o @ d, o @ o - 1.0, 0.0, np.inf)
    if isinstance(zone, Box):
        lo, hi = _slabs(o, d, np.asarray(zone.half_extents, dtype=float), (0, 1, 2))
        return lo <= hi
    if isinstance(zone, Cylinder):
        return _cylinder(o, d, zone.radius, zone.half_length)
    if isinstance(zone, Capsule):
        r, L = zone.radius, zone.half_length
        ends = [np.array([0.0, 0.0, z]) for z in (-L, L)]
        return _cylinder(o, d, r, L) or any(
            _quadric(d @ d, 2 * (o - e) @ d, (o - e) @ (o - e) - r * r, 0, np.inf) for e in ends
        )
    raise TypeError(f"touch zone {zone!r} is not a shape treedyn's touch sensor has")


def _slabs(o, d, h, axes) -> tuple:
    """[lo, hi] ∩ [0, ∞) of the ray inside |x_k| <= h_k for the axes k."""
    lo, hi = 0.0, np.inf
    for k in axes:
        if abs(d[k]) < 1e-300:
            if abs(o[k]) > h[k]:
                return 1.0, 0.0
            continue
        t0, t1 = sorted(((-h[k] - o[k]) / d[k], (h[k] - o[k]) / d[k]))
        lo, hi = max(lo, t0), min(hi, t1)
    return lo, hi


def _quadric(A, B, Cc, lo, hi) -> bool:
    """Whether A t² + B t + C <= 0 for some t in [lo, hi] (A >= 0)."""
    if A <= 0:
        return Cc <= 0 if abs(B) < 1e-300 else (min(B * lo, B * hi) + Cc <= 0)
    disc = B * B - 4 * A * Cc
    if disc < 0:
        return False
    sq = np.sqrt(disc)
    t0, t1 = (-B - sq) / (2 * A), (-B + sq) / (2 * A)
    return max(t0, lo) <= min(t1, hi)


def _cylinder(o, d, r, L) -> bool:
    lo, hi = _slabs(o, d, np.array([0.0, 0.0, L]), (2,))
    if lo > hi:
        return False
    return _quadric(d[0] ** 2 + d[1] ** 2, 2 * (o[0] * d[0] + o[1] * d[1]), o[0] ** 2 + o[1] ** 2 - r * r, lo, hi)
