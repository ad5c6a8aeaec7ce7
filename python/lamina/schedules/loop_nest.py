"""Loop nests: elementwise ops, reductions and their fusion groups, split
over threads by rows and vectorised along their contiguous dim.

The group's root (the op whose result leaves it, fed by the most members)
is tiled by an `scf.forall` over its rows, one at a time (an op whose only
parallel dim is its vector dim is cut into chunks, a transpose split
along one dim so that each iteration reads a contiguous block); the
producers whose slice one iteration needs is a slice of their rows are
fused into that loop, so that the group is one loop nest. Every op is
then vectorised where it is (`op_tiling`). Members that cannot follow the
root's rows (a column statistic, another result of the group) get loop
nests of their own. This kind applies to every group, and is asked last.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from math import prod
from typing import ClassVar

from mlir import ir
from mlir.dialects.transform import structured
from mlir.dialects.transform import tensor as tensor_transform

from lamina.schedules.analysis import Group, LinalgOp, _op_key
from lamina.schedules.kind import Schedule, ScheduleKind
from lamina.schedules.op_tiling import (OpTiling, largest_divisor, op_tiling, vector_dim,
                                        vector_length)
from lamina.schedules.transforms import forall, match_tag, patterns
from lamina.targets.cpu_model import CPUModel


@dataclass(frozen=True)
class LoopNestSchedule(Schedule):
    """The root split over threads (`threads`: `scf.forall` tile sizes of
    its loops, 0 = not split; empty: no thread loop), the producers `fused`
    into that loop (consumers before producers), and the vector code of
    each op (`ops`)."""

    kind: ClassVar[str] = "loop-nest"

    threads: tuple[int, ...] = ()
    fused: tuple[str, ...] = ()
    ops: tuple[OpTiling, ...] = ()

    def decisions(self) -> list[str]:
        lines = [f"  threads {list(self.threads)}"] if self.threads else []
        return lines + [op.describe() for op in self.ops]

    def render(self, root: ir.Value) -> None:
        target = match_tag(root, self.root)
        if self.threads and any(self.threads):
            _, loop = forall(target, self.threads)
            for tag in self.fused:
                patterns(root, tensor_transform.ApplyBubbleUpExtractSlicePatternsOp)
                producer = match_tag(root, tag)
                loop = structured.FuseIntoContainingOp(producer, loop).new_containing_op
        for tiling in self.ops:
            tiling.render(root)


class LoopNestKind(ScheduleKind):
    """Loop nests over rows (see the module docstring)."""

    name = "loop-nest"

    def choose(self, group: Group, model: CPUModel) -> list[Schedule]:
        return loop_nest_schedules(group.name, group.ops, model)


def _forall_tiles(root: LinalgOp, model: CPUModel) -> tuple[int, ...]:
    """Rows (every parallel dim but the vector dim) one at a time; an op
    whose only parallel dim is its vector dim is cut into chunks. A
    transpose is split along one dim only (`_transpose_forall_tiles`):
    each thread's iteration reads a contiguous block (a row at a time, its
    reads would be scattered over the whole input, and the iterations
    too short for the loop's overhead)."""
    dim = vector_dim(root)
    if root.vector_dim() is None and root.inputs == 1:
        tiles = _transpose_forall_tiles(root, dim, model)
        if tiles:
            return tiles
    tiles = []
    for d, extent in enumerate(root.extents):
        if root.reduction[d] or extent == 1 or d == dim:
            tiles.append(0)
        else:
            tiles.append(1)
    if not any(tiles) and dim is not None and not root.reduction[dim]:
        length = vector_length(root.extents[dim], model) or 1
        target = max(length, root.extents[dim] // (model.threads * 8))
        chunk = largest_divisor(root.extents[dim], target, length)
        if chunk < root.extents[dim]:
            tiles[dim] = chunk
    return tuple(tiles) if any(tiles) else ()


def _transpose_forall_tiles(root: LinalgOp, dim: int | None,
                            model: CPUModel) -> tuple[int, ...]:
    """The thread loop of a transpose: the outermost dim of its input, one
    at a time, under which the input is read in runs of a cache line at
    least (an NCHW image's rows); else its vector dim in blocks of one
    vector, each streaming that many whole rows of the input (a filter's
    output channels); empty when neither splits."""
    input_dims = root.maps[0]
    for position, d in enumerate(input_dims):
        if d is None or d == dim or root.reduction[d] or root.extents[d] == 1:
            continue
        run = prod(root.extents[e] for e in input_dims[position + 1:] if e is not None)
        if run >= model.lanes:
            return tuple(1 if e == d else 0 for e in range(root.rank))
    if dim is not None and not root.reduction[dim]:
        size = vector_length(root.extents[dim], replace(model, unroll=1))
        if size and size < root.extents[dim]:
            return tuple(size if e == dim else 0 for e in range(root.rank))
    return ()


def _result_shape(linalg: LinalgOp) -> tuple[int | None, ...]:
    return tuple(None if d is None else linalg.extents[d] for d in linalg.output_map)


def _rows(linalg: LinalgOp, other: LinalgOp) -> list[int | None]:
    """The dims of an op's result, matched against another op's (the
    root's and a producer's, each against the other). Where the two
    results have one shape, dims of extent 1 are left out (a unit dim,
    which no thread loop splits, does not stop a producer from following
    its consumer's rows); otherwise all of them count (a unit dim the
    other does not have cannot be matched to its rows)."""
    dims = list(linalg.output_map)
    if _result_shape(linalg) != _result_shape(other):
        return dims
    return [d for d in dims if d is None or linalg.extents[d] != 1]


def _readers(op: ir.Operation) -> list[ir.Operation]:
    """The ops that read `op`'s results, through reshapes and slices."""
    readers, values = [], list(op.results)
    while values:
        for use in list(values.pop().uses):
            user = use.owner.operation if isinstance(use.owner, ir.OpView) else use.owner
            if user.name in ("tensor.expand_shape", "tensor.collapse_shape",
                             "tensor.extract_slice"):
                values.extend(user.results)
            else:
                readers.append(user)
    return readers


def _fusable(producer: LinalgOp, root: LinalgOp, threads: tuple[int, ...]) -> bool:
    """Whether the slice of `producer` that one forall iteration needs is a
    slice of its rows (not the whole of it, which fusion would recompute
    at every iteration): the root's split dims lead the producer's result
    as parallel dims of the same extents."""
    split = [d for d, t in enumerate(threads) if t]
    root_dims = _rows(root, producer)
    if any(d not in root_dims for d in split):
        return False
    leading = [root_dims.index(d) for d in split]
    if leading != list(range(len(split))):
        return False
    out = _rows(producer, root)
    if len(out) < len(split):
        return False
    for position, d in enumerate(split):
        pd = out[position]
        if pd is None or producer.reduction[pd] or producer.extents[pd] != root.extents[d]:
            return False
    return True


def _fused_tiles(producer: LinalgOp, root: LinalgOp, threads: tuple[int, ...]) -> tuple[int, ...]:
    """The tile sizes of a fused producer's loops in the root's thread loop:
    the split dims of the root lead the producer's result (`_fusable`)."""
    tiles = [0] * producer.rank
    split = [d for d, t in enumerate(threads) if t]
    out = _rows(producer, root)
    for position, d in enumerate(split):
        tiles[out[position]] = threads[d]
    return tuple(tiles)


def loop_nest_schedules(name: str, ops: list[LinalgOp], model: CPUModel) -> list[Schedule]:
    """Schedules of a group of elementwise ops and reductions: the root
    split over threads with the producers that can follow it fused into
    its loop; the others (members that do not feed the root too) in loop
    nests of their own. The other kinds schedule the rest of their groups
    (a convolution's epilogue) with it."""
    if not ops:
        return []
    group = Group(name, list(ops))
    root = group.root
    threads = _forall_tiles(root, model)
    feeding = group.feeding(root)
    fused, alone = [], []
    inside = {_op_key(root.op)}
    for op in reversed(group.ops):
        if op is not root:
            # A producer moves into the root's loop only if something there
            # reads it (consumers come first in this walk).
            fusable = (threads and op in feeding and _fusable(op, root, threads)
                       and any(_op_key(user) in inside for user in _readers(op.op)))
            (fused if fusable else alone).append(op)
            if fusable:
                inside.add(_op_key(op.op))
    schedules: list[Schedule] = []
    for index, op in enumerate(reversed(alone)):
        tiling = op_tiling(op, model, scalable=True)
        schedules.append(LoopNestSchedule(group=f"{name}_{index}", root=op.tag,
                                          threads=_forall_tiles(op, model),
                                          ops=(tiling,) if tiling else ()))
    tilings = [op_tiling(root, model, threads, scalable=True)] + [
        op_tiling(op, model, _fused_tiles(op, root, threads), scalable=True) for op in fused]
    schedules.append(LoopNestSchedule(group=name, root=root.tag, threads=threads,
                                      fused=tuple(op.tag for op in fused),
                                      ops=tuple(t for t in tilings if t)))
    return schedules
