"""A call after an idle pause, on 1 and 2 threads: users call in loops with other work between,
and a sleeping worker thread must not make the 2-thread call dearer than the 1-thread one.

``track_after_pause`` is the median wall time (seconds) of calls each made after
``time.sleep(PAUSE)`` (the pause itself is not timed), against ``time_back_to_back``.
"""

import time

import numpy as np

from treedyn.util.timing import time_call as _time_call  # (a module-level time_* would be an asv benchmark)

from .common import Threads, chain_model, inputs, make_solver_or_skip, warm_up_or_skip

PAUSE = 0.05  # seconds between calls: long enough for idle workers to go to sleep
CALLS = 15

CASES = {
    # label: (method, n, how to call)
    "inverse_mass_matrix n=300": ("drumwright", 300, lambda s, q, R, B: s.inverse_mass_matrix(q)),
    "inverse_mass_matrix n=1000": ("drumwright", 1000, lambda s, q, R, B: s.inverse_mass_matrix(q)),
    "inverse_inertia n=300 m=60": ("drumwright", 300, lambda s, q, R, B: s.inverse_inertia(q, R)),
    "forward_dynamics batch 256, n=100": ("aba", 100, lambda s, q, R, B: s.forward_dynamics(*B)),
}


class AfterPause(Threads):
    """One call after an idle pause of PAUSE s, with 1 or 2 threads."""

    params = (list(CASES), [1, 2])
    param_names = ["case", "threads"]

    def setup(self, case, threads):
        method, n, call = CASES[case]
        model = chain_model(n)
        solver = make_solver_or_skip(method, model)
        q, _, _ = inputs(model)
        R = np.random.default_rng(1).standard_normal((model.nv, 60))
        batch = inputs(model, batch=256) if method == "aba" else None
        self.call = lambda: call(solver, q, R, batch)
        self._set_threads(threads)
        try:
            warm_up_or_skip(self.call, warmup_calls=5)
        except BaseException:
            self.teardown()
            raise

    def track_after_pause(self, case, threads):
        """Median wall time of a call made PAUSE s after the previous one."""
        time.sleep(PAUSE)  # time_call's first call, after a pause too
        return _time_call(self.call, CALLS, min_time=0.0, pause=PAUSE).median

    track_after_pause.unit = "seconds"

    def time_back_to_back(self, case, threads):
        """The same call, timed by asv back to back (no pause)."""
        self.call()
