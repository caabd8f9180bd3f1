"""Simulation with contact (drumwright2012 §6.3): one ``td.ContactSimulator`` step of the walking
centipede (``treedyn.scenes.centipede``; explicit Euler at h = 1e-5 as the paper, drumwright's
contact-space inertia, one thread) at 10 and 50 segments (nv 113 and 553, 20 and 100 feet on the
ground); and, as tracked ratios in one process, the contact-space inertia by crba-cholesky over
drumwright's (50 segments) and MuJoCo's mj_step over our step (10 segments).
``python -m benchmarks centipede`` is the full figure (Fig. 4); these are its regression checks.

Each step benchmark advances one trajectory from the standing state (every foot on the ground):
one untimed step in ``setup``, then each timed call is one more step with the gait's torques of
the warmed-up state (fixed: over a few hundred steps of 1e-5 s they barely change); after
``RESET`` steps the state goes back to the warmed-up snapshot.
"""

import functools

import treedyn as td
from treedyn.scenes import centipede
from treedyn.sim.collision import collide
from treedyn.util.timing import speedup
from treedyn.util.timing import time_call as _time_call  # (a module-level time_* would be an asv benchmark)

from .common import Threads, make_solver_or_skip

H = 1e-5
RESET = 200


@functools.cache
def scene(n):
    """The centipede of n segments, built once per benchmark process (callers step copies)."""
    return centipede(n)


def _warm(n, solver="drumwright"):
    """(simulator, state after one step, the gait's torques there)."""
    sc = scene(n)
    make_solver_or_skip(solver, sc.model)
    sim = td.ContactSimulator(sc.model, H, solver=solver, integrator="euler", contact_solver="proxqp")
    state = sc.initial_state()
    sim.step(state, sc.tau(state.t, state.q, state.v))
    return sim, state, sc.tau(state.t, state.q, state.v)


class ContactStep(Threads):
    """``ContactSimulator.step``: collision, ABA's free motion, M⁻¹[N D] by drumwright's Θ(n²)
    method and [N D]ᵀM⁻¹[N D], the two maximum-dissipation QPs (ProxQP), explicit Euler."""

    params = [10, 50]
    param_names = ["segments"]
    timeout = 120

    def setup(self, n):
        self._set_threads(1)
        try:
            self.sim, self.snapshot, self.tau = _warm(n)
            self.state = self.snapshot.copy()
            self.k = 0
        except BaseException:
            td.set_num_threads(self._threads_before)  # asv does not run teardown when setup fails
            raise

    def time_step(self, n):
        """Wall time of one contact step (the gait's torques given)."""
        self.k += 1
        if self.k > RESET:
            self.k = 1
            self.state = self.snapshot.copy()
        self.sim.step(self.state, self.tau)

    def track_step_best(self, n):
        """Seconds of one contact step from the warmed-up state (a copy of it each call: the same work
        every call), the minimum over 51 single calls (treedyn.util.timing.time_call). On a loaded
        2-core machine ``time_step``'s samples are bimodal (a ~2 ms step or one that waited for a
        time slice), so its median jumps; the minimum stays put (.ci/asv's regression subset)."""
        step = lambda: self.sim.step(self.snapshot.copy(), self.tau)
        return _time_call(step, repeat=51, min_time=0.0).best

    track_step_best.unit = "seconds"


class ContactInertiaRatio(Threads):
    """time of the contact-space inertia (ContactSimulator.contact_space_inertia: [N D], M⁻¹[N D]
    and [N D]ᵀM⁻¹[N D]) by crba-cholesky over that by drumwright, at one pose of the 50-segment
    centipede standing on its 100 feet (m = 500 contact directions)."""

    n = 50
    repeats = 9
    timeout = 120

    def setup(self):
        self._set_threads(1)
        try:
            sc = scene(self.n)
            model, q = sc.model, sc.initial_state().q
            contacts = collide(model, q)
            fast = td.ContactSimulator(model, H, solver=make_solver_or_skip("drumwright", model))
            dense = td.ContactSimulator(model, H, solver=make_solver_or_skip("crba-cholesky", model))
            self.f_dense = lambda: dense.contact_space_inertia(q, contacts)
            self.f_fast = lambda: fast.contact_space_inertia(q, contacts)
            self.f_dense(), self.f_fast()
        except BaseException:
            td.set_num_threads(self._threads_before)
            raise

    def track_contact_inertia_cholesky_over_drumwright(self):
        """Median time of the contact-space inertia by CRBA + dense Cholesky over that by
        drumwright's Θ(n²) method, alternating the two, one thread (drumwright2012 §6.3 reports an
        order of magnitude at 250 segments). Above 1: drumwright is faster."""
        return speedup(self.f_dense, self.f_fast, self.repeats)

    track_contact_inertia_cholesky_over_drumwright.unit = "ratio"


