"""The centipede of drumwright2012 §6.3: body segments in a chain, each with two upper legs on
spherical joints and two lower legs on revolute joints, walking on a plane.

The paper gives the legs' joints, not the rest; the choices here (docs/scenes.md):

* segment to segment: a spherical joint (ball), held straight by the gait's PD; the head floats
  (a free joint). nv = 6 + 3 (n − 1) + 8 n = 11 n + 3.
* sizes and masses: segment 0.20 × 0.12 × 0.06 m, 1 kg, 0.25 m apart; upper leg 0.12 m outward,
  0.1 kg; lower leg 0.15 m down, 0.05 kg; spherical foot of radius 0.02 m, friction 1. Only the
  feet and the ground collide (contype/conaffinity), as in the paper's walking experiment.
* gait: each leg follows a travelling wave of phase θ = ω t − 2π i / λ (+π on the right): the hip
  swings the leg back and forth about the segment's z axis, ψ = A cos θ, while the knee lifts the
  foot during the forward swing (sin θ > 0), α = lift · max(0, sin θ); the feet push backwards in
  stance and the centipede walks along +x (0.15–0.25 m/s averaged over the first
  2.5 s, 4 to 20 segments).
  PD control tracks it (a ball joint's error is the rotation vector of R_targetᵀ R), with gains
  scaled by each joint's effective inertia (CentipedeGait), plus a feed-forward that carries the
  weight on the feet in stance.
"""

from __future__ import annotations

import numpy as np

from ..algorithms.state import State
from ..model import Free, Inertia, Model, Revolute, Spherical, Transform
from ..model.shapes import Plane, Sphere
from .chain import count
from .scene import Scene

__all__ = ["centipede", "CentipedeGait"]

SEGMENT = (0.20, 0.12, 0.06)  # box size (m)
SPACING = 0.25  # segment centre to centre
UPPER, LOWER, FOOT = 0.12, 0.15, 0.02  # upper leg length (outward), lower leg length (down), foot radius
MASS = {"segment": 1.0, "upper": 0.1, "lower": 0.05}
HEIGHT = LOWER + FOOT  # the segments' centres above the ground when the legs stand straight


def _rod(mass: float, vector) -> Inertia:
    """A thin rod from the origin to `vector`: centre of mass in the middle, m L²/12 across."""
    v = np.asarray(vector, dtype=float)
    L = np.linalg.norm(v)
    u = v / L
    across = mass * L * L / 12.0 * (np.eye(3) - np.outer(u, u)) + 1e-6 * mass * np.eye(3)
    return Inertia(mass, v / 2, across)


def centipede(n_segments: int = 10, friction: float = 1.0) -> Scene:
    """A centipede of n_segments standing on the ground plane (z = 0), at rest; ``scene.tau`` is
    its gait (a CentipedeGait: tau(t, q, v)). h = 1e-3 (the ContactSimulator's semi-implicit
    default), duration 2 s."""
    n = count(n_segments, "a centipede needs n_segments >= 1")
    model = Model(gravity=(0, 0, -9.81))
    feet, plane = 1, 2  # contype / conaffinity bits: feet touch the plane only
    legs = []  # (hip body, knee body, side ±1, segment)
    parent = None
    for i in range(n):
        seg = model.add_body(
            f"segment{i}",
            parent,
            joint=Free() if i == 0 else Spherical(),
            placement=Transform(translation=(0.0, 0.0, 0.0) if i == 0 else (-SPACING, 0.0, 0.0)),
            inertia=Inertia.box(MASS["segment"], SEGMENT),
        )
        for side, tag in ((1.0, "left"), (-1.0, "right")):
            hip = model.add_body(
                f"upper_{tag}{i}",
                seg,
                joint=Spherical(),
                placement=Transform(translation=(0.0, side * SEGMENT[1] / 2, 0.0)),
                inertia=_rod(MASS["upper"], (0.0, side * UPPER, 0.0)),
            )
            knee = model.add_body(
                f"lower_{tag}{i}",
                hip,
                joint=Revolute((1.0, 0.0, 0.0)),
                placement=Transform(translation=(0.0, side * UPPER, 0.0)),
                inertia=_rod(MASS["lower"], (0.0, 0.0, -LOWER)),
            )
            model.add_geom(
                knee,
                Sphere(FOOT),
                placement=Transform(translation=(0.0, 0.0, -LOWER)),
                friction=friction,
                name=f"foot_{tag}{i}",
                contype=feet,
                conaffinity=plane,
            )
            legs.append((hip, knee, side, i))
        parent = seg
    model.add_geom(None, Plane(), friction=friction, name="ground", contype=plane, conaffinity=feet)
    q = _standing(model)
    return Scene(
        model,
        State(q, np.zeros(model.nv)),
        name=f"centipede:{n}",
        h=1e-3,
        duration=2.0,
        info={"n_segments": n, "nq": model.nq, "nv": model.nv, "n_bodies": model.n_bodies, "feet": 2 * n},
        tau=CentipedeGait(model, legs),
    )


