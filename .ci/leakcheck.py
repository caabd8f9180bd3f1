"""Leak check: ~10⁵ calls of treedyn's public entry points (successful ones and ones that raise);
after warm-up, no entry point may keep memory.

    python .ci/leakcheck.py [--calls 100000] [--self-test]

Each of the ~70 entry points (every solver's methods, batches, errors and construction, the
one-shot functions, linalg, State, RedMax steps, model building, URDF loading) runs alone: K/5
calls of warm-up (caches, workspaces, allocator arenas), then 4K/5 measured calls, K = calls / 70
(~1400; 1120 measured). Three measures, each with its bound per entry point:

- bytes handed out by malloc (glibc mallinfo2: C++ new, Eigen, std::vector, numpy's data) may grow
  by at most 64 KiB: a leak of >= 60 bytes per call (one float64 of nv = 8 is 64) fails;
- Python objects (sys.getallocatedblocks: pybind11 reference leaks, numpy headers) by at most 250:
  a leak of one object every 4-5 calls fails; a burst of a few dozen (caches filling) passes;
- the resident set (/proc/self/statm, what the OS sees, whatever the allocator) by at most 1 MiB:
  the coarse, allocator-independent check (freed heap is reused before RSS grows, so small leaks
  show first in the two measures above).

tracemalloc is not used: it cannot see C++ allocations. mallinfo2 reports the calling thread's
arena, hence one OpenMP thread by default. ``--self-test`` adds an entry point that leaks a 96-byte
numpy array per call: the check must then fail (exit status 1), as it does on any leak.
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import os
import sys
import time
import warnings

import numpy as np

import treedyn as td
from treedyn.scenes import chain, random_tree

PAGE = os.sysconf("SC_PAGE_SIZE")


class _Mallinfo2(ctypes.Structure):
    _fields_ = [
        (f, ctypes.c_size_t)
        for f in (
            "arena",
            "ordblks",
            "smblks",
            "hblks",
            "hblkhd",
            "usmblks",
            "fsmblks",
            "uordblks",
            "fordblks",
            "keepcost",
        )
    ]


try:
    _mallinfo2 = ctypes.CDLL(None).mallinfo2
    _mallinfo2.restype = _Mallinfo2
except (OSError, AttributeError):  # not glibc >= 2.33: RSS only
    _mallinfo2 = None


def rss() -> int:
    """Resident set size, bytes."""
    gc.collect()
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * PAGE


def in_use() -> int:
    """Bytes handed out by malloc (glibc's main arena and its mmapped chunks): C++ new, numpy's
    array data, Eigen; 0 when mallinfo2 is not there."""
    gc.collect()
    if _mallinfo2 is None:
        return 0
    m = _mallinfo2()
    return m.uordblks + m.hblkhd


def raises(f, *args, **kw):
    try:
        f(*args, **kw)
    except (TypeError, ValueError):
        return
    raise AssertionError(f"{f} did not raise")


URDF = """<robot name="r"><link name="base"/>
<link name="a"><inertial><mass value="1"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial></link>
<link name="b"><inertial><mass value="1"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial></link>
<joint name="j1" type="revolute"><parent link="base"/><child link="a"/><axis xyz="0 0 1"/></joint>
<joint name="j2" type="prismatic"><parent link="a"/><child link="b"/><axis xyz="1 0 0"/></joint></robot>"""


def entry_points():
    """{name: a no-argument call} covering the public API, errors included."""
    rng = np.random.default_rng(0)
    tree = random_tree(24, 1, joints=("revolute", "prismatic", "universal", "spherical"), floating_base=True)
    ch = chain(24)
    out = {}
    for name in sorted(td.available_solvers()):
        model = ch if name in ("cfa-oee", "jsiia") else tree
        s = td.make_solver(name, model)
        q = td.random_configuration(model, rng)
        v, tau = rng.standard_normal(model.nv), rng.standard_normal(model.nv)
        qb, vb, tb = np.stack([q] * 4), np.stack([v] * 4), np.stack([tau] * 4)
        R = rng.standard_normal((model.nv, 6))
        bad = v.copy()
        bad[3] = np.nan
        out[f"{name}.forward_dynamics"] = lambda s=s, q=q, v=v, tau=tau: s.forward_dynamics(q, v, tau)
        out[f"{name}.forward_dynamics batch"] = lambda s=s, a=(qb, vb, tb): s.forward_dynamics(*a)
        out[f"{name}.inverse_inertia"] = lambda s=s, q=q, R=R: s.inverse_inertia(q, np.asfortranarray(R))
        out[f"{name}.inverse_mass_matrix"] = lambda s=s, q=q: s.inverse_mass_matrix(q)
        out[f"{name}.errors"] = lambda s=s, q=q, v=v, bad=bad: (
            raises(s.forward_dynamics, q, bad, v),
            raises(s.forward_dynamics, q, v.astype(complex), v),
            raises(s.inverse_inertia, q[:-1], v),
        )
        out[f"make_solver {name}"] = lambda name=name, model=model: td.make_solver(name, model)
        if hasattr(s, "step"):
            st = td.State(q, v)
            out[f"{name}.step"] = lambda s=s, st=st: s.step(st.copy(), 1e-3)
    q = td.random_configuration(tree, rng)
    v = rng.standard_normal(tree.nv)
    f = rng.standard_normal((tree.n_bodies, 6))
    out["rnea"] = lambda: td.rnea(tree, q, v, v, f)
    out["bias_forces"] = lambda: td.bias_forces(tree, q[::-1][::-1], v)
    out["mass_matrix"] = lambda: td.mass_matrix(tree, q)
    out["integrate"] = lambda: td.integrate(tree, q, v, 1e-3)
    out["random_configuration"] = lambda: td.random_configuration(tree, 3)
    out["one-shot errors"] = lambda: (
        raises(td.rnea, tree, q, v, v.astype(object)),
        raises(td.mass_matrix, tree, q * 2),
        raises(td.integrate, tree, q, v, np.nan),
    )
    dw = td.make_solver("drumwright", tree)
    N, D = rng.standard_normal((tree.nv, 4)), rng.standard_normal((tree.nv, 8))
    out["contact_inertia"] = lambda: td.contact_inertia(dw, q, N, D)
    out["inverse_mass_matrix()"] = lambda: td.inverse_mass_matrix(tree, q, method="crba-ltl")
    n, k = 24, 6
    Db = np.tile(np.eye(k) * 4.0, (n, 1, 1))
    U = rng.standard_normal((n - 1, k, k)) * 0.1
    Rb = rng.standard_normal((n, k, 3))
    out["solve_block_tridiagonal"] = lambda: td.linalg.solve_block_tridiagonal(Db, U, Rb)
    out["solve_block_bidiagonal"] = lambda: td.linalg.solve_block_bidiagonal(U, Rb)
    out["linalg errors"] = lambda: (
        raises(td.linalg.solve_block_tridiagonal, -Db, U, Rb),
        raises(td.linalg.solve_block_bidiagonal, U, Rb[:-2]),
    )
    out["State"] = lambda: td.State(q, v, 0.5).copy()

    def build():
        m = td.Model()
        for i in range(8):
            m.add_body(f"b{i}", i, td.Revolute((0, 0, 1)), td.Transform(translation=(0.1, 0, 0)), td.Inertia())
        return m

    out["Model.add_body"] = build
    out["Model.from_urdf"] = lambda: td.Model.from_urdf(URDF)
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--calls", type=int, default=100_000)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument(
        "--bound-kib",
        type=float,
        default=64.0,
        help="largest growth of malloc'd bytes allowed per entry point after warm-up",
    )
    p.add_argument(
        "--bound-objects",
        type=int,
        default=250,
        help="largest growth of Python objects (pymalloc blocks) allowed per entry point",
    )
    p.add_argument(
        "--rss-bound-mib",
        type=float,
        default=1.0,
        help="largest growth of the resident set allowed per entry point after warm-up",
    )
    p.add_argument(
        "--self-test",
        action="store_true",
        help="add an entry point that leaks 100 bytes per call: the check must then fail",
    )
    p.add_argument(
        "--threads",
        type=int,
        default=1,
        help="OpenMP threads (1: the batch and column loops in the calling thread, whose malloc "
        "arena mallinfo2 reports; on a busy machine more threads also cost milliseconds per "
        "call in barriers)",
    )
    a = p.parse_args(argv)
    warnings.simplefilter("ignore")
    td.set_num_threads(a.threads)
    calls = entry_points()
    if a.self_test:
        kept = []
        calls["self-test: leaks a 96-byte array per call"] = lambda: kept.append(np.empty(12))  # 96 bytes of data
    chunk = max(1, a.calls // (len(calls) * a.rounds))
    t0 = time.perf_counter()
    growth, blocks, resident = {}, {}, {}
    for name, f in calls.items():  # each entry point alone: 1 round of warm-up, then rounds - 1 measured
        for _ in range(chunk):
            f()
        before, before_blocks, before_rss = in_use(), sys.getallocatedblocks(), rss()
        for _ in range(chunk * (a.rounds - 1)):
            f()
        growth[name], blocks[name] = in_use() - before, sys.getallocatedblocks() - before_blocks
        resident[name] = rss() - before_rss
    kib, mib = 1 << 10, 1 << 20
    n_calls = chunk * a.rounds * len(calls)
    measured = chunk * (a.rounds - 1)
    print(
        f"leakcheck: {n_calls} calls of {len(calls)} entry points in {time.perf_counter() - t0:.1f} s "
        f"({measured} measured per entry point after warm-up)"
    )
    print(
        f"leakcheck: after warm-up, summed over the entry points: malloc'd bytes "
        f"{sum(growth.values()) / kib:+.1f} KiB, Python objects {sum(blocks.values()):+d}, "
        f"RSS {sum(resident.values()) / mib:+.2f} MiB (RSS now {rss() / mib:.1f} MiB)"
    )
    worst = sorted(growth.items(), key=lambda kv: -kv[1])[:4]
    print("leakcheck: largest growth of malloc'd bytes:", ", ".join(f"{n} {g / kib:+.1f} KiB" for n, g in worst))
    worst = sorted(blocks.items(), key=lambda kv: -kv[1])[:4]
    print("leakcheck: largest growth of Python objects:", ", ".join(f"{n} {g:+d}" for n, g in worst))
    bad = [f"{n} ({g / measured:.0f} bytes/call)" for n, g in growth.items() if g > a.bound_kib * kib]
    bad += [f"{n} ({g / measured:.2f} objects/call)" for n, g in blocks.items() if g > a.bound_objects]
    bad += [f"{n} (RSS {g / mib:+.2f} MiB)" for n, g in resident.items() if g > a.rss_bound_mib * mib]
    if bad:
        print(f"leakcheck: LEAK: {bad}", file=sys.stderr)
        return 1
    print("leakcheck: no leak")
    return 0


if __name__ == "__main__":
    sys.exit(main())
