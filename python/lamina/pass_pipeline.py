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

import os
import re
import subprocess
from dataclasses import dataclass
from typing import Sequence

from mlir import ir, passmanager

from lamina.diagnostics import Diagnostic
from lamina.pass_registry import OptionError, Pass, all_passes
from lamina.toolchain import tool_path

# Ops that anchor a nested pipeline: `func.func(...)`.
_ANCHOR_PREFIXES = ("builtin.module", "func.func", "gpu.module", "gpu.func", "llvm.func",
                    "any", "spirv.module")


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


def parse_pipeline(text: str) -> list[PipelineElement]:
    """Parses pipeline text; a leading `builtin.module(...)` is optional."""
    elements: list[PipelineElement] = []
    position = 0

    def error(message):
        raise PipelineError(f"{message} at position {position} of '{text}'")

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

    def parse_list(nesting, closing):
        nonlocal position
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
                position += 1
                inner = nesting if (name == "builtin.module" and not nesting) else nesting + (name,)
                parse_list(inner, ")")
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


def resolve(elements: list[PipelineElement], context: ir.Context) -> list[Pass | str]:
    """Each element as a configured Lamina pass or as checked upstream
    pipeline text. Raises PipelineError for unknown passes or options."""
    lamina_passes = all_passes()
    resolved: list[Pass | str] = []
    for element in elements:
        if element.name in lamina_passes:
            cls = lamina_passes[element.name]
            for anchor in element.nesting:
                if anchor not in ("any", cls.anchor) and cls.anchor == "builtin.module":
                    raise PipelineError(f"pass '{element.name}' runs on '{cls.anchor}' and "
                                        f"cannot be nested in '{anchor}'")
            try:
                resolved.append(cls.from_options(element.options))
            except OptionError as e:
                raise PipelineError(str(e)) from None
        else:
            upstream = element.upstream_text()
            try:
                with context:
                    passmanager.PassManager.parse(f"builtin.module({upstream})")
            except ValueError as e:
                if "does not refer to a registered pass" in str(e):
                    raise PipelineError(f"unknown pass '{element.name}'") from None
                reason = str(e).strip().splitlines()[0].split(": ", 1)[-1]
                raise PipelineError(f"invalid options for pass '{element.name}': {reason}") from None
            resolved.append(upstream)
    return resolved


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
