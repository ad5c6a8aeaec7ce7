"""Flash attention's loop body: the linalg ops a lowering already placed
inside loops, which the fusion groups of a function do not see.

The flash-style attention lowering (`convert-nn-to-linalg` with an
`attention-query-tile`) builds such loops: a `scf.forall` over (batch x
heads, query tiles) holding the online softmax's `scf.for` over key tiles,
whose body is small linalg ops of static shapes (`[bq, bk]` scores, `[bq]`
row statistics, `[bq, Dv]` outputs). The forall is already the split over
threads (OpenMP shares its iterations) and the tiles are already small, so
each op is only vectorised where it is: the two products (`q k^T` and
`p v`) into register tiles of FMAs, `bq` rows by two vectors of columns,
looping over their reduction dim with the accumulators in registers; the
exponentials, row maxima and sums and the rescaling one vector at a time
(`op_tiling`): the rows are short (a key tile), and a row sum ends in a
serial horizontal add over its partial sums' lanes. The tiles' sizes
(`attention_tiles`) were chosen by measurement (`bench/results.md`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar

from mlir import ir

from lamina.schedules.analysis import Group, LinalgOp, contraction_dims
from lamina.schedules.kind import Schedule, ScheduleKind
from lamina.schedules.op_tiling import OpTiling, op_tiling
from lamina.schedules.transforms import match_tag
from lamina.targets.cpu_model import CPUModel

# Keys per step of the online softmax: scores of 8 x 128 floats (4 KiB)
# stay in L1 between the ops of one step, and the per-step work (row
# maxima, rescaling the output) is spread over 128 keys.
KEY_TILE = 128


def attention_tiles(model: CPUModel) -> tuple[int, int]:
    """(queries, keys) per tile of the flash-style attention lowering: the
    rows of the register tile (8 with 32 vector registers, else 4) and
    `KEY_TILE` keys."""
    return (8 if model.vector_registers >= 32 else 4), KEY_TILE


@dataclass(frozen=True)
class AttentionSchedule(Schedule):
    """The ops of one loop body, each vectorised where it is (`ops`)."""

    kind: ClassVar[str] = "attention"

    ops: tuple[OpTiling, ...] = ()

    def decisions(self) -> list[str]:
        return [op.describe() for op in self.ops]

    def render(self, root: ir.Value) -> None:
        match_tag(root, self.root)
        for tiling in self.ops:
            tiling.render(root)


class AttentionKind(ScheduleKind):
    """Loop bodies vectorised in place (see the module docstring). Applies
    to the groups of ops inside a loop (`Group.loop`)."""

    name = "attention"

    def choose(self, group: Group, model: CPUModel) -> list[Schedule] | None:
        if group.loop is None:
            return None
        one_vector = replace(model, unroll=1)
        tilings = [register_tiling(linalg, model) or op_tiling(linalg, one_vector)
                   for linalg in group.ops]
        return [AttentionSchedule(group=group.name, root=group.ops[0].tag,
                                  ops=tuple(t for t in tilings if t))]


def register_tiling(linalg: LinalgOp, model: CPUModel) -> OpTiling | None:
    """The register tile of a contraction `C[m, n] += A[m, k] B[k, n]`
    whose operands are small tiles: all of its rows, two vectors (or one)
    of columns, one step of k at a time; None when the columns are not a
    multiple of a vector or it is not such a contraction."""
    dims = contraction_dims(linalg)
    if dims is None or dims.batch:
        return None
    extents = linalg.extents
    columns = next((c for c in (2 * model.lanes, model.lanes) if extents[dims.n] % c == 0), 0)
    if not columns:
        return None
    tile = [0] * linalg.rank
    # No loop of one iteration: it would be folded away under the handles.
    tile[dims.n] = columns if columns < extents[dims.n] else 0
    tile[dims.k] = 1 if extents[dims.k] > 1 else 0
    return OpTiling(linalg.tag, tuple(tile), accumulate=bool(tile[dims.k]))
