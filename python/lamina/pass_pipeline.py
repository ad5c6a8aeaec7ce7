"""Textual pass pipelines that mix Lamina and upstream passes, and running
upstream passes in process or in mlir-opt.

`builtin.module(func.func(nn-canonicalize, cse), canonicalize{max-iterations=3})`
is parsed into a flat list of passes, each with the op nesting it sits in.
Upstream passes go to the PassManager as text (re-wrapped in their nesting);
Lamina passes are not in MLIR's registry, so they run as module-level passes
that visit their anchor ops themselves (an op-anchored Python pass nested in
the wrong place is an LLVM fatal error, so nesting is resolved here).

Upstream passes can also run out of process (`run_in_mlir_opt`): the
wheels are built with assertions, and an upstream pass that aborts takes
its process with it, which must not be the compiler's. The module goes to
the wheel's `mlir-opt` in generic form with its locations, Lamina's
dialects go along as IRDL, and the diagnostics come back as text
(`parse_tool_diagnostics`).
"""

from __future__ import annotations

import contextlib
import difflib
import os
import re
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from typing import Sequence

from mlir import ir, passmanager

from lamina.diagnostics import Diagnostic
from lamina.pass_registry import OptionError, Pass, all_passes, find_pass
from lamina.toolchain import tool_path

# Ops that anchor a nested pipeline: `func.func(...)`.
_ANCHOR_PREFIXES = ("builtin.module", "func.func", "gpu.module", "gpu.func", "llvm.func",
                    "any", "spirv.module")
# Anchors that hold other anchors, and those that hold none (a function
# holds no functions or modules), so that a nesting that can never match
# an op is an error instead of a pipeline that silently does nothing.
_MODULE_ANCHORS = ("builtin.module", "gpu.module", "spirv.module")
_FUNCTION_ANCHORS = ("func.func", "gpu.func", "llvm.func", "spirv.func")
# Anchors that only exist inside one other op.
_ANCHOR_PARENTS = {"gpu.func": "gpu.module", "spirv.func": "spirv.module"}


# How deep nested pipelines may go: real ones nest two or three anchors
# (`builtin.module(gpu.module(gpu.func(...)))`); the parser recurses once
# per level, and so does upstream's.
MAX_PIPELINE_DEPTH = 32


class PipelineError(ValueError):
    """A pipeline that does not parse, or names an unknown pass or option."""


@dataclass
class PipelineElement:
    """One pass in a pipeline: its flag, option text and enclosing anchors."""

    name: str
    options: str = ""
    nesting: tuple[str, ...] = ()

    def upstream_text(self) -> str:
        text = f"{self.name}{{{self.options}}}" if self.options else self.name
        for anchor in reversed(self.nesting):
            text = f"{anchor}({text})"
        return text


def _is_anchor(name: str) -> bool:
    return name in _ANCHOR_PREFIXES or "." in name


def parse_pipeline(text: str, root: str | None = None) -> list[PipelineElement]:
    """Parses pipeline text; a leading `builtin.module(...)` is optional.
    With `root` (the op the pipeline runs on, as a tool's `-p` is), a
    nested pipeline at the top must be anchored on that op, as in mlir-opt:
    `func.func(cse)` is then an error, `builtin.module(func.func(cse))` not."""
    elements: list[PipelineElement] = []
    position = 0

    def error(message):
        shown = text if len(text) <= 160 else text[:160] + "..."
        raise PipelineError(f"{message} at position {position} of '{shown}'")

    def skip_space():
        nonlocal position
        while position < len(text) and text[position] in " \t\n":
            position += 1

    def read_name():
        nonlocal position
        start = position
        while position < len(text) and (text[position].isalnum() or text[position] in "-_.$"):
            position += 1
        if start == position:
            error("expected a pass name")
        return text[start:position]

    def read_braced():
        nonlocal position
        depth, start = 0, position
        while position < len(text):
            ch = text[position]
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0:
                    position += 1
                    return text[start + 1:position - 1]
            position += 1
        error("unbalanced '{'")

    def parse_list(nesting, closing, depth=0):
        nonlocal position
        if depth > MAX_PIPELINE_DEPTH:
            error(f"pipeline nested more than {MAX_PIPELINE_DEPTH} deep")
        while True:
            skip_space()
            if closing and position < len(text) and text[position] == closing:
                return
            if position >= len(text):
                if closing:
                    error(f"missing '{closing}'")
                return
            name = read_name()
            skip_space()
            options = ""
            if position < len(text) and text[position] == "{":
                options = read_braced().strip()
                skip_space()
            if position < len(text) and text[position] == "(":
                if options:
                    error(f"anchor '{name}' cannot take options")
                if root is not None and depth == 0 and name != root:
                    error(f"the pipeline runs on '{root}', but '{name}(...)' is anchored on "
                          f"'{name}' (nest it: '{root}({name}(...))')")
                position += 1
                inner = nesting if (name == "builtin.module" and not nesting) else nesting + (name,)
                parse_list(inner, ")", depth + 1)
                position += 1
            else:
                elements.append(PipelineElement(name, options, nesting))
            skip_space()
            if position < len(text) and text[position] == ",":
                position += 1
                continue
            skip_space()
            if position >= len(text) or (closing and text[position] == closing):
                continue
            error(f"unexpected '{text[position]}'")

    parse_list((), None)
    return elements


