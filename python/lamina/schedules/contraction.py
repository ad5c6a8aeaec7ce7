"""Contractions (matmul, batch matmul, any multiply-add generic of that
shape): the packed-panel scheme of BLAS libraries.

B is packed into panels `nr` columns wide (two vectors), mmt4d-style
(`[N/nr, K, nr]`), and A into blocks of `mr` rows (`[M/mr, K, mr]`) when M
is not a multiple of the register tile's rows; edges are padded with
zeros. The register tile is `mr` rows by `nr` columns of accumulators (16
of the 32 AVX-512 registers), the k loop runs over `kc` rows so that a
panel of B stays in L1, and `mc` rows of A are reused from L2 across `nc`
panels. Threads split the panels of B (or the batch). Upstream does the
packing (`transform.structured.pack`, `pack_transpose`, `lower_pack`),
the tiling and the vectorisation into `vector.contract`s, the outer
products of FMAs.

Batch dims may be on both operands or on one (a linear layer's `[batch,
tokens, features]` activations times a weight shared by every batch,
lamina.schedules.analysis.contraction_dims): the packed matmul runs once
per batch, the operand without the batch packed once for all of them.

With an epilogue (elementwise ops over the result, the last one the
group's root), the epilogue's last op is tiled over threads and cache
blocks of the result instead, with the rest of the epilogue, the unpack,
the packed contraction and its fill fused into each block; the
epilogue's vector loop reads the block's packed panels directly, so the
result is never copied out whole nor read in a second pass.

On a CPU with a dot product of bf16 pairs, a bf16 contraction packs k in
pairs too, and its register tile is that instruction's
(lamina.schedules.bf16_dot_product).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, replace
from math import ceil
from typing import ClassVar

from mlir import ir
from mlir.dialects import transform
from mlir.dialects.transform import loop, structured
from mlir.dialects.transform import vector as vector_transform

from lamina.schedules.analysis import Group, LinalgOp, contraction_dims, is_epilogue_chain
from lamina.schedules.bf16_dot_product import DotProductTile, computes_bf16_pairs, dot_product_tile
from lamina.schedules.kind import Schedule, ScheduleKind
from lamina.schedules.loop_nest import loop_nest_schedules
from lamina.schedules.op_tiling import OpTiling, fill_tilings, largest_divisor, op_tiling
from lamina.schedules.transforms import (any_op, canonicalization, forall, fuse_into, match_tag,
                                         op_type, patterns, tile, vectorize, vectorize_copy)
from lamina.targets.cpu_model import CPUModel


@dataclass(frozen=True)
class Packing:
    """Block sizes of a contraction's packed loops (0: not packed) and the
    outer-dim permutations of the packed A and B (empty: as they are)."""

    packed_sizes: tuple[int, ...]
    a_outer_perm: tuple[int, ...] = ()
    b_outer_perm: tuple[int, ...] = ()
    a_packed: bool = False


@dataclass(frozen=True)
class ContractionSchedule(Schedule):
    """A packed contraction: its `packing`, the thread tile of the packed
    op's loops (`threads`, empty: one thread), its levels of `scf.for`
    tiles (`tile_sizes`: cache blocks, then the register tile of
    `unroll` rows x vectors), whether the register tile's accumulators are
    hoisted out of the loop over k (`hoist`), the vector tiles of the
    lowered packs of A and B and of the unpacked result (`pack_tiles`), the
    vector code of the fills that initialise it (`fills`), and the
    dot-product register tile of a contraction packed in pairs along k
    (`dot_product`; None: FMAs of outer products)."""

    kind: ClassVar[str] = "contraction"
    sinks_extensions: ClassVar[bool] = False
    """Whether the register tile's operand extensions move before their
    broadcasts (`sink_ops`) before the tile becomes a contraction."""

    packing: Packing = Packing(())
    threads: tuple[int, ...] = ()
    tile_sizes: tuple[tuple[int, ...], ...] = ()
    unroll: tuple[int, int] = (0, 0)
    hoist: bool = False
    pack_tiles: tuple[tuple[int, ...], ...] = ()
    fills: tuple[OpTiling, ...] = ()
    dot_product: DotProductTile | None = None
    peel: tuple[int, ...] = ()
    """The packed op's '?' loops that the register tile runs along (rows:
    batch x tokens): each such loop of the register tile is peeled, so that
    its full tiles are the static register tile and its tail is tiled one
    row at a time (static, vectorised too)."""

    def decisions(self) -> list[str]:
        products = ", bf16 pair dot products" if self.dot_product else ""
        lines = [f"  packing {list(self.packing.packed_sizes)}, register tile "
                 f"{self.unroll[0]} rows x {self.unroll[1]} vectors{products}"]
        if self.threads:
            lines.append(f"  threads {list(self.threads)}")
        return lines + [f"  tiles {list(level)}" for level in self.tile_sizes]

    def render(self, root: ir.Value) -> None:
        packed, copies, unpack = self._pack(root)
        lowered = structured.LowerUnPackOp(op_type("tensor.empty"), op_type("linalg.transpose"),
                                           op_type("tensor.collapse_shape"),
                                           op_type("tensor.extract_slice"), unpack)
        copies.append((lowered.transpose_op, self.pack_tiles[-1]))
        tiled = packed
        if self.threads and any(self.threads):
            tiled, _ = forall(tiled, self.threads)
        self._register_tiles(root, tiled, copies)
        for tiling in self.fills:
            tiling.render(root)

    def _pack(self, root: ir.Value) -> tuple[ir.Value, list, ir.Value]:
        """The packed contraction, the lowered packs of its operands (with
        their vector tiles: a transpose, and a fill where canonicalization
        folded the pack into one) and the unpack of its result."""
        packing = self.packing
        target = match_tag(root, self.root)
        packed = structured.PackOp(any_op(), target, [],
                                   static_packed_sizes=list(packing.packed_sizes)).packed_op
        for operand, perm in ((1, packing.b_outer_perm), (0, packing.a_outer_perm)):
            if perm:
                producer = transform.GetProducerOfOperand(any_op(), packed, operand).producer
                packed = structured.PackTransposeOp(any_op(), any_op(), any_op(), producer, packed,
                                                    outer_perm=list(perm)).packed_op
        # The pack of the result's zero-filled init folds into a fill of the
        # packed shape; then the packs and the unpack become pads, reshapes and
        # transposes (vectorised at the end).
        patterns(root, canonicalization)
        copies = []
        packs_a = packing.a_packed or self.dot_product is not None
        for index, sizes in zip([0, 1, 2] if packs_a else [1, 2], self.pack_tiles):
            producer = transform.GetProducerOfOperand(any_op(), packed, index).producer
            # A pack, unless canonicalization folded it into a fill (a zero
            # init, a constant operand).
            fill = structured.MatchOp.match_op_names(producer, ["linalg.fill"]).result
            pack = structured.MatchOp.match_op_names(op_type("linalg.pack"), producer,
                                                     ["linalg.pack"]).result
            lowered = structured.LowerPackOp(op_type("tensor.pad"), op_type("tensor.expand_shape"),
                                             op_type("linalg.transpose"), pack)
            copies.append((lowered.transpose_op, sizes))
            copies.append((fill, sizes))
        consumers = transform.GetConsumersOfResult(any_op(), packed, 0).consumers
        unpack = structured.MatchOp.match_op_names(op_type("linalg.unpack"), consumers,
                                                   ["linalg.unpack"]).result
        return packed, copies, unpack

    def _register_tiles(self, root: ir.Value, contraction: ir.Value, copies: list) -> None:
        """The packed contraction tiled by `tile_sizes` down to its
        register tile and vectorised into FMAs, then the packing copies
        vectorised."""
        loops: list[ir.Value] = []
        for level in self.tile_sizes:
            contraction, loops = tile(contraction, level)
        contraction, loops, tails = self._peel(contraction, loops)
        dot = self.dot_product
        inner: list[ir.Value] = []
        if dot:
            contraction, inner = dot.tile_inner(contraction)
        vectorize(contraction)
        if self.sinks_extensions:
            patterns(root, vector_transform.ApplySinkVectorPatternsOp, canonicalization)
        patterns(root, *([dot.fold_widening] if dot else []),
                 vector_transform.ApplyVectorReductionToContractPatternsOp,
                 vector_transform.ApplyTransferPermutationPatternsOp, canonicalization)
        if loops and self.hoist:
            # The register tile's accumulators stay in registers across k.
            loop.HoistLoopInvariantSubsetsOp(loops[-1])
        if dot:
            # Then each of its rows' vectors does.
            dot.unroll(root, inner)
            if loops and self.hoist:
                loop.HoistLoopInvariantSubsetsOp(loops[-1])
            dot.rewrite(root)
        for handle, sizes in copies:
            vectorize_copy(handle, sizes, self.threads)
        for tail in tails:
            vectorize(tail)
        if tails:
            patterns(root, vector_transform.ApplyVectorReductionToContractPatternsOp,
                     vector_transform.ApplyTransferPermutationPatternsOp, canonicalization)

    def _peel(self, contraction: ir.Value, loops: list[ir.Value]
              ) -> tuple[ir.Value, list[ir.Value], list[ir.Value]]:
        """The register tile's loop along a `peel` dim peeled: the
        contraction in its full tiles, the loop over k around it (the last
        of `loops`, the others consumed) and the tail's op tiled one row at
        a time (to be vectorised)."""
        register = self.tile_sizes[-1]
        tiled = [d for d, size in enumerate(register) if size]
        peeled_dims = [d for d in self.peel if d in tiled]
        if not peeled_dims:
            return contraction, loops, []
        d = peeled_dims[0]
        scf_for = transform.CastOp(op_type("scf.for"), loops[tiled.index(d)]).output
        peeled = loop.LoopPeelOp(any_op(), any_op(), scf_for)
        # The full tiles' sizes fold to the register tile's; the handles
        # inside the loop, invalidated by the peeling, are found again.
        patterns(peeled.peeled_loop, canonicalization)
        contraction = structured.MatchOp.match_op_names(peeled.peeled_loop,
                                                        ["linalg.generic"]).result
        inner = transform.GetParentOp(any_op(), contraction, op_name="scf.for").parent
        tail = structured.MatchOp.match_op_names(peeled.remainder_loop, ["linalg.generic"]).result
        rows = tuple(1 if e == d else 0 for e in range(len(register)))
        return contraction, [inner], [tile(tail, rows)[0]]


@dataclass(frozen=True)
class ContractionWithEpilogue(ContractionSchedule):
    """A packed contraction whose `epilogue` (the tags of the elementwise
    ops after it, in order) is computed on each block of its result inside
    its loops: `epilogue_tiles` are the thread tile and the cache block of
    the last epilogue op's loops (the result's dims), `vector` the vector
    code of that op, which reads the packed panels."""

    epilogue: tuple[str, ...] = ()
    epilogue_tiles: tuple[tuple[int, ...], ...] = ()
    vector: OpTiling | None = None

    def decisions(self) -> list[str]:
        return super().decisions() + [
            f"  epilogue {', '.join(self.epilogue)} in blocks {list(self.epilogue_tiles[-1])} "
            f"of threads' tiles {list(self.epilogue_tiles[0])}", self.vector.describe()]

    def render(self, root: ir.Value) -> None:
        """The epilogue's last op tiled over threads and cache blocks, with
        the rest of the epilogue, the unpack, the packed contraction and the
        fill of its result fused into each block: the epilogue reads a block
        of the result while it is in cache, and no pass over the whole
        result is left."""
        packed, copies, unpack = self._pack(root)
        fill_tile = copies.pop()[1]
        copies.pop()
        fill = transform.GetProducerOfOperand(any_op(), packed, 2).producer
        last = match_tag(root, self.epilogue[-1])
        thread_tile, cache_tile = self.epilogue_tiles
        producers = [match_tag(root, tag) for tag in reversed(self.epilogue[:-1])]
        producers += [transform.CastOp(any_op(), unpack).output, packed, fill]
        tiled, fused = last, producers
        if any(thread_tile):
            tiled, loop_handle = forall(last, thread_tile)
            fused = fuse_into(fused, loop_handle)
        tiled, loops = tile(tiled, cache_tile)
        if loops:
            fused = fuse_into(fused, loops[-1])
        *epilogue, unpack, contraction, fill = fused
        self._register_tiles(root, contraction, copies)
        tiled_fill, _ = tile(fill, fill_tile)
        vectorize(tiled_fill)
        # Each vector of the result is unpacked, run through the epilogue and
        # stored: the unpacked block is never written out.
        tiled, vector_loops = tile(tiled, self.vector.vector_tile)
        vectorized = [tiled]
        if vector_loops:
            vectorized += fuse_into(epilogue + [unpack], vector_loops[-1])
        for handle in vectorized:
            vectorize(handle)
        # The unpacked vector goes straight to the epilogue (its write to the
        # block and read back fold away).
        patterns(vector_loops[0] if vector_loops else root, canonicalization)
        for tiling in self.fills:
            tiling.render(root)


class ContractionKind(ScheduleKind):
    """Packed contractions, with their epilogue inside their loops where the
    result's blocks take it (see the module docstring). Applies to a group
    with a contraction whose dims are static but for its rows (m); the rest
    of the group gets loop nests."""

    name = "contraction"

    def choose(self, group: Group, model: CPUModel) -> list[Schedule] | None:
        for linalg in group.ops:
            dims = contraction_dims(linalg)
            if dims is None:
                continue
            if any(dynamic and d != dims.m for d, dynamic in enumerate(linalg.dynamic)):
                # Packing takes static panels: a '?' n, k or batch dim gets
                # the loop nests (the rows, m, may be '?').
                return None
            fills = initialising_fills(group, linalg)
            schedule = contraction_schedule(f"{group.name}_contraction", linalg, fills, model)
            rest = [op for op in group.ops if op is not linalg and op not in fills]
            with_epilogue = _with_epilogue(schedule, linalg, rest, group, model)
            if with_epilogue:
                return [with_epilogue]
            return [schedule] + loop_nest_schedules(group.name, rest, model)
        return None


def register_tile_rows(model: CPUModel) -> int:
    """Rows of A in the packed register tile: 8 with 32 vector registers
    (8 x 2 accumulators), 4 with 16."""
    return 8 if model.vector_registers >= 32 else 4


def initialising_fills(group: Group, linalg: LinalgOp) -> list[LinalgOp]:
    """The fills of `group` that initialise `linalg`."""
    init = list(linalg.op.operands)[linalg.inputs]
    return [op for op in group.ops if op.name == "linalg.fill" and op.op.results[0] == init]


def contraction_schedule(group: str, linalg: LinalgOp, fills: list[LinalgOp],
                         model: CPUModel) -> ContractionSchedule:
    """The packed schedule of a contraction initialised by `fills`."""
    dims = contraction_dims(linalg)
    extents = linalg.extents
    m, n, k = extents[dims.m], extents[dims.n], extents[dims.k]
    nr = 2 * model.lanes
    mr = register_tile_rows(model)
    # bf16 pairs along k: B's panels in the dot product's layout. Its rows
    # are A's own (upstream's rewrite takes contractions of one row without
    # the unit dims of blocks of rows): the register tile's rows divide M.
    pairs = computes_bf16_pairs(linalg, model)
    if pairs:
        mr = largest_divisor(m, mr, 1)
    pack_a = m % mr != 0
    pair = 2 if pairs else 1
    packed_sizes = [0] * linalg.rank
    packed_sizes[dims.n] = nr
    if pack_a:
        packed_sizes[dims.m] = mr
    if pairs:
        packed_sizes[dims.k] = pair
    a_map, b_map, _ = linalg.maps
    order = {d: i for i, d in enumerate(dims.batch + (dims.m, dims.n, dims.k))}
    b_perm = _outer_perm(b_map, order)
    a_perm = _outer_perm(a_map, order) if pack_a else ()

    # Loops of the packed op: the original ones (m, n and k now count
    # blocks), then the inner rows of A's blocks (if packed), B's columns
    # and the pairs of k (if packed).
    rank = linalg.rank + 1 + pack_a + pairs
    blocks_n = ceil(n / nr)
    blocks_m = ceil(m / mr) if pack_a else m
    threads = [0] * rank
    batch = [extents[d] for d in dims.batch]
    # Rows of A each thread takes when the panels of B do not share evenly
    # (3 panels on 2 threads) and A has rows enough: whole register tiles,
    # at least 4 each.
    even_rows = (not pack_a and m % (model.threads * mr) == 0
                 and m >= 4 * mr * model.threads)
    if model.threads > 1:
        if dims.batch and batch[0] >= model.threads:
            threads[dims.batch[0]] = ceil(batch[0] / model.threads)
        elif blocks_n >= model.threads and (blocks_n % model.threads == 0 or not even_rows):
            threads[dims.n] = ceil(blocks_n / model.threads)
        elif even_rows:
            threads[dims.m] = m // model.threads
        elif pack_a and blocks_m >= model.threads:
            threads[dims.m] = ceil(blocks_m / model.threads)

    # kc rows of a B panel stay in L1 (half of it, the rest is A and C).
    element = 2 if pairs else 4
    kc = max(1, min(k, (model.l1_bytes // 2) // (nr * element)))
    kc = min(kc, 512)
    # mc rows of A (kc elements each) fill half of L2.
    mc_rows = max(mr, min(256, (model.l2_bytes // 2) // (kc * element)))
    kc = max(1, kc // pair)
    cache = [0] * rank
    register = [0] * rank
    for d in dims.batch:
        cache[d] = register[d] = 1
    if pack_a:
        cache[dims.m] = max(1, mc_rows // mr)
        register[dims.m] = 1
    else:
        cache[dims.m] = largest_divisor(threads[dims.m] or m, mc_rows, mr)
        register[dims.m] = mr
    cache[dims.n] = 8
    register[dims.n] = 1
    cache[dims.k] = kc
    register[dims.k] = 1

    # No loop where a tile covers its whole extent (a loop of one
    # iteration would be folded away under the script's handles).
    packed_extents = list(extents) + [mr] * pack_a + [nr] + [pair] * pairs
    packed_extents[dims.n] = blocks_n
    packed_extents[dims.m] = blocks_m
    packed_extents[dims.k] = ceil(k / pair)
    for d in range(rank):
        if cache[d] >= packed_extents[d]:
            cache[d] = 0
        if register[d] >= (cache[d] or packed_extents[d]):
            register[d] = 0
    if threads[dims.n] >= blocks_n:
        threads[dims.n] = 0

    b_packed = _packed_shape(linalg, 1, packed_sizes, b_perm)
    pack_tiles = []
    # A pair's copy is a vector of the panel's (or block's) pairs.
    inner = 1 + pairs
    if pack_a or pairs:
        a_packed = _packed_shape(linalg, 0, packed_sizes, a_perm)
        pack_tiles.append(tuple([1] * (len(a_packed) - inner) + [0] * inner))
    pack_tiles.append(tuple([1] * (len(b_packed) - inner) + [0] * inner))
    c_rank = len(linalg.output_map) + 1 + pack_a
    pack_tiles.append(tuple([1] * (c_rank - 1) + [0]))     # the packed init (or its fill)
    pack_tiles.append(tuple([1] * (c_rank - 1) + [0]))     # the unpacked result
    return ContractionSchedule(
        group=group, root=linalg.tag, threads=tuple(threads) if any(threads) else (),
        tile_sizes=(tuple(cache), tuple(register)),
        packing=Packing(tuple(packed_sizes), a_perm, b_perm, pack_a),
        unroll=(mr, 2), hoist=bool(register[dims.k]), fills=fill_tilings(fills, model),
        pack_tiles=tuple(pack_tiles),
        peel=tuple(d for d in range(linalg.rank) if linalg.dynamic and linalg.dynamic[d]),
        dot_product=dot_product_tile(model, mr, nr // model.lanes, rank,
                                     linalg.rank if pack_a else dims.m,
                                     linalg.rank + pack_a) if pairs else None)


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


def _with_epilogue(schedule: ContractionSchedule, linalg: LinalgOp, epilogue: list[LinalgOp],
                   group: Group, model: CPUModel) -> ContractionWithEpilogue | None:
    """`schedule` with `epilogue` (elementwise ops over the contraction's
    result, the last one the group's root) computed on each cache block of
    the result inside the contraction's loops; None when the epilogue is
    not such a chain, or the blocks do not divide the result."""
    if not is_epilogue_chain(linalg, epilogue, group):
        return None
    dims = contraction_dims(linalg)
    out = linalg.output_map
    shape = tuple(linalg.extents[d] for d in out)
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
    fields = {f.name: getattr(schedule, f.name) for f in dataclasses.fields(schedule)}
    fields["tile_sizes"] = tuple(levels)
    return ContractionWithEpilogue(**fields, epilogue=tuple(op.tag for op in epilogue),
                                   epilogue_tiles=(thread_tile, cache_tile), vector=tiling)
