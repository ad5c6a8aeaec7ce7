"""Data-movement kernels: each result element computes where its value
comes from.

nn.transpose, nn.broadcast_to, nn.slice (strided), nn.pad, nn.concat,
nn.gather, nn.iota, nn.cumsum and nn.argmax, of any element type of nn
tensors (f32, f16, bf16, i32, i64, i1), are grid-stride kernels over the
result's index space (`MovementKernel`): each block's tile is a run of
consecutive result elements (`nvidia.elementwise_kernel_shape`), so that
the stores are coalesced; each element is read through the op's index
map (`hw.gather_elements`: a permutation, strides and starts per source
dim, padding outside the source, indices read from a tensor for a
gather), made from its coordinate (`hw.index_elements` for iota) or
folded along an axis by the thread that holds it (`hw.fold_axis` for a
prefix sum and an argmax), and the tile is stored as a run
(`hw.store_elements`). A concatenation is one gather per operand into
the same tile, each filling the part of the run that its operand covers.

A swap of the last two dims goes through shared memory
(`TiledTranspose`: a 32x32 tile per block, one column of padding, so that
both the reads and the writes of global memory are rows); a transpose
that moves only dims of 1 is a view; any other permutation is a gather,
its reads strided.

nn.reshape is no kernel: the host collapses its operand into a vector
and expands that into the result's shape (`tensor.collapse_shape`,
`tensor.expand_shape`), which bufferize as views of the same buffer.

Why hw kernels rather than linalg -> gpu: the index maps of pad, concat
and gather are not affine maps of one operand, and the emulation and the
hazard checker run the same block-collective ops as the other kernels.
"""

from __future__ import annotations

import math
from typing import Callable

from mlir import ir
from mlir.dialects import arith, func, scf, tensor

from lamina.dialects import hw, nn
from lamina.lowering.hw_to_loops import index
from lamina.lowering.nn_to_hw.kernels import DEFER, HWLowering, is_empty, launch, new_kernel
from lamina.lowering.nn_to_hw.matmul import transposed_source
from lamina.lowering.registry import lowering
from lamina.targets import nvidia
from lamina.types import MemRefType, TensorType, type_view


