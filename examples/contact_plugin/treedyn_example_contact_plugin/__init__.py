"""An example treedyn contact solver plugin: the two maximum-dissipation QPs that treedyn's
MaximumDissipationSolver poses (treedyn/sim/contact_solvers.py, ProxQP's too), each solved here by
OSQP's algorithm written out in numpy — ADMM on
min ½xᵀHx + qᵀx s.t. l ≤ Ax ≤ u, then solution polishing (Stellato, Banjac, Goulart, Bemporad and
Boyd, "OSQP: an operator splitting solver for quadratic programs", Math. Prog. Comp. 2020; "§" and
"Alg." below are the paper's). Two additions for the contact problems' 1e-9 tolerance: polishing's
refinement starts from the ADMM iterate, and a failed polish is mended by a few active-set rounds.
Dense and simple: a template to copy, not a fast solver."""

import warnings

import numpy as np
from scipy.linalg import cho_factor, cho_solve, lu_factor, lu_solve

import treedyn
from treedyn.sim.contact_solvers import MaximumDissipationSolver


def _inf_norm(a):
    return np.abs(a).max(initial=0.0)


class OsqpAdmmContactSolver(MaximumDissipationSolver):
    """OSQP's ADMM with ρ adaptation and solution polishing on the two contact QPs (numpy, scipy.linalg)."""

    description = "example plugin: OSQP's ADMM with polishing (Stellato et al. 2020) on the two contact QPs"
    default_tolerance = 1e-9
    sigma, alpha, rho0 = 1e-6, 1.6, 0.1  # OSQP's defaults: the proximal term, the relaxation, the first ρ
    check_every = 10  # iterations between the residual checks (and the ρ updates, polish attempts)
    delta, refine, rounds = 1e-9, 20, 10  # polishing (§4): regularisation, refinement steps, active-set rounds
    scaling = 10  # Ruiz equilibration's iterations (§5.1)

    def solve(self, G, g, b, mu, P, nL=0):
        G, g, b, mu = (np.asarray(a, dtype=float) for a in (G, g, b, mu))
        for name, a in (("G", G), ("g", g), ("b", b), ("mu", mu)):
            if not np.all(np.isfinite(a)):
                raise ValueError(f"{type(self).__name__}: the contact problem's {name} has non-finite entries")
        k, m = self.friction_edges, P + nL
        n = m + P * k
        if G.shape != (n, n) or g.shape != (n,) or b.shape != (m,) or mu.shape != (P,):
            raise ValueError(f"{type(self).__name__}: the contact problem's shapes do not match P={P}, nL={nL}, k={k}")
        if n == 0:
            return np.zeros(0), 0
        return super().solve(G, g, b, mu, P, nL)  # the two QPs, each by qp below

    def qp(self, H, q, C, lo, hi, x):
        """min ½xᵀHx + qᵀx s.t. lo ≤ Cx ≤ hi, x ≥ 0 (the bound as identity rows of A, as OSQP takes it),
        from x. Returns x ≥ 0 and the ADMM iterations."""
        n, tol, sigma, alpha = len(q), self.tolerance, self.sigma, self.alpha
        A = np.vstack([C, np.eye(n)])
        l, u = np.r_[lo, np.zeros(n)], np.r_[hi, np.full(n, np.inf)]
        # Ruiz equilibration (§5.1, Alg. 2): the iterations run on H̄ = cDHD, q̄ = cDq, Ā = EAD, [El, Eu] with x = Dx̄
        # (the limit rows are in N·m·s, the contacts' in N·s, their inertias thousands apart: unscaled, ADMM crawls)
        H, q, A, d, e, c = _ruiz(H, q, A, self.scaling)
        l, u, x = e * l, e * u, x / d
        eq, free = l == u, np.isinf(l) & np.isinf(u)

        def factor(rho):
            # ρ per row (§5.2): 1e3ρ on equalities, ρ_min on free rows. The KKT system of Alg. 1,
            # [H+σI Aᵀ; A −diag(1/ρ)], reduced by eliminating ν to (H + σI + Aᵀ diag(ρ) A) x̃ = σx − q + Aᵀ(ρz − y)
            # (its Schur complement, positive definite), and z̃ = A x̃
            r = np.where(eq, 1e3 * rho, np.where(free, 1e-6, rho))
            return r, cho_factor(H + sigma * np.eye(n) + A.T @ (r[:, None] * A))

        def residuals(
            x, z, y
        ):  # the termination test's residuals, unscaled, absolute: r_prim = Ax − z, r_dual = Hx + q + Aᵀy
            return _inf_norm((A @ x - z) / e), _inf_norm((H @ x + q + A.T @ y) / (c * d))

        rho = self.rho0
        r, F = factor(rho)
        z, y = np.clip(A @ x, l, u), np.zeros(len(l))
        best, best_res, last_active = x, np.inf, None
        for it in range(1, self.max_iterations + 1):
            xt = cho_solve(F, sigma * x - q + A.T @ (r * z - y), check_finite=False)  # Alg. 1: the linear system
            zt = A @ xt  # z̃
            x = alpha * xt + (1 - alpha) * x  # over-relaxation by α
            zr = alpha * zt + (1 - alpha) * z
            z = np.clip(zr + y / r, l, u)  # projection onto [l, u]
            y = y + r * (zr - z)  # the dual update
            if it % self.check_every and it < self.max_iterations:
                continue
            rp, rd = residuals(x, z, y)
            if max(rp, rd) < best_res:
                best, best_res = x, max(rp, rd)
            # polishing (§4), tried whenever the active set guessed from (z, y) changes; taken if no worse
            lower, upper = (z - l < -y) | eq, (u - z < y) & ~eq
            if last_active is None or not np.array_equal(lower | upper, last_active):
                last_active = lower | upper
                xp, res = self._polish(H, q, A, l, u, e, eq, lower, upper, x, y, residuals)
                if res < best_res:
                    best, best_res = xp, res
            if best_res <= tol:
                return np.maximum(d * best, 0.0), it
            # ρ adaptation (§5.2, on the scaled problem): balance the residuals, each relative to the size of its
            # terms; refactor on a 5× change
            Ax, Hx, Aty = A @ x, H @ x, A.T @ y
            scale_p = _inf_norm(Ax - z) / max(_inf_norm(Ax), _inf_norm(z), 1e-300)
            scale_d = _inf_norm(Hx + q + Aty) / max(_inf_norm(Hx), _inf_norm(Aty), _inf_norm(q), 1e-300)
            new = float(np.clip(rho * np.sqrt(scale_p / max(scale_d, 1e-300)), 1e-6, 1e6))
            if new > 5 * rho or new < rho / 5:
                rho = new
                r, F = factor(rho)
        warnings.warn(
            f"{type(self).__name__}: a contact QP did not converge in {self.max_iterations} ADMM iterations "
            f"(best residual {best_res:.3g} > {tol:.3g}); its best iterate is used",
            treedyn.SimulationWarning,
            stacklevel=4,
        )
        return np.maximum(d * best, 0.0), self.max_iterations

    def _polish(self, H, q, A, l, u, e, eq, lower, upper, x, y, residuals):
        """Solution polishing (§4): the guessed active rows held as equalities, the reduced KKT system
        [H Aₐᵀ; Aₐ 0] solved by its δ-regularised factorisation and iterative refinement on the exact
        one, started from the ADMM iterate (x, y): where the active rows are redundant (many contacts,
        few degrees of freedom) the multipliers are not unique and this keeps the iterate's. Where that
        point fails, a few active-set rounds mend the guess: violated rows join it, then rows whose
        multiplier has the wrong sign leave. Returns the best point and its KKT residual: the worst of
        the constraints' violation and Hx + q + Aᵀy with y in the normal cone."""
        n, tol = len(q), self.tolerance
        best = (x, np.inf)
        for _ in range(self.rounds):
            act = lower | upper
            Aa, na = A[act], int(act.sum())
            K = np.block([[H, Aa.T], [Aa, np.zeros((na, na))]])
            F = lu_factor(K + np.diag(np.r_[np.full(n, self.delta), np.full(na, -self.delta)]))
            rhs = np.r_[-q, np.where(lower, l, u)[act]]
            s = np.r_[x, y[act]]
            for _ in range(self.refine):
                err = rhs - K @ s
                if _inf_norm(err) <= 1e-6 * tol:
                    break
                s += lu_solve(F, err, check_finite=False)
            x, y = s[:n], np.zeros(len(l))
            y[act] = s[n:]
            wrong = ~eq & ((lower & (y > 0)) | (upper & (y < 0)))
            worst = np.argmax(np.where(wrong, np.abs(y), -1.0))
            y[wrong] = 0.0
            Ax = A @ x
            res = max(residuals(x, np.clip(Ax, l, u), y))
            if res < best[1]:
                best = (x, res)
            if res <= tol:
                break
            slack = 0.1 * tol * e  # violated beyond rounding: a tenth of the tolerance, unscaled
            below, above = Ax < l - slack, Ax > u + slack
            lower, upper = lower.copy(), upper.copy()
            if wrong.any() and _inf_norm(err) > 1e-6 * tol:
                # the refinement did not converge: dependent rows with inconsistent targets, their multipliers
                # drifting; releasing the one furthest on the wrong side breaks the dependency
                lower[worst] = upper[worst] = False
            elif below.any() or above.any():  # the violated rows join (an extra active row costs nothing)
                lower, upper = lower | below, upper | above
            elif wrong.any():  # then those whose multiplier has the wrong sign leave
                lower, upper = lower & ~wrong, upper & ~wrong
            else:
                break
        return best


def _ruiz(H, q, A, iterations):
    """Ruiz equilibration of the KKT matrix [H Aᵀ; A 0] (OSQP's Alg. 2): D, E bring its columns' ∞-norms
    towards 1, and c scales the cost so that its terms are of order 1. Returns H̄, q̄, Ā, D, E, c."""
    d, e, c = np.ones(len(q)), np.ones(len(A)), 1.0
    for _ in range(iterations):
        dd = 1 / np.sqrt(np.clip(np.maximum(np.abs(H).max(0), np.abs(A).max(0)), 1e-4, 1e4))
        de = 1 / np.sqrt(np.clip(np.abs(A).max(1), 1e-4, 1e4))
        H, q, A = dd[:, None] * H * dd, dd * q, de[:, None] * A * dd
        d, e = d * dd, e * de
        gamma = 1 / np.clip(max(np.abs(H).max(0).mean(), _inf_norm(q)), 1e-4, 1e4)
        H, q, c = gamma * H, gamma * q, gamma * c
    return H, q, A, d, e, c
