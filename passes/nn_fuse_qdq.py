"""--nn-fuse-qdq: a matmul between dequantisations and a quantisation (the
QDQ form of ONNX models and PyTorch 2 export quantisation) becomes an
integer matmul with an i32 accumulator and a requantising epilogue.

The pattern, with every scale and zero point per tensor except the
weight's, which may be per column (`axis = 1` of a 2-D weight):

    %a = "nn.dequantize"(%a_q, %sa, %za)      [..., M, K], i8 or ui8
    %w = "nn.dequantize"(%w_q, %sw, %zw)      [K, N], i8 or ui8
    %y = "nn.matmul"(%a, %w)                  f32, used by the quantisation only
    %q = "nn.quantize"(%y, %sy, %zy)

becomes, exactly in i32 (wrapping arithmetic: every term may wrap, their
sum does not while K * 255 * 255 < 2^31, K < 33,025):

    acc = a8 x w8 - zw * rowsum(a8) - za * colsum(w8) + K * za * zw
    q   = saturate(round_half_to_even(f32(acc) * (sa * sw / sy)) + zy)

where `w8` (and its zero point) is the weight as i8 and `a8` the
activation as i8 or ui8: a ui8 activation stays as it is (ui8 x i8 is
what AVX512-VNNI's vpdpbusd multiplies, with no shift of its own), a ui8
weight is moved to i8 by subtracting 128 from it and from its zero point
(which changes no difference `w - zw`). A ui8 weight made by an
`nn.quantize` is made as i8 directly (the same quantisation with the zero
point less 128: saturating to [0, 255] and subtracting 128 is saturating
to [-128, 127]); another goes through an exact dequantise-quantise by
scale 1. The integer matmul is `nn.matmul` on i8 (or ui8) x i8
operands (an i32 result); the row and column sums are matmuls with vectors of ones; the
epilogue is `nn.cast` to f32, `nn.mul` by the combined scale (computed
in f32 as `(sa * sw) / sy`, as ONNX Runtime's QLinearMatMul computes it)
and `nn.quantize` by scale 1, which rounds and saturates.

Zero points must be constants (as quantisers write them); scales may be
values. With constant weights, `nn-fold-constants` then folds the weight's
conversion to i8, its column sums, the zero-point terms and the combined
scale into constants.

Expects verified nn IR. Guarantees: each rewritten quantisation's result
is the integer computation above, which differs from the float
computation it replaces by at most one in the last place before rounding,
so by at most one quantisation step where that float computation was
close to a tie; matmuls whose float result is used elsewhere, and every
other form (activations per channel, batched weights, a bias between the
matmul and the quantisation) are left unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from mlir import ir
from mlir.dialects import arith

from lamina.dialects import nn
from lamina.linalg_builders import defining_op
from lamina.pass_registry import Pass, register_pass
from lamina.reference import constant_array
from lamina.types import TensorType

# What a ui8 operand is moved by to become i8.
UNSIGNED_OFFSET = 128


def _type(value: ir.Value) -> TensorType:
    return TensorType.from_mlir(value.type)


def _constant_array(value: ir.Value) -> np.ndarray | None:
    op = defining_op(value, "arith.constant")
    if op is None:
        return None
    return constant_array(op.attributes["value"], value.type)


def _constant(array: np.ndarray, dtype: str) -> ir.Value:
    tensor_type = TensorType(array.shape, dtype).to_mlir()
    return arith.ConstantOp(tensor_type, ir.DenseElementsAttr.get(
        np.ascontiguousarray(array), type=tensor_type)).result


@dataclass
class _Quantized:
    """A dequantised operand: its quantised value, scale and zero point."""

    value: ir.Value
    scale: ir.Value
    zero_point: np.ndarray

    @property
    def unsigned(self) -> bool:
        return _type(self.value).dtype == "ui8"


def _dequantized(value: ir.Value, per_column: bool) -> _Quantized | None:
    """The operand behind `nn.dequantize` with a constant zero point, per
    tensor (or, where `per_column`, per column of a 2-D value), else None."""
    op = defining_op(value, "nn.dequantize")
    if op is None:
        return None
    quantized, scale, zero_point = op.operands
    zero = _constant_array(zero_point)
    if zero is None:
        return None
    if zero.ndim == 1:
        rank = _type(quantized).rank
        axis = nn.DequantizeOp.from_operation(op).axis % rank
        if not per_column or rank != 2 or axis != 1:
            return None
    return _Quantized(quantized, scale, zero.astype(np.int32))


def _signed(operand: _Quantized) -> tuple[ir.Value, np.ndarray]:
    """The operand as i8 and its zero point (i32)."""
    if not operand.unsigned:
        return operand.value, operand.zero_point
    zero_point = operand.zero_point - UNSIGNED_OFFSET
    producer = defining_op(operand.value, "nn.quantize")
    producer_zero = None if producer is None else _constant_array(producer.operands[2])
    if producer_zero is not None:
        view = nn.QuantizeOp.from_operation(producer)
        shifted = (producer_zero.astype(np.int32) - UNSIGNED_OFFSET).astype(np.int8)
        value = nn.QuantizeOp.build(producer.operands[0], producer.operands[1],
                                    _constant(shifted, "i8"), axis=view.axis)
        return value, zero_point
    one = _constant(np.array(1.0, np.float32), "f32")
    offset = nn.DequantizeOp.build(operand.value, one, _constant(
        np.array(UNSIGNED_OFFSET, np.uint8), "ui8"))
    value = nn.QuantizeOp.build(offset, one, _constant(np.array(0, np.int8), "i8"))
    return value, zero_point


def _fuse(quantize: ir.Operation) -> bool:
    """Rewrites one quantisation of a QDQ matmul; False where the pattern
    does not hold."""
    product, output_scale, output_zero = quantize.operands
    matmul = defining_op(product, "nn.matmul")
    if (matmul is None or len(list(product.uses)) != 1 or _type(output_scale).rank != 0
            or _constant_array(output_zero) is None):
        return False
    activation = _dequantized(matmul.operands[0], per_column=False)
    weight = _dequantized(matmul.operands[1], per_column=True)
    if activation is None or weight is None or _type(weight.value).rank != 2:
        return False
    k = _type(weight.value).shape[0]
    with ir.InsertionPoint(quantize), quantize.location:
        a8, za = ((activation.value, activation.zero_point) if activation.unsigned
                  else _signed(activation))
        w8, zw = _signed(weight)
        accumulator = nn.MatmulOp.build(a8, w8)
        if zw.any():
            row_sums = nn.MatmulOp.build(a8, _constant(np.ones((k, 1), np.int8), "i8"))
            accumulator = nn.SubOp.build(accumulator, nn.MulOp.build(
                row_sums, _constant(zw, "i32")))
        if za.any():
            column_sums = nn.MatmulOp.build(_constant(np.ones((1, k), np.int8), "i8"), w8)
            accumulator = nn.SubOp.build(accumulator, nn.MulOp.build(
                column_sums, _constant(za, "i32")))
        if za.any() and zw.any():
            both = (k * za.astype(np.int64) * zw.astype(np.int64)).astype(np.int32)
            accumulator = nn.AddOp.build(accumulator, _constant(both, "i32"))
        multiplier = nn.DivOp.build(nn.MulOp.build(activation.scale, weight.scale),
                                    output_scale)
        real = nn.CastOp.build(accumulator,
                               result_type=_type(accumulator).with_dtype("f32"))
        fused = nn.QuantizeOp.build(nn.MulOp.build(real, multiplier),
                                    _constant(np.array(1.0, np.float32), "f32"), output_zero)
    quantize.results[0].replace_all_uses_with(fused)
    quantize.erase()
    dequantizes = list(dict.fromkeys(defining_op(v, "nn.dequantize") for v in matmul.operands))
    matmul.erase()
    for op in dequantizes:
        if not list(op.results[0].uses):
            producer = defining_op(op.operands[0], "nn.quantize")
            op.erase()
            # A quantisation remade as i8 for the integer matmul.
            if producer is not None and not list(producer.results[0].uses):
                producer.erase()
    return True


@register_pass
@dataclass
class NNFuseQDQ(Pass):
    """Rewrites dequantize -> nn.matmul -> quantize into an integer nn.matmul (i8 or ui8 x i8 -> i32) with the zero points' row and column sums and a requantising epilogue."""

    argument = "nn-fuse-qdq"
    anchor = "func.func"

    def run(self, op: ir.Operation) -> None:
        for block in op.regions[0].blocks:
            # Collected first: a rewrite erases matmuls and dequantisations.
            quantizes = [inner.operation for inner in block.operations
                         if inner.operation.name == "nn.quantize"]
            for quantize in quantizes:
                _fuse(quantize)
