"""--cpu-vnni-contractions: signed i8 matmuls rewritten into the unsigned x
signed form of VNNI's `vpdpbusd`.

AVX512-VNNI multiplies unsigned bytes by signed bytes (u8 x s8, four
products summed into each i32 lane). A `linalg.matmul` of i8 operands into
a zero-filled i32 result, C = A x B with both signed, becomes

    A' = A + 128           (an i8 generic: the bits of the u8 value a + 128)
    C  = -128 * colsum(B) + sum_k zext(A'[m, k]) * sext(B[k, n])

which is the same sum exactly in wrapping i32 arithmetic. The column sums
are a reduction of B alone: for constant or bound weights they are
computed once (`func-split-initializer`), like the packing of B. The
contraction is a `linalg.generic` with an `arith.extui` of its left
operand and an `arith.extsi` of its right one, which the dot-product
schedule (lamina.schedules.dot_product) packs as the instruction wants.

The same holds for a generic of a matmul's loops whose body is `acc +
sext(a) * sext(b)`: a 1x1 convolution as the contraction it is
(`cpu-pointwise-convolutions-to-contractions`), whose filters are its
left operand (shifted once, for constant weights) and whose images its
right one (their column sums are each pixel's sum over the channels).

The CPU pipeline runs this pass only for targets whose model has
`avx512vnni`. Expects linalg on tensors. Guarantees: the same results; no
2-D i8 x i8 -> i32 `linalg.matmul` (or its generic) with a zero fill
left; the new ops keep
the matmul's fusion group. Batch matmuls, and matmuls with another
initial value, are left as they are.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, linalg, tensor

from lamina.linalg_builders import defining_op, erase_unused, fusion_marks, mark, matching_ops
from lamina.pass_registry import Pass, register_pass


def _zero_fill(value: ir.Value) -> ir.Operation | None:
    fill = defining_op(value, "linalg.fill")
    if fill is None:
        return None
    constant = defining_op(fill.operands[0], "arith.constant")
    if constant is None or ir.IntegerAttr(constant.attributes["value"]).value != 0:
        return None
    return fill


def _is_signed_byte_product(op: ir.Operation) -> bool:
    """A `linalg.generic` with a matmul's maps and iterators whose body is
    `acc + sext(a) * sext(b)` (a 1x1 convolution as its contraction)."""
    if op.name != "linalg.generic":
        return False
    maps = [str(m) for m in ir.ArrayAttr(op.attributes["indexing_maps"])]
    if maps != [str(ir.AffineMapAttr.get(m)) for m in _maps(3, [0, 2], [2, 1], [0, 1])]:
        return False
    iterators = [str(i) for i in ir.ArrayAttr(op.attributes["iterator_types"])]
    if iterators != ["#linalg.iterator_type<parallel>"] * 2 + ["#linalg.iterator_type<reduction>"]:
        return False
    block = op.regions[0].blocks[0]
    names = [o.name for o in block.operations]
    if names != ["arith.extsi", "arith.extsi", "arith.muli", "arith.addi", "linalg.yield"]:
        return False
    first, second = list(block.operations)[:2]
    return [first.operands[0], second.operands[0]] == list(block.arguments)[:2]


def is_signed_byte_matmul(op: ir.Operation) -> bool:
    """A static 2-D `linalg.matmul` of i8 operands into a zero-filled i32
    result, or the generic of one (`_is_signed_byte_product`)."""
    if op.name not in ("linalg.matmul", "linalg.generic") or len(op.operands) != 3:
        return False
    if op.name == "linalg.generic" and not _is_signed_byte_product(op):
        return False
    types = [v.type for v in op.operands]
    if not all(isinstance(t, ir.RankedTensorType) and t.has_static_shape and t.rank == 2
               for t in types):
        return False
    i8, i32 = ir.IntegerType.get_signless(8), ir.IntegerType.get_signless(32)
    if [t.element_type for t in types] != [i8, i8, i32]:
        return False
    if "cast" in op.attributes and "unsigned" in str(op.attributes["cast"]):
        return False
    return _zero_fill(op.operands[2]) is not None


def _maps(rank: int, *dims: list[int]) -> list[ir.AffineMap]:
    return [ir.AffineMap.get(rank, 0, [ir.AffineDimExpr.get(d) for d in ds]) for ds in dims]


def _generic(inputs, init, maps, iterators, body) -> ir.Value:
    op = linalg.GenericOp([init.type], inputs, [init], maps, iterators)
    block = op.regions[0].blocks.append(*[ir.RankedTensorType(v.type).element_type
                                          for v in list(inputs) + [init]])
    with ir.InsertionPoint(block):
        linalg.YieldOp([body(*block.arguments)])
    return op.result


def vnni_form(op: ir.Operation) -> None:
    """Replaces the matmul `op` with its u8 x s8 form (see the module docstring)."""
    a, b, init = op.operands
    (m, k), n = ir.RankedTensorType(a.type).shape, ir.RankedTensorType(b.type).shape[1]
    i8, i32 = ir.IntegerType.get_signless(8), ir.IntegerType.get_signless(32)
    parallel, reduction = linalg.IteratorType.parallel, linalg.IteratorType.reduction
    fill = defining_op(init, "linalg.fill")
    marks = fusion_marks(op)
    with ir.InsertionPoint(op), op.location:
        offset = arith.constant(i8, -128)
        unsigned_a = _generic([a], tensor.empty([m, k], i8), _maps(2, [0, 1], [0, 1]),
                              [parallel] * 2, lambda x, _: arith.addi(x, offset))
        scale = arith.constant(i32, -128)
        zero = arith.constant(i32, 0)
        sums = linalg.fill(zero, outs=[tensor.empty([n], i32)])
        compensation = _generic([b], sums, _maps(2, [0, 1], [1]), [reduction, parallel],
                                lambda x, acc: arith.addi(acc, arith.muli(arith.extsi(i32, x),
                                                                          scale)))
        rows = _generic([compensation], tensor.empty([m, n], i32), _maps(2, [1], [0, 1]),
                        [parallel] * 2, lambda x, _: x)
        product = _generic([unsigned_a, b], rows, _maps(3, [0, 2], [2, 1], [0, 1]),
                           [parallel, parallel, reduction],
                           lambda x, y, acc: arith.addi(acc, arith.muli(arith.extui(i32, x),
                                                                        arith.extsi(i32, y))))
    mark([v.owner.operation for v in (unsigned_a, sums, compensation, rows, product)], marks)
    op.results[0].replace_all_uses_with(product)
    op.erase()
    erase_unused(fill)


@register_pass
@dataclass
class CPUVNNIContractions(Pass):
    """Rewrites signed i8 x i8 -> i32 matmuls into VNNI's u8 x s8 form: A + 128 times B, from an accumulator of -128 times B's column sums."""

    argument = "cpu-vnni-contractions"
    verifies_lamina_ops = False  # no op of Lamina's dialects at its stage

    def run(self, op: ir.Operation) -> None:
        for matmul in matching_ops(op, is_signed_byte_matmul):
            vnni_form(matmul)
