"""The deployable umbrella of baxter2019 §4.2 (published ``loadUmbrella``)."""

from __future__ import annotations

import math

import numpy as np

from ..model import Fixed, Prismatic, Transform, Universal
from .redmax import _Z_TO_Y, UMBRELLA_CANOPY_K, _Builder, _count, _rot, _scene
from .scene import Scene

__all__ = ["umbrella"]


def umbrella(n: int = 16, *, params: str = "video") -> Scene:
    """The deployable umbrella (baxter2019 §4.2, Figs. 13–17; published ``loadUmbrella``).
    Reduced DOF 1 + 16n + 16⌊n/2⌋ (385 at n = 16).

    Gravity 0, no Baumgarte stabilisation (``model.baumgarte = 0``), density 1, every body a
    solid cylinder. The tube: fixed, radius 0.5, height 60, along y over [0, 60]. The runner:
    radius 1, height 5, axis y, on a prismatic joint along y starting with its centre at y = 10,
    pushed up by a constant 5e3 along +y at its centre. 8 ribs at θ = k·45° about y, each a chain
    of n cylinders of radius 0.3 and length 50/n joined by universal joints (x, then y; published
    Q = Rx(q₁) Ry(q₂)), the first at the top of the tube, its joint frame Ry(θ)·Rx(80°) (the rib
    hangs 10° off the tube: the umbrella starts closed); rib-to-tube joints k = d = 0, rib-to-rib
    joints k = 1e5, d = 1 about 0. 8 stretchers, each a chain of ⌊n/2⌋ cylinders of radius 0.3
    joined by universal joints, from the runner's centre straight to the centre of rib body
    ⌊n/2⌋ − 1 (length |x₁ − x₀| / ⌊n/2⌋ each; first joint frame AngleAxis(−acos(d_y), d × e_y)·
    Rx(−90°)·Rz(θ) as published, so the chain points along d = (x₁ − x₀)/|x₁ − x₀|); first joint
    k = d = 0, the others k = 1e5, d = 1. Canopy: 8n springs between body i of rib k and body i
    of rib k + 1 (mod 8), centre to centre, k = 6 ("video", the value active in the published
    code) or 1 ("sim"), d = 1, per unit strain.

    Loop closures: each stretcher's tip is joined to the centre of its rib body by a universal
    joint (4 rows each, 32 in all; the published code enforces only 2 point rows). Interpretation:
    the joint's frame has x along the rib plane's normal (cos θ, 0, −sin θ) — the hinge the
    umbrella opens about, axis1, fixed in the stretcher — and y in the rib plane perpendicular
    to the stretcher — axis2, fixed in the rib. The stretchers are built to end exactly at the
    rib centres, so the initial residual is round-off (info["initial_residual"]).

    Bodies are added depth-first (tube, ribs, runner, stretchers), not in the published order.

    The runner force never stops (the published stop at runner height 36 is commented out): the
    canopy reaches horizontal at t ≈ 3.5 s and by 5 s has turned past it. Without Baumgarte
    stabilisation the loop residual drifts, O(h): ≈ 0.09 after 5 s at n = 16, h = 1e-2.
    """
    n = _count(n, "umbrella n", 2)
    if params not in UMBRELLA_CANOPY_K:
        raise ValueError(f"umbrella params must be one of {sorted(UMBRELLA_CANOPY_K)}, got {params!r}")
    ns = n // 2
    b = _Builder(gravity=(0.0, 0.0, 0.0))
    m = b.model
    m.baumgarte = 0.0
    rho = 1.0
    tube = b.add(
        "tube",
        None,
        Fixed(),
        centre=(0, 30, 0),
        shape="cylinder",
        size=(0.5, 60.0),
        density=rho,
        shape_rotation=_Z_TO_Y,
    )
    h = 50.0 / n
    ribs = []
    for k in range(8):
        theta = k * math.pi / 4
        R0 = _rot((0, 1, 0), theta) @ _rot((1, 0, 0), math.radians(80))
        chain, parent = [], tube
        for i in range(n):
            kk, dd = (0.0, 0.0) if i == 0 else (1e5, 1.0)
            parent = b.add(
                f"rib{k}_{i}",
                parent,
                Universal((1, 0, 0), (0, 1, 0)),
                rotation=R0 if i == 0 else None,
                translation=(0, 60, 0) if i == 0 else (0, 0, h),
                centre=(0, 0, h / 2),
                shape="cylinder",
                size=(0.3, h),
                density=rho,
                q0=(0.0, 0.0),
                stiffness=kk,
                damping=dd,
            )
            chain.append(parent)
        ribs.append(chain)
    runner = b.add(
        "runner",
        tube,
        Prismatic((0, 1, 0)),
        translation=(0, 10, 0),
        shape="cylinder",
        size=(1.0, 5.0),
        density=rho,
        shape_rotation=_Z_TO_Y,
        q0=0.0,
    )
    m.add_point_force(runner, (0, 0, 0), (0, 5e3, 0))

    q_partial = b.q0()
    x0 = b.world(q_partial, runner, (0, 0, 0))
    targets = [ribs[k][ns - 1] for k in range(8)]
    x1s = [b.world(q_partial, rib, b.centre[rib]) for rib in targets]
    ends = []
    for k in range(8):
        theta = k * math.pi / 4
        rib, x1 = targets[k], x1s[k]
        dx = x1 - x0
        length = float(np.linalg.norm(dx))
        dx = dx / length
        ax = np.cross(dx, (0, 1, 0))
        ax = ax / np.linalg.norm(ax)
        R0 = _rot(ax, -math.acos(dx[1])) @ _rot((1, 0, 0), -math.pi / 2) @ _rot((0, 0, 1), theta)
        hs = length / ns
        parent = runner
        for i in range(ns):
            kk, dd = (0.0, 0.0) if i == 0 else (1e5, 1.0)
            parent = b.add(
                f"stretcher{k}_{i}",
                parent,
                Universal((1, 0, 0), (0, 1, 0)),
                rotation=R0 if i == 0 else None,
                translation=(0, 0, 0) if i == 0 else (0, 0, hs),
                centre=(0, 0, hs / 2),
                shape="cylinder",
                size=(0.3, hs),
                density=rho,
                q0=(0.0, 0.0),
                stiffness=kk,
                damping=dd,
            )
        ends.append((parent, rib, hs, theta, dx))
    q0 = b.q0()
    Rw, _ = m.body_poses(q0)
    for tip, rib, hs, theta, dx in ends:
        t = np.array([math.cos(theta), 0.0, -math.sin(theta)])  # normal of the rib's plane
        Rf = np.column_stack([t, np.cross(dx, t), dx])  # the joint frame, world axes
        m.add_loop_closure(
            tip,
            rib,
            Universal((1, 0, 0), (0, 1, 0)),
            placement_a=Transform(rotation=Rw[tip].T @ Rf, translation=(0, 0, hs)),
            placement_b=Transform(rotation=Rw[rib].T @ Rf, translation=b.centre[rib]),
            q=q0,
        )
    kc = UMBRELLA_CANOPY_K[params]
    for k in range(8):
        for i in range(n):
            a, c = ribs[k][i], ribs[(k + 1) % 8][i]
            b.spring(q0, a, b.centre[a], c, b.centre[c], kc, 1.0)
    info = dict(
        scene="umbrella",
        n=n,
        params=params,
        stretcher_bodies=ns,
        rib_body_length=h,
        stretcher_body_length=ends[0][2],
        canopy_k=kc,
        canopy_d=1.0,
        joint_k=1e5,
        joint_d=1.0,
        runner_force=5e3,
        gravity=(0.0, 0.0, 0.0),
        density=rho,
        baumgarte=0.0,
    )
    return _scene(b, f"umbrella:{n}" + ("" if params == "video" else f",params={params}"), info)
