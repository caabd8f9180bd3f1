"""python -m benchmarks <script> [options]; python -m benchmarks --list (from the repository's root)"""

import importlib
import os
import sys

from . import SCRIPTS


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help", "--list"):
        print(__doc__.strip())
        print("scripts:")
        width = max(map(len, SCRIPTS))
        for name in sorted(SCRIPTS):
            print(f"  {name:<{width}}  {_summary(SCRIPTS[name])}")
        return 0
    name = argv.pop(0)
    if name not in SCRIPTS:
        print(f"unknown bench script {name!r}; scripts: {', '.join(sorted(SCRIPTS))}", file=sys.stderr)
        return 2
    return importlib.import_module(SCRIPTS[name]).main(argv)


def _summary(module: str) -> str:
    """A script's docstring's first line, read from its file (importing every script would load its
    dependencies: MuJoCo, JAX, Dask)."""
    import ast

    path = os.path.join(os.path.dirname(__file__), module.rsplit(".", 1)[-1] + ".py")
    try:
        with open(path, encoding="utf-8") as f:
            doc = ast.get_docstring(ast.parse(f.read())) or ""
    except OSError:
        return ""
    return doc.strip().splitlines()[0] if doc.strip() else ""


if __name__ == "__main__":
    # numpy's BLAS threads, once woken, spin and take a core from the kernels being timed on a small
    # machine: the timed code never calls BLAS, so run with one BLAS thread (set before numpy loads)
    if os.environ.get("OPENBLAS_NUM_THREADS") is None and os.environ.get("TREEDYN_BENCH_REEXEC") is None:
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1", TREEDYN_BENCH_REEXEC="1")
        os.execve(sys.executable, [sys.executable, "-m", "benchmarks", *sys.argv[1:]], env)
    sys.exit(main())
