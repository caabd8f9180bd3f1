"""td.StepData (ContactSimulator.data): one world's state, inputs and outcome as numpy views of C++
memory, stepped in one call into C++ — the actuators (model/actuation.hpp), collision, dynamics and
contact — checked against the State-based step it must equal bit for bit, from threads, and on bad input."""

import os
import shutil
import subprocess
import sys
import threading
import warnings

import numpy as np
import pytest

import treedyn as td


def _two_links():
    m = td.Model()
    a = m.add_body("a", None, td.Revolute((0, 1, 0)), inertia=td.Inertia(1.0, (0.3, 0, 0), np.eye(3) * 1e-2))
    m.add_body("b", a, td.Revolute((0, 1, 0)), td.Transform(translation=(0.6, 0, 0)),
               td.Inertia(0.5, (0.2, 0, 0), np.eye(3) * 1e-2))  # fmt: skip
    return m


def _actuated():
    """Two links with every actuator kind the C++ step computes: a clamped motor, a servo with a force
    range, a tendon's pull, a filter and an integrator activation, a tendon spring with a dead band."""
    m = _two_links()
    m.add_tendon("t", {"a": 1.0, "b": 0.5}, stiffness=3.0, damping=0.2, rest_length=(-0.1, 0.1))
    m.add_actuator("motor", "a", gear=2.0, ctrlrange=(-1, 1))
    m.add_actuator("servo", "b", gain=(50.0,), bias=(0.0, -50.0, -4.0), forcerange=(-10, 10))
    m.add_actuator("pull", "t", "tendon", gear=3.0)
    m.add_actuator("f", "a", dynamics="filter", time_constant=0.05)
    m.add_actuator("i", "b", dynamics="integrator", actrange=(-0.5, 0.5))
    return m


def test_data_steps_as_the_state_step_bit_for_bit():
    """The same run as the State path (sim.step(state, ctrl=u)), whose actuators are the C++ step's too."""
    model = _actuated()
    sim = td.ContactSimulator(model, 2e-3)
    state = td.State.initial(model)
    d = sim.data(state)
    rng = np.random.default_rng(0)
    for _ in range(300):
        u = rng.uniform(-2, 2, model.nu)
        d.ctrl[:] = u
        d.step()
        sim.step(state, ctrl=u)
    assert np.array_equal(d.q, state.q) and np.array_equal(d.v, state.v) and np.array_equal(d.act, state.act)
    assert d.time == state.t and d.act.shape == (2,) and abs(d.act[1]) <= 0.5


def test_the_cpp_actuation_is_the_models():
    """The C++ step's actuators and tendons (model/actuation.hpp) against treedyn.model.actuation's numpy
    forces and activations, at random states and controls beyond the ranges: equal to rounding."""
    from treedyn.model.actuation import actuation_terms

    model = _actuated()
    sim = td.ContactSimulator(model, 2e-3)
    T, engine, rng = actuation_terms(model), sim.engine(), np.random.default_rng(3)
    for _ in range(20):
        q, v, u, act = rng.normal(size=2), rng.normal(size=2), rng.uniform(-3, 3, model.nu), rng.normal(size=2)
        out = np.zeros(model.nv)
        engine.actuation_force(q, v, u, act, out)
        expect = T.applied(q, v, u, act)
        assert np.abs(out - expect).max() <= 1e-13 * (1 + np.abs(expect).max())
        stepped = act.copy()
        engine.activate(stepped, u, 2e-3)
        assert np.abs(stepped - T.activate(act, u, 2e-3)).max() <= 1e-15 * (1 + np.abs(act).max())


def test_data_of_a_public_model_with_contacts(public_models):
    """Gymnasium's ant (RK4, soft contacts, actuators): n steps in one call equal n calls, and the State
    path; its contacts are there to read."""
    path = os.path.join(public_models["gymnasium"], "ant.xml")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", td.io.IgnoredElementWarning)
        model = td.load_mjcf(path)
    sim = td.ContactSimulator(model)
    state = td.State.initial(model)
    one, many = sim.data(state), sim.data(state)
    u = 0.3 * np.ones(model.nu)
    one.ctrl[:] = many.ctrl[:] = u
    for _ in range(100):
        one.step()
        sim.step(state, ctrl=u)
    many.step(100)
    assert np.array_equal(one.q, many.q) and np.array_equal(one.q, state.q)
    assert one.n_contacts > 0 and one.converged
    geoms, bodies, points, normals, depths, mu, impulses, _ = one.contacts()
    assert len(depths) == one.n_contacts and impulses[:, 2].sum() > 0  # the floor pushes up


