"""Choosing schedules: an analytical model of the CPU (vector width,
registers, cache sizes, threads) turned into tile sizes.

Contractions (matmul, batch matmul, any multiply-add generic of that
shape) follow the packed-panel scheme of BLAS libraries: B is packed into
panels `nr` columns wide (two vectors), the register tile is `mr` rows by
`nr` columns of accumulators (16 of the 32 AVX-512 registers), the k loop
runs over `kc` rows so that a panel of B stays in L1, and `mc` rows of A
are reused from L2 across `nc` panels. Threads split the panels of B (or
the batch). Loop nests (elementwise ops, reductions and their fusion
groups) are split over threads by rows and vectorised along their
contiguous dim, `unroll` vectors at a time.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from math import ceil, prod

from mlir import ir

from lamina.schedules.analysis import WINDOWED, Group, LinalgOp, _op_key, contraction_dims
from lamina.schedules.schedule import OpTiling, Packing, Schedule


@dataclass(frozen=True)
class CPUModel:
    """What the cost model knows about the CPU."""

    vector_bits: int = 512
    vector_registers: int = 32
    l1_bytes: int = 48 * 1024
    l2_bytes: int = 1024 * 1024
    threads: int = 1
    unroll: int = 4

    @classmethod
    def for_features(cls, features: tuple[str, ...], threads: int) -> "CPUModel":
        """The model of a CPU with LLVM features such as `+avx512f`."""
        if "+avx512f" in features:
            return cls(vector_bits=512, vector_registers=32, threads=threads)
        if "+avx2" in features or "+avx" in features:
            return cls(vector_bits=256, vector_registers=16, threads=threads)
        return cls(vector_bits=128, vector_registers=16, threads=threads)

    @property
    def lanes(self) -> int:
        """f32 elements per vector (f16/bf16 are computed in f32)."""
        return self.vector_bits // 32


def default_threads() -> int:
    """`LAMINA_NUM_THREADS` if set, else every core this process may run on."""
    value = os.environ.get("LAMINA_NUM_THREADS", "").strip()
    if value:
        try:
            return max(1, int(value))
        except ValueError:
            raise ValueError(f"LAMINA_NUM_THREADS must be a positive integer, got '{value}'") from None
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return max(1, os.cpu_count() or 1)


def _largest_divisor(extent: int, limit: int, multiple_of: int = 1) -> int:
    """The largest multiple of `multiple_of` dividing `extent` and at most
    `limit` (at least `multiple_of`)."""
    best = multiple_of
    for size in range(multiple_of, min(limit, extent) + 1, multiple_of):
        if extent % size == 0:
            best = size
    return best


# ---------------------------------------------------------------------------
# Contractions.


def contraction_schedule(group: str, linalg: LinalgOp, fills: list[LinalgOp],
                         model: CPUModel) -> Schedule | None:
    """The packed schedule of a contraction initialised by `fills`."""
    dims = contraction_dims(linalg)
    if dims is None:
        return None
    extents = linalg.extents
    m, n, k = extents[dims.m], extents[dims.n], extents[dims.k]
    nr = 2 * model.lanes
    mr = 8 if model.vector_registers >= 32 else 4
    pack_a = m % mr != 0
    packed_sizes = [0] * linalg.rank
    packed_sizes[dims.n] = nr
    if pack_a:
        packed_sizes[dims.m] = mr
    a_map, b_map, _ = linalg.maps
    order = {d: i for i, d in enumerate(dims.batch + (dims.m, dims.n, dims.k))}
    b_perm = _outer_perm(b_map, order)
    a_perm = _outer_perm(a_map, order) if pack_a else ()

    # Loops of the packed op: the original ones (m and n now count
    # blocks), then the inner rows of A's blocks (if packed) and B's columns.
    rank = linalg.rank + 1 + pack_a
    blocks_n = ceil(n / nr)
    blocks_m = ceil(m / mr) if pack_a else m
    threads = [0] * rank
    batch = [extents[d] for d in dims.batch]
    if model.threads > 1:
        if dims.batch and batch[0] >= model.threads:
            threads[dims.batch[0]] = ceil(batch[0] / model.threads)
        elif blocks_n >= model.threads:
            threads[dims.n] = ceil(blocks_n / model.threads)
        elif pack_a and blocks_m >= model.threads:
            threads[dims.m] = ceil(blocks_m / model.threads)

    # kc rows of a B panel stay in L1 (half of it, the rest is A and C).
    kc = max(1, min(k, (model.l1_bytes // 2) // (nr * 4)))
    kc = min(kc, 512)
    # mc rows of A (kc elements each) fill half of L2.
    mc_rows = max(mr, min(256, (model.l2_bytes // 2) // (kc * 4)))
    cache = [0] * rank
    register = [0] * rank
    for d in dims.batch:
        cache[d] = register[d] = 1
    if pack_a:
        cache[dims.m] = max(1, mc_rows // mr)
        register[dims.m] = 1
    else:
        cache[dims.m] = _largest_divisor(m, mc_rows, mr)
        register[dims.m] = mr
    cache[dims.n] = 8
    register[dims.n] = 1
    cache[dims.k] = kc
    register[dims.k] = 1

    # No loop where a tile covers its whole extent (a loop of one
    # iteration would be folded away under the script's handles).
    packed_extents = list(extents) + [mr] * pack_a + [nr]
    packed_extents[dims.n] = blocks_n
    packed_extents[dims.m] = blocks_m
    for d in range(rank):
        if cache[d] >= packed_extents[d]:
            cache[d] = 0
        if register[d] >= (cache[d] or packed_extents[d]):
            register[d] = 0
    if threads[dims.n] >= blocks_n:
        threads[dims.n] = 0

    tag = linalg.tag
    b_packed = _packed_shape(linalg, 1, packed_sizes, b_perm)
    pack_tiles = []
    if pack_a:
        a_packed = _packed_shape(linalg, 0, packed_sizes, a_perm)
        pack_tiles.append(tuple([1] * (len(a_packed) - 1) + [0]))
    pack_tiles.append(tuple([1] * (len(b_packed) - 1) + [0]))
    c_rank = len(linalg.output_map) + 1 + pack_a
    pack_tiles.append(tuple([1] * (c_rank - 1) + [0]))     # the packed init (or its fill)
    pack_tiles.append(tuple([1] * (c_rank - 1) + [0]))     # the unpacked result
    return Schedule(
        group=group, kind="contraction", root=tag, threads=tuple(threads) if any(threads) else (),
        tile_sizes=(tuple(cache), tuple(register)),
        packing=Packing(tuple(packed_sizes), a_perm, b_perm, pack_a),
        unroll=(mr, 2), hoist=bool(register[dims.k]), fills=tuple(t for t in (op_tiling(f, model) for f in fills) if t),
        pack_tiles=tuple(pack_tiles))


def _outer_perm(operand_map: tuple[int | None, ...], order: dict[int, int]) -> tuple[int, ...]:
    """The permutation putting a packed operand's outer dims in the order
    batch, m/n, k; empty when they already are."""
    dims = [d for d in operand_map]
    perm = sorted(range(len(dims)), key=lambda i: order.get(dims[i], -1))
    return tuple(perm) if perm != list(range(len(dims))) else ()


def _packed_shape(linalg: LinalgOp, operand: int, packed_sizes: list[int],
                  perm: tuple[int, ...]) -> list[int]:
    dims = linalg.maps[operand]
    outer = [ceil(linalg.extents[d] / packed_sizes[d]) if packed_sizes[d] else linalg.extents[d]
             for d in dims]
    if perm:
        outer = [outer[i] for i in perm]
    inner = [packed_sizes[d] for d in sorted(dims) if packed_sizes[d]]
    return outer + inner


# ---------------------------------------------------------------------------
# Loop nests.


def vector_length(extent: int, model: CPUModel) -> int:
    """Elements per vector step along a dim of `extent`: the whole extent
    when it is more than one vector, at most `unroll`, and a multiple of 4;
    else `unroll` vectors when they divide it, else the largest power of
    two from there down to 4 that does; 0 when none does."""
    size = model.lanes * model.unroll
    if extent <= size and extent % 4 == 0 and extent > model.lanes:
        # One step over the whole extent: LLVM splits the vector into
        # legal ones (28 = 16 + 8 + 4), fewer than the power-of-two
        # steps that divide it (seven of 4).
        return extent
    while size >= 4:
        if extent % size == 0:
            return size
        size //= 2
    return 0


def op_tiling(linalg: LinalgOp, model: CPUModel,
              forall: tuple[int, ...] = ()) -> OpTiling | None:
    """The vector tile of one op: one vector step along its vector dim,
    one element along every other loop. `forall` gives the tile sizes of
    the op's loops in the thread loop around it (0: whole): inside it
    those loops have the tile's extent (a copy of the op left outside the
    loop, for uses outside the group, is tiled the same way)."""
    forall = forall or (0,) * linalg.rank
    extents = tuple(t or e for t, e in zip(forall, linalg.extents))
    tiled = replace(linalg, extents=extents)
    dim = _vector_dim(tiled)
    if dim is None:
        return None
    # Strided reads (a transpose's) are gathered element by element: one
    # vector at a time keeps the unrolled code small.
    length = vector_length(extents[dim], model if tiled.vector_dim() is not None
                           else replace(model, unroll=1))
    if not length:
        return None
    tile = [t or (0 if extent == 1 else 1) for t, extent in zip(forall, linalg.extents)]
    if linalg.reduction[dim]:
        tile[dim] = 0
        if length == extents[dim]:
            return OpTiling(linalg.tag, tuple(tile))
        reduction = [0] * linalg.rank
        reduction[dim] = length
        return OpTiling(linalg.tag, tuple(tile), tuple(reduction))
    tile[dim] = length
    return OpTiling(linalg.tag, tuple(tile))


def _vector_dim(linalg: LinalgOp) -> int | None:
    """The dim vector code runs along: `vector_dim()`, else the innermost
    dim of the output (a transpose, whose reads are then strided)."""
    dim = linalg.vector_dim()
    if dim is None:
        output = [d for d in linalg.output_map if d is not None]
        dim = output[-1] if output else None
    return dim


def _forall_tiles(root: LinalgOp, model: CPUModel) -> tuple[int, ...]:
    """Rows (every parallel dim but the vector dim) one at a time; an op
    whose only parallel dim is its vector dim is cut into chunks. A
    transpose is split along one dim only (`_transpose_forall_tiles`):
    each thread's iteration reads a contiguous block (a row at a time, its
    reads would be scattered over the whole input, and the iterations
    too short for the loop's overhead)."""
    dim = _vector_dim(root)
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
        chunk = _largest_divisor(root.extents[dim], target, length)
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
    nests of their own."""
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
    schedules = []
    for index, op in enumerate(reversed(alone)):
        threads_alone = _forall_tiles(op, model)
        tiling = op_tiling(op, model)
        schedules.append(Schedule(group=f"{name}_{index}", kind="loop-nest", root=op.tag,
                                  threads=threads_alone, ops=(tiling,) if tiling else ()))
    tilings = [op_tiling(root, model, threads)] + [
        op_tiling(op, model, _fused_tiles(op, root, threads)) for op in fused]
    schedules.append(Schedule(group=name, kind="loop-nest", root=root.tag, threads=threads,
                              fused=tuple(op.tag for op in fused),
                              ops=tuple(t for t in tilings if t)))
    return schedules


# ---------------------------------------------------------------------------
# Convolutions.


def convolution_schedule(group: str, linalg: LinalgOp, fills: list[LinalgOp],
                         model: CPUModel) -> Schedule:
    """The direct schedule of a channels-last convolution (loops n, oh, ow,
    f, kh, kw, c; see lamina.schedules.convolution): threads share the
    batch, else the output rows, else (too few rows to share evenly: 7 on
    2 threads) the output channels' register tiles if they share evenly;
    the register tile is `mr` pixels of one output row x `nr` output
    channels, inside loops over the filter's rows and the input channels
    (one at a time; the filter's width is unrolled). A row that no tile
    of more than `mr / 2` pixels divides is split in two: `mr`-pixel
    tiles, then one tile of the rest."""
    n, oh, ow, f, kh, kw, c = linalg.extents
    mr = 8 if model.vector_registers >= 32 else 4
    nr = 2 * model.lanes
    channels = f if f <= nr else _largest_divisor(
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
    pixels = _largest_divisor(ow, mr)
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
    slices = [size or extent for size, extent in zip(threads[:4], linalg.extents)]
    fill_tilings = (op_tiling(replace(fill, extents=tuple(slices)), model) for fill in fills)
    return Schedule(
        group=group, kind="convolution", root=linalg.tag,
        threads=tuple(threads) if any(threads) else (), tile_sizes=tuple(levels), split=split,
        fills=tuple(t for t in fill_tilings if t))


def group_schedules(group: Group, model: CPUModel) -> list[Schedule]:
    """The schedules of one group: a contraction or a convolution (with its
    fills) gets its register-tiled schedule and its epilogue a loop nest,
    or for a contraction whose result's blocks take it, the epilogue inside
    the contraction's loops; other groups loop nests."""
    for linalg in group.ops:
        if linalg.name in WINDOWED:
            fills = _fills(group, linalg)
            schedule = convolution_schedule(f"{group.name}_convolution", linalg, fills, model)
            rest = [op for op in group.ops if op is not linalg and op not in fills]
            return [schedule] + loop_nest_schedules(group.name, rest, model)
    for linalg in group.ops:
        if contraction_dims(linalg) is None:
            continue
        fills = _fills(group, linalg)
        schedule = contraction_schedule(f"{group.name}_contraction", linalg, fills, model)
        if schedule is None:
            continue
        rest = [op for op in group.ops if op is not linalg and op not in fills]
        with_epilogue = _with_epilogue(schedule, linalg, rest, group, model)
        if with_epilogue:
            return [with_epilogue]
        return [schedule] + loop_nest_schedules(group.name, rest, model)
    return loop_nest_schedules(group.name, group.ops, model)


def _with_epilogue(schedule: Schedule, linalg: LinalgOp, epilogue: list[LinalgOp],
                   group: Group, model: CPUModel) -> Schedule | None:
    """`schedule` with `epilogue` (elementwise ops over the contraction's
    result, the last one the group's root) computed on each cache block of
    the result inside the contraction's loops; None when the epilogue is
    not such a chain, or the blocks do not divide the result."""
    if not epilogue or group.root is not epilogue[-1]:
        return None
    dims = contraction_dims(linalg)
    out = linalg.output_map
    shape = tuple(linalg.extents[d] for d in out)
    members = {_op_key(op.op) for op in epilogue}
    for op in epilogue:
        if any(op.reduction) or op.output_map != tuple(range(len(shape))) or op.extents != shape:
            return None
    for producer in [linalg] + epilogue[:-1]:
        if any(_op_key(use.owner) not in members for use in producer.op.results[0].uses):
            return None
    threads = schedule.threads or (0,) * len(schedule.tile_sizes[0])
    cache = schedule.tile_sizes[0]
    if schedule.packing.a_packed:
        return None
    nr = schedule.packing.packed_sizes[dims.n]

    def result_tile(packed: tuple[int, ...]) -> tuple[int, ...]:
        scale = {dims.n: nr}
        return tuple(packed[d] * scale.get(d, 1) for d in out)

    thread_tile = result_tile(threads)
    cache_tile = result_tile(cache)
    block = []
    for extent, thread, size in zip(shape, thread_tile, cache_tile):
        if thread and extent % thread or size and (thread or extent) % size:
            return None
        block.append(size or thread or extent)
    # The fused contraction block keeps its loops over k and its register
    # tile; its cache loops over m and n are the epilogue's.
    levels = list(schedule.tile_sizes)
    levels[0] = tuple(size if d == dims.k else 0 for d, size in enumerate(levels[0]))
    # The other epilogue ops and the unpack fuse into the last op's vector
    # loop, which reads whole panels of the packed result.
    tiling = op_tiling(replace(epilogue[-1], extents=tuple(block)), model)
    if tiling is None or tiling.vector_tile[-1] % nr:
        return None
    return replace(schedule, tile_sizes=tuple(levels),
                   epilogue=tuple(op.tag for op in epilogue),
                   epilogue_tiles=(thread_tile, cache_tile), ops=(tiling,))


def _fills(group: Group, linalg: LinalgOp) -> list[LinalgOp]:
    """The fills of `group` that initialise `linalg`."""
    init = list(linalg.op.operands)[linalg.inputs]
    return [op for op in group.ops if op.name == "linalg.fill" and op.op.results[0] == init]
