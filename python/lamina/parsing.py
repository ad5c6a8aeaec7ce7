"""Reading `.mlir` text into verified modules with file locations."""

from __future__ import annotations

import os
import re
import sys

from mlir import ir

from lamina.context import lookup_dialect, make_context, verify
from lamina.diagnostics import CompileError, Diagnostic, DiagnosticCollector, UsageError

# How deep brackets of any kind may nest. MLIR's parser recurses once per
# level (regions, attributes, types, affine expressions) and a few thousand
# levels overflow its stack, which kills the process; real programs stay
# far below this.
MAX_NESTING_DEPTH = 512

# What the nesting scan looks at: strings and comments (skipped), the
# two-character tokens whose `>` or `<` is no bracket, and brackets.
_NESTING_TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"?|//[^\n]*|->|>=|<=|[(\[{<>)\]}]')


def _relocate(module: ir.Module, source_name: str) -> None:
    """Text parsed from a string has locations in file `-`; give them the
    real file name so that later diagnostics point into the file."""
    def renamed(location: ir.Location) -> ir.Location | None:
        if location.is_a_file() and location.filename == "-":
            return ir.Location.file(source_name, location.start_line, location.start_col,
                                    context=location.context)
        return None

    def visit(op):
        location = renamed(op.location)
        if location is not None:
            op.location = location
        for region in op.regions:
            for block in region.blocks:
                for argument in block.arguments:
                    location = renamed(argument.location)
                    if location is not None:
                        argument.set_location(location)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)


def read_source(path: str) -> tuple[str, str]:
    """The name and text of a tool's input file (`-` is stdin). Bytes that
    are not UTF-8 become U+FFFD, which the parser then reports at their line
    instead of the tool failing to decode the file."""
    if path == "-":
        return "<stdin>", sys.stdin.buffer.read().decode("utf-8", "replace")
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return path, f.read()
    except OSError as error:
        raise UsageError(f"cannot open input file '{path}': {error.strerror}") from None


_CUSTOM_OP = re.compile(r"Dialect `(\w+)' not found for custom op '((\w+)\.\w+)' ")


def _explained(message: str) -> str:
    """The parser's word for a Lamina op written in custom form: Lamina's
    dialects have only the generic form (their ops are not registered with
    MLIR, so the parser says it does not know the dialect)."""
    match = _CUSTOM_OP.match(message)
    if match and lookup_dialect(match.group(1)) is not None:
        name = match.group(2)
        return (f"custom op '{name}' is unknown: the ops of the {match.group(1)} dialect are "
                f"written in the generic form, \"{name}\"(...) : (...) -> ...")
    return message


def check_nesting(text: str, source_name: str, first_line: int = 1) -> None:
    """Raises CompileError at the first bracket that opens a level deeper
    than MAX_NESTING_DEPTH (strings and comments do not count)."""
    depth = 0
    for token in _NESTING_TOKEN.finditer(text):
        kind = token.group()
        if kind in "([{<":
            depth += 1
            if depth > MAX_NESTING_DEPTH:
                start = token.start()
                line = first_line + text.count("\n", 0, start)
                col = start - (text.rfind("\n", 0, start) + 1) + 1
                raise CompileError([Diagnostic(
                    source_name, line, col, "error",
                    f"brackets nest more than {MAX_NESTING_DEPTH} levels deep here (Lamina's "
                    "limit, which keeps the parser within its stack)")])
        elif kind in ")]}>":
            depth = max(depth - 1, 0)


# Syntax upstream's parser accepts far enough to abort on (an assertion
# in a build with assertions), with what to say instead.
_ABORTING_SYNTAX = [
    (re.compile(r"\barray\s*<\s*index\b"),
     "dense arrays of index elements are not supported (upstream's parser aborts on them); "
     "write array<i64: ...>"),
]
_STRING_OR_COMMENT = re.compile(r'"(?:[^"\\\n]|\\.)*"?|//[^\n]*')


def check_aborting_syntax(text: str, source_name: str, first_line: int = 1) -> None:
    """Raises CompileError at syntax that would abort the parser (outside
    strings and comments)."""
    code = _STRING_OR_COMMENT.sub(lambda m: " " * len(m.group()), text)
    for pattern, message in _ABORTING_SYNTAX:
        match = pattern.search(code)
        if match:
            start = match.start()
            line = first_line + text.count("\n", 0, start)
            col = start - (text.rfind("\n", 0, start) + 1) + 1
            raise CompileError([Diagnostic(source_name, line, col, "error", message)])


def parse_source(text: str, source_name: str = "<stdin>", context: ir.Context | None = None,
                 first_line: int = 1) -> ir.Module:
    """Parses and verifies `text`. Lines are numbered from `first_line` (a
    chunk of a split file keeps its lines). Raises CompileError with located
    diagnostics."""
    check_nesting(text, source_name, first_line)
    check_aborting_syntax(text, source_name, first_line)
    context = context or make_context()
    padded = "\n" * (first_line - 1) + text
    with context, DiagnosticCollector(context, source_name) as diagnostics:
        try:
            module = ir.Module.parse(padded)
        except ir.MLIRError as error:
            diagnostics.add_mlir_error(error)
            for diagnostic in diagnostics.diagnostics:
                explained = _explained(diagnostic.message)
                if explained != diagnostic.message:
                    diagnostic.message, diagnostic.notes = explained, []
            raise CompileError(diagnostics.diagnostics) from None
        _relocate(module, source_name)
        if not verify(module.operation):
            raise CompileError(diagnostics.diagnostics)
    return module


# What MLIR text has and a file name has not: brackets, SSA names, symbols,
# strings, spaces between tokens.
_MLIR_SYNTAX = re.compile(r'[\s{}()<>%@"=:]')


def _looks_like_file_name(text: str) -> bool:
    return not _MLIR_SYNTAX.search(text.strip()) and bool(text.strip())


def parse_file(path: str | os.PathLike, context: ir.Context | None = None) -> ir.Module:
    """A verified module from the `.mlir` file at `path` (a str or a
    pathlib.Path), with `path:line:col` locations. Raises OSError when the
    file cannot be read, CompileError when it does not parse or verify."""
    path = os.fspath(path)
    with open(path, encoding="utf-8", errors="replace") as f:
        return parse_source(f.read(), path, context)


def parse(source: str | os.PathLike, context: ir.Context | None = None) -> ir.Module:
    """A verified module from MLIR text, or from a file: a pathlib.Path, or a
    string that is a file name (one word without MLIR syntax) of a file that
    exists. A file name of no file is an error that says so, instead of a
    parse of the name as MLIR. Raises CompileError."""
    if isinstance(source, os.PathLike):
        return parse_file(source, context)
    if _looks_like_file_name(source):
        name = source.strip()
        if os.path.isfile(name):
            return parse_file(name, context)
        raise CompileError([Diagnostic(
            "<string>", 1, 1, "error",
            f"'{name}' is not MLIR text but a file name, and there is no such file in "
            f"{os.getcwd()}: did you mean to read a file? lamina.parse_file(path) reads one, "
            "with the path relative to the current directory or absolute")])
    return parse_source(source, "<string>", context)
