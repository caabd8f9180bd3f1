"""MuJoCo's soft contacts and limits for the C++ step (``ContactSimulator(soft=True)``;
cpp/include/treedyn/contact/soft.hpp, docs/contact.md "Soft constraints"): each candidate pair's
solref and solimp (an explicit pair's own, else its two geoms' mixed by their solmix, as MuJoCo's
mj_contactParam mixes them), each limit bound's, and MuJoCo's approximate inverse inertias at the
model's reference pose (its body_invweight0 and dof_invweight0, mj_setConst)."""

from __future__ import annotations

import numpy as np

from ..model.cache import cached
from ..solvers.inverse import inverse_mass_matrix


def _mixed(a, b) -> tuple:
    """Two geoms' (solref, solimp) mixed: weight solmix_a/(solmix_a + solmix_b) (0.5 if both are 0,
    the other's alone if one is); solref mixed when both are time constants, else the smaller of each."""
    tiny = 1e-15
    if a.solmix >= tiny and b.solmix >= tiny:
        w = a.solmix / (a.solmix + b.solmix)
    else:
        w = 0.5 if a.solmix < tiny and b.solmix < tiny else (0.0 if a.solmix < tiny else 1.0)
    ra, rb = np.array(a.solref), np.array(b.solref)
    ref = w * ra + (1 - w) * rb if ra[0] > 0 and rb[0] > 0 else np.minimum(ra, rb)
    imp = w * np.array(a.solimp) + (1 - w) * np.array(b.solimp)
    return tuple(ref), tuple(imp)


def _explicit(model, _key=None) -> dict:
    """{(i, j): (solref, solimp)} of the explicit pairs, what they leave None mixed from the geoms."""
    geoms, out = model.geoms, {}
    for c in model.contact_pairs:
        ref, imp = _mixed(geoms[c.geom1], geoms[c.geom2])
        out[(c.geom1, c.geom2)] = (c.solref or ref, c.solimp or imp)
    return out


def pair_softness(model, pairs) -> np.ndarray:
    """(len(pairs), 7): each geom pair's solref (2) and solimp (5)."""
    own = cached(model, "soft_explicit_pairs", _explicit)
    geoms = model.geoms
    out = np.empty((len(pairs), 7))
    for k, (i, j) in enumerate(pairs):
        i, j = int(i), int(j)
        ref, imp = own[(i, j)] if (i, j) in own else _mixed(geoms[i], geoms[j])
        out[k, :2], out[k, 2:] = ref, imp
    return out


def limit_softness(model, names_low, names_high) -> np.ndarray:
    """(bounds, 7): each limit bound's solref and solimp (its joint's: Model.limit_softness)."""
    rows = [model.limit_softness(n) for n in list(names_low) + list(names_high)]
    return np.array([list(r) + list(i) for r, i in rows], dtype=float).reshape(-1, 7)


def inverse_weights(model, _key=None) -> tuple[np.ndarray, np.ndarray]:
    """MuJoCo's body_invweight0 (translation) per body and dof_invweight0 per velocity coordinate at
    the reference configuration (the file's qpos0, else td.neutral): a body's mean of the diagonal of
    J_c M⁻¹ J_cᵀ over its centre of mass's three translations, a coordinate's (M⁻¹)_kk (a ball
    joint's three the mean of theirs, a free joint's translations and rotations each their mean);
    bodies without mass or geom weigh 0 (none of their rows is soft)."""
    from ..algorithms.kinematics import frame_jacobian
    from ..algorithms.state import neutral_or_reference

    q0 = neutral_or_reference(model)
    Minv = inverse_mass_matrix(model, q0)
    body = np.zeros(model.n_bodies)
    with_geoms = sorted({g.body for g in model.geoms} - {0})
    inertias = model.inertias
    for i in with_geoms:
        J = frame_jacobian(model, q0, i, np.asarray(inertias[i].com, dtype=float), "local_world_aligned")[3:]
        body[i] = np.trace(J @ Minv @ J.T) / 3
    dof = np.diag(Minv).copy()
    core = model.core
    for i in range(1, model.n_bodies):
        k, n = core.v_index[i], core.nv_i[i]
        for a in range(0, n, 3) if n in (3, 6) else ():
            dof[k + a : k + a + 3] = dof[k + a : k + a + 3].mean()
    return body, dof


def configure(engine, sim, pairs) -> None:
    """Make the engine's contacts and limits soft (engine.set_soft) with the model's parameters."""
    model = sim.model
    names = list(model.joint_limits)
    lo = [n for n in names if np.isfinite(model.joint_limits[n][0])]
    hi = [n for n in names if np.isfinite(model.joint_limits[n][1])]
    body, dof = cached(model, "soft_inverse_weights", inverse_weights)
    engine.set_soft(model.impratio, pair_softness(model, pairs), limit_softness(model, lo, hi), body, dof)


def extra_softness(model, geoms) -> np.ndarray:
    """(P, 7): the solref and solimp of contacts found in Python, by their geom pairs."""
    return pair_softness(model, [tuple(g) for g in np.asarray(geoms).reshape(-1, 2)])
