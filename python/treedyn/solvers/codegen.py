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

Compiling takes about a second for a 7-joint arm and a few seconds for 100 joints; the library
is cached in ``$TREEDYN_CACHE`` (default ``~/.cache/treedyn``)/kernels, keyed by the source, the
compiler and the CPU. Without a compiler (``$CXX``, else ``c++``) the solver warns once and runs
its generic kernel.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import subprocess
import tempfile
import warnings
from pathlib import Path

import numpy as np

from .. import _core
from .._core import SingularInertiaError

__all__ = ["aba_source", "compiled_aba", "op_counts", "CodegenWarning"]

#: the compiler's options: no contraction into FMA (the scalar and the lane code must round
#: alike, and like the generic kernel), no errno from sqrt; -O1: -O2 takes longer to compile
#: straight-line code and ran no faster here
FLAGS = ["-std=c++17", "-O1", "-ffp-contract=off", "-fno-math-errno", "-shared", "-fPIC"]


class CodegenWarning(UserWarning):
    """The generated kernel could not be built: the generic kernel runs instead."""


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


def cache_dir() -> Path:
    root = os.environ.get("TREEDYN_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "treedyn")
    return Path(root) / "kernels"


def compiler() -> str | None:
    """The C++ compiler to use: $CXX, else c++ / g++ / clang++ on the PATH; None without one."""
    for name in (os.environ.get("CXX"), "c++", "g++", "clang++"):
        if name and shutil.which(name.split()[0]):
            return name
    return None


@functools.cache
def _compiler_identity(cxx: str) -> str:
    out = subprocess.run([*cxx.split(), "--version"], capture_output=True, text=True, timeout=60)
    return out.stdout


@functools.cache
def _cpu_identity() -> str:
    """What decides the instructions -march=native picks (the library must not run elsewhere)."""
    try:
        with open("/proc/cpuinfo") as f:
            lines = [ln for ln in f if ln.startswith(("flags", "model name", "Features", "CPU part"))]
        return "".join(sorted(set(lines)))
    except OSError:
        import platform

        return platform.machine() + platform.processor()


def compiled_aba(model, dtype=np.float64) -> str | None:
    """The path of the library of ABA specialised to ``model`` (built on first use, then taken from
    the cache), or None with a CodegenWarning when it cannot be built."""
    cxx = compiler()
    if cxx is None:
        warnings.warn(
            "treedyn: no C++ compiler found (set CXX): the 'aba' solver runs its generic kernel",
            CodegenWarning,
            stacklevel=3,
        )
        return None
    try:
        source, _ = aba_source(model, dtype)
    except SingularInertiaError as e:  # the trace met a zero pivot at the neutral configuration
        warnings.warn(
            f"treedyn: the model is singular at its neutral configuration ({e}); the 'aba' solver runs its "
            "generic kernel",
            CodegenWarning,
            stacklevel=3,
        )
        return None
    native = [] if os.environ.get("TREEDYN_PORTABLE_CODEGEN") else ["-march=native"]
    flags = FLAGS + native
    key = hashlib.sha256("\n".join([source, cxx, _compiler_identity(cxx), *flags, _cpu_identity()]).encode())
    out = cache_dir() / f"aba-{np.dtype(dtype).name}-{key.hexdigest()[:20]}.so"
    if out.exists():
        return str(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out.parent) as tmp:
        src = Path(tmp) / "aba.cpp"
        src.write_text(source)
        lib = Path(tmp) / out.name
        try:
            done = subprocess.run([*cxx.split(), *flags, "-o", str(lib), str(src)], capture_output=True, text=True)
        except OSError as e:
            done = subprocess.CompletedProcess([], 1, "", str(e))
        if done.returncode != 0 and native:  # a compiler without -march=native
            done = subprocess.run([*cxx.split(), *FLAGS, "-o", str(lib), str(src)], capture_output=True, text=True)
        if done.returncode != 0:
            tail = "\n".join(done.stderr.strip().splitlines()[-5:])
            warnings.warn(
                f"treedyn: compiling the generated ABA kernel with {cxx} failed; the 'aba' solver runs its "
                f"generic kernel:\n{tail}",
                CodegenWarning,
                stacklevel=3,
            )
            return None
        os.replace(lib, out)  # atomic: concurrent builders of the same kernel all end with one file
    return str(out)
