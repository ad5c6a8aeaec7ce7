"""Compilation pipelines: an ordered list of named stages of passes.

A pipeline is what `lamina-compile --emit=STAGE` runs up to, what
`lamina.compile` runs before JIT compilation, and what a user edits to add
a pass of their own (Triton's `make_ttir / make_ttgir / make_llir` is the
model):

    pipe = lamina.Pipeline.for_target("cpu")
    pipe.stages                      # ['nn', 'linalg', 'bufferized', ...]
    pipe.insert_after("convert-nn-to-linalg", "func.func(my-upstream-pass)")
    pipe.insert_before("bufferized", my_python_pass)   # first pass of a stage
    module = pipe.run(module, until="bufferized", print_after_all=True)

A pass is one of:

* pipeline text: an upstream pass (`"canonicalize"`, `"func.func(cse)"`,
  `"one-shot-bufferize{bufferize-function-boundaries}"`) or a registered
  Lamina pass by flag (`"nn-canonicalize"`, with options in braces);
* a Lamina `Pass` instance;
* a Python callable `fn(module)` that transforms an `ir.Module` in place
  (raising `PassFailure` to report a located error). Its name is its
  `argument` attribute or its `__name__`.

MLIR stages transform the module in place. The last stages produce
artifacts instead (LLVM IR text, assembly, an object file); their passes
are callables from the previous artifact to the next, and a stage may read
an earlier stage's product (`obj` is compiled from `llvm`, not from `asm`).
Failures raise `CompileError` with the located diagnostics of the failing
pass and a note naming the pass and the stage.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any, Callable, TextIO, Union

from mlir import ir

from lamina.context import verify
from lamina.diagnostics import CompileError, Diagnostic, DiagnosticCollector
from lamina.pass_pipeline import PipelineError, build_pass_manager, parse_pipeline, resolve
from lamina.pass_registry import Pass, PassFailure
from lamina.targets import get_target

PassItem = Union[str, Pass, Callable[..., Any]]


def pass_name(item: PassItem) -> str:
    """The name a pass is found by: its flag (the innermost pass name of
    pipeline text such as `func.func(cse)`), or a callable's name."""
    if isinstance(item, str):
        try:
            elements = parse_pipeline(item)
        except PipelineError:
            return item
        return elements[0].name if len(elements) == 1 else item
    if isinstance(item, Pass):
        return item.argument
    return getattr(item, "argument", None) or getattr(item, "__name__", type(item).__name__)


def _matches(item: PassItem, query: PassItem) -> bool:
    if isinstance(query, str):
        return isinstance(item, str) and item.strip() == query.strip() or pass_name(item) == query
    return item is query


@dataclass
class Stage:
    """One named stage: its passes in order. `kind` is "mlir" for stages
    that transform the module in place, else the kind of artifact the stage
    produces ("llvm", "asm" or "obj"); `input` names the stage whose product
    an artifact stage reads (default: the stage before it)."""

    name: str
    passes: list[PassItem] = field(default_factory=list)
    kind: str = "mlir"
    input: str | None = None
    description: str = ""

    @property
    def is_mlir(self) -> bool:
        return self.kind == "mlir"

    def __str__(self) -> str:
        header = f"{self.name}:" + (f"  # {self.description}" if self.description else "")
        lines = [header] + [f"  {_describe(p)}" for p in self.passes]
        return "\n".join(lines)


def _describe(item: PassItem) -> str:
    if isinstance(item, (str, Pass)) or type(item).__str__ is not object.__str__:
        return str(item)
    return pass_name(item)


