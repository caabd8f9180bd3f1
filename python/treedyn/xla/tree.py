"""The passes over the tree that every XLA kernel shares, level by level: a level's bodies are
independent (their parents are all in earlier levels), so each level is one vectorised step over
its bodies, and a pass takes depth-many steps, not N. A level's joints are padded to the widest
(k columns of S); a padded coordinate reads and writes the extra slot nv of a velocity-sized
vector, and its pivot is 1. Each level's values are held in arrays of that level alone (split,
assemble), so that a step reads its parents from the previous level's small array and adds into
it, never into arrays over all bodies (XLA on the CPU copied such an array for every level's
update: 3.5 ms a level for 1 024 Talos). Runs of many levels of one width are a ``jax.lax.scan``
(one compiled step; padded bodies N + 1 read zeros and add nowhere), the others are unrolled
(device_model.Segment)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from .device_model import Level
from .joints import body_rates, joint_bias, joint_transforms, motion_subspace
from .spatial import cross_motion, mv


def _rows(a, idx):
    """a's rows at idx: a static run of consecutive rows (a level's bodies, numbered level by level:
    device_model) as a slice, reshaped when idx is (L, W); otherwise a gather with zeros where idx is
    out of range (a scanned level's padding)."""
    if isinstance(idx, np.ndarray) and idx.size and np.all(np.diff(idx.reshape(-1)) == 1) and idx.max() < len(a):
        first = int(idx.reshape(-1)[0])
        return a[first : first + idx.size].reshape(idx.shape + a.shape[1:])
    return a.at[idx].get(mode="fill", fill_value=0)


def _gather(tree, idx):
    """Each leaf's rows at idx (_rows)."""
    return jax.tree.map(lambda a: _rows(a, idx), tree)


def _scatter_sum(tree, idx, width):
    """Rows of each leaf summed into ``width`` rows at idx; out-of-range idx (padding) dropped."""
    return jax.tree.map(lambda a: jnp.zeros((width,) + a.shape[1:], a.dtype).at[idx].add(a, mode="drop"), tree)


def _stacked_level(seg):
    lv = seg.stacked
    return (lv.bodies, lv.parent_position, lv.dofs, lv.pad)


def split(st, x):
    """A body-indexed array (N + 1, …) as the passes hold it, level by level: per segment, a list of
    its levels' rows (unrolled), or [the first level's rows (W, …), the others' (L − 1, W, …)]."""
    out = []
    for seg in st.segments:
        parts = [_gather(x, lv.bodies) for lv in seg.levels]
        if seg.stacked is not None:
            parts.append(_gather(x, seg.stacked.bodies))
        out.append(parts)
    return out


def zip_levels(*parts):
    """Several level-by-level values as one of tuples."""
    return [[tuple(p[s][j] for p in parts) for j in range(len(parts[0][s]))] for s in range(len(parts[0]))]


def assemble(st, parts, world):
    """Level-by-level rows back into one body-indexed array (N + 1, …), row 0 ``world``."""
    rows, bodies = [world[None]], [np.zeros(1, np.int64)]
    for seg, seg_parts in zip(st.segments, parts):
        for lv, x in zip(seg.levels, seg_parts):
            rows.append(x)
            bodies.append(lv.bodies)
        if seg.stacked is not None:
            x = seg_parts[-1]
            rows.append(x.reshape((-1,) + x.shape[2:]))
            bodies.append(seg.stacked.bodies.reshape(-1))
    where = np.zeros(st.N + 2, np.int64)
    order = np.concatenate(bodies)
    where[order] = np.arange(len(order))
    return jnp.concatenate(rows)[where[: st.N + 1]]


def downward(st, step, start, ins):
    """From the root out: y = step(y of each body's parent, ins of the level, level, k) for every level
    (the world's y: ``start``); ``ins`` as split gives it. Returns the ys, level by level."""
    prev = jax.tree.map(lambda a: a[None], start)
    out = []
    for seg, seg_ins in zip(st.segments, ins):
        ys = []
        for lv, x in zip(seg.levels, seg_ins):
            prev = step(_gather(prev, lv.parent_position), x, lv, seg.k)
            ys.append(prev)
        if seg.stacked is not None:
            width = seg.stacked.parent_width

            def body(p, inp, k=seg.k, width=width):
                (b, pp, d, pad), x = inp
                y = step(_gather(p, pp), x, Level(b, pp, width, d, pad), k)
                return y, y

            prev, rest = lax.scan(body, prev, (_stacked_level(seg), seg_ins[-1]))
            ys.append(rest)
        out.append(ys)
    return out


def upward(st, step, zero, ins):
    """From the leaves in: (up, out) = step(the sum of the level's children's ups, ins of the level,
    level, k) for every level (a level without children gets zero(W)); ``up`` goes to the parent.
    Returns the outs, level by level."""
    carry = None
    out = [None] * len(st.segments)
    for s in reversed(range(len(st.segments))):
        seg, seg_ins = st.segments[s], ins[s]
        outs = [None] * len(seg_ins)
        if seg.stacked is not None:
            width = seg.stacked.parent_width

            def body(c, inp, k=seg.k, width=width):
                (b, pp, d, pad), x = inp
                up, o = step(c, x, Level(b, pp, width, d, pad), k)
                return _scatter_sum(up, pp, width), o

            carry = zero(width) if carry is None else carry
            carry, outs[-1] = lax.scan(body, carry, (_stacked_level(seg), seg_ins[-1]), reverse=True)
        for j in reversed(range(len(seg.levels))):
            lv = seg.levels[j]
            up, outs[j] = step(zero(len(lv.bodies)) if carry is None else carry, seg_ins[j], lv, seg.k)
            carry = _scatter_sum(up, lv.parent_position, lv.parent_width)
        out[s] = outs
    return out


def scatter_coordinates(st, x, parts):
    """x (nv + 1,) with each level's coordinate values (W, k) written at its dofs (padding: slot nv)."""
    for seg, seg_parts in zip(st.segments, parts):
        for lv, y in zip(seg.levels, seg_parts):
            x = x.at[lv.dofs].set(y)
        if seg.stacked is not None:
            x = x.at[seg.stacked.dofs].set(seg_parts[-1])
    return x


def padded(x):
    """x (nv,) with the extra slot nv = 0."""
    return jnp.concatenate([x, jnp.zeros(1, x.dtype)])


def spatial_gravity(A):
    """a_0 = −a_g = [0; −g] (Featherstone's fictitious base acceleration)."""
    return jnp.concatenate([jnp.zeros(3, A["gravity"].dtype), -A["gravity"]])


def propagate(st, X, b, start):
    """x_i = X_i x_λ(i) + b_i from the root out (x_0 = start): velocities, accelerations."""
    ys = downward(st, lambda p, x, lv, k: mv(x[0], p) + x[1], start, zip_levels(split(st, X), split(st, b)))
    return assemble(st, ys, start)


def accumulate(st, X, f):
    """F_i = f_i + Σ_children X_cᵀ F_c from the leaves in: a body's force and its subtree's."""

    def step(from_children, x, lv, k):
        F = x[1] + from_children
        return jnp.einsum("bji,bj->bi", x[0], F), F

    outs = upward(st, step, lambda w: jnp.zeros((w, 6), f.dtype), zip_levels(split(st, X), split(st, f)))
    return assemble(st, outs, f[0])


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
    """f_ext (the model's body order) as (N + 1, 6) in this body order (zeros when None)."""
    return jnp.zeros((st.N + 1, 6), dtype) if f_ext is None else f_ext.astype(dtype)[st.body_order]
