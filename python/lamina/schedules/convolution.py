"""Convolutions: the direct schedule of a channels-last convolution
(`linalg.conv_2d_nhwc_hwcf`, loops n, oh, ow, f, kh, kw, c), which
`cpu-convolutions-to-channels-last` makes of the program's NCHW ones, and
of a channels-last depthwise one (`linalg.depthwise_conv_2d_nhwc_hwc`,
loops n, oh, ow, c, kh, kw; `convert-nn-to-linalg` makes it of an
`nn.conv2d` with `layout = "NHWC"` and one filter per channel).

Threads share the batch, else the output rows, else (too few rows to
share evenly: 7 on 2 threads) the output channels' register tiles if they
share evenly. The register tile is `mr` output pixels of one row x `nr`
output channels (two vectors): its accumulators stay in registers while
the loops over the filter's rows and the input channels run (one at a
time; the filter's width is unrolled), and each step broadcasts `mr`
input pixels and multiplies them with one filter row of `nr` output
channels, loaded contiguously from the HWCF filter. Upstream does the
rest: `transform.structured.decompose` turns each register tile (one
output row, one filter row) into a 1-D convolution, which
`transform.structured.vectorize` unrolls over the filter's width into
`vector.contract`s, the CPU's FMAs of outer products. A row that no tile
of more than `mr / 2` pixels divides is split (`transform.structured.split`)
into `mr`-pixel tiles and one tile of the rest; channel counts get the
largest tile that divides them.

A depthwise convolution has no input channels to sum: its register tile
is `mr` output pixels of one row x `nr` channels, each accumulator a
vector of channels, and each filter tap multiplies `mr` input vectors
(one per pixel, read contiguously from the NHWC input) with one vector of
the tap's weights (contiguous in the HWC filter); the filter's rows are a
loop, its width unrolled, as for dense convolutions. Channel counts get
the largest multiple of a vector that divides them (else the whole
count).

The direct convolution reads the input where it lies, where an img2col
rewrite would first gather the input's windows into a matrix (and pack
that matrix again for the contraction); `bench/results.md` compares the
two. The zero fill of the result runs on each thread's rows inside the
convolution's loop.

An epilogue (elementwise ops over the result: a bias, an activation, a
residual add, the last one the group's root) is computed on each
register tile while its accumulators are in registers: the last
epilogue op is tiled over threads and register tiles of the result, the
rest of the epilogue, the convolution and its zero fill fused into each
tile, so that the tile is zeroed, accumulated, run through the epilogue
and stored once, where a loop nest of its own would read and write the
whole result again (a depthwise 3x3 convolution with its bias and relu6
over 112x112x32: 0.50 -> 0.28 ms on one thread). Any other rest of the
group (the result's transpose back to NCHW, an epilogue on a split row)
gets loop nests.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from math import ceil, prod
from typing import ClassVar

from mlir import ir
from mlir.dialects import transform
from mlir.dialects.transform import loop, structured
from mlir.dialects.transform import tensor as tensor_transform
from mlir.dialects.transform import vector as vector_transform

from lamina.schedules.analysis import WINDOWED, Group, LinalgOp, _op_key, is_epilogue_chain
from lamina.schedules.contraction import initialising_fills
from lamina.schedules.kind import Schedule, ScheduleKind
from lamina.schedules.loop_nest import loop_nest_schedules
from lamina.schedules.op_tiling import OpTiling, fill_tilings, largest_divisor
from lamina.schedules.transforms import (any_op, canonicalization, forall, fuse_into, match_tag,
                                         patterns, tile, vectorize)
from lamina.targets.cpu_model import CPUModel


@dataclass(frozen=True)
class ConvolutionSchedule(Schedule):
    """A direct convolution: the thread tile of its loops (`threads`,
    empty: one thread), the register tile of each part of a row
    (`tile_sizes`, one level per part), the split of the row in two parts
    (`split`: the dim and the iterations of the first part; empty: one
    part) and the vector code of the fills that initialise it (`fills`),
    run on each thread's slice of the result."""

    kind: ClassVar[str] = "convolution"

    threads: tuple[int, ...] = ()
    tile_sizes: tuple[tuple[int, ...], ...] = ()
    split: tuple[int, int] | tuple[()] = ()
    fills: tuple[OpTiling, ...] = ()

    def decisions(self) -> list[str]:
        lines = [f"  threads {list(self.threads)}"] if self.threads else []
        if self.split:
            lines.append(f"  split dim {self.split[0]} after {self.split[1]}")
        return lines + [f"  tiles {list(level)}" for level in self.tile_sizes]

    def render(self, root: ir.Value) -> None:
        """Each register tile, one output row by one filter row, becomes a
        1-D convolution (upstream's decomposition), vectorised into FMAs;
        its accumulators stay in registers across the loops over the
        filter's rows and the input channels."""
        target = match_tag(root, self.root)
        fills = []
        scopes = []
        if self.threads:
            target, loop_handle = forall(target, self.threads)
            # Each thread zeroes the rows it computes, in its own loop (the
            # fills of several convolutions, alike, would otherwise be merged
            # by CSE and copied by bufferization).
            for tiling in self.fills:
                fused = structured.FuseIntoContainingOp(match_tag(root, tiling.tag), loop_handle)
                fills.append((fused.fused_op, tiling))
                loop_handle = fused.new_containing_op
            scopes = [loop_handle]
        else:
            fills = [(match_tag(root, tiling.tag), tiling) for tiling in self.fills]
        parts = [target]
        if self.split:
            dim, size = self.split
            both = structured.SplitOp(target, dim, size).results[0]
            parts = list(transform.SplitHandleOp([any_op(), any_op()], both).results)
        reduction_loops = []
        for part, register in zip(parts, self.tile_sizes):
            tiled, loops = tile(part, register)
            vectorize(structured.DecomposeOp(tiled).transformed)
            reductions = sum(1 for size in register[4:] if size)
            reduction_loops += reversed(loops[len(loops) - reductions:])
            if not self.threads:
                scopes.append(loops[0] if loops else root)
        # Within the convolution's own loops (over the whole module, once per
        # convolution, compiling a network would take time quadratic in its
        # size). In a region not isolated from above the greedy driver stops
        # short of the fixpoint: a second round folds what the first exposed
        # (the accumulators' reads and writes, into one pair to hoist).
        for scope in scopes:
            for _ in range(2):
                patterns(scope, vector_transform.ApplyVectorReductionToContractPatternsOp,
                         vector_transform.ApplyTransferPermutationPatternsOp, canonicalization,
                         tensor_transform.ApplyFoldTensorSubsetOpsPatternsOp,
                         tensor_transform.ApplyMergeConsecutiveInsertExtractSlicePatternsOp)
        for reduction_loop in reduction_loops:
            # The accumulators leave the loop once their indices (constants
            # made inside it) do.
            transform.ApplyLoopInvariantCodeMotionOp(reduction_loop)
            loop.HoistLoopInvariantSubsetsOp(reduction_loop)
        for fill, tiling in fills:
            tiled_fill, _ = tile(fill, tiling.vector_tile)
            vectorize(tiled_fill)


