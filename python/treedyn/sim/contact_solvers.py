"""Contact solvers: given the contact-space problem of one step, the impulses.

The problem (drumwright2012 §6.3, see sim/contact.py): the contact-space inertia G = RᵀM⁻¹R of the
rows R = [N L D] (P contacts' normals, nL joint limits, k friction edges per contact), the
velocities g = Rᵀv* before the impulses, the targets b of the normal and limit rows, and the
friction coefficients μ. A solver returns z = [c_N; c_L; c_D] ≥ 0 and its iteration count.

A new contact solver is a class here with ``solve(G, g, b, mu, P, nL)`` built from
``(friction_edges, tolerance, max_iterations)``, and one row in ``CONTACT_SOLVERS``; then
``td.ContactSimulator(model, dt, contact_solver="name")`` uses it.
"""

from __future__ import annotations

import numpy as np

from .. import _checks
from .result import SimulationWarning

__all__ = [
    "AutoContactSolver",
    "AdmmContactSolver",
    "NewtonContactSolver",
    "ProxQPContactSolver",
    "CONTACT_SOLVERS",
    "MAX_FRICTION_EDGES",
]


#: the most edges of a linearised friction cone: its error, 1 − cos(π/k), is 5e-6 at k = 1024, finer
#: than any friction coefficient is known (the exact cone: friction_edges=0); more only costs memory
MAX_FRICTION_EDGES = 1024


def _options(friction_edges, tolerance, max_iterations) -> tuple[int, float, int]:
    """A contact solver's options checked as ContactSimulator checks them (a solver made by hand
    gets the same errors): 0 <= edges <= MAX_FRICTION_EDGES, a positive finite tolerance,
    1 <= iterations <= INT_MAX (a C++ int)."""
    return (
        _checks.integer(friction_edges, "friction_edges", minimum=0, maximum=MAX_FRICTION_EDGES),
        _checks.real(tolerance, "qp_tolerance", positive=True),
        _checks.integer(max_iterations, "max_qp_iterations", minimum=1, maximum=_checks.INT_MAX),
    )


class EngineContactSolver:
    """A contact solver of the C++ step (treedyn/contact/step.hpp), chosen in the engine by ``engine_code``.
    tolerance: the solve's bound; max_iterations: the cap, after which the best iterate is used and the
    step says it did not converge (ContactStep.converged, a SimulationWarning)."""

    in_engine = True
    default_tolerance = 1e-6
    engine_code = 0

    def __init__(self, friction_edges: int, tolerance: float, max_iterations: int):
        self.friction_edges, self.tolerance, self.max_iterations = _options(friction_edges, tolerance, max_iterations)


class AutoContactSolver(EngineContactSolver):
    """The C++ step's choice per step (the default): Newton (NewtonContactSolver) on MuJoCo's soft problem of a
    tree of at most NEWTON_MAX_NV coordinates where it applies, else ADMM (AdmmContactSolver)."""

    engine_code = 0


class AdmmContactSolver(EngineContactSolver):
    """The impulses by ADMM on the tree Delassus operator (contact/admm.hpp, contact/delassus.hpp: G never
    formed, O(N + m) per iteration), warm-started from the last step; hard and soft contacts, every cone.
    tolerance: the residuals' bound in velocity units (m/s, rad/s)."""

    engine_code = 1


class NewtonContactSolver(EngineContactSolver):
    """MuJoCo's primal Newton method with an exact line search on the soft problem (contact/newton.hpp: M by CRBA,
    H factored per change of the active set, dense or by LTL on the tree's sparsity), for pyramidal and
    frictionless contacts and limits; a step it does not apply to (hard contacts or rows, elliptic cones, a
    contact between two branches of a tree past NEWTON_MAX_NV coordinates) is ADMM's. tolerance: MuJoCo's,
    on the gradient and the cost's improvement scaled by the mean inertia (acceleration units)."""

    engine_code = 2
    default_tolerance = 1e-8


