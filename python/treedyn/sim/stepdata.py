"""StepData's MuJoCo-facing attributes, in Python over its C++ arrays: ``qpos`` and ``qvel`` (the
state in MuJoCo's layout, treedyn.algorithms.layout: read and written) and ``sensordata``
(treedyn.sim.sensors: MuJoCo's after mj_step)."""

from __future__ import annotations

import numpy as np

from .. import _checks as C
from .. import _core
from ..algorithms.layout import mujoco_layout
from .sensors import step_sensordata

__all__: list = []


def _get_qpos(data) -> np.ndarray:
    """The positions in MuJoCo's layout (a copy): quaternions (w, x, y, z). Assigning one sets q
    (the velocities stay in treedyn's coordinates: set qvel after qpos, as MuJoCo's are read)."""
    return mujoco_layout(data.model).qpos(data.q)


def _set_qpos(data, qpos) -> None:
    layout = mujoco_layout(data.model)
    qpos = C.array(qpos, "qpos", (layout.nq_peer,))
    q, _ = layout.state(qpos, np.zeros(layout.nv_peer))
    data.q[:] = q


def _get_qvel(data) -> np.ndarray:
    """The velocities in MuJoCo's layout (a copy): a free joint's linear velocity in world axes.
    Assigning one sets v at the current q."""
    return mujoco_layout(data.model).qvel(data.q, data.v)


def _set_qvel(data, qvel) -> None:
    layout = mujoco_layout(data.model)
    data.v[:] = layout.apply_T(data.q, C.array(qvel, "qvel", (layout.nv_peer,)), transpose=True)


_core.StepData.qpos = property(_get_qpos, _set_qpos, doc=_get_qpos.__doc__)
_core.StepData.qvel = property(_get_qvel, _set_qvel, doc=_get_qvel.__doc__)
_core.StepData.sensordata = property(step_sensordata, doc=step_sensordata.__doc__)
