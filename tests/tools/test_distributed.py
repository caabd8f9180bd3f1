"""treedyn.distributed (python/treedyn/tools/distributed.py) on a LocalCluster of 2 worker processes:
batched forward dynamics equal to the local batched call bit for bit (an item's q̈ does not
depend on its batch nor on the thread count), sweeps in order, the local errors; and treedyn
without Dask."""

import os
import signal
import subprocess
import sys
import threading
import time
from importlib.util import find_spec

import numpy as np
import pytest
from figcheck import assert_readable

import treedyn as td
from treedyn.scenes import chain, random_tree

needs_dask = pytest.mark.skipif(
    find_spec("distributed") is None, reason='Dask is not installed (pip install "treedyn[distributed]")'
)


@pytest.fixture(scope="module")
def client():
    from distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0")
    c = Client(cluster, set_as_default=False)
    yield c
    c.close()
    cluster.close()


def batch(model, B, rng, f_ext=False):
    Q = np.stack([td.random_configuration(model, rng) for _ in range(B)])
    V, T = rng.standard_normal((B, model.nv)), rng.standard_normal((B, model.nv))
    return (Q, V, T, rng.standard_normal((B, model.n_bodies, 6))) if f_ext else (Q, V, T)


@needs_dask
@pytest.mark.parametrize(
    "name,options,f_ext",
    [("aba", {}, True), ("aba", {"dtype": np.float32}, True), ("drumwright", {}, False), ("redmax-pcg", {}, False)],
)
def test_forward_dynamics_equals_the_local_batched_call_bit_for_bit(client, name, options, f_ext):
    from treedyn.tools import distributed as tdd

    model = td.scenes.bridge(6, 3).model if name == "redmax-pcg" else random_tree(12, 3, floating_base=True)
    args = batch(model, 45, np.random.default_rng(0), f_ext)
    before = [a.copy() for a in args]
    local = td.make_solver(name, model, **options).forward_dynamics(*args)
    for chunks in (None, 7):
        out = tdd.forward_dynamics(name, model, *args, client=client, chunks=chunks, **options)
        assert isinstance(out, np.ndarray) and out.dtype == local.dtype
        np.testing.assert_array_equal(out, local)
    for a, b in zip(args, before):
        np.testing.assert_array_equal(a, b)  # nothing the caller gave is changed


@needs_dask
def test_dask_arrays_in_give_a_lazy_dask_array_out(client):
    import dask.array as da

    from treedyn.tools import distributed as tdd

    model = random_tree(10, 8)
    Q, V, T, F = batch(model, 30, np.random.default_rng(1), f_ext=True)
    local = td.make_solver("aba", model).forward_dynamics(Q, V, T, F)
    lazy = tdd.forward_dynamics("aba", model, da.from_array(Q, chunks=8), V, da.from_array(T, chunks=11), F)
    assert isinstance(lazy, da.Array) and lazy.shape == (30, model.nv) and lazy.chunks[0] == (8, 8, 8, 6)
    np.testing.assert_array_equal(client.compute(lazy).result(), local)
    with pytest.raises(ValueError, match=rf"T must have shape \(B, {model.nv}\), got \(30, 9\)"):
        tdd.forward_dynamics("aba", model, da.from_array(Q), V, T[:, :9])


