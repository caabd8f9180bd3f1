"""Timing a call, the one helper behind ``treedyn compare``, the asv suite and the figure
scripts in ``benchmarks/``: samples of a number of calls chosen so that a sample lasts at least
``min_time``, the minimum over the samples (the least disturbed by a noisy machine) and their
median. ``pause`` sleeps between samples, so that a thread pool that went idle has to wake up
again (on 2 cores waking an idle OpenMP pool costs milliseconds: timing back to back hides it).
And ``PhaseTimer``: the seconds of each named phase of a simulation step."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from .. import _checks as C

__all__ = ["Timing", "time_call", "speedup", "PhaseTimer"]


class Timing(NamedTuple):
    """Seconds per call: ``best`` (the minimum sample), ``median``, ``first`` (the first call
    alone, before any warm-up), ``samples`` taken and ``number`` of calls per sample."""

    best: float
    median: float
    first: float
    samples: int
    number: int


def time_call(
    f: Callable[[], object],
    repeat: int = 7,
    min_time: float = 0.02,
    pause: float = 0.0,
    slow: float | None = None,
    max_number: int = 1 << 20,
) -> Timing:
    """Time ``f()``: one call alone (``first``), then ``repeat`` samples of ``number`` calls each,
    ``number`` doubled from 1 until a sample lasts ``min_time`` seconds. A first call slower than
    ``slow`` seconds is not repeated (best = median = first)."""
    repeat = C.integer(repeat, "repeat", minimum=1)
    t0 = time.perf_counter()
    f()
    first = time.perf_counter() - t0
    if slow is not None and first > slow:
        return Timing(first, first, first, 1, 1)
    number, dt = 1, 0.0
    while True:
        if pause:
            time.sleep(pause)
        t0 = time.perf_counter()
        for _ in range(number):
            f()
        dt = time.perf_counter() - t0
        if dt >= min_time or number >= max_number:
            break
        number *= 2
    samples = [dt / number]
    for _ in range(repeat - 1):
        if pause:
            time.sleep(pause)
        t0 = time.perf_counter()
        for _ in range(number):
            f()
        samples.append((time.perf_counter() - t0) / number)
    return Timing(float(np.min(samples)), float(np.median(samples)), first, len(samples), number)


def speedup(
    f_peer: Callable[[], object], f_ours: Callable[[], object], repeat: int = 9, min_time: float = 2e-3
) -> float:
    """median time of f_peer / median time of f_ours (above 1: ours is faster), from samples that
    alternate between the two so that a drifting load affects both alike; each sample lasts about
    min_time (the number of calls is set from the peer's first calls)."""
    number = time_call(f_peer, 1, min_time).number
    time_call(f_ours, 1, 0.0)  # warm up
    t_peer, t_ours = [], []
    for _ in range(repeat):
        for f, out in ((f_peer, t_peer), (f_ours, t_ours)):
            t0 = time.perf_counter()
            for _ in range(number):
                f()
            out.append((time.perf_counter() - t0) / number)
    return float(np.median(t_peer) / np.median(t_ours))


class PhaseTimer:
    """The seconds of each named phase of one step, the one helper behind the steppers' per-phase
    timings (``time.perf_counter``)::

        phases = PhaseTimer(("collision", "dynamics"))
        with phases("collision"):
            ...
        phases.seconds  # {"collision": ..., "dynamics": 0.0}; a phase entered twice adds up

    ``names``: the phases reported even when a step skips them (0.0). ``total()``: the seconds from
    the timer's creation to now. Phases do not nest."""

    __slots__ = ("seconds", "start", "_name", "_t0")

    def __init__(self, names=()):
        self.seconds = dict.fromkeys(names, 0.0)
        self.start = time.perf_counter()

    def __call__(self, name: str) -> PhaseTimer:
        self._name = name
        return self

    def __enter__(self):
        self._t0 = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.seconds[self._name] = self.seconds.get(self._name, 0.0) + (time.perf_counter() - self._t0)
        return False

    def total(self) -> float:
        return time.perf_counter() - self.start
