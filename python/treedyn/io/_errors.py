"""The loaders' error: a model file that cannot be loaded, named with the line."""

from __future__ import annotations

__all__ = ["ModelFileError"]


class ModelFileError(ValueError):
    """A model file that cannot be loaded: malformed XML, a structure treedyn cannot represent
    (a kinematic loop, a mimic joint), or a value that makes no sense. The message names the file
    (``source``) and, when known, the line."""

    def __init__(self, message: str, source: str = "", line: int | None = None):
        where = source + (f", line {line}" if line else "")
        super().__init__(f"{where}: {message}" if where else message)
        self.source = source
        self.line = line
