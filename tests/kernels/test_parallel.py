"""The worker pool (cpp/src/parallel.cpp): where its workers may run. Its results (the same bits on
any number of threads, errors, nesting) are tested with the kernels that use it (test_minv,
test_batch...)."""

import os
import subprocess
import sys

import pytest

linux_with_two_cpus = pytest.mark.skipif(
    not sys.platform.startswith("linux") or len(os.sched_getaffinity(0)) < 2,
    reason="CPU binding is Linux-only and needs two CPUs",
)

# In a child (affinity and the pool are per process): the workers' allowed CPUs after a 2-thread
# call, for the caller bound to one CPU, then allowed two (the CPU it ran on read before and after
# the call: a round where it moved is not counted).
CHILD = """
import glob, os, numpy as np, treedyn as td
from treedyn.scenes import random_tree

def allowed(status):
    line = next(l for l in open(status) if l.startswith("Cpus_allowed_list:"))
    cpus = set()
    for part in line.split(":")[1].strip().split(","):
        a, _, b = part.partition("-")
        cpus.update(range(int(a), int(b or a) + 1))
    return cpus

def workers():
    tasks = glob.glob("/proc/self/task/*")
    return [allowed(t + "/status") for t in tasks if open(t + "/comm").read().strip() == "treedyn-worker"]

def running_on():
    return int(open("/proc/thread-self/stat").read().rsplit(")", 1)[1].split()[36])

m = random_tree(300, 1)
q = td.random_configuration(m, np.random.default_rng(0))
s = td.make_solver("drumwright", m)
td.set_num_threads(1)
one = s.inverse_mass_matrix(q)
td.set_num_threads(2)
c0, c1 = sorted(os.sched_getaffinity(0))[:2]
os.sched_setaffinity(0, {c0})
same = np.array_equal(s.inverse_mass_matrix(q), one)
print("alone", same, sorted(map(sorted, workers())))
os.sched_setaffinity(0, {c0, c1})
for _ in range(50):
    before = running_on()
    same = np.array_equal(s.inverse_mass_matrix(q), one)
    if running_on() == before:
        print("two", same, before, sorted(map(sorted, workers())))
"""


@linux_with_two_cpus
def test_workers_keep_off_the_callers_cpu():
    """A worker woken after a pause may be queued on its caller's busy CPU by a scheduler that
    packs threads (the VMs this project is measured on do): the pool binds each worker to another
    of the caller's allowed CPUs, and to the caller's only one when it has one."""
    r = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, check=True)
    lines = r.stdout.splitlines()
    c0 = min(os.sched_getaffinity(0))
    assert lines[0] == f"alone True [[{c0}]]"
    rounds = [line.split(" ", 3) for line in lines[1:]]
    assert len(rounds) >= 10, r.stdout  # the caller rarely moves during a call
    c1 = sorted(os.sched_getaffinity(0))[1]
    for tag, same, cpu, bound in rounds:
        assert (tag, same) == ("two", "True")
        other = c1 if int(cpu) == c0 else c0
        assert bound == f"[[{other}]]", (cpu, bound)
