"""Contact solvers: given the contact-space problem of one step, the impulses.

The problem (drumwright2012 §6.3, see sim/contact.py): the contact-space inertia G = RᵀM⁻¹R of the
rows R = [N L D] (P contacts' normals, nL joint limits, k friction edges per contact), the
velocities g = Rᵀv* before the impulses, the targets b of the normal and limit rows, and the
friction coefficients μ. A solver returns z = [c_N; c_L; c_D] ≥ 0 and its iteration count.

A new contact solver is a :class:`ContactSolver` subclass with ``solve(G, g, b, mu, P, nL)``, built
from ``(friction_edges, tolerance, max_iterations)``; it is found by name in ``CONTACT_SOLVERS``, where
a package registers it through the entry point group ``treedyn.contact_solvers`` (or a session by
``CONTACT_SOLVERS["name"] = cls``); then ``td.ContactSimulator(model, dt, contact_solver="name")``
uses it, and ``treedyn.testing.check_contact_solver`` checks it (docs/plugins.md, "Contact solvers").
"""

from __future__ import annotations

import functools
from collections.abc import MutableMapping
from importlib.metadata import entry_points

import numpy as np

from .. import _checks
from ..util.plugins import load_group
from .result import SimulationWarning

__all__ = [
    "ContactSolver",
    "MaximumDissipationSolver",
    "AutoContactSolver",
    "AdmmContactSolver",
    "NewtonContactSolver",
    "ProxQPContactSolver",
    "CONTACT_SOLVERS",
    "GROUP",
    "MAX_FRICTION_EDGES",
    "available_contact_solvers",
]

#: the entry point group of third-party contact solvers (a package's pyproject.toml:
#: ``[project.entry-points."treedyn.contact_solvers"] name = "module:Class"``)
GROUP = "treedyn.contact_solvers"


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
    """The C++ step's choice per step (the default): Newton (NewtonContactSolver) on MuJoCo's soft problem where
    it applies — on the tree's sparsity where every contact is against the world or an ancestor (past
    NEWTON_MAX_NV coordinates where its factor costs less than ADMM's iterations), dense otherwise (past
    NEWTON_MAX_NV coordinates where its factors cost less than ADMM's iterations) — else ADMM
    (AdmmContactSolver)."""

    description = (
        "the C++ step's choice per step: Newton on MuJoCo's soft problem where it pays, else ADMM (the default)"
    )

    engine_code = 0


class AdmmContactSolver(EngineContactSolver):
    """The impulses by ADMM on the tree Delassus operator (contact/admm.hpp, contact/delassus.hpp: G never
    formed, O(N + m) per iteration), warm-started from the last step; hard and soft contacts, every cone.
    tolerance: the residuals' bound in velocity units (m/s, rad/s)."""

    description = "ADMM on the tree Delassus operator (C++), warm-started; hard and soft contacts, every cone"

    engine_code = 1


class NewtonContactSolver(EngineContactSolver):
    """MuJoCo's primal Newton method with an exact line search on the soft problem (contact/newton.hpp: M by CRBA,
    H factored per change of the active set, dense or by LTL on the tree's sparsity), for pyramidal and
    frictionless contacts and limits; a step it does not apply to (hard contacts or rows, elliptic cones, a
    tree past 1 000 coordinates whose contacts span two branches) is ADMM's. tolerance: MuJoCo's,
    on the gradient, the cost's improvement and the Newton decrement scaled by the mean inertia (acceleration
    units)."""

    description = (
        "MuJoCo's primal Newton with exact line search (C++), soft pyramidal and frictionless contacts; else ADMM"
    )

    engine_code = 2
    default_tolerance = 1e-8


