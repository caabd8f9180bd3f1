"""Gymnasium environments stepped by treedyn: Gymnasium's MuJoCo locomotion tasks (its own classes,
observations, rewards, termination, reset noise and seeding) with their physics from treedyn's C++
step (``td.StepData`` on the same MJCF file) instead of ``mj_step``; the public module
``treedyn.envs``.

    import gymnasium as gym
    import treedyn.envs  # registers "treedyn/HalfCheetah-v5", ... (also: treedyn.envs.make(...))
    env = gym.make("treedyn/Hopper-v5")

Each task is Gymnasium's class with one change, its simulation step: ``frame_skip`` steps of a
``td.StepData`` made from the file (``td.ContactSimulator(model)``: MuJoCo's soft contacts, the file's
integrator and timestep), after which the state is written into the environment's ``MjData`` in
MuJoCo's layout and ``mj_forward`` (with ``mj_rnePostConstraint``, as Gymnasium's own step) fills the
quantities Gymnasium's observations and rewards read. The tasks that read only the state (HalfCheetah,
Hopper, Walker2d, Swimmer) give Gymnasium's observations and rewards to rounding from the same state;
the Ant's and the Humanoid's also read body velocities, actuator and contact forces, which here are
those of the state after the step, where after ``mj_step`` they are MuJoCo's at its last RK4 stage
(their files' integrator): their rewards' contact and control terms differ by that. ``set_state`` (Gymnasium's resets) sets treedyn's state too.
``TreedynVectorEnv`` steps a batch of them at once: one ``td.rollout`` call over the worlds on
treedyn's threads, then each world's observation and reward as above.

Needs ``gymnasium`` and ``mujoco`` (``pip install "treedyn[gym]"``).
"""

from __future__ import annotations

import numpy as np

__all__ = ["TASKS", "make", "TreedynVectorEnv", "treedyn_task"]

# Gymnasium's locomotion tasks: id -> (module, class)
TASKS = {
    "HalfCheetah-v5": ("half_cheetah_v5", "HalfCheetahEnv"),
    "Hopper-v5": ("hopper_v5", "HopperEnv"),
    "Walker2d-v5": ("walker2d_v5", "Walker2dEnv"),
    "Swimmer-v5": ("swimmer_v5", "SwimmerEnv"),
    "Ant-v5": ("ant_v5", "AntEnv"),
    "Humanoid-v5": ("humanoid_v5", "HumanoidEnv"),
}
_CLASSES: dict = {}


class _TreedynStepping:
    """The change to a Gymnasium MujocoEnv: its simulation is treedyn's (see the module)."""

    def _treedyn_data(self):
        td_data = self.__dict__.get("_td")
        if td_data is None:
            import warnings

            from ..io import load_mjcf
            from ..sim.contact import ContactSimulator

            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # (what treedyn does not read: said once by load_mjcf's users)
                model = load_mjcf(self.fullpath)
            td_data = self._td = ContactSimulator(model).data()
            self._pending = False
        return td_data

    def set_state(self, qpos, qvel):
        super().set_state(qpos, qvel)
        data = self._treedyn_data()
        data.qpos, data.qvel = self.data.qpos, self.data.qvel
        data.time = float(self.data.time)
        if self.model.na:
            data.act[:] = self.data.act

    def _step_mujoco_simulation(self, ctrl, n_frames):
        import mujoco

        data = self._treedyn_data()
        if self._pending:  # (stepped already, with the batch: TreedynVectorEnv)
            self._pending = False
        else:
            data.ctrl[:] = ctrl
            data.step(n_frames)
        self.data.ctrl[:] = ctrl
        self.data.qpos[:], self.data.qvel[:] = data.qpos, data.qvel
        if self.model.na:
            self.data.act[:] = data.act
        self.data.time = data.time
        mujoco.mj_forward(self.model, self.data)
        mujoco.mj_rnePostConstraint(self.model, self.data)


def treedyn_task(task: str) -> type:
    """Gymnasium's class of ``task`` (a key of TASKS) stepped by treedyn."""
    if task not in TASKS:
        raise ValueError(f"unknown task {task!r}; treedyn's are {sorted(TASKS)}")
    if task not in _CLASSES:
        import importlib

        module, name = TASKS[task]
        base = getattr(importlib.import_module(f"gymnasium.envs.mujoco.{module}"), name)
        _CLASSES[task] = type(f"Treedyn{name}", (_TreedynStepping, base), {"__module__": __name__})
    return _CLASSES[task]


def make(task: str, **kwargs):
    """``gymnasium.make("treedyn/<task>", **kwargs)``: the task with Gymnasium's wrappers (its time limit)."""
    import gymnasium

    return gymnasium.make(f"treedyn/{task}", **kwargs)


def _register() -> None:
    import gymnasium

    for task in TASKS:
        if f"treedyn/{task}" not in gymnasium.registry:
            spec = gymnasium.spec(task)  # (Gymnasium's own: the same step limit and reward threshold)
            gymnasium.register(
                id=f"treedyn/{task}",
                entry_point=lambda task=task, **kw: treedyn_task(task)(**kw),
                max_episode_steps=spec.max_episode_steps,
                reward_threshold=spec.reward_threshold,
            )


class TreedynVectorEnv:
    """``num_envs`` copies of a task stepped as one batch: ``reset(seed=...)`` -> (observations, infos),
    ``step(actions (num_envs, nu))`` -> (observations, rewards, terminations, truncations, infos), each
    world's physics advanced by one ``td.rollout`` call for all (treedyn's threads), each world's
    observation and reward Gymnasium's; a world that terminates or is truncated is reset (its last
    observation in infos["final_obs"]), as Gymnasium's vector environments do with autoreset."""

    def __init__(self, task: str, num_envs: int, **kwargs):
        import gymnasium

        self.envs = [make(task, **kwargs) for _ in range(num_envs)]
        self.num_envs = num_envs
        self.single_observation_space = self.envs[0].observation_space
        self.single_action_space = self.envs[0].action_space
        self.observation_space = gymnasium.vector.utils.batch_space(self.single_observation_space, num_envs)
        self.action_space = gymnasium.vector.utils.batch_space(self.single_action_space, num_envs)

    def reset(self, *, seed=None, options=None):
        seeds = [None] * self.num_envs if seed is None else [seed + k for k in range(self.num_envs)]
        out = [env.reset(seed=s, options=options) for env, s in zip(self.envs, seeds)]
        return np.stack([o for o, _ in out]), {"envs": [i for _, i in out]}

    def step(self, actions):
        from ..sim.engine import rollout

        actions = np.asarray(actions, dtype=float)
        inner = [env.unwrapped for env in self.envs]
        datas, frames = [e._treedyn_data() for e in inner], inner[0].frame_skip
        rollout(datas, np.repeat(actions[:, None, :], frames, axis=1))  # (all worlds at once)
        obs, rewards, terminated, truncated, infos = [], [], [], [], {"final_obs": [None] * self.num_envs}
        for k, (env, e) in enumerate(zip(self.envs, inner)):
            e._pending = True
            o, r, term, trunc, _ = env.step(actions[k])
            if term or trunc:
                infos["final_obs"][k] = o
                o, _ = env.reset()
            obs.append(o), rewards.append(r), terminated.append(term), truncated.append(trunc)
        return np.stack(obs), np.array(rewards), np.array(terminated), np.array(truncated), infos

    def close(self):
        for env in self.envs:
            env.close()


try:  # (registered when gymnasium is installed; make() and treedyn_task() say what is missing otherwise)
    _register()
except ImportError:
    pass
