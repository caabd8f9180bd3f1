"""Sensors: what a step reports besides the state, MuJoCo's common sensors in treedyn's words.

A sensor reads one joint or one frame (a body, or a named frame of ``model.frames``: an MJCF site)
and gives a few numbers; ``model.sensors`` lists them in order, and their values, concatenated, are
MuJoCo's ``sensordata`` (treedyn.sim.sensors evaluates them). The kinds, MuJoCo's names and sizes:

- ``jointpos``, ``jointvel`` (1): a hinge's or slide's coordinate and velocity;
- ``framepos`` (3), ``framequat`` (4, w x y z), ``framexaxis``, ``frameyaxis``, ``framezaxis`` (3),
  ``framelinvel``, ``frameangvel`` (3), ``framelinacc``, ``frameangacc`` (3): a frame's pose, the
  velocity and acceleration of its origin, world axes (``framelinacc`` less gravity, as MuJoCo's);
- ``gyro``, ``velocimeter`` (3): the frame's angular and linear velocity in its own axes;
  ``accelerometer`` (3): its origin's acceleration less gravity, its own axes (at rest, +g up);
- ``touch`` (1): the normal force of the contacts on the frame's body whose normal, cast from the
  contact point away from the body, meets the sensor's zone (a shape about the frame: MuJoCo's site);
- ``force``, ``torque`` (3): the wrench the body's parent applies to the body and its subtree, at
  the frame's origin, in its axes;
- ``subtreecom``, ``subtreelinvel`` (3): a body's subtree's centre of mass and its velocity,
  ``subtreeangmom`` (3) its angular momentum about it, world axes.

``cutoff`` > 0 clamps a reading to [−cutoff, cutoff] (touch: [0, cutoff]), as MuJoCo's does.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import _checks as C

# kind -> (size, what it reads: "joint" or "frame")
SENSOR_KINDS = {
    "jointpos": (1, "joint"),
    "jointvel": (1, "joint"),
    "framepos": (3, "frame"),
    "framequat": (4, "frame"),
    "framexaxis": (3, "frame"),
    "frameyaxis": (3, "frame"),
    "framezaxis": (3, "frame"),
    "framelinvel": (3, "frame"),
    "frameangvel": (3, "frame"),
    "framelinacc": (3, "frame"),
    "frameangacc": (3, "frame"),
    "gyro": (3, "frame"),
    "velocimeter": (3, "frame"),
    "accelerometer": (3, "frame"),
    "touch": (1, "frame"),
    "force": (3, "frame"),
    "torque": (3, "frame"),
    "subtreecom": (3, "body"),
    "subtreelinvel": (3, "body"),
    "subtreeangmom": (3, "body"),
}
# the kinds that need the step's accelerations, and contact forces (touch, force, torque)
ACCELERATION_KINDS = {"framelinacc", "frameangacc", "accelerometer", "touch", "force", "torque"}


@dataclass(frozen=True)
class Sensor:
    """One sensor: its ``name``, ``kind`` (SENSOR_KINDS), ``target`` (a joint's name, or a body's or
    frame's), ``zone`` (touch: a td.Sphere, Capsule, Box, Cylinder or Ellipsoid about the frame),
    ``cutoff`` (0: none) and ``size`` (its numbers in sensordata)."""

    name: str
    kind: str
    target: str
    zone: object = None
    cutoff: float = 0.0

    @property
    def size(self) -> int:
        return SENSOR_KINDS[self.kind][0]


class SensorsMixin:
    """Model.add_sensor and model.sensors."""

    def add_sensor(self, kind: str, target: str, name: str | None = None, *, zone=None, cutoff: float = 0.0) -> int:
        """Add a sensor of ``kind`` (jointpos, jointvel, framepos, framequat, framexaxis, frameyaxis,
        framezaxis, framelinvel, frameangvel, framelinacc, frameangacc, gyro, velocimeter,
        accelerometer, touch, force, torque, subtreecom, subtreelinvel, subtreeangmom:
        treedyn.model.sensors) on ``target`` (a hinge's or slide's name for jointpos/jointvel, a body's
        for the subtree kinds, else a body's or a frame's name); ``zone`` (touch only, required):
        the shape about the frame whose contacts it feels; ``cutoff`` (>= 0; 0: none) clamps its
        reading. Returns its index in ``model.sensors``; its values are treedyn.sensor_data's. A sensor
        is no part of the dynamics: the model's solvers and engines are not remade."""
        from .shapes import Box, Capsule, Cylinder, Ellipsoid, Sphere

        kind = C.choice(kind, "sensor kind", SENSOR_KINDS)
        if not isinstance(target, str):
            raise TypeError(f"sensor target must be a joint, body or frame name, got {target!r}")
        if SENSOR_KINDS[kind][1] == "joint":
            b = self._joint_body(target)  # (UnknownNameError names the joints)
            if self.joint_kinds[b] not in ("revolute", "prismatic"):
                raise ValueError(f"{kind} sensor: joint {target!r} is {self.joint_kinds[b]}, not a hinge or slide")
        elif SENSOR_KINDS[kind][1] == "body":
            self.body_index(target)  # (UnknownNameError)
        elif target not in self._frames and target != "world":
            self.body_index(target)
        if (kind == "touch") != (zone is not None):
            raise ValueError("a touch sensor needs its zone (a shape about the frame); other kinds take none")
        if zone is not None and not isinstance(zone, (Sphere, Capsule, Box, Cylinder, Ellipsoid)):
            raise TypeError(f"touch zone must be a td.Sphere, Capsule, Box, Cylinder or Ellipsoid, got {zone!r}")
        cutoff = C.real(cutoff, "sensor cutoff", nonnegative=True)
        sensors = self.__dict__.setdefault("_sensors", [])
        name = f"sensor{len(sensors)}" if name is None else name
        if not isinstance(name, str) or not name or any(s.name == name for s in sensors):
            raise ValueError(f"sensor name must be a new non-empty string, got {name!r}")
        sensors.append(Sensor(name, kind, target, zone, cutoff))
        return len(sensors) - 1

    @property
    def sensors(self) -> tuple:
        """The model's sensors (treedyn.model.sensors.Sensor), in the order of sensordata."""
        return tuple(self.__dict__.get("_sensors", ()))
