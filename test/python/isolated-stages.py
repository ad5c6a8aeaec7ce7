# RUN: %PYTHON %s | FileCheck %s
# RUN: not %PYTHON %s --tool 2> %t.err | count 0
# RUN: FileCheck %s --check-prefix=TOOL < %t.err
# RUN: not --crash %PYTHON %s --in-process 2> %t.crash
# RUN: FileCheck %s --check-prefix=CRASH < %t.crash
#
# Isolated stages run their upstream passes in mlir-opt. An upstream pass
# that aborts (the wheels are built with assertions) is then a located
# error, exit code 1 in a tool, instead of the end of the Python process,
# which is what the same stage does in process (the --crash run above).

import sys

from lamina.diagnostics import CompileError, run_tool
from lamina.parsing import parse_source
from lamina.pipeline import Pipeline, Stage

SOURCE = """func.func @main(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = "nn.add"(%a, %b) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
"""

# nvvm-attach-target with an optimization level out of range fails an
# assertion in LLVM 22, on any module.
ABORTING = "nvvm-attach-target{O=99}"


def pipeline(isolated: bool) -> Pipeline:
    return Pipeline([
        Stage("linalg", ["convert-nn-to-linalg", "canonicalize"]),
        Stage("gpu", ["cse", ABORTING, "canonicalize"], isolated=isolated),
    ])


# `--tool`: the aborting stage as a tool runs it; `--in-process`: not isolated.
MODE = sys.argv[1] if len(sys.argv) > 1 else None


def run(f):
    if MODE is None:
        print("\nTEST:", f.__name__)
        f()
    return f


# CHECK-LABEL: TEST: printed_stage_says_isolated
# CHECK: gpu:  # isolated: upstream passes run in mlir-opt
# CHECK-NEXT: cse
@run
def printed_stage_says_isolated():
    print(pipeline(isolated=True))


# CHECK-LABEL: TEST: abort_is_a_located_error
# CHECK: model.mlir:1:1: error: upstream pass 'nvvm-attach-target{O=99}' aborted (signal 6) in stage 'gpu'
# CHECK-NEXT: note: mlir-opt's stderr ends with:
# CHECK: Assertion
# CHECK: still running
@run
def abort_is_a_located_error():
    try:
        pipeline(isolated=True).run(parse_source(SOURCE, "model.mlir"))
    except CompileError as error:
        print(error)
    print("still running")


# CHECK-LABEL: TEST: whole_run_isolated
# CHECK: model.mlir:1:1: error: upstream pass 'nvvm-attach-target{O=99}' aborted (signal 6) in stage 'gpu'
@run
def whole_run_isolated():
    try:
        pipeline(isolated=False).run(parse_source(SOURCE, "model.mlir"), isolate=True)
    except CompileError as error:
        print(error.diagnostics[0].format().splitlines()[0])


def main(argv):
    pipeline(isolated=True).run(parse_source(SOURCE, "model.mlir"))
    return 0


# TOOL: {{^}}model.mlir:1:1: error: upstream pass 'nvvm-attach-target{O=99}' aborted (signal 6) in stage 'gpu'; the stage ran isolated, so this ended mlir-opt, not the compiler{{$}}
# TOOL-NEXT: {{^}}note: mlir-opt's stderr ends with:{{$}}
# TOOL-NOT: Traceback
# TOOL-NOT: Stack dump
# CRASH: Assertion {{.*}} failed
if MODE == "--tool":
    sys.exit(run_tool(main, prog="isolated-stages"))
if MODE == "--in-process":
    pipeline(isolated=False).run(parse_source(SOURCE, "model.mlir"))
