"""Builders of the transform ops that every schedule kind renders with:
matching a tagged op, tiling (`scf.for`, `scf.forall`), fusing producers
into a loop, vectorising, and applying pattern sets. Each emits at the
current insertion point, inside a `transform.named_sequence`, and returns
the handles the next step needs.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import transform
from mlir.dialects.transform import structured

from lamina.schedules.analysis import SCHEDULE_TAG


def any_op() -> ir.Type:
    return transform.AnyOpType.get()


def op_type(name: str) -> ir.Type:
    return transform.OperationType.get(name)


def match_tag(target: ir.Value, tag: str) -> ir.Value:
    """The op under `target` whose `lamina.schedule` attribute is `tag`."""
    attrs = ir.DictAttr.get({SCHEDULE_TAG: ir.StringAttr.get(tag)})
    return structured.MatchOp(any_op(), target, op_attrs=attrs).result


def _sizes(sizes: tuple[int, ...], scalable: tuple[bool, ...]) -> list:
    """Sizes as the builders take them: a scalable one in a list (`[4]`)."""
    return [[s] if scalable and scalable[i] else s for i, s in enumerate(sizes)]


def tile(target: ir.Value, sizes: tuple[int, ...],
         scalable: tuple[bool, ...] = ()) -> tuple[ir.Value, list[ir.Value]]:
    """`target` tiled by `scf.for` loops of `sizes` (0: not tiled; those
    flagged `scalable` are multiples of vscale): the tiled op and the
    loops, outermost first; no loops when all are 0."""
    if not any(sizes):
        return target, []
    op = structured.TileUsingForOp(target, sizes=_sizes(sizes, scalable))
    return op.tiled_linalg_op, list(op.loops)


def forall(target: ir.Value, sizes: tuple[int, ...]) -> tuple[ir.Value, ir.Value]:
    """`target` tiled by an `scf.forall` (the threads' loop): the tiled op
    and the loop."""
    op = structured.TileUsingForallOp(any_op(), any_op(), target, tile_sizes=list(sizes))
    return op.tiled_op, op.forall_op


def fuse_into(producers: list[ir.Value], container: ir.Value) -> list[ir.Value]:
    """Each of `producers` fused into the loop `container` in turn (each
    fusion gives a new handle to the loop); the fused ops' handles."""
    fused = []
    for producer in producers:
        fusion = structured.FuseIntoContainingOp(producer, container)
        fused.append(fusion.fused_op)
        container = fusion.new_containing_op
    return fused


def vectorize(target: ir.Value, sizes: tuple[int, ...] = (),
              scalable: tuple[bool, ...] = ()) -> None:
    """Vectorises `target`; with `sizes` (scalable ones flagged), masked
    to vectors of those sizes."""
    if sizes:
        structured.VectorizeOp(target, vector_sizes=_sizes(sizes, scalable))
    else:
        structured.VectorizeOp(target)


def patterns(target: ir.Value, *builders, cse: bool = False) -> None:
    """One `transform.apply_patterns` on `target` with the pattern ops
    `builders` make."""
    apply = transform.ApplyPatternsOp(target, apply_cse=cse)
    with ir.InsertionPoint(apply.patterns):
        for build in builders:
            build()


def canonicalization() -> None:
    transform.ApplyCanonicalizationPatternsOp()


def vectorize_copy(handle: ir.Value, sizes: tuple[int, ...], threads: tuple[int, ...]) -> None:
    """Vectorises a data-movement op (a lowered pack) tile by tile; the
    outermost loop is shared by the threads when the schedule has some."""
    handle = transform.CastOp(any_op(), handle).output
    if threads and any(threads) and sizes and sizes[0]:
        handle, _ = forall(handle, (sizes[0],) + (0,) * (len(sizes) - 1))
    tiled, _ = tile(handle, sizes)
    vectorize(tiled)
