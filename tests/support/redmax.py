"""Helpers the RedMax tests share: models with springs and loops, states, and the dense reference step of baxter2019 eq. (2.13) with its rounding bound."""

import numpy as np
from conftest import (
    iterative_bound,
    random_models,
    rounding_bound,
    solution_bound,
)

import treedyn as td


def skew(a):
    return np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])


def so3_exp(w):
    th = np.linalg.norm(w)
    K = skew(w)
    if th < 1e-12:
        return np.eye(3) + K
    return np.eye(3) + np.sin(th) / th * K + (1 - np.cos(th)) / th**2 * K @ K


def with_extras(model, rng, n_springs=4, loops=False):
    """model plus joint springs, body damping, springs between random bodies, point forces"""
    N = model.n_bodies - 1
    for name in model.joint_names:
        i = model._joint_body(name)
        if not isinstance(model.joints[i], td.Free):
            model.set_joint_spring(name, stiffness=rng.uniform(0.5, 5), damping=rng.uniform(0, 1))
    for i in range(1, N + 1):
        model.set_body_damping(i, rng.uniform(0.1, 1.0))
    for _ in range(n_springs):
        a, b = rng.choice(N + 1, 2, replace=False)
        model.add_spring(
            int(a),
            rng.standard_normal(3) * 0.2,
            int(b),
            rng.standard_normal(3) * 0.2,
            stiffness=rng.uniform(10, 100),
            damping=rng.uniform(0, 2),
            rest_length=rng.uniform(0.0, 0.5),
        )
    model.add_point_force(N, (0.1, 0.0, 0.0), rng.standard_normal(3))
    return model


def redmax_models():
    rng = np.random.default_rng(7)
    out = []
    for name, m in random_models():
        if name in ("chain", "tree-all-0", "tree-fb-1", "tree-universal", "tree-spherical", "chain-prismatic"):
            out.append((name, with_extras(m, rng)))
    return out


def state_of(model, rng):
    return td.State(td.random_configuration(model, rng), rng.standard_normal(model.nv), 0.0)


def dense_step(terms, state, h):
    J, Jd, M, D, K = terms["J"], terms["Jdot"], terms["M_m"], terms["D_m"], terms["K_m"]
    lhs = J.T @ (M + h * D - h * h * K) @ J + h * terms["D_r"] - h * h * terms["K_r"]
    rhs = J.T @ M @ J @ state.v + h * (terms["f_r"] + J.T @ (terms["f_m"] - M @ Jd @ state.v))
    G = terms["G"]
    if G.shape[0] == 0:
        return lhs, rhs, np.linalg.solve(lhs, rhs)
    # the KKT system of eq. (2.42): G v = −β C
    n, l = lhs.shape[0], G.shape[0]
    kkt = np.block([[lhs, G.T], [G, np.zeros((l, l))]])
    sol = np.linalg.lstsq(kkt, np.concatenate([rhs, -terms["baumgarte"] * terms["C"]]), rcond=1e-12)[0]
    return lhs, rhs, sol[:n]


def step_magnitudes(terms, v, h):
    """The magnitudes summed in eq. (2.13)'s lhs and rhs (|J|ᵀ(|M| + h|D| + h²|K|)|J| + ... ), whose
    rounding bounds that of any evaluation of them (Higham §3.5)."""
    J, Jd, M = np.abs(terms["J"]), np.abs(terms["Jdot"]), np.abs(terms["M_m"])
    lhs_terms = (
        J.T @ (M + h * np.abs(terms["D_m"]) + h * h * np.abs(terms["K_m"])) @ J
        + h * np.abs(terms["D_r"])
        + h * h * np.abs(terms["K_r"])
    )
    rhs_terms = J.T @ M @ J @ np.abs(v) + h * (np.abs(terms["f_r"]) + J.T @ (np.abs(terms["f_m"]) + M @ Jd @ np.abs(v)))
    return lhs_terms, rhs_terms


def step_bound(terms, state, h, tol=0.0):
    """v⁺ of eq. (2.13) / (2.42) by a dense solve, and the bound within which any backward-stable
    solve of the same step agrees with it (tol: one of them is an iterative solve to that relative
    residual). Null-space form: with G's independent rows (rank by SVD: the solver drops dependent
    ones), v⁺ = v_p + Z y, v_p = G⁺c the minimum-norm solution of G v = c = −βC, Z an orthonormal
    basis of G's null space and (ZᵀM̃Z) y = Zᵀ(rhs − M̃ v_p). To first order in the backward errors δ:
    ‖Δv_p‖ ≤ 2κ₂(G)·δ·‖v_p‖ and Z y within solution_bound of ZᵀM̃Z with the magnitudes of its
    right-hand side; √n turns the 2-norm of Z's columns into the ∞-norm."""
    lhs, rhs, _ = dense_step(terms, state, h)
    lhs_terms, rhs_terms = step_magnitudes(terms, state.v, h)
    n = lhs.shape[0]
    r, vp, bound_p, Vt = 0, np.zeros(n), 0.0, np.eye(n)
    if terms["G"].shape[0]:
        U, S, Vt = np.linalg.svd(terms["G"])
        r = int(np.sum(S > S[0] * 1e-10))
        vp = Vt[:r].T @ ((U[:, :r].T @ (-terms["baumgarte"] * terms["C"])) / S[:r])
        bound_p = 2 * (S[0] / S[r - 1]) * (rounding_bound(n) + iterative_bound(n, tol)) * np.abs(vp).max()
    Z = Vt[r:].T
    Az = Z.T @ lhs @ Z
    y = np.linalg.solve(Az, Z.T @ (rhs - lhs @ vp))
    scale = np.abs(Z.T) @ (rhs_terms + lhs_terms @ (np.abs(vp) + np.abs(Z) @ np.abs(y)))
    return vp + Z @ y, np.sqrt(n) * solution_bound(Az, y, scale, tol=tol)[0] + bound_p


def four_bar(kind="hinge"):
    """a planar four-bar linkage: two cranks hinged to the world, a coupler closing the loop"""
    m = td.Model(gravity=(0, -9.81, 0))
    rod = lambda L: td.Inertia.box(1.0, (L, 0.05, 0.05), com=(L / 2, 0, 0))
    Rz = lambda a: so3_exp(np.array([0, 0, a]))
    m.add_body("crank", None, td.Revolute((0, 0, 1)), td.Transform(rotation=Rz(np.pi / 2)), rod(1.0))
    m.add_body(
        "coupler",
        "crank",
        td.Revolute((0, 0, 1)),
        td.Transform(rotation=Rz(-np.pi / 2), translation=(1, 0, 0)),
        rod(2.0),
    )
    m.add_body(
        "rocker", None, td.Revolute((0, 0, 1)), td.Transform(rotation=Rz(np.pi / 2), translation=(2, 0, 0)), rod(1.0)
    )
    joints = {
        "hinge": td.Revolute((0, 0, 1)),
        "ball": td.Spherical(),
        "universal": td.Universal((0, 0, 1), (1, 0, 0)),
        "weld": td.Fixed(),
    }
    if kind == "coupling":  # the two cranks turn together (a parallelogram), the coupler follows
        m.add_loop_closure("coupler", "rocker", td.Spherical(), td.Transform(translation=(2, 0, 0)))
        m.add_coupling("rocker", "crank")
    else:
        m.add_loop_closure("coupler", "rocker", joints[kind], td.Transform(translation=(2, 0, 0)))
    return m
