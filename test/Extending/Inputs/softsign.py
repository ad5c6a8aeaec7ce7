"""A plugin op in the scalar form with a GPU lowering of its own.

`nn.softsign` is `x / (1 + |x|)`; on the CPU it lowers from that
expression like a built-in op. Its nn->hw lowering, registered the way a
CPU lowering is, makes a kernel of one 32x32 register tile per block of
128 threads: the tile is copied into registers, computed by
`hw.elementwise {fn = "nn.softsign"}` (the op's own expression, on each
element a thread holds) and stored; partial tiles read zeros and store
nothing past the ends. It takes 2-d tensors and declines others.
"""

from mlir import ir
from mlir.dialects import arith, func

from lamina.dialects import hw, nn
from lamina.lowering.hw_to_loops import index
from lamina.lowering.nn_to_hw import HWLowering, launch, new_kernel
from lamina.lowering.registry import lowering
from lamina.types import MemRefType, type_view

TILE = 32


class SoftsignOp(nn.UnaryElementwiseOp, name="softsign"):
    """Softsign: `x / (1 + |x|)`.

    Example: %y = "nn.softsign"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    """

    def scalar(self, x):
        return x / (1 + abs(x))


@lowering(SoftsignOp, to="hw")
def softsign_kernel(op: SoftsignOp, target: HWLowering):
    x = op.operand("x")
    t = type_view(x.type)
    if t.rank != 2:
        return None
    location = op.operation.location
    buffer = MemRefType(t.shape, t.dtype).to_mlir()
    kernel = new_kernel(target.kernels, target.name, [buffer, buffer], location)
    with ir.InsertionPoint(kernel.add_entry_block()), location:
        src, dst = kernel.arguments
        row = arith.muli(hw.BlockIdOp.build(dim=0), index(TILE))
        col = arith.muli(hw.BlockIdOp.build(dim=1), index(TILE))
        tile = hw.AllocOp.build(result_type=MemRefType((TILE, TILE), t.dtype, "private"))
        hw.CopyOp.build(src, tile, [row, col])
        hw.MapOp.build([tile], tile, fn=SoftsignOp.op_name())
        hw.StoreOp.build(tile, dst, [], [row, col])
        func.ReturnOp([])
    launch(op.operation, [x], target.name, (-(-t.shape[0] // TILE), -(-t.shape[1] // TILE)))
    return [op.operation]
