"""What tests/interop/test_interop_torch.py and test_interop_jax.py share: the models, and a framework's
Jacobians against central differences in q's coordinates with tests/algorithms/test_derivatives.py's bound
(its module docstring: |J − D_h| ≤ 2 (|D_2h − D_h|/3 + 1.5 ε/h), ε the rounding of one evaluation:
q̈'s forward error as a backward-stable solve's, τ's δ times its terms' magnitudes, a step's dt
times q̈'s; plus that of q ± h e moved through the Jacobian)."""

import numpy as np
from conftest import dynamics_scale, random_state, rounding_bound, solution_bound
from support.derivatives import assert_matches_differences, random_f_ext, two_floating_bodies

import treedyn as td
from treedyn.scenes import chain, random_tree


def models():
    return [
        ("chain", chain(5)),
        ("tree-fb", random_tree(7, 12, floating_base=True)),
        ("two-floating", two_floating_bodies()),
    ]


def coordinate_differences(f, x, h):
    """Central differences in x's coordinates, with steps h and 2h."""
    return [np.array([(f(x + s * e) - f(x - s * e)) / (2 * s) for e in np.eye(len(x))]).T for s in (h, 2 * h)]


def check_against_central_differences(model, which, value, jacobian, seed=2, dt=0.3):
    """value(q, v, x, f_ext) -> the output (numpy; a step's (q⁺, v⁺) concatenated), jacobian(q, v, x,
    f_ext) -> its Jacobians with respect to q, v and x (numpy) — a framework's, at a random state."""
    rng = np.random.default_rng(seed)
    q, v, x = random_state(model, rng)
    f_ext = random_f_ext(model, rng)
    Js = [np.asarray(J) for J in jacobian(q, v, x, f_ext)]
    delta = rounding_bound(model.nv)
    h = delta ** (1 / 3)
    M = td.mass_matrix(model, q)
    if which == "inverse":
        tau = td.rnea(model, q, v, x, f_ext)
        eps = delta * (np.abs(dynamics_scale(model, q, v, tau, x, f_ext, M=M)).max() + np.abs(f_ext).sum())
        eps += delta * np.abs(Js[0]).max() * (1 + np.abs(q).max())
    else:
        qdd = td.make_solver("aba", model).forward_dynamics(q, v, x, f_ext)
        eps = float(solution_bound(M, qdd, dynamics_scale(model, q, v, x, qdd, f_ext, M=M) + np.abs(f_ext).sum())[0])
        if which == "step":
            eps *= dt
            eps += (
                delta * (1 + np.abs(q).max() + dt * np.abs(v + dt * qdd).max()) * (1 + max(np.abs(J).max() for J in Js))
            )
        else:
            eps += delta * np.abs(Js[0]).max() * (1 + np.abs(q).max())
    args = [q, v, x]
    for k, J in enumerate(Js):

        def f(d, k=k):
            a = list(args)
            a[k] = d
            return np.asarray(value(*a, f_ext))

        D, D2 = coordinate_differences(f, args[k], h)
        assert_matches_differences(J, D, D2, eps, h, f"{which}: autodiff = central differences (argument {k})")
    assert Js[0].shape[-1] == model.nq
