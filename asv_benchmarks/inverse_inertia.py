"""M(q)⁻¹ and M(q)⁻¹R (drumwright2012): the full inverse and products with m = 6 and 60 columns,
over n, for each method that provides them, with 1 and 2 threads; the full inverse at n = 1000 into
out= and what a second thread gains there; Pinocchio's computeMinverse and our speedup over it in
the same process, and our speedup over MuJoCo's M⁻¹ (mj_crb, mj_factorM, mj_solveM).

Models are revolute chains (``treedyn.scenes.chain``, the conservative case: depth n). A method
whose single call takes more than ~1 s is skipped (crba-ltl's O(n² d) M⁻¹ at n = 1000).
"""

import time

import numpy as np

import treedyn as td
from treedyn.scenes import random_tree
from treedyn.util.timing import speedup

from .common import Threads, chain_model, figure_script, inputs, make_solver_or_skip, warm_up_or_skip

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


class InverseMassMatrixOut(Threads):
    """``solver.inverse_mass_matrix(q, out=out)``: the full M⁻¹ of a 1000-joint chain written into
    an array kept between calls (no fresh 8 MB result to allocate and page-fault per call)."""

    params = [1, 2]
    param_names = ["threads"]

    def setup(self, threads):
        model = chain_model(1000)
        self.solver = make_solver_or_skip("drumwright", model)
        self.q, _, _ = inputs(model)
        self.out = np.empty((model.nv, model.nv))
        self._set_threads(threads)
        self.solver.inverse_mass_matrix(self.q, out=self.out)

    def time_inverse_mass_matrix_out(self, threads):
        """Wall time of one full M⁻¹ (1000 x 1000) into out=, with `threads` threads."""
        self.solver.inverse_mass_matrix(self.q, out=self.out)


class InverseMassMatrixTwoThreads:
    """time(1 thread) / time(2 threads) of the full M⁻¹ at n = 1000 with out= (the goal: ≥ 1.6),
    on a chain (depth 1000: the per-configuration setup is one leaves-to-root sweep) and on a
    random tree; calls made ``PAUSE`` s apart (an idle worker must not cost its wake-up) or back to
    back. Medians of ``CALLS`` calls per thread count, the two counts alternating."""

    params = (["chain", "random tree"], ["after pause", "back to back"])
    param_names = ["model", "calls"]
    PAUSE = 0.05
    CALLS = 31

    def setup(self, model, calls):
        m = chain_model(1000) if model == "chain" else random_tree(1000, 0)
        solver = make_solver_or_skip("drumwright", m)
        q, _, _ = inputs(m)
        out = np.empty((m.nv, m.nv))
        self.f = lambda: solver.inverse_mass_matrix(q, out=out)
        self._before = td.get_num_threads()
        for k in (1, 2):
            td.set_num_threads(k)
            self.f()

    def teardown(self, *args):
        if hasattr(self, "_before"):  # (not when setup skipped before setting it)
            td.set_num_threads(self._before)

    def track_two_thread_speedup(self, model, calls):
        """median time on 1 thread / median time on 2 threads (above 1: the second thread pays)."""
        times = {1: [], 2: []}
        for _ in range(self.CALLS):
            for k in (1, 2):
                td.set_num_threads(k)
                if calls == "after pause":
                    time.sleep(self.PAUSE)
                else:
                    self.f()  # the previous call on the other thread count is not this one's warm-up
                t0 = time.perf_counter()
                self.f()
                times[k].append(time.perf_counter() - t0)
        return float(np.median(times[1]) / np.median(times[2]))

    track_two_thread_speedup.unit = "ratio"


def _pinocchio_or_skip():
    try:
        import pinocchio

        from treedyn.tools.peers import to_pinocchio
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


class MinverseSpeedupOverMujoco(Threads):
    """time(MuJoCo's M⁻¹) / time(treedyn drumwright inverse_mass_matrix), n = 300, one thread:
    mj_kinematics, mj_comPos, mj_crb, mj_factorM and mj_solveM(M, I) on the same tree of hinges
    (``benchmarks.drumwright.mujoco_call``, the figure script's peer: MuJoCo's model-spec API, its
    own inertias), alternating the two. Skipped without MuJoCo."""

    n = 300
    repeats = 9

    def setup(self):
        self._set_threads(1)  # first: asv runs teardown after a skip (NotImplementedError) too
        model = chain_model(self.n)
        solver = make_solver_or_skip("drumwright", model)
        q, _, _ = inputs(model)
        self.f_mujoco = figure_script("drumwright").mujoco_call(model, q)
        if self.f_mujoco is None:
            raise NotImplementedError("mujoco peer unavailable")
        self.f_td = lambda: solver.inverse_mass_matrix(q)
        self.f_mujoco(), self.f_td()

    def track_minverse_speedup_vs_mujoco(self):
        """Median time of MuJoCo's M⁻¹ (the five calls) over that of treedyn's full M⁻¹
        (drumwright, one thread) on a 300-joint chain. Above 1: treedyn is faster."""
        return speedup(self.f_mujoco, self.f_td, self.repeats)

    track_minverse_speedup_vs_mujoco.unit = "ratio"
