"""The step on the models MuJoCo users run, against MuJoCo's own: Gymnasium's locomotion files as
``td.load_mjcf`` reads them (MuJoCo's soft constraints, the file's integrator and cone), stepped by a
``td.StepData`` (one call into C++ a step) beside ``mj_step`` on the same file, alternating, one thread,
zero control from the file's qpos0 (the swimmer in its fluid); the DeepMind Control suite's walker,
cheetah, humanoid, quadruped and dog where the tests have unpacked them; robots whose collision geoms are
convex meshes (Solo-12, Go2, TALOS: ``treedyn.tools.peers.example_robot_mjcf``). ``python -m benchmarks contact_step
--models ...`` prints the same with the ``sim.step(state)`` path beside; docs/guide/mujoco.md has the
table. Above 1: ours is faster.
"""

import os
import warnings

import treedyn as td
from treedyn.util.timing import speedup

from .common import Threads


class StepDataRatioMujoco(Threads):
    """time of mj_step over that of ``StepData.step()`` on a Gymnasium model's file (each from its
    qpos0, at rest then lying or standing: the trajectories run on, both continuing theirs)."""

    params = ["half_cheetah", "ant", "hopper", "walker2d", "humanoid", "swimmer"]
    params += ["dmc/walker", "dmc/cheetah", "dmc/humanoid", "dmc/quadruped", "dmc/dog"]
    params += ["erd/solo12", "erd/go2", "erd/talos"]
    param_names = ["model"]
    repeats = 9
    timeout = 300

    def setup(self, name):
        try:
            import gymnasium
            import mujoco
        except ImportError as e:
            raise NotImplementedError(f"mujoco or gymnasium unavailable: {e}") from e
        self._set_threads(1)
        path = os.path.join(os.path.dirname(gymnasium.__file__), "envs", "mujoco", "assets", f"{name}.xml")
        if name.startswith("dmc/"):  # (the dm_control wheel's files as the tests unpack them)
            base = os.environ.get("TREEDYN_PUBLIC_MJCF") or os.path.expanduser("~/.cache/treedyn/public-mjcf")
            path = os.path.join(base, "dm_control-1.0.50", "dm_control", "suite", name[4:] + ".xml")
            if not os.path.isfile(path):
                raise NotImplementedError(f"{path} is not here (the tests unpack it: tests/conftest.py)")
        if name.startswith("erd/"):  # (convex-mesh collisions: MuJoCo's import of example-robot-data's URDF)
            from treedyn.tools.peers import MESH_ROBOTS, example_robot_mjcf

            try:
                path = example_robot_mjcf(MESH_ROBOTS[name[4:]])
            except (ImportError, FileNotFoundError) as e:
                raise NotImplementedError(f"{name}: {e}") from e
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (what treedyn does not read: IgnoredElementWarning)
            model = td.load_mjcf(path)
        data = td.ContactSimulator(model).data()
        m = mujoco.MjModel.from_xml_path(path)
        d = mujoco.MjData(m)
        data.step(50)  # (past the first contacts)
        for _ in range(50):
            mujoco.mj_step(m, d)
        self.f_ours, self.f_mujoco = data.step, lambda: mujoco.mj_step(m, d)

    def track_step_mujoco_over_stepdata(self, name):
        """Median time of mj_step over that of StepData.step(), alternating, one thread."""
        return speedup(self.f_mujoco, self.f_ours, self.repeats)

    track_step_mujoco_over_stepdata.unit = "ratio"
