"""Constrained forward dynamics (treedyn.constraints): a chain of n revolute links pinned to the
world at every tenth link (n/10 ball closures, 3n/10 rows), closed at a bent configuration.

``td.constrained_forward_dynamics`` with drumwright (M⁻¹Gᵀ in Θ(nm)) and crba-cholesky, and as a
tracked ratio in one process, Pinocchio's ``constraintDynamics`` (3D rigid constraints, its
proximal Cholesky) over ours with drumwright. Skipped without Pinocchio.
"""

import functools

import numpy as np

import treedyn as td
from treedyn.scenes import chain
from treedyn.sim.constraints import project_positions, project_velocities
from treedyn.util.timing import speedup

from .common import make_solver_or_skip


@functools.cache
def pinned_chain(n):
    """(model, q, v, tau): the chain pinned every 10 links, at a state on its constraints."""
    m = chain(n)
    rng = np.random.default_rng(1)
    q_ref = 0.3 * rng.standard_normal(m.nq)
    for i in range(10, n + 1, 10):
        m.add_loop_closure(i, 0, td.Spherical(), q=q_ref)
    s = td.make_solver("drumwright", m)
    q = project_positions(s, q_ref + 0.01 * rng.standard_normal(m.nq))
    return m, q, project_velocities(s, q, rng.standard_normal(m.nv)), rng.standard_normal(m.nv)


class ConstrainedForwardDynamics:
    """``td.constrained_forward_dynamics(solver, q, v, tau)``: the solver's q̈₀ and M⁻¹Gᵀ, the
    Delassus solve (Jacobi-scaled eigendecomposition), q̈ = q̈₀ + Yλ."""

    params = ([30, 100, 300], ["drumwright", "crba-cholesky"])
    param_names = ["n", "solver"]

    def setup(self, n, solver):
        self.model, self.q, self.v, self.tau = pinned_chain(n)
        self.solver = make_solver_or_skip(solver, self.model)
        self.time_constrained_forward_dynamics(n, solver)  # warm-up

    def time_constrained_forward_dynamics(self, n, solver):
        td.constrained_forward_dynamics(self.solver, self.q, self.v, self.tau)


class SpeedupOverPinocchioConstraintDynamics:
    """time(pinocchio.constraintDynamics) / time(ours, drumwright) on the 60-link pinned chain."""

    n = 60
    repeats = 9

    def setup(self):
        try:
            import pinocchio as pin

            from treedyn.tools.peers import to_pinocchio
        except ImportError as e:
            raise NotImplementedError(f"pinocchio peer unavailable: {e}") from e
        model, q, v, tau = pinned_chain(self.n)
        solver = make_solver_or_skip("drumwright", model)
        pm = to_pinocchio(model)
        pd = pm.createData()
        se3 = lambda X: pin.SE3(X.rotation, X.translation)
        cms = pin.StdVec_RigidConstraintModel(
            [
                pin.RigidConstraintModel(
                    pin.ContactType.CONTACT_3D,
                    pm,
                    c.body_a,
                    se3(c.placement_a),
                    c.body_b,
                    se3(c.placement_b),
                    pin.LOCAL,
                )
                for c in model.loop_closures
            ]
        )
        cds = pin.StdVec_RigidConstraintData([c.createData() for c in cms])
        pin.initConstraintDynamics(pm, pd, cms, cds)
        prox = pin.ProximalSettings(1e-12, 1e-12, 20)
        self.f_pin = lambda: pin.constraintDynamics(pm, pd, q, v, tau, cms, cds, prox)
        self.f_td = lambda: td.constrained_forward_dynamics(solver, q, v, tau)

    def track_constraint_dynamics_speedup_vs_pinocchio(self):
        """Median per-call time of Pinocchio's constraintDynamics over ours (drumwright); above 1
        means treedyn is faster."""
        return speedup(self.f_pin, self.f_td, self.repeats)

    track_constraint_dynamics_speedup_vs_pinocchio.unit = "ratio"
