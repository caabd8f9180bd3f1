"""featherstone-part3's symbolic simplification: ABA written out as C++ for one model, compiled
with the system compiler into a cached library and loaded by the "aba" solver
(``td.make_solver("aba", model, specialise=True)``).

The generator (cpp/src/codegen_aba.cpp) runs the generic kernel once on traced scalars: every
model parameter is a constant, so a zero, a ±1, a π/2 rotation or an axis-aligned joint costs
nothing, and only the operations on (q, q̇, τ) remain, as straight-line code. The same statements
run on one robot or on several at once, one per lane of a vector register (AVX-512, AVX2 or SSE2,
whichever the compiler targets on this CPU), so that a robot's result does not depend on its
batch. Calls with ``f_ext`` and calls the generated code flags (a pivot that is not positive, a
result that is not finite) run the generic kernel.

Compiling takes about a second for a 7-joint arm and a few seconds for 100 joints, under a
timeout (``$TREEDYN_CODEGEN_TIMEOUT``, 300 s) and for a source of at most
``$TREEDYN_CODEGEN_MAX_MB`` (16 MB, about 300 bodies of a random tree). The library is cached in
``$TREEDYN_CACHE`` (default ``~/.cache/treedyn``)/kernels and loaded only after its bytes are
checked to be this user's build of exactly this source, compiler and CPU (codegen_cache.py).
Whatever fails — no compiler (``$CXX``, else ``c++``), a compiler that fails, hangs or writes no
library, an unusable or untrusted cache — the solver warns (CodegenWarning) and runs its generic
kernel.
"""

from __future__ import annotations

import contextlib
import functools
import os
import platform
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np

from .. import _core
from .._core import SingularInertiaError
from .._version import __version__
from . import codegen_cache as cache

__all__ = ["aba_source", "compiled_aba", "op_counts", "CodegenWarning"]

#: the compiler's options: no contraction into FMA (the scalar and the lane code must round
#: alike, and like the generic kernel), no errno from sqrt; -O1: -O2 takes longer to compile
#: straight-line code and ran no faster here
FLAGS = ["-std=c++17", "-O1", "-ffp-contract=off", "-fno-math-errno", "-shared", "-fPIC"]
#: a compile that takes longer is ended (a 200-body random tree took 31 s here; docs/design.md)
DEFAULT_TIMEOUT_S = 300.0
#: a larger generated source is refused: about 3 s and 100 MB of compiler memory per MB here
#: (docs/design.md); 16 MB is a 300-body random tree, a minute to compile
DEFAULT_MAX_SOURCE_MB = 16.0
#: the first bytes of a shared library, per platform (ELF; Mach-O 64-bit and universal)
_LIBRARY_MAGIC = {"linux": (b"\x7fELF",), "darwin": (b"\xcf\xfa\xed\xfe", b"\xca\xfe\xba\xbe")}
_MARKER_PREFIX = b"treedyn-fingerprint:"


class CodegenWarning(UserWarning):
    """The generated kernel could not be built or loaded (the generic kernel runs instead), or a
    cached one was refused and built again."""


def aba_source(model, dtype=np.float64) -> tuple[str, dict]:
    """(C++ source, operation counts) of ABA specialised to ``model``. The counts are those of
    the emitted code: multiplications, additions, divisions, square roots, sines and cosines, and
    guards (the pivots' positivity checks)."""
    return _core._generate_aba_source(model.core, np.dtype(dtype) == np.float32)


def op_counts(model, dtype=np.float64) -> dict:
    """Operation counts of ABA on ``model``: ``generic`` (the counting scalar through the generic
    kernel) and ``specialised`` (the generated code), each {multiplications, additions,
    divisions}."""
    generic = _core._generic_aba_op_counts(model.core)
    specialised = aba_source(model, dtype)[1]
    keys = ("multiplications", "additions", "divisions")
    return {"generic": {k: generic[k] for k in keys}, "specialised": {k: specialised[k] for k in keys}}


class _Failure(Exception):
    """Why no kernel is built (said in the CodegenWarning)."""


def compiler() -> str | None:
    """The C++ compiler to use: ``$CXX`` when set (None if it is not found), else c++ / g++ /
    clang++ on the PATH; None without one."""
    try:
        return " ".join(_compiler_command())
    except _Failure:
        return None


