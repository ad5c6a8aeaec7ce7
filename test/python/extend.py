# RUN: %PYTHON %s | FileCheck %s
#
# A new op and a new pass, defined from Python only: the op parses, verifies,
# lowers and runs, and the pass is found by its flag in pipelines.

from dataclasses import dataclass

import numpy as np
from mlir import rewrite
from mlir.dialects import arith

import lamina
from lamina.dialects import nn
from lamina.lowering import nn_to_linalg
from lamina.pass_registry import Pass, register_pass


def run(f):
    print("\nTEST:", f.__name__)
    f()
    return f


class HardSigmoidOp(nn.UnaryElementwiseOp, name="hard_sigmoid"):
    """Piecewise-linear sigmoid: `clip(x / 6 + 0.5, 0, 1)`.

    Example: %y = "nn.hard_sigmoid"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    """

    def compute(self, x):
        return np.clip(x / 6 + 0.5, 0, 1)


@nn_to_linalg.scalar_body(HardSigmoidOp)
def hard_sigmoid(op, x):
    constant = nn_to_linalg.constant
    scaled = arith.addf(arith.divf(x, constant(6.0)), constant(0.5))
    return arith.minimumf(arith.maximumf(scaled, constant(0.0)), constant(1.0))


def fold_double_neg(op, rewriter):
    inner = op.operands[0].owner
    if not hasattr(inner, "name") or inner.name != "nn.neg":
        return True
    rewriter.replace_op(op, [inner.operands[0]])


@register_pass
@dataclass
class NNFoldDoubleNeg(Pass):
    """Folds neg(neg(x)) to x."""

    argument = "nn-fold-double-neg"
    anchor = "func.func"

    def run(self, op):
        patterns = rewrite.RewritePatternSet(op.context)
        patterns.add("nn.neg", fold_double_neg)
        rewrite.apply_patterns_and_fold_greedily(op, patterns.freeze())


PROGRAM = """
func.func @main(%x: tensor<2x5xf32>) -> tensor<2x5xf32> {
  %0 = "nn.neg"(%x) : (tensor<2x5xf32>) -> tensor<2x5xf32>
  %1 = "nn.neg"(%0) : (tensor<2x5xf32>) -> tensor<2x5xf32>
  %2 = "nn.hard_sigmoid"(%1) : (tensor<2x5xf32>) -> tensor<2x5xf32>
  return %2 : tensor<2x5xf32>
}
"""


# CHECK-LABEL: TEST: new_op_runs
# CHECK: "nn.hard_sigmoid"
# CHECK: matches reference: True
@run
def new_op_runs():
    module = lamina.parse(PROGRAM)
    print(module)
    x = np.linspace(-5, 5, 10, dtype=np.float32).reshape(2, 5)
    result = lamina.compile(module)(x)
    print("matches reference:", np.allclose(result, np.clip(x / 6 + 0.5, 0, 1), atol=1e-6))


# CHECK-LABEL: TEST: new_op_is_verified
# CHECK: error: 'nn.hard_sigmoid' op result type tensor<3xf32> does not match the inferred type tensor<2xf32>
@run
def new_op_is_verified():
    try:
        lamina.parse('func.func @f(%x: tensor<2xf32>) -> tensor<3xf32> {\n'
                     '  %0 = "nn.hard_sigmoid"(%x) : (tensor<2xf32>) -> tensor<3xf32>\n'
                     '  return %0 : tensor<3xf32>\n}')
    except lamina.CompileError as error:
        print(error)


# CHECK-LABEL: TEST: new_pass_in_pipeline
# CHECK: "nn.hard_sigmoid"(%arg0)
# CHECK-NOT: "nn.neg"
@run
def new_pass_in_pipeline():
    pipe = lamina.Pipeline.for_target("cpu")
    pipe.insert_after("nn-canonicalize", "nn-fold-double-neg")
    print(pipe.run(lamina.parse(PROGRAM), until="nn"))


# The builders of lamina.nn are made on demand: the new op has one.
# CHECK-LABEL: TEST: new_op_has_a_builder
# CHECK: builder: hard_sigmoid
# CHECK: jit matches reference: True
@run
def new_op_has_a_builder():
    from lamina import nn as builders
    print("builder:", builders.hard_sigmoid.__name__)

    @lamina.jit
    def gate(x):
        return builders.hard_sigmoid(x * 2.0)

    x = np.linspace(-5, 5, 12, dtype=np.float32).reshape(3, 4)
    print("jit matches reference:",
          np.allclose(gate(x), np.clip(x * 2 / 6 + 0.5, 0, 1), atol=1e-6))
