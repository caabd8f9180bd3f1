"""The one result type family of the simulation layer: a trajectory and what it cost.

``SimulationResult`` (``td.simulate``) holds the states t, q, v and the counts every run has;
``ContactTrajectory`` (``td.ContactSimulator.run``) adds the contact step's statistics per step,
``SolverStepTrajectory`` (the RedMax solvers' own step, run by ``treedyn simulate``) the solver's.
A run that stops early has ``success=False`` and a message; ``SimulationWarning`` and
``SimulationError`` (which carries the partial result) report it. ``Recorder`` is how the
steppers keep the states (every k-th step, and the last).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = [
    "SimulationResult",
    "ContactTrajectory",
    "RecordedContacts",
    "SolverStepTrajectory",
    "SimulationWarning",
    "SimulationError",
    "Recorder",
]


class SimulationWarning(RuntimeWarning):
    """A simulation stopped before t_end (``on_failure="warn"``, the default): the message says why
    and when; the result holds the trajectory up to the last good state."""


class SimulationError(RuntimeError):
    """A simulation stopped before t_end (``on_failure="raise"``); ``result`` holds the trajectory up
    to the last good state, ``__cause__`` the solver's exception when the dynamics failed."""

    def __init__(self, message: str, result: SimulationResult):
        super().__init__(message)
        self.result = result


@dataclass
class SimulationResult:
    """A trajectory and what it cost.

    t (K,), q (K, nq), v (K, nv): the accepted states (only the first and the last when
    ``record=False``), or, when simulate was given ``t_eval``, the states at those times. n_evals: forward-dynamics evaluations; n_accepted / n_rejected: steps.
    success is False when the run stopped early; message says why.
    """

    t: np.ndarray
    q: np.ndarray
    v: np.ndarray
    method: str
    n_evals: int = 0
    n_accepted: int = 0
    n_rejected: int = 0
    success: bool = True
    message: str = "reached t_end"
    min_step: float = field(default=np.inf)

    def __repr__(self):
        status = "ok" if self.success else f"FAILED ({self.message})"
        t_end = f"{self.t[-1]:.6g}" if len(self.t) else "-"
        return (
            f"SimulationResult({self.method}: t_end={t_end}, {len(self.t)} states, "
            f"{self.n_evals} evaluations, {self.n_accepted} accepted / {self.n_rejected} rejected steps, {status})"
        )


@dataclass
class ContactTrajectory(SimulationResult):
    """A SimulationResult (t, q, v every record_every steps) with per-step n_contacts,
    max_penetration, qp_iterations, seconds, n_limits and converged (the contact solve met its
    tolerance; its best iterate was used where not)."""

    n_contacts: np.ndarray = field(default_factory=lambda: np.zeros(0, int))
    max_penetration: np.ndarray = field(default_factory=lambda: np.zeros(0))
    qp_iterations: np.ndarray = field(default_factory=lambda: np.zeros(0, int))
    seconds: np.ndarray = field(default_factory=lambda: np.zeros(0))
    n_limits: np.ndarray = field(default_factory=lambda: np.zeros(0, int))
    converged: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))
    #: with run(record_contacts=True): per kept state, the contacts of the step that led to it
    #: (RecordedContacts; none for the first state); None otherwise
    contacts: list | None = None


@dataclass(frozen=True)
class RecordedContacts:
    """The contacts of one step, kept with the state it led to: world points (k, 3), unit normals
    (k, 3) from the first body towards the second, penetration depths (k,), the two bodies (k, 2)
    and the impulse of each contact on its second body (k, 3) world N·s (the first body gets the
    opposite), over the step's h (s): impulse / h is the mean force (N)."""

    points: np.ndarray
    normals: np.ndarray
    depths: np.ndarray
    bodies: np.ndarray
    impulses: np.ndarray
    h: float

    @staticmethod
    def none() -> RecordedContacts:
        z = np.zeros((0, 3))
        return RecordedContacts(z, z, np.zeros(0), np.zeros((0, 2), int), z, 0.0)

    def __len__(self) -> int:
        return len(self.depths)


class ContactKeeper:
    """The contacts a run keeps (record_contacts): those of the steps that lead to a kept state
    (run_steps' rule: every ``record_every``-th step and the last), one RecordedContacts each."""

    def __init__(self, on: bool, record_every: int, n_steps: int):
        self.on, self.every, self.n_steps, self.s = on, record_every, n_steps, 0
        self.contacts = [RecordedContacts.none()]  # (the first state: no step led to it)

    def wants(self) -> bool:
        """Whether the step about to run leads to a kept state (and its contacts are wanted)."""
        s, self.s = self.s, self.s + 1
        return self.on and ((s + 1) % self.every == 0 or s == self.n_steps - 1)

    def keep(self, step, h: float):
        """Keep a ContactStep's contacts and impulses; returns the step."""
        c = step.contacts
        self.contacts.append(RecordedContacts(c.points, c.normals, c.depths, c.bodies, np.array(step.impulses), h))
        return step

    def kept(self, n_states: int) -> list | None:
        return self.contacts[:n_states] if self.on else None


@dataclass
class SolverStepTrajectory(SimulationResult):
    """A SimulationResult of a solver's own step (the RedMax solvers' ``step``; t, q, v every
    ``record_every`` steps) with the statistics of each step: ``stats[key]`` (one entry a step; 0
    where a step did not report the key) for the keys the run asked for."""

    stats: dict = field(default_factory=dict)


class Recorder:
    """The states a run keeps: ``add(t, q, v)`` copies them; ``arrays()`` gives (t, q, v)."""

    __slots__ = ("ts", "qs", "vs")

    def __init__(self, t, q, v):
        self.ts, self.qs, self.vs = [t], [q.copy()], [v.copy()]

    def add(self, t, q, v):
        self.ts.append(t), self.qs.append(q.copy()), self.vs.append(v.copy())

    def arrays(self):
        return np.array(self.ts), np.array(self.qs), np.array(self.vs)
