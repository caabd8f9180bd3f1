"""g(q), C(q, v) and the centroidal momentum (treedyn.algorithms.coriolis) against Pinocchio's own
functions on random trees (fixed and floating, hinges, slides, ball and fixed joints), against
treedyn's bias forces (C v + g = c, universal joints too), and the skew-symmetry of Ṁ − 2C."""

import numpy as np
import pytest

import treedyn as td
from treedyn.scenes.random_tree import random_tree

pin = pytest.importorskip("pinocchio")

KINDS = ("revolute", "prismatic", "spherical", "fixed")


def _tree(n, seed, floating, joints=KINDS):
    rng = np.random.default_rng(seed)
    scene = random_tree(n, rng, floating_base=floating, joints=joints)
    model = getattr(scene, "model", scene)
    return model, td.random_configuration(model, rng), rng.normal(size=model.nv)


@pytest.mark.parametrize("floating", [False, True])
@pytest.mark.parametrize("seed", [0, 1])
def test_they_are_pinocchios(floating, seed):
    """computeGeneralizedGravity, computeCoriolisMatrix, computeCentroidalMap and
    computeCentroidalMomentum (rows [linear; angular]) on the same tree, to 1e-11 relative."""
    from treedyn.peers import to_pinocchio

    model, q, v = _tree(12, seed, floating)
    pm = to_pinocchio(model)
    pd = pm.createData()
    C_pin = pin.computeCoriolisMatrix(pm, pd, q, v)
    C = td.coriolis_matrix(model, q, v)
    assert np.abs(C - C_pin).max() <= 1e-11 * (1 + np.abs(C_pin).max())
    g_pin = pin.computeGeneralizedGravity(pm, pd, q)
    assert np.abs(td.gravity_forces(model, q) - g_pin).max() <= 1e-11 * (1 + np.abs(g_pin).max())
    A_pin = pin.computeCentroidalMap(pm, pd, q)
    A = td.centroidal_momentum_matrix(model, q)
    assert np.abs(A[[3, 4, 5, 0, 1, 2]] - A_pin).max() <= 1e-11 * (1 + np.abs(A_pin).max())
    h_pin = pin.computeCentroidalMomentum(pm, pd, q, v)
    h = td.centroidal_momentum(model, q, v)
    np.testing.assert_allclose(h, np.r_[h_pin.angular, h_pin.linear], rtol=0, atol=1e-11 * (1 + np.abs(h).max()))


@pytest.mark.parametrize("joints", [KINDS, ("revolute", "universal", "spherical")], ids=["kinds", "universal"])
@pytest.mark.parametrize("floating", [False, True])
def test_c_v_plus_g_is_the_bias_force(joints, floating):
    """C v + g = c(q, v) (treedyn.bias_forces), a universal joint's turning axis included (where
    Pinocchio's C leaves its Ṡ out)."""
    model, q, v = _tree(10, 3, floating, joints)
    c = td.bias_forces(model, q, v)
    err = td.coriolis_matrix(model, q, v) @ v + td.gravity_forces(model, q) - c
    assert np.abs(err).max() <= 1e-11 * (1 + np.abs(c).max())


def test_mdot_minus_2c_is_skew_symmetric():
    """Ṁ − 2C is skew-symmetric (hinges and slides: q̇ = v), Ṁ by central differences along v (error
    O(ε²) ≈ 1e-8 of M's scale)."""
    model, q, v = _tree(12, 4, False, ("revolute", "prismatic"))
    eps = 1e-5
    Mdot = (td.mass_matrix(model, q + eps * v) - td.mass_matrix(model, q - eps * v)) / (2 * eps)
    S = Mdot - 2 * td.coriolis_matrix(model, q, v)
    assert np.abs(S + S.T).max() <= 1e-7 * np.abs(Mdot).max()
    assert np.abs(S).max() > 1e-3 * np.abs(Mdot).max()  # (not zero: skew, not symmetric)


def test_bad_input_is_named():
    model, q, v = _tree(4, 5, False)
    with pytest.raises(ValueError, match="q must have shape"):
        td.coriolis_matrix(model, q[:-1], v)
    with pytest.raises(ValueError, match="v must have shape"):
        td.centroidal_momentum(model, q, np.zeros(model.nv + 1))
    with pytest.raises(TypeError, match="model"):
        td.gravity_forces("robot.urdf", q)
