"""Compilation targets and their registry.

A target knows its default pipeline (`pipeline()`, editable named stages),
how to produce the artifact of any stage (`emit(module, stage)`) and, where
the machine can run code, how to compile a module into a Python callable
(`compile(module, entry)`) together with the runtime libraries that code
calls into (`runtime_libraries()`). Targets are named by a spec string:
`"cpu"` (the host), `"cpu:znver4"` (another x86 CPU), and later
`"cuda:sm_80"`; `get_target(spec)` looks the kind up in the registry.

The package is layered so that nothing imports in a circle:

* this module: the `Target` base and the registry (imports no target);
* `host`: the machine code generation is for (triple, CPU, features);
* `llvm_tools`: translation to LLVM IR, `opt` and `llc`;
* `frontend`: the stages every target starts with (nn, linalg);
* one module per kind (`cpu`), imported on the first `get_target` of that
  kind; it registers itself with `@register_target("kind")`, as a plugin's
  target does.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Callable, ClassVar

if TYPE_CHECKING:
    from mlir import ir

    from lamina.pipeline import Pipeline

# The module defining each of Lamina's own target kinds.
BUILTIN_TARGETS = {
    "cpu": "lamina.targets.cpu",
    "cuda": "lamina.targets.cuda",
}


class Target:
    """Base of compilation targets."""

    kind: ClassVar[str] = ""

    @property
    def name(self) -> str:
        return self.kind

    def pipeline(self) -> Pipeline:
        """A fresh copy of the target's default pipeline."""
        raise NotImplementedError

    @property
    def stages(self) -> list[str]:
        return self.pipeline().stages

    def runtime_libraries(self) -> list[str]:
        """Paths of the shared libraries compiled code calls into."""
        return []

    def emit(self, module: ir.Module, stage: str, pipeline: Pipeline | None = None,
             print_after_all: bool = False, isolate: bool = False):
        """Runs the pipeline on `module` (in place) through `stage` and
        returns its product: the module, text or bytes. With `isolate`,
        every MLIR stage runs in mlir-opt (see `Pipeline.run`)."""
        return (pipeline or self.pipeline()).run(module, until=stage,
                                                 print_after_all=print_after_all,
                                                 isolate=isolate)

    def compile(self, module: ir.Module, entry: str | None = None,
                pipeline: Pipeline | None = None):
        """A Python callable running the function `entry` of `module`."""
        raise NotImplementedError(f"target '{self.name}' cannot run programs from Python")

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


_REGISTRY: dict[str, Callable[[str | None], Target]] = {}


def register_target(kind: str):
    """Registers a factory `f(arch_or_None) -> Target` for specs `kind[:arch]`."""
    def decorate(factory):
        _REGISTRY[kind] = factory
        return factory
    return decorate


def get_target(spec: str | Target = "cpu") -> Target:
    """The target of a spec such as `"cpu"` or `"cuda:sm_80"` (a Target is
    returned as is). Raises ValueError for an unknown kind."""
    if isinstance(spec, Target):
        return spec
    kind, _, arch = str(spec).partition(":")
    if kind not in _REGISTRY and kind in BUILTIN_TARGETS:
        importlib.import_module(BUILTIN_TARGETS[kind])
    if kind not in _REGISTRY:
        raise ValueError(f"unknown target '{spec}' (known: {', '.join(available_targets())})")
    return _REGISTRY[kind](arch or None)


def available_targets() -> list[str]:
    """The target kinds: Lamina's own and those registered since."""
    return sorted(set(BUILTIN_TARGETS) | set(_REGISTRY))
