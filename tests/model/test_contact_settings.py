"""treedyn.model.contact_settings: the soft-constraint parameters a model carries (the geoms', limits' and
constraints' are tested with the simulators that use them: tests/sim/test_soft*.py)."""

import numpy as np
import pytest

import treedyn as td


def test_row_softness_is_checked_and_kept():
    """set_row_softness: a joint's or a tendon's dry friction, a tendon's limits; MuJoCo's defaults until set."""
    m = td.Model()
    m.add_body("a", None, td.Revolute((0, 0, 1)), inertia=td.Inertia(1.0, (0, 0, 0), np.eye(3)))
    m.add_tendon("t", {"a": 1.0}, range=(-1, 1), frictionloss=0.1)
    assert m.row_softness("tendon limit", "t") == ((0.02, 1.0), (0.9, 0.95, 0.001, 0.5, 2.0))
    m.set_row_softness("tendon limit", "t", solref=(0.05, 1))
    m.set_row_softness("joint friction", "a", solimp=(0.5, 0.8, 0.01, 0.5, 2))
    assert m.row_softness("tendon limit", "t")[0] == (0.05, 1.0)
    assert m.row_softness("joint friction", "a")[1][0] == 0.5
    with pytest.raises(ValueError, match="kind must be one of"):
        m.set_row_softness("limit", "t")
    with pytest.raises(ValueError, match="no tendon named 'u'"):
        m.set_row_softness("tendon friction", "u")
    with pytest.raises(ValueError, match="solref"):
        m.set_row_softness("joint friction", "a", solref=(float("nan"), 1))
