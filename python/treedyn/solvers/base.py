"""The Solver interface every forward-dynamics plugin implements."""

from __future__ import annotations

import abc
import functools
import inspect
import threading
import types

import numpy as np

from .. import _checks as C
from .. import _core

__all__ = ["Solver"]


class Solver(abc.ABC):
    """A forward-dynamics solver bound to one model.

    Subclasses set ``name`` and ``description``, may declare ``capabilities`` (a frozenset of
    strings such as ``"batch"``, ``"inverse_inertia"``, ``"derivatives"``, ``"float32"``, ``"floating_base"``,
    ``"branched"``, ``"multi_dof"``), and implement :meth:`forward_dynamics`; ``supports``
    returns ``None`` when the model is supported and a reason (a string) when it is not.

    The model is frozen at construction: bodies added to it later do not reach the solver.

    One solver may be shared between threads. Unless a class sets ``thread_safe = True`` (it
    guards its own state: the built-in solvers lock in C++), its public methods are serialized
    per instance by a re-entrant lock, so a method may call another.

    ``out=``: :meth:`forward_dynamics`, :meth:`inverse_inertia` and :meth:`inverse_mass_matrix`
    take an optional keyword ``out``, an array that receives the result and is returned, so that
    a loop does not allocate (and page-fault) a fresh result on every call. It must be a numpy
    array of the solver's ``dtype`` and exactly the result's shape, C-contiguous and writeable
    (else TypeError / ValueError naming ``out``), and share no memory with an input (ValueError,
    by ``numpy.may_share_memory``'s bounds). Nothing else the caller gave is written to. If the
    call raises, ``out``'s contents are unspecified. One ``out`` per thread when threads share a
    solver. Plugin authors: a method that does not declare ``out`` gets the base class's generic
    fallback (the same checks, then the result copied into ``out``); declare ``out`` as a
    keyword-only parameter (check it with :meth:`check_out`) to write into it directly.
    """

    name: str = ""
    description: str = ""
    capabilities: frozenset = frozenset()
    thread_safe: bool = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # out= for the methods this class defines without it: the generic fallback (copy into out)
        for attr in _OUT_METHODS:
            f = vars(cls).get(attr)
            if isinstance(f, types.FunctionType) and "out" not in inspect.signature(f).parameters:
                setattr(cls, attr, _out_fallback(f))
        if cls.thread_safe:
            return
        # every public method a subclass defines, inherited ones too (a thread-safe parent's
        # methods may touch state this class adds), takes the instance's lock
        below = cls.__mro__[: cls.__mro__.index(Solver)]
        for attr in {a for klass in below for a in vars(klass) if not a.startswith("_")}:
            f = next(vars(k)[attr] for k in cls.__mro__ if attr in vars(k))  # as stored: staticmethods stay out
            if isinstance(f, types.FunctionType) and not hasattr(f, "_serialized") and f is not vars(Solver).get(attr):
                setattr(cls, attr, _serialized(f))

    def __new__(cls, *args, **kwargs):
        self = super().__new__(cls)
        self._made_from = (args, kwargs)  # the constructor's arguments, for pickling (__reduce__)
        return self

    def __reduce__(self):
        """A solver pickles as what it was made from — its class (by reference), the model and the
        constructor's other arguments (dtype, options such as ``specialise``) — and is made again
        from them when unpickled: the same dynamics, bit for bit, on the model as it is when
        pickled. State a solver gathers as it runs (RedMax's warm starts) starts afresh."""
        args, kwargs = self._made_from
        return _remake, (type(self), args, kwargs)

    def __init__(self, model, dtype=np.float64, **options):
        reason = self.supports(model)
        if reason:
            raise ValueError(f"solver {self.name!r} does not support this model: {reason}")
        dtype = C.float_dtype(dtype)
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
    def forward_dynamics(self, q, v, tau, f_ext=None, *, out=None) -> np.ndarray:
        """q̈ = M(q)⁻¹(τ − c(q, v) + Σ Jᵀ f_ext).

        q (nq,), v (nv,), tau (nv,) -> (nv,); or batched (B, nq), (B, nv), (B, nv) -> (B, nv).
        f_ext: spatial forces [n; f] on each body in body coordinates, (n_bodies, 6) (row 0, the
        world, is ignored), or (B, n_bodies, 6) for a batch. Inputs are never modified.
        out: an array of shape (nv,) or (B, nv) to write q̈ into and return (see the class
        docstring); a plugin may leave it out of its signature (the base class copies into it).
        """

    def check_inputs(self, q, v, tau):
        """For plugin authors: (q, v, tau, batch) as fresh float arrays of ``self.dtype`` after the
        checks every solver owes its users (real dtype, shape (n,) or (B, n), finite values, unit
        quaternions); raises TypeError / ValueError naming the argument. The built-in solvers run
        the same checks (the same C++ code, cpp/bindings/solvers.cpp), with the same messages."""
        check = _core.check_state32 if self.dtype == np.float32 else _core.check_state
        return check(self.model.core, q, v, tau)

    def inverse_inertia(self, q, R, *, out=None) -> np.ndarray:
        """M(q)⁻¹ R for R of shape (nv,) or (nv, m); into ``out`` (R's shape) if given."""
        raise NotImplementedError(f"solver {self.name!r} does not provide inverse_inertia")

    def derivatives(self, q, v, tau, f_ext=None):
        """(∂q̈/∂q, ∂q̈/∂v, M⁻¹) of :meth:`forward_dynamics` at (q, v, τ), each (nv, nv) — or
        (B, nv, nv) for a batch — in the solver's ``dtype``; ∂q̈/∂τ = M⁻¹. Derivatives with respect
        to q are in the tangent space, as ``td.aba_derivatives``'s (column k: d/dε at
        ``td.integrate(model, q, ε e_k, 1)``). Solvers that provide it declare the capability
        ``"derivatives"``; ``treedyn.testing.check_solver`` then checks it against
        ``td.aba_derivatives``."""
        raise NotImplementedError(f"solver {self.name!r} does not provide derivatives")

    def inverse_mass_matrix(self, q, *, out=None) -> np.ndarray:
        """The full M(q)⁻¹, (nv, nv); into ``out`` (nv, nv) if given. By default
        ``inverse_inertia(q, 1, out=out)``; solvers with a faster route (``drumwright``: all
        columns at once, exploiting symmetry) override it."""
        if out is not None:
            self.check_out(out, q=q)
        return self.inverse_inertia(q, np.eye(self.model.nv, dtype=self.dtype), out=out)

    def check_out(self, out, shape=None, **inputs):
        """For plugin authors: raise TypeError / ValueError (naming ``out``) unless ``out`` can
        receive a result of this solver: a numpy array of ``self.dtype``, C-contiguous, writeable,
        of ``shape`` (when given), sharing no memory with any of ``inputs`` (name=array, by
        ``numpy.may_share_memory``). The built-in solvers run the same checks in C++
        (cpp/bindings/arrays.hpp, out_arg)."""
        if not isinstance(out, np.ndarray):
            raise TypeError(f"out must be a numpy.ndarray, got {type(out).__name__}")
        if out.dtype != self.dtype:
            raise TypeError(f"out must have dtype {self.dtype} (the solver's), got {out.dtype}")
        if shape is not None and out.shape != tuple(shape):
            raise ValueError(f"out must have shape {tuple(shape)} (the result's), got {out.shape}")
        if not out.flags.c_contiguous:
            raise ValueError("out must be C-contiguous")
        if not out.flags.writeable:
            raise ValueError("out must be writeable")
        for name, x in inputs.items():
            if isinstance(x, np.ndarray) and np.may_share_memory(out, x):
                raise ValueError(
                    f"out must not share memory with the input {name} (it is written while the inputs are read)"
                )

    def __repr__(self):
        return f"<{type(self).__name__} {self.name!r} nv={self.model.nv} dtype={self.dtype}>"


