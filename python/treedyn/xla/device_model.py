"""A treedyn Model as the XLA kernels read it: the tree's structure as static numpy arrays (what
the traced code is specialised to: levels, joint kinds, coordinate maps) and its numbers as device
arrays in one precision, moved to the device once (``DeviceModel``)."""

from __future__ import annotations

from dataclasses import dataclass

import jax
import numpy as np

from ..model import Model

# joint kinds as the C++ model numbers them (cpp/include/treedyn/model/model.hpp)
FIXED, REVOLUTE, PRISMATIC, UNIVERSAL, SPHERICAL, FREE = range(6)


@dataclass(frozen=True, eq=False)
class Structure:
    """The tree's structure, fixed when the model is moved (the traced code is specialised to it).

    levels[d]: the bodies at depth d + 1 (children of the world first); segments: the levels as the
    passes walk them (tree.py: runs of levels with the same joint width, each a Segment); kind, nv_i, parent per body
    (body 0, the world, included); dof (N + 1, K): body i's velocity coordinates, padded with nv;
    qpos (N + 1, 7): its position coordinates, padded with nq; K: the most velocity coordinates of
    one joint; body_order: the model's body of each body here (levels are runs
    of consecutive bodies); dof_body, dof_column: the body and the column of S of each velocity coordinate; by_kind: the bodies of each joint kind present; ancestor (nv, nv): coordinate d's
    body is an ancestor of coordinate e's body or the same body; chain: the model is an unbranched
    chain of 1-DoF joints fixed to the world (what CFA takes)."""

    N: int
    nq: int
    nv: int
    K: int
    parent: np.ndarray
    kind: np.ndarray
    nv_i: np.ndarray
    levels: tuple
    dof: np.ndarray
    qpos: np.ndarray
    by_kind: dict
    segments: tuple
    ancestor: np.ndarray
    dof_body: np.ndarray
    dof_column: np.ndarray
    body_order: np.ndarray


@dataclass(frozen=True, eq=False)
class Level:
    """One level of the tree as the passes hold it: its bodies (W,), each one's parent's position in
    the previous level's array (W,; the world is a level of one), the width of that array, the
    bodies' velocity coordinates (W, k) and which of those are padding (W, k). A scanned segment's
    levels are all W wide, padded with bodies N + 1 whose parent position is out of range (they read
    zeros and add nowhere); its levels after the first are one Level with a leading axis."""

    bodies: np.ndarray
    parent_position: np.ndarray
    parent_width: int
    dofs: np.ndarray
    pad: np.ndarray


@dataclass(frozen=True, eq=False)
class Segment:
    """Consecutive levels of one joint width k: unrolled (``levels``) when there are few, else the
    first level (``levels[0]``, padded) and the others stacked for ``jax.lax.scan`` (``stacked``)."""

    k: int
    levels: tuple
    stacked: Level | None


#: a run of more levels than this is scanned (one compiled loop body) instead of unrolled: unrolled
#: levels let XLA fuse across them (faster for robots a few levels deep), but compile in time
#: proportional to the depth (about 0.5 s a level on a 2-core machine)
UNROLL_LEVELS = 16


def _segments(levels, parent, dof, nv_i, nv, N):
    runs = []
    for bodies in levels:
        k = max(int(nv_i[bodies].max()), 1)
        if runs and runs[-1][0] == k:
            runs[-1][1].append(bodies)
        else:
            runs.append((k, [bodies]))
    position = np.zeros(N + 2, dtype=np.int64)  # a body's position in its level's array
    for bodies in levels:
        position[bodies] = np.arange(len(bodies))
    out, prev_width = [], 1  # the world: a level of one
    for k, run in runs:
        scanned = len(run) > UNROLL_LEVELS
        W = max(len(b) for b in run) if scanned else None
        made = []
        for b in run:
            width = W if scanned else len(b)
            bodies = np.full(width, N + 1)
            bodies[: len(b)] = b
            pp = np.full(width, 1 << 30)  # padding: out of range
            pp[: len(b)] = position[parent[b]]
            dofs = np.full((width, k), nv)
            dofs[: len(b)] = dof[b, :k]
            made.append(Level(bodies, pp, prev_width, dofs, dofs == nv))
            prev_width = width
        if not scanned:
            out.append(Segment(k, tuple(made), None))
            continue
        rest = made[1:]
        stacked = Level(
            np.stack([lv.bodies for lv in rest]),
            np.stack([lv.parent_position for lv in rest]),
            W,
            np.stack([lv.dofs for lv in rest]),
            np.stack([lv.pad for lv in rest]),
        )
        out.append(Segment(k, (made[0],), stacked))
    return tuple(out)


