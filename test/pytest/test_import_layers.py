"""The lamina package imports in layers: the module-level imports of its
modules form no cycle, and walls stand between the layers:

* a lowering (`lamina.lowering.*`) imports no pass (`lamina.passes.*`)
  and a pass no lowering, so that either can be used, tested and moved
  without the other; what both need lives below them (the dialects, the
  lowering registry, the target models);
* lowerings and passes import no target (`lamina.targets.*`) but the
  target models, which hold hardware facts and import nothing of Lamina
  above `lamina.types` (`lamina.targets.nvidia`): the targets build their
  pipelines out of passes, not the other way round.

For the cycle check, imports inside functions are not counted (they run
late, when every module is loaded); neither are those under `if
TYPE_CHECKING:`, nor the implicit import of a module's parent package.
The walls count every import of a module, in function bodies too.
"""

import ast
import os

import pytest

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
# Where each part of the package lives (pyproject.toml's package-dir).
PACKAGE_DIRS = {"lamina": "python/lamina", "lamina.dialects": "dialects",
                "lamina.passes": "passes", "lamina.lowering": "lowering",
                "lamina.tools": "tools"}


def lamina_modules() -> dict[str, str]:
    """Every module of the package by name, with its file."""
    modules = {}
    for package, directory in PACKAGE_DIRS.items():
        top = os.path.join(ROOT, directory)
        for folder, subfolders, files in os.walk(top):
            subfolders[:] = [d for d in subfolders
                             if os.path.exists(os.path.join(folder, d, "__init__.py"))]
            relative = os.path.relpath(folder, top)
            prefix = package if relative == "." else f"{package}.{relative.replace(os.sep, '.')}"
            for name in files:
                if not name.endswith(".py"):
                    continue
                stem = name[:-3]
                modules[prefix if stem == "__init__" else f"{prefix}.{stem}"] = \
                    os.path.join(folder, name)
    return modules


def _module_level_statements(body):
    """The statements that run when the module is imported: not function
    bodies, not `if TYPE_CHECKING:` blocks."""
    for statement in body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        if isinstance(statement, ast.If) and "TYPE_CHECKING" in ast.unparse(statement.test):
            yield from _module_level_statements(statement.orelse)
            continue
        yield statement
        for field in ("body", "orelse", "finalbody", "handlers"):
            inner = getattr(statement, field, None)
            if isinstance(inner, list):
                yield from _module_level_statements(inner)


def imports_of(name: str, path: str, modules: dict[str, str],
               everywhere: bool = False) -> set[str]:
    """The lamina modules that `name` imports at module level (also in
    function bodies and `if TYPE_CHECKING:` blocks: `everywhere`)."""
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    is_package = path.endswith("__init__.py")
    found = set()
    statements = ast.walk(tree) if everywhere else _module_level_statements(tree.body)
    for statement in statements:
        if isinstance(statement, ast.Import):
            targets = [alias.name for alias in statement.names]
        elif isinstance(statement, ast.ImportFrom):
            base = statement.module or ""
            if statement.level:
                parts = name.split(".")
                anchor = parts if is_package else parts[:-1]
                anchor = anchor[:len(anchor) - statement.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            # `from lamina import nn` imports the module lamina.nn.
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                       for alias in statement.names]
        else:
            continue
        found.update(t for t in targets if t in modules and t != name)
    return found


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A cycle of the graph as a list of nodes (first == last), or None."""
    state: dict[str, str] = {}
    stack: list[str] = []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for successor in sorted(graph.get(node, ())):
            if state.get(successor) == "open":
                return stack[stack.index(successor):] + [successor]
            if successor not in state:
                cycle = visit(successor)
                if cycle:
                    return cycle
        stack.pop()
        state[node] = "done"
        return None

    for node in sorted(graph):
        if node not in state:
            cycle = visit(node)
            if cycle:
                return cycle
    return None


def import_graph() -> dict[str, set[str]]:
    modules = lamina_modules()
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def test_module_level_imports_have_no_cycle():
    graph = import_graph()
    assert "lamina.pipeline" in graph and "lamina.passes.nn_canonicalize" in graph
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_runtime_imports_no_target():
    graph = import_graph()

    def reachable(start):
        seen, todo = set(), [start]
        while todo:
            for successor in graph[todo.pop()] - seen:
                seen.add(successor)
                todo.append(successor)
        return seen

    assert not {m for m in reachable("lamina.runtime") if m.startswith("lamina.targets")}


# The target models: hardware facts, importable from every layer.
TARGET_MODELS = {"lamina.targets.nvidia", "lamina.targets.cpu_model"}


def _layer(module: str) -> str | None:
    for layer in ("lamina.lowering", "lamina.passes", "lamina.targets"):
        if module == layer or module.startswith(layer + "."):
            return layer
    return None


def wall_violations() -> list[str]:
    """Every import, anywhere in a module, across the walls."""
    modules = lamina_modules()
    forbidden = {"lamina.lowering": {"lamina.passes", "lamina.targets"},
                 "lamina.passes": {"lamina.lowering", "lamina.targets"}}
    found = []
    for name, path in sorted(modules.items()):
        walls = forbidden.get(_layer(name), set())
        for imported in sorted(imports_of(name, path, modules, everywhere=True)):
            if _layer(imported) in walls and imported not in TARGET_MODELS:
                found.append(f"{name} imports {imported}")
    return found


def test_lowerings_passes_and_targets_keep_their_walls():
    assert wall_violations() == []


def test_target_models_import_nothing_above_types():
    modules = lamina_modules()
    for model in TARGET_MODELS:
        imported = imports_of(model, modules[model], modules, everywhere=True)
        assert imported <= {"lamina.types", "lamina.targets"}, (model, imported)


def test_the_walls_see_imports_in_function_bodies(tmp_path):
    source = tmp_path / "late.py"
    source.write_text("def f():\n    from lamina.passes import hw_check\n")
    modules = {"lamina.passes.hw_check": "", "lamina.lowering.late": str(source)}
    assert imports_of("lamina.lowering.late", str(source), modules) == set()
    assert imports_of("lamina.lowering.late", str(source), modules, everywhere=True) == {
        "lamina.passes.hw_check"}


@pytest.mark.parametrize("graph,cycle", [
    ({"a": {"b"}, "b": {"c"}, "c": set()}, None),
    ({"a": {"b"}, "b": {"c"}, "c": {"a"}}, ["a", "b", "c", "a"]),
    ({"a": {"b"}, "b": {"b"}}, ["b", "b"]),
])
def test_find_cycle(graph, cycle):
    assert find_cycle(graph) == cycle
