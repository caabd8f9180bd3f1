"""Helpers the derivative tests share: models with floating bodies, random external forces, and the check of an analytic derivative against central differences."""

import numpy as np
from conftest import (
    assert_below,
)

import treedyn as td


def two_floating_bodies(universal=True):
    """A forest of two trees, each on a free joint (random trees have one floating root), with
    spherical, universal (or revolute), fixed, prismatic and revolute joints beyond them."""
    rng = np.random.default_rng(3)
    from treedyn.scenes.random_tree import random_inertia

    m = td.Model()
    bodies = [
        (0, td.Free()),
        (1, td.Spherical()),
        (2, td.Universal([1.0, 0.2, 0.0], [0.0, 0.3, 1.0]) if universal else td.Revolute([1.0, 0.2, 0.0])),
        (3, td.Fixed()),
        (1, td.Revolute([0.3, -1.0, 0.2])),
        (0, td.Free()),
        (6, td.Prismatic([0.1, 0.5, -1.0])),
        (7, td.Spherical()),
    ]
    for i, (parent, j) in enumerate(bodies, 1):
        place = td.Transform(np.eye(3), rng.uniform(-0.5, 0.5, 3))
        m.add_body(f"b{i}", parent, j, place, random_inertia(rng))
    return m


def random_f_ext(model, rng):
    f = rng.standard_normal((model.n_bodies, 6))
    f[0] = 0
    return f


def assert_matches_differences(analytic, D_h, D_2h, eps, h, what):
    """|analytic − D_h| ≤ 2 (|D_2h − D_h|/3 + 1.5 ε/h): the module docstring's bound."""
    bound = 2 * (np.abs(D_2h - D_h) / 3 + 1.5 * eps / h)
    assert_below(analytic - D_h, bound, what, size=np.abs(analytic).max() + 1.0)
