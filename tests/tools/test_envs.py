"""treedyn.envs: Gymnasium's MuJoCo locomotion tasks stepped by treedyn, beside Gymnasium's own on the
same seeds and actions (observations and rewards), through Gymnasium's environment checker, and the
batched vector environment against the single ones."""

import warnings

import numpy as np
import pytest

gym = pytest.importorskip("gymnasium")
pytest.importorskip("mujoco")
envs = pytest.importorskip("treedyn.envs")

STATE_TASKS = ["HalfCheetah-v5", "Hopper-v5", "Walker2d-v5", "Swimmer-v5"]


def _episode(env, actions, seed):
    obs, _ = env.reset(seed=seed)
    out = [obs]
    rewards = []
    for a in actions:
        obs, r, terminated, truncated, _ = env.step(a)
        out.append(obs), rewards.append(r)
        if terminated or truncated:
            break
    return np.array(out), np.array(rewards)


@pytest.mark.parametrize("task", STATE_TASKS)
def test_a_task_is_gymnasiums_with_treedyns_physics(task):
    """The same seed and 60 random actions: the reset, every observation and every reward as Gymnasium's
    own environment gives them (MuJoCo's step), to 1e-6 (measured: returns equal to 1e-12, observations
    1e-14 after the first step, growing with the chaos of contact to ~1e-9), and the same termination."""
    actions = np.random.default_rng(0).uniform(-0.4, 0.4, (60, gym.make(task).action_space.shape[0]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = _episode(gym.make(f"treedyn/{task}"), actions, seed=3)
        theirs = _episode(gym.make(task), actions, seed=3)
    assert ours[0].shape == theirs[0].shape and len(ours[1]) == len(theirs[1])
    np.testing.assert_array_equal(ours[0][0], theirs[0][0])
    np.testing.assert_allclose(ours[0], theirs[0], rtol=0, atol=1e-6)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=0, atol=1e-6)


@pytest.mark.parametrize("task", sorted(envs.TASKS))
def test_every_task_passes_gymnasiums_checker(task):
    from gymnasium.utils.env_checker import check_env

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (Gymnasium's own notes on unbounded Box spaces)
        env = gym.make(f"treedyn/{task}")
        check_env(env.unwrapped, skip_render_check=True)
        obs, _ = env.reset(seed=0)
        obs, reward, *_ = env.step(env.action_space.sample())
    assert env.observation_space.contains(obs.astype(env.observation_space.dtype)) and np.isfinite(reward)


def test_the_vector_env_steps_the_batch_as_the_single_envs():
    """TreedynVectorEnv: 3 hoppers stepped by one td.rollout per step give each world's observations and
    rewards bit for bit as the single environment, terminations and autoresets included."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        vec = envs.TreedynVectorEnv("Hopper-v5", 3)
        obs, _ = vec.reset(seed=10)
        singles = [gym.make("treedyn/Hopper-v5") for _ in range(3)]
        single_obs = [env.reset(seed=10 + k)[0] for k, env in enumerate(singles)]
        np.testing.assert_array_equal(obs, np.stack(single_obs))
        rng = np.random.default_rng(1)
        for _ in range(40):
            a = rng.uniform(-1, 1, (3, 3))
            obs, rewards, terminated, truncated, infos = vec.step(a)
            for k, env in enumerate(singles):
                o, r, term, trunc, _ = env.step(a[k])
                assert r == rewards[k] and term == terminated[k]
                if term or trunc:
                    np.testing.assert_array_equal(infos["final_obs"][k], o)
                    o, _ = env.reset()
                np.testing.assert_array_equal(obs[k], o)
    assert vec.observation_space.shape == (3, 11) and vec.action_space.shape == (3, 3)
    with pytest.raises(ValueError, match="unknown task"):
        envs.treedyn_task("Pong-v5")
