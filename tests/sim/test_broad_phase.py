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


def test_the_broad_phase_keeps_pairs_within_their_margins():
    """Margins reach across the gap: spheres 4 mm above a floor whose margin is 1 cm (a plane's pairs, their
    boxes' reach into the half-space), two spheres 1.5 cm apart with margins of 0 and 2 cm (MuJoCo's rule, the
    larger: a pair the boxes hold), and an explicit pair 3.6 cm apart whose own 5 cm margin exceeds its geoms'
    two (tested every step): the step's contacts are td.collide's, and without the margins there are none."""

    def build(margin):
        m = td.Model()
        m.add_geom(None, td.Plane(), name="floor", margin=margin)
        for i, x in enumerate((0.0, 0.215, 1.0)):
            b = m.add_body(f"b{i}", None, td.Free(), td.Transform(translation=(x, 0, 0.104)),
                           td.Inertia(1.0, (0, 0, 0), 0.004 * np.eye(3)))  # fmt: skip
            m.add_geom(b, td.Sphere(0.1), name=f"s{i}", margin=(0.0, 2 * margin, 2 * margin)[i])
        m.add_geom(None, td.Box((0.05, 0.05, 0.05)), td.Transform(translation=(1.0, 0, 0.29)), name="post")
        m.add_contact_pair("s2", "post", margin=5 * margin)
        return m

    for margin, expected in ((0.01, 5), (0.0, 0)):
        model = build(margin)
        d = td.ContactSimulator(model, dt=1e-7).data()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (the hard solve here may not converge: not the point)
            d.step()
        mine = sorted(map(tuple, d.contacts()[0]))
        ref = td.collide(model, td.State.initial(model).q)
        assert mine == sorted(map(tuple, ref.geoms)) and len(mine) == expected, (margin, mine)