@dataclass(frozen=True)
class ConvolutionWithEpilogue(ConvolutionSchedule):
    """A direct convolution whose `epilogue` (the tags of the elementwise
    ops after it, in order) is computed on each register tile: the last
    epilogue op is tiled by the thread tile and the register tile of the
    result's dims (n, oh, ow, channels), the rest fused into its loops;
    `reduction_tile` tiles the fused convolution's loops over the filter's
    rows (and input channels)."""

    epilogue: tuple[str, ...] = ()
    reduction_tile: tuple[int, ...] = ()

    def decisions(self) -> list[str]:
        return super().decisions() + [f"  epilogue {', '.join(self.epilogue)} on each tile"]

    def render(self, root: ir.Value) -> None:
        last = match_tag(root, self.epilogue[-1])
        producers = [match_tag(root, tag) for tag in reversed(self.epilogue[:-1])]
        producers += [match_tag(root, self.root)]
        producers += [match_tag(root, tiling.tag) for tiling in self.fills]
        tiled, fused, scope = last, producers, root
        if self.threads:
            tiled, loop_handle = forall(last, self.threads[:4])  # the result's dims
            fused = fuse_into(fused, loop_handle)
            scope = loop_handle
        tiled, loops = tile(tiled, self.tile_sizes[0][:4])
        if loops:
            fused = fuse_into(fused, loops[-1])
            if not self.threads:
                scope = loops[0]
        epilogue = fused[:len(self.epilogue) - 1]
        convolution = fused[len(self.epilogue) - 1]
        fills = fused[len(self.epilogue):]
        reduced, reduction_loops = tile(convolution, self.reduction_tile)
        vectorize(structured.DecomposeOp(reduced).transformed)
        for handle in [tiled] + epilogue + fills:
            vectorize(handle)
        # The tile's zeros, accumulators and epilogue values stay in
        # registers: each write of a vector and its read back fold away.
        for _ in range(2):
            patterns(scope, vector_transform.ApplyVectorReductionToContractPatternsOp,
                     vector_transform.ApplyTransferPermutationPatternsOp, canonicalization,
                     tensor_transform.ApplyFoldTensorSubsetOpsPatternsOp,
                     tensor_transform.ApplyMergeConsecutiveInsertExtractSlicePatternsOp)
        for reduction_loop in reversed(reduction_loops):
            transform.ApplyLoopInvariantCodeMotionOp(reduction_loop)
            loop.HoistLoopInvariantSubsetsOp(reduction_loop)


