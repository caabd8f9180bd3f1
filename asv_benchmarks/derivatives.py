"""Analytic derivatives of the dynamics (treedyn.algorithms.derivatives) against Pinocchio's
computeRNEADerivatives / computeABADerivatives in the same run, one thread: a 50-joint chain and
the real robots UR5, Solo12, Talos. The Pinocchio model comes from ``treedyn.peers.to_pinocchio``
(the same q/v layout), so the same arrays go to both. Skipped (NotImplementedError in setup) when
pinocchio or example-robot-data is not installed.
"""

import treedyn as td
from treedyn.util.timing import speedup

from .common import chain_model, inputs
from .robots import robot, robot_inputs

MODELS = ["chain50", "ur5", "solo12", "talos"]


def _model(name):
    if name == "chain50":
        model = chain_model(50)
        return model, inputs(model)
    model, _ = robot(name)
    return model, robot_inputs(model)


def _pinocchio_or_skip():
    try:
        import pinocchio

        from treedyn.tools.peers import to_pinocchio
    except ImportError as e:
        raise NotImplementedError(f"pinocchio peer unavailable: {e}") from e
    return pinocchio, to_pinocchio


def _calls(name, kind):
    """(treedyn's call, Pinocchio's call) of the derivatives `kind` ("rnea" or "aba") on one state"""
    pin, to_pinocchio = _pinocchio_or_skip()
    model, (q, v, x) = _model(name)
    pm = to_pinocchio(model)
    pd = pm.createData()
    if kind == "rnea":
        return (lambda: td.rnea_derivatives(model, q, v, x)), (lambda: pin.computeRNEADerivatives(pm, pd, q, v, x))
    return (lambda: td.aba_derivatives(model, q, v, x)), (lambda: pin.computeABADerivatives(pm, pd, q, v, x))


class Derivatives:
    """One call of td.rnea_derivatives / td.aba_derivatives and of Pinocchio's counterpart."""

    params = (MODELS, ["rnea", "aba"])
    param_names = ["model", "kind"]

    def setup(self, name, kind):
        self.before = td.get_num_threads()
        td.set_num_threads(1)
        self.ours, self.peer = _calls(name, kind)
        self.ours()
        self.peer()

    def teardown(self, name, kind):
        if hasattr(self, "before"):  # (not when setup skipped before setting it)
            td.set_num_threads(self.before)

    def time_treedyn(self, name, kind):
        self.ours()

    def time_pinocchio(self, name, kind):
        self.peer()


class DerivativesSpeedupOverPinocchio:
    """time(Pinocchio) / time(treedyn) of the same derivatives, samples alternating between the two
    (treedyn.util.timing.speedup); above 1: treedyn is faster."""

    params = (MODELS, ["rnea", "aba"])
    param_names = ["model", "kind"]
    repeats = 9

    def setup(self, name, kind):
        self.before = td.get_num_threads()
        td.set_num_threads(1)
        self.ours, self.peer = _calls(name, kind)

    def teardown(self, name, kind):
        if hasattr(self, "before"):  # (not when setup skipped before setting it)
            td.set_num_threads(self.before)

    def track_speedup(self, name, kind):
        return speedup(self.peer, self.ours, self.repeats)

    track_speedup.unit = "ratio"
