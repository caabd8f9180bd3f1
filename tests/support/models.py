"""Models the tests share."""

from __future__ import annotations

import treedyn as td
from treedyn.scenes import random_tree


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
