"""The package's import graph flows one way: no module imports, at any depth and from any
function, a module that imports it back (loaders above the model, CLI and scenes above the
solvers above the model above the core)."""

import ast
import pathlib

import treedyn

ROOT = pathlib.Path(treedyn.__file__).parent


def _module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _graph() -> dict:
    modules = {_module_name(p): p for p in ROOT.rglob("*.py")}
    compiled = {f"treedyn.{p.name.split('.')[0]}" for p in ROOT.glob("*.so")} | {"treedyn._core"}
    known = set(modules) | compiled
    graph = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")
                    anchor = anchor[: len(anchor) - (node.level - 1)]
                    base = ".".join(anchor + ([base] if base else []))
                # "from X import y": the module X.y when y is one, else X itself
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
            else:
                continue
            edges |= {t for t in targets if t in modules and t != name}
        graph[name] = edges
    return graph


def _cycles(graph: dict) -> list:
    """The strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return out


def test_the_graph_is_read():
    g = _graph()
    assert "treedyn.io.urdf" in g and "treedyn.model" in g["treedyn.io.urdf"]
    assert "treedyn.scenes.scene" in g["treedyn.scenes.redmax"]


def test_no_import_cycles():
    assert _cycles(_graph()) == []


def test_the_model_imports_no_loader_scene_or_solver():
    g = _graph()
    assert not {m for m in g["treedyn.model"] if m.startswith(("treedyn.io", "treedyn.scenes", "treedyn.solvers"))}
    assert "treedyn.algorithms.configuration" not in g["treedyn.model"]


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


#: the layers, lowest first (docs/architecture.md): a module may import its own layer and those before
#: it, never one after it; the package's root modules (``treedyn``, the public aliases, ``testing``,
#: ``sdk``, ``__main__``) come last
LAYERS = (
    ("treedyn._core", "treedyn._checks", "treedyn._version", "treedyn.util"),
    ("treedyn.model",),
    ("treedyn.algorithms",),
    ("treedyn.solvers", "treedyn.xla"),
    ("treedyn.sim",),
    ("treedyn.io",),
    ("treedyn.scenes",),
    ("treedyn.tools", "treedyn.interop"),
)


def _layer(module: str) -> int:
    for rank, prefixes in enumerate(LAYERS):
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return rank
    return len(LAYERS)  # the package's root


def _upward(graph: dict) -> list:
    return sorted((a, b) for a, edges in graph.items() for b in edges if _layer(b) > _layer(a))


def test_every_module_has_a_layer():
    roots = {m for m in _graph() if _layer(m) == len(LAYERS)}
    assert all(m.count(".") <= 1 for m in roots), sorted(m for m in roots if m.count(".") > 1)


def test_no_import_runs_up_a_layer():
    assert _upward(_graph()) == []


def test_the_layer_check_finds_an_upward_import():
    graph = {"treedyn.model.tree": {"treedyn.sim.contact"}, "treedyn.sim.contact": {"treedyn.model.tree"}}
    assert _upward(graph) == [("treedyn.model.tree", "treedyn.sim.contact")]


ALIASES = {
    "codegen": "treedyn.solvers.codegen",
    "constraints": "treedyn.sim.constraints",
    "linalg": "treedyn.algorithms.linalg",
    "distributed": "treedyn.tools.distributed",
    "envs": "treedyn.tools.envs",
    "peers": "treedyn.tools.peers",
    "plot": "treedyn.tools.plot",
}


def test_the_documented_modules_are_the_moved_ones():
    """``import treedyn.codegen`` and the other documented modules keep working, and are the same module
    objects as their homes in the layers (so a monkeypatch or a private name reaches the real one)."""
    import importlib

    for alias, home in ALIASES.items():
        assert importlib.import_module(f"treedyn.{alias}") is importlib.import_module(home), alias


def test_no_module_above_600_lines():
    """A module holds one job: past 600 lines it is doing several (docs/architecture.md)."""
    long = {
        p.relative_to(ROOT).as_posix(): n
        for p in ROOT.rglob("*.py")
        if (n := len(p.read_text("utf-8").splitlines())) > 600
    }
    assert long == {}
