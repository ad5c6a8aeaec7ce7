"""Pooling kernels: nn.max_pool2d and nn.avg_pool2d, NCHW or NHWC.

A pooling is a data-movement kernel over its result's index space
(`movement.MovementKernel`): each window tap is a gather of the input
(`hw.gather_elements`: the tap's row and column at `o * stride + tap -
padding`, the padding value outside the input: -inf for a max, 0 for an
average), widened to f32 and folded into an f32 accumulator tile
(`nn.maximum`, `nn.add`) in the taps' order, as the NumPy reference folds
them; an average is then divided by the window's size, and the
accumulator rounded once to the result's type. The windows' taps are
unrolled, so a kernel's code grows with the window (a global pooling of
a 7x7 map is 49 gathers).
"""

from __future__ import annotations

from mlir import ir

from lamina.dialects import hw, nn
from lamina.lowering.nn_to_hw.kernels import HWLowering
from lamina.lowering.nn_to_hw.movement import MovementKernel
from lamina.lowering.registry import lowering
from lamina.types import type_view


@lowering(nn.Pool2dOp, to="hw")
def lower_pool2d(op: nn.Pool2dOp, target: HWLowering) -> list[ir.Operation]:
    """A max or average pooling as one kernel over its result."""
    operation = op.operation
    combine = {nn.MaxPool2dOp: "nn.maximum", nn.AvgPool2dOp: "nn.add"}.get(type(op))
    if combine is None:
        return target.leave(operation, f"'{operation.name}' is no max or average pooling")
    pad_value = float("-inf") if combine == "nn.maximum" else 0.0
    dtype = type_view(operation.operands[0].type).dtype
    # Where the window's rows and columns are among the dims.
    rows, cols = (2, 3) if op.layout == "NCHW" else (1, 2)
    top, left, _, _ = op.padding
    kh, kw = op.kernel

    def fill(kernel: MovementKernel, arguments, tile, offset):
        # f32 taps fold straight into the result's tile; others are widened.
        accumulator = tile if dtype == "f32" else kernel.tile("f32")
        tap = kernel.tile(dtype)
        wide = tap if dtype == "f32" else kernel.tile("f32")
        for i in range(kh):
            for j in range(kw):
                first = (i, j) == (0, 0)
                starts, strides = [0] * 4, [1] * 4
                starts[rows], starts[cols] = i - top, j - left
                strides[rows], strides[cols] = op.strides
                kernel.gather(arguments[0], accumulator if first and dtype == "f32" else tap,
                              offset, range(4), starts=starts, strides=strides,
                              value=pad_value)
                if dtype != "f32":
                    hw.CastOp.build(tap, accumulator if first else wide)
                if not first:
                    hw.MapOp.build([accumulator, wide], accumulator, fn=combine)
        if combine == "nn.add":
            size = kernel.tile("f32", length=1)
            hw.FillOp.build(size, value=float(kh * kw))
            hw.MapOp.build([accumulator, size], accumulator, fn="nn.div")
        if accumulator is not tile:
            hw.CastOp.build(accumulator, tile)

    return MovementKernel([operation.operands[0]], operation.results[0], target).build(
        operation, fill)
