"""The asv suite's smoke run's selection: one parameter combination of every benchmark.

Prints one `asv run --bench` regex per benchmark of asv_benchmarks/ (its name and, when it has
parameters, its first combination, in asv's "name(param, ...)" form), one per line. `asv run --quick`
over every combination (about 800 calls, each with its setup in a fresh process) took 15 min on 2
cores; one combination each runs every benchmark's setup and body once, which is what a smoke run
checks (the suite still imports and runs against this build). .ci/asv times a subset on HEAD and its
parent; a full run is `asv run --python=same` (docs/benchmarks.md).

    python .ci/asv_smoke.py            # from the repository's root, with treedyn importable
"""

import importlib
import inspect
import itertools
import pathlib
import re
import sys

PREFIXES = ("time_", "timeraw_", "track_", "mem_", "peakmem_")


def combinations(params):
    """asv's parameter grid: a list of lists (several parameters) or one list (a single parameter)."""
    if not params:
        return [()]
    if all(isinstance(p, (list, tuple)) for p in params):
        return list(itertools.product(*params))
    return [(p,) for p in params]


def benchmarks(root):
    """(name, params) of every benchmark: module-level functions and methods of classes (inherited
    ones too), named as asv names them (module.Class.method, the module relative to the suite)."""
    sys.path.insert(0, str(root))
    for path in sorted((root / "asv_benchmarks").glob("*.py")):
        if path.stem.startswith("_"):
            continue
        module = importlib.import_module(f"asv_benchmarks.{path.stem}")
        for attr, obj in sorted(vars(module).items()):
            if inspect.isfunction(obj) and attr.startswith(PREFIXES) and obj.__module__ == module.__name__:
                yield f"{path.stem}.{attr}", getattr(obj, "params", [])
            elif inspect.isclass(obj) and obj.__module__ == module.__name__:
                for method in sorted(dir(obj)):
                    if method.startswith(PREFIXES) and callable(getattr(obj, method)):
                        yield f"{path.stem}.{attr}.{method}", getattr(obj, "params", [])


def main():
    root = pathlib.Path(__file__).resolve().parent.parent
    count = 0
    for name, params in benchmarks(root):
        first = combinations(params)[0]
        label = f"{name}({', '.join(repr(p) for p in first)})" if params else name
        print("^" + re.escape(label) + "$")
        count += 1
    if count == 0:
        sys.exit("asv_smoke: no benchmark found in asv_benchmarks/")


if __name__ == "__main__":
    main()
