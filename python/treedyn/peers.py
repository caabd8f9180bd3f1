"""The same model in the peers we check against and measure with (optional dependencies).

``to_pinocchio(model)`` builds a ``pinocchio.Model`` with the same bodies, joints, placements and
inertias; q and v layouts are the same (Pinocchio's: quaternions (x, y, z, w), free-flyer velocity
(linear, angular) in body coordinates), so vectors pass unchanged. Fixed joints are folded into
their parent, as Pinocchio has no fixed joint.
"""
from __future__ import annotations

import numpy as np

from .model import Fixed, Free, Model, Prismatic, Revolute, Spherical, Universal

__all__ = ["to_pinocchio", "pinocchio_forces"]


def to_pinocchio(model: Model):
    return _build_pinocchio(model)[0]


def pinocchio_forces(model: Model, f_ext):
    """Our f_ext ((n_bodies, 6), [n; f] in body frames) as Pinocchio's list of joint forces
    (linear, angular) in joint frames, summing the bodies a joint carries."""
    import pinocchio as pin

    pm, carrier = _build_pinocchio(model)
    out = [pin.Force.Zero() for _ in range(pm.njoints)]
    for i in range(1, model.n_bodies):
        jid, pose = carrier[i]
        f = np.asarray(f_ext[i], dtype=float)
        out[jid] = out[jid] + pose.act(pin.Force(f[3:], f[:3]))
    return out


def _build_pinocchio(model: Model):
    import pinocchio as pin

    pm = pin.Model()
    pm.gravity = pin.Motion(np.r_[model.gravity, 0.0, 0.0, 0.0])
    cpp = model._cpp
    # body i -> (pinocchio joint id carrying it, pose of body i's frame in that joint's frame)
    carrier = {0: (0, pin.SE3.Identity())}
    for i in range(1, model.n_bodies):
        j = model.joints[i]
        E, r = cpp.placement(i)
        place = pin.SE3(np.array(E).T, np.array(r))  # rotation = Eᵀ, translation = r
        pj, pose = carrier[cpp.parent[i]]
        place = pose * place
        inertia = _pin_inertia(pin, cpp.spatial_inertia(i))
        if isinstance(j, Fixed):
            pm.appendBodyToJoint(pj, inertia, place)
            carrier[i] = (pj, place)
            continue
        if isinstance(j, Revolute):
            jm = pin.JointModelRevoluteUnaligned(j.axis)
        elif isinstance(j, Prismatic):
            jm = pin.JointModelPrismaticUnaligned(j.axis)
        elif isinstance(j, Spherical):
            jm = pin.JointModelSpherical()
        elif isinstance(j, Free):
            jm = pin.JointModelFreeFlyer()
        elif isinstance(j, Universal):
            jm = pin.JointModelUniversal(j.axis1, j.axis2)
        else:
            raise TypeError(f"no Pinocchio joint for {j!r}")
        jid = pm.addJoint(pj, jm, place, model.body_names[i])
        pm.appendBodyToJoint(jid, inertia, pin.SE3.Identity())
        carrier[i] = (jid, pin.SE3.Identity())
    return pm, carrier


def _pin_inertia(pin, I6: np.ndarray):
    """pinocchio.Inertia from our 6x6 [Ī h×; −h× m1] about the body origin."""
    m = I6[3, 3]
    if m <= 0:
        return pin.Inertia(0.0, np.zeros(3), I6[:3, :3].copy())
    hx = I6[:3, 3:]
    c = np.array([hx[2, 1], hx[0, 2], hx[1, 0]]) / m
    cx = np.array([[0, -c[2], c[1]], [c[2], 0, -c[0]], [-c[1], c[0], 0]])
    Ic = I6[:3, :3] + m * cx @ cx  # Ī = Ic − m c×c×
    return pin.Inertia(m, c, 0.5 * (Ic + Ic.T))
