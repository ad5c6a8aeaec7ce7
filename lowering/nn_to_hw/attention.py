"""Attention kernels: `nn.attention` as flash attention.

Each `nn.attention` (`softmax(q k^T * scale + mask) v`, causal or not, q
[..., Sq, D], k [..., Sk, D], v [..., Sk, Dv], any batch dims, an
optional additive mask whose last two dims are [Sq, Sk] and whose batch
dims broadcast) of f16, bf16 or f32 tensors becomes one kernel and its
launch. Each block computes BM query rows of one batch entry (grid: query
blocks x batch entries, the batch dims flattened) in one warpgroup, its
four warps stacked along the rows (`hw.alloc {warps = [4, 1]}`: each warp
holds whole rows of the scores and of the output, so that a row's
statistics are folded by the four threads that share it):

* the block's Q tile (BM x D) is loaded into shared memory once; then
  the loop over the keys, BN at a time, loads the K and V tiles (async
  copies in two groups: the scores wait for K while V is still in
  flight; the mask's tile, if any, with K), computes the scores S = Q K^T
  (`hw.contract` with K read in place, transposed) in an f32 register
  tile, scales them, adds the mask's tile, hides the keys past the end
  and, when causal, the keys after their query (`hw.mask`: -inf, in the
  tiles that have such keys), and folds them into the online softmax: the row maxima m (`hw.reduce_max`), P = exp(S - m), the
  accumulator and the row sums l rescaled by exp(m_old - m), l += the row
  sums of P; then `O += P V`, P rounded to the inputs' type and fed to the
  tensor cores from its registers (f16, bf16; `hw.contract` with a
  register A: the scores' accumulator fragments are the A fragments of
  mma.sync) or read from shared memory (f32). S and P never reach global memory; after the loop O / l is
  stored, rounded once to the result's type;
* f16 and bf16 multiply on tensor cores (mma.sync), accumulating in f32
  (P rounded to the inputs' type for the P V product, as flash attention
  does); f32 multiplies on CUDA cores with f32 fused multiply-adds
  (`unit = "fma"`), accurate to f32;
* with `causal`, the loop stops at the block's last query: the key
  tiles past the diagonal are skipped;
* m starts at the lowest finite f32 rather than -inf, so that a row whose
  keys are all hidden has m finite, P = exp(-inf) = 0 and l = 0; l is
  either 0 or at least 1 (the row maximum's own term, exp(0)), so O is
  divided by max(l, 1): such a row gives 0, as the nn reference does;
* sizes no tile divides need no padding: tiles past the ends of Sq, Sk,
  D and Dv read zeros (and hidden keys are -inf), and rows and columns
  past the result's end are not stored; an empty result is a new buffer
  and no kernel;
* the tile sizes come from `choose_attention_tiles`, a cost model of the
  architecture (its shared memory, the registers a thread has, the SMs);
  the kernel asks for registers for one block per SM
  (`hw.min_blocks_per_sm`), so that ptxas allocates what the tiles need
  rather than spilling to reach an occupancy level of its own choice;
* one stage of loads (sm_80): V's copy overlaps the scores and the
  softmax, K's the previous iteration's end; `hw-pipeline`'s
  multi-buffering takes loops of constant bounds and one copy group,
  which a causal loop and its two groups are not.

On sm_90a, f16 and bf16 attention whose Q, K and V rows TMA can move (a
multiple of 16 bytes, Dv up to 256) gets the kernel Hopper's units are
built for (`body_wgmma`), as the matmul kernel does: on Hopper wgmma is
the instruction that feeds the tensor cores at their full rate (mma.sync
is issued per warp, behind its ldmatrix loads), and TMA moves tiles
without the threads' copy instructions and their registers:

* one warpgroup per 64 query rows (BM = 64, wgmma's M; the accumulator
  of a warpgroup's four warps stacked along the rows is mma.sync's layout
  and wgmma's alike, so the row statistics and masks are the same ops);
* Q, K and V are loaded by TMA (`hw.tma_load`) into 128-byte swizzled
  tiles, the layout wgmma reads, their head dims padded to whole 128-byte
  box rows (TMA reads zeros past the ends); Q once, on an mbarrier of its
  own, K and V in a ring of `stages` tiles, each stage's two loads on one
  mbarrier (`hw.mbarrier_wait` on parity (j / stages) % 2): step j issues
  the loads of step j + stages - 1, so that stages - 1 key tiles are in
  flight while one is multiplied; the stages are the deepest ring (up to
  MAX_STAGES, no deeper than the key steps) that leaves two blocks room in
  an SM's shared memory, chosen with the tiles by `choose_attention_tiles`;
* S = Q K^T and O += P V are `hw.contract`s that the GPU lowering makes
  wgmma: K read in place K-major (`transpose_b`), V MN-major, P from its
  registers as wgmma's A (its accumulator fragments are wgmma's A
  fragments), so that P never reaches shared memory;
* Q, K and V are passed with their batch dims as one (TMA descriptors are
  of 2-d and 3-d memrefs); a mask's tile still comes by cp.async (or
  synchronous copies), waited for before it is read.

f32 attention, head dims whose rows TMA cannot move and sm_80 keep the
kernel above.

The hw ops are block-collective, so the kernel runs in the emulation
and the hazard checker like the others. A mask broadcast over the queries
or the keys (a language model's padding mask, [B, 1, 1, Sk]) is made
[..., Sq, Sk] by a broadcast kernel first (`_broadcast_mask`). Left (with
the reason, at the op): head dims whose tiles exceed the shared memory.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from mlir import ir
from mlir.dialects import arith, func, scf, tensor

from lamina.dialects import hw, nn
from lamina.lowering.hw_to_loops import index
from lamina.lowering.nn_to_hw.kernels import (THREADS, TO_HW, HWLowering, is_empty, launch,
                                             new_kernel)
from lamina.lowering.registry import lowering
from lamina.targets import nvidia
from lamina.types import MemRefType, type_view

# The warp grid of the kernel's register tiles: its warps stacked along
# the rows, each holding whole rows.
WARPS = (THREADS // nvidia.WARP, 1)
# Rows of a warp's fragments; the block's query rows are a multiple of
# WARP_ROWS.
WARP_ROWS = WARPS[0] * nvidia.MMA_M
# Registers of a thread besides its tiles' elements: indices, loop state,
# fragments in flight (the estimate of AttentionShape.registers).
KERNEL_REGISTERS = 32
# The blocks the tiles leave room for in an SM's registers.
RESIDENT_BLOCKS = 3
# The f32 a row maximum starts from (see the header).
LOWEST = float(np.finfo(np.float32).min)
# The deepest ring of K and V tiles of the sm_90a kernel.
MAX_STAGES = 3


@dataclass(frozen=True)
class AttentionTiles:
    """BM query rows per block, BN keys per step of the loop, `stages` K
    and V tiles in flight (the TMA ring of sm_90a; 1 elsewhere)."""

    block_m: int
    block_n: int
    stages: int = 1


@dataclass(frozen=True)
class AttentionShape:
    """What the tiling of an attention depends on."""

    batch: int
    queries: int
    keys: int
    depth: int
    value_depth: int
    dtype: str
    causal: bool
    mask: bool
    # TMA loads and wgmma (sm_90a): head dims in whole swizzled boxes.
    wgmma: bool = False

    @property
    def k_unit(self) -> int:
        """The reduction dims' granularity: mma.sync's K for f16 and bf16,
        the accumulator's 8 columns for f32 on CUDA cores, a 128-byte
        swizzled row for wgmma."""
        if self.wgmma:
            return self.swizzle_unit
        return nvidia.mma_sync_shape(self.dtype).k if self.tensor_cores else nvidia.MMA_N

    @property
    def swizzle_unit(self) -> int:
        """The elements of a 128-byte swizzled box row (64 f16 or bf16)."""
        return nvidia.SWIZZLE_BYTES // nvidia.dtype_bytes(self.dtype)

    @property
    def tensor_cores(self) -> bool:
        return self.dtype in ("f16", "bf16")

    @property
    def padded_depth(self) -> int:
        """D rounded up to the contraction's granularity (at least one step)."""
        return max(1, -(-self.depth // self.k_unit)) * self.k_unit

    @property
    def padded_value_depth(self) -> int:
        """Dv rounded up to whole accumulator fragments (wgmma: whole
        swizzled boxes, as it reads V's rows)."""
        unit = self.swizzle_unit if self.wgmma else nvidia.MMA_N
        return max(1, -(-self.value_depth // unit)) * unit

    def shared_bytes(self, tiles: AttentionTiles) -> int:
        """Q, the stages of the K and V tiles, the mask's and (on CUDA cores)
        P's, in the inputs' type."""
        m, n = tiles.block_m, tiles.block_n
        elements = m * self.padded_depth + tiles.stages * n * (
            self.padded_depth + self.padded_value_depth) + m * n * (
            int(self.mask) + int(not self.tensor_cores))
        return elements * nvidia.dtype_bytes(self.dtype)

    def registers(self, tiles: AttentionTiles, asynchronous: bool) -> int:
        """An estimate of the 32-bit registers a thread needs: its elements
        of S (and of P and its addresses, twice theirs), of O and of the
        mask's tile, the row statistics and the kernel's indices; loops of
        fused multiply-adds (f32) and synchronous copies (rows async copies
        cannot move) also hold addresses and operands per element."""
        m, n = tiles.block_m, tiles.block_n
        scores = m * n // THREADS
        values = m * self.padded_value_depth // THREADS
        estimate = 2 * scores + values + values // 4 + KERNEL_REGISTERS
        if self.mask:
            estimate += scores
        if not self.tensor_cores:
            estimate += 3 * scores
        if not asynchronous:
            moved = n * (self.padded_depth + self.padded_value_depth) // THREADS + (
                scores if self.mask else 0)
            estimate += moved + moved // 2
        return estimate

    def key_steps(self, tiles: AttentionTiles) -> float:
        """The mean number of key tiles a block visits (causal blocks stop
        at their last query)."""
        steps = -(-self.keys // tiles.block_n)
        if not self.causal:
            return steps
        blocks = -(-self.queries // tiles.block_m)
        return sum(min(steps, -(-min(self.keys, (i + 1) * tiles.block_m) // tiles.block_n))
                   for i in range(blocks)) / blocks


def choose_attention_tiles(shape: AttentionShape, chip: str,
                           asynchronous: bool = True) -> AttentionTiles | None:
    """The tiling with the least estimated time on `chip` (K and V loaded
    by async copies or, not `asynchronous`, synchronous ones).

    The model: a block's time is its products' work (BM x the keys it
    visits, rounded up to BN, x (D + Dv), padded) divided by how well a
    step amortises its loads and its softmax (BM * BN / (BM + BN)); blocks
    run in waves of one per SM. Tiles must fit the shared memory of a
    block (`shared_memory_bytes`) and their estimated registers
    (`AttentionShape.registers`) the registers of a thread when
    RESIDENT_BLOCKS blocks share an SM, so that larger tiles do not cost
    the occupancy that hides the loads' latency; where none does, the
    smallest. None: not even the smallest tiles fit the shared memory
    (head dims of thousands)."""
    arch = nvidia.architecture(chip)
    budget = min(nvidia.REGISTERS_PER_THREAD,
                 arch.registers_per_sm // (RESIDENT_BLOCKS * THREADS) // 8 * 8)
    # wgmma: one warpgroup per 64 query rows, keys in whole 16-key steps of
    # P V and TMA boxes of at most 256 rows.
    rows = (nvidia.WGMMA_M,) if shape.wgmma else (WARP_ROWS, 2 * WARP_ROWS)
    keys = (64, 128) if shape.wgmma else (32, 64, 128)
    smallest = AttentionTiles(rows[0], keys[0])
    if shape.shared_bytes(smallest) > arch.shared_memory_bytes:
        return None
    best, best_time = None, None
    for block_m in rows:
        for block_n in keys:
            tiles = AttentionTiles(block_m, block_n)
            if shape.shared_bytes(tiles) > arch.shared_memory_bytes \
                    or shape.registers(tiles, asynchronous) > budget:
                continue
            blocks = -(-shape.queries // block_m) * shape.batch
            waves = -(-blocks // arch.sms)
            work = block_m * max(shape.key_steps(tiles), 1) * block_n * (
                shape.padded_depth + shape.padded_value_depth)
            time = waves * work * (block_m + block_n) / (block_m * block_n)
            if best_time is None or time < best_time:
                best, best_time = tiles, time
    best = best or smallest
    return _with_stages(best, shape, arch) if shape.wgmma else best


def _with_stages(tiles: AttentionTiles, shape: AttentionShape,
                 arch: nvidia.Architecture) -> AttentionTiles:
    """`tiles` with the deepest ring of K and V tiles (up to MAX_STAGES, no
    deeper than the key steps) that leaves room for two blocks in an SM's
    shared memory (a second block hides the loads and the softmax, as the
    matmul's cost model finds), else the deepest that fits a block."""
    steps = max(1, -(-shape.keys // tiles.block_n))
    fitting = [AttentionTiles(tiles.block_m, tiles.block_n, stages)
               for stages in range(min(MAX_STAGES, steps), 0, -1)
               if shape.shared_bytes(AttentionTiles(tiles.block_m, tiles.block_n, stages))
               <= arch.shared_memory_bytes]

    def per_block(candidate: AttentionTiles) -> int:
        return (shape.shared_bytes(candidate) + arch.shared_alignment
                + nvidia.RESERVED_SHARED_BYTES)
    two_blocks = [t for t in fitting if 2 * per_block(t) <= arch.shared_memory_per_sm]
    return (two_blocks or fitting or [tiles])[0]


class AttentionKernel:
    """Writes the hw kernel of one nn.attention."""

    def __init__(self, op: nn.AttentionOp, name: str, chip: str):
        operands = list(op.operation.operands)
        self.q, self.k, self.v = (type_view(v.type) for v in operands[:3])
        self.mask = type_view(operands[3].type) if len(operands) > 3 else None
        self.out = type_view(op.operation.results[0].type)
        self.name = name
        self.dtype = self.q.dtype
        self.batch_dims = self.q.shape[:-2]
        queries, depth = self.q.shape[-2:]
        keys, value_depth = self.v.shape[-2:]
        self.causal = bool(op.causal)
        self.scale = op.scale if op.scale is not None else 1.0 / math.sqrt(depth)
        element = nvidia.dtype_bytes(self.dtype)
        # TMA loads and wgmma where the chip has them (sm_90a) for f16 and
        # bf16, whose Q, K and V rows TMA moves (a multiple of 16 bytes) and
        # whose value rows one wgmma covers.
        self.wgmma = nvidia.FEATURES["wgmma"].problem(nvidia.architecture(chip)) is None \
            and self.dtype in ("f16", "bf16") \
            and all(d * element % nvidia.TMA_ROW_ALIGNMENT == 0 for d in (depth, value_depth)) \
            and value_depth <= nvidia.WGMMA_MAX_N
        self.choose_tiles(chip, queries, keys, depth, value_depth)
        if self.wgmma and self.tiles is None:
            # Head dims whose swizzled tiles do not fit take the other kernel.
            self.wgmma = False
            self.choose_tiles(chip, queries, keys, depth, value_depth)

    def choose_tiles(self, chip: str, queries: int, keys: int, depth: int,
                     value_depth: int) -> None:
        """The shape, the kind of copies and the tiles of the kernel that
        `wgmma` says."""
        self.shape = AttentionShape(math.prod(self.batch_dims), queries, keys, depth,
                                    value_depth, self.dtype, self.causal, self.mask is not None,
                                    self.wgmma)
        # Async copies move 4 bytes or more per thread: rows of a multiple
        # of 4 bytes (on sm_90a's kernel, the mask's alone).
        rows = ((keys,) if self.mask else ()) + (() if self.wgmma else (depth, value_depth))
        element = nvidia.dtype_bytes(self.dtype)
        self.asynchronous = all(d * element % 4 == 0 for d in rows)
        self.tiles = choose_attention_tiles(self.shape, chip, self.asynchronous or self.wgmma)

    @property
    def grid(self) -> tuple[int, int]:
        return (-(-self.shape.queries // self.tiles.block_m), max(self.shape.batch, 1))

    def argument_types(self) -> list[ir.Type]:
        inputs = [self.q, self.k, self.v]
        if self.wgmma:
            # TMA descriptors are of 2-d or 3-d memrefs: the batch dims as one.
            inputs = [t.with_shape(self.collapsed(t.shape)) for t in inputs]
        types = inputs + ([self.mask] if self.mask else []) + [self.out]
        return [MemRefType(t.shape, t.dtype).to_mlir() for t in types]

    def collapsed(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        """A shape of Q, K or V with its batch dims as one (none: as it is)."""
        return shape if len(shape) <= 3 else (math.prod(shape[:-2]),) + tuple(shape[-2:])

    def inputs(self, operands: list[ir.Value]) -> list[ir.Value]:
        """The host's values the kernel reads, at the current insertion
        point: Q, K and V collapsed to one batch dim for TMA."""
        if not self.wgmma:
            return operands
        found = list(operands)
        for i in range(3):
            view = type_view(found[i].type)
            if view.rank > 3:
                found[i] = tensor.collapse_shape(
                    view.with_shape(self.collapsed(view.shape)).to_mlir(), found[i],
                    [list(range(view.rank - 2)), [view.rank - 2], [view.rank - 1]])
        return found

    def tile(self, shape, dtype: str, space: str, warps: bool = False) -> ir.Value:
        attributes = {"warps": list(WARPS)} if warps else {}
        return hw.AllocOp.build(result_type=MemRefType(tuple(shape), dtype, space), **attributes)

    def batch_indices(self) -> list[ir.Value]:
        """The block's coordinates in the batch dims (from grid dim y)."""
        position = hw.BlockIdOp.build(dim=1)
        found = []
        for extent in reversed(self.batch_dims[1:]):
            found.append(arith.remui(position, index(extent)))
            position = arith.divui(position, index(extent))
        return [position] + found[::-1] if self.batch_dims else []

    def build(self, body: ir.Block, location: ir.Location) -> None:
        kernel = new_kernel(body, self.name, self.argument_types(), location)
        # Registers for one block at least, as the tiles were chosen: no
        # spills to reach an occupancy level of ptxas's choice.
        kernel.attributes[hw.MIN_BLOCKS_ATTRIBUTE] = ir.IntegerAttr.get(
            ir.IntegerType.get_signless(64), 1)
        with location, ir.InsertionPoint(kernel.add_entry_block()):
            self.body(list(kernel.arguments))
            func.ReturnOp([])

    def online_softmax_state(self, m: int, acc: ir.Value):
        """The online softmax's row statistics of `m` rows (the running
        maximum at the lowest finite f32, the running sum at 0, and scratch
        rows), the scale and one as 1x1 tiles, and `acc` zeroed."""
        stats = {name: self.tile((m, 1), "f32", "private", warps=True)
                 for name in ("peak", "new_peak", "factor", "total", "row_sum")}
        scale = self.tile((1, 1), "f32", "private")
        one = self.tile((1, 1), "f32", "private")
        hw.FillOp.build(scale, value=float(self.scale))
        hw.FillOp.build(one, value=1.0)
        hw.FillOp.build(stats["peak"], value=LOWEST)
        hw.FillOp.build(stats["total"], value=0.0)
        hw.FillOp.build(acc, value=0.0)
        return stats, scale, one

    def body(self, arguments: list[ir.Value]) -> None:
        if self.wgmma:
            return self.body_wgmma(arguments)
        t, s = self.tiles, self.shape
        q, k, v = arguments[:3]
        mask = arguments[3] if self.mask else None
        out = arguments[-1]
        m, n = t.block_m, t.block_n
        depth, value_depth = s.padded_depth, s.padded_value_depth
        q_tile = self.tile((m, depth), self.dtype, "workgroup")
        k_tile = self.tile((n, depth), self.dtype, "workgroup")
        v_tile = self.tile((n, value_depth), self.dtype, "workgroup")
        # P goes from its registers into the tensor cores; the CUDA cores
        # read it from shared memory.
        p_shared = None if s.tensor_cores else self.tile((m, n), self.dtype, "workgroup")
        scores = self.tile((m, n), "f32", "private", warps=True)
        acc = self.tile((m, value_depth), "f32", "private", warps=True)
        p_tile = self.tile((m, n), self.dtype, "private", warps=True) if s.tensor_cores else None
        if mask is not None:
            # The mask's tile goes through shared memory (loaded with K),
            # then into registers: P's tile in the inputs' type, free until
            # P, and an f32 tile.
            mask_shared = self.tile((m, n), self.dtype, "workgroup")
            mask_f32 = self.tile((m, n), "f32", "private", warps=True)
            mask_tile = p_tile or mask_f32
        stats, scale, one = self.online_softmax_state(m, acc)
        batch = self.batch_indices()
        row0 = arith.muli(hw.BlockIdOp.build(dim=0), index(m))
        zero = index(0)
        self.load(q, q_tile, batch + [row0, zero])
        # The keys the block visits: all of them, or (causal) up to its
        # last query; whole tiles of BN.
        end = index(-(-s.keys // n) * n)
        if self.causal:
            last = arith.minui(arith.addi(row0, index(m)), index(s.keys))
            end = arith.muli(arith.divui(arith.addi(last, index(n - 1)), index(n)), index(n))
        loop = scf.ForOp(zero, end, index(n))
        with ir.InsertionPoint(loop.body):
            kv0 = loop.induction_variable
            if mask is None:
                self.load(k, k_tile, batch + [kv0, zero])
            else:
                mask_batch = hw.broadcast_coordinates(batch, self.mask.shape[:-2]) \
                    if batch else []
                mask_batch = [zero if isinstance(c, int) else c for c in mask_batch]
                self.load(k, k_tile, batch + [kv0, zero], mask, mask_shared,
                          mask_batch + [row0, kv0])
            self.load(v, v_tile, batch + [kv0, zero])
            self.ready(pending=1)
            hw.FillOp.build(scores, value=0.0)
            unit = "tensor_cores" if s.tensor_cores else "fma"
            hw.ContractOp.build(q_tile, k_tile, scores, [], transpose_b=True, unit=unit)
            hw.MulOp.build(scores, scale, scores)
            if mask is not None:
                hw.CopyOp.build(mask_shared, mask_tile, [zero, zero])
                if mask_f32 is not mask_tile:
                    hw.CastOp.build(mask_tile, mask_f32)
                hw.AddOp.build(scores, mask_f32, scores)
            self.hide_keys(scores, row0, kv0)
            self.online_softmax(scores, acc, stats)
            if s.tensor_cores:
                hw.CastOp.build(scores, p_tile)
                self.ready(pending=0)
                hw.ContractOp.build(p_tile, v_tile, acc, [])
            else:
                hw.CopyOp.build(scores, p_shared, [zero, zero])
                self.ready(pending=0)
                hw.ContractOp.build(p_shared, v_tile, acc, [], unit="fma")
            hw.BarrierOp.build()
            scf.YieldOp([])
        total = stats["total"]
        hw.MaxOp.build(total, one, total)
        hw.MapOp.build([acc, total], acc, fn="nn.div")
        hw.StoreOp.build(acc, out, [], batch + [row0, zero])

    def body_wgmma(self, arguments: list[ir.Value]) -> None:
        """The sm_90a kernel: Q, K and V loaded by TMA on mbarriers into
        128-byte swizzled tiles, K and V in a ring of `stages` (each stage's
        two loads on one mbarrier, the loads of step j + stages - 1 issued
        at step j), S = Q K^T and O += P V as wgmma (P from registers)."""
        t, s = self.tiles, self.shape
        q, k, v = arguments[:3]
        mask = arguments[3] if self.mask else None
        out = arguments[-1]
        m, n, stages = t.block_m, t.block_n, t.stages
        depth, value_depth = s.padded_depth, s.padded_value_depth
        q_bar = hw.MBarrierInitOp.build(count=1, barriers=1)
        kv_bar = hw.MBarrierInitOp.build(count=2, barriers=stages)
        q_tile = self.tile((m, depth), self.dtype, "workgroup")
        k_tile = self.tile((stages, n, depth), self.dtype, "workgroup")
        v_tile = self.tile((stages, n, value_depth), self.dtype, "workgroup")
        scores = self.tile((m, n), "f32", "private", warps=True)
        acc = self.tile((m, value_depth), "f32", "private", warps=True)
        p_tile = self.tile((m, n), self.dtype, "private", warps=True)
        if mask is not None:
            mask_shared = self.tile((m, n), self.dtype, "workgroup")
            mask_f32 = self.tile((m, n), "f32", "private", warps=True)
        stats, scale, one = self.online_softmax_state(m, acc)
        batch = self.batch_indices()
        # Q, K and V have one batch dim (or none), the block's grid dim y.
        flat = [hw.BlockIdOp.build(dim=1)] if self.batch_dims else []
        row0 = arith.muli(hw.BlockIdOp.build(dim=0), index(m))
        zero = index(0)
        hw.TmaLoadOp.build(q, q_tile, q_bar, zero, flat + [row0, zero])
        # The key steps the block takes: all of them, or (causal) up to its
        # last query.
        steps = index(-(-s.keys // n))
        if self.causal:
            last = arith.minui(arith.addi(row0, index(m)), index(s.keys))
            steps = arith.divui(arith.addi(last, index(n - 1)), index(n))

        def load(step: ir.Value) -> None:
            slot = arith.remui(step, index(stages))
            kv0 = arith.muli(step, index(n))
            hw.TmaLoadOp.build(k, k_tile, kv_bar, slot, flat + [kv0, zero, slot])
            hw.TmaLoadOp.build(v, v_tile, kv_bar, slot, flat + [kv0, zero, slot])

        def load_if(step: ir.Value) -> None:
            branch = scf.IfOp(arith.cmpi(arith.CmpIPredicate.ult, step, steps))
            with ir.InsertionPoint(branch.then_block):
                load(step)
                scf.YieldOp([])
        for step in range(stages - 1):
            load_if(index(step))
        hw.MBarrierWaitOp.build(q_bar, zero, zero)
        loop = scf.ForOp(zero, steps, index(1))
        with ir.InsertionPoint(loop.body):
            step = loop.induction_variable
            kv0 = arith.muli(step, index(n))
            load_if(arith.addi(step, index(stages - 1)))
            if mask is not None:
                mask_batch = hw.broadcast_coordinates(batch, self.mask.shape[:-2]) \
                    if batch else []
                mask_batch = [zero if isinstance(c, int) else c for c in mask_batch]
                self.load(mask, mask_shared, mask_batch + [row0, kv0])
            slot = arith.remui(step, index(stages))
            parity = arith.remui(arith.divui(step, index(stages)), index(2))
            hw.MBarrierWaitOp.build(kv_bar, slot, parity)
            hw.FillOp.build(scores, value=0.0)
            hw.ContractOp.build(q_tile, k_tile, scores, [slot], transpose_b=True)
            hw.MulOp.build(scores, scale, scores)
            if mask is not None:
                self.ready(pending=0)
                hw.CopyOp.build(mask_shared, p_tile, [zero, zero])
                hw.CastOp.build(p_tile, mask_f32)
                hw.AddOp.build(scores, mask_f32, scores)
            self.hide_keys(scores, row0, kv0)
            self.online_softmax(scores, acc, stats)
            hw.CastOp.build(scores, p_tile)
            hw.ContractOp.build(p_tile, v_tile, acc, [slot])
            hw.BarrierOp.build()
            scf.YieldOp([])
        total = stats["total"]
        hw.MaxOp.build(total, one, total)
        hw.MapOp.build([acc, total], acc, fn="nn.div")
        hw.StoreOp.build(acc, out, [], batch + [row0, zero])

    def hide_keys(self, scores: ir.Value, row0: ir.Value, kv0: ir.Value) -> None:
        """`hw.mask` on the tiles that have keys to hide: the last one where
        BN does not divide Sk, and (causal) those with keys after the
        block's first query."""
        n, keys = self.tiles.block_n, self.shape.keys
        past_end = arith.cmpi(arith.CmpIPredicate.ugt, arith.addi(kv0, index(n)),
                              index(keys)) if keys % n else None
        after = arith.cmpi(arith.CmpIPredicate.ugt, arith.addi(kv0, index(n - 1)),
                           row0) if self.causal else None
        if past_end is None and after is None:
            return
        condition = past_end if after is None else after if past_end is None \
            else arith.ori(past_end, after)
        branch = scf.IfOp(condition)
        with ir.InsertionPoint(branch.then_block):
            hw.MaskOp.build(scores, row0, kv0, keys=keys, causal=self.causal)
            scf.YieldOp([])

    def online_softmax(self, scores: ir.Value, acc: ir.Value, stats: dict) -> None:
        """Folds a tile of scores into the row statistics and rescales the
        accumulator; the scores become P = exp(S - m)."""
        peak, new_peak, factor = stats["peak"], stats["new_peak"], stats["factor"]
        total, row_sum = stats["total"], stats["row_sum"]
        hw.ReduceMaxOp.build(scores, new_peak)
        hw.MaxOp.build(new_peak, peak, new_peak)
        hw.SubOp.build(scores, new_peak, scores)
        hw.ExpOp.build(scores, scores)
        hw.SubOp.build(peak, new_peak, factor)
        hw.ExpOp.build(factor, factor)
        hw.CastOp.build(new_peak, peak)
        hw.ReduceSumOp.build(scores, row_sum)
        hw.MulOp.build(total, factor, total)
        hw.AddOp.build(total, row_sum, total)
        hw.MulOp.build(acc, factor, acc)

    def load(self, *copies) -> None:
        """Starts loading tiles (`source, tile, indices` each; an async copy
        group of their own), or loads them (synchronous copies) where async
        copies cannot move their rows."""
        copies = [copies[i:i + 3] for i in range(0, len(copies), 3)]
        if self.asynchronous:
            hw.CommitOp.build([hw.AsyncCopyOp.build(*copy) for copy in copies])
        else:
            for copy in copies:
                hw.CopyOp.build(*copy)

    def ready(self, pending: int) -> None:
        """Waits for the loads but the last `pending` groups, and makes
        every thread's writes visible to the block."""
        if self.asynchronous:
            hw.WaitOp.build(pending=pending)
        else:
            hw.BarrierOp.build()


def _broadcast_mask(op: nn.AttentionOp, target: HWLowering) -> None:
    """A mask broadcast over the queries or the keys (a padding mask of
    [B, 1, 1, Sk], as language models make one from their attention mask)
    made [..., Sq, Sk] first by an `nn.broadcast_to`, lowered at once to
    its data-movement kernel: the attention kernel reads masks whose last
    two dims are [Sq, Sk] (batch dims broadcast in place)."""
    operands = list(op.operation.operands)
    if len(operands) < 4:
        return
    mask, q, k = (type_view(v.type) for v in (operands[3], operands[0], operands[1]))
    rows = (q.shape[-2], k.shape[-2])
    if mask.rank >= 2 and mask.shape[-2:] == rows:
        return
    batch = ((1,) * (2 - mask.rank) + mask.shape)[:-2]
    with ir.InsertionPoint(op.operation), op.operation.location:
        full = nn.BroadcastToOp.build(operands[3], result_type=mask.with_shape(batch + rows))
    op.operation.operands[3] = full
    full_op = full.owner.operation
    lowered = TO_HW.lookup(nn.BroadcastToOp)(nn.BroadcastToOp.from_operation(full_op), HWLowering(
        target.chip, target.tiles, target.kernels, f"{target.name}_mask", target.reasons))
    for done in reversed(list(lowered or [])):
        done.erase()


@lowering(nn.AttentionOp, to="hw")
def lower_attention(op: nn.AttentionOp, target: HWLowering) -> list[ir.Operation] | None:
    """An attention as a flash-attention kernel and its launch; returns the
    op. None (with a reason): its mask is broadcast over queries or keys,
    or its head dims need more shared memory than a block has."""
    if is_empty(op.operation):
        launch(op.operation, [], target.name, ())
        return [op.operation]
    _broadcast_mask(op, target)
    kernel = AttentionKernel(op, target.name, target.chip)
    if kernel.tiles is None:
        return target.leave(op.operation, f"its head dims ({kernel.shape.depth} and "
                            f"{kernel.shape.value_depth}) need more shared memory than a "
                            f"block has on {target.chip}, even for the smallest tiles")
    kernel.build(target.kernels, op.operation.location)
    with ir.InsertionPoint(op.operation), op.operation.location:
        inputs = kernel.inputs(list(op.operation.operands))
    launch(op.operation, inputs, kernel.name, kernel.grid)
    return [op.operation]
