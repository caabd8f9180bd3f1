"""Models the tests share."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import treedyn as td
from treedyn.scenes import random_tree
from treedyn.tools.peers import example_robot_path


def closed_tree(seed: int, floating_base: bool = False) -> td.Model:
    """A random tree (every joint kind) with a ball closure, a weld and a quadratic coupling,
    each holding at the neutral configuration."""
    m = random_tree(16, seed, floating_base=floating_base)
    n = m.n_bodies - 1
    m.add_loop_closure(n // 3, n, td.Spherical(), placement_a=td.Transform(translation=(0.1, -0.05, 0.2)))
    m.add_loop_closure(n // 2, n - 1, td.Fixed(), placement_a=td.Transform.from_rpy((0.3, -0.2, 0.1), (0, 0.1, 0)))
    scalar = [i for i in range(1, m.n_bodies) if type(m.joints[i]) in (td.Revolute, td.Prismatic)]
    m.add_coupling(scalar[-1], scalar[0], polycoef=(0.0, 0.5, -0.3), reference=td.neutral(m))
    return m


def alternating_chain() -> td.Model:
    """Issue 12's reproducer: 6 links whose masses alternate 1e-3 / 1e3."""
    m = td.Model()
    for i, mass in enumerate([1e-3, 1e3, 1e-3, 1e3, 1e-3, 1e3]):
        m.add_body(
            f"b{i}",
            parent=None if i == 0 else f"b{i - 1}",
            joint=td.Revolute((0, 1, 0) if i % 2 else (1, 0, 0)),
            placement=td.Transform(translation=(0.1, 0, 0.3)),
            inertia=td.Inertia(mass, (0.05, 0, 0.1), np.eye(3) * 0.05 * mass),
        )
    return m


def example_robot(relative: str, floating_base: bool) -> td.Model:
    """A robot of example-robot-data (mimic joints made independent), or the test skipped when the
    package is not installed."""
    try:
        path = example_robot_path(relative)
    except FileNotFoundError as e:
        pytest.skip(str(e))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # <gazebo>, <transmission>, inconsistent inertias
        return td.Model.from_urdf(path, floating_base=floating_base, mimic="independent")
