"""Schedules as data, and their rendering into transform-dialect IR.

A `Schedule` says how one fusion group (or one linalg op) of a function
becomes loop nests of vector operations, on tensors, before bufferization:

* `packing` (contractions): the operands relaid out in blocks so that the
  register tile reads them contiguously, mmt4d-style: B as
  `[N/nr, K, nr]`, A as `[M/mr, K, mr]` when M is not a multiple of the
  register tile's rows; edges are padded with zeros;
* `threads`: `scf.forall` tile sizes of the root's loops (0 = not split);
  the forall's iterations are what the threads share;
* `tile_sizes`: further levels of `scf.for` tiling of the root (cache
  blocks, then the register tile); with `ops` empty the last level is
  vectorised, which for a contraction unrolls into the register tile's
  FMAs (`unroll`: its rows x vectors);
* `fused`: the group's other ops, fused into the root's forall
  (consumers before producers), so that the group is one loop nest;
* `epilogue` (contractions): elementwise ops over the result, tiled by
  threads and cache blocks of the result (`epilogue_tiles`) with the
  unpack, the packed contraction and its fill fused into each block;
  the epilogue's vector loop reads the block's packed panels directly,
  so the result is never copied out whole nor read in a second pass;
* `ops`: for each op of a loop nest, the tile vectorised inside it
  (`vector_tile`) and, for reductions along the vector dim, the tile of
  partial vector accumulators (`reduction_tile`).

Ops are found by a discardable attribute `lamina.schedule = "TAG"` that
the schedule pass sets and the application of the schedule removes. The
script of a module is one `transform.named_sequence` per group and a
`@__transform_main` that includes each of them with failures suppressed: a
group whose schedule the transforms refuse keeps whatever it got so far,
and the `loops` stage turns the rest into scalar loops.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mlir import ir
from mlir.dialects import builtin, transform
from mlir.dialects.transform import loop, structured
from mlir.dialects.transform import tensor as tensor_transform
from mlir.dialects.transform import vector as vector_transform

from lamina.schedules.analysis import SCHEDULE_TAG

ENTRY = "__transform_main"


@dataclass(frozen=True)
class Packing:
    """Block sizes of a contraction's packed loops (0: not packed) and the
    outer-dim permutations of the packed A and B (empty: as they are)."""

    packed_sizes: tuple[int, ...]
    a_outer_perm: tuple[int, ...] = ()
    b_outer_perm: tuple[int, ...] = ()
    a_packed: bool = False


@dataclass(frozen=True)
class OpTiling:
    """The vector code of one op inside its group's loops: `vector_tile`
    (scf.for tile sizes, one per loop; the tile is vectorised) and, for a
    reduction along the vector dim, `reduction_tile` (partial accumulators
    of that many elements, merged after the loop)."""

    tag: str
    vector_tile: tuple[int, ...]
    reduction_tile: tuple[int, ...] = ()
    accumulate: bool = False
    """A contraction whose innermost tile loop runs over its reduction:
    vectorised into FMAs, the accumulators kept in registers across it."""


@dataclass(frozen=True)
class Schedule:
    """How one fusion group or linalg op becomes vector loop nests; see the
    module docstring."""

    group: str
    kind: str                                # "contraction", "convolution" or "loop-nest"
    root: str                                # tag of the op whose loops are tiled
    threads: tuple[int, ...] = ()
    tile_sizes: tuple[tuple[int, ...], ...] = ()
    packing: Packing | None = None
    unroll: tuple[int, int] = (0, 0)
    fused: tuple[str, ...] = ()
    ops: tuple[OpTiling, ...] = ()
    fills: tuple[OpTiling, ...] = ()         # contraction: its initialising fills
    hoist: bool = False                      # contraction: the innermost loop is over k
    pack_tiles: tuple[tuple[int, ...], ...] = field(default=())
    """Contraction: vector tiles of the lowered packs of A and B (as
    transposes) and of the unpacked result."""
    split: tuple[int, int] = ()
    """Convolution: (dim, size), the root split in two along `dim` after
    `size` iterations (inside the threads' loop); the parts take the
    levels of `tile_sizes` in order (a register tile for most of a row,
    one for the rest)."""
    epilogue: tuple[str, ...] = ()
    """Contraction: the tags of the elementwise ops after it (in order),
    computed on each block of the result inside the contraction's loops."""
    epilogue_tiles: tuple[tuple[int, ...], ...] = ()
    """Contraction with an epilogue: the thread tile and the cache block of
    the last epilogue op's loops (the result's dims)."""

    def describe(self) -> str:
        """One line per decision, for humans (`--emit=schedule` shows the IR)."""
        lines = [f"{self.group}: {self.kind}, root {self.root}"]
        if self.packing:
            lines.append(f"  packing {list(self.packing.packed_sizes)}, register tile "
                         f"{self.unroll[0]} rows x {self.unroll[1]} vectors")
        if self.threads:
            lines.append(f"  threads {list(self.threads)}")
        if self.split:
            lines.append(f"  split dim {self.split[0]} after {self.split[1]}")
        for level in self.tile_sizes:
            lines.append(f"  tiles {list(level)}")
        if self.epilogue:
            lines.append(f"  epilogue {', '.join(self.epilogue)} in blocks "
                         f"{list(self.epilogue_tiles[-1])} of threads' tiles {list(self.epilogue_tiles[0])}")
        for op in self.ops:
            lines.append(f"  {op.tag}: vector {list(op.vector_tile)}"
                         + (f" reduction {list(op.reduction_tile)}" if op.reduction_tile else ""))
        return "\n".join(lines)


# ---------------------------------------------------------------------------
# Rendering.


def _any() -> ir.Type:
    return transform.AnyOpType.get()


def _match_tag(target: ir.Value, tag: str) -> ir.Value:
    attrs = ir.DictAttr.get({SCHEDULE_TAG: ir.StringAttr.get(tag)})
    return structured.MatchOp(_any(), target, op_attrs=attrs).result


def _match_names(target: ir.Value, names: list[str]) -> ir.Value:
    return structured.MatchOp.match_op_names(target, names).result


def _tile(target: ir.Value, sizes: tuple[int, ...]) -> tuple[ir.Value, list[ir.Value]]:
    if not any(sizes):
        return target, []
    op = structured.TileUsingForOp(target, sizes=list(sizes))
    return op.tiled_linalg_op, list(op.loops)


def _forall(target: ir.Value, sizes: tuple[int, ...]) -> tuple[ir.Value, ir.Value]:
    op = structured.TileUsingForallOp(_any(), _any(), target, tile_sizes=list(sizes))
    return op.tiled_op, op.forall_op


def _vectorize(target: ir.Value) -> None:
    structured.VectorizeOp(target)


def _patterns(target: ir.Value, *builders, cse: bool = False) -> None:
    apply = transform.ApplyPatternsOp(target, apply_cse=cse)
    with ir.InsertionPoint(apply.patterns):
        for build in builders:
            build()


def _canonicalization():
    transform.ApplyCanonicalizationPatternsOp()


def _render_op_tiling(root: ir.Value, tiling: OpTiling) -> None:
    target = _match_tag(root, tiling.tag)
    tiled, loops = _tile(target, tiling.vector_tile)
    if tiling.accumulate:
        _vectorize(tiled)
        _patterns(loops[0], vector_transform.ApplyVectorReductionToContractPatternsOp,
                  vector_transform.ApplyTransferPermutationPatternsOp, _canonicalization)
        # The accumulators' vector leaves the loop once its indices
        # (constants made inside it) do.
        transform.ApplyLoopInvariantCodeMotionOp(loops[-1])
        loop.HoistLoopInvariantSubsetsOp(loops[-1])
    elif tiling.reduction_tile:
        split = structured.TileReductionUsingForOp(
            [_any()], _any(), _any(), _any(), tiled, tile_sizes=list(tiling.reduction_tile))
        for handle in list(split.fill_op) + [split.split_op, split.combining_op]:
            _vectorize(handle)
        # The partial accumulators stay in registers across the loop (the
        # canonicalization inside it proves the transfers in bounds, CSE
        # and loop-invariant code motion make their indices the same values,
        # defined outside the loop).
        _patterns(split.for_op, _canonicalization, cse=True)
        transform.ApplyLoopInvariantCodeMotionOp(split.for_op)
        loop.HoistLoopInvariantSubsetsOp(split.for_op)
    else:
        _vectorize(tiled)


def _render_loop_nest(root: ir.Value, schedule: Schedule) -> None:
    target = _match_tag(root, schedule.root)
    if schedule.threads and any(schedule.threads):
        _, forall = _forall(target, schedule.threads)
        for tag in schedule.fused:
            _patterns(root, tensor_transform.ApplyBubbleUpExtractSlicePatternsOp)
            producer = _match_tag(root, tag)
            fused = structured.FuseIntoContainingOp(producer, forall)
            forall = fused.new_containing_op
    for tiling in schedule.ops:
        _render_op_tiling(root, tiling)


def _render_contraction(root: ir.Value, schedule: Schedule) -> None:
    packing = schedule.packing
    target = _match_tag(root, schedule.root)
    packed = structured.PackOp(_any(), target, [], static_packed_sizes=list(packing.packed_sizes)).packed_op
    if packing.b_outer_perm:
        producer = transform.GetProducerOfOperand(_any(), packed, 1).producer
        transposed = structured.PackTransposeOp(_any(), _any(), _any(), producer, packed,
                                                outer_perm=list(packing.b_outer_perm))
        packed = transposed.packed_op
    if packing.a_outer_perm:
        producer = transform.GetProducerOfOperand(_any(), packed, 0).producer
        transposed = structured.PackTransposeOp(_any(), _any(), _any(), producer, packed,
                                                outer_perm=list(packing.a_outer_perm))
        packed = transposed.packed_op
    # The pack of the result's zero-filled init folds into a fill of the
    # packed shape; then the packs and the unpack become pads, reshapes and
    # transposes (vectorised at the end).
    _patterns(root, _canonicalization)
    pack_tiles = list(schedule.pack_tiles)
    copies = []
    operands = [0, 1, 2] if packing.a_packed else [1, 2]
    for index in operands:
        producer = transform.GetProducerOfOperand(_any(), packed, index).producer
        # A pack, unless canonicalization folded it into a fill (a zero
        # init, a constant operand).
        fill = structured.MatchOp.match_op_names(producer, ["linalg.fill"]).result
        pack = structured.MatchOp.match_op_names(_op_type("linalg.pack"), producer,
                                                 ["linalg.pack"]).result
        lowered = structured.LowerPackOp(_op_type("tensor.pad"), _op_type("tensor.expand_shape"),
                                         _op_type("linalg.transpose"), pack)
        sizes = pack_tiles.pop(0)
        copies.append((lowered.transpose_op, sizes))
        copies.append((fill, sizes))
    consumers = transform.GetConsumersOfResult(_any(), packed, 0).consumers
    unpack = structured.MatchOp.match_op_names(_op_type("linalg.unpack"), consumers,
                                               ["linalg.unpack"]).result
    if schedule.epilogue:
        fill_tile = copies.pop()[1]
        copies.pop()
        _render_contraction_with_epilogue(root, schedule, packed, unpack, copies, fill_tile)
        return
    lowered = structured.LowerUnPackOp(_op_type("tensor.empty"), _op_type("linalg.transpose"),
                                       _op_type("tensor.collapse_shape"),
                                       _op_type("tensor.extract_slice"), unpack)
    copies.append((lowered.transpose_op, pack_tiles.pop(0)))

    tiled = packed
    if schedule.threads and any(schedule.threads):
        tiled, _ = _forall(tiled, schedule.threads)
    _register_tiles(root, schedule, tiled, copies)
    for tiling in schedule.fills:
        _render_op_tiling(root, tiling)


def _register_tiles(root: ir.Value, schedule: Schedule, contraction: ir.Value,
                    copies: list) -> None:
    """The packed contraction tiled by `schedule.tile_sizes` down to its
    register tile and vectorised into FMAs, then the packing copies
    vectorised."""
    loops: list[ir.Value] = []
    for level in schedule.tile_sizes:
        contraction, loops = _tile(contraction, level)
    _vectorize(contraction)
    _patterns(root, vector_transform.ApplyVectorReductionToContractPatternsOp,
              vector_transform.ApplyTransferPermutationPatternsOp, _canonicalization)
    if loops and schedule.hoist:
        # The register tile's accumulators stay in registers across k.
        loop.HoistLoopInvariantSubsetsOp(loops[-1])
    for handle, sizes in copies:
        _vectorize_copy(handle, sizes, schedule.threads)


def _fuse_into(producers: list[ir.Value], container: ir.Value) -> list[ir.Value]:
    """Each of `producers` fused into the loop `container` in turn (each
    fusion gives a new handle to the loop); the fused ops' handles."""
    fused = []
    for producer in producers:
        fusion = structured.FuseIntoContainingOp(producer, container)
        fused.append(fusion.fused_op)
        container = fusion.new_containing_op
    return fused


def _render_contraction_with_epilogue(root: ir.Value, schedule: Schedule, packed: ir.Value,
                                      unpack: ir.Value, copies: list,
                                      fill_tile: tuple[int, ...]) -> None:
    """The epilogue's last op tiled over threads and cache blocks, with the
    rest of the epilogue, the unpack, the packed contraction and the fill
    of its result fused into each block: the epilogue reads a block of the
    result while it is in cache, and no pass over the whole result is
    left."""
    fill = transform.GetProducerOfOperand(_any(), packed, 2).producer
    last = _match_tag(root, schedule.epilogue[-1])
    thread_tile, cache_tile = schedule.epilogue_tiles
    producers = [_match_tag(root, tag) for tag in reversed(schedule.epilogue[:-1])]
    producers += [transform.CastOp(_any(), unpack).output, packed, fill]
    tiled, fused = last, producers
    if any(thread_tile):
        tiled, forall = _forall(last, thread_tile)
        fused = _fuse_into(fused, forall)
    tiled, loops = _tile(tiled, cache_tile)
    if loops:
        fused = _fuse_into(fused, loops[-1])
    *epilogue, unpack, contraction, fill = fused
    _register_tiles(root, schedule, contraction, copies)
    tiled_fill, _ = _tile(fill, fill_tile)
    _vectorize(tiled_fill)
    # Each vector of the result is unpacked, run through the epilogue and
    # stored: the unpacked block is never written out.
    tiled, vector_loops = _tile(tiled, schedule.ops[0].vector_tile)
    vectorized = [tiled]
    if vector_loops:
        vectorized += _fuse_into(epilogue + [unpack], vector_loops[-1])
    for handle in vectorized:
        _vectorize(handle)
    # The unpacked vector goes straight to the epilogue (its write to the
    # block and read back fold away).
    _patterns(vector_loops[0] if vector_loops else root, _canonicalization)
    for tiling in schedule.fills:
        _render_op_tiling(root, tiling)


def _render_convolution(root: ir.Value, schedule: Schedule) -> None:
    """A channels-last convolution (loops n, oh, ow, f, kh, kw, c): each
    register tile, one output row by one filter row, becomes a 1-D
    convolution (upstream's decomposition), vectorised into FMAs; its
    accumulators stay in registers across the loops over the filter's
    rows and the input channels."""
    target = _match_tag(root, schedule.root)
    fills = []
    scopes = []
    if schedule.threads:
        target, forall = _forall(target, schedule.threads)
        # Each thread zeroes the rows it computes, in its own loop (the
        # fills of several convolutions, alike, would otherwise be merged
        # by CSE and copied by bufferization).
        for tiling in schedule.fills:
            fused = structured.FuseIntoContainingOp(_match_tag(root, tiling.tag), forall)
            fills.append((fused.fused_op, tiling))
            forall = fused.new_containing_op
        scopes = [forall]
    else:
        fills = [(_match_tag(root, tiling.tag), tiling) for tiling in schedule.fills]
    parts = [target]
    if schedule.split:
        dim, size = schedule.split
        both = structured.SplitOp(target, dim, size).results[0]
        parts = list(transform.SplitHandleOp([_any(), _any()], both).results)
    reduction_loops = []
    for part, register in zip(parts, schedule.tile_sizes):
        tiled, loops = _tile(part, register)
        _vectorize(structured.DecomposeOp(tiled).transformed)
        reductions = sum(1 for size in register[4:] if size)
        reduction_loops += reversed(loops[len(loops) - reductions:])
        if not schedule.threads:
            scopes.append(loops[0] if loops else root)
    # Within the convolution's own loops (over the whole module, once per
    # convolution, compiling a network would take time quadratic in its
    # size). In a region not isolated from above the greedy driver stops
    # short of the fixpoint: a second round folds what the first exposed
    # (the accumulators' reads and writes, into one pair to hoist).
    for scope in scopes:
        for _ in range(2):
            _patterns(scope, vector_transform.ApplyVectorReductionToContractPatternsOp,
                      vector_transform.ApplyTransferPermutationPatternsOp, _canonicalization,
                      tensor_transform.ApplyFoldTensorSubsetOpsPatternsOp,
                      tensor_transform.ApplyMergeConsecutiveInsertExtractSlicePatternsOp)
    for reduction_loop in reduction_loops:
        # The accumulators leave the loop once their indices (constants
        # made inside it) do.
        transform.ApplyLoopInvariantCodeMotionOp(reduction_loop)
        loop.HoistLoopInvariantSubsetsOp(reduction_loop)
    for fill, tiling in fills:
        tiled_fill, _ = _tile(fill, tiling.vector_tile)
        _vectorize(tiled_fill)


def _op_type(name: str) -> ir.Type:
    return transform.OperationType.get(name)


def _vectorize_copy(handle: ir.Value, sizes: tuple[int, ...], threads: tuple[int, ...]) -> None:
    """Vectorises a data-movement op (a lowered pack) tile by tile; the
    outermost loop is shared by the threads when the schedule has some."""
    handle = transform.CastOp(_any(), handle).output
    if threads and any(threads) and sizes and sizes[0]:
        handle, _ = _forall(handle, (sizes[0],) + (0,) * (len(sizes) - 1))
    tiled, _ = _tile(handle, sizes)
    _vectorize(tiled)


def render(schedules: list[Schedule], block: ir.Block,
           location: ir.Location | None = None) -> ir.Operation:
    """Appends to `block` the transform module running `schedules`
    (`module @lamina_schedule`: one named sequence per group and the entry
    `@__transform_main`) and returns it."""
    with location or ir.Location.unknown(block.owner.context):
        with ir.InsertionPoint(block):
            module = builtin.ModuleOp()
        module.operation.attributes["transform.with_named_sequence"] = ir.UnitAttr.get()
        module.operation.attributes["sym_name"] = ir.StringAttr.get("lamina_schedule")
        readonly = [{"transform.readonly": ir.UnitAttr.get()}]
        names = []
        with ir.InsertionPoint(module.body):
            for schedule in schedules:
                name = f"schedule_{schedule.group}"
                names.append(name)
                sequence = transform.NamedSequenceOp(name, [_any()], [], arg_attrs=readonly)
                with ir.InsertionPoint(sequence.body):
                    root = sequence.bodyTarget
                    if schedule.kind == "contraction":
                        _render_contraction(root, schedule)
                    elif schedule.kind == "convolution":
                        _render_convolution(root, schedule)
                    else:
                        _render_loop_nest(root, schedule)
                    transform.YieldOp()
            main = transform.NamedSequenceOp(ENTRY, [_any()], [], arg_attrs=readonly)
            with ir.InsertionPoint(main.body):
                for name in names:
                    transform.IncludeOp([], ir.FlatSymbolRefAttr.get(name),
                                        transform.FailurePropagationMode.Suppress,
                                        [main.bodyTarget])
                transform.YieldOp()
        return module.operation