def with_epilogue(schedule: ConvolutionSchedule, linalg: LinalgOp, rest: list[LinalgOp],
                  group: Group) -> ConvolutionWithEpilogue | None:
    """`schedule` with `rest` (elementwise ops over the convolution's
    result, the last one the group's root) computed on each register tile;
    None when the rest is not such a chain, or the row is split."""
    if schedule.split or not is_epilogue_chain(linalg, rest, group):
        return None
    (register,) = schedule.tile_sizes
    reduction = tuple(0 if d < 4 else size for d, size in enumerate(register))
    return ConvolutionWithEpilogue(
        group=schedule.group, root=schedule.root, threads=schedule.threads,
        tile_sizes=(tuple(register[:4]) + (0,) * (len(register) - 4),), fills=schedule.fills,
        epilogue=tuple(op.tag for op in rest), reduction_tile=reduction)


def _split_at(linalg: LinalgOp, rest: list[LinalgOp]) -> tuple[list[LinalgOp], list[LinalgOp]]:
    """`rest` (a group's ops beside its convolution, in program order) as
    the ops that do not read the convolution's result, even through
    others (its filter's layout change), and those that do."""
    reached = {_op_key(linalg.op)}
    before, after = [], []
    for op in rest:
        if any(_op_key(operand.owner) in reached for operand in op.op.operands
               if not isinstance(operand.owner, ir.Block)):
            reached.add(_op_key(op.op))
            after.append(op)
        else:
            before.append(op)
    return before, after


class ConvolutionKind(ScheduleKind):
    """Direct channels-last convolutions (see the module docstring).
    Applies to a group with one; the rest of the group gets loop nests."""

    name = "convolution"

    def choose(self, group: Group, model: CPUModel) -> list[Schedule] | None:
        windowed = [linalg for linalg in group.ops if linalg.name in WINDOWED]
        if not windowed:
            return None
        if len(windowed) == 1:
            return _schedules(f"{group.name}_convolution", group.name, windowed[0], group,
                              group.ops, model)
        # The parts of a convolution that `cpu-split-padded-convolutions`
        # split: each with its fill and epilogue, scheduled as one
        # convolution; the rest of the group (the filter's layout change)
        # before them. The interior (the largest part) is split over the
        # threads, the border parts run on one: a parallel region each
        # would cost them more than their work, and a delayed thread
        # would delay every one of them.
        interior = max(windowed, key=lambda op: prod(op.extents[:4]))
        schedules: list[Schedule] = []
        taken: set[int] = set()
        for index, linalg in enumerate(windowed):
            fills = initialising_fills(group, linalg)
            rest = [op for op in group.ops if op is not linalg and op not in fills]
            _, after = _split_at(linalg, rest)
            members = fills + [linalg] + after
            taken.update(_op_key(op.op) for op in members)
            part = Group(f"{group.name}_part{index}", members, kind=group.kind)
            part_model = model if linalg is interior else replace(model, threads=1)
            schedules += _schedules(f"{group.name}_convolution{index}", part.name, linalg, part,
                                    members, part_model)
        before = [op for op in group.ops if _op_key(op.op) not in taken]
        return loop_nest_schedules(group.name, before, model) + schedules


def _schedules(name: str, rest_name: str, linalg: LinalgOp, group: Group, ops: list[LinalgOp],
               model: CPUModel) -> list[Schedule]:
    """The schedules of the convolution `linalg` among `ops` (of `group`):
    its direct schedule, with the epilogue after it on each register tile
    where it is a chain, and loop nests (named after `rest_name`) for the
    rest."""
    fills = initialising_fills(group, linalg)
    choose = depthwise_schedule if linalg.name == DEPTHWISE else convolution_schedule
    schedule = choose(name, linalg, fills, model)
    rest = [op for op in ops if op is not linalg and op not in fills]
    before, after = _split_at(linalg, rest)
    fused = with_epilogue(schedule, linalg, after, group)
    if fused:
        return loop_nest_schedules(rest_name, before, model) + [fused]
    return [schedule] + loop_nest_schedules(rest_name, rest, model)


DEPTHWISE = "linalg.depthwise_conv_2d_nhwc_hwc"


