"""A dialect defined outside Lamina's package, loaded with --load-plugin.

It has an op on workgroup memory with no result, an op with two results and
a token, an op with a symbol attribute, and an elementwise op with a
lowering to linalg and a NumPy reference.
"""

from typing import Optional

import numpy as np
from mlir.dialects import arith, math

from lamina.dialects.opdef import (Dialect, F64Attr, FloatAttr, MemRefOf, Operand, Result,
                                   SymbolRefAttr, TensorOf, Variadic, VerifyError)
from lamina.lowering import nn_to_linalg


class PlugTest(Dialect, name="plugtest"):
    """A test dialect."""


class TokenType(PlugTest.Type, name="token"):
    """Completion of an operation that runs asynchronously."""


class FillSharedOp(PlugTest.Operation, name="fill_shared"):
    """Fills a tile of workgroup (shared) memory with `value`.

    Example: "plugtest.fill_shared"(%t) {value = 1.0 : f32} : (memref<16x16xf16, #gpu.address_space<workgroup>>) -> ()
    """

    tile: Operand[MemRefOf("f16", "f32", space="workgroup")]
    value: FloatAttr = 0.0


class SplitOp(PlugTest.Operation, name="split"):
    """Splits a tensor in two halves along its last dim, and says when.

    Example: %lo, %hi, %done = "plugtest.split"(%x) : (tensor<2x8xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>, !plugtest.token)
    """

    x: Operand
    low: Result
    high: Result
    done: Result[TokenType]

    def infer_type(self, x):
        if x.rank == 0 or x.shape[-1] % 2:
            raise VerifyError(f"the last dim of {x} must be even")
        half = x.with_shape(x.shape[:-1] + (x.shape[-1] // 2,))
        return half, half, TokenType.view()


class InvokeOp(PlugTest.Operation, name="invoke"):
    """Calls `callee` on the operands; the results are the callee's.

    Example: %y = "plugtest.invoke"(%x) {callee = @kernel} : (tensor<4xf32>) -> tensor<4xf32>
    """

    args: Variadic[Operand[TensorOf("f32", "f16")]]
    outs: Variadic[Result[TensorOf("f32", "f16")]]
    callee: SymbolRefAttr


class ScaledTanhOp(PlugTest.Operation, name="scaled_tanh"):
    """`alpha * tanh(x) + shift`, elementwise; `shift` broadcasts.

    Example: %y = "plugtest.scaled_tanh"(%x) {alpha = 2.0 : f64} : (tensor<4xf32>) -> tensor<4xf32>
    """

    x: Operand
    shift: Optional[Operand]
    result: Result
    alpha: F64Attr = 1.0

    def infer_type(self, x, shift):
        if shift is not None and (shift.dtype != x.dtype or shift.shape != x.shape[-shift.rank:]
                                  if shift.rank else False):
            raise VerifyError(f"shift {shift} does not broadcast to {x}")
        return x

    def reference(self, x, shift):
        y = self.alpha * np.tanh(x.astype(np.float32))
        if shift is not None:
            y = y + shift.astype(np.float32)
        return y.astype(x.dtype)


@nn_to_linalg.lowering(ScaledTanhOp)
def lower_scaled_tanh(op, x, shift):
    def body(s, *b):
        value = arith.mulf(nn_to_linalg.constant(op.alpha), math.tanh(s))
        return arith.addf(value, b[0]) if b else value
    return nn_to_linalg.elementwise(op.result_type, [x] + ([shift] if shift is not None else []),
                                    body)
