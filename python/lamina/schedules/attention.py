"""Schedules of loop bodies: the linalg ops a lowering already placed
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
(`op_tiling`).

Variants measured on the bench's attention (B=1 H=8 S=512 D=64, f32,
AVX-512, 2 threads; best of 150 calls): 8 queries x 128 keys 3.31 ms, x 64
keys 3.57 ms, x 256 keys 3.36 ms; 4 queries 3.56 ms; 16 queries (32
accumulators, spilled) 3.93 ms. Before the accumulators were hoisted out
of the products' reduction loops (read and written at every step), with
the loop's temporaries allocated at every key tile, it took 7.5 ms. The
exponentials, maxima and sums one vector (16 lanes) at a time instead of
four: 4% faster on one thread (6.5-6.7 ms instead of 6.8-7.0 ms, best of
two runs each) and 5% less compile time (a row sum ends adding 16 partial
sums, not 64). See the lowering's docstring for the comparison with XLA.
"""

from __future__ import annotations

from dataclasses import replace

from mlir import ir

from lamina.schedules.analysis import SCHEDULE_TAG, LinalgOp, analyze, contraction_dims
from lamina.schedules.cost_model import CPUModel, op_tiling
from lamina.schedules.schedule import OpTiling, Schedule

# Keys per step of the online softmax: scores of 8 x 128 floats (4 KiB)
# stay in L1 between the ops of one step, and the per-step work (row
# maxima, rescaling the output) is spread over 128 keys.
KEY_TILE = 128


def attention_tiles(model: CPUModel) -> tuple[int, int]:
    """(queries, keys) per tile of the flash-style attention lowering: the
    rows of the register tile (8 with 32 vector registers, else 4) and
    `KEY_TILE` keys."""
    return (8 if model.vector_registers >= 32 else 4), KEY_TILE


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


def loop_body_schedules(function: ir.Operation, prefix: str, model: CPUModel,
                        context: ir.Context) -> list[Schedule]:
    """One schedule per top-level loop of `function` that holds linalg ops
    (tagged `{prefix}_loop{n}/{index}`): every op vectorised in place."""
    # One vector per step: the rows are short (a key tile), and a row sum
    # ends in a serial horizontal add over its partial sums' lanes.
    one_vector = replace(model, unroll=1)
    schedules = []
    for operation in function.regions[0].blocks[0].operations:
        op = operation.operation
        if not op.name.startswith("scf."):
            continue
        nested: list[LinalgOp] = []

        def collect(child):
            linalg = analyze(child) if child.name.startswith("linalg.") else None
            if linalg is not None:
                nested.append(linalg)
            return ir.WalkResult.ADVANCE

        op.walk(collect, ir.WalkOrder.PRE_ORDER)
        if not nested:
            continue
        name = f"{prefix}_loop{len(schedules)}"
        tilings = []
        for index, linalg in enumerate(nested):
            linalg.tag = f"{name}/{index}"
            linalg.op.attributes[SCHEDULE_TAG] = ir.StringAttr.get(linalg.tag, context)
            tiling = register_tiling(linalg, model) or op_tiling(linalg, one_vector)
            if tiling:
                tilings.append(tiling)
        schedules.append(Schedule(group=name, kind="loop-nest", root=nested[0].tag,
                                  ops=tuple(tilings)))
    return schedules
