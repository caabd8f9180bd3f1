"""treedyn.model.cache: the one per-model cache of engines and solvers (one object per key, made
again when the model changes, kept with the model, shared by threads)."""

import copy
import gc
import pickle
import threading
import weakref

import numpy as np
import pytest

import treedyn as td
from treedyn.model.cache import cached, clear
from treedyn.scenes import chain, random_tree


class Counting:
    """A make that counts its calls and returns a new object each time."""

    def __init__(self):
        self.calls = 0

    def __call__(self, model, key):
        self.calls += 1
        return [key, self.calls]


def test_one_object_per_model_make_and_key():
    m, make, other = chain(3), Counting(), Counting()
    a = cached(m, "k", make)
    assert cached(m, "k", make) is a and make.calls == 1
    b = cached(m, "j", make)
    assert b is not a and make.calls == 2
    assert cached(m, "k", other) is not a  # another make: its own objects
    assert cached(chain(3), "k", make) is not a  # another model, however alike


def test_made_again_whenever_the_model_changes():
    m, make = chain(3), Counting()
    a = cached(m, "k", make)
    m.add_body("extra", m.n_bodies - 1, td.Revolute((0, 1, 0)))
    b = cached(m, "k", make)
    assert b is not a and cached(m, "k", make) is b
    m.gravity = (0.0, 0.0, -1.62)
    c = cached(m, "k", make)
    assert c is not b and cached(m, "k", make) is c
    assert make.calls == 3
    clear(m)
    assert cached(m, "k", make) is not c
    # every mutating method and every public attribute assigned is a change (the revision counts
    # changes; it does not compare values): what was made is made again
    for change in (
        lambda: m.set_joint_limits(m.joint_names[0], -1.0, 1.0),
        lambda: m.add_spring(1, (0, 0, 0), 2, (0, 0, 0), 10.0),
        lambda: setattr(m, "baumgarte", 0.5),
        lambda: setattr(m, "gravity", m.gravity),
    ):
        before = cached(m, "k", make)
        change()
        assert cached(m, "k", make) is not before


def test_the_users_follow_the_model():
    m = chain(3)
    q = td.neutral(m)
    assert td.inverse_mass_matrix(m, q).shape == (3, 3)
    td.aba_derivatives(m, q, np.zeros(3), np.zeros(3))
    m.add_body("extra", m.n_bodies - 1, td.Revolute((0, 1, 0)))
    q = td.neutral(m)
    Minv = td.inverse_mass_matrix(m, q)
    assert Minv.shape == (4, 4)
    np.testing.assert_array_equal(Minv, td.make_solver("drumwright", m).inverse_mass_matrix(q))
    m.gravity = (1.0, 2.0, 3.0)
    v, tau = np.ones(4), np.zeros(4)
    fresh = chain(3)
    fresh.add_body("extra", fresh.n_bodies - 1, td.Revolute((0, 1, 0)))
    fresh.gravity = (1.0, 2.0, 3.0)
    for x, y in zip(td.aba_derivatives(m, q, v, tau), td.aba_derivatives(fresh, q, v, tau)):
        np.testing.assert_array_equal(x, y)


def test_errors():
    with pytest.raises(TypeError, match="model must be a treedyn.Model, got str 'ur5'"):
        cached("ur5", "k", Counting())
    m = chain(2)

    def fails(model, key):
        raise ValueError("no")

    with pytest.raises(ValueError, match="no"):
        cached(m, "k", fails)
    make = Counting()
    assert cached(m, "k", make) == ["k", 1]  # nothing was stored for the failure
    assert cached(m, ["unhashable"], make) is not cached(m, ["unhashable"], make)  # made, never stored


def test_copies_and_pickles_start_empty_and_the_cache_does_not_keep_the_model_alive():
    m = chain(3)
    q = td.neutral(m)
    M = td.inverse_mass_matrix(m, q)
    td.aba_derivatives(m, q, np.zeros(3), np.zeros(3))
    for c in (pickle.loads(pickle.dumps(m)), copy.deepcopy(m), copy.copy(m)):
        assert not c.__dict__["_cache"].objects
        np.testing.assert_array_equal(td.inverse_mass_matrix(c, q), M)
    ref = weakref.ref(m)
    del m
    gc.collect()
    assert ref() is None  # the solver refers to its model: the cache lives on the model, not beside it


def test_threads_share_one_model():
    m = random_tree(12, 3)
    rng = np.random.default_rng(0)
    states = [
        (td.random_configuration(m, rng), rng.standard_normal(m.nv), rng.standard_normal(m.nv)) for _ in range(16)
    ]

    def work(i):
        q, v, tau = states[i % len(states)]
        return td.inverse_mass_matrix(m, q), td.aba_derivatives(m, q, v, tau), td.rnea_derivatives(m, q, v, tau)

    serial = [work(i) for i in range(64)]
    clear(m)  # the threads race to make the solver and the engine
    start = threading.Barrier(8)
    results = [None] * 64

    def run(t):
        start.wait()
        for i in range(t, 64, 8):
            results[i] = work(i)

    threads = [threading.Thread(target=run, args=(t,)) for t in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for a, b in zip(results, serial):
        np.testing.assert_array_equal(a[0], b[0])
        for x, y in zip(a[1] + a[2], b[1] + b[2]):
            np.testing.assert_array_equal(x, y)


def test_one_object_made_when_threads_race():
    m = chain(3)
    made = []
    start = threading.Barrier(8)

    def slow(model, key):
        made.append(key)
        return object()

    out = [None] * 8

    def run(t):
        start.wait()
        out[t] = cached(m, "k", slow)

    threads = [threading.Thread(target=run, args=(t,)) for t in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(made) == 1 and all(o is out[0] for o in out)