class ProxQPContactSolver:
    """The reference: Maximum dissipation in two convex QPs (Drumwright and Shell), each by proxsuite's dense
    ProxQP: the inelastic normal (and limit) impulses, then friction within the cones with the
    normal impulses' sum bounded by the first QP's. tolerance: ProxQP's eps_abs, in velocity units."""

    in_engine = False
    default_tolerance = 1e-9

    def __init__(self, friction_edges: int, tolerance: float, max_iterations: int):
        self.friction_edges, self.tolerance, self.max_iterations = _options(friction_edges, tolerance, max_iterations)

    def solve(self, G, g, b, mu, P, nL=0):
        """z = [c_N (P); c_L (nL); c_D (P·k)] ≥ 0 in two convex QPs: the inelastic normal (and
        limit) impulses first, then all of z with the cone bounded by them as well. b: the targets
        of the P + nL rows of the normal block [N L]. Returns z and the QPs' iterations."""
        k, m = self.friction_edges, P + nL
        # the limit rows' objective term −c_Lᵀ b_L (see the module): g − w with w = [0; b_L; 0]
        w = np.zeros(len(g))
        w[P:m] = b[P:]
        # 1. inelastic normal impulses: min ½ c_Nᵀ A c_N + c_Nᵀ ([N L]ᵀv* − w), A c_N + [N L]ᵀv* ≥ b,
        #    c_N ≥ 0 (the contacts' and the limits' together)
        A = G[:m, :m]
        cN, it1 = self._qp(A, g[:m] - w[:m], A, b - g[:m], m, np.full(m, np.inf))
        if P == 0:  # limits alone: no friction, step 2 would be step 1 again
            return cN, it1
        # 2. friction: min ½ zᵀ G z + zᵀ ([N L D]ᵀ v* − w) subject to [N L]ᵀv⁺ ≥ b, Σ_j c_D,ij ≤
        #    μ_i c_N,i and Σ_i c_N,i ≤ κ = Σ_i c_N,i of step 1 (Drumwright and Shell's bound: without
        #    it the normal impulses would grow only to allow more friction, which dissipates more, and
        #    throw the bodies off the ground). ProxQP meets each row only to its absolute tolerance ε
        #    (in the row's units), so κ gets ε per contact of slack: step 1's solution stays feasible.
        #    κ bounds the contacts' impulses alone: a limit has no friction, so its impulse buys none
        #    (where it lets the contacts push harder, their sum is still held by κ), it is in N·m·s
        #    on a revolute joint where c_N is in N·s (a sum of the two has no unit), and friction
        #    that turns a joint against its stop needs a larger limit impulse than step 1's, which
        #    κ over all rows would take from the contacts.
        n = m + P * k
        rows = np.arange(P)
        cone = np.zeros((P, n))
        cone[rows, rows] = mu
        for j in range(k):
            cone[rows, m + rows * k + j] = -1.0
        kappa = np.zeros((1, n))
        kappa[0, :P] = 1.0
        C = np.vstack([G[:m], cone, kappa])
        lower = np.concatenate([b - g[:m], np.zeros(P), [-np.inf]])
        upper = np.concatenate(
            [np.full(m, np.inf), np.full(P, np.inf), [cN[:P].sum() * (1 + 1e-9) + P * self.tolerance]]
        )
        z, it2 = self._qp(G, g - w, C, lower, n, upper)
        return z, it1 + it2

    def _qp(self, H, g, C, lower, n, upper):
        """min ½ xᵀ H x + gᵀ x subject to lower ≤ C x ≤ upper, x ≥ 0, by ProxQP (dense)."""
        from proxsuite import proxqp

        # squares of the data must stay finite for the solver's residuals (else it iterates on NaN)
        big = max(
            np.abs(H).max(initial=0.0), np.abs(g).max(initial=0.0), np.abs(lower[np.isfinite(lower)]).max(initial=0.0)
        )
        if not big < 1e150:
            raise ValueError(
                f"ContactSimulator: the contact problem's magnitudes ({big:.3g}) are too large for double "
                "precision: the velocities or forces are out of range"
            )
        res = proxqp.dense.solve(
            H,
            g,
            None,
            None,
            C,
            lower,
            upper,
            l_box=np.zeros(n),
            u_box=np.full(n, np.inf),
            eps_abs=self.tolerance,
            eps_rel=0.0,
            max_iter=self.max_iterations,
        )
        status = res.info.status
        if status != proxqp.QPSolverOutput.PROXQP_SOLVED:
            import warnings

            warnings.warn(
                f"ContactSimulator: a contact QP ended with {status.name} after {res.info.iter} iterations "
                f"(primal residual {res.info.pri_res:.3g}, dual {res.info.dua_res:.3g}); its impulses are used",
                SimulationWarning,
                stacklevel=4,
            )
        x = np.asarray(res.x)
        if not np.all(np.isfinite(x)):
            raise ValueError(f"ContactSimulator: the contact QP gave non-finite impulses ({status.name})")
        return np.maximum(x, 0.0), int(res.info.iter)


#: the contact solvers by name (ContactSimulator's ``contact_solver``)
CONTACT_SOLVERS = {
    "auto": AutoContactSolver,
    "admm": AdmmContactSolver,
    "newton": NewtonContactSolver,
    "proxqp": ProxQPContactSolver,
}
#: the largest tree (velocity coordinates) whose soft problem Newton solves dense (a Cholesky factor, nv³/3);
#: a larger one, with contact_solver="newton", on the tree's sparsity (LTL, no fill-in) where every contact is
#: against the world or between a body and its ancestor, up to 1000 coordinates; "auto" leaves it to ADMM
NEWTON_MAX_NV = 60
