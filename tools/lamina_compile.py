"""lamina-compile: runs a target's pipeline on a `.mlir` file up to a stage.

    lamina-compile model.mlir --emit=linalg
    lamina-compile model.mlir --target=cpu --emit=obj -o model.o
    lamina-compile model.mlir --emit=llvm-mlir --mlir-print-ir-after-all
    lamina-compile --target=cpu --print-pipeline
    lamina-compile model.mlir --load-plugin=my_ops.py --emit=linalg
    lamina-compile model.mlir --report=report.html
    lamina-compile model.mlir --tune=30 --emit=obj -o model.o
    lamina-compile model.mlir --target=cpu:aarch64 --emit=shared -o model.so
    lamina-compile model.mlir --target=cpu:aarch64 --emit=header -o model.h

MLIR stages print the module; `llvm` and `asm` print text; `obj` writes an
ELF object whose public functions are C-callable as `_mlir_ciface_NAME`
(see lamina.targets.cpu for the ABI); on cpu targets, `shared` writes a
shared library whose entry is `int lamina_ENTRY(const float *x, ...,
float *result0)` and `header` its C header (lamina.targets.library).
Errors print as `FILE:LINE:COL: error:`, the exit code is 1, and the `-o`
file is left untouched. `--report=FILE` also writes an HTML page with the
IR and time of every stage, the fusion graph and the kernels
(lamina.report).
"""

from __future__ import annotations

import argparse
import sys

from lamina.diagnostics import (CompileError, UsageError, atomic_output, check_output_path,
                                locate_in_module, run_tool)
from lamina.parsing import parse_source, read_source
from lamina.plugins import add_plugin_arguments, load_plugins
from lamina.targets import available_targets, get_target
from lamina.tuning import applied, budget, tune


# What cpu targets emit beyond their pipeline's stages (lamina.targets.library).
LIBRARY_PRODUCTS = ("shared", "header")


def _argument_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="lamina-compile", allow_abbrev=False,
        description="Compile an nn program with a target's pipeline, up to a stage.")
    parser.add_argument("input", nargs="?", help="input .mlir file, '-' for stdin")
    parser.add_argument("--target", default="cpu",
                        help=f"target spec (kinds: {', '.join(available_targets())}; "
                             "e.g. cpu, cpu:znver4)")
    parser.add_argument("--emit", default=None, metavar="STAGE",
                        help="the stage to stop after (default: the last stage, obj on cpu); "
                             "on cpu targets also 'shared' (a shared library with a C ABI) and "
                             "'header' (its C header)")
    parser.add_argument("--entry", default=None, metavar="NAME",
                        help="the function of --emit=shared/header (default: main or the only "
                             "public function)")
    parser.add_argument("-o", dest="output", default="-", help="output file (default stdout)")
    parser.add_argument("--mlir-print-ir-after-all", action="store_true",
                        help="print the product after each pass (stderr)")
    parser.add_argument("--print-pipeline", action="store_true",
                        help="print the target's stages and passes, and exit")
    parser.add_argument("--isolate-stages", action="store_true",
                        help="run the upstream passes of every MLIR stage in mlir-opt, so that "
                             "an aborting pass is reported instead of ending the compiler")
    parser.add_argument("--tune", type=budget, default=None, metavar="SECONDS",
                        help="search faster schedules for about SECONDS, running the program "
                             "on random inputs, before compiling (cpu target; the choices are "
                             "cached for later compiles)")
    parser.add_argument("--report", default=None, metavar="FILE.html",
                        help="also write an HTML report: the IR and time of every stage, the "
                             "fusion graph (drawn by Graphviz's dot) and the kernels")
    add_plugin_arguments(parser)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = _argument_parser()
    parser.error = lambda message: (_ for _ in ()).throw(UsageError(message))
    options = parser.parse_args(sys.argv[1:] if argv is None else argv)
    check_output_path(options.output)
    if options.report is not None:
        # Imported only here: the report's modules would slow every start.
        from lamina.report import check_report_path
        check_report_path(options.report)
    load_plugins(options.plugins)
    try:
        target = get_target(options.target)
    except ValueError as error:
        raise UsageError(str(error)) from None
    pipeline = target.pipeline()
    if options.print_pipeline:
        print(pipeline)
        return 0
    stage = pipeline.stages[-1] if options.emit is None else options.emit
    products = LIBRARY_PRODUCTS if target.kind == "cpu" else ()
    if stage not in pipeline.stages and stage not in products:
        raise UsageError(f"unknown stage '{stage}' for target '{target.name}' "
                         f"(stages: {', '.join([*pipeline.stages, *products])})")
    if options.entry is not None and stage not in products:
        raise UsageError("--entry is for --emit=shared and --emit=header")
    if options.input is None:
        raise UsageError("no input file")
    if options.tune is not None and (target.kind != "cpu" or not getattr(target, "native", True)):
        raise UsageError(f"--tune is for the cpu target of this machine's architecture, not "
                         f"'{target.name}'")

    source_name, text = read_source(options.input)

    module = parse_source(text, source_name)
    report = None
    if options.report:
        from lamina.report import CompileReport
        report = CompileReport(source_name, target.name)
        pipeline.observers.append(report)
    choices = {}
    try:
        if options.tune is not None:
            tuned = tune(module, target, seconds=options.tune)
            print(tuned.tuning.describe(), file=sys.stderr)
            choices = tuned.tuning.choices
        with applied(choices):
            if stage == "header":
                from lamina.targets.library import header_source
                product = header_source(target, module, options.entry, source_name)
            elif stage == "shared":
                from lamina.targets.library import shared_library
                product = shared_library(target, module, options.entry, pipeline,
                                         print_after_all=options.mlir_print_ir_after_all,
                                         isolate=options.isolate_stages)
            else:
                product = target.emit(module, stage, pipeline=pipeline,
                                      print_after_all=options.mlir_print_ir_after_all,
                                      isolate=options.isolate_stages)
    except CompileError as error:
        # LLVM's tools report without locations; the module, lowered in
        # place, still knows where each op came from.
        raise locate_in_module(error, module) from None
    if report is not None:
        from lamina.report import write_report
        write_report(report, options.report, "lamina-compile")
    binary = isinstance(product, bytes)
    with atomic_output(options.output, binary=binary) as out:
        out.write(product if binary else str(product).rstrip("\n") + "\n")
    return 0


def entry() -> None:
    sys.exit(run_tool(main, prog="lamina-compile"))


if __name__ == "__main__":
    entry()
