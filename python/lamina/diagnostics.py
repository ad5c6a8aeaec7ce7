"""Located diagnostics, the way MLIR tools print them.

Every error a Lamina tool reports reads `FILE:LINE:COL: error: message`, at
the op it is about. Diagnostics come from three places — the parser
(`MLIRError`), the upstream verifier and passes, and Lamina's Python rules
(`Location.emit_error`) — and all of them are collected here.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
from dataclasses import dataclass, field

from mlir import ir

SEVERITIES = {
    ir.DiagnosticSeverity.ERROR: "error",
    ir.DiagnosticSeverity.WARNING: "warning",
    ir.DiagnosticSeverity.NOTE: "note",
    ir.DiagnosticSeverity.REMARK: "remark",
}


@dataclass
class Diagnostic:
    """One diagnostic, detached from MLIR: where, how severe, what."""

    filename: str | None
    line: int
    col: int
    severity: str
    message: str
    notes: list["Diagnostic"] = field(default_factory=list)

    def format(self) -> str:
        """`FILE:LINE:COL: severity: message` (no column where `col` is 0,
        as for a line of a Python file), then the notes."""
        where = ""
        if self.filename:
            where = f"{self.filename}:{self.line}:" + (f"{self.col}:" if self.col else "") + " "
        text = f"{where}{self.severity}: {self.message}"
        for note in self.notes:
            text += "\n" + note.format()
        return text


def file_location(location: ir.Location) -> tuple[str, int, int] | None:
    """The first file:line:col inside a location (through names, call
    sites and fused locations), or None."""
    if location.is_a_file():
        return location.filename, location.start_line, location.start_col
    if location.is_a_name():
        return file_location(location.child_loc)
    if location.is_a_callsite():
        return file_location(location.callee)
    if location.is_a_fused():
        for inner in location.locations:
            found = file_location(inner)
            if found:
                return found
    return None


def from_mlir(diagnostic, source_name: str | None = None) -> Diagnostic:
    """Converts an upstream diagnostic. Locations in text parsed from a
    string carry the file name `-`; `source_name` replaces it."""
    found = file_location(diagnostic.location)
    filename, line, col = found if found else (None, 0, 0)
    if filename == "-" and source_name:
        filename = source_name
    return Diagnostic(filename, line, col, SEVERITIES.get(diagnostic.severity, "error"),
                      diagnostic.message,
                      [from_mlir(n, source_name) for n in diagnostic.notes])


class DiagnosticCollector:
    """Collects every diagnostic emitted in a context while active:

        with DiagnosticCollector(ctx, "model.mlir") as diags:
            ...
        diags.errors
    """

    def __init__(self, context: ir.Context, source_name: str | None = None):
        self.context = context
        self.source_name = source_name
        self.diagnostics: list[Diagnostic] = []
        self._handler = None

    def __enter__(self) -> "DiagnosticCollector":
        self._handler = self.context.attach_diagnostic_handler(self._handle)
        return self

    def __exit__(self, *exc):
        # The handler holds this collector's bound method: dropping it
        # breaks a cycle the garbage collector cannot see through the
        # bindings, which would keep the context alive forever.
        self._handler.detach()
        self._handler = None
        return False

    def _handle(self, diagnostic) -> bool:
        self.diagnostics.append(from_mlir(diagnostic, self.source_name))
        return True

    def add_mlir_error(self, error: ir.MLIRError) -> None:
        """Records the diagnostics carried by a failed parse or pass run."""
        for diagnostic in error.error_diagnostics:
            self.diagnostics.append(from_mlir(diagnostic, self.source_name))

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "error"]


class CompileError(Exception):
    """Compilation failed with located diagnostics."""

    def __init__(self, diagnostics: list[Diagnostic], summary: str = "compilation failed"):
        self.diagnostics = diagnostics
        super().__init__("\n".join(d.format() for d in diagnostics) or summary)

    @classmethod
    def at(cls, location: ir.Location | None, message: str) -> "CompileError":
        """One error at `location` (the start of the file for the module's
        own `file:0:0` location)."""
        found = file_location(location) if location is not None else None
        filename, line, col = found if found else (None, 0, 0)
        if filename and line == 0:
            line, col = 1, 1
        return cls([Diagnostic(filename, line, col, "error", message)])


_INLINE_ASM_ERROR = re.compile(r"<inline asm>:\d+:\d+: error: (?P<message>[^\n]*)"
                               r"(?:\n(?P<source>[^\n]*))?")


def locate_in_module(error: CompileError, module: ir.Module) -> CompileError:
    """Gives the unlocated errors of an LLVM tool (llc, opt) a place in
    `module`, the lowered program they came from: an error in inline
    assembly goes to the `llvm.inline_asm` op whose template holds the
    instruction it quotes (or the first one). Other errors stay as they
    are; tools print them as their own (`TOOL: error: ...`)."""
    asm_ops = []

    def collect(op):
        if op.name == "llvm.inline_asm":
            asm_ops.append(op)
        return ir.WalkResult.ADVANCE

    diagnostics = []
    for diagnostic in error.diagnostics:
        match = _INLINE_ASM_ERROR.search(diagnostic.message)
        if diagnostic.filename is None and match:
            if not asm_ops:
                module.operation.walk(collect, ir.WalkOrder.PRE_ORDER)
            quoted = (match["source"] or "").split()
            chosen = next((op for op in asm_ops if quoted and quoted[0] in
                           str(op.attributes["asm_string"])), asm_ops[0] if asm_ops else None)
            if chosen is not None:
                place = file_location(chosen.location)
                if place is not None:
                    text = f"invalid inline assembly: {match['message']}"
                    if match["source"]:
                        text += f" (in '{match['source'].strip()}')"
                    diagnostic = Diagnostic(*place, "error", text, diagnostic.notes)
        diagnostics.append(diagnostic)
    return CompileError(diagnostics)


class UsageError(Exception):
    """Bad command-line input (unknown pass or option, missing file)."""


def run_tool(main, argv=None, prog: str | None = None) -> int:
    """Runs a tool's `main(argv)`: diagnostics and usage errors are printed
    to stderr and give exit code 1, with no Python traceback."""
    prog = prog or os.path.basename(sys.argv[0])
    try:
        return main(argv)
    except CompileError as error:
        for diagnostic in error.diagnostics:
            # An error with no place in the input is the tool's own.
            prefix = f"{prog}: " if diagnostic.filename is None else ""
            print(prefix + diagnostic.format(), file=sys.stderr)
        if not error.diagnostics:
            print(f"{prog}: error: {error}", file=sys.stderr)
        return 1
    except UsageError as error:
        print(f"{prog}: error: {error}", file=sys.stderr)
        return 1
    except MemoryError as error:
        print(f"{prog}: error: out of memory{f' ({error})' if str(error) else ''}",
              file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 1
    except Exception as error:  # a Lamina bug, not bad input: say so without a traceback
        if os.environ.get("LAMINA_DEBUG"):
            raise
        print(f"{prog}: internal error: {type(error).__name__}: {error} "
              "(set LAMINA_DEBUG=1 for a traceback)", file=sys.stderr)
        return 1


def check_output_path(path: str | None) -> None:
    """Raises UsageError when `path` cannot become an output file (it is a
    directory, or its directory does not exist or cannot be written), so
    that a tool says so before doing any work. `-` or None is stdout."""
    if path in (None, "-"):
        return
    directory = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise UsageError(f"cannot write output file '{path}': it is a directory")
    if not os.path.isdir(directory):
        raise UsageError(f"cannot write output file '{path}': directory "
                         f"'{os.path.dirname(path) or directory}' does not exist")
    if not os.access(directory, os.W_OK | os.X_OK):
        raise UsageError(f"cannot write output file '{path}': directory "
                         f"'{os.path.dirname(path) or directory}' is not writable")


@contextlib.contextmanager
def atomic_output(path: str | None, binary: bool = False):
    """Yields a stream that becomes `path` only when the block succeeds; on
    failure no file is created or modified. `-` or None is stdout. A path
    that cannot be written is a UsageError."""
    if path in (None, "-"):
        stream = sys.stdout.buffer if binary else sys.stdout
        yield stream
        stream.flush()
        return
    check_output_path(path)
    directory = os.path.dirname(os.path.abspath(path))
    temporary = os.path.join(directory, f".{os.path.basename(path)}.lamina-tmp-{os.getpid()}")
    try:
        try:
            stream = open(temporary, "wb" if binary else "w")
        except OSError as error:
            raise UsageError(f"cannot write output file '{path}': {error.strerror}") from None
        with stream:
            yield stream
        try:
            os.replace(temporary, path)
        except OSError as error:
            raise UsageError(f"cannot write output file '{path}': {error.strerror}") from None
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)