def _check_nesting(element: PipelineElement, context: ir.Context) -> None:
    """Raises PipelineError for a nesting that no IR can match: an anchor
    that is no operation, a function anchor holding another anchor, an
    anchor outside the op it lives in."""
    outer = "builtin.module"
    for anchor in element.nesting:
        if anchor != "any" and anchor not in _ANCHOR_PREFIXES + _FUNCTION_ANCHORS:
            with context:
                known = context.is_registered_operation(anchor)
            if not known:
                raise PipelineError(
                    f"'{anchor}' in the pipeline of pass '{element.name}' is not an operation: "
                    "a nested pipeline names the op it runs on (builtin.module, func.func, "
                    "gpu.module, gpu.func, llvm.func, spirv.module or any)")
        if outer in _FUNCTION_ANCHORS and anchor != "any":
            raise PipelineError(f"'{anchor}' cannot be nested in '{outer}' (in the pipeline of "
                                f"pass '{element.name}'): a function holds no functions or "
                                "modules")
        parent = _ANCHOR_PARENTS.get(anchor)
        if parent is not None and outer != parent:
            raise PipelineError(f"'{anchor}' must be nested in '{parent}', not in '{outer}' "
                                f"(in the pipeline of pass '{element.name}')")
        outer = anchor


def resolve(elements: list[PipelineElement], context: ir.Context) -> list[Pass | str]:
    """Each element as a configured Lamina pass or as checked upstream
    pipeline text. Raises PipelineError for unknown passes or options,
    and for nestings that cannot match (see `_check_nesting`). Lamina
    passes run at module level and visit their anchor ops themselves, so
    they are written at the top or directly in their anchor."""
    resolved: list[Pass | str] = []
    for element in elements:
        _check_nesting(element, context)
        cls = find_pass(element.name)
        if cls is not None:
            if element.nesting not in ((), (cls.anchor,)) and "any" not in element.nesting:
                where = next(a for a in reversed(element.nesting) if a != cls.anchor)
                raise PipelineError(f"pass '{element.name}' runs on '{cls.anchor}' and "
                                    f"cannot be nested in '{where}'")
            try:
                resolved.append(cls.from_options(element.options))
            except OptionError as e:
                raise PipelineError(str(e)) from None
        else:
            upstream = element.upstream_text()
            try:
                with context, _native_stderr() as printed:
                    passmanager.PassManager.parse(f"builtin.module({upstream})")
            except ValueError as e:
                raise PipelineError(_upstream_parse_problem(element, str(e), printed[0])) from None
            resolved.append(upstream)
    return resolved


# File descriptor 2 is the process's: one capture at a time (compiles may
# run in several threads).
_STDERR_CAPTURE = threading.Lock()


@contextlib.contextmanager
def _native_stderr():
    """Captures what native code writes to file descriptor 2 meanwhile
    (LLVM's option parser prints its reasons there, not in the exception);
    yields a list that holds the text afterwards."""
    printed: list[str] = []
    with _STDERR_CAPTURE:
        sys.stderr.flush()
        saved = os.dup(2)
        try:
            with tempfile.TemporaryFile() as captured:
                os.dup2(captured.fileno(), 2)
                try:
                    yield printed
                finally:
                    os.dup2(saved, 2)
                    captured.seek(0)
                    printed.append(captured.read().decode("utf-8", "replace"))
        finally:
            os.close(saved)


