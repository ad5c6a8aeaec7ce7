"""lamina.plugins: loading a plugin file once, located errors, entry points."""

from __future__ import annotations

import importlib.metadata
import sys
import textwrap

import pytest

from lamina import pass_registry, plugins
from lamina.diagnostics import CompileError, UsageError

PASS_PLUGIN = '''\
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from lamina.pass_registry import Pass, register_pass

with open({log!r}, "a") as log:
    log.write("ran\\n")


@register_pass
@dataclass
class PluginPass(Pass):
    """A pass from a plugin."""

    argument: ClassVar[str] = "test-plugin-pass"
    depth: int = 2

    def run(self, op):
        pass
'''


@pytest.fixture(autouse=True)
def isolated_registries(monkeypatch):
    """Plugins loaded by a test leave no pass, module or loaded path behind."""
    pass_registry.all_passes()  # Lamina's own passes register once, outside the copy
    monkeypatch.setattr(pass_registry, "REGISTRY", dict(pass_registry.REGISTRY))
    monkeypatch.setattr(plugins, "_LOADED", {})
    monkeypatch.setattr(plugins, "_installed_loaded", False)
    yield
    for name in [n for n in sys.modules if n.startswith(("lamina_plugin_", "lamina_test_ep_"))]:
        del sys.modules[name]


def write(path, text):
    path.write_text(textwrap.dedent(text))
    return path


def test_a_plugin_registers_its_pass_as_a_module_of_its_own(tmp_path):
    log = tmp_path / "runs.log"
    path = write(tmp_path / "my-passes.py", PASS_PLUGIN.format(log=str(log)))
    module = plugins.load_plugin(path)
    assert module.__name__ == "lamina_plugin_my_passes"
    assert sys.modules[module.__name__] is module
    cls = pass_registry.all_passes()["test-plugin-pass"]
    assert cls.__module__ == "lamina_plugin_my_passes"
    assert cls.from_options("depth=3").depth == 3
    assert log.read_text() == "ran\n"


def test_loading_the_same_file_twice_runs_it_once(tmp_path, monkeypatch):
    log = tmp_path / "runs.log"
    path = write(tmp_path / "passes.py", PASS_PLUGIN.format(log=str(log)))
    first = plugins.load_plugin(str(path))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "link.py").symlink_to(path)
    assert plugins.load_plugin("passes.py") is first
    assert plugins.load_plugin("./link.py") is first
    assert log.read_text() == "ran\n"


def test_files_with_the_same_name_are_different_modules(tmp_path):
    for who in ("a", "b"):
        (tmp_path / who).mkdir()
        write(tmp_path / who / "ops.py", f"WHO = {who!r}\n")
    module_a = plugins.load_plugin(tmp_path / "a" / "ops.py")
    module_b = plugins.load_plugin(tmp_path / "b" / "ops.py")
    assert (module_a.WHO, module_b.WHO) == ("a", "b")
    assert module_a.__name__ != module_b.__name__


def error_of(path) -> str:
    with pytest.raises(CompileError) as caught:
        plugins.load_plugin(path)
    assert len(caught.value.diagnostics) == 1
    return caught.value.diagnostics[0].format()


def test_an_exception_is_located_at_the_deepest_line_of_the_plugin(tmp_path):
    path = write(tmp_path / "broken.py", """\
        import json


        def register():
            json.loads("{")


        register()
        """)
    assert error_of(str(path)) == (
        f"{path}:5: error: plugin '{path}' failed: JSONDecodeError: Expecting property name "
        "enclosed in double quotes: line 1 column 2 (char 1)")


def test_a_syntax_error_is_located_at_its_line(tmp_path):
    path = write(tmp_path / "syntax.py", "x = 1\n\ny = (\n")
    assert error_of(str(path)) == (
        f"{path}:3: error: plugin '{path}' failed: SyntaxError: '(' was never closed")


