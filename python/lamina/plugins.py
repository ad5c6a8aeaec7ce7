"""Plugins: a user's Python file, or an installed package, that extends Lamina.

A plugin defines ops, dialects, lowerings or passes the way Lamina's own
files do (a `class MyDialect(Dialect, name="my")`, a `@register_pass`
dataclass, ...); they register themselves while the plugin runs, so every
tool sees them afterwards:

    lamina-opt --load-plugin=my_passes.py --list-passes
    lamina-opt model.mlir --load-plugin my_passes.py --my-fold
    lamina-compile model.mlir --load-plugin=my_ops.py --emit=linalg
    lamina-run model.mlir --load-plugin=my_ops.py --random --check

From Python, `load_plugin("my_passes.py")` does the same. A plugin file runs
as the module `lamina_plugin_<stem>` (its classes have a real `__module__`
and tracebacks name the file); loading the same file again in one process
returns the module already loaded. A plugin of several files is a package:
installed with an entry point in the group `lamina.plugins`, which names a
module (imported) or a callable (called with no arguments),

    [project.entry-points."lamina.plugins"]
    my-ops = "my_package.lamina_ops"

it is loaded by every tool at startup (`load_installed_plugins()`).

A plugin that raises while it loads, a SyntaxError included, is reported at
the plugin's line where it failed (Python reports lines, not columns):

    my_passes.py:12: error: plugin 'my_passes.py' failed: ValueError: ...
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys
import traceback
import types
from lamina.diagnostics import CompileError, Diagnostic, UsageError

ENTRY_POINT_GROUP = "lamina.plugins"

_LOADED: dict[str, types.ModuleType] = {}  # resolved path -> module
_installed_loaded = False


def load_plugin(path: str | os.PathLike) -> types.ModuleType:
    """Runs the Python file `path` as a plugin and returns its module.

    Raises UsageError if the file does not exist, and CompileError, located
    at the plugin's line, if it raises while it runs."""
    path = os.fspath(path)
    resolved = os.path.realpath(path)
    if resolved in _LOADED:
        return _LOADED[resolved]
    try:
        open(resolved, "rb").close()
    except OSError as error:
        raise UsageError(f"cannot open plugin file '{path}': {error.strerror}") from None
    name = _module_name(resolved)
    spec = importlib.util.spec_from_file_location(name, resolved)
    module = importlib.util.module_from_spec(spec)
    # In sys.modules while it runs, as an imported module is: dataclasses
    # and pickling look their class's module up there.
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except (Exception, SystemExit) as error:
        sys.modules.pop(name, None)
        frame = _failing_frame(error, lambda filename: os.path.realpath(filename) == resolved)
        raise _failure(f"plugin '{path}'", (path, frame[1]) if frame else None,
                       error) from None
    _LOADED[resolved] = module
    return module


def load_installed_plugins() -> None:
    """Loads every installed plugin (entry points of the group
    `lamina.plugins`), once per process. Raises CompileError naming the
    entry point, at the line of its package where it failed."""
    global _installed_loaded
    if _installed_loaded:
        return
    _installed_loaded = True
    import importlib.metadata  # slow to import: only where entry points are read
    for entry_point in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        _load_entry_point(entry_point)


def _load_entry_point(entry_point) -> None:
    what = f"plugin entry point '{entry_point.name}' ({entry_point.value})"
    try:
        loaded = entry_point.load()
        if not isinstance(loaded, types.ModuleType):
            if not callable(loaded):
                raise TypeError(f"'{entry_point.value}' is neither a module nor a callable")
            loaded()
    except (Exception, SystemExit) as error:
        package_files = _package_files(entry_point.module)

        def in_package(filename: str) -> bool:
            return os.path.realpath(filename).startswith(package_files)

        raise _failure(what, _failing_frame(error, in_package), error) from None


def _module_name(resolved: str) -> str:
    stem = re.sub(r"\W", "_", os.path.splitext(os.path.basename(resolved))[0])
    name, count = f"lamina_plugin_{stem}", 1
    while name in sys.modules:  # another file with the same stem
        count += 1
        name = f"lamina_plugin_{stem}_{count}"
    return name


def _package_files(module_name: str) -> tuple[str, ...]:
    """The files of the top-level package of `module_name`, as path
    prefixes (a single-file module is its own prefix)."""
    try:
        spec = importlib.util.find_spec(module_name.split(".")[0])
    except (ImportError, ValueError):
        return ()
    if spec is None:
        return ()
    if spec.submodule_search_locations:
        return tuple(os.path.realpath(d) + os.sep for d in spec.submodule_search_locations)
    return (os.path.realpath(spec.origin),) if spec.origin else ()


def _failing_frame(error: BaseException, in_plugin) -> tuple[str, int] | None:
    """The file and line of the plugin where `error` arose: the line of a
    SyntaxError in the plugin, else the deepest traceback frame in it."""
    if isinstance(error, SyntaxError) and error.filename and in_plugin(error.filename):
        return error.filename, error.lineno or 1
    frames = [f for f in traceback.extract_tb(error.__traceback__) if in_plugin(f.filename)]
    return (frames[-1].filename, frames[-1].lineno) if frames else None


def _failure(what: str, where: tuple[str, int] | None, error: BaseException) -> CompileError:
    filename, line = where or (None, 0)
    message = str(error)
    if (isinstance(error, SyntaxError) and where and error.filename
            and os.path.realpath(error.filename) == os.path.realpath(filename)):
        message = error.msg  # its file and line are already in front
    text = f"{what} failed: {type(error).__name__}" + (f": {message}" if message else "")
    return CompileError([Diagnostic(filename, line, 0, "error", text)])


def add_plugin_arguments(parser) -> None:
    """The tools' `--load-plugin=FILE.py` option (repeatable), stored as
    `plugins`."""
    parser.add_argument("--load-plugin", dest="plugins", action="append", default=[],
                        metavar="FILE.py",
                        help="run a Python file that defines ops, dialects, lowerings or "
                             "passes before anything else (repeatable)")


def load_plugins(paths=()) -> None:
    """What each tool does first: the installed plugins, then the files
    given with --load-plugin, in order."""
    load_installed_plugins()
    for path in paths:
        load_plugin(path)
