"""treedyn: dynamics of highly articulated rigid-body trees.

The package in layers, each importing only from the ones before it (docs/architecture.md):
``_core``/``_checks``/``util`` → ``model`` → ``algorithms`` → ``solvers`` → ``sim`` → ``io``,
``scenes`` → ``tools``, ``interop``. This module only gathers the public names.
"""

from . import codegen, constraints, io, linalg, scenes, sdk
from ._core import AccuracyWarning, SingularInertiaError, StepData, build_info, get_num_threads, set_num_threads
from ._version import __version__  # noqa: F401 (treedyn.__version__)
from .algorithms.configuration import difference, integrate, interpolate, neutral, random_configuration
from .algorithms.coriolis import centroidal_momentum, centroidal_momentum_matrix, coriolis_matrix, gravity_forces
from .algorithms.derivatives import aba_derivatives, rnea_derivatives
from .algorithms.dynamics import bias_forces, forward_kinematics, mass_matrix, rnea
from .algorithms.inverse_kinematics import IKResult, inverse_kinematics
from .algorithms.keyframe import Keyframe
from .algorithms.kinematics import (
    center_of_mass,
    frame_bias_acceleration,
    frame_jacobian,
    frame_placement,
    kinetic_energy,
    potential_energy,
)
from .algorithms.layout import MujocoLayout, mujoco_layout
from .algorithms.state import State
from .io import ModelFileError, load_mjcf, load_urdf
from .model import (
    Box,
    Capsule,
    ConvexMesh,
    Cylinder,
    Ellipsoid,
    Fixed,
    Free,
    Inertia,
    Joint,
    MeshFile,
    Model,
    Plane,
    Prismatic,
    Revolute,
    Sphere,
    Spherical,
    Transform,
    TriangleMesh,
    Universal,
    UnknownNameError,
)
from .model.simplify import inertia_parameter_count, simplify
from .sdk import get_cmake_dir, get_include
from .sim import stepdata as _stepdata  # noqa: F401 (StepData.qpos, qvel, sensordata)
from .sim.collision import collide
from .sim.constraints import constrained_forward_dynamics
from .sim.contact import ContactSimulator, contact_jacobians
from .sim.contact_solvers import ContactSolver, available_contact_solvers
from .sim.engine import rollout
from .sim.sensors import sensor_data
from .sim.simulate import SimulationError, SimulationResult, SimulationWarning, simulate
from .sim.step_derivatives import step_derivatives
from .solvers import Solver, available_solvers, make_solver
from .solvers.inverse import contact_inertia, inverse_mass_matrix

__all__ = [
    "Model",
    "Transform",
    "Inertia",
    "Joint",
    "Revolute",
    "Prismatic",
    "Fixed",
    "Universal",
    "Spherical",
    "Free",
    "Solver",
    "available_solvers",
    "make_solver",
    "forward_kinematics",
    "Sphere",
    "Capsule",
    "Box",
    "Plane",
    "Cylinder",
    "Ellipsoid",
    "ConvexMesh",
    "TriangleMesh",
    "MeshFile",
    "collide",
    "ContactSimulator",
    "ContactSolver",
    "available_contact_solvers",
    "StepData",
    "rollout",
    "sensor_data",
    "inverse_kinematics",
    "IKResult",
    "gravity_forces",
    "coriolis_matrix",
    "centroidal_momentum",
    "centroidal_momentum_matrix",
    "mujoco_layout",
    "MujocoLayout",
    "contact_jacobians",
    "frame_placement",
    "frame_jacobian",
    "frame_bias_acceleration",
    "center_of_mass",
    "kinetic_energy",
    "potential_energy",
    "rnea",
    "bias_forces",
    "mass_matrix",
    "rnea_derivatives",
    "aba_derivatives",
    "step_derivatives",
    "inverse_mass_matrix",
    "contact_inertia",
    "integrate",
    "difference",
    "interpolate",
    "neutral",
    "random_configuration",
    "simulate",
    "simplify",
    "inertia_parameter_count",
    "constrained_forward_dynamics",
    "codegen",
    "constraints",
    "SimulationResult",
    "SimulationWarning",
    "SimulationError",
    "State",
    "Keyframe",
    "set_num_threads",
    "get_num_threads",
    "build_info",
    "SingularInertiaError",
    "UnknownNameError",
    "AccuracyWarning",
    "scenes",
    "linalg",
    "io",
    "load_urdf",
    "load_mjcf",
    "ModelFileError",
    "sdk",
    "get_include",
    "get_cmake_dir",
    "view",
]


def __getattr__(name: str):
    # td.view, imported on first use: the viewer (and viser, treedyn[viewer]) costs nothing until then
    if name == "view":
        from .tools.viewer import view

        return view
    raise AttributeError(f"module 'treedyn' has no attribute {name!r}")