@needs_dask
def test_the_solver_is_made_once_per_worker_and_workers_run_one_treedyn_thread_per_core(client):
    from treedyn.model.cache import cached
    from treedyn.tools import distributed as tdd

    model = chain(8)
    args = batch(model, 40, np.random.default_rng(2))
    # the solver of each model a worker keeps, from the model's cache (made already: no new one)
    ids = lambda: client.run(lambda: {k: id(cached(m, k, make)) for k, (m, make) in tdd._models.items() if m.nv == 8})
    tdd.forward_dynamics("crba-ltl", model, *args, client=client, chunks=5)  # 8 chunks on 2 workers
    first = ids()
    assert all(len(made) == 1 for made in first.values()), first
    tdd.forward_dynamics("crba-ltl", model, *args, client=client, chunks=3)
    assert ids() == first  # kept, not made again
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:
        cores = os.cpu_count()
    assert set(client.run(td.get_num_threads).values()) == {max(1, cores // 2)}  # 2 dask threads on this host


@needs_dask
def test_bad_input_raises_the_local_errors(client):
    from treedyn.tools import distributed as tdd

    model = random_tree(8, 2)
    Q, V, T, F = batch(model, 20, np.random.default_rng(3), f_ext=True)
    s = td.make_solver("aba", model)

    def same_error(*args, **options):
        with pytest.raises(Exception) as local:
            td.make_solver(args[0], model, **options).forward_dynamics(*args[1:])
        with pytest.raises(local.type) as remote:
            tdd.forward_dynamics(args[0], model, *args[1:], client=client, chunks=6, **options)
        assert str(remote.value) == str(local.value)

    same_error("nope", Q, V, T)  # unknown solver
    same_error("aba", Q, V, T, dtype=np.int32)
    same_error("aba", Q, V, T, ltdl=True)  # an option the solver does not take
    same_error("aba", Q, V[:19], T)  # batch sizes differ
    same_error("aba", Q[:, :-1], V, T)
    same_error("aba", Q, V, T, F[:19])
    same_error("aba", Q, V, T, F[:, :3])
    same_error("redmax-direct", Q, V, T, F[:, :3])
    same_error("redmax-direct", Q, V, T, F)  # f_ext is not for RedMax
    Tn = T.copy()
    Tn[13, 2] = np.nan
    same_error("aba", Q, V, Tn)
    Fn = F.copy()
    Fn[17, 3, 1] = np.inf  # found on the worker of rows 12..17: named in the whole batch
    Fn[19, 0, 0] = np.nan
    same_error("aba", Q, V, T, Fn)
    with pytest.raises(ValueError, match="chunks must be a positive number"):
        tdd.forward_dynamics("aba", model, Q, V, T, client=client, chunks=0)
    with pytest.raises(TypeError, match="client must be a dask.distributed.Client"):
        tdd.forward_dynamics("aba", model, Q, V, T, client="tcp://nowhere")
    np.testing.assert_array_equal(
        tdd.forward_dynamics("aba", model, Q[0], V[0], T[0], client=client), s.forward_dynamics(Q[0], V[0], T[0])
    )


def _slow_square(p):  # later parameters finish first
    time.sleep(0.02 * (6 - p))
    return p * p


def _fails_on_odd(p):
    time.sleep(0.05 * (6 - p))  # 5 fails before 3, 3 before 1
    if p % 2:
        raise ValueError(f"odd parameter {p}")
    return p


@needs_dask
def test_sweep_returns_in_order_and_names_the_parameter_that_failed(client):
    from treedyn.tools import distributed as tdd

    assert tdd.sweep(_slow_square, range(6), client=client) == [0, 1, 4, 9, 16, 25]
    assert tdd.sweep(lambda m: m.nv, [chain(3), chain(5)], client=client) == [3, 5]  # closures, models
    with pytest.raises(tdd.SweepError, match=r"fn\(1\) \(parameter 1\) raised ValueError: odd parameter 1") as e:
        tdd.sweep(_fails_on_odd, range(6), client=client)
    assert (e.value.index, e.value.param) == (1, 1)
    assert isinstance(e.value.__cause__, ValueError) and str(e.value.__cause__) == "odd parameter 1"
    with pytest.raises(TypeError, match="fn must be callable"):
        tdd.sweep(3, [1], client=client)
    assert tdd.sweep(_slow_square, [], client=client) == []
    with client.as_current():  # client=None: the Client in use
        assert tdd.sweep(_slow_square, [5], client=None) == [25]


@needs_dask
def test_the_embedded_local_cluster_is_started_once_and_kept(monkeypatch):
    from treedyn.tools import distributed as tdd

    monkeypatch.setattr(tdd, "_cores", lambda: 1)  # one worker process: enough to show it
    try:
        c = tdd.embedded_client()
        assert tdd.embedded_client() is c
        assert c.nthreads() and set(c.nthreads().values()) == {1} and len(c.nthreads()) == 1
        assert tdd.sweep(_slow_square, [2, 3]) == [4, 9]  # no Client made: the embedded one
        assert set(c.run(td.get_num_threads).values()) == {1}
        # nothing bound beyond this machine: the scheduler, the workers and the dashboard on 127.0.0.1
        assert c.scheduler.address.startswith("tcp://127.0.0.1:")
        assert all(w.startswith("tcp://127.0.0.1:") for w in c.nthreads())
        assert "127.0.0.1" in c.dashboard_link
    finally:
        tdd._close_embedded()


def test_treedyn_does_not_import_dask_and_says_how_to_get_it():
    code = (
        "import sys\n"
        "import treedyn\n"
        "assert not [m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed')], 'dask imported'\n"
        "sys.modules['dask'] = None  # as if it were not installed\n"
        "try:\n"
        "    import treedyn.distributed\n"
        "except ImportError as e:\n"
        "    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert 'pip install "treedyn[distributed]"' in out.stdout


@needs_dask
def test_the_readme_example_runs_on_the_cluster(client):
    """The README's Dask block (marked not-run there: it starts a LocalCluster), run as a script
    would run it, on this module's cluster."""
    from support.docs import blocks

    ((line, code),) = [(line, code) for line, code, reason in blocks() if reason and "test_distributed" in reason]
    namespace = {"__name__": "__main__"}
    with client.as_current():
        exec(compile(code, f"README.md, line {line}", "exec"), namespace)
    sag = namespace["sag"]
    assert len(sag) == 4 and all(np.isfinite(sag)) and all(s > 0 for s in sag)
    assert all(a > b for a, b in zip(sag, sag[1:]))  # stiffer cables, less deflection
    assert sag[0] == namespace["midspan_deflection"](1e5)  # the same simulation here, bit for bit


@needs_dask
def test_the_sweep_figure_script_runs_on_a_given_cluster(client, tmp_path, saved_figures):
    import csv

    from benchmarks import SCRIPTS
    from benchmarks import sweep as bench

    assert SCRIPTS["sweep"] == "benchmarks.sweep"
    args = ["--quick", "--points", "2", "--deck", "4", "--tower", "1", "--no-serial", "--out", str(tmp_path)]
    assert bench.main([*args, "--scheduler", client.scheduler.address]) == 0
    with open(tmp_path / "bridge_cable_sweep.csv") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == bench.FIELDS
    assert [(float(r["cable_k"]), r["car"]) for r in rows] == [(1e5, ""), (1e8, ""), (1e5, "car"), (1e8, "car")]
    for r in rows:
        assert (
            float(r["max_deflection_m"])
            == bench.max_deflection(float(r["cable_k"]), r["car"] or None, 4, 1)["max_deflection_m"]
        )
    if find_spec("matplotlib") is not None:
        assert (tmp_path / "bridge_cable_sweep.png").stat().st_size > 0
        assert_readable(saved_figures, 1)  # axes with units, a legend, nothing clipped (tests/figcheck.py)


# ------------------------------------------------------------------ a lost worker (issue 31, item 5)


def _progress(tag, dask_scheduler=None):
    """{worker: (finished tasks whose key holds ``tag``, its pid)} and how many such tasks are left."""
    held = {a: sum(tag in str(ts.key) for ts in ws.has_what) for a, ws in dask_scheduler.workers.items()}
    left = sum(tag in str(ts.key) and ts.state != "memory" for ts in dask_scheduler.tasks.values())
    return held, left


def _kill_one_worker_mid_call(client, call, tag):
    """call() in a thread; once a worker holds a finished task of the call (``tag`` in its key)
    and at least 3 are still to run, that worker's process is killed (SIGKILL: its results and
    running tasks are lost). Returns what call returned (or raises what it raised)."""
    client.wait_for_workers(2, timeout=60)
    pids = client.run(os.getpid)
    out, killed = {}, []
    worker = threading.Thread(target=lambda: out.update(result=_outcome(call)))
    worker.start()
    deadline = time.monotonic() + 60
    while worker.is_alive() and not killed and time.monotonic() < deadline:
        held, left = client.run_on_scheduler(_progress, tag)
        victims = [a for a, n in held.items() if n and a in pids]
        if victims and left >= 3:
            os.kill(pids[victims[0]], signal.SIGKILL)
            killed.append(victims[0])
        time.sleep(0.005)
    worker.join(120)
    assert killed, "the call ended before a worker could be killed: give it more work"
    kind, value = out["result"]
    if kind == "error":
        raise value
    return value


def _outcome(call):
    try:
        return "ok", call()
    except Exception as e:  # handed to the test's thread
        return "error", e


def _slow_cube(p):
    time.sleep(0.03)
    return p**3


@needs_dask
@pytest.mark.filterwarnings("ignore:Sending large graph")  # da.from_array(Q) puts Q in the graph: the test's choice
def test_killing_one_of_two_workers_mid_call_leaves_the_local_result():
    """The issue's reproducer (numpy in: 'FutureCancelledError ... already forgotten', 2 of 2 runs),
    the Dask-array path and a sweep, each with one worker killed while the call runs (its nanny
    starts another): the result equals the local one. Its own cluster: killing workers must not
    disturb the other tests'."""
    import dask.array as da
    from distributed import Client, LocalCluster

    from treedyn.tools import distributed as tdd

    model = random_tree(40, 5, floating_base=True)
    Q, V, T = batch(model, 12_000, np.random.default_rng(7))
    local = td.make_solver("aba", model).forward_dynamics(Q, V, T)
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0")
    client = Client(cluster, set_as_default=False)
    try:
        out = _kill_one_worker_mid_call(
            client, lambda: tdd.forward_dynamics("aba", model, Q, V, T, client=client, chunks=400), "_part"
        )
        np.testing.assert_array_equal(out, local)
        lazy = tdd.forward_dynamics("aba", model, da.from_array(Q, chunks=400), V, T)
        out = _kill_one_worker_mid_call(client, lambda: client.compute(lazy).result(), lazy.name)
        np.testing.assert_array_equal(out, local)
        out = _kill_one_worker_mid_call(client, lambda: tdd.sweep(_slow_cube, range(40), client=client), "_slow_cube")
        assert out == [p**3 for p in range(40)]
    finally:
        client.close()
        cluster.close()


@needs_dask
def test_an_empty_batch_returns_what_the_local_call_returns(client):
    import dask.array as da

    from treedyn.tools import distributed as tdd

    model = chain(3)
    empty = np.zeros((0, 3))
    for f_ext in (None, np.zeros((0, model.n_bodies, 6))):
        local = td.make_solver("aba", model).forward_dynamics(empty, empty, empty, f_ext)
        for chunks in (None, 4):
            out = tdd.forward_dynamics("aba", model, empty, empty, empty, f_ext, client=client, chunks=chunks)
            assert type(out) is type(local) and out.shape == local.shape == (0, 3) and out.dtype == local.dtype
    lazy = tdd.forward_dynamics("aba", model, da.from_array(empty), empty, empty, client=client)
    assert client.compute(lazy).result().shape == (0, 3)
    with pytest.raises(ValueError, match="chunks must be a positive number"):
        tdd.forward_dynamics("aba", model, empty, empty, empty, client=client, chunks=0)
