"""Reading the files a model names — the model file, its ``<include>``s, its meshes — so that no
file can starve or stall a load (``from_mjcf("/dev/zero")`` once read until the OOM killer
came, a FIFO hung both loaders, an include fan-out grew as 2^depth).

* Only regular files: the path is ``stat``-ed first, then opened with ``O_NONBLOCK`` (so that a
  FIFO swapped in after the stat cannot block the open) and ``fstat``-ed again before anything is
  read. A FIFO, a device (``/dev/zero``), a socket is refused by name (ModelFileError); a directory
  is an IsADirectoryError, a missing file a FileNotFoundError, as before.
* At most what is left of the load's budget is read (that + 1 bytes, to tell "too large"), in
  chunks sized by the file's length, never by the cap.
* One ``Budget`` per load counts what it reads. The limits, read from the environment when a load
  starts (the same way ``TREEDYN_CACHE`` is), with their defaults:

  ==========================  =======  ===================================================
  ``TREEDYN_MAX_XML_BYTES``   256 MiB  the XML one load reads: the model file and its
                                       ``<include>``s together
  ``TREEDYN_MAX_INCLUDES``    1000     the ``<include>``s one load expands
  ``TREEDYN_MAX_MESH_BYTES``  1 GiB    the mesh files one load reads, together
  ==========================  =======  ===================================================

  Why these: the largest model files in use are a few MB (a 50 000-body URDF chain is 18 MB) and
  their meshes tens of MB (dm_control's dog: 162 STL bones, 30 MB), so the defaults stay far above
  real models while bounding memory (ElementTree holds ~10-20 bytes per byte of XML) and time. An
  include fan-out (each file including the next twice) reaches 1000 includes at depth 10.
"""

from __future__ import annotations

import os
import stat

from ._errors import ModelFileError

__all__ = ["Budget", "limit", "LIMITS", "regular_file_problem"]

MiB = 1 << 20

#: name of the environment variable -> (default, what it bounds)
LIMITS = {
    "TREEDYN_MAX_XML_BYTES": (256 * MiB, "the XML one load reads (the model file and its includes together)"),
    "TREEDYN_MAX_INCLUDES": (1000, "the <include>s one load expands"),
    "TREEDYN_MAX_MESH_BYTES": (1024 * MiB, "the mesh files one load reads, together"),
}

_CHUNK = MiB  # once a file has given more than its stat size (a file growing, /proc), read on by this much


def limit(name: str) -> int:
    """The limit ``name`` (a key of LIMITS): its environment variable when set, else the default.
    ValueError for a value that is not a non-negative integer."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return LIMITS[name][0]
    if not (raw.isascii() and raw.isdigit()):
        raise ValueError(f"{name}={raw!r}: must be a non-negative integer ({LIMITS[name][1]})")
    return int(raw)


def _size(n: int) -> str:
    return f"{n / MiB:g} MiB" if n >= MiB else f"{n} bytes"


_KINDS = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _not_regular(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def regular_file_problem(path: str) -> str | None:
    """Why ``path`` cannot be read as a model's file ("not found", "a directory", "a FIFO ...");
    None for a regular file. Only stats the path: never opens it."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):  # missing, a NUL byte, a name too long, no permission on a folder
        return "not found"
    if stat.S_ISREG(mode):
        return None
    return "a directory" if stat.S_ISDIR(mode) else _not_regular(mode)


def _refusal(path: str, what: str, mode: int) -> Exception:
    if stat.S_ISDIR(mode):
        return IsADirectoryError(f"{what} path is a directory, not a file: {path!r}")
    return ModelFileError(
        f"the {what} is {_not_regular(mode)}, not a regular file: treedyn reads model files and "
        f"meshes only from regular files (a pipe or a device could block the load or never end)",
        path,
    )


def read_regular(path: str, what: str, cap: int, too_large) -> bytes:
    """The bytes of the regular file ``path``, at most ``cap`` of them; ``too_large(size)`` makes the
    exception for a longer file. ``what`` ("MJCF file", "mesh file") names it in errors."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise FileNotFoundError(f"{what} not found: {path!r}") from None
    except (OSError, ValueError) as e:
        raise ModelFileError(f"cannot read the {what}: {getattr(e, 'strerror', None) or e}", path) from None
    if not stat.S_ISREG(st.st_mode):
        raise _refusal(path, what, st.st_mode)
    if st.st_size > cap:
        raise too_large(st.st_size)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        raise ModelFileError(f"cannot read the {what}: {e.strerror or e}", path) from None
    try:
        st = os.fstat(fd)  # the file opened, which may not be the one stat-ed
        data = _read_at_most(fd, cap + 1, st.st_size) if stat.S_ISREG(st.st_mode) else None
    except OSError as e:
        raise ModelFileError(f"cannot read the {what}: {e.strerror or e}", path) from None
    finally:
        os.close(fd)
    if data is None:
        raise _refusal(path, what, st.st_mode)
    if len(data) > cap:
        raise too_large(len(data))
    return data


def _read_at_most(fd: int, limit: int, size: int) -> bytes:
    """Up to ``limit`` bytes of fd: the first read asks for the file's size + 1 (so that one read
    and one empty read end an ordinary file), then chunks."""
    chunks, total = [], 0
    n = min(limit, size + 1)
    while total < limit:
        chunk = os.read(fd, min(max(n, 1), limit - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
        n = _CHUNK
    return b"".join(chunks)


class Budget:
    """What one load may still read: XML bytes, includes, mesh bytes (the LIMITS, read from the
    environment when the Budget is made, i.e. when the load starts)."""

    def __init__(self):
        self.limits = {name: limit(name) for name in LIMITS}
        self.xml_bytes = self.limits["TREEDYN_MAX_XML_BYTES"]
        self.includes = self.limits["TREEDYN_MAX_INCLUDES"]
        self.mesh_bytes = self.limits["TREEDYN_MAX_MESH_BYTES"]
        self.included = 0

    def read_xml(self, path: str, what: str) -> bytes:
        """A model file or an included one, counted against TREEDYN_MAX_XML_BYTES."""
        data = read_regular(path, what, self.xml_bytes, lambda n: self._too_large(path, what, n, "XML"))
        self.xml_bytes -= len(data)
        return data

    def include(self, path: str, what: str) -> bytes:
        """An ``<include>``d file: counted against TREEDYN_MAX_INCLUDES, then read as XML."""
        if self.included >= self.includes:
            raise ModelFileError(
                f"more than {self.includes} <include>s expanded in one load (a fan-out of includes, "
                f"each file including others, grows as 2^depth): refused; set TREEDYN_MAX_INCLUDES "
                f"higher if the model really has that many",
                path,
            )
        self.included += 1
        return self.read_xml(path, what)

    def read_mesh(self, path: str, what: str = "mesh file") -> bytes:
        """A mesh file, counted against TREEDYN_MAX_MESH_BYTES."""
        data = read_regular(path, what, self.mesh_bytes, lambda n: self._too_large(path, what, n, "MESH"))
        self.mesh_bytes -= len(data)
        return data

    def _too_large(self, path: str, what: str, size: int, kind: str) -> ModelFileError:
        var = f"TREEDYN_MAX_{kind}_BYTES"
        left = self.xml_bytes if kind == "XML" else self.mesh_bytes
        return ModelFileError(
            f"the {what} is too large: {_size(size)} or more, where {_size(left)} are left of the "
            f"{_size(self.limits[var])} that {LIMITS[var][1]} may take; set {var} higher to load it",
            path,
        )
