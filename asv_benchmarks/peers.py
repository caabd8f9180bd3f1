"""The Pinocchio peer, measured the same way as treedyn's solvers, and our speedup over it: one
call on a chain, and batches on 2 threads against ``pin.abaInParallel``.

The Pinocchio model comes from ``treedyn.peers.to_pinocchio`` (same q/v layout), so the very same
(q, v, tau) arrays go to both libraries. Everything is skipped (NotImplementedError in setup)
when pinocchio or ``treedyn.peers`` is not importable.
"""

import numpy as np

import treedyn as td
from treedyn.util.timing import speedup

from .common import chain_model, inputs, make_solver_or_skip


def _pinocchio_or_skip():
    try:
        import pinocchio

        from treedyn.tools.peers import to_pinocchio
    except ImportError as e:
        raise NotImplementedError(f"pinocchio peer unavailable: {e}") from e
    return pinocchio, to_pinocchio


class PinocchioForwardDynamics:
    """``pinocchio.aba(model, data, q, v, tau)`` on the same n-joint chains as ForwardDynamics.

    n stops at 300: Pinocchio's Data grows much faster than linearly with n (about 1.8 GB at
    n = 300 here) and a 1000-joint Data risks being killed for memory.
    """

    params = [7, 30, 100, 300]
    param_names = ["n"]

    def setup(self, n):
        pin, to_pinocchio = _pinocchio_or_skip()
        self.aba = pin.aba
        model = chain_model(n)
        self.pm = to_pinocchio(model)
        self.pd = self.pm.createData()
        self.q, self.v, self.tau = inputs(model)
        self.aba(self.pm, self.pd, self.q, self.v, self.tau)  # warm-up

    def time_pinocchio_aba(self, n):
        """Wall time of one pinocchio.aba call (unbatched), comparable to ForwardDynamics(n, "aba")."""
        self.aba(self.pm, self.pd, self.q, self.v, self.tau)


class SpeedupOverPinocchio:
    """time(pinocchio.aba) / time(treedyn "aba") on a 100-joint chain, in one process."""

    n = 100
    repeats = 9

    def setup(self):
        pin, to_pinocchio = _pinocchio_or_skip()
        model = chain_model(self.n)
        solver = make_solver_or_skip("aba", model)
        pm = to_pinocchio(model)
        pd = pm.createData()
        q, v, tau = inputs(model)
        self.f_pin = lambda: pin.aba(pm, pd, q, v, tau)
        self.f_td = lambda: solver.forward_dynamics(q, v, tau)

    def track_aba_speedup_vs_pinocchio(self):
        """Median per-call time of pinocchio.aba divided by that of treedyn's "aba" solver on a
        100-joint chain; repeats alternate between the two so drifting load affects both alike.
        Above 1 means treedyn is faster."""
        return speedup(self.f_pin, self.f_td, self.repeats)

    track_aba_speedup_vs_pinocchio.unit = "ratio"


class BatchSpeedupOverAbaInParallel:
    """time(pin.abaInParallel) / time(treedyn's batched generic "aba") on 2 threads, B robots of n
    joints (the chain), float64 (``python -m benchmarks speed``'s generic rows; the specialised
    kernel: specialised.SpecialisedBatchSpeedupOverAbaInParallel)."""

    params = ["4096x7", "256x200"]
    param_names = ["batch"]
    repeats = 5

    def setup(self, batch):
        pin, to_pinocchio = _pinocchio_or_skip()
        B, n = map(int, batch.split("x"))
        model = chain_model(n)
        solver = make_solver_or_skip("aba", model, capability="batch")
        Q, V, T = inputs(model, batch=B)
        pool = pin.ModelPool(to_pinocchio(model), 2)
        QT, VT, TT, A = np.asfortranarray(Q.T), np.asfortranarray(V.T), np.asfortranarray(T.T), np.zeros((model.nv, B))
        self.f_pin = lambda: pin.abaInParallel(2, pool, QT, VT, TT, A)
        self.f_td = lambda: solver.forward_dynamics(Q, V, T)
        self._threads = td.get_num_threads()
        td.set_num_threads(2)
        for _ in range(5):  # the first calls on 2 threads build the thread team
            self.f_pin(), self.f_td()

    def teardown(self, batch):
        td.set_num_threads(self._threads)

    def track_batch_speedup_vs_abaInParallel(self, batch):
        """Median time of pin.abaInParallel over that of the batched generic "aba" (above 1: treedyn
        faster); samples of ~50 ms (a call right after the peer's meets its OpenMP threads spinning)."""
        return speedup(self.f_pin, self.f_td, self.repeats, 0.05)

    track_batch_speedup_vs_abaInParallel.unit = "ratio"
