"""Conversion of upstream `shard` collectives on tensors to MPI, before bufferization.

Expects the output of `nn-shard-partition`: functions on tensors with the
collectives `shard.all_reduce`, `shard.all_gather`, `shard.all_to_all` and
`shard.reduce_scatter`, and the module attribute naming the MPI
implementation (MPICH: its handles are integers). Ranks are the devices of
the grid in row-major order, as upstream's `convert-shard-to-mpi` numbers
them: a collective over all axes of its grid, in order, runs on
`MPI_COMM_WORLD`; one over some axes on the communicator `MPI_Comm_split`
makes of the ranks that share their position on the other axes (freed
after the call).

* `shard.all_reduce` stays upstream's: it is moved onto buffers
  (`bufferization.to_buffer`, the op on memrefs, `bufferization.to_tensor`),
  which bufferization and buffer deallocation pass through, and upstream's
  `convert-shard-to-mpi` lowers it after deallocation (`shard-finalize-mpi`
  then frees the buffer that lowering allocates);
* `shard.all_gather`, `shard.all_to_all` and `shard.reduce_scatter`, which
  upstream's conversion does not cover, become calls of `MPI_Allgather`,
  `MPI_Alltoall` and `MPI_Reduce_scatter_block` on the aligned pointers of
  contiguous buffers. MPI exchanges rank-major blocks, so the axis a
  collective gathers, splits or scatters is first moved to the front
  (`tensor.expand_shape` + `linalg.transpose`) and back after.

`shard.all_slice` (a replicated value split: no communication) becomes a
`tensor.extract_slice` at the rank's offset (`shard.process_linear_index`,
which upstream's conversion lowers). It makes these five ops illegal and
leaves all other ops alone. Element
types: f32, f64, i32, i64 (and any type for the collectives that only move
data); other reductions are reported at the op.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, bufferization, func, linalg, llvm, memref, tensor

from lamina.dialects.shard import grids
from lamina.pass_registry import Pass, PassFailure, register_pass

# MPICH's handles (mpi.h of the `mpich` wheel): communicator, datatypes, ops.
MPI_COMM_WORLD = 0x44000000
MPI_DATATYPES = {"f32": 0x4C00040A, "f64": 0x4C00080B, "i32": 0x4C000405, "i64": 0x4C00083A}
MPI_BYTE = 0x4C00010D
MPI_OPS = {"sum": 0x58000003, "max": 0x58000001, "min": 0x58000002}

# name: argument types ("p" pointer, "i" int)
MPI_FUNCTIONS = {
    "MPI_Allgather": "piipiii",
    "MPI_Alltoall": "piipiii",
    "MPI_Reduce_scatter_block": "ppiiii",
    "MPI_Comm_split": "iiip",
    "MPI_Comm_free": "p",
}


def _i32(value: int) -> ir.Value:
    return arith.constant(ir.IntegerType.get_signless(32), value if value < 2**31 else value - 2**32)


def _pointer(value: ir.Value) -> ir.Value:
    """The aligned pointer of a tensor's (contiguous) buffer."""
    shape = ir.RankedTensorType(value.type)
    buffer = bufferization.ToBufferOp(ir.MemRefType.get(shape.shape, shape.element_type),
                                      value, read_only=True).result
    return _buffer_pointer(buffer)


def _buffer_pointer(buffer: ir.Value) -> ir.Value:
    index = memref.ExtractAlignedPointerAsIndexOp(buffer).result
    address = arith.index_cast(ir.IntegerType.get_signless(64), index)
    return llvm.IntToPtrOp(llvm.PointerType.get(), address).result


