"""Ready-made models: serial chains and random trees (plain Models), and the RedMax scenes of
baxter2019 §4 (bridge, bridge_rigid, umbrella, tree: Scenes with a model, an initial state, h and
a duration; see docs/scenes.md). One file per scene; ``spec.SCENES`` names them for the command
line and ``from_spec``."""

from .bridge import bridge
from .bridge_rigid import bridge_rigid
from .centipede import CentipedeGait, centipede
from .chain import chain
from .random_tree import random_tree
from .redmax import BRIDGE_PARAMS
from .scene import Scene
from .spec import SCENES, SPEC_KINDS, from_spec, scene_from_spec
from .tree import tree
from .umbrella import umbrella

__all__ = [
    "chain",
    "centipede",
    "CentipedeGait",
    "random_tree",
    "from_spec",
    "Scene",
    "scene_from_spec",
    "SPEC_KINDS",
    "SCENES",
    "bridge",
    "BRIDGE_PARAMS",
    "bridge_rigid",
    "umbrella",
    "tree",
]
