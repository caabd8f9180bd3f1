"""Spatial arithmetic for the XLA kernels, in Featherstone's conventions (docs/conventions.md):
motion [ω; v], force [n; f]; a transform (E, r) from frame A to frame B, E rotating A-coordinates
into B-coordinates, r B's origin in A-coordinates. The C++ kernels keep (E, r) and compact
inertias (featherstone-part3); here the transforms become 6 x 6 matrices once per call, because
XLA fuses small dense products over a batch better than it fuses the compact formulas' scalar
code. Every function works on leading axes (bodies, a batch)."""

from __future__ import annotations

import jax.numpy as jnp


def skew(x):
    """x× (…, 3, 3)."""
    z = jnp.zeros_like(x[..., 0])
    return jnp.stack(
        [
            jnp.stack([z, -x[..., 2], x[..., 1]], -1),
            jnp.stack([x[..., 2], z, -x[..., 0]], -1),
            jnp.stack([-x[..., 1], x[..., 0], z], -1),
        ],
        -2,
    )


def plx(E, r):
    """X = [E 0; −E r× E] (…, 6, 6), the motion transform of (E, r) (featherstone-part3 §2)."""
    Z = jnp.zeros_like(E)
    lower = -E @ skew(r)
    return jnp.concatenate([jnp.concatenate([E, Z], -1), jnp.concatenate([lower, E], -1)], -2)


def compose(E1, r1, E2, r2):
    """X1 X2 = plx(E1 E2, r2 + E2ᵀ r1)."""
    return E1 @ E2, r2 + jnp.einsum("...ji,...j->...i", E2, r1)


def cross_motion(v, m):
    """v × m = [ω × m_ω; ω × m_v + v_v × m_ω] for motions v = [ω; v_v], m (RBDA eq. 2.31)."""
    w, u, a, b = v[..., :3], v[..., 3:], m[..., :3], m[..., 3:]
    return jnp.concatenate([jnp.cross(w, a), jnp.cross(w, b) + jnp.cross(u, a)], -1)


def cross_force(v, f):
    """v ×* f = [ω × n + v_v × f_f; ω × f_f] for a motion v and a force f = [n; f_f] (RBDA eq. 2.32)."""
    w, u, n, g = v[..., :3], v[..., 3:], f[..., :3], f[..., 3:]
    return jnp.concatenate([jnp.cross(w, n) + jnp.cross(u, g), jnp.cross(w, g)], -1)


def mv(A, x):
    """A x over leading axes."""
    return jnp.einsum("...ij,...j->...i", A, x)


def mtv(A, x):
    """Aᵀ x over leading axes."""
    return jnp.einsum("...ji,...j->...i", A, x)


def congruence(X, I):
    """Xᵀ I X: an inertia in B-coordinates expressed in A-coordinates."""
    return jnp.swapaxes(X, -1, -2) @ I @ X


def axis_angle(a, theta):
    """The rotation by θ about the unit vector a (Rodrigues), (…, 3, 3)."""
    c, s = jnp.cos(theta)[..., None, None], jnp.sin(theta)[..., None, None]
    aa = a[..., :, None] * a[..., None, :]
    eye = jnp.eye(3, dtype=a.dtype)
    return c * eye + (1 - c) * aa + s * skew(a)


def quat_rotation(q):
    """The rotation of the quaternion (x, y, z, w), normalising it as the C++ kernels do."""
    x, y, z, w = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    s = 2 / (x * x + y * y + z * z + w * w)
    rows = [
        [1 - s * (y * y + z * z), s * (x * y - z * w), s * (x * z + y * w)],
        [s * (x * y + z * w), 1 - s * (x * x + z * z), s * (y * z - x * w)],
        [s * (x * z - y * w), s * (y * z + x * w), 1 - s * (x * x + y * y)],
    ]
    return jnp.stack([jnp.stack(r, -1) for r in rows], -2)