def _blocks_first(value: ir.Value, axis: int, parts: int) -> ir.Value:
    """`value` with `axis` cut into `parts` blocks, the block index moved to
    the front: shape [parts, ...with axis / parts]."""
    tensor_type = ir.RankedTensorType(value.type)
    shape = list(tensor_type.shape)
    expanded_shape = shape[:axis] + [parts, shape[axis] // parts] + shape[axis + 1:]
    groups = [[d] for d in range(axis)] + [[axis, axis + 1]] + [
        [d + 1] for d in range(axis + 1, len(shape))]
    expanded = tensor.expand_shape(ir.RankedTensorType.get(expanded_shape,
                                                           tensor_type.element_type),
                                   value, groups, [], expanded_shape)
    if axis == 0:
        return expanded
    permutation = [axis] + [d for d in range(len(expanded_shape)) if d != axis]
    moved_shape = [expanded_shape[d] for d in permutation]
    init = tensor.empty(moved_shape, tensor_type.element_type)
    return linalg.transpose(expanded, outs=[init], permutation=permutation).results[0]


def _blocks_back(value: ir.Value, axis: int) -> ir.Value:
    """The inverse of `_blocks_first`: [parts, ...] with the blocks joined
    along `axis` (the local axis index, before the block axis is removed)."""
    tensor_type = ir.RankedTensorType(value.type)
    shape = list(tensor_type.shape)
    if axis:
        permutation = list(range(1, axis + 1)) + [0] + list(range(axis + 1, len(shape)))
        moved_shape = [shape[d] for d in permutation]
        init = tensor.empty(moved_shape, tensor_type.element_type)
        value = linalg.transpose(value, outs=[init], permutation=permutation).results[0]
        shape = moved_shape
    joined = shape[:axis] + [shape[axis] * shape[axis + 1]] + shape[axis + 2:]
    groups = [[d] for d in range(axis)] + [[axis, axis + 1]] + [
        [d + 1] for d in range(axis + 1, len(joined))]
    return tensor.collapse_shape(ir.RankedTensorType.get(joined, tensor_type.element_type),
                                 value, groups)


def _receive(shape: list[int], element: ir.Type) -> tuple[ir.Value, ir.Value]:
    buffer = memref.alloc(ir.MemRefType.get(shape, element), [], [])
    return buffer, _buffer_pointer(buffer)


def _as_tensor(buffer: ir.Value) -> ir.Value:
    memref_type = ir.MemRefType(buffer.type)
    return bufferization.ToTensorOp(ir.RankedTensorType.get(memref_type.shape,
                                                            memref_type.element_type),
                                    buffer, restrict=True, writable=True).result


def _call(name: str, arguments: list[ir.Value]) -> None:
    func.CallOp([ir.IntegerType.get_signless(32)], name, arguments)


def _declare(module: ir.Operation, used: set[str]) -> None:
    body = module.regions[0].blocks[0]
    existing = {ir.StringAttr(op.operation.attributes["sym_name"]).value
                for op in body.operations if "sym_name" in op.operation.attributes}
    pointer, i32 = llvm.PointerType.get(), ir.IntegerType.get_signless(32)
    for name in sorted(used - existing):
        inputs = [pointer if kind == "p" else i32 for kind in MPI_FUNCTIONS[name]]
        with ir.InsertionPoint.at_block_begin(body), ir.Location.unknown():
            func.FuncOp(name, ir.FunctionType.get(inputs, [i32]), visibility="private")


def _attribute_int(op: ir.Operation, name: str) -> int:
    return ir.IntegerAttr(op.attributes[name]).value


def _reduction(op: ir.Operation) -> str:
    if "reduction" not in op.attributes:
        return "sum"
    text = str(op.attributes["reduction"])
    for kind in MPI_OPS:
        if kind in text:
            return kind
    raise PassFailure(f"'{op.name}' with reduction {text} cannot run on MPI (reductions: "
                      f"{', '.join(MPI_OPS)})", op.location)


def _datatype(op: ir.Operation, element: ir.Type, reducing: bool) -> tuple[int, int]:
    """The MPI datatype and the count factor of one element."""
    name = str(element)
    if name in MPI_DATATYPES:
        return MPI_DATATYPES[name], 1
    if reducing:
        raise PassFailure(f"'{op.name}' on {name} elements cannot run on MPI (reductions "
                          f"on: {', '.join(MPI_DATATYPES)})", op.location)
    width = ir.FloatType(element).width if isinstance(element, ir.FloatType) else \
        ir.IntegerType(element).width
    return MPI_BYTE, max(1, width // 8)


def _grid_position(op: ir.Operation, axes: list[int], shape: tuple[int, ...]) -> ir.Value:
    """This rank's linear index over the grid axes `axes`, in their order."""
    index_type = ir.IndexType.get()
    position = ir.Operation.create("shard.process_multi_index",
                                   results=[index_type] * len(axes),
                                   attributes={"grid": op.attributes["grid"],
                                               "axes": ir.DenseI16ArrayAttr.get(axes)})
    linear = arith.constant(index_type, 0)
    for axis, value in zip(axes, position.results):
        linear = arith.addi(arith.muli(linear, arith.constant(index_type, shape[axis])), value)
    return linear


def _communicator(op: ir.Operation, grid_shapes: dict[str, tuple[int, ...]],
                  used: set[str]) -> tuple[ir.Value, int, ir.Value | None]:
    """The communicator of a collective's grid axes, its size and, for a
    sub-grid, the slot to free it from: MPI_COMM_WORLD when the axes are
    all of the grid's in order (ranks are numbered row-major), else
    `MPI_Comm_split` by the position on the other axes, ranked by the
    position on the collective's."""
    shape = grid_shapes[ir.FlatSymbolRefAttr(op.attributes["grid"]).value]
    axes = list(ir.DenseI16ArrayAttr(op.attributes["grid_axes"]))
    ranks = math.prod(shape[a] for a in axes)
    if axes == list(range(len(shape))):
        return _i32(MPI_COMM_WORLD), ranks, None
    others = [a for a in range(len(shape)) if a not in axes]
    i32 = ir.IntegerType.get_signless(32)
    color = arith.index_cast(i32, _grid_position(op, others, shape))
    key = arith.index_cast(i32, _grid_position(op, axes, shape))
    slot = llvm.AllocaOp(llvm.PointerType.get(), arith.constant(ir.IntegerType.get_signless(64), 1),
                         i32).result
    _call("MPI_Comm_split", [_i32(MPI_COMM_WORLD), color, key, slot])
    used.add("MPI_Comm_split")
    return llvm.LoadOp(i32, slot).result, ranks, slot


def _lower(op: ir.Operation, grid_shapes: dict[str, tuple[int, ...]], used: set[str]) -> None:
    source = op.operands[0]
    source_type = ir.RankedTensorType(source.type)
    result_type = ir.RankedTensorType(op.results[0].type)
    element = source_type.element_type
    if op.name == "shard.all_reduce":
        buffer = bufferization.ToBufferOp(ir.MemRefType.get(source_type.shape, element),
                                          source, read_only=True).result
        reduced = ir.Operation.create(
            "shard.all_reduce", results=[ir.MemRefType.get(result_type.shape,
                                                           result_type.element_type)],
            operands=[buffer], attributes={name: op.attributes[name] for name in op.attributes})
        op.results[0].replace_all_uses_with(_as_tensor(reduced.results[0]))
        return
    if op.name == "shard.all_slice":
        # Local: this rank's block, at its position on the grid axes.
        axis = _attribute_int(op, "slice_axis")
        shape = grid_shapes[ir.FlatSymbolRefAttr(op.attributes["grid"]).value]
        index = _grid_position(op, list(ir.DenseI16ArrayAttr(op.attributes["grid_axes"])),
                               shape)
        length = result_type.shape[axis]
        start = arith.muli(index, arith.constant(ir.IndexType.get(), length))
        rank = len(result_type.shape)
        dynamic = ir.ShapedType.get_dynamic_size()
        offsets = [dynamic if d == axis else 0 for d in range(rank)]
        result = tensor.extract_slice(result_type, source, [start], [], [], offsets,
                                      list(result_type.shape), [1] * rank)
        op.results[0].replace_all_uses_with(result)
        return
    comm, ranks, slot = _communicator(op, grid_shapes, used)
    if op.name == "shard.all_gather":
        axis = _attribute_int(op, "gather_axis")
        datatype, factor = _datatype(op, element, False)
        count = _i32(math.prod(source_type.shape) * factor)
        buffer, receive = _receive([ranks] + list(source_type.shape), element)
        _call("MPI_Allgather", [_pointer(source), count, _i32(datatype), receive, count,
                                _i32(datatype), comm])
        result = _blocks_back(_as_tensor(buffer), axis)
    elif op.name == "shard.all_to_all":
        split, concat = _attribute_int(op, "split_axis"), _attribute_int(op, "concat_axis")
        datatype, factor = _datatype(op, element, False)
        blocks = _blocks_first(source, split, ranks)
        block_shape = list(ir.RankedTensorType(blocks.type).shape)
        count = _i32(math.prod(block_shape[1:]) * factor)
        buffer, receive = _receive(block_shape, element)
        _call("MPI_Alltoall", [_pointer(blocks), count, _i32(datatype), receive, count,
                               _i32(datatype), comm])
        # Received: [rank, ...block with split axis / ranks]; join along concat.
        result = _blocks_back(_as_tensor(buffer), concat)
    else:  # shard.reduce_scatter
        axis = _attribute_int(op, "scatter_axis")
        datatype, _ = _datatype(op, element, True)
        blocks = _blocks_first(source, axis, ranks)
        buffer, receive = _receive(list(result_type.shape), element)
        _call("MPI_Reduce_scatter_block", [_pointer(blocks), receive,
                                           _i32(math.prod(result_type.shape)), _i32(datatype),
                                           _i32(MPI_OPS[_reduction(op)]), comm])
        result = _as_tensor(buffer)
    used.add({"shard.all_gather": "MPI_Allgather", "shard.all_to_all": "MPI_Alltoall",
              "shard.reduce_scatter": "MPI_Reduce_scatter_block"}[op.name])
    if slot is not None:
        _call("MPI_Comm_free", [slot])
        used.add("MPI_Comm_free")
    op.results[0].replace_all_uses_with(result)


COLLECTIVES = ("shard.all_reduce", "shard.all_gather", "shard.all_to_all", "shard.reduce_scatter",
               "shard.all_slice")


@register_pass
@dataclass
class ConvertShardCollectivesToMPI(Pass):
    """Lowers shard collectives on tensors to MPI: all_gather, all_to_all and reduce_scatter to MPI calls on buffers, all_reduce onto buffers for upstream's convert-shard-to-mpi."""

    argument = "convert-shard-collectives-to-mpi"
    verifies_lamina_ops = False  # no op of Lamina's dialects at its stage

    def run(self, op: ir.Operation) -> None:
        grid_shapes = grids(op)
        if not grid_shapes:
            return
        found: list[ir.Operation] = []

        def visit(inner):
            if inner.name in COLLECTIVES and isinstance(inner.operands[0].type,
                                                        ir.RankedTensorType):
                found.append(inner)
            return ir.WalkResult.ADVANCE

        op.walk(visit, ir.WalkOrder.PRE_ORDER)
        used: set[str] = set()
        for collective in found:
            with ir.InsertionPoint(collective), collective.location:
                _lower(collective, grid_shapes, used)
            collective.erase()
        _declare(op, used)