def _compiler_command() -> list[str]:
    cxx = os.environ.get("CXX", "").strip()
    if cxx:  # the user's choice: a missing one is said, not replaced by another compiler
        try:
            argv = shlex.split(cxx)
        except ValueError as e:
            raise _Failure(f"$CXX={cxx!r} cannot be parsed ({e})") from None
        if not argv or not shutil.which(argv[0]):
            raise _Failure(f"the compiler $CXX={cxx!r} is not found")
        return argv
    for name in ("c++", "g++", "clang++"):
        if shutil.which(name):
            return [name]
    raise _Failure("no C++ compiler found (set CXX)")


def _env_number(name: str, default: float) -> float:
    """A positive number of the environment variable ``name`` (plain ASCII decimal), else
    ``default``; ValueError naming the variable."""
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    if not re.fullmatch(r"(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?", text, re.ASCII) or not 0 < float(text) < 1e9:
        raise ValueError(f"${name} must be a positive number, got {text!r}")
    return float(text)


def compile_timeout() -> float:
    """Seconds a compile may take: ``$TREEDYN_CODEGEN_TIMEOUT``, by default 300."""
    return _env_number("TREEDYN_CODEGEN_TIMEOUT", DEFAULT_TIMEOUT_S)


def source_budget() -> float:
    """The largest generated source compiled, in MB: ``$TREEDYN_CODEGEN_MAX_MB``, by default 16."""
    return _env_number("TREEDYN_CODEGEN_MAX_MB", DEFAULT_MAX_SOURCE_MB)


def _run(argv: list[str], timeout: float) -> tuple[int, str]:
    """(exit status, output) of ``argv``; _Failure when it cannot start or outlives ``timeout``.
    It runs in a session of its own, so that a timeout ends it and whatever it started."""
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    except OSError as e:
        raise _Failure(f"{argv[0]} cannot be run ({e.strerror or e})") from None
    try:
        out, _ = proc.communicate(timeout=timeout)
    except BaseException as e:  # the timeout, or an interrupt: leave nothing running
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.communicate(timeout=5)
        if isinstance(e, subprocess.TimeoutExpired):
            raise _Failure(
                f"{argv[0]} did not finish in {timeout:g} s (set $TREEDYN_CODEGEN_TIMEOUT for more)"
            ) from None
        raise
    return proc.returncode, out.decode(errors="replace")


@functools.cache
def _compiler_identity(argv: tuple[str, ...], where: str, stamp: tuple, timeout: float) -> str:
    """``$CXX --version``'s output (``stamp``: the executable's size and time, so that a compiler
    replaced in place is asked again)."""
    status, out = _run([*argv, "--version"], timeout)
    if status != 0:
        raise _Failure(f"{' '.join(argv)} --version failed (exit status {status})")
    return out


def _identity(argv: list[str], timeout: float) -> tuple[str, str]:
    """(the compiler's resolved path, its --version output)."""
    where = os.path.realpath(shutil.which(argv[0]) or argv[0])
    try:
        st = os.stat(where)
        stamp = (st.st_size, st.st_mtime_ns, st.st_ino)
    except OSError:
        stamp = ()
    return where, _compiler_identity(tuple(argv), where, stamp, timeout)


@functools.cache
def _cpu_identity() -> str:
    """What decides the instructions -march=native picks (the library must not run elsewhere)."""
    try:
        with open("/proc/cpuinfo") as f:
            lines = [ln for ln in f if ln.startswith(("flags", "model name", "Features", "CPU part"))]
        return "".join(sorted(set(lines)))
    except OSError:
        return platform.machine() + platform.processor()


def compiled_aba(model, dtype=np.float64) -> str | None:
    """The path of the library of ABA specialised to ``model``, built on first use, then taken
    from the cache after checking it was built by this user's treedyn for exactly this model,
    generator and compiler (treedyn.solvers.codegen_cache); None with a CodegenWarning when no
    trusted library can be had."""
    try:
        return str(_library(model, dtype))
    except _Failure as e:
        _warn(f"{e}; the 'aba' solver runs its generic kernel")
        return None


def refused_library(library: str, model, dtype, error: Exception, rebuild: bool) -> str | None:
    """The loader refused ``library`` (a library we built, whose entry points do not fit): it is
    removed; then built again (``rebuild``) or None with a CodegenWarning."""
    try:
        cache.discard(Path(library))
        if rebuild:
            return str(_library(model, dtype, rebuild_reason=f"the loader refused it: {error}"))
        raise _Failure(f"the generated kernel {library} was refused by the loader ({error})")
    except (_Failure, cache.CacheError) as e:
        _warn(f"{e}; the 'aba' solver runs its generic kernel")
        return None


