"""lamina-opt: runs Lamina and upstream passes over `.mlir` files, like mlir-opt.

    lamina-opt model.mlir --nn-canonicalize --canonicalize -o out.mlir
    lamina-opt - -p 'builtin.module(func.func(nn-canonicalize), cse)'
    lamina-opt bad.mlir --split-input-file --verify-diagnostics
    lamina-opt model.mlir --load-plugin=my_passes.py --my-pass
    lamina-opt model.mlir --isolate-passes --one-shot-bufferize
    lamina-opt model.mlir --nn-decompose --nn-fuse --view-graph=graph.svg

Every pass is a flag (`--NAME` or `--NAME='key=value ...'`), run in the order
given; `--pass-pipeline`/`-p` takes pipeline text. The IR is verified after
parsing, by the upstream verifier after every pass, by the Python rules of
Lamina's ops after every Lamina pass that can meet them (upstream passes
treat nn ops as opaque; the back-end passes see none), and by both when
the pipeline ends. With `--isolate-passes`,
upstream passes run in mlir-opt, so that one that aborts on its input
(the wheels are built with assertions) is an error instead of the end of
lamina-opt; upstream pass options are always tried once in mlir-opt
before they run in process, for the same reason. Errors print as `FILE:LINE:COL: error: ...`, the exit code is
1, and the `-o` file is left untouched. On success the output is byte for
byte what mlir-opt prints for the same program and flags, on programs of
upstream ops (checked by test/lamina-opt/mlir-opt-parity.test), so `diff`
between the two works.

`--view-graph=FILE` (`.svg`, `.png`, or `.dot`) also draws the program
after the passes: each function's nn graph with its fusion groups as
coloured clusters (lamina.graphview; laid out by Graphviz's `dot`).
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass

from mlir import ir

from lamina import graphview
from lamina.context import irdl, make_context, verify
from lamina.diagnostics import (CompileError, Diagnostic, DiagnosticCollector, UsageError,
                                atomic_output, check_output_path, run_tool)
from lamina.parsing import parse_source, read_source
from lamina.pass_pipeline import (PipelineElement, PipelineError, build_pass_manager,
                                  check_lamina_options, check_upstream_options,
                                  parse_pipeline, resolve,
                                  upstream_pass_help)
from lamina.pass_registry import _format_option as format_option
from lamina.pass_registry import all_passes
from lamina.plugins import add_plugin_arguments, load_plugins

SPLIT_MARKER = "// -----"


def _argument_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="lamina-opt", allow_abbrev=False,
        description="Lamina's modular optimizer driver (mlir-opt conventions). Every Lamina "
                    "and upstream pass is also a flag: --PASS or --PASS='key=value ...' "
                    "(see --list-passes).")
    parser.add_argument("input", nargs="?", default="-", help="input file, '-' for stdin")
    parser.add_argument("-o", dest="output", default="-", help="output file (default stdout)")
    parser.add_argument("--pass-pipeline", "-p", dest="pipelines", action="append", default=[],
                        metavar="PIPELINE", help="a textual pass pipeline")
    parser.add_argument("--split-input-file", nargs="?", const=SPLIT_MARKER, default=None,
                        metavar="MARKER",
                        help="process each chunk between '// -----' lines on its own")
    parser.add_argument("--verify-diagnostics", action="store_true",
                        help="check emitted diagnostics against expected-* comments")
    parser.add_argument("--mlir-print-ir-after-all", action="store_true",
                        help="print the IR after each pass (stderr)")
    parser.add_argument("--mlir-print-ir-before-all", action="store_true",
                        help="print the IR before each pass (stderr)")
    parser.add_argument("--mlir-print-op-generic", action="store_true",
                        help="print ops in the generic form")
    parser.add_argument("--mlir-print-debuginfo", action="store_true",
                        help="print locations")
    parser.add_argument("--mlir-timing", action="store_true", help="report pass timing (stderr)")
    parser.add_argument("--isolate-passes", action="store_true",
                        help="run upstream passes in mlir-opt, so that one that aborts or "
                             "crashes is reported at the input instead of ending lamina-opt")
    parser.add_argument("--list-passes", action="store_true",
                        help="list Lamina's and upstream passes with their summaries")
    parser.add_argument("--dump-irdl", action="store_true",
                        help="print the IRDL of every registered dialect, Lamina's and "
                             "plugins' (for mlir-opt --irdl-file=)")
    parser.add_argument("--view-graph", default=None, metavar="FILE",
                        help="also draw each function's graph after the passes, fusion groups "
                             "as clusters, into FILE (.svg, .png, or .dot; needs Graphviz's "
                             "dot for pictures)")
    add_plugin_arguments(parser)
    return parser


_TOOL_FLAGS = {o for a in _argument_parser()._actions for o in a.option_strings}
_FLAGS_WITH_VALUE = {"-o", "--pass-pipeline", "-p", "--load-plugin", "--view-graph"}


def split_arguments(argv: list[str]) -> tuple[list[str], list[PipelineElement]]:
    """Separates the tool's own options from the passes, which keep their
    command-line order (pass flags and pipelines interleave)."""
    tool_args: list[str] = []
    passes: list[PipelineElement] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        flag, eq, value = arg.partition("=")
        if flag in ("--pass-pipeline", "-p"):
            if not eq:
                if i + 1 >= len(argv):
                    raise UsageError(f"option '{flag}' needs a pipeline")
                i += 1
                value = argv[i]
            try:
                passes.extend(parse_pipeline(value, root="builtin.module"))
            except PipelineError as e:
                raise UsageError(str(e)) from None
        elif arg.startswith("--") and len(arg) > 2 and flag not in _TOOL_FLAGS:
            name, _, options = arg[2:].partition("=")
            options = options.strip()
            if options.startswith("{") and options.endswith("}"):
                options = options[1:-1]
            passes.append(PipelineElement(name, options.strip()))
        elif arg == "--split-input-file":
            # As in mlir-opt, the marker is given only as `--split-input-file=M`:
            # the next argument (often the input file) is never taken for it.
            tool_args.append(f"{arg}={SPLIT_MARKER}")
        else:
            tool_args.append(arg)
            if flag in _FLAGS_WITH_VALUE and not eq and i + 1 < len(argv):
                i += 1
                tool_args.append(argv[i])
        i += 1
    return tool_args, passes


# ---------------------------------------------------------------------------
# --verify-diagnostics, with mlir-opt's expected-* syntax.

_EXPECTED = re.compile(
    r"expected-(error|warning|note|remark)(-re)?\s*(?:@([+-]\d+|above|below|unknown))?\s*"
    r"(\d+)?\s*\{\{(.*?)\}\}\s*$")


@dataclass
class Expectation:
    severity: str
    line: int | None  # None: @unknown
    pattern: str
    is_regex: bool
    written_at: int
    count: int = 1

    def matches(self, diagnostic: Diagnostic) -> bool:
        if diagnostic.severity != self.severity:
            return False
        if self.line is None:
            if diagnostic.filename is not None:
                return False
        elif diagnostic.line != self.line:
            return False
        if self.is_regex:
            return _regex_of(self.pattern).search(diagnostic.message) is not None
        return self.pattern in diagnostic.message


def _regex_of(pattern: str) -> re.Pattern:
    """mlir's `-re` form: literal text with `{{regex}}` pieces."""
    pieces, rest = [], pattern
    while "{{" in rest:
        literal, _, tail = rest.partition("{{")
        regex, _, rest = tail.partition("}}")
        pieces.append(re.escape(literal) + regex)
    pieces.append(re.escape(rest))
    return re.compile("".join(pieces))


