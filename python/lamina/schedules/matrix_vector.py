"""Matrix-vector products: contractions with fewer rows than the packed
kind's register tile (a classifier's last layer at batch 1, a language
model decoding one token), computed from B where it lies.

The packed contraction (lamina.schedules.contraction) copies B into panels
so that each panel, once in cache, is reused by every block of A's rows;
with one row there is no reuse to pay for the copy, and A's rows are
padded up to the register tile's eight. A 1x1280 by 1280x1000 product, the
weight read once per call, took 0.97 ms packed on two threads where NumPy
takes 0.09 ms. Here no operand is copied, and B is read as it lies, row
after row: the loop over k takes `rows` rows of B at a time (that many
streams through memory, which the hardware prefetches), and for each
block of rows a loop over C's columns adds the rows' strips, a few vectors
wide, times A's elements (broadcast) to C's strip: `rows` FMAs per vector
of C loaded and stored. The op is split along C's columns into parts whose
strips are whole, so that no step is masked: the columns the threads share
evenly, the whole strips left (on one thread), and the last columns, which
fill no strip (one narrower step).

Applies to a contraction whose M has fewer rows than the packed kind's
register tile and whose B and C are read along N (N their innermost dim,
as a weight the importers transposed once is), unless its bf16 operands
take the dot product of bf16 pairs (lamina.schedules.bf16_dot_product);
the rest of the group gets loop nests.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import ceil
from typing import ClassVar

from mlir import ir
from mlir.dialects import transform
from mlir.dialects.transform import structured
from mlir.dialects.transform import vector as vector_transform

from lamina.schedules.analysis import Group, LinalgOp, contraction_dims
from lamina.schedules.bf16_dot_product import computes_bf16_pairs
from lamina.schedules.contraction import initialising_fills, register_tile_rows
from lamina.schedules.kind import Schedule, ScheduleKind
from lamina.schedules.loop_nest import loop_nest_schedules
from lamina.schedules.op_tiling import OpTiling, fill_tilings
from lamina.schedules.transforms import (any_op, canonicalization, forall, match_tag, patterns,
                                         tile, vectorize)
from lamina.targets.cpu_model import CPUModel


@dataclass(frozen=True)
class Part:
    """Columns of C computed alike: `columns` of them (the op is split
    after them), shared by the threads in slices of `thread_columns` (0:
    one thread), in strips of `strip` columns."""

    columns: int
    thread_columns: int
    strip: int


@dataclass(frozen=True)
class MatrixVectorSchedule(Schedule):
    """A matrix-vector product: the op's loops over C's columns (`n`) and
    over k (`k`) among its `rank` loops, the rows of B a block of k takes
    (`rows`), the batch dims it steps through one at a time (`batch`), its
    `parts` along the columns in order, and the vector code of the fills
    that initialise the result (`fills`)."""

    kind: ClassVar[str] = "matrix_vector"

    n: int = 0
    k: int = 0
    rank: int = 0
    rows: int = 1
    batch: tuple[int, ...] = ()
    parts: tuple[Part, ...] = ()
    fills: tuple[OpTiling, ...] = ()

    def decisions(self) -> list[str]:
        lines = [f"  blocks of {self.rows} rows of B, read in place"]
        for part in self.parts:
            shared = (f", slices of {part.thread_columns} for the threads"
                      if part.thread_columns else "")
            lines.append(f"  {part.columns} columns{shared}, strips of {part.strip}")
        return lines

    def render(self, root: ir.Value) -> None:
        rest = match_tag(root, self.root)
        handles = []
        for part in self.parts[:-1]:
            # The split point counts from the start of what is left.
            both = structured.SplitOp(rest, self.n, part.columns).results[0]
            first, rest = transform.SplitHandleOp([any_op(), any_op()], both).results
            handles.append(first)
        handles.append(rest)
        for part, handle in zip(self.parts, handles):
            self._part(root, part, handle)
        for tiling in self.fills:
            tiling.render(root)

    def _sizes(self, **loops: int) -> tuple[int, ...]:
        """Tile sizes: 1 for the batch dims, the given ones for `n`/`k`."""
        sizes = [0] * self.rank
        for d in self.batch:
            sizes[d] = 1
        for name, size in loops.items():
            sizes[getattr(self, name)] = size
        return tuple(sizes)

    def _part(self, root: ir.Value, part: Part, target: ir.Value) -> None:
        """The part's threads, its loop over blocks of k, its loop over
        strips, and each step (a strip by a block: a contraction over the
        block's k, lowered to outer products) vectorised."""
        if part.thread_columns:
            target, _ = forall(target, self._sizes(n=part.thread_columns))
        elif self.batch:
            target, _ = tile(target, self._sizes())
        target, _ = tile(target, self._sizes(k=self.rows))
        own = part.thread_columns or part.columns
        target, _ = tile(target, self._sizes(n=part.strip if own > part.strip else 0))
        vectorize(target)
        patterns(root, vector_transform.ApplyVectorReductionToContractPatternsOp,
                 vector_transform.ApplyTransferPermutationPatternsOp, canonicalization)


class MatrixVectorKind(ScheduleKind):
    """Contractions with fewer rows than a register tile, B read in place
    (see the module docstring)."""

    name = "matrix_vector"

    def choose(self, group: Group, model: CPUModel) -> list[Schedule] | None:
        for linalg in group.ops:
            if contraction_dims(linalg) is None:
                continue
            fills = initialising_fills(group, linalg)
            schedule = matrix_vector_schedule(f"{group.name}_contraction", linalg, fills, model)
            if schedule is None:
                return None
            rest = [op for op in group.ops if op is not linalg and op not in fills]
            return [schedule] + loop_nest_schedules(group.name, rest, model)
        return None


def matrix_vector_schedule(group: str, linalg: LinalgOp, fills: list[LinalgOp],
                           model: CPUModel) -> MatrixVectorSchedule | None:
    """The schedule of a contraction with fewer rows than the packed
    register tile and B and C read along N, or None when it is not one."""
    dims = contraction_dims(linalg)
    extents = linalg.extents
    m, n, k = extents[dims.m], extents[dims.n], extents[dims.k]
    _, b_map, c_map = linalg.maps
    if m >= register_tile_rows(model) or b_map[-1] != dims.n or c_map[-1] != dims.n:
        return None
    if model.scalable_vectors or computes_bf16_pairs(linalg, model):
        # (bf16 pairs on the dot product: the packed kind's tile.)
        return None
    lanes = model.lanes
    # A strip of C: model.unroll vectors for a row of A, as many as the
    # registers hold beside A's broadcast elements and one vector of B.
    vectors = max(1, min(model.unroll, (model.vector_registers - 2) // (m + 1)))
    vectors = min(vectors, ceil(n / lanes))
    columns = vectors * lanes
    # B's rows a block takes, each a stream through memory; the block
    # divides k (a block of fewer rows would be masked along k).
    rows = next(r for r in (8, 4, 2, 1) if k % r == 0)
    # The columns the threads share in whole strips, the whole strips
    # left, and the last columns that fill no strip.
    strips = n // columns
    shared = strips // model.threads * model.threads if model.threads > 1 else 0
    parts = []
    if shared:
        parts.append(Part(shared * columns, shared // model.threads * columns, columns))
        strips -= shared
    if strips:
        parts.append(Part(strips * columns, 0, columns))
    if n % columns:
        parts.append(Part(n % columns, 0, n % columns))
    batch = tuple(d for d in dims.batch if extents[d] > 1)
    return MatrixVectorSchedule(
        group=group, root=linalg.tag, n=dims.n, k=dims.k, rank=linalg.rank,
        rows=rows if k > rows else 0, batch=batch, parts=tuple(parts),
        fills=fill_tilings(fills, model))
