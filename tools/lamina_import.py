"""lamina-import: turns an ONNX model into a `.mlir` file of nn ops.

    lamina-import model.onnx -o model.mlir
    lamina-import model.onnx --params=constants -o model.mlir
    lamina-import model.onnx --mlir-print-debuginfo

The model's graph becomes `func.func @main`: its float initializers (with
`--params=arguments`, the default), each named in `lamina.parameter`, then
its inputs, each named in `lamina.input`, are the arguments; with
`--params=constants` the initializers are constants. A model that cannot be imported is reported as
`model.onnx: error: ...`, listing every node that cannot become nn ops
with its index, name and op type; the exit code is 1 and the `-o` file is
left untouched. With `--mlir-print-debuginfo` every op carries the
location of its ONNX node (its name, and its index in the graph as the
line), so that later tools report errors at the node.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys

from lamina.diagnostics import UsageError, atomic_output, check_output_path, run_tool
from lamina.plugins import add_plugin_arguments, load_plugins


def _argument_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="lamina-import", allow_abbrev=False,
        description="Import an ONNX model as an nn program (.mlir).")
    parser.add_argument("input", nargs="?", help="input .onnx file, '-' for stdin")
    parser.add_argument("-o", dest="output", default="-", help="output file (default stdout)")
    parser.add_argument("--params", choices=("arguments", "constants"), default="arguments",
                        help="initializers as arguments of @main before the inputs (default) "
                             "or as constants")
    parser.add_argument("--mlir-print-debuginfo", action="store_true",
                        help="print locations (each op's ONNX node)")
    parser.add_argument("--mlir-print-op-generic", action="store_true",
                        help="print ops in the generic form")
    add_plugin_arguments(parser)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = _argument_parser()
    parser.error = lambda message: (_ for _ in ()).throw(UsageError(message))
    options = parser.parse_args(sys.argv[1:] if argv is None else argv)
    check_output_path(options.output)
    load_plugins(options.plugins)
    if options.input is None:
        raise UsageError("no input file")
    if importlib.util.find_spec("onnx") is None:
        raise UsageError("importing ONNX models needs the onnx package: "
                         "pip install 'lamina[onnx]'")
    from lamina.importers.onnx_import import from_onnx

    if options.input == "-":
        model, source_name = sys.stdin.buffer.read(), "<stdin>"
    else:
        try:
            with open(options.input, "rb") as f:
                f.read(1)
        except OSError as error:
            raise UsageError(f"cannot open input file '{options.input}': "
                             f"{error.strerror}") from None
        model, source_name = options.input, options.input
    module = from_onnx(model, params=options.params, source_name=source_name)
    text = module.operation.get_asm(enable_debug_info=options.mlir_print_debuginfo,
                                    print_generic_op_form=options.mlir_print_op_generic)
    with atomic_output(options.output) as out:
        out.write(text.rstrip("\n") + "\n")
    return 0


def entry() -> None:
    sys.exit(run_tool(main, prog="lamina-import"))


if __name__ == "__main__":
    entry()
