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
    pipe.observers.append(record)    # record(stage, product, seconds) after each stage

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

An MLIR stage can run isolated (`Stage(..., isolated=True)`, or every one
with `run(..., isolate=True)`): its upstream passes then run in the wheel's
`mlir-opt`, consecutive ones in one call, and Lamina's Python passes in
process between them. The module travels as text with its locations, so
diagnostics keep their `file:line:col`; an upstream pass that aborts (the
wheels are built with assertions) or crashes ends mlir-opt, not Python, and
is reported as a located `CompileError`.

Observers (`pipeline.observers`) are called after every stage that `run`
runs, with the stage, its product and the seconds it took; this is how
`lamina-compile --report` records the IR and the time of each stage.
"""

from __future__ import annotations

import signal
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable, TextIO, Union

from mlir import ir

from lamina.context import verify
from lamina.diagnostics import CompileError, Diagnostic, DiagnosticCollector
from lamina.pass_pipeline import (PipelineError, build_pass_manager, parse_pipeline,
                                  parse_tool_diagnostics, resolve, run_in_mlir_opt)
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
    an artifact stage reads (default: the stage before it). An `isolated`
    MLIR stage runs its upstream passes in mlir-opt (see the module
    docstring)."""

    name: str
    passes: list[PassItem] = field(default_factory=list)
    kind: str = "mlir"
    input: str | None = None
    description: str = ""
    isolated: bool = False

    def __post_init__(self):
        if self.isolated and not self.is_mlir:
            raise ValueError(f"stage '{self.name}' produces {self.kind}; only MLIR stages "
                             "can run isolated")

    @property
    def is_mlir(self) -> bool:
        return self.kind == "mlir"

    def __str__(self) -> str:
        comments = [self.description] if self.description else []
        if self.isolated:
            comments.append("isolated: upstream passes run in mlir-opt")
        header = f"{self.name}:" + (f"  # {'; '.join(comments)}" if comments else "")
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
        # Called as observer(stage, product, seconds) after each stage `run` runs.
        self.observers: list[Callable[[Stage, Any, float], None]] = []

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
        """A copy whose stages can be edited apart; the observers are kept."""
        copied = Pipeline([Stage(s.name, list(s.passes), s.kind, s.input, s.description,
                                 s.isolated) for s in self._stages], self.target)
        copied.observers = list(self.observers)
        return copied

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
            print_after_all: bool = False, stream: TextIO | None = None,
            isolate: bool = False):
        """Runs the stages from `start` (default the first) through `until`
        (default the last MLIR stage) and returns the product of `until`:
        the module itself, transformed in place, for an MLIR stage; text
        (LLVM IR, assembly) or bytes (an object file) for an artifact
        stage. With `print_after_all`, the product after every pass is
        written to `stream` (stderr). With `isolate`, every MLIR stage runs
        isolated. Raises CompileError."""
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
            start_time = time.perf_counter()
            current = self.run_stage(stage.name, current, print_after_all, stream, isolate)
            seconds = time.perf_counter() - start_time
            for observer in self.observers:
                observer(stage, current, seconds)
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
                  stream: TextIO | None = None, isolate: bool = False):
        """Runs one stage on a module (MLIR stages, in place) or on the
        product of its input stage; returns the stage's product. With
        `isolate`, an MLIR stage runs isolated."""
        stage = self.stage(name)
        stream = stream or sys.stderr

        def dump(item: PassItem, product: Any) -> None:
            stream.write(f"// -----// IR Dump After {pass_name(item)} ({stage.name}) "
                         f"//----- //\n")
            stream.write(_printable(product) + "\n")

        after_each = dump if print_after_all else None
        if stage.is_mlir and (stage.isolated or isolate):
            _run_isolated(stage, value, after_each)
            return value
        for item in stage.passes:
            if stage.is_mlir:
                _run_mlir_pass(item, value, stage.name)
            else:
                value = _run_artifact_pass(item, value, stage.name)
            if after_each:
                after_each(item, value)
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


