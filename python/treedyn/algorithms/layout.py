"""Coordinate layouts: treedyn's (q, v) and another library's for the same joints.

treedyn's quaternions are (x, y, z, w) and a free joint's velocity is its body's twist in body
axes (v, ω); MuJoCo's quaternions are (w, x, y, z) and its free joint's linear velocity is in world
axes. ``MujocoLayout(model)`` maps states, accelerations and generalized forces between the two for
a model whose joints are MuJoCo's in MuJoCo's order (an MJCF model: treedyn keeps the file's order);
``CoordinateMap`` is the block map it and treedyn.peers' Pinocchio and MuJoCo maps share.
"""

from __future__ import annotations

import numpy as np

from ..model import Free, Model, Spherical
from ..model.cache import cached

__all__ = ["CoordinateMap", "MujocoLayout", "mujoco_layout", "quaternion_matrix"]


def quaternion_matrix(xyzw) -> np.ndarray:
    """The rotation of a quaternion in treedyn's order (x, y, z, w), normalised first."""
    x, y, z, w = np.asarray(xyzw, dtype=float) / np.linalg.norm(xyzw)
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
    ])  # fmt: skip


class CoordinateMap:
    """treedyn's coordinates ↔ another library's for the same joints (a peer's: treedyn.peers;
    MuJoCo's layout: MujocoLayout), block by block. Velocities map linearly,
    v_peer = T(q) v; then M = Tᵀ M_peer T, c = Tᵀ (c_peer + M_peer Ṫv), q̈ = T⁻¹ (q̈_peer − Ṫv) and
    τ_peer = T⁻ᵀ τ. T is the identity except for the joints whose parametrisations differ:

    * ``"angle-cs"``: an angle θ ↔ Pinocchio's unbounded revolute (cos θ, sin θ), same velocity;
    * ``"planar"``: treedyn's (x, y, θ) with velocity (ẋ, ẏ, θ̇) ↔ Pinocchio's planar
      (x, y, cos θ, sin θ) with velocity (R(θ)ᵀ(ẋ, ẏ), θ̇) (in the moving frame);
    * ``"ball"``: quaternion (x, y, z, w) ↔ MuJoCo's (w, x, y, z), same velocity;
    * ``"free-mj"``: (p, quaternion xyzw) and body-frame (v, ω) ↔ MuJoCo's (p, quaternion wxyz)
      and (ṗ = R v in world coordinates, ω in the body frame).
    """

    def __init__(self, model: Model, nq_peer: int, nv_peer: int, blocks):
        self.model = model
        self.nq_peer, self.nv_peer = nq_peer, nv_peer
        self.blocks = blocks  # [(kind, iq, iv, pq, pv)]; kind "same" carries (nq, nv)

    def q(self, q) -> np.ndarray:
        q = np.asarray(q, dtype=float)
        out = np.zeros(self.nq_peer)
        for kind, iq, iv, pq, pv in self.blocks:  # noqa: B007 (the blocks' layout, not all used in each map)
            if kind[0] == "same":
                out[pq : pq + kind[1]] = q[iq : iq + kind[1]]
            elif kind == "angle-cs":
                out[pq : pq + 2] = np.cos(q[iq]), np.sin(q[iq])
            elif kind == "planar":
                out[pq : pq + 4] = q[iq], q[iq + 1], np.cos(q[iq + 2]), np.sin(q[iq + 2])
            elif kind == "ball":
                out[pq : pq + 4] = q[iq + 3], q[iq], q[iq + 1], q[iq + 2]
            elif kind == "free-mj":
                out[pq : pq + 7] = *q[iq : iq + 3], q[iq + 6], q[iq + 3], q[iq + 4], q[iq + 5]
        return out

    def T(self, q) -> np.ndarray:
        q = np.asarray(q, dtype=float)
        T = np.zeros((self.nv_peer, self.model.nv))
        for kind, iq, iv, pq, pv in self.blocks:  # noqa: B007 (the blocks' layout, not all used in each map)
            if kind[0] == "same":
                T[pv : pv + kind[2], iv : iv + kind[2]] = np.eye(kind[2])
            elif kind in ("angle-cs",):
                T[pv, iv] = 1.0
            elif kind == "ball":
                T[pv : pv + 3, iv : iv + 3] = np.eye(3)
            elif kind == "planar":
                c, s = np.cos(q[iq + 2]), np.sin(q[iq + 2])
                T[pv : pv + 3, iv : iv + 3] = [[c, s, 0], [-s, c, 0], [0, 0, 1]]
            elif kind == "free-mj":
                T[pv : pv + 3, iv : iv + 3] = quaternion_matrix(q[iq + 3 : iq + 7])
                T[pv + 3 : pv + 6, iv + 3 : iv + 6] = np.eye(3)
        return T

    def Tdot_v(self, q, v) -> np.ndarray:
        q, v = np.asarray(q, dtype=float), np.asarray(v, dtype=float)
        out = np.zeros(self.nv_peer)
        for kind, iq, iv, pq, pv in self.blocks:  # noqa: B007 (the blocks' layout, not all used in each map)
            if kind == "planar":
                c, s, w = np.cos(q[iq + 2]), np.sin(q[iq + 2]), v[iv + 2]
                out[pv : pv + 2] = w * np.array([[-s, c], [-c, -s]]) @ v[iv : iv + 2]
            elif kind == "free-mj":  # d/dt (R v) = R (ω × v) + R v̇
                R = quaternion_matrix(q[iq + 3 : iq + 7])
                out[pv : pv + 3] = R @ np.cross(v[iv + 3 : iv + 6], v[iv : iv + 3])
        return out

    def apply_T(self, q, x, transpose: bool = False) -> np.ndarray:
        """T(q) x (or T(q)ᵀ x) block by block, in O(n) without forming T. Every block of T is
        orthogonal (identities and rotations), so Tᵀ = T⁻¹ and a generalized force maps as
        τ_peer = T⁻ᵀ τ = T τ."""
        q, x = np.asarray(q, dtype=float), np.asarray(x, dtype=float)
        src, dst = (self.model.nv, self.nv_peer) if not transpose else (self.nv_peer, self.model.nv)
        if x.shape != (src,):
            raise ValueError(f"apply_T: x must have shape ({src},), got {x.shape}")
        out = np.zeros(dst)
        for kind, iq, iv, pq, pv in self.blocks:  # noqa: B007 (the blocks' layout, not all used in each map)
            n = kind[2] if kind[0] == "same" else {"angle-cs": 1, "planar": 3, "ball": 3, "free-mj": 6}[kind]
            a, b = (iv, pv) if not transpose else (pv, iv)
            block = x[a : a + n].copy()
            if kind == "planar":
                c, s = np.cos(q[iq + 2]), np.sin(q[iq + 2])
                Rz = np.array([[c, s], [-s, c]])
                block[:2] = (Rz if not transpose else Rz.T) @ block[:2]
            elif kind == "free-mj":
                R = quaternion_matrix(q[iq + 3 : iq + 7])
                block[:3] = (R if not transpose else R.T) @ block[:3]
            out[b : b + n] = block
        return out

    def from_peer(self, q_peer, v_peer) -> tuple[np.ndarray, np.ndarray]:
        """treedyn's (q, v) of the peer's state: the inverse of ``q`` and of v_peer = T(q) v."""
        qp = np.asarray(q_peer, dtype=float)
        q = np.zeros(self.model.nq)
        for kind, iq, iv, pq, pv in self.blocks:  # noqa: B007 (the blocks' layout, not all used in each map)
            if kind[0] == "same":
                q[iq : iq + kind[1]] = qp[pq : pq + kind[1]]
            elif kind == "angle-cs":
                q[iq] = np.arctan2(qp[pq + 1], qp[pq])
            elif kind == "planar":
                q[iq : iq + 3] = qp[pq], qp[pq + 1], np.arctan2(qp[pq + 3], qp[pq + 2])
            elif kind == "ball":
                q[iq : iq + 4] = qp[pq + 1], qp[pq + 2], qp[pq + 3], qp[pq]
            elif kind == "free-mj":
                q[iq : iq + 7] = *qp[pq : pq + 3], qp[pq + 4], qp[pq + 5], qp[pq + 6], qp[pq + 3]
        return q, self.apply_T(q, v_peer, transpose=True)


