"""--cpu-x86-dot-products: the register tiles of u8 x s8 contractions become
AVX512-VNNI `vpdpbusd`s.

A `vector.contract` (kind add, the operands' maps the identity) of
`arith.extui` of i8 by `arith.extsi` of i8 into i32, whose innermost loop
is a reduction over 4 and the one before it a parallel loop over 16 that
is the accumulator's innermost dim (other reduction loops of one
iteration), sums, for each of the accumulator's 16-lane vectors, 16
groups of four byte products: one `vpdpbusd` (the intrinsic
`llvm.x86.avx512.vpdpbusd.512`, called with `llvm.call_intrinsic`) on the
64 bytes of each operand (LLVM 22's signature: an i32 accumulator vector
and two vectors of 64 bytes). That is the register tile the dot-product
schedule (lamina.schedules.dot_product) vectorises; upstream's x86vector
dialect has no op for this instruction (its `avx.dot.i8` is AVX-VNNI-INT8's
signed `vpdpbssd`).

The CPU pipeline runs this pass only for targets whose model has
`avx512vnni`, before `cpu-lower-vectors`. Expects vector code. Guarantees:
the same sums; every such contraction replaced, other contractions left.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import llvm, vector

from lamina.linalg_builders import defining_op, erase_unused, matching_ops
from lamina.pass_registry import Pass, register_pass

VPDPBUSD = "llvm.x86.avx512.vpdpbusd.512"
LANES, GROUP = 16, 4


def _byte_source(value: ir.Value, extension: str) -> ir.Value | None:
    """The i8 vector `value` is the `extension` (to i32) of, or None."""
    op = defining_op(value, extension)
    if op is None:
        return None
    source = op.operands[0]
    if ir.VectorType(source.type).element_type != ir.IntegerType.get_signless(8):
        return None
    return source


def _broadcast_group(value: ir.Value, position: list[int]) -> ir.Value | None:
    """Where `value` is the same group of 4 bytes in all 16 lanes at
    `position` (a `vector.broadcast`, through a `vector.transpose`, of a
    vector whose innermost dim is the group: A's row in the register tile),
    that group (a vector<4xi8> extracted at the current insertion point);
    else None. Its 32 bits broadcast to the lanes are one `vpbroadcastd`."""
    rank = ir.VectorType(value.type).rank
    permutation = list(range(rank))
    transpose = defining_op(value, "vector.transpose")
    if transpose is not None:
        permutation = [int(p) for p in ir.DenseI64ArrayAttr(transpose.attributes["permutation"])]
        value = transpose.operands[0]
    broadcast = defining_op(value, "vector.broadcast")
    if broadcast is None or not isinstance(broadcast.operands[0].type, ir.VectorType):
        return None
    source = broadcast.operands[0]
    shape = ir.VectorType(source.type).shape
    added = rank - len(shape)
    # The dim of the broadcast's result each dim of `value` reads.
    lane_dim, byte_dim = permutation[rank - 2], permutation[rank - 1]
    if byte_dim != rank - 1 or shape[-1] != GROUP:
        return None
    if lane_dim >= added and shape[lane_dim - added] != 1:
        return None
    index = [0] * rank
    for d, p in enumerate(permutation[:rank - 2]):
        index[p] = position[d] if d < len(position) else 0
    source_index = [index[added + q] if shape[q] != 1 else 0 for q in range(len(shape) - 1)]
    return vector.extract(source, [], source_index)


def is_byte_dot_product(op: ir.Operation) -> bool:
    """A `vector.contract` of the form the module docstring states."""
    if op.name != "vector.contract" or "add" not in str(op.attributes["kind"]):
        return False
    lhs, rhs, acc = op.operands[:3]
    if len(op.operands) != 3 or not isinstance(acc.type, ir.VectorType):
        return False
    if _byte_source(lhs, "arith.extui") is None or _byte_source(rhs, "arith.extsi") is None:
        return False
    if ir.VectorType(acc.type).element_type != ir.IntegerType.get_signless(32):
        return False
    maps = [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(op.attributes["indexing_maps"])]
    iterators = [str(i) for i in ir.ArrayAttr(op.attributes["iterator_types"])]
    rank = len(iterators)
    shape = ir.VectorType(lhs.type).shape
    if rank < 2 or len(shape) != rank or ir.VectorType(rhs.type).shape != shape:
        return False
    identity = ir.AffineMap.get_identity(rank)
    if maps[0] != identity or maps[1] != identity:
        return False
    parallel = [d for d in range(rank) if "parallel" in iterators[d]]
    projection = ir.AffineMap.get(rank, 0, [ir.AffineDimExpr.get(d) for d in parallel])
    if maps[2] != projection:
        return False
    reductions_of_one = all(shape[d] == 1 for d in range(rank - 2) if d not in parallel)
    return (rank - 1 not in parallel and shape[-1] == GROUP and rank - 2 in parallel
            and shape[-2] == LANES and reductions_of_one)


def byte_dot_products(op: ir.Operation) -> None:
    """Replaces the contraction `op` with one vpdpbusd per accumulator vector."""
    lhs, rhs, acc = op.operands
    x, y = _byte_source(lhs, "arith.extui"), _byte_source(rhs, "arith.extsi")
    iterators = [str(i) for i in ir.ArrayAttr(op.attributes["iterator_types"])]
    shape = ir.VectorType(lhs.type).shape
    leading = range(len(shape) - 2)
    parallel = [d for d in leading if "parallel" in iterators[d]]
    with ir.InsertionPoint(op), op.location:
        i8, i32 = ir.IntegerType.get_signless(8), ir.IntegerType.get_signless(32)
        bytes_type = ir.VectorType.get([LANES * GROUP], i8)
        lanes_type = ir.VectorType.get([LANES], i32)
        result = acc
        for position in itertools.product(*(range(shape[d]) for d in parallel)):
            at = dict(zip(parallel, position))
            operand_position = [at.get(d, 0) for d in leading]

            def lanes(source):
                group = _broadcast_group(source, operand_position)
                if group is not None:
                    word = vector.bitcast(ir.VectorType.get([1], i32), group)
                    return vector.bitcast(bytes_type, vector.broadcast(lanes_type, word))
                return vector.shape_cast(bytes_type, vector.extract(source, [],
                                                                    operand_position))

            sums = vector.extract(acc, [], list(position)) if position else acc
            sums = llvm.CallIntrinsicOp(lanes_type, ir.StringAttr.get(VPDPBUSD),
                                        [sums, lanes(x), lanes(y)], [], []).result
            result = vector.insert(sums, result, [], list(position)) if position else sums
    extensions = [lhs.owner.operation, rhs.owner.operation]
    op.results[0].replace_all_uses_with(result)
    op.erase()
    erase_unused(*extensions)


@register_pass
@dataclass
class CPUX86DotProducts(Pass):
    """Turns u8 x s8 -> i32 vector contractions over groups of 4 bytes and 16 lanes into AVX512-VNNI vpdpbusd calls."""

    argument = "cpu-x86-dot-products"
    verifies_lamina_ops = False  # no op of Lamina's dialects at its stage

    def run(self, op: ir.Operation) -> None:
        for contraction in matching_ops(op, is_byte_dot_product):
            byte_dot_products(contraction)
