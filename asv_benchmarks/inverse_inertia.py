"""M(q)⁻¹ and M(q)⁻¹R (drumwright2012): the full inverse and products with m = 6 and 60 columns,
over n, for each method that provides them, with 1 and 2 threads; Pinocchio's computeMinverse and
our speedup over it in the same process.

Models are revolute chains (``treedyn.scenes.chain``, the conservative case: depth n). A method
whose single call takes more than ~1 s is skipped (crba-ltl's O(n² d) M⁻¹ at n = 1000).
"""

import numpy as np

from treedyn.timing import speedup

from .common import Threads, chain_model, inputs, make_solver_or_skip, warm_up_or_skip

METHODS = ["drumwright", "crba-ltl", "crba-cholesky", "aba"]


class InverseMassMatrix(Threads):
    """``solver.inverse_mass_matrix(q)``: the full M⁻¹ from q on an n-joint chain."""

    params = ([30, 100, 300, 1000], [1, 2], METHODS)
    param_names = ["n", "threads", "method"]

    def setup(self, n, threads, method):
        model = chain_model(n)
        self.solver = make_solver_or_skip(method, model, capability="inverse_inertia")
        self.q, _, _ = inputs(model)
        self._set_threads(threads)
        try:
            warm_up_or_skip(self.solver.inverse_mass_matrix, self.q, warmup_calls=5)
        except BaseException:
            self.teardown()
            raise

    def time_inverse_mass_matrix(self, n, threads, method):
        """Wall time of one full M⁻¹ (nv x nv) with `threads` threads."""
        self.solver.inverse_mass_matrix(self.q)


class InverseInertiaProduct(Threads):
    """``solver.inverse_inertia(q, R)``: M⁻¹R for R with m columns (drumwright: Alg. 1 per column,
    the columns spread over the threads)."""

    params = ([30, 100, 300, 1000], [6, 60], [1, 2], METHODS)
    param_names = ["n", "m", "threads", "method"]

    def setup(self, n, m, threads, method):
        model = chain_model(n)
        self.solver = make_solver_or_skip(method, model, capability="inverse_inertia")
        self.q, _, _ = inputs(model)
        self.R = np.random.default_rng(1).standard_normal((model.nv, m))
        self._set_threads(threads)
        try:
            warm_up_or_skip(self.solver.inverse_inertia, self.q, self.R, warmup_calls=5)
        except BaseException:
            self.teardown()
            raise

    def time_inverse_inertia(self, n, m, threads, method):
        """Wall time of one M⁻¹R, R of shape (n, m), with `threads` threads."""
        self.solver.inverse_inertia(self.q, self.R)


def _pinocchio_or_skip():
    try:
        import pinocchio

        from treedyn.peers import to_pinocchio
    except ImportError as e:
        raise NotImplementedError(f"pinocchio peer unavailable: {e}") from e
    return pinocchio, to_pinocchio


class PinocchioMinverse:
    """``pinocchio.computeMinverse(model, data, q)`` (upper triangle) on the same chains; n stops at
    300 (Pinocchio's Data takes ~2 GB there and grows faster than n²)."""

    params = [30, 100, 300]
    param_names = ["n"]

    def setup(self, n):
        pin, to_pinocchio = _pinocchio_or_skip()
        model = chain_model(n)
        self.f = pin.computeMinverse
        self.pm = to_pinocchio(model)
        self.pd = self.pm.createData()
        self.q, _, _ = inputs(model)
        self.f(self.pm, self.pd, self.q)

    def time_pinocchio_computeMinverse(self, n):
        self.f(self.pm, self.pd, self.q)


class MinverseSpeedupOverPinocchio(Threads):
    """time(pinocchio.computeMinverse) / time(treedyn drumwright inverse_mass_matrix), n = 300."""

    params = [1, 2]
    param_names = ["threads"]
    n = 300
    repeats = 9

    def setup(self, threads):
        pin, to_pinocchio = _pinocchio_or_skip()
        model = chain_model(self.n)
        solver = make_solver_or_skip("drumwright", model)
        pm = to_pinocchio(model)
        pd = pm.createData()
        q, _, _ = inputs(model)
        self.f_pin = lambda: pin.computeMinverse(pm, pd, q)
        self.f_td = lambda: solver.inverse_mass_matrix(q)
        self._set_threads(threads)
        for _ in range(5):
            self.f_pin(), self.f_td()

    def track_minverse_speedup_vs_pinocchio(self, threads):
        """Median time of Pinocchio's computeMinverse over that of treedyn's full M⁻¹ (drumwright,
        `threads` threads) on a 300-joint chain, alternating the two. Above 1: treedyn is faster."""
        return speedup(self.f_pin, self.f_td, self.repeats)

    track_minverse_speedup_vs_pinocchio.unit = "ratio"
