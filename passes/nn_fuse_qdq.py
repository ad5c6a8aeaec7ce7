"""--nn-fuse-qdq: a matmul or a convolution between dequantisations and a
quantisation (the QDQ form of ONNX models and PyTorch 2 export
quantisation) becomes an integer one with an i32 accumulator and a
requantising epilogue.

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

The matmul may be followed by a float bias along its columns (`[N]` or
`[1, N]`) and an `nn.relu` before the quantisation, which then are the
convolution's epilogue below (`shift = bias / sy`); its weight may be the
transpose of a 2-D dequantisation (`[N, K]`, per tensor or per row, as
nn.Linear stores it), transposed as i8 instead; and the quantisation may
be by scale 1 of the product by a constant scalar `c` (PyTorch quantises
as `round(x * (1 / scale))`, and `from_torch` writes that product), when
`c` takes the place of `1 / sy`: the multiplier is `(sa * sw) * c`, the
shift `bias * c`. A matmul of dequantised operands whose result is not
quantised (a model's last layer) becomes `f32(acc) * (sa * sw)` (ONNX
Runtime's MatMulIntegerToFloat): its products summed exactly in i32.

A convolution (any strides, dilations, groups and layout) is matched the
same way, its weight per tensor or per output channel (`axis = 0`), with
an optional float bias and an `nn.relu` before the quantisation:

    %y = "nn.conv2d"(%x, %w, %bias)    dequantised x and w, float bias
    %r = "nn.relu"(%y)                  optional
    %q = "nn.quantize"(%r, %sy, %zy)

becomes, with the padding of x holding za (an `nn.pad`, where za is not
zero: padding is a real zero, so every window, at the borders too, has
the same zero-point terms), over the C / groups * KH * KW taps of a window

    acc = conv(x8, w8) - zw[o] * windowsum(x8) - za * filtersum(w8)[o]
          + taps * za * zw[o]
    q   = saturate(round_half_to_even(relu(f32(acc) * (sa * sw[o] / sy)
          + bias[o] / sy)) + zy)

where the window sums are the convolution of x8 with filters of ones
(one, or one per output channel with groups) and the filter sums the
convolution of one window of ones with w8 (folded for constant weights).
ui8 activations stay ui8 (an integer conv2d takes ui8 x i8), ui8 weights
move to i8 as the matmul's do. The bias is added in f32 after the
rescaling, which may move a result by one step where it is within a
rounding error of a tie.

Zero points must be constants (as quantisers write them); scales may be
values. With constant weights, `nn-fold-constants` then folds the weight's
conversion to i8, its column sums, the zero-point terms and the combined
scale into constants.

Expects verified nn IR. Guarantees: each rewritten quantisation's result
is the integer computation above, which differs from the float
computation it replaces by at most one in the last place before rounding,
so by at most one quantisation step where that float computation was
close to a tie (the float form differs by the rounding of the float sums it
replaces); convolutions whose float result is used elsewhere, and every
other form (activations per channel, batched weights, a bias along another
dim, a convolution's weight quantised along another axis) are left
unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from mlir import ir

from lamina.dialects import nn
from lamina.linalg_builders import defining_op
from lamina.pass_registry import Pass, register_pass
from lamina.quantized_products import (UNSIGNED_OFFSET, Window, constant, integer_conv2d,
                                       integer_matmul, moved_to_signed, per_channel,
                                       requantized, value_type)
from lamina.reference import constant_array


def _constant_array(value: ir.Value) -> np.ndarray | None:
    op = defining_op(value, "arith.constant")
    if op is None:
        return None
    return constant_array(op.attributes["value"], value.type)


@dataclass
class _Quantized:
    """A dequantised operand: its quantised value, scale and zero point;
    `transposed`: the operand is the transpose of the (2-D) dequantisation
    (a weight stored [N, K], as nn.Linear's, and read as [K, N])."""

    value: ir.Value
    scale: ir.Value
    zero_point: np.ndarray
    transposed: bool = False

    @property
    def unsigned(self) -> bool:
        return value_type(self.value).dtype == "ui8"


def _dequantized(value: ir.Value, channels: tuple[int, int] | None = None
                 ) -> _Quantized | None:
    """The operand behind `nn.dequantize` with a constant zero point, per
    tensor (or, where `channels` is (rank, axis), per slice along `axis` of
    a value of that rank), else None. A 2-D operand may be the transpose of
    the dequantisation (its channels then along the other axis)."""
    transpose = defining_op(value, "nn.transpose")
    if (transpose is not None and value_type(value).rank == 2
            and list(nn.TransposeOp.from_operation(transpose).perm) == [1, 0]):
        inner = _dequantized(transpose.operands[0],
                             None if channels is None else (2, 1 - channels[1]))
        if inner is None or inner.transposed:
            return None
        return _Quantized(inner.value, inner.scale, inner.zero_point, transposed=True)
    op = defining_op(value, "nn.dequantize")
    if op is None:
        return None
    quantized, scale, zero_point = op.operands
    zero = _constant_array(zero_point)
    if zero is None:
        return None
    if zero.ndim == 1:
        rank = value_type(quantized).rank
        axis = nn.DequantizeOp.from_operation(op).axis % rank
        if channels != (rank, axis):
            return None
    return _Quantized(quantized, scale, zero.astype(np.int32))


def _signed(operand: _Quantized) -> tuple[ir.Value, np.ndarray]:
    """The operand as i8 (transposed where it is read transposed) and its
    zero point (i32)."""
    value, zero_point = _signed_untransposed(operand)
    if operand.transposed:
        value = nn.TransposeOp.build(value, perm=[1, 0])
    return value, zero_point


def _signed_untransposed(operand: _Quantized) -> tuple[ir.Value, np.ndarray]:
    if not operand.unsigned:
        return operand.value, operand.zero_point
    zero_point = np.asarray(operand.zero_point - UNSIGNED_OFFSET)
    producer = defining_op(operand.value, "nn.quantize")
    producer_zero = None if producer is None else _constant_array(producer.operands[2])
    if producer_zero is not None:
        view = nn.QuantizeOp.from_operation(producer)
        shifted = (producer_zero.astype(np.int32) - UNSIGNED_OFFSET).astype(np.int8)
        value = nn.QuantizeOp.build(producer.operands[0], producer.operands[1],
                                    constant(shifted, "i8"), axis=view.axis)
        return value, zero_point
    return moved_to_signed(operand.value, operand.zero_point)


def _output_scaling(quantize: ir.Operation):
    """What a quantisation divides by: `(product, rescale, ops)` where the
    quantisation is of `product` by a scale `sy` (`rescale(v)` = `v / sy`),
    or is by scale 1 of `product * c` for a constant scalar `c` (as
    PyTorch quantises: `rescale(v)` = `v * c`, `ops` = [that nn.mul]);
    None where the scale is not per tensor or the zero point not constant."""
    product, output_scale, output_zero = quantize.operands
    if value_type(output_scale).rank != 0 or _constant_array(output_zero) is None:
        return None
    scale = _constant_array(output_scale)
    mul = defining_op(product, "nn.mul")
    if scale is not None and float(scale) == 1.0 and mul is not None \
            and len(list(product.uses)) == 1:
        for factor, other in ((mul.operands[1], mul.operands[0]),
                              (mul.operands[0], mul.operands[1])):
            if value_type(factor).rank == 0 and value_type(factor).dtype == "f32" \
                    and _constant_array(factor) is not None:
                return other, (lambda v: nn.MulOp.build(v, factor)), [mul]
    return product, (lambda v: nn.DivOp.build(v, output_scale)), []


def _matmul_chain(product: ir.Value):
    """`(matmul, bias, relu, ops)` where `product` is `relu?(matmul + bias?)`,
    each value used once, the bias a float vector along the matmul's
    columns (`[N]` or `[1, N]`, either operand of the nn.add); `ops` are the
    float ops from the last to the matmul; None otherwise."""
    ops = []
    relu = defining_op(product, "nn.relu")
    if relu is not None:
        if len(list(product.uses)) != 1:
            return None
        ops.append(relu)
        product = relu.operands[0]
    bias = None
    add = defining_op(product, "nn.add")
    if add is not None:
        if len(list(product.uses)) != 1:
            return None
        for candidate, other in ((add.operands[1], add.operands[0]),
                                 (add.operands[0], add.operands[1])):
            if defining_op(other, "nn.matmul") is not None and _is_column_vector(
                    candidate, value_type(other)):
                bias, product = candidate, other
                break
        if bias is None:
            return None
        ops.append(add)
    matmul = defining_op(product, "nn.matmul")
    if matmul is None or len(list(product.uses)) != 1:
        return None
    ops.append(matmul)
    return matmul, bias, relu, ops


def _is_column_vector(value: ir.Value, result) -> bool:
    """Whether `value` is a float vector along the last dim of `result`."""
    t = value_type(value)
    return (t.dtype == "f32" and t.rank in (1, 2) and t.shape[-1] == result.shape[-1]
            and all(d == 1 for d in t.shape[:-1]))


def _quantized_operands(matmul: ir.Operation):
    """The matmul's dequantised activation (per tensor) and 2-D weight (per
    tensor or per column), or None."""
    activation = _dequantized(matmul.operands[0])
    weight = _dequantized(matmul.operands[1], channels=(2, 1))
    if (activation is None or activation.transposed or weight is None
            or value_type(matmul.operands[1]).rank != 2):
        return None
    return activation, weight


def _accumulator(activation: _Quantized, weight: _Quantized) -> ir.Value:
    a8, za = ((activation.value, activation.zero_point) if activation.unsigned
              else _signed(activation))
    w8, zw = _signed(weight)
    return integer_matmul(a8, w8, za, zw)


def _fuse_matmul(quantize: ir.Operation) -> bool:
    """Rewrites one quantisation of a QDQ matmul (with an optional float
    bias and relu); False where the pattern does not hold."""
    output = _output_scaling(quantize)
    if output is None:
        return False
    product, rescale, scaling_ops = output
    chain = _matmul_chain(product)
    if chain is None:
        return False
    matmul, bias, relu, float_ops = chain
    operands = _quantized_operands(matmul)
    if operands is None:
        return False
    activation, weight = operands
    with ir.InsertionPoint(quantize), quantize.location:
        accumulator = _accumulator(activation, weight)
        multiplier = rescale(nn.MulOp.build(activation.scale, weight.scale))
        shift = None if bias is None else rescale(bias)
        fused = requantized(accumulator, multiplier, quantize.operands[2], shift,
                            relu=relu is not None)
    _replace(quantize, fused, scaling_ops + float_ops)
    return True


def _fuse_matmul_to_float(matmul: ir.Operation) -> bool:
    """Rewrites a matmul of dequantised operands whose float result is not
    quantised again (a model's last layer): `f32(acc) * (sa * sw)`, the
    products summed exactly in i32 (as ONNX Runtime's
    MatMulIntegerToFloat); False where the operands are not of that form."""
    if value_type(matmul.results[0]).dtype != "f32":
        return False
    operands = _quantized_operands(matmul)
    if operands is None:
        return False
    activation, weight = operands
    with ir.InsertionPoint(matmul), matmul.location:
        accumulator = _accumulator(activation, weight)
        real = nn.CastOp.build(accumulator,
                               result_type=value_type(accumulator).with_dtype("f32"))
        fused = nn.MulOp.build(real, nn.MulOp.build(activation.scale, weight.scale))
    matmul.results[0].replace_all_uses_with(fused)
    _erase_unused_operands(matmul)
    return True


def _replace(quantize: ir.Operation, fused: ir.Value, float_ops: list[ir.Operation]) -> None:
    """Replaces `quantize` with `fused`, erases the float ops it consumed
    (users first) and the transposes, dequantisations (and the
    quantisations remade as i8) left unused."""
    quantize.results[0].replace_all_uses_with(fused)
    quantize.erase()
    for op in float_ops[:-1]:
        op.erase()
    _erase_unused_operands(float_ops[-1])


def _erase_unused_operands(product: ir.Operation) -> None:
    """Erases `product` (now unused), then whichever of its operands'
    transposes and dequantisations (and quantisations feeding those) no
    other op uses."""
    operands = list(product.operands)
    product.erase()
    for value in dict.fromkeys(operands):
        for name in ("nn.transpose", "nn.dequantize", "nn.quantize"):
            op = defining_op(value, name)
            if op is None:
                continue
            if list(op.results[0].uses):
                break
            value = op.operands[0]
            op.erase()


def _fuse_conv2d(quantize: ir.Operation) -> bool:
    """Rewrites one quantisation of a QDQ convolution (with an optional
    float bias and relu); False where the pattern does not hold."""
    product, output_scale, output_zero = quantize.operands
    if value_type(output_scale).rank != 0 or _constant_array(output_zero) is None:
        return False
    float_ops = []
    relu = defining_op(product, "nn.relu")
    if relu is not None:
        if len(list(product.uses)) != 1:
            return False
        float_ops.append(relu)
        product = relu.operands[0]
    conv = defining_op(product, "nn.conv2d")
    if conv is None or len(list(product.uses)) != 1:
        return False
    float_ops.append(conv)
    view = nn.Conv2dOp.from_operation(conv)
    activation = _dequantized(conv.operands[0])
    weight = _dequantized(conv.operands[1], channels=(4, 0))
    if activation is None or weight is None:
        return False
    bias = conv.operands[2] if len(conv.operands) > 2 else None
    layout = view.layout
    with ir.InsertionPoint(quantize), quantize.location:
        w8, zw = _signed(weight)
        accumulator = integer_conv2d(activation.value, w8, activation.zero_point, zw,
                                     Window.of(view))
        multiplier = per_channel(nn.DivOp.build(
            nn.MulOp.build(activation.scale, weight.scale), output_scale), layout)
        shift = None if bias is None else per_channel(nn.DivOp.build(bias, output_scale),
                                                      layout)
        fused = requantized(accumulator, multiplier, output_zero, shift,
                            relu=relu is not None)
    _replace(quantize, fused, float_ops)
    return True


@register_pass
@dataclass
class NNFuseQDQ(Pass):
    """Rewrites dequantize -> nn.matmul or nn.conv2d (-> bias, relu) -> quantize into an integer nn.matmul or nn.conv2d (i8 or ui8 x i8 -> i32) with the zero points' terms and a requantising epilogue; a matmul of dequantised operands with a float result into the i32 product scaled."""

    argument = "nn-fuse-qdq"
    anchor = "func.func"

    def run(self, op: ir.Operation) -> None:
        for block in op.regions[0].blocks:
            # Collected first: a rewrite erases matmuls and dequantisations.
            quantizes = [inner.operation for inner in block.operations
                         if inner.operation.name == "nn.quantize"]
            for quantize in quantizes:
                _fuse_matmul(quantize) or _fuse_conv2d(quantize)
            for matmul in [inner.operation for inner in block.operations
                           if inner.operation.name == "nn.matmul"]:
                _fuse_matmul_to_float(matmul)