def register_tile_pixels(model: CPUModel) -> int:
    """The output pixels of a convolution's register tile: 8 with 32
    vector registers (16 accumulators of two vectors), else 4."""
    return 8 if model.vector_registers >= 32 else 4


def convolution_schedule(group: str, linalg: LinalgOp, fills: list[LinalgOp],
                         model: CPUModel) -> ConvolutionSchedule:
    """The direct schedule of a channels-last convolution initialised by
    `fills` (see the module docstring)."""
    n, oh, ow, f, kh, kw, c = linalg.extents
    mr = register_tile_pixels(model)
    nr = 2 * model.lanes
    channels = f if f <= nr else largest_divisor(
        f, nr, model.lanes if f % model.lanes == 0 else 1)
    channel_tiles = f // channels
    threads = [0] * linalg.rank
    if model.threads > 1:
        if n >= model.threads:
            threads[0] = ceil(n / model.threads)
        elif oh % model.threads == 0 or oh >= 4 * model.threads:
            threads[1] = ceil(oh / model.threads)
        elif channel_tiles % model.threads == 0:
            # Whole register tiles each: a partial one would not vectorise.
            threads[3] = channels * channel_tiles // model.threads
        elif oh > 1:
            threads[1] = ceil(oh / min(oh, model.threads))
    pixels = largest_divisor(ow, mr)
    # A row no wide tile divides (17 pixels) is split: `mr`-pixel tiles
    # for most of it, one tile for the rest.
    split = (2, ow - ow % mr) if ow > mr and pixels <= mr // 2 else ()
    widths = [split[1], ow % mr] if split else [ow]
    extents = list(linalg.extents)
    for d, size in enumerate(threads):
        if size:
            extents[d] = size
        if size >= linalg.extents[d]:
            threads[d] = 0
    levels = []
    for width in widths:
        register = [1, 1, mr if split else pixels, channels, 1, 0, 1]
        # No loop where a tile covers its whole extent (a loop of one
        # iteration would be folded away under the script's handles).
        extents[2] = width
        levels.append(tuple(0 if size >= extent else size
                            for size, extent in zip(register, extents)))
    # A fill runs on each thread's slice of the result (loops n, oh, ow, f).
    slices = tuple(size or extent for size, extent in zip(threads[:4], linalg.extents))
    return ConvolutionSchedule(
        group=group, root=linalg.tag, threads=tuple(threads) if any(threads) else (),
        tile_sizes=tuple(levels), split=split,
        fills=fill_tilings([replace(fill, extents=slices) for fill in fills], model))


def depthwise_schedule(group: str, linalg: LinalgOp, fills: list[LinalgOp],
                       model: CPUModel) -> ConvolutionSchedule:
    """The direct schedule of a channels-last depthwise convolution
    initialised by `fills` (see the module docstring): loops n, oh, ow, c,
    kh, kw, the register tile `mr` pixels x `nr` channels."""
    n, oh, ow, c, kh, kw = linalg.extents
    mr = register_tile_pixels(model)
    nr = 2 * model.lanes
    channels = c if c <= nr else largest_divisor(
        c, nr, model.lanes if c % model.lanes == 0 else 1)
    channel_tiles = c // channels
    threads = [0] * linalg.rank
    if model.threads > 1:
        if n >= model.threads:
            threads[0] = ceil(n / model.threads)
        elif oh % model.threads == 0 or oh >= 4 * model.threads:
            threads[1] = ceil(oh / model.threads)
        elif channel_tiles % model.threads == 0:
            threads[3] = channels * channel_tiles // model.threads
        elif oh > 1:
            threads[1] = ceil(oh / min(oh, model.threads))
    pixels = largest_divisor(ow, mr)
    split = (2, ow - ow % mr) if ow > mr and pixels <= mr // 2 else ()
    widths = [split[1], ow % mr] if split else [ow]
    extents = list(linalg.extents)
    for d, size in enumerate(threads):
        if size:
            extents[d] = size
        if size >= linalg.extents[d]:
            threads[d] = 0
    levels = []
    for width in widths:
        register = [1, 1, mr if split else pixels, channels, 1, 0]
        extents[2] = width
        levels.append(tuple(0 if size >= extent else size
                            for size, extent in zip(register, extents)))
    slices = tuple(size or extent for size, extent in zip(threads[:4], linalg.extents))
    return ConvolutionSchedule(
        group=group, root=linalg.tag, threads=tuple(threads) if any(threads) else (),
        tile_sizes=tuple(levels), split=split,
        fills=fill_tilings([replace(fill, extents=slices) for fill in fills], model))
