"""Real robots from example-robot-data: forward dynamics and M(q)⁻¹ with treedyn's solvers, and
Pinocchio's ``aba`` / ``computeMinverse`` on the same URDF (parsed by Pinocchio itself) measured
in the same run, with the ratio of the two.

Robots: UR5 (6-DoF arm, fixed base), Panda (7-DoF arm and two fingers, fixed base), Solo12 (quadruped, floating base, nv = 18), Talos (humanoid,
floating base, nv = 38). Everything is skipped (NotImplementedError in setup) when
example-robot-data, or pinocchio for the peer benchmarks, is not installed.
"""

import functools
import warnings

import numpy as np

import treedyn as td
from treedyn.util.timing import speedup

from .common import SOLVERS, declares, make_solver_or_skip, warm_up_or_skip

#: name: (path in example-robot-data's robots folder, floating base, mimic joints)
ROBOTS = {
    "ur5": ("ur_description/urdf/ur5_robot.urdf", False, "error"),
    "panda": ("panda_description/urdf/panda.urdf", False, "independent"),
    "solo12": ("solo_description/robots/solo12.urdf", True, "error"),
    "talos": ("talos_data/robots/talos_reduced.urdf", True, "independent"),
}


@functools.cache
def robot(name):
    """(model, path) of a robot, loaded once per benchmark process; NotImplementedError (skip)
    when example-robot-data is missing."""
    try:
        from treedyn.tools.peers import example_robot_path

        path = example_robot_path(ROBOTS[name][0])
    except (ImportError, FileNotFoundError) as e:
        raise NotImplementedError(f"example-robot-data unavailable: {e}") from e
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = td.Model.from_urdf(path, floating_base=ROBOTS[name][1], mimic=ROBOTS[name][2])
    return model, path


def robot_inputs(model, seed=0):
    rng = np.random.default_rng(seed)
    return td.random_configuration(model, rng), rng.standard_normal(model.nv), rng.standard_normal(model.nv)


def pinocchio_peer(name):
    model, path = robot(name)
    try:
        from treedyn.tools.peers import PinocchioFromFile

        return PinocchioFromFile(model, path, ROBOTS[name][1])
    except ImportError as e:
        raise NotImplementedError(f"pinocchio unavailable: {e}") from e


class RobotForwardDynamics:
    """One ``solver.forward_dynamics(q, v, tau)`` call on a real robot."""

    params = (list(ROBOTS), SOLVERS)
    param_names = ["robot", "solver"]

    def setup(self, name, solver):
        model, _ = robot(name)
        self.solver = make_solver_or_skip(solver, model)
        self.q, self.v, self.tau = robot_inputs(model)
        warm_up_or_skip(self.solver.forward_dynamics, self.q, self.v, self.tau)

    def time_forward_dynamics(self, name, solver):
        """Wall time of one unbatched forward_dynamics call."""
        self.solver.forward_dynamics(self.q, self.v, self.tau)


class RobotInverseInertia:
    """``solver.inverse_inertia(q, I)``: the whole M(q)⁻¹ of a real robot."""

    params = (list(ROBOTS), SOLVERS)
    param_names = ["robot", "solver"]

    def setup(self, name, solver):
        model, _ = robot(name)
        self.solver = make_solver_or_skip(solver, model, capability="inverse_inertia")
        self.q, _, _ = robot_inputs(model)
        self.R = np.eye(model.nv)
        warm_up_or_skip(
            self.solver.inverse_inertia, self.q, self.R, tolerate_errors=not declares(self.solver, "inverse_inertia")
        )

    def time_inverse_inertia(self, name, solver):
        """Wall time of one inverse_inertia call with R = I (nv columns)."""
        self.solver.inverse_inertia(self.q, self.R)


class RobotPinocchio:
    """Pinocchio on the same URDF, parsed by Pinocchio: ``aba`` and ``computeMinverse``."""

    params = list(ROBOTS)
    param_names = ["robot"]

    def setup(self, name):
        peer = pinocchio_peer(name)
        model, _ = robot(name)
        q, v, tau = robot_inputs(model)
        self.aba = peer.peer_call(q, v, tau)
        pin, pm, pd, qp = peer.pin, peer.pm, peer.pd, peer.q(q)
        self.minv = lambda: pin.computeMinverse(pm, pd, qp)
        self.aba(), self.minv()

    def time_pinocchio_aba(self, name):
        """Wall time of one pinocchio.aba call, comparable to RobotForwardDynamics(robot, "aba")."""
        self.aba()

    def time_pinocchio_minverse(self, name):
        """Wall time of one pinocchio.computeMinverse call, comparable to RobotInverseInertia."""
        self.minv()


class RobotSpeedupOverPinocchio:
    """time(Pinocchio) / time(treedyn "aba") on each robot, measured alternately in one process."""

    params = list(ROBOTS)
    param_names = ["robot"]
    repeats = 9

    def setup(self, name):
        peer = pinocchio_peer(name)
        model, _ = robot(name)
        solver = make_solver_or_skip("aba", model)
        minv = make_solver_or_skip("drumwright", model)  # the full M⁻¹ in Θ(n²)
        q, v, tau = robot_inputs(model)
        pin, pm, pd, qp = peer.pin, peer.pm, peer.pd, peer.q(q)
        self.pairs = {
            "aba": (peer.peer_call(q, v, tau), lambda: solver.forward_dynamics(q, v, tau)),
            "minv": (lambda: pin.computeMinverse(pm, pd, qp), lambda: minv.inverse_mass_matrix(q)),
        }

    def _ratio(self, key):
        return speedup(*self.pairs[key], self.repeats)

    def track_aba_speedup_vs_pinocchio(self, name):
        """Median time of pinocchio.aba over that of treedyn's "aba" solver (above 1: treedyn faster)."""
        return self._ratio("aba")

    track_aba_speedup_vs_pinocchio.unit = "ratio"

    def track_minv_speedup_vs_pinocchio(self, name):
        """Median time of pinocchio.computeMinverse over that of treedyn's "drumwright" inverse_mass_matrix(q)."""
        return self._ratio("minv")

    track_minv_speedup_vs_pinocchio.unit = "ratio"
