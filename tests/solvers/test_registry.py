"""treedyn.solvers.registry: make_solver's checks beyond the name (the rest: tests/solvers/test_solvers.py)."""

import pytest

import treedyn as td


def test_a_solver_that_drops_the_models_constraints_says_so():
    """A coupled model (as URDF's mimic joints) given to a solver whose forward_dynamics is the tree's
    alone warns once, naming what keeps the couplings; the redmax solvers and treedyn's simulators do not."""
    import warnings

    from treedyn.model.constraint_checks import UnenforcedConstraintWarning
    from treedyn.scenes import chain

    model = chain(3)
    model.add_coupling(2, 1)
    with pytest.warns(UnenforcedConstraintWarning, match="1 constraint row.*constrained_forward_dynamics"):
        td.make_solver("aba", model)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnenforcedConstraintWarning)
        td.make_solver("redmax-direct", model)
        td.ContactSimulator(model, 0.01)
        td.make_solver("aba", chain(3))  # (no constraints: nothing to say)
