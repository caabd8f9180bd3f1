"""``<keyframe><key>``: each key as a ``treedyn.Keyframe`` in treedyn's coordinates, by name
(``model.keyframes``; an unnamed key is ``"key<i>"``, i its index as MuJoCo numbers keys).

MuJoCo's defaults where a key is silent: qpos0 (``model.reference_configuration``), zero
velocities, activations and controls, time 0. qpos and qvel are MuJoCo's layout (the joints are in
the same order): a free or ball joint's quaternion is reordered (w, x, y, z) → (x, y, z, w) and a
free joint's linear velocity turned from world into body axes (v = Rᵀ qvel[0:3]); ctrl keeps the
actuators treedyn loads (``model.actuator_names``). A short key is padded from the defaults and a
long one refused, as MuJoCo does;
``mpos``/``mquat`` (mocap bodies) are noted as not modelled.
"""

from __future__ import annotations

import numpy as np

from ...algorithms.keyframe import Keyframe
from .._common import quat_to_matrix

__all__ = ["read_keyframes"]


def read_keyframes(r, root, model) -> None:
    """model.keyframes from the file's <keyframe> sections."""
    keys = [k for sec in root if sec.tag == "keyframe" for k in sec if k.tag == "key"]
    q0 = (
        np.array(model.reference_configuration, dtype=float)
        if model.reference_configuration is not None
        else _neutral(model)
    )
    nu_file, index = r.__dict__.get("ctrl_count", 0), np.asarray(r.__dict__.get("ctrl_index", []), dtype=int)
    out = {}
    for i, e in enumerate(keys):
        r.current = e
        a = e.attrib
        name = a.get("name") or f"key{i}"
        if index.size < nu_file and "act" in a:  # (MuJoCo's act has the left-out actuators' activations too)
            r.ignored.note(f"<key name={name!r}>: act not read (some actuators are not modelled)")
            a = {k: v for k, v in a.items() if k != "act"}
        qpos, qvel, act, ctrl = (
            _padded(r, e, a, name, what, default)
            for what, default in (
                ("qpos", _mujoco_q(model, q0)),
                ("qvel", np.zeros(model.nv)),
                ("act", np.zeros(model.na)),
                ("ctrl", np.zeros(nu_file)),
            )
        )
        if "mpos" in a or "mquat" in a:
            r.ignored.note(f"<key name={name!r}>: mpos/mquat (mocap bodies) not modelled")
        q, v = _treedyn_state(model, qpos, qvel)
        ctrl = ctrl[index]
        out[name] = Keyframe(name, r.num(e, "time", a, 0.0), q, v, act, ctrl)
    model.keyframes = out


def _padded(r, e, a, name, what, default) -> np.ndarray:
    """The key's ``what``, its missing tail from default (MuJoCo pads a short key); longer: refused."""
    x = r.vec(e, what, None, a, default=default)
    if x.size > default.size:
        raise r.err(f"<key name={name!r}>: {what} has {x.size} values, the model {default.size}", e)
    return np.r_[x, default[x.size :]]


def _neutral(model) -> np.ndarray:
    from ...algorithms.configuration import neutral

    return neutral(model)


def _quaternion_joints(model):
    """(q index, v index, free) of each free and ball joint."""
    qi, vi = model.q_indices, model.v_indices
    for i, kind in enumerate(model.joint_kinds):
        if kind in ("free", "spherical"):
            yield int(qi[i]) + (3 if kind == "free" else 0), int(vi[i]), kind == "free"


def _mujoco_q(model, q) -> np.ndarray:
    out = np.array(q, dtype=float)
    for k, _, _ in _quaternion_joints(model):
        out[k : k + 4] = q[k + 3], q[k], q[k + 1], q[k + 2]
    return out


def _treedyn_state(model, qpos, qvel) -> tuple:
    q, v = qpos.copy(), qvel.copy()
    for k, j, free in _quaternion_joints(model):
        w = qpos[k : k + 4]
        n = np.linalg.norm(w)
        q[k : k + 4] = (w[1], w[2], w[3], w[0]) / (n if n > 0 else 1.0)
        if free:
            v[j : j + 3] = quat_to_matrix(q[k : k + 4], wxyz=False).T @ qvel[j : j + 3]
    return q, v