_DIRECTIVE = re.compile(r"expected-(error|warning|note|remark)(-re)?\b(.*)$")


def malformed_directives(text: str, first_line: int, source_name: str) -> list[str]:
    """Errors for expected-* directives that start a pattern but do not
    match the syntax (`// expected-error {{text` without its `}}`), which
    would otherwise expect nothing and let the check pass."""
    problems = []
    for index, line in enumerate(text.split("\n")):
        directive = _DIRECTIVE.search(line)
        if not directive or _EXPECTED.search(line):
            continue
        rest = directive.group(3)
        if not rest.strip().startswith(("@", "{{")):
            continue  # prose that mentions a directive
        opening = rest.find("{{")
        if opening < 0:
            problem = "lacks '{{' opening its pattern"
        elif "}}" not in rest[opening + 2:]:
            problem = "lacks '}}' closing its pattern"
        elif not rest.rstrip().endswith("}}"):
            problem = "has text after the '}}' closing its pattern"
        else:
            problem = "has no valid '@' offset or count before its pattern"
        problems.append(Diagnostic(source_name, first_line + index, directive.start() + 1, "error",
                                   f"malformed expected-{directive.group(1)} directive: it "
                                   f"{problem}").format())
    return problems


def parse_expectations(text: str, first_line: int) -> list[Expectation]:
    expectations = []
    lines = text.split("\n")
    for index, line in enumerate(lines):
        match = _EXPECTED.search(line)
        if not match:
            continue
        severity, regex, offset, count, pattern = match.groups()
        number = first_line + index
        if offset is None:
            target = number
        elif offset == "unknown":
            target = None
        elif offset in ("above", "below"):
            step = -1 if offset == "above" else 1
            j = index + step
            while 0 <= j < len(lines) and _EXPECTED.search(lines[j]):
                j += step
            target = first_line + j
        else:
            target = number + int(offset)
        expectations.append(Expectation(severity, target, pattern, bool(regex), number,
                                        int(count) if count else 1))
    return expectations


