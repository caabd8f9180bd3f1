"""The Solver interface every forward-dynamics plugin implements."""

from __future__ import annotations

import abc
import functools
import threading
import types

import numpy as np

from .. import _core

__all__ = ["Solver"]


class Solver(abc.ABC):
    """A forward-dynamics solver bound to one model.

    Subclasses set ``name`` and ``description``, may declare ``capabilities`` (a frozenset of
    strings such as ``"batch"``, ``"inverse_inertia"``, ``"float32"``, ``"floating_base"``,
    ``"branched"``, ``"multi_dof"``), and implement :meth:`forward_dynamics`; ``supports``
    returns ``None`` when the model is supported and a reason (a string) when it is not.

    The model is frozen at construction: bodies added to it later do not reach the solver.

    One solver may be shared between threads. Unless a class sets ``thread_safe = True`` (it
    guards its own state: the built-in solvers lock in C++), its public methods are serialized
    per instance by a re-entrant lock, so a method may call another.
    """

    name: str = ""
    description: str = ""
    capabilities: frozenset = frozenset()
    thread_safe: bool = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.thread_safe:
            return
        # every public method a subclass defines, inherited ones too (a thread-safe parent's
        # methods may touch state this class adds), takes the instance's lock
        below = cls.__mro__[: cls.__mro__.index(Solver)]
        for attr in {a for klass in below for a in vars(klass) if not a.startswith("_")}:
            f = next(vars(k)[attr] for k in cls.__mro__ if attr in vars(k))  # as stored: staticmethods stay out
            if isinstance(f, types.FunctionType) and not hasattr(f, "_serialized") and f is not vars(Solver).get(attr):
                setattr(cls, attr, _serialized(f))

    def __init__(self, model, dtype=np.float64, **options):
        reason = self.supports(model)
        if reason:
            raise ValueError(f"solver {self.name!r} does not support this model: {reason}")
        dtype = np.dtype(dtype)
        if dtype not in (np.dtype(np.float64), np.dtype(np.float32)):
            raise TypeError(f"dtype must be float64 or float32, got {dtype}")
        if dtype == np.float32 and "float32" not in self.capabilities:
            raise TypeError(f"solver {self.name!r} has no float32 kernels")
        if options:
            raise TypeError(f"solver {self.name!r} got unknown options {sorted(options)}")
        self.model = model
        self.dtype = dtype

    @classmethod
    def supports(cls, model) -> str | None:
        """None if this solver can handle ``model``, else the reason it cannot."""
        return None

    @abc.abstractmethod
    def forward_dynamics(self, q, v, tau, f_ext=None) -> np.ndarray:
        """q̈ = M(q)⁻¹(τ − c(q, v) + Σ Jᵀ f_ext).

        q (nq,), v (nv,), tau (nv,) -> (nv,); or batched (B, nq), (B, nv), (B, nv) -> (B, nv).
        f_ext: spatial forces [n; f] on each body in body coordinates, (n_bodies, 6) (row 0, the
        world, is ignored), or (B, n_bodies, 6) for a batch. Inputs are never modified.
        """

    def check_inputs(self, q, v, tau):
        """For plugin authors: (q, v, tau, batch) as fresh float arrays of ``self.dtype`` after the
        checks every solver owes its users (real dtype, shape (n,) or (B, n), finite values, unit
        quaternions); raises TypeError / ValueError naming the argument. The built-in solvers run
        the same checks (the same C++ code, cpp/bindings/solvers.cpp), with the same messages."""
        check = _core.check_state32 if self.dtype == np.float32 else _core.check_state
        return check(self.model.core, q, v, tau)

    def inverse_inertia(self, q, R) -> np.ndarray:
        """M(q)⁻¹ R for R of shape (nv,) or (nv, m)."""
        raise NotImplementedError(f"solver {self.name!r} does not provide inverse_inertia")

    def inverse_mass_matrix(self, q) -> np.ndarray:
        """The full M(q)⁻¹, (nv, nv). By default ``inverse_inertia(q, 1)``; solvers with a faster
        route (``drumwright``: all columns at once, exploiting symmetry) override it."""
        return self.inverse_inertia(q, np.eye(self.model.nv, dtype=self.dtype))

    def __repr__(self):
        return f"<{type(self).__name__} {self.name!r} nv={self.model.nv} dtype={self.dtype}>"


def _serialized(f):
    """f taking the instance's re-entrant lock (made on first use: dict.setdefault is atomic)."""

    @functools.wraps(f)
    def method(self, *args, **kwargs):
        lock = self.__dict__.get("_solver_lock") or self.__dict__.setdefault("_solver_lock", threading.RLock())
        with lock:
            return f(self, *args, **kwargs)

    method._serialized = True  # never wrapped twice
    return method