class StepRatioMujoco(Threads):
    """time of MuJoCo's mj_step over that of our contact step on the same 10-segment centipede
    (``model.to_mjcf()``; same h and torques; MuJoCo's default solver and soft contacts)."""

    n = 10
    repeats = 9
    timeout = 120

    def setup(self):
        try:
            import mujoco

            from treedyn.tools.peers import MujocoFromFile
        except ImportError as e:
            raise NotImplementedError(f"mujoco peer unavailable: {e}") from e
        self._set_threads(1)
        try:
            sim, state, tau = _warm(self.n)
            model = scene(self.n).model
            xml = model.to_mjcf()
            coords = MujocoFromFile(model, xml)  # the q/τ map (its own model has contacts off)
            m = mujoco.MjModel.from_xml_string(xml)
            m.opt.timestep = H
            d = mujoco.MjData(m)
            d.qpos[:] = coords.q(state.q)
            d.qfrc_applied[:] = coords.apply_T(state.q, tau)  # τ_peer = T⁻ᵀτ = Tτ (orthogonal blocks)
            mujoco.mj_step(m, d)
            self.f_mujoco = lambda: mujoco.mj_step(m, d)
            self.f_ours = lambda: sim.step(state, tau)
        except BaseException:
            td.set_num_threads(self._threads_before)
            raise

    def track_step_mujoco_over_drumwright(self):
        """Median time of MuJoCo's mj_step over that of ContactSimulator.step (drumwright, explicit
        Euler, h = 1e-5), alternating the two, one thread. Above 1: ours is faster."""
        return speedup(self.f_mujoco, self.f_ours, self.repeats)

    track_step_mujoco_over_drumwright.unit = "ratio"


def _mujoco_peer(sc, start, steps, record, fastest=False):
    """mj_step on MuJoCo's model of scene ``sc`` (``model.to_mjcf()``) at h = 1e-3, replaying the gait's
    torques of ``steps`` steps as qfrc_applied from ``start``, back there every ``steps`` calls: ``record(tau_of,
    coords)`` runs ours along those steps and returns MuJoCo's generalized forces for them. ``fastest``:
    MuJoCo's fastest settings (PGS, the dense Jacobian, elliptic cones). NotImplementedError without mujoco."""
    try:
        import mujoco

        from treedyn.tools.peers import MujocoFromFile
    except ImportError as e:
        raise NotImplementedError(f"mujoco peer unavailable: {e}") from e
    xml = sc.model.to_mjcf()
    coords = MujocoFromFile(sc.model, xml)
    m = mujoco.MjModel.from_xml_string(xml)
    m.opt.timestep = 1e-3
    if fastest:
        m.opt.solver, m.opt.jacobian, m.opt.cone = (
            mujoco.mjtSolver.mjSOL_PGS,
            mujoco.mjtJacobian.mjJAC_DENSE,
            mujoco.mjtCone.mjCONE_ELLIPTIC,
        )
    d = mujoco.MjData(m)
    qpos, qvel = coords.q(start.q), coords.apply_T(start.q, start.v)
    qfrc, k = record(coords), [0]

    def peer():
        if k[0] % steps == 0:
            d.qpos[:], d.qvel[:], d.time = qpos, qvel, 0.0
        d.qfrc_applied[:] = qfrc[k[0] % steps]
        mujoco.mj_step(m, d)
        k[0] += 1

    return peer