def test_a_registry_error_is_located_at_the_declaration(tmp_path):
    path = write(tmp_path / "bad_pass.py", """\
        from lamina.pass_registry import Pass, register_pass

        @register_pass
        class NoFlag(Pass):
            pass
        """)
    assert error_of(str(path)) == (
        f"{path}:3: error: plugin '{path}' failed: ValueError: NoFlag has no argument")


def test_a_failed_plugin_is_not_kept_and_can_be_loaded_again(tmp_path):
    path = write(tmp_path / "flaky.py", "raise SystemExit(3)\n")
    assert error_of(str(path)) == f"{path}:1: error: plugin '{path}' failed: SystemExit: 3"
    assert "lamina_plugin_flaky" not in sys.modules
    write(path, "OK = True\n")
    assert plugins.load_plugin(path).OK


def test_a_missing_file_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError, match="cannot open plugin file '.*nothing.py': No such file"):
        plugins.load_plugin(tmp_path / "nothing.py")


# ---------------------------------------------------------------------------
# Entry points of installed packages, faked: a module on sys.path and
# EntryPoint objects that name it.


@pytest.fixture
def installed(tmp_path, monkeypatch):
    """Makes `entry_points(group="lamina.plugins")` return the entry points
    given as {name: value}; modules are written to a directory on sys.path."""
    monkeypatch.syspath_prepend(str(tmp_path))
    calls = []

    def install(entries: dict[str, str], modules: dict[str, str]):
        for name, text in modules.items():
            write(tmp_path / f"{name}.py", text)
        found = [importlib.metadata.EntryPoint(name, value, plugins.ENTRY_POINT_GROUP)
                 for name, value in entries.items()]

        def entry_points(**selection):
            calls.append(selection)
            return found if selection == {"group": plugins.ENTRY_POINT_GROUP} else []

        monkeypatch.setattr(importlib.metadata, "entry_points", entry_points)
        return tmp_path

    install.calls = calls
    return install


def test_entry_points_name_modules_and_callables_and_load_once(installed):
    installed({"ops": "lamina_test_ep_ops", "passes": "lamina_test_ep_passes:register"},
              {"lamina_test_ep_ops": "LOADED = True\n",
               "lamina_test_ep_passes": "CALLS = []\ndef register():\n    CALLS.append(1)\n"})
    plugins.load_installed_plugins()
    plugins.load_installed_plugins()
    assert sys.modules["lamina_test_ep_ops"].LOADED
    assert sys.modules["lamina_test_ep_passes"].CALLS == [1]
    assert len(installed.calls) == 1


def test_a_failing_entry_point_is_named_and_located(installed):
    directory = installed({"broken": "lamina_test_ep_broken:register"},
                          {"lamina_test_ep_broken": """\
                              def register():
                                  raise KeyError("nn.frob")
                              """})
    with pytest.raises(CompileError) as caught:
        plugins.load_installed_plugins()
    assert caught.value.diagnostics[0].format() == (
        f"{directory}/lamina_test_ep_broken.py:2: error: plugin entry point 'broken' "
        "(lamina_test_ep_broken:register) failed: KeyError: 'nn.frob'")


def test_an_entry_point_that_is_not_callable_is_an_error(installed):
    installed({"value": "lamina_test_ep_value:NUMBER"}, {"lamina_test_ep_value": "NUMBER = 3\n"})
    with pytest.raises(CompileError, match=r"^error: plugin entry point 'value' "
                       r"\(lamina_test_ep_value:NUMBER\) failed: TypeError: "
                       r"'lamina_test_ep_value:NUMBER' is neither a module nor a callable$"):
        plugins.load_installed_plugins()


def test_a_missing_entry_point_module_is_an_error_without_a_location(installed):
    installed({"gone": "lamina_test_ep_gone"}, {})
    with pytest.raises(CompileError, match=r"^error: plugin entry point 'gone' "
                       r"\(lamina_test_ep_gone\) failed: ModuleNotFoundError: "):
        plugins.load_installed_plugins()
