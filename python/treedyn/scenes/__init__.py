"""Ready-made models: serial chains and random trees (the RedMax scenes come with that issue)."""
from .chain import chain
from .random_tree import random_tree
from .spec import from_spec

__all__ = ["chain", "random_tree", "from_spec"]
