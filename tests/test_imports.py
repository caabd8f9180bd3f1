"""No import cycles inside the treedyn package (module-level and function-level imports alike)."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "python" / "treedyn"


def _module_name(path: Path) -> str:
    parts = ("treedyn",) + path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, name: str, modules: set) -> set:
    """Every treedyn module `name` imports, wherever the import statement sits."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                base = ".".join(base + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            # `from . import x` may name a submodule
            targets = [base] + [f"{base}.{alias.name}" for alias in node.names]
        else:
            continue
        for target in targets:
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def import_graph() -> dict:
    paths = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    modules = set(paths)
    graph = {name: _imports(path, name, modules) for name, path in paths.items()}
    # importing a package's submodule runs the package first, which is not a dependency edge of
    # interest: a package's __init__ re-exporting its submodules is the only allowed back edge
    for name, deps in graph.items():
        graph[name] = {d for d in deps if not (name.startswith(d + ".") and paths[d].name == "__init__.py")}
    return graph


def find_cycle(graph: dict):
    WHITE, GREY, BLACK = 0, 1, 2
    colour = dict.fromkeys(graph, WHITE)
    stack = []

    def visit(node):
        colour[node] = GREY
        stack.append(node)
        for dep in sorted(graph[node]):
            if colour[dep] == GREY:
                return stack[stack.index(dep):] + [dep]
            if colour[dep] == WHITE:
                cycle = visit(dep)
                if cycle:
                    return cycle
        stack.pop()
        colour[node] = BLACK
        return None

    for node in sorted(graph):
        if colour[node] == WHITE:
            cycle = visit(node)
            if cycle:
                return cycle
    return None


def test_graph_sees_function_level_imports():
    graph = import_graph()
    assert "treedyn.model" in graph and graph["treedyn.configuration"]


def test_no_import_cycles():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)