class ContactSolver:
    """A contact solver in Python: the base class of third-party ones (see the module).

    ContactSimulator makes one per simulator, ``cls(friction_edges, tolerance, max_iterations)``
    (checked here: subclasses that add options call ``super().__init__`` first), and calls
    ``solve(G, g, b, mu, P, nL)`` once per step with contacts or joint limits within reach, with

    - G (m, m), m = P + nL + P·k: the contact-space inertia RᵀM⁻¹R of the rows R = [N L D] (P
      contact normals, nL joint-limit rows, k = friction_edges edges per contact, contact-major),
      symmetric positive semi-definite;
    - g (m,): the rows' velocities Rᵀv* before the impulses;
    - b (P + nL,): the normal and limit rows' velocity targets (push-out, limit gaps);
    - mu (P,): the contacts' friction coefficients.

    It returns ``(z, iterations)``: z (m,) ≥ 0 the impulses [c_N; c_L; c_D] of the maximum-dissipation
    problem of sim/contact.py's module docstring, and the iterations it took (an int, for
    ContactStep.qp_iterations). An error it raises ends the step with that error. Hard contacts
    only: soft=True, dry friction and tendon limits are the C++ step's (in_engine solvers).
    """

    #: whether the C++ step solves the contacts (the built-ins "auto", "admm", "newton"); False for solve()
    in_engine = False
    #: the tolerance ContactSimulator gives when the user gives none (qp_tolerance=None)
    default_tolerance = 1e-9
    #: a one-line description for td.available_contact_solvers(); the docstring's first line if empty
    description = ""

    def __init__(self, friction_edges: int, tolerance: float, max_iterations: int):
        self.friction_edges, self.tolerance, self.max_iterations = _options(friction_edges, tolerance, max_iterations)

    def solve(self, G, g, b, mu, P, nL=0):
        raise NotImplementedError(f"{type(self).__name__}.solve(G, g, b, mu, P, nL)")


def _limit_targets(m: int, b, P: int, nL: int) -> np.ndarray:
    """w (m,): the limit rows' targets b_L at their rows, zero elsewhere. The objective's term −c_Lᵀ b_L
    (see the module) makes it ½ zᵀ G z + zᵀ (g − w)."""
    w = np.zeros(m)
    w[P : P + nL] = b[P : P + nL]
    return w


class MaximumDissipationSolver(ContactSolver):
    """Drumwright and Shell's maximum dissipation (sim/contact.py) as two convex QPs, for a subclass that
    brings the QP solver (``qp``): the inelastic normal (and limit) impulses, then friction within the
    cones with the normal impulses' sum bounded by the first QP's."""

    def solve(self, G, g, b, mu, P, nL=0):
        """z = [c_N (P); c_L (nL); c_D (P·k)] ≥ 0 in two convex QPs: the inelastic normal (and
        limit) impulses first, then all of z with the cone bounded by them as well. b: the targets
        of the P + nL rows of the normal block [N L]. Returns z and the QPs' iterations."""
        k, m = self.friction_edges, P + nL
        w = _limit_targets(len(g), b, P, nL)
        cN, it1 = self.normal_impulses(G, g, b, P, nL)
        if P == 0:  # limits alone: no friction, step 2 would be step 1 again
            return cN, it1
        # 2. friction: min ½ zᵀ G z + zᵀ ([N L D]ᵀ v* − w) subject to [N L]ᵀv⁺ ≥ b, Σ_j c_D,ij ≤
        #    μ_i c_N,i and Σ_i c_N,i ≤ κ = Σ_i c_N,i of step 1 (Drumwright and Shell's bound: without
        #    it the normal impulses would grow only to allow more friction, which dissipates more, and
        #    throw the bodies off the ground). A QP solver meets each row only to its absolute tolerance ε
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
        z, it2 = self.qp(G, g - w, C, lower, upper, np.r_[cN, np.zeros(P * k)])  # (from step 1's impulses)
        return z, it1 + it2

    def normal_impulses(self, G, g, b, P, nL=0):
        """Step 1 alone, the inelastic normal (and limit) impulses: min ½ c_Nᵀ A c_N + c_Nᵀ ([N L]ᵀv* − w),
        A c_N + [N L]ᵀv* ≥ b, c_N ≥ 0 (the contacts' and the limits' together); their sum over the
        contacts is step 2's bound κ. Returns them and the QP's iterations."""
        m = P + nL
        A, w = G[:m, :m], _limit_targets(m, b, P, nL)
        return self.qp(A, g[:m] - w, A, b - g[:m], np.full(m, np.inf), np.zeros(m))

    def qp(self, H, q, C, lower, upper, x0):
        """min ½ xᵀ H x + qᵀ x subject to lower ≤ C x ≤ upper, x ≥ 0, to self.tolerance in each row's
        units, from x0 (a start the solver may take); returns x ≥ 0 and its iterations."""
        raise NotImplementedError(f"{type(self).__name__}.qp(H, q, C, lower, upper, x0)")