class DeviceModel:
    """The model's numbers on one JAX device in one precision, and its ``structure``.

    arrays: E_T, r_T (N + 1, 3, 3), (N + 1, 3) the joint placements as (E, r); axis, axis2 (N + 1, 3);
    inertia (N + 1, 6, 6) the spatial inertias about the body origins; gravity (3,); armature,
    stiffness, damping (nv,), q_rest (nq,): the passive joint terms (algorithms/passive.hpp); on a chain of
    1-DoF joints also S_unit, J_inv, W (chain_arrays)."""

    def __init__(self, model: Model, dtype=np.float64, device=None):
        core = model.core
        N, nq, nv = core.N, core.nq, core.nv
        parent = np.array(core.parent, dtype=np.int64)
        kind = np.array(core.kind, dtype=np.int64)
        nv_i, nq_i = np.array(core.nv_i), np.array(core.nq_i)
        qi, vi = np.array(core.q_index), np.array(core.v_index)
        depth = np.zeros(N + 1, dtype=np.int64)
        for i in range(1, N + 1):
            depth[i] = depth[parent[i]] + 1
        # the bodies renumbered level by level (breadth first), so that each level is a run of
        # consecutive bodies: a pass then reads and writes a level's rows as one slice
        perm = np.argsort(depth, kind="stable")  # new body -> the model's body
        inv = np.empty_like(perm)
        inv[perm] = np.arange(N + 1)
        parent = np.concatenate([[-1], inv[parent[perm[1:]]]])
        kind, nv_i, nq_i, qi, vi, depth = (x[perm] for x in (kind, nv_i, nq_i, qi, vi, depth))
        levels = tuple(np.flatnonzero(depth == d) for d in range(1, int(depth.max(initial=0)) + 1))
        K = max(int(nv_i.max(initial=0)), 1)
        dof = np.full((N + 1, K), nv, dtype=np.int64)
        qpos = np.full((N + 1, 7), nq, dtype=np.int64)
        body_of, column = np.zeros(nv, dtype=np.int64), np.zeros(nv, dtype=np.int64)  # per velocity coordinate
        for i in range(1, N + 1):
            dof[i, : nv_i[i]] = vi[i] + np.arange(nv_i[i])
            qpos[i, : nq_i[i]] = qi[i] + np.arange(nq_i[i])
            body_of[dof[i, : nv_i[i]]], column[dof[i, : nv_i[i]]] = i, np.arange(nv_i[i])
        anc = np.zeros((N + 1, N + 1), dtype=bool)  # anc[a, b]: a is b or an ancestor of b
        for b in range(1, N + 1):
            a = b
            while a > 0:
                anc[a, b] = True
                a = parent[a]
        armature = np.array(core.armature)
        self.structure = Structure(
            N=N,
            nq=nq,
            nv=nv,
            K=K,
            parent=parent,
            kind=kind,
            nv_i=nv_i,
            levels=levels,
            segments=_segments(levels, parent, dof, nv_i, nv, N),
            dof=dof,
            qpos=qpos,
            by_kind={k: np.flatnonzero(kind == k) for k in range(1, 6) if np.any(kind == k)},
            ancestor=anc[np.ix_(body_of, body_of)],
            dof_body=body_of,
            dof_column=column,
            body_order=perm,
        )
        E_T = np.zeros((N + 1, 3, 3))
        r_T = np.zeros((N + 1, 3))
        inertia = np.zeros((N + 1, 6, 6))
        axis, axis2 = np.zeros((N + 1, 3)), np.zeros((N + 1, 3))
        E_T[0] = np.eye(3)
        for i, joint in enumerate(model.joints[1:], start=1):
            E_T[i], r_T[i] = core.placement(i)
            inertia[i] = core.spatial_inertia(i)
            axis[i], axis2[i] = joint._axes()
        E_T, r_T, inertia, axis, axis2 = (x[perm] for x in (E_T, r_T, inertia, axis, axis2))
        self.dtype = np.dtype(dtype)
        self.device = device
        host = dict(
            E_T=E_T,
            r_T=r_T,
            axis=axis,
            axis2=axis2,
            inertia=inertia,
            gravity=np.array(core.gravity),
            armature=armature,
            stiffness=np.array(core.stiffness),
            damping=np.array(core.damping),
            q_rest=np.array(core.q_rest),
        )
        if _is_chain(parent, nv_i) and N:  # what CFA reads (xla/cfa.py; a chain's order is unchanged)
            host.update(chain_arrays(model))
        with jax.enable_x64(self.dtype == np.float64):
            self.arrays = {k: jax.device_put(np.asarray(v, dtype=self.dtype), device) for k, v in host.items()}


def _is_chain(parent, nv_i):
    return bool(np.all(parent[1:] == np.arange(len(parent) - 1)) and np.all(nv_i[1:] == 1))


def chain_arrays(model):
    """The chain's constants in link coordinates (Alg. 1's inputs that q does not change): S_unit
    (N, 6) the joints' unit axes, J_inv (N, 6, 6) the links' inverse spatial inertias, W (N, 6, 5) an
    orthonormal basis of each S_i's complement: the last five columns of the Householder reflector
    H = 1 − 2uuᵀ/uᵀu, u = S_i ± e_1 (the sign of S_i's first entry), which maps S_i to ∓e_1 (cfa.hpp's)."""
    core, N = model.core, model.core.N
    S = np.zeros((N, 6))
    for i, joint in enumerate(model.joints[1:]):
        a = np.asarray(joint._axes()[0], dtype=float)
        if core.kind[i + 1] == REVOLUTE:  # [a; 0]
            S[i, :3] = a
        else:  # prismatic: [0; a]
            S[i, 3:] = a
    S /= np.linalg.norm(S, axis=1, keepdims=True)
    u = S.copy()
    u[:, 0] += np.where(S[:, 0] >= 0, 1.0, -1.0)
    H = np.eye(6) - 2 * u[:, :, None] * u[:, None, :] / np.sum(u * u, 1)[:, None, None]
    J = np.stack([core.spatial_inertia(i) for i in range(1, N + 1)])
    if not all(np.all(np.linalg.eigvalsh(Ji) > 0) for Ji in J):
        return {}  # a link without J_i⁻¹: CFA refuses the model (XlaCFASolver)
    return {"S_unit": S, "J_inv": np.linalg.inv(J), "W": H[:, :, 1:]}