def _upstream_parse_problem(element: PipelineElement, raised: str, printed: str) -> str:
    """A one-line reason why upstream refused a pass and its options."""
    if "does not refer to a registered pass" in raised:
        return f"unknown pass '{element.name}'{_suggestion(element.name)}"
    if "restricted to" in raised and "did you intend to nest" in raised:
        where = element.nesting[-1] if element.nesting else "builtin.module"
        return (f"pass '{element.name}' cannot be nested in '{where}': "
                + raised.strip().splitlines()[0])
    reasons = [line.strip().lstrip(":").strip() for line in (printed + "\n" + raised).splitlines()]
    reasons = [r.split(">: ", 1)[-1] for r in reasons
               if r and not r.startswith("failed to add")]
    return (f"invalid options for pass '{element.name}': "
            + (reasons[0] if reasons else f"'{element.options}'"))


def upstream_pass_help() -> list[tuple[str, str]]:
    """The flag and summary of each upstream pass and pass pipeline, as the
    wheel's `mlir-opt --help-list` lists them; empty if it cannot run."""
    try:
        text = subprocess.run([tool_path("mlir-opt"), "--help-list"], capture_output=True,
                              text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return []
    passes, in_passes = [], False
    for line in text.splitlines():
        if line.strip().startswith(("Passes:", "Pass Pipelines:")):
            in_passes = True
            continue
        if in_passes:
            match = re.match(r"\s{4,6}--([\w-]+)\s*(?:-\s*(.*))?$", line)
            if match:
                passes.append((match[1], (match[2] or "").strip()))
            elif line.strip() and not line.startswith(" "):
                in_passes = False
    return passes


_UPSTREAM_NAMES: list[str] = []


def _suggestion(name: str) -> str:
    """`; did you mean 'x'?` for the pass names (Lamina's and upstream's)
    nearest to an unknown `name`, or nothing."""
    if not _UPSTREAM_NAMES:
        _UPSTREAM_NAMES.extend(flag for flag, _ in upstream_pass_help())
    near = difflib.get_close_matches(name, list(all_passes()) + _UPSTREAM_NAMES, n=3,
                                     cutoff=0.75)
    return f"; did you mean {' or '.join(repr(n) for n in near)}?" if near else ""


# The module upstream passes given options first run on, in mlir-opt (see
# check_upstream_options).
_PROBE_MODULE = "module {\n  func.func @lamina_option_probe() {\n    return\n  }\n}\n"


def check_upstream_options(elements: list[PipelineElement]) -> None:
    """Runs every upstream pass written with options once on a tiny module
    in mlir-opt and raises PipelineError if one aborts there or reports an
    error that is in no place of the module (what a pass's check of its
    options emits when it starts: `affine-loop-unroll{unroll-factor=0}`).
    Some option values end the process in upstream assertions wherever
    the pass runs (`nvvm-attach-target{O=99}`,
    `one-shot-bufferize{analysis-heuristic=x}`); this finds them before
    they run in process, naming the pass and upstream's reason."""
    probed = [e for e in elements if e.options and find_pass(e.name) is None]
    if not probed:
        return
    result = run_in_mlir_opt([e.upstream_text() for e in probed], _PROBE_MODULE)
    if result.returncode == 0:
        return
    errors = [d for d in parse_tool_diagnostics(result.stderr) if d.severity == "error"]
    unplaced = [d for d in errors if d.filename is None]
    if result.returncode > 0 and not unplaced:
        return
    for element in probed if len(probed) > 1 else []:
        check_upstream_options([element])
    element = probed[0]
    if result.returncode > 0:
        raise PipelineError(f"invalid options for pass '{element.name}': "
                            f"{unplaced[0].message.splitlines()[0]}")
    lines = [line.strip() for line in result.stderr.splitlines() if line.strip()]
    reason = (errors[0].message.splitlines()[0] if errors
              else (lines[0] if lines else f"signal {-result.returncode}"))
    raise PipelineError(f"invalid options for pass '{element.name}': {reason} (upstream "
                        f"aborts on '{element.upstream_text()}')")


def check_lamina_options(elements: list[PipelineElement]) -> None:
    """Runs every Lamina pass written with options once on an empty module,
    in a context of its own, and raises PipelineError if it fails there: a
    pass that fails on a module with nothing in it
    (`convert-nn-to-hw{chip=sm_7}`, which checks its chip first) fails for
    its options, not for the input, and is reported before any IR."""
    from lamina.context import make_context
    from lamina.diagnostics import DiagnosticCollector
    probed = [e for e in elements if e.options and find_pass(e.name) is not None]
    if not probed:
        return
    context = make_context()
    with context, DiagnosticCollector(context) as collected:
        for element in probed:
            probe = ir.Module.parse("module {\n}\n")
            configured = find_pass(element.name).from_options(element.options)
            if not configured.apply(probe.operation):
                errors = [d.message.splitlines()[0] for d in collected.errors]
                reason = errors[0] if errors else "it fails on an empty module"
                raise PipelineError(f"{reason} (options '{element.options}' of pass "
                                    f"'{element.name}')")


def build_pass_manager(passes: list[Pass | str], context: ir.Context) -> passmanager.PassManager:
    """An upstream PassManager on `builtin.module` running `passes` in order."""
    with context:
        pm = passmanager.PassManager("builtin.module")
        for item in passes:
            if isinstance(item, Pass):
                item.add_to(pm)
            else:
                pm.add(item)
    return pm


def run_in_mlir_opt(passes: Sequence[str], module_text: str) -> subprocess.CompletedProcess:
    """Runs upstream pipeline text (`passes`, in order) on a module's text in
    the wheel's `mlir-opt`. Lamina's ops travel as unregistered ops, as in
    Lamina's own contexts (`lamina.context`); Lamina verifies them again
    when the result is parsed back. The result (stdout) is printed in
    generic form with locations; the return code is negative when a signal
    ended mlir-opt (an upstream assertion aborts)."""
    command = [tool_path("mlir-opt"), "--allow-unregistered-dialect", "--mlir-print-debuginfo",
               "--mlir-print-op-generic", "--mlir-print-op-on-diagnostic=false",
               f"--pass-pipeline=builtin.module({','.join(passes)})", "-"]
    # A crash's stack trace needs no symbols (looking for llvm-symbolizer is slow).
    environment = dict(os.environ, LLVM_DISABLE_SYMBOLIZATION="1")
    return subprocess.run(command, input=module_text, capture_output=True, text=True,
                          errors="replace", env=environment)


# `FILE:LINE:COL: error: message`, `FILE:LINE: note: ...` or `error: ...`,
# as MLIR tools print diagnostics.
_DIAGNOSTIC_LINE = re.compile(
    r"^(?:(?P<where>.*?): )?(?P<severity>error|warning|note|remark): (?P<message>.*)$")
_FILE_LINE_COL = re.compile(r"^(?P<file>.+?):(?P<line>\d+)(?::(?P<col>\d+))?$")
_CARET_LINE = re.compile(r"^ *\^~*$")


def parse_tool_diagnostics(text: str) -> list[Diagnostic]:
    """The diagnostics in an MLIR tool's stderr, notes attached to the
    diagnostic before them. Locations without a file (`<unknown>:0`) give
    unlocated diagnostics; source lines shown with a caret under them are
    dropped; other lines continue the previous message."""
    diagnostics: list[Diagnostic] = []
    last: Diagnostic | None = None
    lines = text.splitlines()
    for index, line in enumerate(lines):
        # A source line shown under a diagnostic, and its caret line.
        if _CARET_LINE.match(line) or (index + 1 < len(lines)
                                       and _CARET_LINE.match(lines[index + 1])):
            continue
        match = _DIAGNOSTIC_LINE.match(line)
        if match is None:
            if last is not None and line.strip():
                last.message += "\n" + line
            continue
        filename, line_number, col = None, 0, 0
        place = _FILE_LINE_COL.match(match["where"] or "")
        if place and place["file"] != "<unknown>":
            filename, line_number, col = place["file"], int(place["line"]), int(place["col"] or 0)
        last = Diagnostic(filename, line_number, col, match["severity"], match["message"])
        if last.severity == "note" and diagnostics:
            diagnostics[-1].notes.append(last)
        else:
            diagnostics.append(last)
    return diagnostics
