"""featherstone-part3's model simplification and symbolic simplification, against Pinocchio in
the same run: the "aba" solver with ``specialise=True`` (ABA generated as C++ for the model,
treedyn.codegen) on one robot per call and on batches, and the operation counts before and after.

The first setup of a model compiles its kernel (about a second for an arm, ~10 s for 200 joints);
later runs take it from the cache (~/.cache/treedyn/kernels). Everything is skipped
(NotImplementedError in setup) without pinocchio, example-robot-data or a C++ compiler.
"""

import functools
import warnings

import numpy as np

import treedyn as td
from treedyn.util.timing import speedup

from .common import chain_model, inputs
from .robots import robot, robot_inputs


@functools.cache
def _specialised(key, dtype=np.float64):
    """The specialised "aba" solver of a robot (by name) or chain (by int), built once."""
    import treedyn.solvers.codegen as codegen

    if codegen.compiler() is None:
        raise NotImplementedError("no C++ compiler: the aba solver cannot be specialised")
    model = chain_model(key) if isinstance(key, int) else robot(key)[0]
    with warnings.catch_warnings():
        warnings.simplefilter("error", codegen.CodegenWarning)
        return model, td.make_solver("aba", model, specialise=True, dtype=dtype)


def _pinocchio(model, path=None, floating=False):
    try:
        import pinocchio as pin

        from treedyn.tools.peers import PinocchioFromFile, to_pinocchio
    except ImportError as e:
        raise NotImplementedError(f"pinocchio unavailable: {e}") from e
    return pin, (PinocchioFromFile(model, path, floating) if path else None), to_pinocchio


ROBOTS = ["ur5", "panda", "solo12", "talos"]


class SpecialisedSpeedupOverPinocchio:
    """time(pinocchio.aba) / time(specialised treedyn "aba"), one robot per call, one thread,
    alternating samples in one process (the goal: at least 2 on each)."""

    params = ["chain100", *ROBOTS]
    param_names = ["model"]
    repeats = 9

    def setup(self, name):
        from .robots import ROBOTS as PATHS

        if name == "chain100":
            model, solver = _specialised(100)
            pin, _, to_pinocchio = _pinocchio(model)
            pm = to_pinocchio(model)
            pd = pm.createData()
            q, v, tau = inputs(model)
            self.f_pin = lambda: pin.aba(pm, pd, q, v, tau)
        else:
            model, path = robot(name)
            _, solver = _specialised(name)
            _, peer, _ = _pinocchio(model, path, PATHS[name][1])
            q, v, tau = robot_inputs(model)
            self.f_pin = peer.peer_call(q, v, tau)
        self.f_td = lambda: solver.forward_dynamics(q, v, tau)
        self.f_pin(), self.f_td()

    def track_specialised_aba_speedup_vs_pinocchio(self, name):
        """Median time of pinocchio.aba over that of the specialised "aba" (above 1: treedyn faster)."""
        return speedup(self.f_pin, self.f_td, self.repeats)

    track_specialised_aba_speedup_vs_pinocchio.unit = "ratio"


class SpecialisedBatchSpeedupOverAbaInParallel:
    """time(pin.abaInParallel) / time(specialised batched "aba") on 2 threads, B robots of n joints
    (the chain), float64 and float32 (the goal: at least 2 in float64, 3 in float32)."""

    params = (["4096x7", "256x200"], ["float64", "float32"])
    param_names = ["batch", "dtype"]
    repeats = 5

    def setup(self, batch, dtype):
        B, n = map(int, batch.split("x"))
        model, solver = _specialised(n, np.dtype(dtype))
        pin, _, to_pinocchio = _pinocchio(model)
        Q, V, T = inputs(model, batch=B)
        pool = pin.ModelPool(to_pinocchio(model), 2)
        QT, VT, TT, A = np.asfortranarray(Q.T), np.asfortranarray(V.T), np.asfortranarray(T.T), np.zeros((model.nv, B))
        Qd, Vd, Td = Q.astype(dtype), V.astype(dtype), T.astype(dtype)
        self.f_pin = lambda: pin.abaInParallel(2, pool, QT, VT, TT, A)
        self.f_td = lambda: solver.forward_dynamics(Qd, Vd, Td)
        self._threads = td.get_num_threads()
        td.set_num_threads(2)
        for _ in range(5):  # the first calls on 2 threads build the thread team
            self.f_pin(), self.f_td()

    def teardown(self, batch, dtype):
        td.set_num_threads(self._threads)

    def track_batch_speedup_vs_abaInParallel(self, batch, dtype):
        """Median time of pin.abaInParallel (float64) over that of the specialised batched "aba";
        samples of ~50 ms (a call right after the peer's meets its OpenMP threads still spinning)."""
        return speedup(self.f_pin, self.f_td, self.repeats, 0.05)

    track_batch_speedup_vs_abaInParallel.unit = "ratio"


class OperationCounts:
    """Multiplications of one ABA call: the generic kernel (counting scalar), the code generated
    for the model, and the code generated for td.simplify(model)."""

    params = (["chain100", *ROBOTS], ["generic", "specialised", "simplified+specialised"])
    param_names = ["model", "kernel"]

    def setup(self, name, kernel):
        self.model = chain_model(100) if name == "chain100" else robot(name)[0]

    def track_multiplications(self, name, kernel):
        """Multiplications in one forward dynamics call."""
        import treedyn.solvers.codegen as codegen

        model = td.simplify(self.model) if kernel.startswith("simplified") else self.model
        counts = codegen.op_counts(model)
        return counts["generic" if kernel == "generic" else "specialised"]["multiplications"]

    track_multiplications.unit = "multiplications"
