"""Every MJCF model shipped in the wheels of gymnasium (gymnasium/envs/mujoco/assets/*.xml) and
dm_control (dm_control/suite/*.xml, the dog's STL meshes included) loads in treedyn and agrees with
MuJoCo's own compiler on M(q) and the bias forces (and q̈, M⁻¹) at random states.

dm_control pins an older MuJoCo, so neither package is installed: a session fixture downloads the
two wheels once (``pip download --no-deps``) into ~/.cache/treedyn/public-mjcf ($XDG_CACHE_HOME, or
$TREEDYN_PUBLIC_MJCF to put it elsewhere), unpacks their models there and reuses them on later runs.
Without a network (pip cannot download) the tests skip and say so.
"""

import os
import warnings

import numpy as np
import pytest
from conftest import assert_peer_agrees_at_random_states

import treedyn as td

mujoco = pytest.importorskip("mujoco")

GYMNASIUM = [
    "ant", "half_cheetah", "hopper", "humanoid", "humanoidstandup", "inverted_double_pendulum",
    "inverted_pendulum", "point", "pusher", "pusher_v5", "reacher", "swimmer", "walker2d", "walker2d_v5",
]  # fmt: skip
DM_CONTROL = [
    "acrobot", "ball_in_cup", "cartpole", "cheetah", "dog", "finger", "fish", "hopper", "humanoid",
    "humanoid_CMU", "lqr", "manipulator", "pendulum", "point_mass", "quadruped", "reacher", "stacker",
    "swimmer", "walker",
]  # fmt: skip
MODELS = [("gymnasium", m) for m in GYMNASIUM] + [("dm_control", m) for m in DM_CONTROL]


def test_every_shipped_model_is_checked(public_models):
    for package, names in (("gymnasium", GYMNASIUM), ("dm_control", DM_CONTROL)):
        shipped = sorted(f[:-4] for f in os.listdir(public_models[package]) if f.endswith(".xml"))
        assert shipped == sorted(names), package


@pytest.mark.parametrize("package,name", MODELS, ids=[f"{p}-{m}" for p, m in MODELS])
def test_public_model_agrees_with_mujoco(public_models, package, name, tmp_path, monkeypatch):
    """Loads (what treedyn does not model only warns) and agrees with MuJoCo at random states
    within the rounding bounds of tests/conftest.py (M within c·n·u of |M|, b of its terms' sizes)."""
    from treedyn.tools.peers import MujocoFromFile

    monkeypatch.chdir(tmp_path)  # MuJoCo writes its warnings (settotalmass) to ./MUJOCO_LOG.TXT

    path = os.path.join(public_models[package], f"{name}.xml")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # IgnoredElementWarning: actuators, tendons, damping, ...
        model = td.Model.from_mjcf(path)
    peer = MujocoFromFile(model, path)
    assert peer.nv_peer == model.nv and peer.m.njnt == len(model.joint_names)
    if model.nv == 0:  # lqr.xml: a template whose moving bodies dm_control adds in Python
        return
    assert_peer_agrees_at_random_states(model, peer, np.random.default_rng(len(name)), n=2, what=f"MuJoCo ({name})")


ACTUATED = [(p, m) for p, m in MODELS if m not in ("lqr",)]


@pytest.mark.parametrize("package,name", ACTUATED, ids=[f"{p}-{m}" for p, m in ACTUATED])
def test_public_model_actuators_and_tendons_agree_with_mujoco(public_models, package, name, tmp_path, monkeypatch):
    """The actuators' generalized force (MuJoCo's qfrc_actuator) and the fixed tendons' lengths at
    random states, controls and activations equal MuJoCo's to rounding: every actuator MuJoCo has is
    loaded (or the file's kind is one the loader notes as not modelled)."""
    monkeypatch.chdir(tmp_path)
    path = os.path.join(public_models[package], f"{name}.xml")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = td.Model.from_mjcf(path)
    mj = mujoco.MjModel.from_xml_path(path)
    d = mujoco.MjData(mj)
    scalar = [j for j in range(mj.njnt) if mj.jnt_type[j] in (mujoco.mjtJoint.mjJNT_HINGE, mujoco.mjtJoint.mjJNT_SLIDE)]
    names = [mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_JOINT, j) or f"joint{j}" for j in scalar]
    loaded = [mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_ACTUATOR, a) or f"actuator{a}" for a in range(mj.nu)]
    assert model.actuator_names == [a for a in loaded if a in model.actuator_names]
    if model.nu < mj.nu:  # only muscles, sites and the like are left out
        left = {int(mj.actuator_trntype[a]) for a in range(mj.nu) if loaded[a] not in model.actuator_names}
        dyn = {int(mj.actuator_dyntype[a]) for a in range(mj.nu) if loaded[a] not in model.actuator_names}
        assert left - {int(mujoco.mjtTrn.mjTRN_JOINT), int(mujoco.mjtTrn.mjTRN_TENDON)} or dyn & {3, 4}, (left, dyn)
        return
    rng = np.random.default_rng(len(name))
    for _ in range(3):
        mujoco.mj_resetData(mj, d)
        q, v = model.reference_configuration.copy(), np.zeros(model.nv)
        for j, n in zip(scalar, names):
            d.qpos[mj.jnt_qposadr[j]] += rng.normal(scale=0.3)
            d.qvel[mj.jnt_dofadr[j]] = rng.normal()
            q[model.q_index(n)], v[model.v_index(n)] = d.qpos[mj.jnt_qposadr[j]], d.qvel[mj.jnt_dofadr[j]]
        d.ctrl[:] = rng.uniform(-2, 2, mj.nu)
        d.act[:] = rng.normal(size=mj.na)
        mujoco.mj_forward(mj, d)
        tau = model.actuator_forces(q, v, d.ctrl, d.act if mj.na else None)
        got = np.array([tau[model.v_index(n)] for n in names])
        want = d.qfrc_actuator[[mj.jnt_dofadr[j] for j in scalar]]
        scale = max(1.0, float(np.abs(want).max(initial=0)))
        assert np.allclose(got, want, rtol=0, atol=64 * np.finfo(float).eps * scale), name
        fixed = [
            t
            for t in range(mj.ntendon)
            if mj.tendon_num[t] and mj.wrap_type[mj.tendon_adr[t]] == mujoco.mjtWrap.mjWRAP_JOINT
        ]
        if fixed and model.tendons:
            assert np.allclose(model.tendon_lengths(q), d.ten_length[fixed], rtol=0, atol=1e-12), name