def test_data_views_share_memory_and_the_state_is_copied():
    model = _actuated()
    sim = td.ContactSimulator(model, 1e-3)
    state = td.State.initial(model)
    state.q[:] = 0.2
    d = sim.data(state)
    d.q[0] = 0.5  # a view: the data's own q
    assert d.q[0] == 0.5 and state.q[0] == 0.2
    d.tau[:] = 1.0
    d.step()
    assert np.array_equal(d.force[: model.nv] - d.tau, d.force - 1.0)
    assert d.dt == 1e-3 and d.time == pytest.approx(1e-3)


def test_data_worlds_step_from_threads_as_alone():
    model = _actuated()
    sim = td.ContactSimulator(model, 1e-3)
    datas = [sim.data() for _ in range(4)]
    for k, d in enumerate(datas):
        d.ctrl[:] = 0.1 * (k + 1)
    ref = sim.data()
    ref.ctrl[:] = 0.1 * 3
    ref.step(200)

    def run(d):
        for _ in range(20):
            d.step(10)

    threads = [threading.Thread(target=run, args=(d,)) for d in datas]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert np.array_equal(datas[2].q, ref.q)


def test_one_data_shared_by_threads_steps_whole_steps():
    """Four threads stepping one data 50 times each: 200 whole steps, the run one thread makes."""
    model = _actuated()
    sim = td.ContactSimulator(model, 1e-3)
    shared, alone = sim.data(), sim.data()
    shared.ctrl[:] = alone.ctrl[:] = 0.4
    threads = [threading.Thread(target=lambda: [shared.step() for _ in range(50)]) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    alone.step(200)
    assert np.array_equal(shared.q, alone.q) and shared.time == pytest.approx(alone.time)


def test_data_bad_input_is_named():
    model = _actuated()
    sim = td.ContactSimulator(model, 1e-3)
    d = sim.data()
    d.step()
    q = d.q.copy()
    d.ctrl[0] = np.nan
    with pytest.raises(ValueError, match="ctrl has NaN"):
        d.step()
    assert np.array_equal(d.q, q)
    d.ctrl[0] = 0.0
    d.v[0] = np.inf
    with pytest.raises(ValueError, match="NaN or inf in q, v or act"):
        d.step()
    d.v[0] = 0.0
    with pytest.raises(ValueError, match="n must be >= 0"):
        d.step(-1)
    with pytest.raises(ValueError, match="time must be finite"):
        d.time = np.nan
    model.add_actuator("late", "a")
    with pytest.raises(ValueError, match="model changed"):
        d.step()
    with pytest.raises(TypeError, match="state must be a treedyn.State"):
        sim.data(state=np.zeros(2))


def test_data_steps_the_general_rows_as_the_state_step():
    """A coupling, dry friction and a tendon's limits are rows the C++ step makes itself (contact/rows.hpp):
    the data steps them bit for bit as the State path, and the coupling holds."""
    model = _two_links()
    model.add_coupling("b", "a", polycoef=(0.0, -1.0))
    model.set_joint_frictionloss("a", 0.05)
    model.add_tendon("t", {"a": 1.0, "b": 0.5}, range=(-0.3, 0.3), frictionloss=0.02)
    sim = td.ContactSimulator(model, 1e-3)
    state = td.State.initial(model)
    d = sim.data(state)
    for k in range(400):
        d.tau[:] = state_tau = [np.sin(0.02 * k), 0.0]
        d.step()
        sim.step(state, np.array(state_tau))
    assert np.array_equal(d.q, state.q) and np.array_equal(d.v, state.v)
    assert abs(d.q[1] + d.q[0]) < 1e-3 and model.constraint_residual(d.q) < 1e-3


@pytest.mark.parametrize("threads", [1, 2])
def test_rollout_steps_each_world_as_alone(threads):
    """td.rollout of 4 worlds, T steps each: every world's states are the ones it gets stepped alone, bit for
    bit, on any number of threads; the data end in the last state."""
    model = _actuated()
    sim = td.ContactSimulator(model, 1e-3)
    U = np.random.default_rng(2).uniform(-1, 1, (4, 30, model.nu))
    datas = [sim.data() for _ in range(4)]
    q, v = td.rollout(datas, U, threads=threads)
    assert q.shape == (4, 30, model.nq) and v.shape == (4, 30, model.nv)
    for b in range(4):
        alone = sim.data()
        for t in range(30):
            alone.ctrl[:] = U[b, t]
            alone.step()
            assert np.array_equal(q[b, t], alone.q) and np.array_equal(v[b, t], alone.v)
        assert np.array_equal(datas[b].q, alone.q) and np.array_equal(datas[b].act, alone.act)
    same = [sim.data() for _ in range(2)]
    q2, _ = td.rollout(same, U[0])  # (T, nu): the same controls for every world
    assert np.array_equal(q2[0], q2[1]) and np.array_equal(q2[0], q[0])


@pytest.mark.parametrize("threads", [1, 2])
def test_a_policys_rollout_steps_each_world_as_alone(threads):
    """td.rollout(datas, policy=..., steps=T): the policy sees every world's time and state once per step
    and its controls drive them; each world's states are those of stepping it alone under the same
    policy, bit for bit."""
    model = _actuated()
    sim = td.ContactSimulator(model, 1e-3)
    gains = np.random.default_rng(3).uniform(-2, 2, (model.nu, model.nq))
    seen = []

    def policy(t, q, v):  # (elementwise: a world's controls do not depend on the batch's size)
        seen.append(t.copy())
        return np.tanh(gains[None, :, 0] * q[:, :1] + gains[None, :, 1] * q[:, 1:2] - 0.1 * v[:, :1] + t[:, None])

    datas = [sim.data() for _ in range(3)]
    for b, d in enumerate(datas):
        d.q[:] = 0.2 * b
    q, v = td.rollout(datas, policy=policy, steps=25, threads=threads)
    assert q.shape == (3, 25, model.nq) and len(seen) == 25 and seen[1].tolist() == [1e-3] * 3
    for b in range(3):
        alone = sim.data()
        alone.q[:] = 0.2 * b
        for t in range(25):
            alone.ctrl[:] = policy(np.array([alone.time]), alone.q[None], alone.v[None])[0]
            alone.step()
            assert np.array_equal(q[b, t], alone.q) and np.array_equal(v[b, t], alone.v)
    with pytest.raises(ValueError, match="not both"):
        td.rollout(datas, np.zeros((3, 1, model.nu)), policy=policy, steps=1)
    with pytest.raises(ValueError, match="finite controls of shape"):
        td.rollout(datas, policy=lambda t, q, v: np.zeros((2, model.nu)), steps=1)
    with pytest.raises(TypeError, match="callable"):
        td.rollout(datas, policy="pd", steps=1)


def test_rollout_bad_input_is_named():
    model = _actuated()
    sim = td.ContactSimulator(model, 1e-3)
    d = sim.data()
    with pytest.raises(TypeError, match="list of td.StepData"):
        td.rollout([], np.zeros((0, 3, model.nu)))
    with pytest.raises(ValueError, match="ctrl must have shape"):
        td.rollout([d], np.zeros((2, 3, model.nu)))
    with pytest.raises(ValueError, match="NaN or inf"):
        td.rollout([d], np.full((1, 3, model.nu), np.nan))
    with pytest.raises(ValueError, match="appears twice"):
        td.rollout([d, d], np.zeros((2, 3, model.nu)))
    bad = sim.data()
    bad.v[0] = np.inf
    good = sim.data()
    with pytest.raises(ValueError, match=r"world 0 at step 0: .*NaN or inf.*the others stepped"):
        td.rollout([bad, good], np.zeros((2, 5, model.nu)))
    assert good.time == pytest.approx(5e-3)


def test_a_driven_batch_steps_each_world_as_sim_step_does():
    """step_batch with controls: each world's step is sim.step's bit for bit (the same C++ actuation)."""
    model = _two_links()
    model.add_tendon("t", {"a": 1.0, "b": 0.5}, stiffness=3.0, damping=0.2, rest_length=(-0.1, 0.1))
    model.add_actuator("motor", "a", gear=2.0, ctrlrange=(-1, 1))
    model.add_actuator("servo", "b", gain=(50.0,), bias=(0.0, -50.0, -4.0), forcerange=(-10, 10))
    sim = td.ContactSimulator(model, 1e-3)
    u = np.random.default_rng(4).uniform(-2, 2, (3, model.nu))
    q, v = np.tile([0.3, -0.2], (3, 1)), np.zeros((3, 2))
    states = [td.State(q[b].copy(), v[b].copy()) for b in range(3)]
    for _ in range(20):
        sim.step_batch(q, v, ctrl=u)
        for b, s in enumerate(states):
            sim.step(s, ctrl=u[b])
    for b, s in enumerate(states):
        assert np.array_equal(q[b], s.q) and np.array_equal(v[b], s.v)


# a malloc counter for the test below, preloaded into a child interpreter (glibc's dynamic linker: Linux)
_COUNTER_C = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
static long calls = 0;
static int counting = 0;
#define COUNTED(ret, name, params, args)                      \
  ret name params {                                           \
    static ret (*next) params = 0;                            \
    if (!next) next = (ret(*) params)dlsym(RTLD_NEXT, #name); \
    if (counting) __atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED); \
    return next args;                                         \
  }
COUNTED(void*, malloc, (size_t n), (n))
COUNTED(void*, realloc, (void* p, size_t n), (p, n))
COUNTED(void*, aligned_alloc, (size_t a, size_t n), (a, n))
COUNTED(int, posix_memalign, (void** p, size_t a, size_t n), (p, a, n))
void count_on(void) { calls = 0, counting = 1; }
long count_off(void) { counting = 0; return calls; }
"""

_REPLAY = r"""
import ctypes, sys, numpy as np, treedyn as td
counter = ctypes.CDLL(sys.argv[1])
counter.count_off.restype = ctypes.c_long
kind, path, steps = sys.argv[2], sys.argv[3], int(sys.argv[4])
if kind == "mjcf":
    model = td.load_mjcf(path)
    d = td.ContactSimulator(model).data()
    d.ctrl[:] = 0.8 * np.sin(np.arange(model.nu))
else:  # the hard centipede (ADMM on the tree's operator), limp: it folds onto its feet
    model = td.scenes.centipede(int(path)).model
    d = td.ContactSimulator(model, dt=1e-3, soft=False).data()
q0, v0, most = d.q.copy(), d.v.copy(), 0
for run in range(3):  # the third run counted: the first two meet the run's largest problem
    d.q[:], d.v[:] = q0, v0
    if run == 2:
        counter.count_on()
    for _ in range(steps // 10):
        d.step(10)
        most = max(most, d.n_contacts)
calls = counter.count_off()
print(calls, most)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="LD_PRELOAD of a malloc counter: Linux's loader")
@pytest.mark.parametrize("package,name", [("gymnasium", "ant"), ("gymnasium", "humanoid"), ("dm_control", "dog"),
                                          (None, "centipede")])  # fmt: skip
def test_a_step_allocates_nothing_once_the_world_has_met_its_largest_problem(public_models, tmp_path, package, name):
    """The contact step holds its per-row storage (linalg/reserved.hpp) and its workspaces across steps: a run
    replayed from the same state, once its largest problem has been met, makes no heap allocation at all (malloc,
    realloc and the aligned allocators counted in C, preloaded into a child interpreter). The models cover the
    step's routes: the Gymnasium ant (RK4, Newton on the tree), its humanoid (Euler, contacts between its own
    bodies), the DeepMind Control dog (tendon actuators, ADMM on the formed operator where Newton would be dense)
    and the hard centipede (ADMM on the tree's operator, its polish)."""
    if "san" in os.environ.get("LD_PRELOAD", ""):
        pytest.skip("a sanitizer's runtime is preloaded and owns malloc (.ci/sanitize): counted in the plain run")
    cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler to build the malloc counter")
    lib = tmp_path / "libcount.so"
    (tmp_path / "count.c").write_text(_COUNTER_C)
    subprocess.run([cc, "-O2", "-shared", "-fPIC", "-o", str(lib), str(tmp_path / "count.c"), "-ldl"], check=True)
    path = "10" if package is None else os.path.join(public_models[package], f"{name}.xml")
    kind = "scene" if package is None else "mjcf"
    env = dict(os.environ, LD_PRELOAD=str(lib))
    out = subprocess.run([sys.executable, "-c", _REPLAY, str(lib), kind, path, "300"], env=env, capture_output=True,
                         text=True, timeout=600)  # fmt: skip
    assert out.returncode == 0, out.stderr
    calls, most = map(int, out.stdout.split()[-2:])
    assert most > 0  # (the run touched: the contact step's problems were solved)
    assert calls == 0, f"{calls} heap allocations in 300 replayed steps"
