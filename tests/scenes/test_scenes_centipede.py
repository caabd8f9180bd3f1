"""The centipede of drumwright2012 §6.3 (python/treedyn/scenes/centipede.py): its structure, the
stability of its gait's gains (derived, then checked on the model), and the walk itself — the
explicit Euler run of the paper (h = 1e-5) stays finite with under 1 mm of penetration, and at the
default step it walks forward."""

import numpy as np
import pytest

import treedyn as td
from treedyn.scenes import centipede
from treedyn.scenes.centipede import FOOT, HEIGHT
from treedyn.sim.collision import collide, collision_pairs


@pytest.mark.parametrize("n", [1, 3])
def test_structure(n):
    scene = centipede(n)
    model = scene.model
    assert model.nv == 11 * n + 3 and model.n_bodies == 1 + 5 * n
    kinds = [type(j).__name__ for j in model.joints[1:]]
    assert kinds.count("Free") == 1 and kinds.count("Spherical") == (n - 1) + 2 * n and kinds.count("Revolute") == 2 * n
    # only the feet and the ground may touch: one pair per foot
    pairs = collision_pairs(model)
    assert len(pairs) == 2 * n
    names = {model.geoms[i].name for pair in pairs for i in pair}
    assert "ground" in names and len(names) == 2 * n + 1
    # standing: every foot 0.1 mm in the ground, on its lowest point
    contacts = collide(model, scene.state.q)
    assert len(contacts) == 2 * n
    np.testing.assert_allclose(contacts.depths, 1e-4, rtol=0, atol=1e-12)
    assert scene.state.q[2] == HEIGHT - 1e-4 and FOOT > 0
    assert scene.info["feet"] == 2 * n and callable(scene.tau)


def test_gains_are_stable_at_the_default_step():
    """Semi-implicit Euler with explicit PD damping is stable when h λ(M⁻¹K_d) < 2 (the damped
    oscillator's step); the gains are 2ζω_n/(M⁻¹)_ii, so this is 2ζω_n h λ(D^½M⁻¹D^½)."""
    scene = centipede(4)
    gait = scene.tau
    Minv = td.inverse_mass_matrix(scene.model, scene.state.q)
    lam = np.linalg.eigvals(Minv @ np.diag(gait.kd)).real.max()
    assert scene.h * lam < 2.0
    assert np.all(gait.kp[6:] > 0) and np.all(gait.kd[6:] > 0)


def test_support_carries_the_weight():
    gait = centipede(3).tau
    for t in (0.0, 0.17, 0.9):
        f = gait.support(t)
        assert f.sum() == pytest.approx(gait.weight, rel=1e-12) and np.all(f >= 0)


def test_explicit_euler_at_the_papers_step():
    """The paper's integrator and step (explicit Euler, h = 1e-5), 1 000 steps: finite, and the
    feet never deeper than 1 mm (they start 0.1 mm in)."""
    scene = centipede(3)
    sim = td.ContactSimulator(scene.model, 1e-5, integrator="euler")
    state = scene.initial_state()
    traj = sim.run(state, 1000 * 1e-5, tau=scene.tau, record_every=100)
    assert len(traj.seconds) == 1000
    assert np.all(np.isfinite(traj.q)) and np.all(np.isfinite(traj.v))
    assert traj.max_penetration.max() < 1e-3
    assert traj.n_contacts.min() >= 4  # standing on its feet throughout


def test_walks_forward():
    """2.5 s at the default step: the centre of mass moves along +x (measured 0.42 m for 4 segments,
    0.17 m/s on average with the start; asserted: more than a body segment's spacing), stays up (the head above the
    ground by more than its half height), and only sideways a fraction of the forward distance."""
    scene = centipede(4)
    sim = td.ContactSimulator(scene.model, scene.h)
    traj = sim.run(scene.initial_state(), 2.5, tau=scene.tau, record_every=250)
    com = td.center_of_mass(scene.model, traj.q)
    forward = com[-1, 0] - com[0, 0]
    assert forward > 0.25
    assert abs(com[-1, 1] - com[0, 1]) < 0.5 * forward
    assert traj.q[:, 2].min() > 0.03
    assert np.all(np.isfinite(traj.q))


@pytest.mark.parametrize("bad, error", [(0, ValueError), (2.5, ValueError), ("4", TypeError), (np.nan, ValueError)])
def test_bad_sizes(bad, error):
    with pytest.raises(error, match="n_segments"):
        centipede(bad)