class MujocoLayout(CoordinateMap):
    """MuJoCo's qpos, qvel, qacc and qfrc of a treedyn model (``td.mujoco_layout(model)``): its joints
    in treedyn's order, a free joint's (p, quaternion w x y z) and (ṗ in world axes, ω in body axes),
    a ball joint's quaternion (w, x, y, z), every other coordinate as it is. qvel = T(q) v, qacc =
    T(q) a + Ṫ v, qfrc = T(q) τ (T is orthogonal block by block: a force maps as a velocity)."""

    def __init__(self, model: Model):
        blocks = []
        nq = nv = 0
        for i, j in enumerate(model.joints):
            if j.nv == 0:
                continue
            kind = "free-mj" if isinstance(j, Free) else "ball" if isinstance(j, Spherical) else ("same", j.nq, j.nv)
            blocks.append((kind, model.q_indices[i], model.v_indices[i], nq, nv))
            nq, nv = nq + j.nq, nv + j.nv
        super().__init__(model, nq, nv, blocks)

    def qpos(self, q) -> np.ndarray:
        """MuJoCo's qpos of treedyn's q."""
        return self.q(q)

    def qvel(self, q, v) -> np.ndarray:
        """MuJoCo's qvel of treedyn's v at q."""
        return self.apply_T(q, v)

    def qacc(self, q, v, a) -> np.ndarray:
        """MuJoCo's qacc of treedyn's acceleration a at (q, v): T a + Ṫ v."""
        return self.apply_T(q, a) + self.Tdot_v(q, v)

    def qfrc(self, q, tau) -> np.ndarray:
        """MuJoCo's generalized force (qfrc_applied) of treedyn's τ at q: T τ (= T⁻ᵀ τ)."""
        return self.apply_T(q, tau)

    def state(self, qpos, qvel) -> tuple[np.ndarray, np.ndarray]:
        """treedyn's (q, v) of MuJoCo's (qpos, qvel)."""
        return self.from_peer(qpos, qvel)

    def tau(self, q, qfrc) -> np.ndarray:
        """treedyn's τ of MuJoCo's generalized force at q: Tᵀ qfrc."""
        return self.apply_T(q, qfrc, transpose=True)


def mujoco_layout(model: Model) -> MujocoLayout:
    """The model's MujocoLayout (made once per model revision): ``layout.qpos(q)``,
    ``layout.qvel(q, v)``, ``layout.state(qpos, qvel)`` and the acceleration and force maps."""
    from .. import _checks as C

    C.instance(model, Model, "model")
    return cached(model, "mujoco_layout", lambda m, _key: MujocoLayout(m))