def check_expectations(diagnostics: list[Diagnostic], expectations: list[Expectation],
                       source_name: str) -> list[str]:
    """mlir-opt's verifier: each diagnostic must meet an expectation and
    each expectation must be met. Returns the failures, formatted."""
    failures = []
    remaining = {id(e): e.count for e in expectations}
    for diagnostic in diagnostics:
        for expectation in expectations:
            if remaining[id(expectation)] > 0 and expectation.matches(diagnostic):
                remaining[id(expectation)] -= 1
                break
        else:
            failures.append(Diagnostic(diagnostic.filename, diagnostic.line, diagnostic.col,
                                       "error", f"unexpected {diagnostic.severity}: "
                                       f"{diagnostic.message}").format())
    for expectation in expectations:
        if remaining[id(expectation)] > 0:
            failures.append(Diagnostic(source_name, expectation.written_at, 1, "error",
                                       f"expected {expectation.severity} \"{expectation.pattern}\""
                                       " was not produced").format())
    return failures


# ---------------------------------------------------------------------------
# Processing.


def _without_op_dumps(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """Drops the 'see current operation' notes upstream attaches to errors."""
    for diagnostic in diagnostics:
        diagnostic.notes = [n for n in diagnostic.notes
                            if not n.message.startswith("see current operation")]
    return diagnostics


@dataclass
class Chunk:
    """One piece of the input. `start` is where mlir-opt locates the chunk's
    implicit module: the end of the split marker before it (None for the
    first chunk, whose module is at `FILE:0:0`)."""

    text: str
    first_line: int
    start: tuple[int, int] | None = None


def split_chunks(text: str, marker: str | None) -> list[Chunk]:
    """The chunks between lines that are `marker` (the whole text if None)."""
    if not marker:
        return [Chunk(text, 1)]
    marker = marker.strip()
    chunks, current = [Chunk("", 1)], []
    for number, raw in enumerate(text.split("\n"), start=1):
        if raw.strip() == marker:
            chunks[-1].text = "\n".join(current)
            chunks.append(Chunk("", number + 1, (number, raw.index(marker) + len(marker) + 1)))
            current = []
        else:
            current.append(raw)
    chunks[-1].text = "\n".join(current)
    return chunks


def _printed(module, options) -> str:
    return module.operation.get_asm(print_generic_op_form=options.mlir_print_op_generic,
                                    enable_debug_info=options.mlir_print_debuginfo)


def _run_isolated(passes, module) -> None:
    """Runs the passes as one isolated stage: upstream passes in mlir-opt
    (an abort there is a located error), Lamina's in process."""
    from lamina.pipeline import Pipeline, Stage
    Pipeline([Stage("lamina-opt", list(passes), isolated=True)]).run(module)
    if not verify(module.operation):
        raise CompileError([])


def process_chunk(chunk: Chunk, source_name: str, elements, options, modules=None):
    """Parses, runs the passes and prints one chunk. Returns the output text
    (None on failure) and every diagnostic emitted; the module is appended
    to `modules`, if given, on success."""
    context = make_context()
    with context, DiagnosticCollector(context, source_name) as collected:
        try:
            module = parse_source(chunk.text, source_name, context, chunk.first_line)
            if chunk.start is not None:
                module.operation.location = ir.Location.file(source_name, *chunk.start)
            passes = resolve(elements, context)
            if options.isolate_passes:
                _run_isolated(passes, module)
                if modules is not None:
                    modules.append(module)
                return _printed(module, options), _without_op_dumps(collected.diagnostics)
            pm = build_pass_manager(passes, context)
            if options.mlir_print_ir_after_all or options.mlir_print_ir_before_all:
                context.enable_multithreading(False)
                pm.enable_ir_printing(print_before_all=options.mlir_print_ir_before_all,
                                      print_after_all=options.mlir_print_ir_after_all,
                                      print_module_scope=True)
            if options.mlir_timing:
                pm.enable_timing()
            try:
                pm.run(module.operation)
            except ir.MLIRError as error:
                collected.add_mlir_error(error)
                raise CompileError(_without_op_dumps(collected.diagnostics)) from None
            finally:
                del pm
            if not verify(module.operation):
                raise CompileError(collected.diagnostics)
            if modules is not None:
                modules.append(module)
            return _printed(module, options), _without_op_dumps(collected.diagnostics)
        except CompileError as error:
            diagnostics = error.diagnostics
            for d in collected.diagnostics:
                if d not in diagnostics:
                    diagnostics.append(d)
            return None, _without_op_dumps(diagnostics)


def list_passes() -> str:
    lines = ["Lamina passes:"]
    for argument, cls in all_passes().items():
        lines.append(f"  --{argument:<32} {cls.summary()}")
        defaults = cls()  # every option has a default (from_options("") relies on it)
        for field in cls.options():
            value = format_option(getattr(defaults, field.name))
            lines.append(f"      {field.name.replace('_', '-')}={value}")
    lines.append("")
    lines.append("Upstream MLIR passes:")
    for flag, summary in upstream_pass_help():
        lines.append(f"  --{flag:<52} -   {summary}" if summary else f"  --{flag}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    tool_args, elements = split_arguments(argv)
    parser = _argument_parser()
    parser.error = lambda message: (_ for _ in ()).throw(UsageError(message))
    options = parser.parse_args(tool_args)
    check_output_path(options.output)
    picture = None
    if options.view_graph is not None:
        check_output_path(options.view_graph)
        try:
            picture = graphview.picture_format(options.view_graph, "--view-graph")
            if picture is not None:
                graphview.find_dot("--view-graph")
        except graphview.GraphError as error:
            raise UsageError(str(error)) from None
    # Before anything that reads the registries: a plugin's passes are
    # flags, its dialects parse, and both are listed.
    load_plugins(options.plugins)

    if options.list_passes:
        sys.stdout.write(list_passes())
        return 0
    if options.dump_irdl:
        with atomic_output(options.output) as out:
            out.write(irdl())
        return 0

    if options.isolate_passes and (options.mlir_print_ir_after_all or
                                   options.mlir_print_ir_before_all or options.mlir_timing):
        raise UsageError("--isolate-passes cannot be combined with --mlir-print-ir-* or "
                         "--mlir-timing (the passes run in another process)")

    source_name, text = read_source(options.input)

    # Unknown passes and bad options are usage errors, reported before any IR.
    try:
        resolve(elements, make_context())
        check_upstream_options(elements)
        check_lamina_options(elements)
    except PipelineError as e:
        raise UsageError(str(e)) from None

    # The output is mlir-opt's, byte for byte: each chunk's module and a
    # newline, chunks joined by `// -----` lines (a chunk that failed as
    # --verify-diagnostics expected prints nothing between its markers).
    outputs, failed, messages = [], False, []
    modules = [] if options.view_graph is not None else None
    for chunk in split_chunks(text, options.split_input_file):
        output, diagnostics = process_chunk(chunk, source_name, elements, options, modules)
        if options.verify_diagnostics:
            failures = malformed_directives(chunk.text, chunk.first_line, source_name)
            failures += check_expectations(
                diagnostics, parse_expectations(chunk.text, chunk.first_line), source_name)
            messages.extend(failures)
            failed |= bool(failures)
        else:
            # An error with no place in the input is the tool's own (as in run_tool).
            messages.extend(("lamina-opt: " if d.filename is None else "") + d.format()
                            for d in diagnostics)
            failed |= output is None
        outputs.append("" if output is None else output + "\n")

    for message in messages:
        print(message, file=sys.stderr)
    if failed:
        return 1
    if options.view_graph is not None:
        dot = graphview.to_dot(modules)
        try:
            drawn = dot.encode() if picture is None else graphview.render(dot, picture)
        except graphview.GraphError as error:
            raise UsageError(str(error)) from None
        with atomic_output(options.view_graph, binary=True) as out:
            out.write(drawn)
    with atomic_output(options.output) as out:
        out.write(f"{SPLIT_MARKER}\n".join(outputs))
    return 0


def entry() -> None:
    sys.exit(run_tool(main, prog="lamina-opt"))


if __name__ == "__main__":
    entry()
