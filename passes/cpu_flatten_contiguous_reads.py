"""--cpu-flatten-contiguous-reads: a vector read whole from a tensor and
only reshaped to one dim reads the tensor collapsed to one dim.

A bf16 dot product reads a row of B's packed panel, `[1, 1, 16, 2]`
elements, as one vector of 32 (`vector.transfer_read` of a
`vector<1x1x16x2xbf16>`, then `vector.shape_cast` to `vector<32xbf16>`).
Lowered as it is, an n-D transfer becomes one read per innermost row (16
reads of 2 elements and their shuffles); read from the tensor collapsed
to 1-D (`tensor.collapse_shape`, which bufferizes to a view of the same
contiguous slice) it is one vector load.

Rewrites a `vector.shape_cast` to a 1-D vector of a `vector.transfer_read`
that reads a whole static tensor (every index 0, in bounds, the identity
map, the vector's shape the tensor's), where the tensor is a slice or
value whose elements are contiguous (a `tensor.extract_slice` whose
non-unit sizes are its source's innermost dims, taken whole but for the
outermost of them). Expects tensors (before bufferization). Guarantees:
the same values; other reads are left as they are.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, tensor, vector

from lamina.pass_registry import Pass, register_pass


def _defining_op(value: ir.Value) -> ir.Operation | None:
    owner = value.owner
    return None if isinstance(owner, ir.Block) else owner.operation


def _flattened_dim(read: ir.Operation) -> int | None:
    """The dim from which `read` (a transfer_read of a static tensor, in
    bounds, its map the identity) reads every element of the tensor's
    innermost dims: its vector's first dim that is not a unit one, after
    which each dim is the tensor's whole at index 0. None when it is not
    such a read or there is nothing to collapse."""
    if read.name != "vector.transfer_read" or len(read.results) != 1:
        return None
    source = read.operands[0]
    if not isinstance(source.type, ir.RankedTensorType):
        return None
    source_type = ir.RankedTensorType(source.type)
    vector_type = ir.VectorType(read.results[0].type)
    rank = source_type.rank
    if not source_type.has_static_shape or vector_type.rank != rank:
        return None
    if len(read.operands) != 2 + rank:   # a mask
        return None
    if "permutation_map" in read.attributes:
        permutation = ir.AffineMapAttr(read.attributes["permutation_map"]).value
        if permutation != ir.AffineMap.get_minor_identity(rank, rank):
            return None
    in_bounds = read.attributes["in_bounds"] if "in_bounds" in read.attributes else None
    if in_bounds is None or not all(ir.BoolAttr(b).value for b in in_bounds):
        return None
    shape = list(vector_type.shape)
    first = next((d for d, size in enumerate(shape) if size != 1), rank - 1)
    if first >= rank - 1:
        return None
    indices = list(read.operands)[1:1 + rank]
    for d in range(first + 1, rank):
        if shape[d] != source_type.shape[d] or not _is_zero(indices[d]):
            return None
    return first


def _is_zero(value: ir.Value) -> bool:
    owner = _defining_op(value)
    return (owner is not None and owner.name == "arith.constant"
            and ir.IntegerAttr(owner.attributes["value"]).value == 0)


def _contiguous(value: ir.Value, first: int) -> bool:
    """Whether the dims from `first` on of a static tensor are contiguous
    where it is stored: it is no slice, or a slice with unit strides that
    takes its source's dims after `first` whole, of a source whose dims
    from `first` on are contiguous."""
    owner = _defining_op(value)
    if owner is None or owner.name != "tensor.extract_slice":
        return True
    slice_op = owner.opview
    source = ir.RankedTensorType(slice_op.source.type)
    sizes = list(slice_op.static_sizes)
    strides = list(slice_op.static_strides)
    if (len(sizes) != source.rank or not source.has_static_shape
            or any(s != 1 for s in strides)):
        return False
    if any(sizes[d] != source.shape[d] for d in range(first + 1, source.rank)):
        return False
    return _contiguous(slice_op.source, first)


@register_pass
@dataclass
class CPUFlattenContiguousReads(Pass):
    """Reads a whole contiguous tensor that is only reshaped to one dim as one vector of its elements collapsed to one dim."""

    argument = "cpu-flatten-contiguous-reads"
    verifies_lamina_ops = False  # no op of Lamina's dialects at its stage
    anchor = "func.func"

    def run(self, op: ir.Operation) -> None:
        found: list[tuple[ir.Operation, int]] = []

        def visit(candidate):
            candidate = candidate.operation
            if candidate.name == "vector.shape_cast":
                read = _defining_op(candidate.operands[0])
                first = _flattened_dim(read) if read is not None else None
                if (first is not None and ir.VectorType(candidate.results[0].type).rank == 1
                        and _contiguous(read.operands[0], first)):
                    found.append((candidate, first))
            return ir.WalkResult.ADVANCE

        op.walk(visit, ir.WalkOrder.PRE_ORDER)
        for cast, first in found:
            self.flatten(cast, first)

    @staticmethod
    def flatten(cast: ir.Operation, first: int) -> None:
        """`cast` of its read as a 1-D read of the tensor whose dims from
        `first` on are collapsed into one."""
        read = _defining_op(cast.operands[0])
        source = read.operands[0]
        source_type = ir.RankedTensorType(source.type)
        rank = source_type.rank
        flat_type = ir.VectorType(cast.results[0].type)
        shape = list(source_type.shape)
        inner = 1
        for size in shape[first + 1:]:
            inner *= size
        i64 = ir.IntegerType.get_signless(64)
        groups = [[d] for d in range(first)] + [list(range(first, rank))]
        indices = list(read.operands)[1:1 + rank]
        with ir.InsertionPoint(cast), cast.location:
            collapsed = tensor.CollapseShapeOp(
                ir.RankedTensorType.get(shape[:first] + [shape[first] * inner],
                                        source_type.element_type), source,
                ir.ArrayAttr.get([ir.ArrayAttr.get([ir.IntegerAttr.get(i64, d) for d in group])
                                  for group in groups]))
            offset = indices[first]
            if inner != 1:
                stride = arith.ConstantOp(ir.IndexType.get(), inner)
                offset = arith.MulIOp(offset, stride.result).result
            flat = vector.TransferReadOp(
                flat_type, collapsed.result, indices[:first] + [offset],
                ir.AffineMapAttr.get(ir.AffineMap.get_minor_identity(first + 1, 1)),
                read.operands[1 + rank], [True])
        cast.results[0].replace_all_uses_with(flat.result)
        cast.erase()
        if not list(read.results[0].uses):
            read.erase()