class MovementKernel:
    """A grid-stride kernel over the index space of `result`: the blocks
    stride over its tiles of `threads * per_thread` consecutive elements;
    `fill(kernel, arguments, tile, offset)` writes the ops that compute a
    tile's elements (the run starting at flat position `offset`) into
    `tile`, a register tile of the result's element type, from the
    kernel's `arguments` (the buffers of `inputs`, in order), and the
    kernel stores the tile."""

    def __init__(self, inputs: list[ir.Value], result: ir.Value, target: HWLowering):
        self.inputs, self.result, self.target = inputs, result, target
        self.space = type_view(result.type).shape
        self.dtype = type_view(result.type).dtype
        arch = nvidia.architecture(target.chip)
        self.threads, per_thread, self.grid = nvidia.elementwise_kernel_shape(
            math.prod(self.space), arch)
        self.length = self.threads * per_thread
        self.tiles = -(-math.prod(self.space) // self.length)

    def tile(self, dtype: str, length: int | None = None) -> ir.Value:
        """A register tile of the run's length (or of `length`: 1 for a
        value every thread holds), at the kernel's top."""
        with ir.InsertionPoint.at_block_begin(self.entry):
            return hw.AllocOp.build(result_type=MemRefType((length or self.length,), dtype,
                                                           "private"))

    def build(self, op: ir.Operation,
              fill: Callable[["MovementKernel", list[ir.Value], ir.Value, ir.Value], None]
              ) -> list[ir.Operation]:
        """The kernel and its launch in place of `op`; returns [op]."""
        if is_empty(op):
            launch(op, [], self.target.name, ())
            return [op]
        argument_types = [MemRefType(type_view(v.type).shape, type_view(v.type).dtype).to_mlir()
                          for v in self.inputs + [self.result]]
        kernel = new_kernel(self.target.kernels, self.target.name, argument_types, op.location)
        self.entry = kernel.add_entry_block()
        *arguments, out = self.entry.arguments
        with op.location, ir.InsertionPoint(self.entry):
            tile = self.tile(self.dtype)
            loop = scf.ForOp(hw.BlockIdOp.build(dim=0), index(self.tiles), index(self.grid))
            with ir.InsertionPoint(loop.body):
                offset = arith.muli(loop.induction_variable, index(self.length))
                fill(self, list(arguments), tile, offset)
                hw.StoreElementsOp.build(tile, out, offset, shape=list(self.space),
                                         count=self.length)
                scf.YieldOp([])
            func.ReturnOp([])
        launch(op, self.inputs, self.target.name, (self.grid,), (self.threads,))
        return [op]

    def gather(self, source: ir.Value, tile: ir.Value, offset: ir.Value, dims, **attributes
               ) -> None:
        """`tile`'s run read from `source` through an index map."""
        hw.GatherElementsOp.build(source, tile, offset, attributes.pop("indices", None),
                                  shape=list(self.space), count=self.length, dims=list(dims),
                                  **attributes)


def _movement(op_class):
    """Registers `fill(view, kernel, arguments, tile, offset)` (the op's
    view, then a `MovementKernel.build` fill) as the lowering of
    `op_class`: a kernel over its result's space."""
    def register(fill):
        @lowering(op_class, to="hw")
        def lower(op, target: HWLowering) -> list[ir.Operation]:
            kernel = MovementKernel(list(op.operation.operands), op.operation.results[0], target)
            return kernel.build(op.operation, lambda k, arguments, tile, offset: fill(
                op, k, arguments, tile, offset))
        lower.__doc__ = fill.__doc__
        lower.__name__ = f"lower_{op_class.name}"
        return lower
    return register


def _transpose_gather(op, kernel, arguments, tile, offset):
    """Result dim `i` is source dim `perm[i]`: source dim `d` follows
    result dim `perm.index(d)`."""
    perm = list(op.perm)
    kernel.gather(arguments[0], tile, offset, [perm.index(d) for d in range(len(perm))])


def _matmul_may_read_in_place(transpose: ir.Operation) -> bool:
    """Whether a swap of the last two dims feeds a matmul or a contraction
    group, whose kernel may read the transpose's input in place (and take
    the transpose among its ops where it is its only user: matmul's
    `read_in_place`): the transpose is then lowered after it, if it is
    still there."""
    if transposed_source(transpose.results[0]) is None:
        return False
    return any(use.owner.name == "nn.matmul" or (
        use.owner.name == "nn.fused"
        and ir.StringAttr(use.owner.attributes["kind"]).value == nn.CONTRACTION)
        for use in transpose.results[0].uses)


# Element types a transpose moves through shared memory (what hw.copy moves).
SHARED_TRANSPOSE_TYPES = ("f32", "f16", "bf16", "i32")


@lowering(nn.TransposeOp, to="hw")
def lower_transpose(op: nn.TransposeOp, target: HWLowering) -> list[ir.Operation]:
    """A transpose that moves only dims of size 1 is a view (a reshape); a
    swap of the last two dims (of a type hw.copy moves) goes through shared
    memory in tiles (`TiledTranspose`), so that reads and writes are both
    coalesced; any other permutation is a gather."""
    operation = op.operation
    x, result = operation.operands[0], operation.results[0]
    if not target.deferred and _matmul_may_read_in_place(operation):
        return DEFER
    shape, perm = type_view(x.type).shape, list(op.perm)
    moved = [d for d in perm if shape[d] != 1]
    if moved == sorted(moved):
        with ir.InsertionPoint(operation), operation.location:
            result.replace_all_uses_with(reshaped_view(x, type_view(result.type).shape))
        return [operation]
    rank = len(shape)
    if perm == list(range(rank - 2)) + [rank - 1, rank - 2] \
            and type_view(x.type).dtype in SHARED_TRANSPOSE_TYPES:
        return TiledTranspose(x, result, target).build(operation)
    kernel = MovementKernel([x], result, target)
    return kernel.build(operation, lambda k, arguments, tile, offset: _transpose_gather(
        op, k, arguments, tile, offset))


class TiledTranspose:
    """A swap of the last two dims, [..., M, N] -> [..., N, M], a tile of
    `side x side` elements at a time (`nvidia.transpose_tile`): the blocks
    stride over the tiles (the batch's, then the rows', then the columns');
    each copies its tile of the source into shared memory (`hw.copy`: rows
    of the source read by consecutive threads), gathers it across its rows
    into registers (`hw.gather_elements`: the result's rows) and stores
    those as a box of the result at the tile's place (`hw.store_elements`
    with an origin: rows of the result written by consecutive threads);
    barriers keep the shared tile from being read before it is written and
    written again before it is read. Past the ends of M and N, the copy
    reads zeros and the store skips."""

    def __init__(self, x: ir.Value, result: ir.Value, target: HWLowering):
        self.x, self.result, self.target = x, result, target
        self.shape = type_view(x.type).shape
        self.dtype = type_view(x.type).dtype
        self.side, self.threads, self.row = nvidia.transpose_tile()
        *self.batch, rows, cols = self.shape
        self.row_tiles, self.col_tiles = -(-rows // self.side), -(-cols // self.side)
        self.tiles = math.prod(self.batch) * self.row_tiles * self.col_tiles
        arch = nvidia.architecture(target.chip)
        self.grid = min(self.tiles, 8 * arch.sms)

    def build(self, op: ir.Operation) -> list[ir.Operation]:
        if is_empty(op):
            launch(op, [], self.target.name, ())
            return [op]
        types = [MemRefType(type_view(v.type).shape, self.dtype).to_mlir()
                 for v in (self.x, self.result)]
        kernel = new_kernel(self.target.kernels, self.target.name, types, op.location)
        entry = kernel.add_entry_block()
        x, y = entry.arguments
        side = self.side
        with op.location, ir.InsertionPoint(entry):
            shared = hw.AllocOp.build(result_type=MemRefType((side, self.row), self.dtype,
                                                             "workgroup"))
            tile = hw.AllocOp.build(result_type=MemRefType((side * side,), self.dtype,
                                                           "private"))
            loop = scf.ForOp(hw.BlockIdOp.build(dim=0), index(self.tiles), index(self.grid))
            with ir.InsertionPoint(loop.body):
                number = loop.induction_variable
                col = arith.muli(arith.remui(number, index(self.col_tiles)), index(side))
                rest = arith.divui(number, index(self.col_tiles))
                row = arith.muli(arith.remui(rest, index(self.row_tiles)), index(side))
                rest = arith.divui(rest, index(self.row_tiles))
                batch = []
                for extent in reversed(self.batch[1:]):
                    batch.insert(0, arith.remui(rest, index(extent)))
                    rest = arith.divui(rest, index(extent))
                batch = [rest] + batch if self.batch else []
                hw.CopyOp.build(x, shared, batch + [row, col])
                hw.BarrierOp.build()
                hw.GatherElementsOp.build(shared, tile, index(0), None, shape=[side, side],
                                          count=side * side, dims=[1, 0])
                hw.BarrierOp.build()
                hw.StoreElementsOp.build(tile, y, index(0), batch + [col, row],
                                         shape=[1] * len(self.batch) + [side, side],
                                         count=side * side)
                scf.YieldOp([])
            func.ReturnOp([])
        launch(op, [self.x], self.target.name, (self.grid,), (self.threads,))
        return [op]


@_movement(nn.BroadcastToOp)
def _broadcast_to(op, kernel, arguments, tile, offset):
    """Source dim `d` follows the result's trailing dim it aligns with;
    a dim of 1 broadcast stays at 0."""
    source = type_view(op.operation.operands[0].type).shape
    lead = len(kernel.space) - len(source)
    kernel.gather(arguments[0], tile, offset,
                  [-1 if size == 1 and kernel.space[lead + d] != 1 else lead + d
                   for d, size in enumerate(source)])


@_movement(nn.SliceOp)
def _slice(op, kernel, arguments, tile, offset):
    """Source dim `d` at `start + i * stride`."""
    rank = len(kernel.space)
    kernel.gather(arguments[0], tile, offset, range(rank), starts=list(op.starts),
                  strides=list(op.step(rank)))


@_movement(nn.PadOp)
def _pad(op, kernel, arguments, tile, offset):
    """Source dim `d` at `i - low`; outside the source, the padding value."""
    kernel.gather(arguments[0], tile, offset, range(len(kernel.space)),
                  starts=[-low for low in op.low], value=float(op.value))


@_movement(nn.ConcatOp)
def _concat(op, kernel, arguments, tile, offset):
    """One gather per operand, each shifted to where the operand starts
    along the axis; the others' positions are outside it."""
    rank = len(kernel.space)
    axis = op.axis % rank
    start = 0
    for value, argument in zip(op.operation.operands, arguments):
        size = type_view(value.type).shape[axis]
        if size:
            kernel.gather(argument, tile, offset, range(rank),
                          starts=[-start if d == axis else 0 for d in range(rank)])
        start += size


@_movement(nn.GatherOp)
def _gather(op, kernel, arguments, tile, offset):
    """Source dim `axis` at the index the indices hold at the result dims
    that replace it; the source's later dims follow the result's after
    those."""
    x, indices = op.operation.operands
    rank, index_rank = type_view(x.type).rank, type_view(indices.type).rank
    axis = op.axis % rank
    dims = [d if d <= axis else d + index_rank - 1 for d in range(rank)]
    kernel.gather(arguments[0], tile, offset, dims, indices=arguments[1], axis=axis)


@_movement(nn.IotaOp)
def _iota(op, kernel, arguments, tile, offset):
    """Each element's coordinate along the axis."""
    hw.IndexElementsOp.build(tile, offset, shape=list(kernel.space), count=kernel.length,
                             axis=op.axis % len(kernel.space))


def _fold_axis(kind: str):
    def fill(op, kernel, arguments, tile, offset):
        rank = type_view(op.operation.operands[0].type).rank
        hw.FoldAxisOp.build(arguments[0], tile, offset, shape=list(kernel.space),
                            count=kernel.length, axis=op.axis % rank, kind=kind)
    fill.__doc__ = f"Each element the {kind} of its line along the axis (`hw.fold_axis`)."
    return fill


_movement(nn.CumsumOp)(_fold_axis("prefix_sum"))
_movement(nn.ArgmaxOp)(_fold_axis("argmax"))


def reshaped_view(value: ir.Value, shape: tuple[int, ...]) -> ir.Value:
    """`value`, a tensor, with the elements (row-major) in `shape`: its
    vector of elements expanded, which bufferizes as a view of its buffer."""
    view = type_view(value.type)
    if view.shape == tuple(shape):
        return value
    size = math.prod(view.shape)
    flat = TensorType((size,), view.dtype).to_mlir()
    if view.rank == 0:
        vector = tensor.expand_shape(flat, value, [], [], [size])
    elif view.rank == 1:
        vector = value
    else:
        vector = tensor.collapse_shape(flat, value, [list(range(view.rank))])
    target = TensorType(tuple(shape), view.dtype).to_mlir()
    if len(shape) == 0:
        return tensor.collapse_shape(target, vector, [])
    if len(shape) == 1:
        return vector
    return tensor.expand_shape(target, vector, [list(range(len(shape)))], [], list(shape))


@lowering(nn.ReshapeOp, to="hw")
def lower_reshape(op: nn.ReshapeOp, target: HWLowering) -> list[ir.Operation]:
    """No kernel: a view of the operand's buffer in the result's shape."""
    operation = op.operation
    with ir.InsertionPoint(operation), operation.location:
        value = reshaped_view(operation.operands[0], op.result_type.shape)
    operation.results[0].replace_all_uses_with(value)
    return [operation]
