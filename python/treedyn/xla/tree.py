"""The passes over the tree that every XLA kernel shares, level by level: a level's bodies are
independent (their parents are all in earlier levels), so each level is one vectorised step over
its bodies, and a pass takes depth-many steps, not N. A level's joints are padded to the widest
(k columns of S); a padded coordinate reads and writes the extra slot nv of a velocity-sized
vector, and its pivot is 1. Runs of many levels of one width are a ``jax.lax.scan`` (one compiled
step; padded bodies N + 1 are out of range, read as zeros and written nowhere), the others are
unrolled (device_model.Segment)."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from jax import lax

from .device_model import Level
from .joints import body_rates, joint_bias, joint_transforms, motion_subspace
from .spatial import cross_motion, mv


def _static_range(idx):
    """slice(a, b) when idx is a static run a, a + 1, …, b − 1, else None."""
    if isinstance(idx, np.ndarray) and idx.ndim == 1 and len(idx) and np.all(np.diff(idx) == 1):
        return slice(int(idx[0]), int(idx[-1]) + 1)
    return None


def take(x, idx):
    """x[idx]; a scanned level's out-of-range padding reads zeros. Static indices (unrolled levels)
    are in range: a run of them is a slice, others a gather without bounds masks."""
    if isinstance(idx, np.ndarray):
        run = _static_range(idx)
        return x[run] if run is not None else x.at[idx].get(mode="promise_in_bounds")
    return x.at[idx].get(mode="fill", fill_value=0)


def put(x, idx, y):
    """x with x[idx] = y; out-of-range (padding) idx dropped."""
    if isinstance(idx, np.ndarray):
        run = _static_range(idx)
        return x.at[run].set(y) if run is not None else x.at[idx].set(y, mode="promise_in_bounds")
    return x.at[idx].set(y, mode="drop")


def add(x, idx, y):
    """x with x[idx] += y (repeated idx accumulate); out-of-range (padding) idx dropped."""
    if isinstance(idx, np.ndarray):
        run = _static_range(idx)
        return x.at[run].add(y) if run is not None else x.at[idx].add(y, mode="promise_in_bounds")
    return x.at[idx].add(y, mode="drop")


def over_levels(st, step, carry, reverse=False, saved=None):
    """(carry, outputs): carry, y = step(carry, level, k, x) for every level, the root's first (or,
    reverse, the leaves' first); x is what step returned for that level in an earlier pass (its
    ``outputs``, given as ``saved``), else None."""
    order = range(len(st.segments))
    outputs = [None] * len(st.segments)
    for i in reversed(order) if reverse else order:
        seg, xs = st.segments[i], None if saved is None else saved[i]
        if seg.stacked is None:
            ys = [None] * len(seg.levels)
            for j in reversed(range(len(seg.levels))) if reverse else range(len(seg.levels)):
                carry, ys[j] = step(carry, seg.levels[j], seg.k, None if xs is None else xs[j])
            outputs[i] = ys
        else:
            lv = seg.stacked

            def body(c, inp, k=seg.k):
                (b, p, d, pad), x = inp
                return step(c, Level(b, p, d, pad), k, x)

            carry, outputs[i] = lax.scan(body, carry, ((lv.bodies, lv.parents, lv.dofs, lv.pad), xs), reverse=reverse)
    return carry, outputs


def padded(x):
    """x (nv,) with the extra slot nv = 0."""
    return jnp.concatenate([x, jnp.zeros(1, x.dtype)])


def spatial_gravity(A):
    """a_0 = −a_g = [0; −g] (Featherstone's fictitious base acceleration)."""
    return jnp.concatenate([jnp.zeros(3, A["gravity"].dtype), -A["gravity"]])


def propagate(st, X, b, start):
    """x_i = X_i x_λ(i) + b_i from the root out (x_0 = start): velocities, accelerations."""

    def step(x, lv, k, _):
        return put(x, lv.bodies, mv(take(X, lv.bodies), take(x, lv.parents)) + take(b, lv.bodies)), None

    x0 = jnp.zeros_like(b).at[0].set(start)
    return over_levels(st, step, x0)[0]


def accumulate(st, X, f):
    """f_λ(i) += X_iᵀ f_i from the leaves in: forces (a body's own plus its subtree's)."""

    def step(f, lv, k, _):
        return add(f, lv.parents, jnp.einsum("bji,bj->bi", take(X, lv.bodies), take(f, lv.bodies))), None

    return over_levels(st, step, f, reverse=True)[0]


def kinematics(st, A, q, qd):
    """^iX_λ (N + 1, 6, 6), S (N + 1, 6, K), the body velocities v_i = X_i v_λ + S_i q̇_i and the
    velocity-product accelerations c_i = v_i × S_i q̇_i + c_J (RBDA Table 7.1), body 0 at rest."""
    X = joint_transforms(st, A, q)
    S = motion_subspace(st, A, q)
    vJ = jnp.einsum("bik,bk->bi", S, body_rates(st, qd))
    v = propagate(st, X, vJ, jnp.zeros(6, q.dtype))
    c = cross_motion(v, vJ) + joint_bias(st, A, S, qd)
    return X, S, v, c


def external(st, f_ext, dtype):
    """f_ext as (N + 1, 6) (zeros when None)."""
    return jnp.zeros((st.N + 1, 6), dtype) if f_ext is None else f_ext.astype(dtype)
