"""The model layer: value types (spatial ``Transform`` and ``Inertia``, joints, shapes) and the
``Model`` — the tree, its names, frames, geoms and limits, its force elements and constraints —
copied into C++ once. Imports nothing above ``treedyn._core`` and ``treedyn._checks``."""

from .shapes import Box, Capsule, ConvexMesh, Cylinder, Ellipsoid, Geom, MeshFile, Plane, Sphere, TriangleMesh, Visual
from .tree import (
    Fixed,
    Free,
    Inertia,
    Joint,
    Model,
    Prismatic,
    Revolute,
    Spherical,
    Transform,
    Universal,
    UnknownNameError,
)

__all__ = [
    "Transform",
    "Inertia",
    "Joint",
    "Revolute",
    "Prismatic",
    "Fixed",
    "Universal",
    "Spherical",
    "Free",
    "Sphere",
    "Capsule",
    "Box",
    "Plane",
    "Cylinder",
    "Ellipsoid",
    "ConvexMesh",
    "TriangleMesh",
    "MeshFile",
    "Visual",
    "Geom",
    "Model",
    "UnknownNameError",
]