def _remake(cls, args, kwargs):
    return cls(*args, **kwargs)


_OUT_METHODS = ("forward_dynamics", "inverse_inertia", "inverse_mass_matrix")


def _out_fallback(f):
    """f (a solver method without ``out``) taking ``out=``: the checks of Solver.check_out, then f's
    result copied into out (a plugin's own method allocates; this only spares the caller's code)."""
    names = [p for p in inspect.signature(f).parameters if p != "self"]

    @functools.wraps(f)
    def method(self, *args, out=None, **kwargs):
        if out is None:
            return f(self, *args, **kwargs)
        inputs = dict(zip(names, args), **kwargs)
        self.check_out(out, **inputs)
        result = np.asarray(f(self, *args, **kwargs))
        self.check_out(out, result.shape)
        np.copyto(out, result)
        return out

    method.__signature__ = inspect.signature(f).replace(
        parameters=[
            *inspect.signature(f).parameters.values(),
            inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, default=None),
        ]
    )
    return method


def _serialized(f):
    """f taking the instance's re-entrant lock (made on first use: dict.setdefault is atomic)."""

    @functools.wraps(f)
    def method(self, *args, **kwargs):
        lock = self.__dict__.get("_solver_lock") or self.__dict__.setdefault("_solver_lock", threading.RLock())
        with lock:
            return f(self, *args, **kwargs)

    method._serialized = True  # never wrapped twice
    return method
