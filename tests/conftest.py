import os

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

# Property-test budgets (tests/test_fuzz_api.py), chosen by HYPOTHESIS_PROFILE: "ci" (default) keeps
# the fuzz file near a minute on two cores; "fuzz" is a long campaign; "dev" a quick look.
_slow_ok = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]
settings.register_profile("ci", max_examples=60, deadline=None, print_blob=True, suppress_health_check=_slow_ok)
settings.register_profile("dev", max_examples=15, deadline=None, print_blob=True, suppress_health_check=_slow_ok)
settings.register_profile("fuzz", max_examples=5000, deadline=None, print_blob=True, suppress_health_check=_slow_ok)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

import treedyn as td
from treedyn.scenes import chain, random_tree


def rel_err(a, b) -> float:
    """max |a − b| / max(1, max |b|)"""
    a, b = np.asarray(a), np.asarray(b)
    return float(np.abs(a - b).max() / max(1.0, np.abs(b).max()))


def random_models():
    """Random trees covering every joint kind, chains, and floating bases."""
    out = [("chain", chain(9)), ("chain-prismatic", chain(6, joint="prismatic")),
           ("chain-fb", chain(8, floating_base=True))]
    for seed in range(4):
        out.append((f"tree-all-{seed}", random_tree(14, seed)))
        out.append((f"tree-fb-{seed}", random_tree(12, 100 + seed, floating_base=True)))
    for kind in ("revolute", "prismatic", "universal", "spherical"):
        out.append((f"tree-{kind}", random_tree(10, 7, joints=(kind,))))
    return out


@pytest.fixture(params=random_models(), ids=lambda p: p[0])
def model(request):
    return request.param[1]


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


def random_state(model, rng):
    return td.random_configuration(model, rng), rng.standard_normal(model.nv), rng.standard_normal(model.nv)


def outputs_for_thread_counts(f, counts=(1, 2, 3)):
    """[f() run with each OpenMP thread count], the thread count restored afterwards."""
    before = td.get_num_threads()
    try:
        out = []
        for t in counts:
            td.set_num_threads(t)
            out.append(f())
        return out
    finally:
        td.set_num_threads(before)
