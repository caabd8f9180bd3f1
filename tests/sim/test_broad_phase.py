"""The contact step's broad phase (cpp/include/treedyn/contact/broad_phase.hpp: sweep and prune over the geoms'
world boxes) against the loop over every candidate pair (td.collide, which calls the narrow phase on each pair):
the same contacts at configurations where limbs cross limbs."""

import os
import warnings

import numpy as np
import pytest

import treedyn as td


@pytest.mark.parametrize("package,name", [("dm_control", "dog"), ("gymnasium", "humanoid"), ("dm_control", "humanoid")])
def test_the_broad_phase_loses_no_contact(public_models, package, name):
    """At random joint configurations (the root at half its start's height: limbs through limbs and the floor),
    the step's contacts (found at the step's start) are td.collide's, pair for pair. Their depths agree to EPA's
    tolerance (1e-6 of the shapes' extent, contact/convex.hpp): the step's world poses come from ABA's ^iX_λ and
    td.collide's from forward kinematics, equal to rounding, which moves where EPA stops."""
    model = td.load_mjcf(os.path.join(public_models[package], f"{name}.xml"))
    d = td.ContactSimulator(model, dt=1e-7).data()
    rng = np.random.default_rng(3)
    q0 = d.q.copy()
    touching = 0
    for _ in range(6):
        q = td.random_configuration(model, rng)
        q[:7] = q0[:7]
        q[2] *= 0.5
        d.q[:], d.v[:] = q, 0.0
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (a contact solve through crossed limbs may not converge: not the point)
            d.step()
        geoms, depths = d.contacts()[0], d.contacts()[4]
        ref = td.collide(model, q)
        mine = sorted(zip(map(tuple, geoms), depths))
        theirs = sorted(zip(map(tuple, ref.geoms), ref.depths))
        assert [g for g, _ in mine] == [g for g, _ in theirs]
        assert all(abs(a - b) <= 1e-6 for (_, a), (_, b) in zip(mine, theirs))
        touching += len(mine)
    assert touching > 20
