"""An example treedyn solver plugin: M(q) from treedyn.mass_matrix, c(q, v) from
treedyn.bias_forces, and numpy's dense solve. Slow, simple and correct: a template to copy.

It does not set ``thread_safe = True``: treedyn then serializes the calls on one instance, which
keeps a copy safe to share between threads whatever state it adds."""

import numpy as np

import treedyn


class DenseSolveSolver(treedyn.Solver):
    name = "example-dense"
    description = "example plugin: numpy.linalg.solve(M(q), tau - c(q, v))"
    capabilities = frozenset({"batch", "inverse_inertia", "branched", "floating_base", "multi_dof"})

    def forward_dynamics(self, q, v, tau, f_ext=None):
        q, v, tau, batch = self.check_inputs(q, v, tau)
        if not batch:
            return self._one(q, v, tau, f_ext)
        out = np.empty_like(v)  # (B, nv); B may be 0
        for b in range(len(q)):
            out[b] = self._one(q[b], v[b], tau[b], None if f_ext is None else f_ext[b])
        return out

    def _one(self, q, v, tau, f_ext):
        M = treedyn.mass_matrix(self.model, q)
        c = treedyn.bias_forces(self.model, q, v, f_ext)
        return np.linalg.solve(M, tau - c)

    def inverse_inertia(self, q, R):
        return np.linalg.solve(treedyn.mass_matrix(self.model, q), np.asarray(R, dtype=float))