class CentipedeGait:
    """PD tracking of the travelling-wave gait (see the module): tau(t, q, v) -> (nv,).

    period (s), wavelength (segments), amplitude A (rad) of the hip swing, lift (rad) of the knee;
    the gait's amplitude ramps up over its first period (a smooth start from standing).

    The gains are those of a critically damped joint of natural frequency ``omega_n`` (rad/s):
    k_p = m ω², k_d = 2 ζ m ω with m = 1/(M⁻¹)_ii the joint's effective inertia at the standing pose
    (the inertia its torque meets with every other joint free). Scaled so, the explicit PD torques
    are stable at h = 1e-3: the eigenvalues of M⁻¹K_d are 2ζω times those of the unit-diagonal
    D^½M⁻¹D^½ (D = diag(m)), measured ≤ 3.6 for 3 to 30 segments, so h λ_max(M⁻¹K_d) ≈ 0.86 < 2 —
    where gains of one size for all joints were unstable on the light lower legs. A callable, for
    ContactSimulator.run(tau=gait)."""

    def __init__(
        self,
        model: Model,
        legs,
        period: float = 0.6,
        wavelength: float = 6.0,
        amplitude: float = 0.35,
        lift: float = 0.8,
        omega_n: float = 120.0,
        damping_ratio: float = 1.0,
    ):
        self.model = model
        self.legs = list(legs)
        self.period = float(period)
        self.omega = 2 * np.pi / period
        self.wavelength, self.amplitude, self.lift = wavelength, amplitude, lift
        qi, vi = model.q_indices, model.v_indices
        self._hips = np.array([[qi[h], vi[h]] for h, _, _, _ in self.legs])
        self._knees = np.array([[qi[k], vi[k]] for _, k, _, _ in self.legs])
        self._side = np.array([s for _, _, s, _ in self.legs])
        self._segment = np.array([i for _, _, _, i in self.legs])
        segments = sorted({int(model.parents[h]) for h, _, _, _ in self.legs})  # the hips' parents
        self._spine = np.array([[qi[b], vi[b]] for b in segments[1:]], dtype=int).reshape(-1, 2)  # not the head
        q0 = _standing(model)
        # effective inertias at the standing pose: 1/(M⁻¹)_ii, the inertia a joint's torque meets
        # with every other joint free (the floating head included)
        from ..solvers.inverse import inverse_mass_matrix

        m_eff = 1.0 / np.diag(inverse_mass_matrix(model, q0))
        self.kp = m_eff * omega_n**2
        self.kd = 2.0 * damping_ratio * omega_n * m_eff
        # weight support (feed-forward): at the standing pose q₀ the torques that hold the body still
        # with the weight W shared by the feet in stance, τ = g(q₀) − J_zᵀ f, g = rnea(q₀, 0, 0) and
        # J_z the feet's vertical Jacobians; without it the PD alone would sag under the weight
        from .. import _core
        from ..algorithms.dynamics import rnea

        self._gravity = rnea(model, q0, np.zeros(model.nv), np.zeros(model.nv))
        R, p = _core.forward_kinematics(model.core, q0)
        knees = np.array([k for _, k, _, _ in self.legs])
        feet = p[knees] + np.einsum("pij,j->pi", R[knees], (0.0, 0.0, -LOWER - FOOT))
        pairs = np.stack([np.zeros_like(knees), knees], axis=1)
        up = np.tile([[[0.0, 0.0, 1.0]]], (len(knees), 1, 1))
        self._lift_jacobian = _core.contact_jacobian(model.core, q0, pairs, feet, up)  # (nv, legs)
        self.weight = -float(model.gravity[2]) * sum(I.mass for I in model.inertias)

    def _phase(self, t: float) -> np.ndarray:
        """θ = ω t − 2π i / λ of every leg (+π on the right side)."""
        return self.omega * t - 2 * np.pi * self._segment / self.wavelength + np.where(self._side > 0, 0.0, np.pi)

    def targets(self, t: float):
        """Hip swing ψ and knee lift α of every leg at time t (left legs first per segment)."""
        theta = self._phase(t)
        ramp = min(1.0, t / self.period)
        psi = ramp * self.amplitude * np.cos(theta) * self._side
        alpha = ramp * self.lift * np.maximum(0.0, np.sin(theta)) * self._side
        return psi, alpha

    def support(self, t: float) -> np.ndarray:
        """The vertical force (N) each foot is planned to carry at time t: the weight shared by the
        feet in stance (those the gait does not lift)."""
        stance = (np.sin(self._phase(t)) <= 0.0) | (t <= 0.0)
        return np.where(stance, self.weight / max(1, stance.sum()), 0.0)

    def __call__(self, t, q, v) -> np.ndarray:
        tau = -self.kd * v
        psi, alpha = self.targets(t)
        for (iq, iv), yaw in zip(self._hips, psi):  # ball joint: the error rotation R_targetᵀ R
            tau[iv : iv + 3] -= self.kp[iv : iv + 3] * _rotvec_error(q[iq : iq + 4], yaw)
        iq, iv = self._knees[:, 0], self._knees[:, 1]
        tau[iv] += self.kp[iv] * (alpha - q[iq])
        for iq, iv in self._spine:
            tau[iv : iv + 3] -= self.kp[iv : iv + 3] * _rotvec_error(q[iq : iq + 4], 0.0)
        tau += self._gravity - self._lift_jacobian @ self.support(t)
        tau[:6] = 0.0  # the head floats
        return tau


def _standing(model: Model) -> np.ndarray:
    """Legs straight, the head's free joint at HEIGHT less 0.1 mm: every foot touches the ground
    from the first step."""
    from ..algorithms.configuration import neutral

    q = neutral(model)
    q[2] = HEIGHT - 1e-4
    return q


def _rotvec_error(quat_xyzw, yaw: float) -> np.ndarray:
    """The rotation vector of R_targetᵀ R, R_target a turn by `yaw` about z, in the body frame."""
    x, y, z, w = quat_xyzw
    c, s = np.cos(yaw / 2), np.sin(yaw / 2)  # target (0, 0, s, c); conjugate times q
    ex, ey, ez, ew = c * x + s * y, c * y - s * x, c * z - s * w, c * w + s * z
    if ew < 0:
        ex, ey, ez, ew = -ex, -ey, -ez, -ew
    vec = np.array([ex, ey, ez])
    sn = np.linalg.norm(vec)
    if sn < 1e-12:
        return 2.0 * vec
    return 2.0 * np.arctan2(sn, ew) * vec / sn
