"""MuJoCo's soft equalities (contact/soft.hpp's equality rows, treedyn.sim.soft.equality_rows): connect,
weld, joint and tendon equalities with their solref/solimp, stepped beside mj_step on small files written
for each — the driven four-bar whose loop MuJoCo lets stretch, a welded arm, coupled hinges, coupled
tendons — by the default ContactSimulator (Newton, and ADMM asked for), and the Python-built model's
hard constraints left hard."""

import numpy as np
import pytest

import treedyn as td

mujoco = pytest.importorskip("mujoco")

_LINK = 'contype="0" conaffinity="0"'  # (no contacts: the equality alone)

FILES = {
    # a crank-rocker closed by a soft connect, driven by a motor on the crank
    "connect": f"""<mujoco><compiler angle="radian"/><worldbody>
      <body name="crank"><joint name="j1" axis="0 1 0" damping="0.01"/>
        <geom type="capsule" fromto="0 0 0 0.1 0 0" size="0.01" mass="0.2" {_LINK}/>
        <body name="coupler" pos="0.1 0 0"><joint name="j2" axis="0 1 0"/>
          <geom type="capsule" fromto="0 0 0 0 0 0.3" size="0.01" mass="0.3" {_LINK}/></body></body>
      <body name="rocker" pos="0.3 0 0"><joint name="j3" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 -0.2 0 0.2236" size="0.01" mass="0.3" {_LINK}/></body>
      </worldbody><equality><connect body1="coupler" body2="rocker" anchor="0 0 0.3" solref="0.05 0.8"/>
      </equality><actuator><motor joint="j1"/></actuator></mujoco>""",
    # a two-link arm whose tip body is welded to a free-swinging pendulum's bob (soft, default solref)
    "weld": f"""<mujoco><compiler angle="radian"/><worldbody>
      <body name="a"><joint name="s" axis="0 1 0"/><geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.02" {_LINK}/>
        <body name="b" pos="0.3 0 0"><joint name="e" axis="0 0 1"/>
          <geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.02" {_LINK}/></body></body>
      <body name="p" pos="0.5 0 0"><joint name="px" type="slide" axis="1 0 0"/><joint name="pz" type="slide" axis="0 0 1"/>
        <joint name="pr" axis="0 1 0"/><geom type="box" size="0.03 0.03 0.03" {_LINK}/></body>
      </worldbody><equality><weld body1="b" body2="p" solimp="0.8 0.95 0.01"/></equality>
      <actuator><motor joint="s"/><motor joint="e"/></actuator></mujoco>""",
    # two hinges coupled by a quadratic joint equality, one driven
    "joint": f"""<mujoco><compiler angle="radian"/><worldbody>
      <body name="a"><joint name="h1" axis="0 1 0"/><geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.02" {_LINK}/>
      </body><body name="b" pos="0.5 0 0"><joint name="h2" axis="0 1 0" ref="0.1"/>
        <geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.02" {_LINK}/></body>
      </worldbody><equality><joint joint1="h2" joint2="h1" polycoef="0 0.5 0.2 0 0" solref="0.03 1"/></equality>
      <actuator><motor joint="h1"/></actuator></mujoco>""",
    # two fixed tendons over three hinges kept equal
    "tendon": f"""<mujoco><compiler angle="radian"/><worldbody>
      <body name="a"><joint name="h1" axis="0 1 0"/><geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.02" {_LINK}/>
        <body name="b" pos="0.2 0 0"><joint name="h2" axis="0 1 0"/>
          <geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.02" {_LINK}/></body></body>
      <body name="c" pos="0.6 0 0"><joint name="h3" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.02" {_LINK}/></body></worldbody>
      <tendon><fixed name="t1"><joint joint="h1" coef="1"/><joint joint="h2" coef="0.5"/></fixed>
        <fixed name="t2"><joint joint="h3" coef="-1"/></fixed></tendon>
      <equality><tendon tendon1="t1" tendon2="t2"/></equality>
      <actuator><motor joint="h3"/></actuator></mujoco>""",
}


def _run(xml: str, contact_solver: str, seconds: float = 2.0) -> tuple:
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    model = td.load_mjcf(xml)
    sim = td.ContactSimulator(model, contact_solver=contact_solver)
    state = td.State.initial(model)
    worst, stretch = 0.0, 0.0
    for k in range(int(seconds / m.opt.timestep)):
        u = 0.4 * np.sin(3 * k * m.opt.timestep + np.arange(m.nu))
        d.ctrl[:] = u
        mujoco.mj_step(m, d)
        sim.step(state, ctrl=u)
        worst = max(worst, np.abs(state.q - d.qpos).max())
        stretch = max(stretch, np.abs(d.efc_pos[: d.ne]).max() if d.ne else 0.0)
    return worst, stretch


@pytest.mark.parametrize("kind", list(FILES))
@pytest.mark.parametrize("contact_solver", ["auto", "admm"])
def test_a_soft_equality_steps_as_mj_step(kind, contact_solver):
    """2 s driven: every coordinate within 1e-6 of mj_step's (Newton: to rounding; ADMM: its
    tolerance), while MuJoCo's own residual is far from zero — the equality is soft, and so is ours."""
    worst, stretch = _run(FILES[kind], contact_solver)
    assert worst < (1e-9 if contact_solver == "auto" else 1e-6), worst
    assert stretch > 1e-4  # (MuJoCo's loop stretches: a hard constraint would be 1e3 times tighter)


def test_a_constraint_without_softness_stays_hard():
    """A loop closure without set_constraint_softness (as one added in Python) keeps its hard rows under
    soft constraints: with nothing else soft in the model (no contacts, no limits) the step is the hard
    simulator's, bit for bit; with its softness, the loop stretches as MuJoCo's."""
    hard = td.load_mjcf(FILES["connect"].replace('damping="0.01"', ""))  # (damping: implicit as MuJoCo's if soft)
    hard.__dict__["_constraint_softness"] = {}  # (as a model whose closure was added in Python)
    hard._changed()
    soft_sim, hard_sim = td.ContactSimulator(hard), td.ContactSimulator(hard, soft=False, qp_tolerance=1e-8)
    assert soft_sim.soft and not hard_sim.soft
    a, b = td.State.initial(hard), td.State.initial(hard)
    for _ in range(300):
        soft_sim.step(a, ctrl=[0.5])
        hard_sim.step(b, ctrl=[0.5])
    assert np.array_equal(a.q, b.q) and np.array_equal(a.v, b.v)


def test_constraint_softness_is_checked():
    model = td.load_mjcf(FILES["joint"])
    with pytest.raises(ValueError, match='kind must be "loop" or "coupling"'):
        model.set_constraint_softness("weld", 0)
    with pytest.raises(ValueError, match="no loop 0"):
        model.set_constraint_softness("loop", 0)
    with pytest.raises(ValueError, match="solref"):
        model.set_constraint_softness("coupling", 0, solref=(0.02, float("nan")))
    model.set_constraint_softness("coupling", 0, solref=(0.01, 1))
    assert model.constraint_softness("coupling", 0)[0] == (0.01, 1.0)