def _warn(message: str) -> None:
    # compiled_aba / refused_library <- ABASolver.__init__ <- the caller
    warnings.warn(f"treedyn: {message}", CodegenWarning, stacklevel=4)


def _library(model, dtype, rebuild_reason: str | None = None) -> Path:
    """The checked library's path; _Failure saying why there is none."""
    argv = _compiler_command()
    try:
        source, _ = aba_source(model, dtype)
    except SingularInertiaError as e:  # the trace met a zero pivot at the neutral configuration
        raise _Failure(f"the model is singular at its neutral configuration ({e})") from None
    _check_budget(model, source)
    timeout = compile_timeout()
    flags = FLAGS + ([] if os.environ.get("TREEDYN_PORTABLE_CODEGEN") else ["-march=native"])
    where, identity = _identity(argv, timeout)
    fp = cache.fingerprint(
        __version__,
        str(_core.ABI_VERSION),
        np.dtype(dtype).name,
        source,
        where,
        *argv,
        identity,
        *flags,
        _cpu_identity(),
        sys.platform,
        platform.machine(),
    )
    marker = _MARKER_PREFIX + fp.hex().encode()
    try:
        folder = cache.open_folder()
        secret = cache.key(folder)
        path = folder / f"aba-{np.dtype(dtype).name}-{fp.hex()[:32]}.so"
        reason = rebuild_reason or cache.check(path, fp, secret, marker)
        if reason is None:
            return path
        if reason != "missing":
            cache.discard(path)
        try:
            body = _compile(argv, flags, source + _marker_line(marker), folder, marker, timeout)
        except _Failure as e:
            if reason == "missing":
                raise
            raise _Failure(f"the cached kernel {path} was refused ({reason}), and rebuilding it failed: {e}") from None
        cache.store(path, body, fp, secret)
        again = cache.check(path, fp, secret, marker)
        if again is not None:
            raise _Failure(f"the kernel just stored at {path} does not check ({again})")
    except cache.CacheError as e:
        raise _Failure(str(e)) from None
    if reason != "missing":
        _warn(f"the cached kernel {path} was refused ({reason}) and built again")
    return path


def _check_budget(model, source: str) -> None:
    size, budget = len(source) / 1e6, source_budget()
    if size > budget:
        raise _Failure(
            f"the generated source of this model ({model.n_bodies} bodies, nv = {model.nv}) is {size:.3g} MB, "
            f"over the budget of {budget:g} MB ($TREEDYN_CODEGEN_MAX_MB; about 3 s and 100 MB of compiler memory "
            "per MB, docs/design.md)"
        )


def _marker_line(marker: bytes) -> str:
    """The fingerprint, as a string the library keeps: a compiler's output without it is not
    the library of this source."""
    return (
        '\nextern "C" __attribute__((visibility("default"), used)) const char treedyn_generated_fingerprint[] = "'
        + marker.decode()
        + '";\n'
    )


def _compile(argv, flags, source, folder: Path, marker: bytes, timeout: float) -> bytes:
    """The library's bytes, compiled in a private folder in the cache (removed after);
    _Failure when the compiler fails, outlives the timeout, or writes no library of this source."""
    name = " ".join(argv)
    with tempfile.TemporaryDirectory(dir=folder, prefix=".build-", ignore_cleanup_errors=True) as tmp:
        src, lib = Path(tmp) / "aba.cpp", Path(tmp) / "aba.so"
        src.write_text(source)
        status, out = _run([*argv, *flags, "-o", str(lib), str(src)], timeout)
        if status != 0 and "-march=native" in flags:  # a compiler without -march=native
            status, out = _run([*argv, *FLAGS, "-o", str(lib), str(src)], timeout)
        if status != 0:
            tail = "\n".join(out.strip().splitlines()[-5:])
            raise _Failure(f"compiling the generated ABA kernel with {name} failed:\n{tail}")
        body = _read_output(lib, name)
    if not body.startswith(_LIBRARY_MAGIC.get(sys.platform, (b"",))) or marker not in body:
        raise _Failure(f"{name} exited 0 but wrote a file that is not the library of the generated source")
    return body


def _read_output(lib: Path, name: str) -> bytes:
    """The compiler's output file, if it is a regular file (a FIFO or a link is none)."""
    try:
        _, body = cache.read_regular(lib, cache.MAX_LIBRARY_BYTES)
    except OSError:
        body = None
    if body is None:
        raise _Failure(f"{name} exited 0 but wrote no library")
    return body