class Pipeline:
    """An ordered list of named stages; see the module docstring."""

    def __init__(self, stages: list[Stage], target: Any = None):
        names = [s.name for s in stages]
        if len(set(names)) != len(names):
            raise ValueError(f"stage names repeat: {names}")
        self._stages = list(stages)
        self.target = target

    @classmethod
    def for_target(cls, target: Any = "cpu") -> "Pipeline":
        """The default pipeline of a target (`"cpu"`, or a Target)."""
        return get_target(target).pipeline()

    # -- inspection ----------------------------------------------------------

    @property
    def stages(self) -> list[str]:
        """The stage names, in order."""
        return [s.name for s in self._stages]

    @property
    def mlir_stages(self) -> list[str]:
        """The names of the stages whose product is an MLIR module."""
        return [s.name for s in self._stages if s.is_mlir]

    def stage(self, name: str) -> Stage:
        for stage in self._stages:
            if stage.name == name:
                return stage
        raise KeyError(f"no stage '{name}' (stages: {', '.join(self.stages)})")

    def __str__(self) -> str:
        return "\n".join(str(s) for s in self._stages)

    def __repr__(self) -> str:
        return f"Pipeline({', '.join(self.stages)})"

    def copy(self) -> "Pipeline":
        return Pipeline([Stage(s.name, list(s.passes), s.kind, s.input, s.description)
                         for s in self._stages], self.target)

    # -- editing -------------------------------------------------------------

    def _find(self, query: PassItem, stage: str | None = None) -> tuple[Stage, int]:
        """The first pass matching `query` (in `stage` if given)."""
        for candidate in self._stages:
            if stage is not None and candidate.name != stage:
                continue
            for index, item in enumerate(candidate.passes):
                if _matches(item, query):
                    return candidate, index
        where = f" in stage '{stage}'" if stage else ""
        raise KeyError(f"no pass '{pass_name(query)}'{where} "
                       f"(stages: {', '.join(self.stages)})")

    def _position(self, query: PassItem, after: bool, stage: str | None) -> tuple[Stage, int]:
        if isinstance(query, str) and stage is None and query in self.stages:
            found = self.stage(query)
            return found, len(found.passes) if after else 0
        found, index = self._find(query, stage)
        return found, index + 1 if after else index

    def insert_after(self, name_or_pass: PassItem, item: PassItem,
                     stage: str | None = None) -> "Pipeline":
        """Inserts `item` after the first pass matching `name_or_pass`, or
        at the end of the stage of that name."""
        found, index = self._position(name_or_pass, True, stage)
        found.passes.insert(index, item)
        return self

    def insert_before(self, name_or_pass: PassItem, item: PassItem,
                      stage: str | None = None) -> "Pipeline":
        """Inserts `item` before the first pass matching `name_or_pass`, or
        at the start of the stage of that name."""
        found, index = self._position(name_or_pass, False, stage)
        found.passes.insert(index, item)
        return self

    def replace(self, name_or_pass: PassItem, item: PassItem,
                stage: str | None = None) -> "Pipeline":
        """Replaces the first pass matching `name_or_pass`."""
        found, index = self._find(name_or_pass, stage)
        found.passes[index] = item
        return self

    def remove(self, name_or_pass: PassItem, stage: str | None = None) -> "Pipeline":
        """Removes the first pass matching `name_or_pass`."""
        found, index = self._find(name_or_pass, stage)
        del found.passes[index]
        return self

    def add_stage(self, stage: Stage, after: str | None = None) -> "Pipeline":
        """Adds a stage after the named one (at the end if None)."""
        if stage.name in self.stages:
            raise ValueError(f"stage '{stage.name}' exists")
        index = len(self._stages) if after is None else self.stages.index(after) + 1
        self._stages.insert(index, stage)
        return self

    # -- running -------------------------------------------------------------

    def run(self, module: ir.Module, until: str | None = None, start: str | None = None,
            print_after_all: bool = False, stream: TextIO | None = None):
        """Runs the stages from `start` (default the first) through `until`
        (default the last MLIR stage) and returns the product of `until`:
        the module itself, transformed in place, for an MLIR stage; text
        (LLVM IR, assembly) or bytes (an object file) for an artifact
        stage. With `print_after_all`, the product after every pass is
        written to `stream` (stderr). Raises CompileError."""
        until = until or self.mlir_stages[-1]
        names = self.stages
        for name in (until, start):
            if name is not None and name not in names:
                raise KeyError(f"no stage '{name}' (stages: {', '.join(names)})")
        first = names.index(start) if start else 0
        last = names.index(until)
        if first > last:
            raise ValueError(f"stage '{start}' comes after '{until}'")
        needed = self._needed(first, last)
        products: dict[str, Any] = {}
        current: Any = module
        for stage in self._stages[first:last + 1]:
            if stage.name not in needed:
                continue
            if not stage.is_mlir:
                source = stage.input or self._previous(stage.name)
                current = products.get(source, current)
            current = self.run_stage(stage.name, current, print_after_all, stream)
            products[stage.name] = current
        return current

    def _previous(self, name: str) -> str | None:
        index = self.stages.index(name)
        return self.stages[index - 1] if index else None

    def _needed(self, first: int, last: int) -> set[str]:
        """The stages whose products `until` depends on: every MLIR stage,
        and among artifact stages only those on its input chain."""
        needed = {s.name for s in self._stages[first:last + 1] if s.is_mlir}
        name: str | None = self._stages[last].name
        while name is not None and self.stages.index(name) >= first:
            stage = self.stage(name)
            needed.add(name)
            if stage.is_mlir:
                break
            name = stage.input or self._previous(name)
        return needed

    def run_stage(self, name: str, value: Any, print_after_all: bool = False,
                  stream: TextIO | None = None):
        """Runs one stage on a module (MLIR stages, in place) or on the
        product of its input stage; returns the stage's product."""
        stage = self.stage(name)
        stream = stream or sys.stderr
        for item in stage.passes:
            if stage.is_mlir:
                _run_mlir_pass(item, value, stage.name)
            else:
                value = _run_artifact_pass(item, value, stage.name)
            if print_after_all:
                stream.write(f"// -----// IR Dump After {pass_name(item)} ({stage.name}) "
                             f"//----- //\n")
                stream.write(_printable(value) + "\n")
        return value


