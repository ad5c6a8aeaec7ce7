"""--cpu-pointwise-convolutions-to-contractions: 1x1 convolutions of stride 1
become the matrix products they are in NCHW.

A `linalg.conv_2d_nchw_fchw` with a 1x1 filter, stride 1 and an input
that no `tensor.pad` pads computes out[n, f, p] += w[f, c] * x[n, c, p]
over the pixels p of each image. It becomes that contraction: a
`linalg.generic` (loops n, f, p, c; an image alone has no n) on the
input collapsed to `[N, C, H*W]` and the filter collapsed to `[F, C]`,
whose result is expanded back to NCHW. The filter, shared by the images,
lacks their batch dim, and is the product's left operand as in a
matmul's body, so that the packed-panel schedule of contractions
(lamina.schedules.contraction) runs it with no transposes. A zero fill of
the result becomes a fill of the collapsed shape.

Expects linalg on tensors. Guarantees: no static 1x1 NCHW convolution of
stride 1 on an unpadded input is left; the product computes the same sums
in f32 or the result's type (operands are extended to it; integer ones
sign-extended, as the named convolution does, into an i32 result whose
2-D products `cpu-vnni-contractions` puts on VNNI); the new ops
keep the convolution's fusion group; other convolutions are left as they
are (`cpu-convolutions-to-channels-last` rewrites them, and runs before
this pass in the CPU pipeline).
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, linalg, tensor

from lamina.linalg_builders import (collapsed, constant_padding, defining_op, erase_unused,
                                    fusion_marks, int_array, mark, matching_ops, refilled,
                                    static_shapes)
from lamina.pass_registry import Pass, register_pass
from lamina.scalar import cast_float


def is_pointwise(op: ir.Operation) -> bool:
    """A static 1x1 NCHW convolution of stride 1 over an unpadded input."""
    if op.name != "linalg.conv_2d_nchw_fchw" or not static_shapes(op):
        return False
    x, weight, _ = op.operands
    kh, kw = ir.RankedTensorType(weight.type).shape[2:]
    strides = int_array(op.attributes["strides"])
    return (kh, kw) == (1, 1) and strides == [1, 1] and constant_padding(x) is None


def pointwise_as_contraction(op: ir.Operation) -> None:
    """Replaces the 1x1 convolution `op` with its contraction (see the
    module docstring)."""
    x, weight, init = op.operands
    n, _, height, width = ir.RankedTensorType(x.type).shape
    features = ir.RankedTensorType(weight.type).shape[0]
    element = ir.RankedTensorType(init.type).element_type
    # Loops (n, f, p, c); an image alone has no batch loop.
    batch = n > 1
    rank = 4 if batch else 3
    *image, f, p, c = [ir.AffineDimExpr.get(i) for i in range(rank)]
    maps = [ir.AffineMap.get(rank, 0, [f, c]), ir.AffineMap.get(rank, 0, image + [c, p]),
            ir.AffineMap.get(rank, 0, image + [f, p])]
    image_dims = [[0], [1], [2, 3]] if batch else [[0, 1], [2, 3]]
    marks = fusion_marks(op)
    with ir.InsertionPoint(op), op.location:
        images = collapsed(x, image_dims)
        filters = collapsed(weight, [[0], [1, 2, 3]])
        fill = defining_op(init, "linalg.fill")
        if fill is not None:
            new_fill = refilled(fill, [n] * batch + [features, height * width])
            mark([new_fill], marks)
            accumulator = new_fill.results[0]
        else:
            accumulator = collapsed(init, image_dims)
        parallel, reduction = linalg.IteratorType.parallel, linalg.IteratorType.reduction
        product = linalg.GenericOp([accumulator.type], [filters, images], [accumulator], maps,
                                   [parallel] * (rank - 1) + [reduction])
        block = product.regions[0].blocks.append(
            ir.RankedTensorType(weight.type).element_type,
            ir.RankedTensorType(x.type).element_type, element)
        with ir.InsertionPoint(block):
            w_value, x_value, acc = block.arguments
            # The filter is the product's left operand, as in a matmul's
            # body: the register tile's contraction then lowers to the
            # same outer products of FMAs.
            if isinstance(element, ir.IntegerType):
                # Integer operands are sign-extended, as the named
                # convolution extends them.
                term = arith.muli(arith.extsi(element, w_value), arith.extsi(element, x_value))
                linalg.YieldOp([arith.addi(acc, term)])
            else:
                linalg.YieldOp([arith.addf(acc, arith.mulf(cast_float(w_value, element),
                                                           cast_float(x_value, element)))])
        result = tensor.expand_shape(init.type, product.result, image_dims, [],
                                     ir.RankedTensorType(init.type).shape)
    mark([product.operation], marks)
    op.results[0].replace_all_uses_with(result)
    op.erase()
    erase_unused(fill)


@register_pass
@dataclass
class CPUPointwiseConvolutionsToContractions(Pass):
    """Rewrites 1x1 NCHW convolutions of stride 1 on unpadded inputs into the matrix products they are."""

    argument = "cpu-pointwise-convolutions-to-contractions"
    verifies_lamina_ops = False  # no op of Lamina's dialects at its stage

    def run(self, op: ir.Operation) -> None:
        for convolution in matching_ops(op, is_pointwise):
            pointwise_as_contraction(convolution)
