"""--cpu-convolutions-to-channels-last: NCHW convolutions become
channels-last ones between transposes.

Each `linalg.conv_2d_nchw_fchw` on static shapes becomes a
`linalg.conv_2d_nhwc_hwcf` between transposes (input NCHW -> NHWC, filter
FCHW -> HWCF, result NHWC -> NCHW), which the direct convolution schedule
(lamina.schedules.convolution) tiles into register tiles of output pixels
x output channels: in NHWC and HWCF the tile's input pixels are broadcast
and its filter row of output channels is read contiguously. Upstream has
no transform that changes a convolution's layout (IREE's channels-last
conversion is its own pass), so the rewrite is Lamina's: transposes built
with the linalg builders.

A constant filter is transposed now, once (with NumPy; bf16, which NumPy
cannot hold, by the program at each call). A constant padding of the input
moves after its transpose, in destination-passing style: the transpose
writes the interior of a filled NHWC allocation (in place once
bufferized). A zero-filled result gets a fill of the NHWC shape (which
the schedule runs on each thread's rows inside the convolution's loop).
The convolution, its fill and the result's transpose keep the
convolution's fusion group, so a bias, an activation or a residual add
fused with it stays in its group and reads the result's transpose in its
own loop nest; the transposes of the input and the filter are data
movement of their own.

A convolution that the program computes channels-last (`layout = "NHWC"`,
see `nn-assign-layouts`) arrives between transposes: its input is the
transpose of an NHWC tensor and its result is transposed back to NHWC.
Those cancel against the rewrite's own (upstream's canonicalisation
composes transposes too, but the rewrite's output has none run over it
before scheduling): the NHWC tensor is copied into the padding's
interior (`linalg.copy`) or read as it is, and the readers of the NHWC
result read the convolution's.

A 1x1 convolution of stride 1 on an unpadded input between such
transposes becomes the matrix product it is in NHWC: pixels `[N, H, W,
C]` by the filter as `[C, F]`, a `linalg.generic` contraction that the
packed contraction schedule runs. One on an NCHW input is left as it is:
it is a contraction in NCHW (`cpu-pointwise-convolutions-to-contractions`,
which runs after this pass in the CPU pipeline).

Expects linalg on tensors. Guarantees: no static `linalg.conv_2d_nchw_fchw`
is left but those 1x1 ones, and each result is the same sum in the same
order; a padding, fill, filter constant or transpose left without uses is
erased.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, linalg, tensor

from lamina.linalg_builders import (collapsed, constant_padding, defining_op, erase_unused,
                                    fusion_marks, mark, matching_ops, permuted_constant, refilled,
                                    static_shapes, written_into_padding)
from lamina.pass_registry import Pass, register_pass
from lamina.passes.cpu_pointwise_convolutions_to_contractions import is_pointwise
from lamina.scalar import cast_float

CONVOLUTIONS = ("linalg.conv_2d_nchw_fchw",)

# Permutations of the rewrite: NCHW -> NHWC, FCHW -> HWCF, NHWC -> NCHW.
_TO_NHWC = (0, 2, 3, 1)
_TO_HWCF = (2, 3, 1, 0)
_TO_NCHW = (0, 3, 1, 2)


def _transposed(value: ir.Value, permutation: tuple[int, ...]) -> ir.Operation:
    shape = ir.RankedTensorType(value.type).shape
    element = ir.RankedTensorType(value.type).element_type
    init = tensor.empty([shape[p] for p in permutation], element)
    return linalg.transpose(value, outs=[init], permutation=list(permutation)).operation


def _undone(value: ir.Value, permutation: tuple[int, ...]) -> ir.Value | None:
    """The source of `value` when `value` is its transpose that
    `permutation` undoes (a channels-last convolution's input), else None."""
    owner = defining_op(value, "linalg.transpose")
    if owner is None:
        return None
    inner = list(ir.DenseI64ArrayAttr(owner.attributes["permutation"]))
    return owner.operands[0] if [inner[p] for p in permutation] == sorted(inner) else None


def _cancel_result_transposes(result: ir.Operation, convolution: ir.Value) -> None:
    """Readers of the NCHW `result` that transpose it back to NHWC read the
    channels-last `convolution` instead."""
    for use in list(result.results[0].uses):
        reader = use.owner.operation
        if reader.name == "linalg.transpose" and _undone(result.results[0], tuple(
                ir.DenseI64ArrayAttr(reader.attributes["permutation"]))) is not None:
            reader.results[0].replace_all_uses_with(convolution)
            reader.erase()


def _channels_last_init(init: ir.Value) -> ir.Operation:
    """The NHWC init of the rewritten convolution: a fill of the same value
    where the NCHW one is a fill, else its transpose."""
    owner = defining_op(init, "linalg.fill")
    if owner is not None:
        shape = ir.RankedTensorType(init.type).shape
        return refilled(owner, [shape[p] for p in _TO_NHWC])
    return _transposed(init, _TO_NHWC)


def _channels_last_filter(weight: ir.Value) -> ir.Value:
    """`weight` (FCHW) as HWCF: a constant filter is transposed now, once,
    instead of at every call."""
    constant = defining_op(weight, "arith.constant")
    folded = permuted_constant(constant.attributes["value"], _TO_HWCF) if constant else None
    if folded is None:
        return _transposed(weight, _TO_HWCF).results[0]
    return arith.ConstantOp(folded.type, folded).result


def _channels_last_input(x: ir.Value) -> ir.Value:
    """`x` (NCHW) as NHWC. A constant padding of `x` moves after the
    transpose in destination-passing style: the transpose writes the
    interior of a filled NHWC tensor (in place once bufferized,
    `written_into_padding`) instead of the padded tensor being built,
    then transposed."""
    padding = constant_padding(x)
    if padding is None:
        return _undone(x, _TO_NHWC) or _transposed(x, _TO_NHWC).results[0]
    pad, value = padding
    source = pad.operands[0]
    channels_last = _undone(source, _TO_NHWC)
    low = [ir.DenseI64ArrayAttr(pad.attributes["static_low"])[p] for p in _TO_NHWC]
    x_type = ir.RankedTensorType(x.type)
    padded_type = ir.RankedTensorType.get([x_type.shape[p] for p in _TO_NHWC],
                                          x_type.element_type)
    interior_shape = [ir.RankedTensorType(source.type).shape[p] for p in _TO_NHWC]
    if channels_last is not None:
        return written_into_padding(
            padded_type, value, low, interior_shape,
            lambda interior: linalg.copy(channels_last, outs=[interior]))
    return written_into_padding(
        padded_type, value, low, interior_shape,
        lambda interior: linalg.transpose(source, outs=[interior],
                                          permutation=list(_TO_NHWC)).results[0])


def _pixels_by_filters(x_nhwc: ir.Value, weight_hwcf: ir.Value,
                       init_nhwc: ir.Operation) -> ir.Operation:
    """A 1x1 convolution of stride 1 on an NHWC input as the matrix product
    it is: out[n, h, w, f] += x[n, h, w, c] * w[c, f], a `linalg.generic`
    whose rows are the pixels (n, h, w) and whose right operand is the
    filter collapsed to `[C, F]`, which the packed contraction schedule
    runs as a matmul with its epilogue fused (the NHWC result needs no
    reshape)."""
    filters = collapsed(weight_hwcf, [[0, 1, 2], [3]])
    n, h, w, f, c = [ir.AffineDimExpr.get(i) for i in range(5)]
    maps = [ir.AffineMap.get(5, 0, [n, h, w, c]), ir.AffineMap.get(5, 0, [c, f]),
            ir.AffineMap.get(5, 0, [n, h, w, f])]
    accumulator = init_nhwc.results[0]
    element = ir.RankedTensorType(accumulator.type).element_type
    parallel, reduction = linalg.IteratorType.parallel, linalg.IteratorType.reduction
    product = linalg.GenericOp([accumulator.type], [x_nhwc, filters], [accumulator], maps,
                               [parallel] * 4 + [reduction])
    block = product.regions[0].blocks.append(ir.RankedTensorType(x_nhwc.type).element_type,
                                             ir.RankedTensorType(filters.type).element_type,
                                             element)
    with ir.InsertionPoint(block):
        x_value, w_value, acc = block.arguments
        linalg.YieldOp([arith.addf(acc, arith.mulf(cast_float(x_value, element),
                                                   cast_float(w_value, element)))])
    return product.operation


def applies(op: ir.Operation) -> bool:
    """A static NCHW convolution, other than a 1x1 one of stride 1 on an
    unpadded input that is not the transpose of an NHWC tensor (those are
    contractions in NCHW: `cpu-pointwise-convolutions-to-contractions`)."""
    if op.name not in CONVOLUTIONS or not static_shapes(op):
        return False
    return not is_pointwise(op) or _undone(op.operands[0], _TO_NHWC) is not None


def to_channels_last(op: ir.Operation) -> None:
    """Replaces the NCHW convolution `op` with its channels-last form (see
    the module docstring)."""
    x, weight, init = op.operands
    marks = fusion_marks(op)
    padding = constant_padding(x)
    old_fill = defining_op(init, "linalg.fill")
    with ir.InsertionPoint(op), op.location:
        x_nhwc = _channels_last_input(x)
        weight_hwcf = _channels_last_filter(weight)
        init_nhwc = _channels_last_init(init)
        if is_pointwise(op):
            convolution = _pixels_by_filters(x_nhwc, weight_hwcf, init_nhwc)
        else:
            convolution = linalg.conv_2d_nhwc_hwcf(
                x_nhwc, weight_hwcf, outs=[init_nhwc.results[0]],
                strides=op.attributes["strides"],
                dilations=op.attributes["dilations"]).owner.operation
        result = _transposed(convolution.results[0], _TO_NCHW)
    mark([init_nhwc, convolution, result], marks)
    op.results[0].replace_all_uses_with(result.results[0])
    _cancel_result_transposes(result, convolution.results[0])
    op.erase()
    weight_constant = defining_op(weight, "arith.constant")
    input_transpose = defining_op(padding[0].operands[0] if padding else x, "linalg.transpose")
    erase_unused(result, old_fill, padding[0] if padding else None, input_transpose,
                 weight_constant)


@register_pass
@dataclass
class CPUConvolutionsToChannelsLast(Pass):
    """Rewrites static NCHW convolutions into channels-last ones (NHWC input, HWCF filter) between transposes."""

    argument = "cpu-convolutions-to-channels-last"
    verifies_lamina_ops = False  # no op of Lamina's dialects at its stage

    def run(self, op: ir.Operation) -> None:
        for convolution in matching_ops(op, applies):
            to_channels_last(convolution)