class ProxQPContactSolver(MaximumDissipationSolver):
    """The reference: Maximum dissipation in two convex QPs (Drumwright and Shell), each by proxsuite's dense
    ProxQP. tolerance: ProxQP's eps_abs, in velocity units."""

    description = "maximum dissipation in two convex QPs by proxsuite's ProxQP (Python; the reference)"

    def qp(self, H, g, C, lower, upper, x0):
        """min ½ xᵀ H x + gᵀ x subject to lower ≤ C x ≤ upper, x ≥ 0, by ProxQP (dense; from its own start,
        not x0)."""
        from proxsuite import proxqp

        n = len(g)

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


_BUILTIN = {
    "auto": AutoContactSolver,
    "admm": AdmmContactSolver,
    "newton": NewtonContactSolver,
    "proxqp": ProxQPContactSolver,
}


@functools.cache
def _plugins() -> dict[str, type]:
    """The third-party contact solvers of the entry point group, loaded once (util/plugins.py: one that
    fails to load, is not a ContactSolver subclass with solve() or takes a built-in's name is skipped
    with a RuntimeWarning naming it)."""

    def accept(cls):
        return isinstance(cls, type) and issubclass(cls, ContactSolver) and not cls.in_engine

    return load_group(
        entry_points(group=GROUP), "contact solver", accept, "a treedyn.ContactSolver subclass with solve()", _BUILTIN
    )


class _Registry(MutableMapping):
    """CONTACT_SOLVERS: the built-ins, the entry point group's plugins (loaded on first use) and the
    solvers registered in this session by ``CONTACT_SOLVERS[name] = cls``."""

    def __init__(self):
        self._added: dict[str, type] = {}

    def _all(self) -> dict[str, type]:
        return {**_BUILTIN, **_plugins(), **self._added}

    def __getitem__(self, name):
        return self._all()[name]

    def __setitem__(self, name, cls):
        if not isinstance(name, str):
            raise TypeError(f"a contact solver's name must be a str, got {name!r}")
        if name in _BUILTIN:
            raise ValueError(f"contact solver {name!r} is built in and cannot be replaced")
        if not (isinstance(cls, type) and issubclass(cls, ContactSolver)):
            raise TypeError(f"contact solver {name!r} must be a treedyn.ContactSolver subclass, got {cls!r}")
        self._added[name] = cls

    def __delitem__(self, name):
        del self._added[name]

    def __iter__(self):
        return iter(self._all())

    def __len__(self):
        return len(self._all())

    def refresh(self) -> None:
        """Forget the loaded plugins (after installing one in a running interpreter)."""
        _plugins.cache_clear()


#: the contact solvers by name (ContactSimulator's ``contact_solver``)
CONTACT_SOLVERS = _Registry()


def available_contact_solvers() -> dict[str, str]:
    """{name: description} of every contact solver: the built-ins, then the plugins that load."""
    return {
        name: getattr(cls, "description", "") or (cls.__doc__ or "").strip().split("\n")[0]
        for name, cls in CONTACT_SOLVERS.items()
    }


#: Newton's soft problem on the tree's sparsity (LTL on compact rows, no fill-in) where every contact is against
#: the world or between a body and its ancestor, up to 1000 coordinates: up to this many coordinates always,
#: beyond with contact_solver="newton" always, with "auto" where the factor's Σ depth² costs less than ADMM's
#: iterations (contact/step.hpp, newton_tree_pays); dense (a Cholesky factor, nv³/3) where rows span two
#: branches: up to this many coordinates always, beyond (to 1000) with "newton" always, with "auto" where its
#: factors cost less than ADMM's iterations (newton_dense_pays)
NEWTON_MAX_NV = 60
