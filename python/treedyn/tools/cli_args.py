"""The command line's arguments checked before a command runs (treedyn.tools.cli): a mistake is one
line, ``treedyn: error: ...``, with exit code 2, before any work is done."""

from __future__ import annotations

import os

__all__ = ["check_args"]


def check_args(args) -> None:
    """What can be checked before a run: the output files' folders exist (an .npz name gets its
    suffix here, as numpy would add it, so that the name printed is the file written), the viewer's
    port and host."""
    import socket

    if getattr(args, "out", None) and not str(args.out).endswith(".npz"):
        args.out = f"{args.out}.npz"
    for key in ("out", "plot", "html", "png", "animate"):
        path = getattr(args, key, None)
        if path and not os.path.isdir(os.path.dirname(os.path.abspath(path))):
            raise ValueError(f"--{key} {path}: the folder {os.path.dirname(os.path.abspath(path))} does not exist")
    port = getattr(args, "port", None)
    if port is not None and not 0 <= port <= 65535:
        raise ValueError(f"--port must be in 0..65535, got {port}")
    host = getattr(args, "host", None)
    if host:
        try:
            socket.getaddrinfo(host, None)
        except (OSError, UnicodeError) as e:
            raise ValueError(f"--host {host!r}: not an address of this machine's network ({e})") from None


def readable_build_info() -> dict:
    """td.build_info() for ``treedyn info``: an Eigen found in pip's temporary build environment (gone
    once the wheel was built: its random part is *) is said to be that, not shown as a path."""
    import re

    from .._core import build_info

    info = dict(build_info())
    where = str(info.get("eigen_dir", ""))
    if re.search(r"(pip-build-env-|build-env-|builds-v[0-9]+/\.tmp)\*", where):
        package = "cmeel-eigen" if "cmeel" in where else "Eigen"
        info["eigen_dir"] = f"{package} in pip's temporary build environment (removed after the build): {where}"
    return info
