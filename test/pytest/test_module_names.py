"""No module of the package defines a top-level function or class twice:
the second definition silently replaces the first for every caller in
the module (an importer's `_clamped(e, x, low, high)` once gave way to a
quantisation helper of the same name, and hardtanh, relu6 and clamp then
failed to import)."""

import ast
import collections

from test_import_layers import lamina_modules


def redefinitions(source: str) -> list[str]:
    """Each top-level function or class name defined more than once, with
    the lines of its definitions."""
    lines = collections.defaultdict(list)
    for statement in ast.parse(source).body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            lines[statement.name].append(statement.lineno)
    return [f"{name} at lines {', '.join(map(str, found))}"
            for name, found in lines.items() if len(found) > 1]


def test_no_module_defines_a_name_twice():
    modules = lamina_modules()
    assert "lamina.importers.torch_import" in modules
    found = []
    for name, path in sorted(modules.items()):
        with open(path) as f:
            found += [f"{name}: {r}" for r in redefinitions(f.read())]
    assert found == []


def test_redefinitions_are_found():
    source = "def f(x):\n    return x\n\n\nclass C:\n    pass\n\n\ndef f(x, y):\n    return y\n"
    assert redefinitions(source) == ["f at lines 1, 9"]