class ContactStepRatioMujoco(Threads):
    """time of MuJoCo's mj_step over that of the C++ contact step (``contact_solver="admm"``) on the
    same centipede (``model.to_mjcf()``), in the judged setting of ``python -m benchmarks
    contact_step``: semi-implicit Euler at h = 1e-3, one thread, the scene's gait. The gait's
    torques along ``STEPS`` steps from the standing state are recorded in setup; each timed call
    replays the next one (both simulators back at the standing state every ``STEPS`` calls). History
    shows the lead per size: above 1, ours is faster."""

    params = [10, 50, 100]
    param_names = ["segments"]
    repeats = 9
    timeout = 300
    STEPS = 100

    def setup(self, n):
        self._set_threads(1)
        try:
            sc = scene(n)
            sim = td.ContactSimulator(sc.model, 1e-3, contact_solver="admm")
            start = sc.initial_state()
            taus = []

            def record(coords):  # the gait's torques, and MuJoCo's generalized forces for them
                qfrc, state = [], start.copy()
                for _ in range(self.STEPS):
                    taus.append(sc.tau(state.t, state.q, state.v))
                    qfrc.append(coords.apply_T(state.q, taus[-1]))
                    sim.step(state, taus[-1])
                return qfrc

            self.f_mujoco = _mujoco_peer(sc, start, self.STEPS, record)
            ours_state, k = [start.copy()], [0]

            def ours():
                if k[0] % self.STEPS == 0:
                    ours_state[0] = start.copy()
                sim.step(ours_state[0], taus[k[0] % self.STEPS])
                k[0] += 1

            self.f_ours = ours
        except BaseException:
            td.set_num_threads(self._threads_before)
            raise

    def track_step_mujoco_over_admm(self, n):
        """Median time of MuJoCo's mj_step over that of ContactSimulator.step (contact_solver="admm",
        semi-implicit, h = 1e-3), alternating the two, one thread. Above 1: ours is faster."""
        return speedup(self.f_mujoco, self.f_ours, self.repeats)

    track_step_mujoco_over_admm.unit = "ratio"


class SoftCentipedeRatioMujoco(Threads):
    """time of MuJoCo's mj_step over that of ``td.StepData.step`` on the centipede with MuJoCo's physics
    (``soft=True``), at MuJoCo's default settings and at its fastest (PGS, the dense Jacobian, elliptic
    cones: benchmarks/contact_step.py's ``fastest``), one thread, h = 1e-3, the gait's torques of
    ``STEPS`` steps from the standing state replayed on ``data.tau`` (MuJoCo's qfrc_applied); both back
    at the standing state every ``STEPS`` calls. Above 1: ours is faster."""

    params = ([10, 50], ["default", "fastest"])
    param_names = ["segments", "mujoco"]
    repeats = 9
    timeout = 300
    STEPS = 100

    def setup(self, n, settings):
        self._set_threads(1)
        try:
            sc = scene(n)
            sim = td.ContactSimulator(sc.model, 1e-3, soft=True)
            start = sc.initial_state()
            taus = []

            def record(coords):  # the gait's torques, and MuJoCo's generalized forces for them
                qfrc, data = [], sim.data(start)
                for _ in range(self.STEPS):
                    taus.append(sc.tau(data.time, data.q, data.v))
                    qfrc.append(coords.apply_T(data.q, taus[-1]))
                    data.tau[:] = taus[-1]
                    data.step()
                return qfrc

            self.f_mujoco = _mujoco_peer(sc, start, self.STEPS, record, fastest=settings == "fastest")
            k, box = [0], [None]

            def ours():
                if k[0] % self.STEPS == 0:
                    box[0] = sim.data(start)
                box[0].tau[:] = taus[k[0] % self.STEPS]
                box[0].step()
                k[0] += 1

            self.f_ours = ours
        except BaseException:
            td.set_num_threads(self._threads_before)
            raise

    def track_step_mujoco_over_stepdata(self, n, settings):
        """Median time of mj_step over that of td.StepData.step, alternating the two, one thread. Above 1:
        ours is faster."""
        return speedup(self.f_mujoco, self.f_ours, self.repeats)

    track_step_mujoco_over_stepdata.unit = "ratio"
