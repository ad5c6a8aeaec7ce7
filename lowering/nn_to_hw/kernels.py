"""What every nn->hw kernel kind shares: the kernel function, its launch
in place of the host ops it computes, and what a lowering is given
(`HWLowering`) in the registry of this conversion."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mlir import ir
from mlir.dialects import bufferization, func, memref, tensor

from lamina.dialects import hw
from lamina.lowering.registry import registry
from lamina.targets import nvidia
from lamina.types import MemRefType, TensorType, type_view

if TYPE_CHECKING:
    from lamina.lowering.nn_to_hw.matmul import TileConfig

# One warpgroup per block (what wgmma needs, and 4 warps for mma.sync).
THREADS = nvidia.WARPGROUP

def _buffer(value: ir.Value) -> ir.Value:
    """A read-only buffer of a tensor, of the tensor's shape."""
    view = type_view(value.type)
    memref_type = MemRefType(view.shape, view.dtype).to_mlir()
    return bufferization.ToBufferOp(memref_type, value, read_only=True).result


def reshaped(value: ir.Value, shape: tuple[int, ...]) -> ir.Value:
    """`value`, a tensor, collapsed to `shape` (its dims of size 1 dropped:
    a [1, N] bias row as the [N] vector a kernel reads), at the current
    insertion point; `value` itself when it has that shape."""
    view = type_view(value.type)
    if view.shape == tuple(shape):
        return value
    assert len(shape) == 1 and view.shape[-1] == shape[0] \
        and all(d == 1 for d in view.shape[:-1]), (view.shape, shape)
    return tensor.collapse_shape(TensorType(tuple(shape), view.dtype).to_mlir(), value,
                                 [list(range(view.rank))])


def new_kernel(kernels: ir.Block, name: str, argument_types: list[ir.Type],
               location: ir.Location) -> func.FuncOp:
    """An empty kernel (a private func.func with `hw.kernel`) at the end of
    `kernels`, the module's body; its body is for the caller to build."""
    with ir.InsertionPoint(kernels), location:
        kernel = func.FuncOp(name, (argument_types, []), visibility="private")
        kernel.attributes[hw.KERNEL_ATTRIBUTE] = ir.UnitAttr.get()
    return kernel


def launch(last: ir.Operation, inputs: list[ir.Value], kernel: str, grid: tuple[int, ...],
           block: tuple[int, ...] = (THREADS,), results: list[ir.Value] | None = None) -> None:
    """Replaces the results of `last`, an op of the host function (or those
    of them in `results`), by the outputs of a launch of `kernel`: its
    arguments are buffers of the tensors `inputs`, of their shapes, and a
    new buffer for each result, which the kernel writes; the caller erases
    the ops it lowered. Results with no elements (a dim of size 0) are new
    buffers alone: no launch (a grid has no size 0), and the kernel, which
    a lowering need not build then (`is_empty`), is erased where it was
    built."""
    results = list(last.results) if results is None else results
    empty = all(0 in type_view(r.type).shape for r in results)
    with ir.InsertionPoint(last), last.location:
        operands = [] if empty else [_buffer(v) for v in inputs]
        outs = [type_view(r.type) for r in results]
        buffers = [memref.AllocOp(MemRefType(out.shape, out.dtype).to_mlir(), [], []).result
                   for out in outs]
        if empty:
            _erase_kernel(last, kernel)
        else:
            hw.LaunchOp.build(operands + buffers, kernel=kernel, grid=grid, block=block)
        values = [bufferization.ToTensorOp(out.to_mlir(), result, restrict=True,
                                           writable=True).result
                  for out, result in zip(outs, buffers)]
    for old, value in zip(results, values):
        old.replace_all_uses_with(value)


def _erase_kernel(op: ir.Operation, name: str) -> None:
    """Erases the kernel `name` of the module holding `op`, if there is one."""
    module = op.parent
    while module.name != "builtin.module":
        module = module.parent
    for candidate in module.regions[0].blocks[0].operations:
        if hw.is_kernel(candidate.operation) \
                and ir.StringAttr(candidate.attributes["sym_name"]).value == name:
            candidate.operation.erase()
            return


def is_empty(op: ir.Operation) -> bool:
    """Whether the results of `op` have no elements (a dim of size 0)."""
    return all(0 in type_view(r.type).shape for r in op.results)





class GroupNotLowered(Exception):
    """A group (or op) that the elementwise and row kernels do not cover."""


# ---------------------------------------------------------------------------
# The registry: an nn op's lowering to hw kernels, by op class.


@dataclass
class HWLowering:
    """What an nn->hw lowering gets besides the op's view: the target
    `chip`, the tiling the user forced (`tiles`, None: the lowering's
    choice), the module's body that kernels go into (`kernels`) and a
    name for the op's kernel, unique in the module (`name`). A lowering
    that leaves its op may say why (`leave`): the error that reports the
    op says so. A lowering may instead return `DEFER` to be asked again,
    with `deferred` set, after the function's other ops (a transpose that a
    matmul kernel after it may read in place, taking it among its own ops);
    asked again, it lowers the op or leaves it for good."""

    chip: str
    tiles: TileConfig | None
    kernels: ir.Block
    name: str
    reasons: list = field(default_factory=list)
    deferred: bool = False

    def leave(self, op: ir.Operation, reason: str) -> None:
        """Leaves `op` unconverted, for `reason`; returns None (what the
        lowering returns)."""
        self.reasons.append((op, reason))


TO_HW = registry("hw")

DEFER = "defer"
"""What a lowering returns to be asked again after the other ops (see
`HWLowering`)."""

def splat_value(op: ir.Operation) -> float | None:
    """The value of a splat constant tensor, or None for other ops."""
    if op.name != "arith.constant":
        return None
    attribute = op.attributes["value"]
    if not isinstance(attribute, ir.DenseElementsAttr) or not attribute.is_splat:
        return None
    element = attribute.get_splat_value()
    return float(ir.FloatAttr(element).value) if isinstance(element, ir.FloatAttr) else None
