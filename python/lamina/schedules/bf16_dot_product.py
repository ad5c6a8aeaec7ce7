"""The register tile of bf16 contractions on a CPU with a dot product of
bf16 pairs (AVX512-BF16's `vdpbf16ps`: each f32 lane of an accumulator
adds the two products of a pair of bf16 from each operand).

The contraction's k is packed in pairs as well as its n in panels: B
becomes `[N/nr, K/2, nr, 2]` (each row of a panel the pairs of `nr`
columns, the layout the instruction reads) and A `[M, K/2, 2]` (A's own
rows; an odd K is padded with a zero). The register tile is `rows` rows
by `vectors` vectors of f32 accumulators; its inner loops, one row by one
vector, are unrolled, so that each step over k is one dot product per
accumulator: the row's pair broadcast to every lane, the panel row's
vector of pairs. Upstream rewrites each such one-row contraction into the
instruction (`vector_contract_to_packed_type_dot_product` of the
x86vector dialect's transform ops), once the widening of the bf16
operands is folded into the contraction (`fold_arith_extension`).

A contraction takes this tile when the target model has the instruction
(`CPUModel.bf16_dot_products`) and its operands are bf16 and its
accumulator f32 (what `nn.matmul`'s lowering gives a bf16 matmul that
`cpu-widen-contractions` left alone).
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects.transform import loop
from mlir.dialects.transform import tensor as tensor_transform
from mlir.dialects.transform import vector as vector_transform

from lamina.schedules.analysis import LinalgOp
from lamina.schedules.transforms import canonicalization, patterns, tile
from lamina.targets.cpu_model import CPUModel

# The x86vector dialect's transform op rewriting one-row contractions of
# packed pairs into dot-product instructions (no Python class for it).
PACKED_DOT_PRODUCT = "transform.apply_patterns.x86vector.vector_contract_to_packed_type_dot_product"


@dataclass(frozen=True)
class DotProductTile:
    """A register tile of `rows` rows by `vectors` vectors of `lanes` f32
    accumulators, each step over k `pair` elements of k per lane."""

    rows: int
    vectors: int
    lanes: int
    inner_tile: tuple[int, ...]
    """Tile sizes of the packed op's loops over one row and one vector."""
    pair: int = 2

    def tile_inner(self, register_tile: ir.Value) -> tuple[ir.Value, list[ir.Value]]:
        """The register tile's op tiled into one row by one vector: the
        tiled op and its loops (rows, then vectors)."""
        return tile(register_tile, self.inner_tile)

    def fold_widening(self) -> None:
        """The pattern op folding the bf16 operands' widening into the
        vectorised contraction, for the set that forms it."""
        vector_transform.ApplyFoldArithExtensionPatternsOp()

    def unroll(self, root: ir.Value, inner_loops: list[ir.Value]) -> None:
        """Unrolls the loops over rows and vectors whole (innermost first),
        and folds the slices of the accumulators into their vector reads
        and writes, so that hoisting them out of the loop over k keeps
        them in registers (hoisted slices would be tensors, each a buffer
        of its own)."""
        trips = [trip for trip in (self.rows, self.vectors) if trip > 1]
        for handle, trip in reversed(list(zip(inner_loops, trips))):
            loop.LoopUnrollOp(handle, factor=trip)
        patterns(root, tensor_transform.ApplyFoldTensorSubsetOpsIntoVectorTransfersPatternsOp,
                 tensor_transform.ApplyMergeConsecutiveInsertExtractSlicePatternsOp,
                 canonicalization)

    def rewrite(self, root: ir.Value) -> None:
        """Each one-row contraction becomes a dot-product instruction."""
        patterns(root, lambda: ir.Operation.create(PACKED_DOT_PRODUCT), canonicalization)


def computes_bf16_pairs(linalg: LinalgOp, model: CPUModel) -> bool:
    """Whether the contraction `linalg` takes a dot-product register
    tile: the model has the instruction, the operands are bf16 and the
    accumulator f32."""
    if not model.bf16_dot_products or model.scalable_vectors:
        return False
    types = [str(ir.ShapedType(v.type).element_type) for v in linalg.op.operands]
    return types == ["bf16", "bf16", "f32"]


def dot_product_tile(model: CPUModel, rows: int, vectors: int, rank: int, row_dim: int,
                     column_dim: int) -> DotProductTile:
    """The register tile of `rows` rows by `vectors` vectors of a packed
    op of `rank` loops, its rows along `row_dim` and its vector's lanes
    along `column_dim`."""
    inner = [0] * rank
    if rows > 1:
        inner[row_dim] = 1
    if vectors > 1:
        inner[column_dim] = model.lanes
    return DotProductTile(rows=rows, vectors=vectors, lanes=model.lanes, inner_tile=tuple(inner))