def _resolve(item: str, context: ir.Context, stage: str) -> list[Pass | str]:
    """The Lamina passes and upstream pipeline texts of a textual item."""
    try:
        return resolve(parse_pipeline(item), context)
    except PipelineError as error:
        raise _failure([Diagnostic(None, 0, 0, "error", str(error))], item, stage) from None


def _run_mlir_pass(item: PassItem, module, stage: str) -> None:
    operation = _module_op(module)
    context = operation.context
    with context, DiagnosticCollector(context) as collected:
        ok = True
        if isinstance(item, str):
            pm = build_pass_manager(_resolve(item, context, stage), context)
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


# ---------------------------------------------------------------------------
# Isolated stages.


def _run_isolated(stage: Stage, module, after_each: Callable[[PassItem, Any], None] | None):
    """Runs an MLIR stage with its upstream passes in mlir-opt: consecutive
    ones in one call (one call per pass item when printing after each), the
    other passes in process between them."""
    operation = _module_op(module)
    pending: list[tuple[PassItem, str]] = []

    def flush():
        if pending:
            _run_upstream_isolated(pending, operation, stage.name)
            pending.clear()

    for item in stage.passes:
        if isinstance(item, str):
            for element in _resolve(item, operation.context, stage.name):
                if isinstance(element, Pass):
                    flush()
                    _run_mlir_pass(element, module, stage.name)
                else:
                    pending.append((item, element))
        else:
            flush()
            _run_mlir_pass(item, module, stage.name)
        if after_each:
            flush()
            after_each(item, module)
    flush()


def _run_upstream_isolated(passes: list[tuple[PassItem, str]], operation: ir.Operation,
                           stage: str) -> None:
    """Runs upstream pipeline texts (each with the item it comes from) in
    one mlir-opt call and replaces the module's contents with the result.
    When the call fails, the passes run again one per call, so that the
    failure names its pass."""
    text = operation.get_asm(enable_debug_info=True, print_generic_op_form=True)
    result = run_in_mlir_opt([upstream for _, upstream in passes], text)
    if result.returncode != 0:
        if len(passes) > 1:
            for one in passes:
                _run_upstream_isolated([one], operation, stage)
            return
        raise _isolated_failure(result.returncode, result.stderr, *passes[0], operation, stage)
    context = operation.context
    with context, DiagnosticCollector(context) as collected:
        try:
            product = ir.Module.parse(result.stdout)
        except ir.MLIRError as error:
            collected.add_mlir_error(error)
            raise _failure(collected.diagnostics, passes[-1][0], stage,
                           "produced IR that does not parse back") from None
    _replace_contents(operation, product.operation)


def _isolated_failure(returncode: int, stderr: str, item: PassItem, upstream: str,
                      operation: ir.Operation, stage: str) -> CompileError:
    if returncode > 0:
        return _failure(parse_tool_diagnostics(stderr), item, stage,
                        f"failed in mlir-opt (exit code {returncode}): {_tail(stderr)}")
    number = -returncode
    how = "aborted" if number == signal.SIGABRT else "crashed"
    error = CompileError.at(operation.location,
                            f"upstream pass '{upstream}' {how} (signal {number}) in stage "
                            f"'{stage}'; the stage ran isolated, so this ended mlir-opt, "
                            "not the compiler")
    error.diagnostics[0].notes.append(
        Diagnostic(None, 0, 0, "note", "mlir-opt's stderr ends with:\n" + _tail(stderr)))
    return CompileError(error.diagnostics)


def _tail(stderr: str, lines: int = 12) -> str:
    """The end of a tool's stderr, without LLVM's crash boilerplate and stack dump."""
    text = stderr.split("PLEASE submit a bug report")[0].split("Stack dump:")[0]
    return "\n".join(text.strip().splitlines()[-lines:])


def _replace_contents(module: ir.Operation, product: ir.Operation) -> None:
    """Makes `module` hold `product`'s ops and attributes (in place, so that
    the caller's module is the result)."""
    body = module.regions[0].blocks[0]
    for op in list(body.operations):
        op.operation.erase()
    for op in list(product.regions[0].blocks[0].operations):
        body.append(op.operation)
    for name in list(module.attributes):
        del module.attributes[name]
    for name in product.attributes:
        module.attributes[name] = product.attributes[name]
