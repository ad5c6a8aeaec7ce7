"""--cpu-grouped-convolutions-to-taps: grouped and depthwise convolutions
become elementwise sums over their filters' taps.

Grouped and depthwise convolutions (`linalg.conv_2d_ngchw_gfchw`) have too
little arithmetic per byte to pay for transposes (a depthwise 3x3 filter:
9 FMAs per output element), and upstream vectorises no grouped
convolution and, in NCHW, no depthwise one. Each becomes one elementwise
`linalg.generic` over the output (n, g, f, oh, ow): its inputs are, per
filter tap (c, kh, kw), the input window that tap meets (a strided slice
of the NCHW input: channel c of every group, rows and columns offset by
the tap) and the tap's weights ([G, F, 1]), and its body sums their
products onto the init in the convolution's order (c, kh, then kw),
products and sums contracted into FMAs. Every indexing map is then a
projection, so the loop-nest schedule splits the output's rows over
threads and vectorises along them (the NCHW layout's contiguous dim),
with a bias and an activation fused into the same loop. A group of more
taps than `max-taps` keeps its channels as a reduction loop (C) inside
the output's vectors, each channel's taps summed before they are added
to the accumulator. A constant padding of the rows and columns becomes an
allocation filled with the padding value and a `linalg.copy` into its
interior (which the schedules split over threads and vectorise;
bufferized, `tensor.pad` would be a fill and a copy on one thread);
windows that lie inside the input read it where it is. No slice drops a
dim: upstream's bufferization cannot always tell which of several unit
dims a rank-reducing slice dropped, and aborts.

Expects linalg on tensors. Guarantees: no static floating-point
`linalg.conv_2d_ngchw_gfchw` whose filter has at most `max-taps` taps per
channel is left; the generic keeps the convolution's fusion group; a
padding of other dims than the rows and columns is left to `tensor.pad`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mlir import ir
from mlir.dialects import arith, linalg, tensor

from lamina.linalg_builders import (collapsed, constant_padding, defining_op, fusion_marks,
                                    int_array, mark, matching_ops, same_rank_slice,
                                    static_shapes, written_into_padding)
from lamina.pass_registry import Pass, register_pass
from lamina.scalar import cast_float

GROUPED = "linalg.conv_2d_ngchw_gfchw"


def _spatial(pad: ir.Operation) -> bool:
    """Whether `pad` pads the rows and columns (the last two dims) only."""
    sides = [list(ir.DenseI64ArrayAttr(pad.attributes[key])) for key in ("static_low",
                                                                         "static_high")]
    return not any(amount for side in sides for amount in side[:-2])


def _padded_in_place(x: ir.Value) -> tuple[ir.Value, ir.Value, tuple[int, int]]:
    """(padded, source, (top, left)): `x`, the grouped input, with a
    constant padding of it (or of the NCHW tensor it expands) rewritten in
    destination-passing style (a new allocation filled with the padding
    value, the input copied into its interior by a `linalg.copy`), the
    unpadded input in the shape of `x`, and the padding before its rows
    and columns."""
    expand = defining_op(x, "tensor.expand_shape")
    padding = constant_padding(expand.operands[0] if expand else x)
    if padding is None or not _spatial(padding[0]):
        return x, x, (0, 0)
    pad, value = padding
    source = pad.operands[0]
    element = ir.RankedTensorType(source.type).element_type
    low = list(ir.DenseI64ArrayAttr(pad.attributes["static_low"]))
    interior_shape = ir.RankedTensorType(source.type).shape
    padded = written_into_padding(ir.RankedTensorType(pad.results[0].type), value, low,
                                  interior_shape,
                                  lambda interior: linalg.copy(source, outs=[interior]))
    if expand is None:
        return padded, source, (low[-2], low[-1])
    reassociation = ir.ArrayAttr(expand.attributes["reassociation"])
    groups = [[int(ir.IntegerAttr(i).value) for i in ir.ArrayAttr(g)] for g in reassociation]
    x_shape = ir.RankedTensorType(x.type).shape
    unpadded_shape = x_shape[:3] + interior_shape[2:]
    unpadded = tensor.expand_shape(ir.RankedTensorType.get(unpadded_shape, element), source,
                                   groups, [], unpadded_shape)
    return (tensor.expand_shape(x.type, padded, groups, [], x_shape), unpadded,
            (low[-2], low[-1]))


def grouped_as_taps(op: ir.Operation, max_taps: int) -> ir.Operation:
    """Replaces the grouped convolution `op` with its sum over the filter's
    taps (see the module docstring) and returns the sum."""
    x, weight, init = op.operands
    n, groups, channels, _, _ = ir.RankedTensorType(x.type).shape
    _, per_group, _, kh, kw = ir.RankedTensorType(weight.type).shape
    oh, ow = ir.RankedTensorType(init.type).shape[3:]
    sh, sw = int_array(op.attributes["strides"])
    dh, dw = int_array(op.attributes["dilations"])
    x_element = ir.RankedTensorType(x.type).element_type
    w_element = ir.RankedTensorType(weight.type).element_type
    out_element = ir.RankedTensorType(init.type).element_type
    reduce = channels * kh * kw > max_taps
    # Loops (n, g, f, oh, ow[, c]). Unrolled, channel c of every group is
    # the strided channel slice c, c + C, c + 2C, ... of the NCHW input,
    # and each tap's weights a [G, F, 1] slice of the filter with its taps
    # flattened.
    rank = 6 if reduce else 5
    d = [ir.AffineDimExpr.get(i) for i in range(rank)]
    zero = ir.AffineConstantExpr.get(0)
    out_map = ir.AffineMap.get(rank, 0, d[:5])
    if reduce:
        x_map = ir.AffineMap.get(rank, 0, [d[0], d[1], d[5], d[3], d[4]])
        w_map = ir.AffineMap.get(rank, 0, [d[1], d[2], d[5], zero])
        taps = [(0, i, j) for i in range(kh) for j in range(kw)]
    else:
        x_map = ir.AffineMap.get(rank, 0, [d[0], d[1], d[3], d[4]])
        w_map = ir.AffineMap.get(rank, 0, [d[1], d[2], zero])
        taps = [(c, i, j) for c in range(channels) for i in range(kh) for j in range(kw)]
    # The stride of a dim of one element is no stride.
    row_strides = [sh if oh > 1 else 1, sw if ow > 1 else 1]
    with ir.InsertionPoint(op), op.location:
        padded, source, (top, left) = _padded_in_place(x)
        height, width = ir.RankedTensorType(source.type).shape[3:]
        if not reduce:
            # Channel c of every group: a strided channel slice of NCHW.
            padded, source = (collapsed(v, [[0], [1, 2], [3], [4]]) for v in (padded, source))

        def window(offsets: list[int], sizes: list[int], strides: list[int]) -> ir.Value:
            """A tap's window, read from the unpadded input where it lies
            inside it (the window that is the padded input's interior
            would otherwise fold into the copy that fills it, which
            bufferization then copies once more)."""
            row, column = offsets[-2:]
            inside = (top <= row and row + (oh - 1) * strides[-2] < top + height
                      and left <= column and column + (ow - 1) * strides[-1] < left + width)
            value = source if inside else padded
            if inside:
                offsets = offsets[:-2] + [row - top, column - left]
            return same_rank_slice(value, offsets, sizes, strides)

        if reduce:
            w = collapsed(weight, [[0], [1], [2], [3, 4]])
            windows = [window([0, 0, 0, i * dh, j * dw], [n, groups, channels, oh, ow],
                              [1, 1, 1] + row_strides) for _, i, j in taps]
            weights = [same_rank_slice(w, [0, 0, 0, i * kw + j], [groups, per_group, channels, 1])
                       for _, i, j in taps]
        else:
            w = collapsed(weight, [[0], [1], [2, 3, 4]])
            windows = [window([0, c, i * dh, j * dw], [n, groups, oh, ow],
                              [1, channels if groups > 1 else 1] + row_strides)
                       for c, i, j in taps]
            weights = [same_rank_slice(w, [0, 0, (c * kh + i) * kw + j], [groups, per_group, 1])
                       for c, i, j in taps]
        iterators = [linalg.IteratorType.parallel] * 5 + (
            [linalg.IteratorType.reduction] if reduce else [])
        generic = linalg.GenericOp(
            [init.type], windows + weights, [init],
            [x_map] * len(taps) + [w_map] * len(taps) + [out_map], iterators)
        block = generic.regions[0].blocks.append(
            *([x_element] * len(taps) + [w_element] * len(taps) + [out_element]))
        arguments = list(block.arguments)
        with ir.InsertionPoint(block):
            # Each product and sum may contract into one FMA (rounded once,
            # not twice), as the vector.contract of a dense convolution does.
            # The reduction over C adds one sum per channel to the
            # accumulator: upstream vectorises a reduction whose
            # accumulator meets one combining op.
            contract = ir.Attribute.parse("#arith.fastmath<contract>")
            total = None if reduce else arguments[-1]
            for pixel, weight_value in zip(arguments[:len(taps)], arguments[len(taps):-1]):
                product = arith.mulf(cast_float(pixel, out_element),
                                     cast_float(weight_value, out_element), fastmath=contract)
                total = product if total is None else arith.addf(total, product, fastmath=contract)
            if reduce:
                total = arith.addf(arguments[-1], total, fastmath=contract)
            linalg.YieldOp([total])
    mark([generic.operation], fusion_marks(op))
    op.results[0].replace_all_uses_with(generic.results[0])
    op.erase()
    return generic.operation


@register_pass
@dataclass
class CPUGroupedConvolutionsToTaps(Pass):
    """Rewrites grouped and depthwise convolutions into elementwise sums over their filters' taps."""

    argument = "cpu-grouped-convolutions-to-taps"
    verifies_lamina_ops = False  # no op of Lamina's dialects at its stage
    max_taps: int = field(default=64, metadata={"minimum": 1})
    """Taps per filter channel beyond which a convolution is left as it is, and taps per group (channels x rows x columns) beyond which its channels stay a reduction loop."""

    def applies(self, op: ir.Operation) -> bool:
        if op.name != GROUPED or not static_shapes(op):
            return False
        shapes = [ir.RankedTensorType(v.type) for v in op.operands]
        if not all(isinstance(s.element_type, ir.FloatType) for s in shapes):
            return False
        kh, kw = shapes[1].shape[3:]
        return kh * kw <= self.max_taps

    def run(self, op: ir.Operation) -> None:
        for convolution in matching_ops(op, self.applies):
            grouped_as_taps(convolution, self.max_taps)