def _printable(value: Any) -> str:
    if isinstance(value, bytes):
        return f"<{len(value)} bytes>"
    return str(value)


def _module_op(module) -> ir.Operation:
    return module.operation if isinstance(module, ir.Module) else module


def _failure(diagnostics: list[Diagnostic], item: PassItem, stage: str,
             fallback: str = "failed") -> CompileError:
    for diagnostic in diagnostics:
        diagnostic.notes = [n for n in diagnostic.notes
                            if not n.message.startswith("see current operation")]
    unique: list[Diagnostic] = []
    for diagnostic in diagnostics:
        if diagnostic not in unique:
            unique.append(diagnostic)
    errors = [d for d in unique if d.severity == "error"] or unique
    note = Diagnostic(None, 0, 0, "note", f"in pass '{pass_name(item)}' of stage '{stage}'")
    if not errors:
        errors = [Diagnostic(None, 0, 0, "error", f"pass '{pass_name(item)}' {fallback}")]
    errors[0].notes.append(note)
    return CompileError(errors, f"pass '{pass_name(item)}' of stage '{stage}' failed")


def _run_mlir_pass(item: PassItem, module, stage: str) -> None:
    operation = _module_op(module)
    context = operation.context
    with context, DiagnosticCollector(context) as collected:
        ok = True
        if isinstance(item, str):
            try:
                passes = resolve(parse_pipeline(item), context)
            except PipelineError as error:
                raise _failure([Diagnostic(None, 0, 0, "error", str(error))], item,
                               stage) from None
            pm = build_pass_manager(passes, context)
            try:
                pm.run(operation)
            except ir.MLIRError as error:
                collected.add_mlir_error(error)
                ok = False
        elif isinstance(item, Pass):
            ok = item.apply(operation)
        else:
            try:
                item(module)
            except PassFailure as failure:
                (failure.location or operation.location).emit_error(str(failure))
                ok = False
            ok = ok and verify(operation)
        if not ok:
            raise _failure(collected.diagnostics, item, stage) from None


def _run_artifact_pass(item: PassItem, value: Any, stage: str) -> Any:
    try:
        return item(value)
    except PassFailure as failure:
        raise _failure([Diagnostic(None, 0, 0, "error", str(failure))], item, stage) from None
    except CompileError as error:
        raise _failure(error.diagnostics, item, stage) from None
