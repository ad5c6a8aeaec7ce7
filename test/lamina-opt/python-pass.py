# RUN: %PYTHON %s | FileCheck %s

# Lamina passes written in Python are lamina-opt flags and pipeline elements:
# options as `--pass='key=value'` or `{key=value}`, nesting under func.func,
# order among upstream passes, --list-passes, and errors. The passes are
# registered in this process and lamina-opt's main runs here.

from __future__ import annotations

import contextlib
import io
import os
import tempfile
from dataclasses import dataclass, field

from mlir import ir

from lamina.diagnostics import run_tool
from lamina.pass_registry import Pass, PassFailure, register_pass
from lamina.tools.lamina_opt import main


@register_pass
@dataclass
class TestCountOps(Pass):
    """Records the number of ops in each function as an attribute (test pass).

    The attribute is named `prefix`; its value is the count times `scale`.
    """

    argument = "test-count-ops"
    anchor = "func.func"
    prefix: str = "count"
    scale: int = 1
    sizes: list[int] = field(default_factory=lambda: [2, 4])

    def run(self, op):
        count = sum(len(block.operations) for region in op.regions for block in region)
        op.attributes[self.prefix] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64),
                                                        count * self.scale)
        op.attributes[f"{self.prefix}_sizes"] = ir.DenseI64ArrayAttr.get(list(self.sizes))


@register_pass
@dataclass
class TestModuleOnly(Pass):
    """Runs on the module only (test pass)."""

    argument = "test-module-only"

    def run(self, op):
        pass


@register_pass
@dataclass
class TestRejectRelu(Pass):
    """Fails on the first nn.relu (test pass)."""

    argument = "test-reject-relu"
    anchor = "func.func"

    def run(self, op):
        for block in op.regions[0]:
            for inner in block.operations:
                if inner.operation.name == "nn.relu":
                    raise PassFailure("relu is not allowed here", inner.location)


SOURCE = """\
func.func @f(%a: f32, %x: tensor<4xf32>) -> f32 {
  %0 = arith.addf %a, %a : f32
  %1 = arith.addf %a, %a : f32
  %2 = arith.mulf %0, %1 : f32
  return %2 : f32
}
func.func @g(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "nn.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""


def lamina_opt(*args):
    """Runs lamina-opt's main on SOURCE; prints its exit code, stdout and stderr."""
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "input.mlir")
        with open(path, "w") as f:
            f.write(SOURCE)
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = run_tool(main, [path, *args], prog="lamina-opt")
    print("exit:", code)
    print(out.getvalue().replace(path, "INPUT"), end="")
    print(err.getvalue().replace(path, "INPUT"), end="")


def run(f):
    print("\nTEST:", f.__name__)
    f()
    return f


# CHECK-LABEL: TEST: list_passes
# CHECK: Lamina passes:
# CHECK: --test-count-ops {{ *}}Records the number of ops in each function as an attribute (test pass).
# CHECK-NEXT: prefix=count
# CHECK-NEXT: scale=1
# CHECK-NEXT: sizes=2,4
# CHECK-NEXT: --test-module-only {{ *}}Runs on the module only (test pass).
# CHECK: Upstream MLIR passes:
# CHECK-NEXT: upstream passes listed: True
@run
def list_passes():
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main(["--list-passes"])
    lamina_part, _, upstream_part = out.getvalue().partition("Upstream MLIR passes:")
    print(lamina_part + "Upstream MLIR passes:")
    print("upstream passes listed:", len(upstream_part.splitlines()) > 100)


# CHECK-LABEL: TEST: defaults
# CHECK: exit: 0
# CHECK: func.func @f({{.*}}) -> f32 attributes {count = 4 : i64, count_sizes = array<i64: 2, 4>}
# CHECK: func.func @g({{.*}}) -> tensor<4xf32> attributes {count = 2 : i64, count_sizes = array<i64: 2, 4>}
@run
def defaults():
    lamina_opt("--test-count-ops")


# CHECK-LABEL: TEST: flag_options
# CHECK: exit: 0
# CHECK: func.func @f({{.*}}) -> f32 attributes {n = 12 : i64, n_sizes = array<i64: 1, 2, 3>}
@run
def flag_options():
    lamina_opt("--test-count-ops=prefix=n scale=3 sizes=1,2,3")


# CHECK-LABEL: TEST: braced_flag_options
# CHECK: exit: 0
# CHECK: func.func @f({{.*}}) -> f32 attributes {m = 8 : i64, m_sizes = array<i64: 2, 4>}
@run
def braced_flag_options():
    lamina_opt("--test-count-ops={prefix=m scale=2}")


# Upstream CSE runs between the two counts: 4 ops before, 3 after.
# CHECK-LABEL: TEST: order_among_upstream_passes
# CHECK: exit: 0
# CHECK: func.func @f({{.*}}) -> f32 attributes {after = 3 : i64, {{.*}}before = 4 : i64
@run
def order_among_upstream_passes():
    lamina_opt("--test-count-ops=prefix=before", "--cse", "--test-count-ops=prefix=after")


# CHECK-LABEL: TEST: nested_pipeline
# CHECK: exit: 0
# CHECK: func.func @f({{.*}}) -> f32 attributes {after = 3 : i64, {{.*}}before = 4 : i64
@run
def nested_pipeline():
    lamina_opt("-p", "builtin.module(func.func(test-count-ops{prefix=before}, cse, "
                     "test-count-ops{prefix=after}), canonicalize)")


# CHECK-LABEL: TEST: pipeline_then_flag
# CHECK: exit: 0
# CHECK: func.func @f({{.*}}) -> f32 attributes {after = 3 : i64, {{.*}}before = 4 : i64
@run
def pipeline_then_flag():
    lamina_opt("-p", "builtin.module(func.func(test-count-ops{prefix=before}, cse))",
               "--test-count-ops=prefix=after")


# CHECK-LABEL: TEST: unknown_option
# CHECK: exit: 1
# CHECK-NEXT: lamina-opt: error: pass 'test-count-ops' has no option 'depth' (options: prefix, scale, sizes)
@run
def unknown_option():
    lamina_opt("--test-count-ops=depth=2")


# CHECK-LABEL: TEST: bad_option_value
# CHECK: exit: 1
# CHECK-NEXT: lamina-opt: error: option 'scale' of pass 'test-count-ops' expects int, got 'big'
@run
def bad_option_value():
    lamina_opt("-p", "builtin.module(func.func(test-count-ops{scale=big}))")


# CHECK-LABEL: TEST: module_pass_nested_in_function
# CHECK: exit: 1
# CHECK-NEXT: lamina-opt: error: pass 'test-module-only' runs on 'builtin.module' and cannot be nested in 'func.func'
@run
def module_pass_nested_in_function():
    lamina_opt("-p", "builtin.module(func.func(test-module-only))")


# A pass failure is an error at the op the pass names; nothing is printed.
# CHECK-LABEL: TEST: pass_failure
# CHECK: exit: 1
# CHECK-NEXT: INPUT:8:8: error: relu is not allowed here
# CHECK-NOT: module
@run
def pass_failure():
    lamina_opt("--cse", "--test-reject-relu", "--canonicalize")
