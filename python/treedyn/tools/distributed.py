"""Beyond one machine: batched dynamics and independent simulations on Dask (dask.distributed).

``forward_dynamics(solver, model, Q, V, T)`` splits a batch along its first axis into chunks, and
each worker runs its chunks through the solver's own batched call (which spreads the items over
treedyn's threads inside the worker). The solver is made once per worker process and model, and
kept (a small cache keyed on what it was made from), not once per chunk. ``sweep(fn, params)``
runs ``fn(p)`` for every parameter p — a parameter sweep, Monte Carlo, rollouts over scenes or
models — and returns the results in the order of ``params``.

``client``: any ``dask.distributed.Client`` (a cluster's); None: the Client you made (dask's
default), else an embedded ``LocalCluster`` started on first use, kept for later calls and closed
at exit, with one single-threaded worker process per core. Either way, each worker's treedyn
thread count is set so that its dask threads times treedyn's fill the cores of its machine once,
no more (``td.set_num_threads``).

A lost worker (a crash, a killed process, a machine gone) costs time, not the call: every input
travels inside the tasks (through the scheduler, never scattered to one worker), so the scheduler
runs the lost worker's tasks again on the others and the result is the one a healthy cluster, and
the local call, gives (tests/tools/test_distributed.py kills one of two workers mid-call). An empty
batch returns what the local call returns, without a cluster.

Dask is optional: ``pip install "treedyn[distributed]"``. ``import treedyn`` never imports it.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import pickle
import re
import threading
from collections import OrderedDict

import numpy as np

try:
    import dask
    import dask.array as da
    import distributed
except ImportError as e:  # pragma: no cover - the message is the point
    raise ImportError(
        f'treedyn.distributed needs Dask ({e}): pip install "treedyn[distributed]" (or "dask[distributed]")'
    ) from e

from .. import _checks, _core
from ..model.cache import cached
from ..solvers import make_solver

__all__ = ["forward_dynamics", "sweep", "SweepError", "embedded_client"]


# --------------------------------------------------------------------------- clients


_embedded = None  # (LocalCluster, Client), made on first use
_embedded_lock = threading.Lock()
_configured: set = set()  # (id of a client, its workers) whose treedyn threads are set


def _cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


def embedded_client() -> distributed.Client:
    """The embedded LocalCluster's Client, started on first use: one worker process per core, one
    thread each (treedyn's own threads then 1 per worker: nothing is oversubscribed), the scheduler,
    workers and dashboard bound to 127.0.0.1 only (nothing served beyond this machine); closed at
    exit. Scripts that start it must guard their main code with ``if __name__ == "__main__":``
    (the workers are new processes)."""
    global _embedded
    with _embedded_lock:
        if _embedded is None or _embedded[1].status in ("closing", "closed"):
            cluster = distributed.LocalCluster(
                n_workers=_cores(),
                threads_per_worker=1,
                processes=True,
                dashboard_address="127.0.0.1:0",
                host="127.0.0.1",
            )
            _embedded = (cluster, distributed.Client(cluster, set_as_default=False))
            atexit.register(_close_embedded)
        return _embedded[1]


def _close_embedded():
    global _embedded
    if _embedded is not None:
        cluster, client = _embedded
        _embedded = None
        client.close()
        cluster.close()


def _client(client) -> distributed.Client:
    if client is None:
        try:
            client = distributed.default_client()
        except ValueError:  # no Client made
            client = embedded_client()
    if not isinstance(client, distributed.Client):
        raise TypeError(f"client must be a dask.distributed.Client or None, got {type(client).__name__}")
    _set_worker_threads(client)
    return client


def _set_worker_threads(client) -> None:
    """treedyn threads per worker = the cores of its machine over the dask threads of all the
    workers there (at least 1), once per client and set of workers. (A worker that restarts under
    the same address keeps the count its nanny gives, OMP_NUM_THREADS=1 by dask's default, which
    treedyn follows.)"""
    nthreads = client.nthreads()
    key = (id(client), frozenset(nthreads))
    if key in _configured:
        return
    # a worker lost meanwhile is left out (on_error="ignore"), not an error: its replacement keeps
    # the count its nanny gives (above), and the batch goes on without it
    cores = client.run(_cores, on_error="ignore")
    nthreads = {w: n for w, n in nthreads.items() if w in cores}
    host = {w: distributed.comm.get_address_host(w) for w in nthreads}
    on_host: dict = {}
    for w, n in nthreads.items():
        on_host[host[w]] = on_host.get(host[w], 0) + n
    by_count: dict = {}
    for w in nthreads:
        by_count.setdefault(max(1, cores[w] // on_host[host[w]]), []).append(w)
    for k, workers in by_count.items():
        client.run(_core.set_num_threads, k, workers=workers, on_error="ignore")
    _configured.add(key)


# --------------------------------------------------------------------------- solvers on the workers


_models: OrderedDict = OrderedDict()  # key -> (model, _Make), in this process (a worker's, or the caller's)
_models_lock = threading.Lock()
_MODELS_KEPT = 8


class _Make:
    """How the solver of one payload is made: the one cache's ``make`` (td.model.cache) for it."""

    __slots__ = ("solver", "dtype", "options")

    def __init__(self, solver, dtype, options):
        self.solver, self.dtype, self.options = solver, dtype, options

    def __call__(self, model, key):
        return make_solver(self.solver, model, dtype=self.dtype, **self.options)


def _spec(solver, model, dtype, options) -> tuple[str, bytes]:
    """(key, payload): the pickled (solver, model, dtype, options) and its digest."""
    payload = pickle.dumps((solver, model, dtype, options), protocol=pickle.HIGHEST_PROTOCOL)
    return hashlib.sha256(payload).hexdigest(), payload


def _solver(key: str, payload: bytes):
    """The solver of ``payload``: its model unpickled once per process and kept (the last few, by
    content), the solver made once and kept with that model (td.model.cache)."""
    with _models_lock:
        entry = _models.get(key)
        if entry is not None:
            _models.move_to_end(key)
    if entry is None:
        solver, model, dtype, options = pickle.loads(payload)
        with _models_lock:
            entry = _models.setdefault(key, (model, _Make(solver, dtype, options)))
            _models.move_to_end(key)
            while len(_models) > _MODELS_KEPT:
                _models.popitem(last=False)
    model, make = entry
    return cached(model, key, make)


_ITEM = re.compile(r"batch item (\d+)")
_FLAT = re.compile(r"(\w+) contains NaN or inf \(at flat index (\d+)\)")


def _chunk(key, payload, start, q, v, tau, f_ext=None):
    """One chunk's q̈ by the solver's batched call; an error names the item of the whole batch."""
    try:
        return _solver(key, payload).forward_dynamics(q, v, tau, f_ext)
    except Exception as e:
        named = (("q", q), ("v", v), ("tau", tau), ("f_ext", f_ext))
        row = {n: np.size(x[0]) for n, x in named if x is not None and len(x)}  # values a row holds
        msg = _ITEM.sub(lambda m: f"batch item {int(m[1]) + start}", str(e))
        msg = _FLAT.sub(
            lambda m: f"{m[1]} contains NaN or inf (at flat index {int(m[2]) + start * row.get(m[1], 0)})", msg
        )
        if msg == str(e):
            raise
        try:
            new = type(e)(msg)
        except Exception:  # an exception type that takes other arguments
            raise e from None
        raise new.with_traceback(e.__traceback__) from None


def _part(key, payload, start, arrays):
    return _chunk(key, payload, start, *arrays)


def _block(items, q, v, tau, f_ext=None, *, key, payload):
    """A dask block: ``items``, the indices of its rows in the batch."""
    return _chunk(key, payload, int(items[0]) if len(items) else 0, q, v, tau, f_ext)


# --------------------------------------------------------------------------- forward dynamics


def forward_dynamics(
    solver, model, Q, V, T, f_ext=None, *, client=None, chunks: int | None = None, dtype=np.float64, **options
):
    """q̈ of a batch, (B, nq), (B, nv), (B, nv) [, f_ext (B, n_bodies, 6)] -> (B, nv), on Dask.

    solver: a registered name or a Solver subclass; dtype and options go to its constructor, as
    in ``td.make_solver(solver, model, dtype=dtype, **options)``. Each item's q̈ is what the
    solver's own batched call gives, bit for bit (an item never depends on the others in its
    batch, nor on the thread count).

    numpy arrays in: a numpy array out, computed on ``client`` (see the module) in chunks of
    ``chunks`` items (default: the batch split evenly over the cluster's dask threads); the
    inputs are checked here first, with the errors and messages of the local call, and an error
    raised on a worker names the item of the whole batch (the lowest, as locally).

    dask arrays in (any of Q, V, T, f_ext; rows chunked alike, ``chunks`` rechunks them): a lazy
    dask array out, chunked as Q along the batch; it runs wherever it is computed (a Client's
    cluster, when you compute it there). Shapes are checked here, values when computed.
    """
    key, payload = _spec(solver, model, dtype, options)
    local = _solver(key, payload)  # the constructor's errors, here
    arrays = (Q, V, T) if f_ext is None else (Q, V, T, f_ext)
    if any(isinstance(x, da.Array) for x in arrays):
        return _lazy(local, key, payload, arrays, chunks, client)
    q, v, tau, batch = local.check_inputs(Q, V, T)  # the local messages for shapes and values
    if not batch:  # one state: computed here
        return local.forward_dynamics(Q, V, T, f_ext)
    B = q.shape[0]
    if chunks is not None:
        chunks = _chunk_size(chunks)
    if f_ext is not None:
        f = np.asarray(f_ext)
        if f.shape != (B, model.n_bodies, 6) or not B:
            return local.forward_dynamics(q, v, tau, f)  # the local call's error (a shape check comes first)
        local.forward_dynamics(q[:1], v[:1], tau[:1], f[:1])  # f_ext's checks on an item, and solvers without f_ext
    if not B:  # an empty batch: the local call's empty result, no cluster needed
        return local.forward_dynamics(q, v, tau)
    client = _client(client)
    if chunks is None:
        chunks = -(-B // max(1, sum(client.nthreads().values())))
    futures = _submit_chunks(client, key, payload, arrays, B, chunks)
    for fut in futures:  # in order: the lowest chunk's error, as the local call reports the lowest item's
        e = fut.exception()
        if e is not None:
            tb = fut.traceback()
            client.cancel(futures)
            raise e.with_traceback(tb)
    return np.concatenate(client.gather(futures))


def _payload(payload: bytes) -> bytes:
    return payload


def _submit_chunks(client, key, payload, arrays, B: int, chunks: int) -> list:
    """One task per chunk of ``chunks`` items, each carrying its inputs as given (the solver
    converts them on the worker) and depending on one task that holds the solver's payload.
    Nothing is scattered: data scattered to a worker is gone with it (the whole call failed with
    "already forgotten" when one of two workers was lost), while a task's inputs stay with the
    scheduler, which runs the tasks of a lost worker again elsewhere (and the payload's task with
    them). The price: the batch travels through the scheduler (client → scheduler → worker, where
    scattered data goes straight to a worker), which holds each chunk until its task is done. The
    chunk tasks are large on purpose, so dask's warning about large graphs is not raised for them."""
    spec = client.submit(_payload, payload, pure=False)
    starts = range(0, B, chunks)
    with dask.config.set({"distributed.admin.large-graph-warning-threshold": "1 PiB"}):
        return [
            client.submit(_part, key, spec, s, tuple(x[s : s + chunks] for x in arrays), pure=False) for s in starts
        ]


def _chunk_size(chunks) -> int:
    chunks = _checks.integer(chunks, "chunks")
    if chunks < 1:
        raise ValueError(f"chunks must be a positive number of items, got {chunks!r}")
    return chunks


def _lazy(local, key, payload, arrays, chunks, client):
    model = local.model
    arrays = [x if isinstance(x, da.Array) else da.from_array(np.asarray(x)) for x in arrays]
    names = ("Q", "V", "T", "f_ext")
    shapes = [(model.nq,), (model.nv,), (model.nv,), (model.n_bodies, 6)]
    for x, name, shape in zip(arrays, names, shapes):
        if x.ndim != 1 + len(shape) or tuple(x.shape[1:]) != shape:
            raise ValueError(f"{name} must have shape (B, {', '.join(map(str, shape))}), got {x.shape}")
    B = arrays[0].shape[0]
    if any(x.shape[0] != B for x in arrays):
        raise ValueError(
            "Q, V, T (and f_ext) must be batches of the same size, got shapes "
            + ", ".join(str(x.shape) for x in arrays)
        )
    rows = arrays[0].chunks[0] if chunks is None else _chunk_size(chunks)
    arrays = [x.rechunk({0: rows, **{a: -1 for a in range(1, x.ndim)}}) for x in arrays]
    items = da.arange(B, chunks=(arrays[0].chunks[0],))
    if client is not None:
        _client(client)
    # block by block along the batch (index b); the other axes whole, each its own index
    pairs = [items, "b"] + [a for x, i in zip(arrays, ("bq", "bv", "bt", "bnf")) for a in (x, i)]
    return da.blockwise(
        _block,
        "bo",
        *pairs,
        new_axes={"o": model.nv},
        concatenate=True,
        key=key,
        payload=payload,
        dtype=local.dtype,
        meta=np.empty((0, model.nv), dtype=local.dtype),
    )


# --------------------------------------------------------------------------- sweeps


class SweepError(RuntimeError):
    """``fn(param)`` raised on a worker: ``index`` and ``param`` say which; the worker's exception
    (its type, message and traceback) is ``__cause__``."""

    def __init__(self, message, index, param):
        super().__init__(message)
        self.index, self.param = index, param


def sweep(fn, params, *, client=None) -> list:
    """[fn(p) for p in params], each call a task on ``client`` (see the module), the results in
    the order of ``params``. fn and the parameters are pickled (cloudpickle: lambdas and closures
    too); a closure's large objects go with every task — pass them as a scattered future
    (``client.scatter``) or build them inside fn. If a call raises, the others are cancelled and
    SweepError names the first parameter (in order) that failed, with the worker's exception as
    its cause."""
    if not callable(fn):
        raise TypeError(f"sweep: fn must be callable, got {type(fn).__name__}")
    params = list(params)
    if not params:
        return []
    client = _client(client)
    futures = client.map(fn, params, pure=False)
    for i, fut in enumerate(futures):  # in order: the first parameter that failed
        e = fut.exception()
        if e is not None:
            e = e.with_traceback(fut.traceback())
            client.cancel(futures)
            raise SweepError(
                f"sweep: fn({params[i]!r}) (parameter {i}) raised {type(e).__name__}: {e}", i, params[i]
            ) from e
    return client.gather(futures)
