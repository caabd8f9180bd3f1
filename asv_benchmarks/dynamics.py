"""One-shot dynamics (treedyn.algorithms.dynamics): inverse dynamics by RNEA and the joint-space inertia M(q)
by CRBA on n-joint chains, and, as tracked ratios in one process, Pinocchio's ``rnea`` and ``crba``
over ours on the 100-joint chain (same model through ``treedyn.peers.to_pinocchio``, same arrays).
"""

import numpy as np

import treedyn as td
from treedyn.util.timing import speedup

from .common import chain_model, inputs


class Dynamics:
    """``td.rnea(model, q, v, a)`` and ``td.mass_matrix(model, q)`` on an n-joint chain (one
    thread; each call allocates its O(n) workspace and its result)."""

    params = [30, 100]
    param_names = ["n"]

    def setup(self, n):
        self.model = chain_model(n)
        self.q, self.v, self.a = inputs(self.model)
        td.rnea(self.model, self.q, self.v, self.a), td.mass_matrix(self.model, self.q)

    def time_rnea(self, n):
        """Wall time of one inverse dynamics call, τ = M(q)a + c(q, v)."""
        td.rnea(self.model, self.q, self.v, self.a)

    def time_mass_matrix(self, n):
        """Wall time of one M(q) (nv x nv, a fresh array)."""
        td.mass_matrix(self.model, self.q)


class DynamicsSpeedupOverPinocchio:
    """time(pinocchio.rnea) / time(td.rnea) and time(pinocchio.crba) / time(td.mass_matrix) on the
    100-joint chain, alternating the two in one process (pinocchio.crba fills the upper triangle,
    ours the whole matrix)."""

    n = 100
    repeats = 9

    def setup(self):
        try:
            import pinocchio as pin

            from treedyn.tools.peers import to_pinocchio
        except ImportError as e:
            raise NotImplementedError(f"pinocchio peer unavailable: {e}") from e
        model = chain_model(self.n)
        pm = to_pinocchio(model)
        pd = pm.createData()
        q, v, a = inputs(model)
        self.pairs = {
            "rnea": (lambda: pin.rnea(pm, pd, q, v, a), lambda: td.rnea(model, q, v, a)),
            "crba": (lambda: pin.crba(pm, pd, q), lambda: td.mass_matrix(model, q)),
        }
        for f_pin, f_td in self.pairs.values():
            if not np.all(np.isfinite(f_pin())) or not np.all(np.isfinite(f_td())):
                raise RuntimeError("a non-finite result")

    def track_rnea_speedup_vs_pinocchio(self):
        """Median time of pinocchio.rnea over that of td.rnea (above 1: treedyn faster)."""
        return speedup(*self.pairs["rnea"], self.repeats)

    track_rnea_speedup_vs_pinocchio.unit = "ratio"

    def track_crba_speedup_vs_pinocchio(self):
        """Median time of pinocchio.crba over that of td.mass_matrix (above 1: treedyn faster)."""
        return speedup(*self.pairs["crba"], self.repeats)

    track_crba_speedup_vs_pinocchio.unit = "ratio"
