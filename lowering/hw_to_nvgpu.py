"""--convert-hw-to-nvgpu: hw kernels as GPU kernels (gpu, nvgpu, nvvm).

Each block-collective hw op is distributed over the threads of its block:

* a kernel becomes a `gpu.func` in the module's `gpu.module @hw_kernels`
  (with the NVVM target of `chip`; `hw.min_blocks_per_sm` becomes
  `nvvm.minctasm`, PTX's `.minnctapersm`), each `hw.launch` a `gpu.launch_func`
  with the dynamic shared memory its tiles need (the module's
  `hw.launches` attribute lists them for the kernel manifest); the
  epilogue functions of its stores are copied into the GPU module;
* shared tiles are views (`memref.view`) of the block's dynamic shared
  memory, each aligned to 128 bytes (1024 on sm_90a, for swizzled TMA
  boxes);
* register tiles are spread over the threads (the layouts are the NVIDIA
  target model's, `lamina.targets.nvidia`): a tile whose shape the
  block's warps divide into 16x8 fragments has the layout of mma.sync's
  accumulator (each warp holds a block of fragments, each thread four
  elements of each); any other tile is spread element by element, round
  robin; a 1-d tile the block's threads divide is held in vectors
  (consecutive threads, consecutive vectors), a one-element tile by every
  thread. Each thread keeps its elements in a private `memref.alloca`
  indexed by constants, which LLVM promotes to registers (booleans as
  bytes);
* copies between global and shared memory are split into chunks of up
  to 16 bytes per thread; async copies become cp.async
  (`nvgpu.device_async_copy`, zero-filling past the global memref's end),
  `hw.commit` and `hw.wait` cp.async's commit_group and wait_group (then
  a barrier); copies to and from registers move each thread's elements;
* `hw.mma` becomes, per warp and per k-step, ldmatrix loads of A
  (x4) and B (x4 or x2, transposed) fragments and `nvvm.mma.sync`
  m16n8k16 (f16, bf16) or m16n8k8 (tf32, fragments loaded element by
  element, rounded or split into big and small parts as `precision`
  says, 3xTF32 then three mma.sync per fragment) on the accumulator's
  fragments; an operand stored transposed (`transpose_a`, `transpose_b`)
  is read in place, ldmatrix transposing it (or not, for B) and tf32
  elements loaded at swapped indices;
* on sm_90a, `hw.tma_load` becomes, in the block's first thread, an
  mbarrier arrive.expect_tx of its bytes and TMA loads
  (`nvgpu.tma.async.load`) of its boxes: the host makes one descriptor
  per box shape (`nvgpu.tma.create.descriptor`) and passes it after the
  kernel's arguments; rows of 128 bytes or more are loaded 128-byte
  swizzled, in 128-byte-wide boxes; a 3-d (batched) memref's descriptor
  has boxes 1 deep in its leading dim. `hw.mbarrier_*` become nvgpu mbarrier
  ops. An MMA whose operands are such tiles, in a block of one
  warpgroup, becomes wgmma (`nvgpu.warpgroup.mma`, B transposed, B's
  descriptor's leading byte offset set to its boxes' stride), its
  accumulator held in wgmma's register layout; `instruction` on
  `hw.mma` forces one kind or the other;
* stores call their epilogue per element; a tile in an accumulator
  layout is stored column by column, a bias (1-d extra) read once per
  column, an extra broadcast over dims of 1 read at index 0 of those, each element guarded by its row's and its column's bounds, and
  two adjacent columns stored by one vector store when the destination's
  alignment allows (`TileStore.paired`);
* elementwise register-tile ops (`hw.ElementwiseTileOp`: hw.add,
  hw.gelu, ..., and `hw.elementwise` of any nn op, a plugin's included)
  compute each element a thread holds with the ops their scalar
  expression builds (`lamina.scalar`; arith only where it has such a
  body, as in the emulation);
* convolutions: `hw.conv_elements` computes each element a thread holds
  with the emulation's loops over its window; `hw.im2col` is a loop in
  which thread t gathers the tile's elements t, t + threads, ...
  (consecutive threads consecutive columns) into the row-major shared
  tile;
* runs of elements (`hw.load_elements`, `hw.store_elements`) move each
  thread's vectors with one vector load or store where the global memref
  is the run's space and the run's offset a multiple of the vector by
  construction, else element by element, an operand that broadcasts read
  at its broadcast coordinates; a one-element tile is stored by the
  block's first thread. `hw.block_reduce` folds each thread's elements,
  then each warp's by butterfly shuffles (`gpu.shuffle xor`, shfl.sync.bfly),
  then the warps' totals through the scratch tile between barriers (each
  warp shuffles them again, lane w holding warp w's); elementwise ops read a one-element operand tile (a row's statistic) in
  every thread;
* attention's ops: `hw.reduce_max` and `hw.reduce_sum` of an accumulator
  tile whose warps hold whole rows (`hw.alloc {warps = [W, 1]}`) fold
  each thread's elements of a row, then the row's four threads by
  shuffles (xor 1, 2), into the row statistics' layout
  (`nvidia.RowLayout`), which elementwise ops broadcast over the rows;
  `hw.mask` selects -inf per element; `hw.contract` on tensor cores is
  `hw.mma`'s ldmatrix + mma.sync, B^T's fragments loaded by ldmatrix
  untransposed, A's taken from a register tile's accumulator fragments
  where it is one, and on CUDA cores a loop over k of shared loads and
  fused multiply-adds (`math.fma`). On sm_90a a tensor-core `hw.contract`
  whose shared operands TMA loads swizzled, in a block of one warpgroup
  with an accumulator of 64 rows (`nvidia.wgmma_contract_problem`), is a
  wgmma m64nNk16 per k-step (inline PTX, the accumulator tied in place,
  between wgmma.fence and commit_group + wait_group 0): B K-major (B^T,
  the keys) or MN-major (the values; its leading byte offset set to its
  boxes' stride), through matrix descriptors
  (`nvgpu.warpgroup.generate.descriptor`) advanced per k-step, A through
  a descriptor too or, a register tile, from the accumulator fragments
  that mma.sync would take (wgmma's register A layout is the same); the
  accumulator keeps mma.sync's layout, which for 64 rows over four warps
  is wgmma's;
* hardware instructions (`lamina.dialects.hw_instructions`) become, per
  element each thread holds, upstream's `nvvm.inline_ptx` with their PTX.

Expects verified hw IR that `hw-check` accepted for `chip` (alignment of
async copies, TMA boxes, MMA shapes and types, features) and whose
kernels all launch with one block size; `hw.pipeline` annotations are
ignored (`hw-pipeline` has realised them). Row reductions of 2-d tiles
(`hw.reduce_sum`, `hw.reduce_max`) other than those of accumulator tiles
whose warps hold whole rows, broadcasting operands of register-tile
arithmetic other than one-element tiles and row statistics (`RowLayout`),
register tiles with leading dims
and plain reads of swizzled tiles are not lowered (the error names the
op). Leaves upstream gpu, nvgpu, nvvm, memref, vector, scf, arith and
func ops for the NVVM lowering; no hw op is left.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

from mlir import ir
from mlir.dialects import arith, func, gpu, llvm, math as math_ops, memref, nvgpu, nvvm, scf, vector

from lamina.dialects import hw
from lamina.dialects.opdef import lookup_op
from lamina.dialects.hw_instructions import Instruction
from lamina.lowering.hw_to_loops import (constant_of, conv_element, extra_position,
                                         fold_axis_element, fold_start, from_f32,
                                         gather_element, im2col_element,
                                         guarded_load, guarded_store, hidden, index,
                                         index_element, placed, shape, split_tf32, to_f32,
                                         to_tf32)
from lamina.pass_registry import Pass, PassFailure, register_pass
from lamina.targets import nvidia
from lamina.targets.nvidia import (SWIZZLE_BYTES, WARP, AccumulatorLayout, BankSwizzle,
                                   ReplicatedLayout, RowLayout, VectorLayout, WgmmaLayout, register_layout,
                                   shared_alignment)
from lamina.types import MemRefType, type_view

GPU_MODULE = "hw_kernels"
# The module attribute listing the launches, for the kernel manifest.
LAUNCHES_ATTRIBUTE = "hw.launches"


# ---------------------------------------------------------------------------
# Index arithmetic (constants folded here keep the IR readable).


def _const(value: ir.Value) -> int | None:
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.name != "arith.constant":
        return None
    attribute = owner.attributes["value"]
    return ir.IntegerAttr(attribute).value if isinstance(attribute, ir.IntegerAttr) else None


def as_value(x) -> ir.Value:
    return index(x) if isinstance(x, int) else x


def add(a, b) -> ir.Value:
    if isinstance(b, int) and b == 0:
        return as_value(a)
    if isinstance(a, int) and a == 0:
        return as_value(b)
    return arith.addi(as_value(a), as_value(b))


def mul(a, b: int) -> ir.Value:
    return as_value(a) if b == 1 else arith.muli(as_value(a), index(b))


def div(a, b: int) -> ir.Value:
    return as_value(a) if b == 1 else arith.divui(as_value(a), index(b))


def rem(a, b: int) -> ir.Value:
    return arith.remui(as_value(a), index(b))


def less(a, b) -> ir.Value:
    return arith.cmpi(arith.CmpIPredicate.ult, as_value(a), as_value(b))


class IndexArithmetic(nvidia.Arithmetic):
    """The target model's layout arithmetic as index ops (constants folded)."""

    def add(self, a, b):
        return add(a, b)

    def mul(self, a, b):
        return mul(a, b)

    def div(self, a, b):
        return div(a, b)

    def rem(self, a, b):
        return rem(a, b)

    def xor(self, a, b):
        return arith.xori(as_value(a), as_value(b))

    def less(self, a, b):
        return less(a, b)


INDEX = IndexArithmetic()


def when(condition: ir.Value | None, body: Callable[[], None]) -> None:
    """`body` under `scf.if condition` (unconditionally when None)."""
    if condition is None:
        body()
        return
    branch = scf.IfOp(condition)
    with ir.InsertionPoint(branch.then_block):
        body()
        scf.YieldOp([])


# ---------------------------------------------------------------------------
# Register tiles: how a block's threads hold them (the layouts are the
# target model's: `nvidia.register_layout`).


def bank_swizzle(kernel: "KernelLowering", tile: ir.Value, memref_type: MemRefType
                 ) -> BankSwizzle | None:
    """The swizzle of a shared tile (see BankSwizzle), or None when it
    stays row-major: other uses, other element types, rows of fewer than
    two chunks or not a whole number of them."""
    if memref_type.dtype not in ("f16", "bf16") or memref_type.rank < 2:
        return None
    row_bytes = memref_type.shape[-1] * _dtype_bytes(memref_type.dtype)
    if row_bytes % nvidia.CHUNK_BYTES or BankSwizzle.for_rows(row_bytes) is None:
        return None
    for use in tile.uses:
        owner = use.owner
        owner = owner.operation if hasattr(owner, "operation") else owner
        if owner.name == "hw.async_copy":
            if hw.AsyncCopyOp.from_operation(owner).operand("dst") != tile:
                return None
        elif owner.name == "hw.mma":
            view = hw.MmaOp.from_operation(owner)
            if kernel.plan.is_wgmma(owner) or view.operand("c") == tile:
                return None
        elif owner.name == "hw.contract":
            if hw.ContractOp.from_operation(owner).unit != "tensor_cores":
                return None
        else:
            return None
    return BankSwizzle.for_rows(row_bytes)


@dataclass
class SharedTile:
    """A shared tile: where it starts in the dynamic shared memory, and the
    TMA descriptor that fills it swizzled for wgmma (None: row-major)."""

    type: MemRefType
    offset: int
    descriptor: "TmaDescriptor | None" = None
    swizzle: "BankSwizzle | None" = None

    @property
    def stage_bytes(self) -> int:
        return math.prod(self.type.shape[-2:]) * _dtype_bytes(self.type.dtype)


_dtype_bytes = nvidia.dtype_bytes


@dataclass
class RegisterTile:
    """A register tile as each thread holds it: its slots in `storage`."""

    type: MemRefType
    layout: object
    storage: ir.Value

    def load(self, slot: int) -> ir.Value:
        value = memref.load(self.storage, [index(slot)])
        if self.type.dtype == "i1":
            return arith.trunci(ir.IntegerType.get_signless(1), value)
        return value

    def store(self, value: ir.Value, slot: int) -> None:
        if self.type.dtype == "i1":
            value = arith.extui(ir.IntegerType.get_signless(8), value)
        memref.store(value, self.storage, [index(slot)])


# ---------------------------------------------------------------------------
# Kernels.


class KernelLowering:
    """Lowers the body of one kernel, moved into a gpu.func."""

    def __init__(self, kernel: ir.Operation, gpu_func: ir.Operation, block: tuple[int, int, int],
                 chip: str):
        self.kernel = kernel
        self.gpu_func = gpu_func
        self.block = block
        self.threads = math.prod(block)
        self.chip = chip
        self.registers: dict[ir.Value, RegisterTile] = {}
        self.shared: dict[ir.Value, SharedTile] = {}
        self.barriers: dict[ir.Value, ir.Value] = {}
        self.shared_bytes = 0
        self.alignment = shared_alignment(chip)
        self.plan = TmaPlan()

    # -- entry -----------------------------------------------------------------

    def prologue(self, entry: ir.Block) -> None:
        """Thread and warp indices and the dynamic shared memory, first in
        the kernel."""
        first = next(iter(entry.operations)).operation
        with ir.InsertionPoint(first), self.gpu_func.location:
            tid = gpu.thread_id(gpu.Dimension.x)
            if self.block[1] > 1 or self.block[2] > 1:
                tid = add(tid, mul(gpu.thread_id(gpu.Dimension.y), self.block[0]))
                tid = add(tid, mul(gpu.thread_id(gpu.Dimension.z), self.block[0] * self.block[1]))
            self.tid = tid
            self.warp = div(tid, WARP)
            self.lane = rem(tid, WARP)
            workgroup = ir.Attribute.parse("#gpu.address_space<workgroup>")
            self.smem = gpu.dynamic_shared_memory(ir.MemRefType.get(
                [ir.ShapedType.get_dynamic_size()], ir.IntegerType.get_signless(8),
                memory_space=workgroup))

    def lower(self, ops: list[ir.Operation]) -> None:
        for op in ops:
            handler = LOWERINGS.get(op.name)
            op_class = lookup_op(op.name)
            if isinstance(op_class, type) and issubclass(op_class, Instruction):
                handler = _instruction
            elif isinstance(op_class, type) and issubclass(op_class, hw.ElementwiseTileOp):
                handler = _elementwise
            if handler is None:
                raise PassFailure(f"'{op.name}' is not lowered to the GPU (the CPU emulation "
                                  "runs it)", op.location)
            with op.location, ir.InsertionPoint(op):
                handler(self, lookup_op(op.name).from_operation(op))
        for op in reversed(ops):
            for result in op.results:
                if list(result.uses):
                    raise PassFailure(f"the result of '{op.name}' is used by an op that is not "
                                      "an hw op; register tiles and tokens are only for hw ops "
                                      "on the GPU", op.location)
            op.erase()

    # -- helpers -------------------------------------------------------------

    def shared_indices(self, value: ir.Value, indices: list) -> list:
        """`indices` of a shared tile's element, where its swizzle (if any)
        keeps it; their last two are the row and the column."""
        tile = self.shared.get(value)
        if tile is None or tile.swizzle is None:
            return indices
        row, col = indices[-2:]
        chunk = nvidia.CHUNK_BYTES // _dtype_bytes(tile.type.dtype)
        return list(indices[:-2]) + [row, tile.swizzle.column(row, col, chunk, INDEX)]

    def row_major(self, value: ir.Value, op: ir.Operation) -> None:
        """Fails when `value` is a tile TMA loads swizzled for wgmma."""
        tile = self.shared.get(value)
        if tile is not None and tile.descriptor is not None and tile.descriptor.swizzled:
            raise PassFailure(f"reads {tile.type}, which TMA loads in wgmma's swizzled layout; "
                              "on sm_90a only hw.mma reads such tiles", op.location)

    def leader(self) -> ir.Value:
        """True in the block's first thread."""
        return arith.cmpi(arith.CmpIPredicate.eq, self.tid, index(0))

    def register(self, value: ir.Value, op: ir.Operation) -> RegisterTile:
        if value not in self.registers:
            raise PassFailure("a register tile that is not made by hw.alloc in this kernel",
                              op.location)
        return self.registers[value]

    def chunks(self, box: Sequence[int], width: int) -> list[tuple[list[ir.Value],
                                                                   ir.Value | None]]:
        """This thread's chunks of `width` elements of a box (along its last
        dim), round robin: their coordinates in the box and whether the
        chunk exists (None: always)."""
        per_row = box[-1] // width
        count = math.prod(box[:-1]) * per_row
        found = []
        for i in range(-(-count // self.threads)):
            chunk = add(self.tid, i * self.threads)
            valid = less(chunk, count) if (i + 1) * self.threads > count else None
            column = mul(rem(chunk, per_row) if count > per_row else chunk, width)
            rest, lead = div(chunk, per_row), []
            for extent in reversed(box[1:-1]):
                lead.append(rem(rest, extent))
                rest = div(rest, extent)
            if len(box) > 1:
                lead.append(rest)
            found.append((list(reversed(lead)) + [column], valid))
        return found


LOWERINGS: dict[str, Callable] = {}


def lowers(*names: str):
    def register(function):
        for name in names:
            LOWERINGS[name] = function
        return function
    return register


@lowers("hw.block_id")
def _block_id(kernel: KernelLowering, view):
    dimension = (gpu.Dimension.x, gpu.Dimension.y, gpu.Dimension.z)[view.dim]
    view.operation.results[0].replace_all_uses_with(gpu.block_id(dimension))


@lowers("hw.alloc")
def _alloc(kernel: KernelLowering, view):
    result = view.operation.results[0]
    tile = type_view(result.type)
    if tile.space == "workgroup":
        offset = -(-kernel.shared_bytes // kernel.alignment) * kernel.alignment
        size = math.prod(tile.shape) * ir.MemRefType(result.type).element_type.width // 8
        kernel.shared_bytes = offset + size
        view_value = memref.ViewOp(result.type, kernel.smem, index(offset), []).result
        descriptor = kernel.plan.tiles.get(result)
        swizzle = bank_swizzle(kernel, result, tile) if descriptor is None else None
        result.replace_all_uses_with(view_value)
        kernel.shared[view_value] = SharedTile(tile, offset, descriptor, swizzle)
        return
    if tile.rank > 2:
        raise PassFailure(f"register tile {tile} has leading dims; on the GPU register tiles "
                          "are matrices or vectors", view.operation.location)
    layout = register_layout(tile.shape, kernel.threads, result in kernel.plan.accumulators,
                             view.warps)
    private = ir.Attribute.parse("#gpu.address_space<private>")
    # Booleans are kept as bytes (the memref lowering stores no i1).
    element = (ir.IntegerType.get_signless(8) if tile.dtype == "i1"
               else ir.MemRefType(result.type).element_type)
    storage = memref.AllocaOp(ir.MemRefType.get([layout.slots], element, memory_space=private),
                              [], []).result
    kernel.registers[result] = RegisterTile(tile, layout, storage)


@lowers("hw.pipeline")
def _nothing(kernel: KernelLowering, view):
    pass


@lowers("hw.barrier")
def _barrier(kernel: KernelLowering, view):
    gpu.BarrierOp()


@lowers("hw.commit")
def _commit(kernel: KernelLowering, view):
    nvvm.CpAsyncCommitGroupOp()


@lowers("hw.wait")
def _wait(kernel: KernelLowering, view):
    nvvm.CpAsyncWaitGroupOp(view.pending)
    gpu.BarrierOp()


# -- copies ------------------------------------------------------------------


def chunk_width(t: hw.Transfer, element_bytes: int,
                limit_bytes: int = nvidia.CHUNK_BYTES) -> int:
    """The widest chunk (in elements, at most `limit_bytes`) that divides
    the box's rows and both operands' rows (`nvidia.chunk_width`)."""
    return nvidia.chunk_width(t.row_extents, element_bytes, limit_bytes)


def _element_bytes(value: ir.Value) -> int:
    return ir.MemRefType(value.type).element_type.width // 8


def _copy_through_registers(kernel: KernelLowering, view, t: hw.Transfer, src, dst,
                            src_indices, dst_indices) -> None:
    """A copy with a register tile on one side: each thread moves its
    elements."""
    tile_value = dst if t.dst.memref.space == "private" else src
    tile = kernel.register(tile_value, view.operation)
    lead = len(t.box)
    for slot, (coordinates, valid) in enumerate(tile.layout.positions(kernel, INDEX)):
        box_position = list(coordinates)[-lead:]

        def move(slot=slot, box_position=box_position):
            if tile_value is dst:
                tile.store(guarded_load(src, placed(t.src, src_indices, box_position)), slot)
            else:
                guarded_store(tile.load(slot), dst, placed(t.dst, dst_indices, box_position))
        when(valid, move)


@lowers("hw.copy")
def _copy(kernel: KernelLowering, view):
    src, dst, indices = view.operand("src"), view.operand("dst"), view.operand("indices")
    t = hw.transfer(type_view(src.type), type_view(dst.type))
    src_indices, dst_indices = t.split(indices)
    kernel.row_major(src, view.operation)
    kernel.row_major(dst, view.operation)
    if "private" in (t.src.memref.space, t.dst.memref.space):
        _copy_through_registers(kernel, view, t, src, dst, src_indices, dst_indices)
        return
    width = chunk_width(t, _element_bytes(src))
    for coordinates, valid in kernel.chunks(t.box, width):
        def move(coordinates=coordinates):
            for e in range(width):
                position = coordinates[:-1] + [add(coordinates[-1], e)]
                guarded_store(guarded_load(src, placed(t.src, src_indices, position)), dst,
                              placed(t.dst, dst_indices, position))
        when(valid, move)


@lowers("hw.async_copy")
def _async_copy(kernel: KernelLowering, view):
    src, dst, indices = view.operand("src"), view.operand("dst"), view.operand("indices")
    t = hw.transfer(type_view(src.type), type_view(dst.type))
    src_indices, dst_indices = t.split(indices)
    kernel.row_major(dst, view.operation)
    element_bytes = _element_bytes(src)
    width = chunk_width(t, element_bytes)
    if width * element_bytes < 4:
        raise PassFailure(f"async copies move 4, 8 or 16 bytes per thread; rows of "
                          f"{dims(t.box)} boxes of {t.src.memref.dtype} in these memrefs allow "
                          f"{width * element_bytes} (hw-check reports this)", view.operation.location)
    rows, cols = t.src.memref.shape[-2:] if t.src.memref.rank >= 2 else (1, t.src.memref.shape[-1])
    for coordinates, valid in kernel.chunks(t.box, width):
        def issue(coordinates=coordinates):
            source = placed(t.src, src_indices, coordinates)
            row = source[-2] if len(source) >= 2 else index(0)
            col = source[-1]
            # Elements of the chunk inside the source row (0 past its end):
            # cp.async zero-fills the rest, and reads from the memref's
            # start when nothing is inside.
            inside_rows = less(row, rows) if len(source) >= 2 else None
            remaining = arith.subi(index(cols), arith.minui(col, index(cols)))
            count = arith.minui(remaining, index(width))
            if inside_rows is not None:
                count = arith.select(inside_rows, count, index(0))
            nonempty = arith.cmpi(arith.CmpIPredicate.ne, count, index(0))
            safe = [arith.select(nonempty, i, index(0)) for i in source]
            target = kernel.shared_indices(dst, placed(t.dst, dst_indices, coordinates))
            nvgpu.DeviceAsyncCopyOp(dst, target, src, safe,
                                    ir.IntegerAttr.get(ir.IndexType.get(), width),
                                    srcElements=count,
                                    bypassL1=(True if width * element_bytes == nvidia.CHUNK_BYTES
                                              else None))
        when(valid, issue)


def dims(shape) -> str:
    return "x".join(map(str, shape))


# -- register tiles ----------------------------------------------------------


@lowers("hw.fill")
def _fill(kernel: KernelLowering, view):
    out = view.operand("out")
    element = ir.MemRefType(out.type).element_type
    value = arith.constant(element, float(view.value))
    if out in kernel.registers:
        tile = kernel.registers[out]
        for slot, (_, valid) in enumerate(tile.layout.positions(kernel, INDEX)):
            when(valid, lambda slot=slot: tile.store(value, slot))
        return
    target = type_view(out.type)
    for coordinates, valid in kernel.chunks(target.shape, 1):
        when(valid, lambda coordinates=coordinates: memref.store(value, out, coordinates))


def _operand_slots(kernel, view, inputs: Sequence[ir.Value], out: ir.Value
                   ) -> tuple[list[RegisterTile], RegisterTile, list[Callable[[int], int]]]:
    """The tiles of an elementwise op and, per input, the slot that holds
    its element for each of `out`'s slots: the same slot in the same
    layout, slot 0 of a one-element tile every thread holds (a row's
    statistic, broadcast)."""
    tiles = [kernel.register(v, view.operation) for v in inputs]
    target = kernel.register(out, view.operation)
    slots = []
    for tile in tiles:
        if tile.layout == target.layout:
            slots.append(lambda slot: slot)
        elif isinstance(tile.layout, ReplicatedLayout):
            slots.append(lambda slot: 0)
        elif isinstance(tile.layout, RowLayout) and tile.layout.accumulates(target.layout):
            cells = target.layout.placement(kernel, INDEX).cells
            slots.append(lambda slot, cells=cells: cells[slot][0])
        else:
            raise PassFailure(f"'{view.op_name()}' on register tiles of different shapes "
                              f"({tile.type} into {target.type}) is not lowered to the GPU: "
                              "broadcasting operands are held by other threads (load them "
                              "broadcast into the result's shape: hw.load_elements)",
                              view.operation.location)
    return tiles, target, slots


def _same_layout(kernel, view, *values) -> list[RegisterTile]:
    tiles = [kernel.register(v, view.operation) for v in values]
    if any(t.layout != tiles[0].layout for t in tiles):
        raise PassFailure(f"'{view.op_name()}' on register tiles of different shapes "
                          f"({', '.join(str(t.type) for t in tiles)}) is not lowered to the GPU: "
                          "broadcasting operands are held by other threads", view.operation.location)
    return tiles


def _elementwise(kernel: KernelLowering, view):
    """An elementwise register-tile op on each of this thread's elements,
    through its scalar expression (`view.element`)."""
    inputs, out, slots = _operand_slots(kernel, view, view.inputs(), view.operand("out"))
    element = ir.MemRefType(view.operand("out").type).element_type
    for slot, (_, valid) in enumerate(out.layout.positions(kernel, INDEX)):
        when(valid, lambda slot=slot: out.store(from_f32(view.element(
            [to_f32(tile.load(at(slot))) for tile, at in zip(inputs, slots)]), element), slot))


def _instruction(kernel: KernelLowering, view):
    """A hardware instruction on each of this thread's elements, as inline PTX."""
    *inputs, out = _same_layout(kernel, view, *view.operation.operands)
    element = ir.MemRefType(out.storage.type).element_type
    for slot, (_, valid) in enumerate(out.layout.positions(kernel, INDEX)):
        when(valid, lambda slot=slot: out.store(
            view.ptx_element([tile.load(slot) for tile in inputs], element), slot))


# -- runs of elements and block reductions ---------------------------------


def _flat(value: ir.Value) -> ir.Value:
    """A global memref as the 1-d memref of its elements (row-major)."""
    rank = len(shape(value))
    if rank == 1:
        return value
    flat_type = MemRefType((math.prod(shape(value)),), type_view(value.type).dtype).to_mlir()
    return memref.collapse_shape(flat_type, value, [list(range(rank))])


class ElementRun:
    """A `hw.load_elements` or `hw.store_elements` as each thread moves its
    elements: by vectors of the tile's layout where the global memref is
    the space itself (no broadcast), the run's offset a multiple of the
    vector by construction and the run and the space whole vectors, or
    where it is a row of the space's trailing dims (a layer_norm's gain,
    read by a row kernel) and the run starts at one of its rows by
    construction, so that the run's element `i` is the memref's element
    `i`; else element by element, an operand that broadcasts read at its
    broadcast coordinates."""

    def __init__(self, kernel: KernelLowering, view, tile: ir.Value, buffer: ir.Value):
        self.kernel, self.view, self.buffer = kernel, view, buffer
        self.tile = kernel.register(tile, view.operation)
        self.space = tuple(view.shape)
        self.size = math.prod(self.space)
        self.offset = view.operand("offset")
        (length,) = self.tile.type.shape
        self.count = view.count
        layout = self.tile.layout
        # Booleans move one by one (bytes in global memory: cpu-widen-bool-memrefs).
        width = layout.width if isinstance(layout, VectorLayout) \
            and self.tile.type.dtype != "i1" else 1
        in_order = view.walk() == tuple(range(len(self.space)))
        # A box of the memref (a store at an origin) is stored element by
        # element, each skipped past the memref's end.
        self.origin = list(view.operand("origin")) if view.op_name() == "hw.store_elements" \
            else []
        whole = (not self.origin and shape(buffer) == self.space and in_order
                 and self.size % width == 0
                 and self.count % width == 0 and _multiple_of(self.offset, width))
        row = tuple(shape(buffer))
        while row and row[0] == 1:
            row = row[1:]
        row_size = math.prod(row)
        # A row of the space: its element `i` is the run's (the run starts
        # at a multiple of the row and is no longer than it).
        self.row = (not whole and view.op_name() == "hw.load_elements" and in_order
                    and bool(row) and self.space[len(self.space) - len(row):] == row
                    and row_size % width == 0 and self.count % width == 0
                    and self.count <= row_size and _multiple_of(self.offset, row_size))
        self.width = width if (whole or self.row) and width > 1 else 1
        self.flat = _flat(buffer) if self.width > 1 else None

    def inside(self, element) -> ir.Value | None:
        """Whether tile element `element` is in the run and the space."""
        (length,) = self.tile.type.shape
        position = add(self.offset, element)
        condition = less(position, self.size)
        if self.count < length:
            condition = _both(condition, less(element, self.count))
        return condition

    def vectors(self) -> list[tuple[int, ir.Value]]:
        """(first slot, first tile element) of each of this thread's runs of
        `width` slots."""
        positions = self.tile.layout.positions(self.kernel, INDEX)
        return [(slot, positions[slot][0][0]) for slot in range(0, len(positions), self.width)]

    def coordinates(self, element) -> list[ir.Value]:
        found = hw.walked_coordinates(add(self.offset, element), self.space, self.view.walk(),
                                      (div, rem))
        if self.origin:
            return [add(o, c) for c, o in zip(found, self.origin)]
        return [index(0) if isinstance(c, int) else c
                for c in hw.broadcast_coordinates(found, shape(self.buffer))]

    def load(self) -> None:
        element_type = ir.MemRefType(self.buffer.type).element_type
        zero = constant_of(element_type, 0.0)
        if isinstance(self.tile.layout, ReplicatedLayout):
            self.load_element(0, index(0), zero)
            return
        for slot, element in self.vectors():
            if self.width == 1:
                self.load_element(slot, element, zero)
                continue
            vector_type = ir.VectorType.get([self.width], element_type)
            branch = scf.IfOp(self.inside(element), [vector_type], has_else=True)
            with ir.InsertionPoint(branch.then_block):
                at = element if self.row else add(self.offset, element)
                scf.YieldOp([vector.load(vector_type, self.flat, [as_value(at)],
                                         alignment=self.width * _element_bytes(self.buffer))])
            with ir.InsertionPoint(branch.else_block):
                scf.YieldOp([vector.broadcast(vector_type, zero)])
            for v in range(self.width):
                self.tile.store(vector.extract(branch.results[0], [], [v]), slot + v)

    def load_element(self, slot: int, element, zero: ir.Value) -> None:
        branch = scf.IfOp(self.inside(element), [zero.type], has_else=True)
        with ir.InsertionPoint(branch.then_block):
            scf.YieldOp([memref.load(self.buffer, self.coordinates(element))])
        with ir.InsertionPoint(branch.else_block):
            scf.YieldOp([zero])
        self.tile.store(branch.results[0], slot)

    def store(self) -> None:
        if isinstance(self.tile.layout, ReplicatedLayout):
            # Every thread holds the element: the block's first stores it.
            when(_both(self.kernel.leader(), self.inside(index(0))), lambda: memref.store(
                self.tile.load(0), self.buffer, self.coordinates(index(0))))
            return
        element_type = ir.MemRefType(self.buffer.type).element_type
        for slot, element in self.vectors():
            if self.width == 1:
                write = guarded_store if self.origin else memref.store
                when(self.inside(element), lambda slot=slot, element=element, write=write: write(
                    self.tile.load(slot), self.buffer, self.coordinates(element)))
                continue

            def write(slot=slot, element=element):
                values = [self.tile.load(slot + v) for v in range(self.width)]
                vector.store(vector.from_elements(ir.VectorType.get([self.width], element_type),
                                                  values),
                             self.flat, [add(self.offset, element)],
                             alignment=self.width * _element_bytes(self.buffer))
            when(self.inside(element), write)


@lowers("hw.load_elements")
def _load_elements(kernel: KernelLowering, view):
    ElementRun(kernel, view, view.operand("dst"), view.operand("src")).load()


@lowers("hw.store_elements")
def _store_elements(kernel: KernelLowering, view):
    ElementRun(kernel, view, view.operand("src"), view.operand("dst")).store()


# -- data movement: elements through an index map ---------------------------


def _movement_run(kernel: KernelLowering, view, element_of) -> None:
    """Each element of a data-movement op's run that this thread holds,
    built by `element_of(position, write)` (shared with the emulation)."""
    tile = kernel.register(view.operand("dst"), view.operation)
    (length,) = tile.type.shape
    size = math.prod(view.shape)
    offset = view.operand("offset")
    for slot, (coordinates, valid) in enumerate(tile.layout.positions(kernel, INDEX)):
        element = coordinates[0]
        position = add(offset, element)
        inside = _both(valid, less(position, size))
        if view.count < length:
            inside = _both(inside, less(element, view.count))
        when(inside, lambda slot=slot, position=position: element_of(
            as_value(position), lambda value: tile.store(value, slot)))


@lowers("hw.gather_elements")
def _gather_elements(kernel: KernelLowering, view):
    _movement_run(kernel, view, lambda p, write: gather_element(view, p, write))


@lowers("hw.conv_elements")
def _conv_elements(kernel: KernelLowering, view):
    _movement_run(kernel, view, lambda p, write: conv_element(view, p, write))


@lowers("hw.im2col")
def _im2col(kernel: KernelLowering, view):
    """Each thread gathers the tile's elements tid, tid + threads, ... (a
    loop), consecutive threads consecutive columns of a row."""
    x, dst = view.operand("x"), view.operand("dst")
    row, col = view.operand("row"), view.operand("col")
    kernel.row_major(dst, view.operation)
    rows, cols = type_view(dst.type).shape
    count = rows * cols
    loop = scf.ForOp(index(0), index(-(-count // kernel.threads)), index(1))
    with ir.InsertionPoint(loop.body):
        element = add(kernel.tid, mul(loop.induction_variable, kernel.threads))
        i, j = div(element, cols), rem(element, cols)

        def gather():
            m, k = (j, i) if view.transposed else (i, j)
            value = im2col_element(view, x, add(row, m), add(col, k))
            memref.store(value, dst, kernel.shared_indices(dst, [i, j]))
        when(less(element, count) if count % kernel.threads else None, gather)
        scf.YieldOp([])


@lowers("hw.index_elements")
def _index_elements(kernel: KernelLowering, view):
    element = ir.MemRefType(view.operand("dst").type).element_type
    _movement_run(kernel, view, lambda p, write: index_element(view, p, write, element))


@lowers("hw.fold_axis")
def _fold_axis(kernel: KernelLowering, view):
    element = ir.MemRefType(view.operand("dst").type).element_type
    _movement_run(kernel, view, lambda p, write: fold_axis_element(view, p, write, element))


def _shuffle_xor(value: ir.Value, distance: int, width: ir.Value) -> ir.Value:
    """The value of the lane `distance` away in a butterfly (shfl.sync.bfly
    moves 32 bits: an i64 moves as its two halves)."""
    i32 = ir.IntegerType.get_signless(32)
    offset = arith.constant(i32, distance)

    def shuffle(word):
        return gpu.ShuffleOp(word, offset, width, gpu.ShuffleMode.XOR).results[0]
    if not (isinstance(value.type, ir.IntegerType) and value.type.width == 64):
        return shuffle(value)
    i64 = value.type
    low = shuffle(arith.trunci(i32, value))
    high = shuffle(arith.trunci(i32, arith.shrui(value, arith.constant(i64, 32))))
    return arith.ori(arith.extui(i64, low),
                     arith.shli(arith.extui(i64, high), arith.constant(i64, 32)))


def _warp_fold(value: ir.Value, combine: Callable) -> ir.Value:
    """The fold of `value` over the 32 lanes of a warp, in every lane:
    butterfly shuffles (shfl.sync.bfly) at distances 16, 8, 4, 2, 1."""
    i32 = ir.IntegerType.get_signless(32)
    width = arith.constant(i32, WARP)
    distance = WARP // 2
    while distance:
        value = combine(value, _shuffle_xor(value, distance, width))
        distance //= 2
    return value


@lowers("hw.block_reduce")
def _block_reduce(kernel: KernelLowering, view):
    x = kernel.register(view.operand("x"), view.operation)
    out = kernel.register(view.operand("out"), view.operation)
    scratch = list(view.operand("scratch"))
    identity, combine = fold_start(view.combine, ir.MemRefType(x.storage.type).element_type)
    (length,) = x.type.shape
    total = identity
    for slot, ((element,), valid) in enumerate(x.layout.positions(kernel, INDEX)):
        inside = _both(valid, less(element, view.count) if view.count < length else None)
        value = to_f32(x.load(slot))
        if inside is not None:
            value = arith.select(inside, value, identity)
        total = combine(total, value)
    total = _warp_fold(total, combine)
    warps = kernel.threads // WARP
    if warps > 1:
        if not scratch:
            raise PassFailure(f"a block reduction in a block of {warps} warps needs a scratch "
                              "tile (hw-check reports this)", view.operation.location)
        shared = scratch[0]
        first_lane = arith.cmpi(arith.CmpIPredicate.eq, kernel.lane, index(0))
        when(first_lane, lambda: memref.store(total, shared, [kernel.warp]))
        gpu.BarrierOp()
        # Each warp folds the warps' totals again, lane w reading warp w's.
        has_total = less(kernel.lane, warps)
        branch = scf.IfOp(has_total, [identity.type], has_else=True)
        with ir.InsertionPoint(branch.then_block):
            scf.YieldOp([memref.load(shared, [kernel.lane])])
        with ir.InsertionPoint(branch.else_block):
            scf.YieldOp([identity])
        total = _warp_fold(branch.results[0], combine)
        gpu.BarrierOp()
    out.store(from_f32(total, ir.MemRefType(out.storage.type).element_type), 0)


def _multiple_of(value: ir.Value, factor: int) -> bool:
    """Whether an index is a multiple of `factor` by construction (a
    constant, a product with one, a sum of such)."""
    constant = _const(value)
    if constant is not None:
        return constant % factor == 0
    owner = value.owner
    if isinstance(owner, ir.Block):
        return False
    if owner.name == "arith.muli":
        return any(_multiple_of(operand, factor) for operand in owner.operands)
    if owner.name == "arith.addi":
        return all(_multiple_of(operand, factor) for operand in owner.operands)
    return False


def _pairable(memref_value: ir.Value) -> bool:
    """Whether two elements of a memref at an even position of its rows
    can be read or written as one aligned 2-element vector: it is in global
    memory (whose buffers are aligned to 16 bytes, as TMA requires) and
    its rows have an even number of elements."""
    return type_view(memref_value.type).space == "global" and shape(memref_value)[-1] % 2 == 0


def _both(a: ir.Value | None, b: ir.Value | None) -> ir.Value | None:
    if a is None or b is None:
        return b if a is None else a
    return arith.andi(a, b)


class TileStore:
    """An `hw.store` of a register tile: each thread stores the elements it
    holds, those inside `dst`, through the epilogue function (its extras
    read at the element's position, a 1-d extra at its column)."""

    def __init__(self, kernel: KernelLowering, view):
        self.kernel, self.view = kernel, view
        self.dst = view.operand("dst")
        self.extras = list(view.operand("extras"))
        indices = list(view.operand("indices"))
        self.lead, (self.row0, self.col0) = indices[:-2], indices[-2:]
        self.tile = kernel.register(view.operand("src"), view.operation)
        self.target = ir.MemRefType(self.dst.type).element_type
        self.dims = shape(self.dst)

    def value(self, slot: int, extras: list[ir.Value]) -> ir.Value:
        """The stored value of a slot, given its extras' elements."""
        value = to_f32(self.tile.load(slot))
        if self.view.epilogue is None:
            return from_f32(value, self.target)
        return func.CallOp([self.target], ir.FlatSymbolRefAttr.get(self.view.epilogue),
                           [value] + extras).result

    def inside(self, position: Sequence[ir.Value]) -> ir.Value | None:
        condition = None
        for i, size in zip(position, self.dims):
            condition = _both(condition, less(i, size))
        return condition

    # -- element by element (any layout) -----------------------------------

    def elements(self) -> None:
        for slot, ((row, col), valid) in enumerate(self.tile.layout.positions(self.kernel, INDEX)):
            def store(slot=slot, row=row, col=col):
                position = self.lead + [add(self.row0, row), add(self.col0, col)]

                def write():
                    extras = [memref.load(e, extra_position(e, self.dst, position))
                              for e in self.extras]
                    memref.store(self.value(slot, extras), self.dst, position)
                when(self.inside(position), write)
            when(valid, store)

    # -- by rows and columns (the tensor cores' accumulators) --------------

    def paired(self) -> bool:
        """Whether the two adjacent columns of each slot pair are stored by
        one 2-element vector store: `dst` is `_pairable` and the tile's
        first column is even by construction, so the pair's first element
        is aligned to the pair's size, and both columns are inside `dst`
        or neither is."""
        return _pairable(self.dst) and _multiple_of(self.col0, 2)

    def placed(self, placement: Placement) -> None:
        """Column by column (a pair of columns at a time when `paired`):
        each 1-d extra read once per column, at a column clamped into it
        so that no read leaves it; then the column's rows, each guarded by
        whether its row and column are inside `dst`."""
        rows = [add(self.row0, r) for r in placement.rows]
        cols = [add(self.col0, c) for c in placement.cols]
        lead_inside = self.inside(self.lead)
        row_inside = [_both(lead_inside, less(r, self.dims[-2])) for r in rows]
        col_inside = [less(c, self.dims[-1]) for c in cols]
        width = 2 if self.paired() else 1
        by_column: dict[int, list[tuple[int, int]]] = {}
        for slot in range(0, len(placement.cells), width):
            r, c = placement.cells[slot]
            by_column.setdefault(c, []).append((slot, r))
        for c, slots in by_column.items():
            columns = self.column_extras(cols[c], width)
            for slot, r in slots:
                position = self.lead + [rows[r], cols[c]]
                when(_both(row_inside[r], col_inside[c]),
                     lambda slot=slot, position=position: self.write(slot, position, columns,
                                                                     width))

    def column_extras(self, col: ir.Value, width: int) -> dict[int, list[ir.Value]]:
        """The elements at `col` (and `col + 1`) of each 1-d extra, by extra."""
        found = {}
        for number, extra in enumerate(self.extras):
            if len(shape(extra)) != 1:
                continue
            (size,) = shape(extra)
            if width == 2 and _pairable(extra):
                at = arith.minui(col, index(size - 2))
                pair = self.load_pair(extra, [at])
                found[number] = [vector.extract(pair, [], [i]) for i in range(2)]
            else:
                found[number] = [memref.load(extra, [arith.minui(add(col, i), index(size - 1))])
                                 for i in range(width)]
        return found

    def load_pair(self, source: ir.Value, position: list[ir.Value]) -> ir.Value:
        element = ir.MemRefType(source.type).element_type
        return vector.load(ir.VectorType.get([2], element), source, position,
                           alignment=2 * _element_bytes(source))

    def write(self, slot: int, position: list[ir.Value], columns: dict[int, list[ir.Value]],
              width: int) -> None:
        values = []
        pairs = {}
        for i in range(width):
            extras = []
            for number, extra in enumerate(self.extras):
                if number in columns:
                    extras.append(columns[number][i])
                elif width == 2 and _pairable(extra):
                    if number not in pairs:
                        pairs[number] = self.load_pair(extra, extra_position(extra, self.dst,
                                                                             position))
                    extras.append(vector.extract(pairs[number], [], [i]))
                else:
                    extras.append(memref.load(extra, extra_position(
                        extra, self.dst, position[:-1] + [add(position[-1], i)])))
            values.append(self.value(slot + i, extras))
        if width == 1:
            memref.store(values[0], self.dst, position)
            return
        pair = vector.from_elements(ir.VectorType.get([2], self.target), values)
        vector.store(pair, self.dst, position, alignment=2 * _element_bytes(self.dst))


@lowers("hw.store")
def _store(kernel: KernelLowering, view):
    store = TileStore(kernel, view)
    if isinstance(store.tile.layout, (AccumulatorLayout, WgmmaLayout)):
        store.placed(store.tile.layout.placement(kernel, INDEX))
    else:
        store.elements()


# -- tensor cores ------------------------------------------------------------


def _i32(value: ir.Value) -> ir.Value:
    return llvm.BitcastOp(ir.IntegerType.get_signless(32), value).result


def _ldmatrix(kernel: "KernelLowering", tile: ir.Value, indices: list[ir.Value], tiles: int,
              transpose: bool) -> list:
    """ldmatrix of `tiles` 8x8 b16 matrices: per matrix, the thread's two
    elements as mma.sync takes them (vector<2xf16>, or an i32 for bf16);
    `indices` are where this lane's row starts."""
    indices = kernel.shared_indices(tile, indices)
    element = ir.MemRefType(tile.type).element_type
    result_type = ir.VectorType.get([tiles, 2], element)
    loaded = nvgpu.LdMatrixOp(result_type, tile, indices, transpose, tiles).result
    pairs = [vector.extract(loaded, [], [i]) for i in range(tiles)]
    return pairs if isinstance(element, ir.F16Type) else [_i32(p) for p in pairs]


def _mma_sync(a: list, b: list, c: list, shape: nvidia.MmaShape) -> list:
    """One nvvm.mma.sync of `shape` (m16n8kK) with an f32 accumulator."""
    f32 = ir.F32Type.get()
    result = ir.Type.parse("!llvm.struct<(f32, f32, f32, f32)>")
    mma_type = ir.Attribute.parse(f"#nvvm.mma_type<{shape.ptx_type}>")
    op = nvvm.MmaOp(result, ir.Attribute.parse(f"#nvvm.shape<m = {shape.m}, n = {shape.n}, "
                                               f"k = {shape.k}>"),
                    ir.Attribute.parse("#nvvm.mma_layout<row>"),
                    ir.Attribute.parse("#nvvm.mma_layout<col>"), a, b, c,
                    multiplicandAPtxType=mma_type, multiplicandBPtxType=mma_type)
    return [llvm.extractvalue(f32, op.result, [i]) for i in range(4)]


@lowers("hw.mma")
def _mma(kernel: KernelLowering, view):
    if kernel.plan.is_wgmma(view.operation):
        return _wgmma(kernel, view)
    if view.instruction == "wgmma":
        raise PassFailure(f"wgmma needs sm_90a, not {kernel.chip} (hw-check reports this)",
                          view.operation.location)
    a, b, c = view.operand("a"), view.operand("b"), view.operand("c")
    kernel.row_major(a, view.operation)
    kernel.row_major(b, view.operation)
    indices = list(view.operand("indices"))
    a_type = type_view(a.type)
    stage_a, stage_b = indices[:a_type.rank - 2], indices[a_type.rank - 2:]
    acc = kernel.register(c, view.operation)
    layout = acc.layout
    if not isinstance(layout, AccumulatorLayout):
        raise PassFailure(f"the accumulator {acc.type} of hw.mma is not divided into 16x8 "
                          f"fragments by the {kernel.threads // WARP} warps of the block "
                          "(hw-check reports this)", view.operation.location)
    shape = nvidia.mma_sync_shape(a_type.dtype)
    tf32 = shape.ptx_type == "tf32"
    k_step = shape.k
    row0, col0 = layout.warp_origin(kernel, INDEX)
    g, t = div(kernel.lane, 4), rem(kernel.lane, 4)
    lane16 = rem(kernel.lane, 16)
    half = mul(div(kernel.lane, 16), 8)
    # Where this lane's row of an ldmatrix x4 of a transposed operand
    # starts: matrix lane / 8, its row lane % 8, the matrices ordered as
    # the fragment's registers.
    lane8 = rem(kernel.lane, 8)
    across = mul(rem(div(kernel.lane, 8), 2), 8)
    down = add(lane8, half)
    for k0 in range(0, view.matrix_shape(a_type, "a")[1], k_step):
        a_frags, b_frags = [], []
        for fi in range(layout.frag_rows):
            row = add(row0, fi * nvidia.MMA_M)
            if tf32:
                a_frags.append(_tf32_fragment(view, a, stage_a, [
                    (add(row, add(g, dr)), add(t, k0 + dk))
                    for dk, dr in ((0, 0), (0, 8), (4, 0), (4, 8))], view.transpose_a))
            elif view.transpose_a:
                a_frags.append(_ldmatrix(kernel, a, stage_a + [add(down, k0), add(row, across)],
                                         4, True))
            else:
                a_frags.append(_ldmatrix(kernel, a, stage_a + [add(row, lane16),
                                                               add(half, k0)], 4, False))
        fj = 0
        while fj < layout.frag_cols:
            col = add(col0, fj * nvidia.MMA_N)
            pair = fj + 1 < layout.frag_cols
            if tf32:
                b_frags.append(_tf32_fragment(view, b, stage_b, [
                    (add(t, k0 + dk), add(col, g)) for dk in (0, 4)], view.transpose_b))
                fj += 1
            elif view.transpose_b:
                start = add(down if pair else lane8, col)
                registers = _ldmatrix(kernel, b, stage_b + [start, add(across, k0)],
                                      4 if pair else 2, False)
                b_frags += [registers[:2], registers[2:]] if pair else [registers]
                fj += 2 if pair else 1
            elif pair:
                registers = _ldmatrix(kernel, b, stage_b + [add(lane16, k0), add(col, half)], 4,
                                      True)
                b_frags += [registers[:2], registers[2:]]
                fj += 2
            else:
                b_frags.append(_ldmatrix(kernel, b, stage_b + [add(lane16, k0), col], 2, True))
                fj += 1
        for fi in range(layout.frag_rows):
            for fj in range(layout.frag_cols):
                slots = [AccumulatorLayout.slot(fi, fj, h, v, layout.frag_cols)
                         for h in range(2) for v in range(2)]
                d = [acc.load(s) for s in slots]
                for x, y in _fragment_products(view, a_frags[fi], b_frags[fj]):
                    d = _mma_sync(x, y, d, shape)
                for value, s in zip(d, slots):
                    acc.store(value, s)


def _tf32_fragment(view, tile: ir.Value, stage: list, positions: list,
                   transposed: bool) -> list:
    """A tf32 fragment loaded element by element at `positions` (row, col)
    of the operand's matrix (its box transposed where it is stored so): for
    `precision` tf32 the raw f32 values (the tensor cores drop their low
    bits), for tf32_rounded the rounded values, for 3xtf32 the pair of
    fragments (big, small)."""
    values = [memref.load(tile, stage + ([col, row] if transposed else [row, col]))
              for row, col in positions]
    if view.precision == "3xtf32":
        parts = [split_tf32(v) for v in values]
        return [[_i32(big) for big, _ in parts], [_i32(small) for _, small in parts]]
    if view.precision == "tf32_rounded":
        values = [to_tf32(v, rounded=True) for v in values]
    return [_i32(v) for v in values]


def _fragment_products(view, a: list, b: list) -> list[tuple[list, list]]:
    """The mma.sync operands of one fragment product, in order: 3xTF32's
    three in CUTLASS's order (the small products first), else one."""
    if view.precision != "3xtf32":
        return [(a, b)]
    (big_a, small_a), (big_b, small_b) = a, b
    return [(big_a, small_b), (small_a, big_b), (big_a, big_b)]


# -- attention: row statistics, masks, contractions ---------------------------


_ROW_FOLDS = {"hw.reduce_max": arith.maximumf, "hw.reduce_sum": arith.addf}


def _quad_fold(value: ir.Value, combine: Callable) -> ir.Value:
    """The fold of `value` over the four lanes that hold one row of an
    accumulator fragment (lanes 4g .. 4g + 3): shuffles at distances 1, 2."""
    i32 = ir.IntegerType.get_signless(32)
    width = arith.constant(i32, WARP)
    for distance in (1, 2):
        shuffled = gpu.ShuffleOp(value, arith.constant(i32, distance), width,
                                 gpu.ShuffleMode.XOR).results[0]
        value = combine(value, shuffled)
    return value


@lowers("hw.reduce_max", "hw.reduce_sum")
def _row_reduce(kernel: KernelLowering, view):
    """A row reduction of an accumulator tile whose warps hold whole rows
    into the RowLayout of its statistics: each thread folds its elements
    of each of its rows, the four threads of a row their folds by
    shuffles."""
    x = kernel.register(view.operand("x"), view.operation)
    out = kernel.register(view.operand("out"), view.operation)
    layout = x.layout
    if not (isinstance(layout, AccumulatorLayout) and layout.warp_cols == 1
            and isinstance(out.layout, RowLayout) and out.layout.accumulates(layout)):
        raise PassFailure(f"'{view.op_name()}' is lowered to the GPU for accumulator tiles "
                          "whose warps hold whole rows into their row statistics (hw.alloc "
                          "with warps = [W, 1] for both)", view.operation.location)
    combine = _ROW_FOLDS[view.op_name()]
    folds: dict[int, ir.Value] = {}
    for slot, (r, _) in enumerate(layout.placement(kernel, INDEX).cells):
        value = to_f32(x.load(slot))
        folds[r] = combine(folds[r], value) if r in folds else value
    element = ir.MemRefType(out.storage.type).element_type
    for r, value in folds.items():
        out.store(from_f32(_quad_fold(value, combine), element), r)


@lowers("hw.mask")
def _mask(kernel: KernelLowering, view):
    tile = kernel.register(view.operand("x"), view.operation)
    row0, col0 = view.operand("row"), view.operand("col")
    minus_infinity = arith.constant(ir.F32Type.get(), float("-inf"))
    for slot, ((row, col), valid) in enumerate(tile.layout.positions(kernel, INDEX)):
        def hide(slot=slot, row=row, col=col):
            condition = hidden(view, add(row0, row), add(col0, col))
            tile.store(arith.select(condition, minus_infinity, tile.load(slot)), slot)
        when(valid, hide)


@lowers("hw.contract")
def _contract(kernel: KernelLowering, view):
    a, b, c = view.operand("a"), view.operand("b"), view.operand("c")
    indices = list(view.operand("indices"))
    a_type = type_view(a.type)
    stage_a, stage_b = indices[:a_type.rank - 2], indices[a_type.rank - 2:]
    acc = kernel.register(c, view.operation)
    if not isinstance(acc.layout, AccumulatorLayout):
        raise PassFailure(f"the accumulator {acc.type} of hw.contract is not divided into 16x8 "
                          f"fragments by the {kernel.threads // WARP} warps of the block "
                          "(hw-check reports this)", view.operation.location)
    if view.unit == "fma":
        _contract_fma(kernel, view, a, b, acc, stage_a, stage_b)
    elif kernel.plan.is_wgmma(view.operation):
        _contract_wgmma(kernel, view, a, b, acc, stage_a, stage_b)
    else:
        _contract_mma_sync(kernel, view, a, b, acc, stage_a, stage_b)


def _contract_fma(kernel: KernelLowering, view, a, b, acc: RegisterTile, stage_a, stage_b):
    """C += A x B on CUDA cores: a loop over k in which each thread reads
    the A elements of its rows and the B elements of its columns from
    shared memory and updates its elements with fused multiply-adds."""
    _, _, k = view.problem_shape(type_view(a.type), type_view(b.type))
    placement = acc.layout.placement(kernel, INDEX)
    loop = scf.ForOp(index(0), index(k), index(1))
    with ir.InsertionPoint(loop.body):
        kk = loop.induction_variable
        rows = [to_f32(memref.load(a, stage_a + [row, kk])) for row in placement.rows]
        cols = [to_f32(memref.load(b, stage_b + ([col, kk] if view.transpose_b else [kk, col])))
                for col in placement.cols]
        for slot, (r, c) in enumerate(placement.cells):
            acc.store(math_ops.fma(rows[r], cols[c], acc.load(slot)), slot)
        scf.YieldOp([])


def _register_fragments(kernel: KernelLowering, view, a: ir.Value,
                        c_layout: AccumulatorLayout) -> Callable[[int, int], list]:
    """The A fragments of mma.sync m16n8k16 from a register tile in the
    accumulator layout whose warps hold C's rows: fragment row `fi` and
    k-step `kk` are the accumulator's fragments (fi, 2kk) and (fi, 2kk + 1),
    a thread's pairs of adjacent columns packed as A's registers (rows g
    and g + 8, columns 2t and 2t + 8)."""
    tile = kernel.register(a, view.operation)
    layout = tile.layout
    if not (isinstance(layout, AccumulatorLayout) and layout.warp_cols == 1
            and c_layout.warp_cols == 1 and layout.warp_rows == c_layout.warp_rows):
        raise PassFailure(f"A {tile.type} of hw.contract is a register tile whose warps do not "
                          f"hold the accumulator's rows (hw.alloc both with warps = [W, 1])",
                          view.operation.location)
    element = ir.MemRefType(tile.storage.type).element_type
    pair_type = ir.VectorType.get([2], element)

    def register(fi: int, fj: int, h: int) -> ir.Value:
        pair = vector.from_elements(pair_type, [
            tile.load(AccumulatorLayout.slot(fi, fj, h, v, layout.frag_cols)) for v in range(2)])
        return pair if isinstance(element, ir.F16Type) else _i32(pair)

    def fragments(fi: int, kk: int) -> list:
        return [register(fi, 2 * kk + j, h) for j in range(2) for h in range(2)]
    return fragments


def _contract_mma_sync(kernel: KernelLowering, view, a, b, acc: RegisterTile, stage_a, stage_b):
    """C += A x B (or A x B^T) on tensor cores: per warp and k-step,
    ldmatrix of the A fragments (x4) and of the B fragments (x4 for two
    n8 fragments, x2 for one; transposed where B is K x N, as stored
    where it is N x K) and mma.sync m16n8k16."""
    kernel.row_major(b, view.operation)
    layout = acc.layout
    a_type = type_view(a.type)
    shape = nvidia.mma_sync_shape(a_type.dtype)
    row0, col0 = layout.warp_origin(kernel, INDEX)
    if a_type.space == "private":
        a_fragments = _register_fragments(kernel, view, a, layout)
    else:
        kernel.row_major(a, view.operation)
    lane8, lane16 = rem(kernel.lane, 8), rem(kernel.lane, 16)
    half = mul(div(kernel.lane, 16), 8)
    # ldmatrix x4 of B^T (N x K): lanes 0-7 and 8-15 address the first
    # fragment's rows at k and k + 8, lanes 16-31 the second's.
    k_half = mul(rem(div(kernel.lane, 8), 2), 8)
    for k0 in range(0, a_type.shape[-1], shape.k):
        if a_type.space == "private":
            a_frags = [a_fragments(fi, k0 // shape.k) for fi in range(layout.frag_rows)]
        else:
            a_frags = [_ldmatrix(kernel, a, stage_a + [add(add(row0, fi * nvidia.MMA_M),
                                                           lane16), add(half, k0)], 4, False)
                       for fi in range(layout.frag_rows)]
        b_frags, fj = [], 0
        while fj < layout.frag_cols:
            col = add(col0, fj * nvidia.MMA_N)
            pair = fj + 1 < layout.frag_cols
            if view.transpose_b:
                position = [add(col, add(lane8, half)) if pair else add(col, lane8),
                            add(k_half, k0)]
            else:
                position = [add(lane16, k0), add(col, half) if pair else col]
            registers = _ldmatrix(kernel, b, stage_b + position, 4 if pair else 2,
                                  not view.transpose_b)
            b_frags += [registers[:2], registers[2:]] if pair else [registers]
            fj += 2 if pair else 1
        for fi in range(layout.frag_rows):
            for fj in range(layout.frag_cols):
                slots = [AccumulatorLayout.slot(fi, fj, h, v, layout.frag_cols)
                         for h in range(2) for v in range(2)]
                d = _mma_sync(a_frags[fi], b_frags[fj], [acc.load(s) for s in slots], shape)
                for value, s in zip(d, slots):
                    acc.store(value, s)


# ---------------------------------------------------------------------------
# sm_90a: TMA loads on mbarriers, wgmma.

@dataclass
class TmaDescriptor:
    """A TMA descriptor (CUtensorMap) the host makes for a kernel argument:
    boxes of `rows` x `cols` elements, 128-byte swizzled when `swizzled`.
    The kernel gets it as a pointer argument; `value` is its view there."""

    argument: int
    rows: int
    cols: int
    dtype: str
    swizzled: bool
    # The global memref's leading dims (a batch): boxes are 1 wide in them.
    leading: int = 0
    value: ir.Value | None = None

    def key(self) -> tuple:
        return (self.argument, self.rows, self.cols, self.dtype, self.swizzled, self.leading)

    @property
    def box(self) -> list[int]:
        return [1] * self.leading + [self.rows, self.cols]

    def type(self) -> ir.Type:
        swizzle = "swizzle_128b" if self.swizzled else "none"
        shape = "x".join(str(b) for b in self.box)
        return ir.Type.parse(
            f"!nvgpu.tensormap.descriptor<tensor = memref<{shape}x{self.dtype}, "
            f"#gpu.address_space<workgroup>>, swizzle = {swizzle}, l2promo = none, oob = zero, "
            "interleave = none>")

    @property
    def box_bytes(self) -> int:
        return self.rows * self.cols * _dtype_bytes(self.dtype)


@dataclass
class TmaPlan:
    """What a kernel's TMA loads and wgmma need, found before lowering it:
    the descriptors (in kernel argument order), the descriptor filling each
    shared tile, the MMAs that become wgmma and their accumulators."""

    descriptors: list[TmaDescriptor] = None
    tiles: dict = None
    wgmma: list = None
    accumulators: set = None
    # The hw.contract ops that become wgmma (their accumulators keep
    # mma.sync's layout: for 64 rows and one warpgroup it is wgmma's).
    contracts: list = None

    def __post_init__(self):
        self.descriptors = self.descriptors or []
        self.tiles = self.tiles or {}
        self.wgmma = self.wgmma or []
        self.accumulators = self.accumulators or set()
        self.contracts = self.contracts or []

    def is_wgmma(self, op: ir.Operation) -> bool:
        # Operations compare equal across their Python wrappers but do not
        # hash alike.
        return any(op == found for found in self.wgmma + self.contracts)


def tma_descriptor(op: ir.Operation, entry: ir.Block) -> TmaDescriptor:
    """The descriptor of an hw.tma_load (not yet deduplicated)."""
    view = hw.TmaLoadOp.from_operation(op)
    src, dst = view.operand("src"), view.operand("dst")
    if not (isinstance(src.owner, ir.Block) and src.owner == entry):
        raise PassFailure("TMA loads read a global memref that is an argument of the kernel "
                          "(the host makes its descriptor)", op.location)
    t = hw.transfer(type_view(src.type), type_view(dst.type))
    if t.src.memref.rank not in (2, 3) or len(t.box) != 2:
        raise PassFailure("TMA loads on the GPU move 2-d boxes from 2-d or 3-d memrefs",
                          op.location)
    rows, cols = t.box
    dtype = t.src.memref.dtype
    if nvidia.tma_box_problem(rows, cols, dtype):
        raise PassFailure(f"a TMA box of {rows}x{cols} {dtype}: boxes have at most "
                          f"{nvidia.TMA_MAX_ROWS} rows of a multiple of "
                          f"{nvidia.TMA_ROW_ALIGNMENT} bytes, and rows wider than "
                          f"{SWIZZLE_BYTES} bytes come in {SWIZZLE_BYTES}-byte boxes "
                          "(hw-check reports this)", op.location)
    box = nvidia.tma_box(rows, cols, dtype)
    return TmaDescriptor(src.arg_number, box.rows, box.cols, dtype, box.swizzled,
                         t.src.memref.rank - 2)


def plan_tma(ops: list[ir.Operation], entry: ir.Block, threads: int) -> TmaPlan:
    """The TMA descriptors of a kernel and the MMAs that become wgmma: f16
    or bf16 operands that TMA loads swizzled (A with 128-byte rows), one
    warpgroup, an accumulator of 64 to 256 rows and at most 256 columns."""
    plan = TmaPlan()
    by_key: dict[tuple, TmaDescriptor] = {}
    for op in ops:
        if op.name != "hw.tma_load":
            continue
        found = tma_descriptor(op, entry)
        descriptor = by_key.setdefault(found.key(), found)
        if descriptor is found:
            plan.descriptors.append(descriptor)
        tile = hw.TmaLoadOp.from_operation(op).operand("dst")
        if plan.tiles.setdefault(tile, descriptor) is not descriptor:
            raise PassFailure("TMA loads fill this tile with boxes of different shapes",
                              op.location)
    for op in ops:
        if op.name != "hw.mma":
            continue
        view = hw.MmaOp.from_operation(op)
        a, b, c = view.operand("a"), view.operand("b"), view.operand("c")
        da, db = plan.tiles.get(a), plan.tiles.get(b)
        problem = nvidia.wgmma_problem(type_view(a.type), type_view(c.type), da, db, threads,
                                       view.transpose_a or view.transpose_b)
        if view.instruction == "wgmma" and problem:
            raise PassFailure(f"this MMA cannot be a wgmma: {problem}", op.location)
        if view.instruction != "mma_sync" and not problem:
            plan.wgmma.append(op)
            plan.accumulators.add(c)
    for op in ops:
        if op.name != "hw.contract":
            continue
        view = hw.ContractOp.from_operation(op)
        a, b, c = view.operand("a"), view.operand("b"), view.operand("c")
        a_type = type_view(a.type)
        if view.unit == "tensor_cores" and not nvidia.wgmma_contract_problem(
                a_type, type_view(b.type), type_view(c.type), plan.tiles.get(a),
                plan.tiles.get(b), threads, view.transpose_b, a_type.space == "private"):
            plan.contracts.append(op)
    return plan


@lowers("hw.mbarrier_init")
def _mbarrier_init(kernel: KernelLowering, view):
    group = ir.Type.parse(f"!nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>, "
                          f"num_barriers = {view.barriers}>")
    barriers = nvgpu.MBarrierCreateOp(group).result
    leader = kernel.leader()
    for i in range(view.barriers):
        nvgpu.MBarrierInitOp(barriers, index(view.count), index(i), predicate=leader)
    gpu.BarrierOp()
    kernel.barriers[view.operation.results[0]] = barriers


def _barrier_group(kernel: KernelLowering, view) -> ir.Value:
    value = view.operand("barrier")
    if value not in kernel.barriers:
        raise PassFailure("an mbarrier that is not made by hw.mbarrier_init in this kernel",
                          view.operation.location)
    return kernel.barriers[value]


@lowers("hw.mbarrier_arrive")
def _mbarrier_arrive(kernel: KernelLowering, view):
    barriers = _barrier_group(kernel, view)
    token = ir.Type.parse("!nvgpu.mbarrier.token")
    when(kernel.leader(), lambda: nvgpu.MBarrierArriveOp(token, barriers,
                                                         view.operand("index")))


@lowers("hw.mbarrier_wait")
def _mbarrier_wait(kernel: KernelLowering, view):
    barriers = _barrier_group(kernel, view)
    parity = arith.index_cast(ir.IntegerType.get_signless(1), view.operand("parity"))
    nvgpu.MBarrierTryWaitParityOp(barriers, parity, index(10_000_000), view.operand("index"))


def _stage_offset(tile: SharedTile, stage_indices: Sequence[ir.Value]) -> ir.Value:
    """The byte offset of a stage of a shared tile (its leading indices)."""
    stage, stride = index(0), 1
    for i, extent in zip(reversed(stage_indices), reversed(tile.type.shape[:-2])):
        stage = add(stage, mul(i, stride))
        stride *= extent
    return add(mul(stage, tile.stage_bytes), tile.offset)


def _shared_view(kernel: KernelLowering, offset: ir.Value, shape: Sequence[int],
                 element: ir.Type) -> ir.Value:
    workgroup = ir.Attribute.parse("#gpu.address_space<workgroup>")
    return memref.ViewOp(ir.MemRefType.get(list(shape), element, memory_space=workgroup),
                         kernel.smem, offset, []).result


@lowers("hw.tma_load")
def _tma_load(kernel: KernelLowering, view):
    src, dst = view.operand("src"), view.operand("dst")
    tile = kernel.shared[dst]
    descriptor = tile.descriptor
    barriers = _barrier_group(kernel, view)
    t = hw.transfer(type_view(src.type), type_view(dst.type))
    (*leading, row, col), stage = t.split(view.operand("indices"))
    rows, cols = t.box
    element = ir.MemRefType(dst.type).element_type
    boxes = cols // descriptor.cols

    def issue():
        nvgpu.MBarrierArriveExpectTxOp(barriers, index(descriptor.box_bytes * boxes),
                                       view.operand("barrier_index"))
        base = _stage_offset(tile, stage)
        for box in range(boxes):
            target = _shared_view(kernel, add(base, box * descriptor.box_bytes),
                                  [1] * descriptor.leading + [rows, descriptor.cols], element)
            nvgpu.TmaAsyncLoadOp(target, barriers, descriptor.value,
                                 [add(col, box * descriptor.cols), row] + leading[::-1],
                                 view.operand("barrier_index"))
    when(kernel.leader(), issue)


def _wgmma_struct_type(layout: WgmmaLayout) -> ir.Type:
    """The LLVM struct wgmma's accumulator registers travel in."""
    inner = "struct<(" + ", ".join(["f32"] * (layout.cols // 2)) + ")>"
    return ir.Type.parse("!llvm.struct<(" + ", ".join([inner] * (layout.rows // 64)) + ")>")


def _wgmma(kernel: KernelLowering, view):
    a, b, c = view.operand("a"), view.operand("b"), view.operand("c")
    indices = list(view.operand("indices"))
    tile_a, tile_b = kernel.shared[a], kernel.shared[b]
    stage_a, stage_b = indices[:tile_a.type.rank - 2], indices[tile_a.type.rank - 2:]
    acc = kernel.register(c, view.operation)
    layout = acc.layout
    element = ir.MemRefType(a.type).element_type

    def descriptor(tile: SharedTile, stages, leading_bytes: int | None = None) -> ir.Value:
        shape = tile.type.shape[-2:]
        tensor = _shared_view(kernel, _stage_offset(tile, stages), shape, element)
        described = ir.Type.parse(f"!nvgpu.warpgroup.descriptor<tensor = {tensor.type}>")
        generated = nvgpu.WarpgroupGenerateDescriptorOp(described, tensor,
                                                        tile.descriptor.value).result
        if leading_bytes is None:
            return generated
        bits = ir.Operation.create("builtin.unrealized_conversion_cast",
                                   results=[ir.IntegerType.get_signless(64)],
                                   operands=[generated]).result
        return ir.Operation.create("builtin.unrealized_conversion_cast", results=[described],
                                   operands=[_with_leading_offset(bits, leading_bytes)]).result

    accumulator = ir.Type.parse(f"!nvgpu.warpgroup.accumulator<fragmented = "
                                f"vector<{layout.rows}x{layout.cols}xf32>>")
    struct_type = _wgmma_struct_type(layout)
    per_chunk = layout.cols // 2
    packed = llvm.UndefOp(struct_type).result
    for slot in range(layout.slots):
        packed = llvm.insertvalue(packed, acc.load(slot), [slot // per_chunk, slot % per_chunk])
    initial = ir.Operation.create("builtin.unrealized_conversion_cast", results=[accumulator],
                                  operands=[packed]).result
    # B (K x N) is MN-major: upstream's descriptor takes its leading offset
    # from the box's first dim, which is 1 for a batched (3-d) box.
    b_descriptor = descriptor(tile_b, stage_b, nvidia.wgmma_leading_offset(tile_b.descriptor))
    result = nvgpu.WarpgroupMmaOp(accumulator, descriptor(tile_a, stage_a), b_descriptor,
                                  initial, transposeB=True).result
    nvvm.WgmmaWaitGroupSyncOp(0)
    unpacked = ir.Operation.create("builtin.unrealized_conversion_cast", results=[struct_type],
                                   operands=[result]).result
    for slot in range(layout.slots):
        acc.store(llvm.extractvalue(ir.F32Type.get(), unpacked,
                                    [slot // per_chunk, slot % per_chunk]), slot)


def _warpgroup_descriptor(kernel: KernelLowering, tile: SharedTile, stages) -> ir.Value:
    """The wgmma matrix descriptor (an i64) of a stage of a shared tile that
    TMA fills 128-byte swizzled: its start address, the swizzle and the
    strides of its boxes (`nvgpu.warpgroup.generate.descriptor`)."""
    element = ir.Type.parse(tile.type.dtype)
    tensor = _shared_view(kernel, _stage_offset(tile, stages), tile.type.shape[-2:], element)
    described = ir.Type.parse(f"!nvgpu.warpgroup.descriptor<tensor = {tensor.type}>")
    generated = nvgpu.WarpgroupGenerateDescriptorOp(described, tensor,
                                                    tile.descriptor.value).result
    return ir.Operation.create("builtin.unrealized_conversion_cast",
                               results=[ir.IntegerType.get_signless(64)],
                               operands=[generated]).result


def _with_leading_offset(descriptor: ir.Value, offset_bytes: int) -> ir.Value:
    """A matrix descriptor whose leading byte offset is `offset_bytes`: for
    an MN-major operand in swizzled boxes, the stride from one box to the
    next along N. (The generated one is the box's first dim x 128 bytes:
    128 bytes for a batched box 1 deep.)"""
    i64 = ir.IntegerType.get_signless(64)
    field = nvidia.DESCRIPTOR_FIELD_MASK << nvidia.DESCRIPTOR_LEADING_BIT
    # ~field is the signed i64 of the mask that clears the field.
    cleared = arith.andi(descriptor, arith.constant(i64, ~field))
    units = offset_bytes // nvidia.DESCRIPTOR_UNIT_BYTES
    return arith.ori(cleared, arith.constant(i64, units << nvidia.DESCRIPTOR_LEADING_BIT))


def _advanced(descriptor: ir.Value, offset_bytes: int) -> ir.Value:
    """A matrix descriptor whose start address is `offset_bytes` further."""
    if not offset_bytes:
        return descriptor
    return arith.addi(descriptor, arith.constant(ir.IntegerType.get_signless(64),
                                                 offset_bytes // nvidia.DESCRIPTOR_UNIT_BYTES))


def _wgmma_async(dtype: str, n: int, accumulator: list, a: ir.Value | list, b: ir.Value,
                 transpose_b: bool) -> list:
    """One wgmma.mma_async m64nNk16 (f32 += f16/bf16 products): A a matrix
    descriptor or four registers (mma.sync's A fragment of the thread's
    rows), B a descriptor, K-major (`transpose_b`: B stored N x K) or
    MN-major; `accumulator` the thread's N / 2 f32 values, in wgmma's
    register order. As inline assembly with the accumulator tied in place."""
    f32, i32 = ir.F32Type.get(), ir.IntegerType.get_signless(32)
    count = len(accumulator)
    registers = isinstance(a, list)
    inputs = accumulator + (a if registers else [a]) + [b, arith.constant(i32, 1)]
    first = 2 * count
    a_text = ("{" + ", ".join(f"${first + i}" for i in range(4)) + "}") if registers \
        else f"${first}"
    b_at = first + (4 if registers else 1)
    transposes = f"{int(not transpose_b)}" if registers else f"0, {int(not transpose_b)}"
    text = ("{\n.reg .pred p;\n" f"setp.ne.b32 p, ${b_at + 1}, 0;\n"
            f"wgmma.mma_async.sync.aligned.m{nvidia.WGMMA_M}n{n}k{nvidia.WGMMA_K}.f32."
            f"{dtype}.{dtype} " "{" + ", ".join(f"${i}" for i in range(count)) + "}, "
            f"{a_text}, ${b_at}, p, 1, 1, {transposes};\n" "}")
    constraints = ",".join(["=f"] * count + [str(i) for i in range(count)]
                           + (["r"] * 4 if registers else ["l"]) + ["l", "r"])
    struct = ir.Type.parse("!llvm.struct<(" + ", ".join(["f32"] * count) + ")>")
    result = llvm.InlineAsmOp(struct, inputs, text, constraints, has_side_effects=True).result
    return [llvm.extractvalue(f32, result, [i]) for i in range(count)]


def _contract_wgmma(kernel: KernelLowering, view, a, b, acc: RegisterTile, stage_a, stage_b):
    """C += A x B (or A x B^T) of one warpgroup on sm_90a: per k-step of 16
    a wgmma m64nNk16 reading B (and A, where A is a shared tile) through
    matrix descriptors of the tiles TMA loaded swizzled, A otherwise from
    a register tile's accumulator fragments (attention's P: mma.sync's and
    wgmma's A fragments alike); the accumulator's mma.sync layout over
    four warps of 16 rows is wgmma's. Fenced, committed and waited for at
    once (wgmma.fence, commit_group, wait_group 0)."""
    layout = acc.layout
    a_type, b_type = type_view(a.type), type_view(b.type)
    if not (layout.rows == nvidia.WGMMA_M and layout.warp_rows == kernel.threads // WARP
            and layout.warp_cols == 1):
        raise PassFailure(f"the accumulator {acc.type} of a wgmma hw.contract is not held by "
                          "its warps in rows of 16 (hw.alloc with warps = [4, 1])",
                          view.operation.location)
    _, n, k = view.problem_shape(a_type, b_type)
    tile_b = kernel.shared[b]
    b_base = _warpgroup_descriptor(kernel, tile_b, stage_b)
    if not view.transpose_b:
        b_base = _with_leading_offset(b_base, nvidia.wgmma_leading_offset(tile_b.descriptor))
    registers = a_type.space == "private"
    if registers:
        a_fragments = _register_fragments(kernel, view, a, layout)
    else:
        tile_a = kernel.shared[a]
        a_base = _warpgroup_descriptor(kernel, tile_a, stage_a)
    steps = range(0, k, nvidia.WGMMA_K)
    # B^T (N x K) is K-major like A; B (K x N) MN-major.
    b_descs = [_advanced(b_base, nvidia.wgmma_k_offset(tile_b.descriptor, k0, view.transpose_b))
               for k0 in steps]
    # Every register A operand is made before the fence: registers written
    # between wgmmas would make ptxas fence each one again.
    a_operands = [[_i32(p) if not isinstance(p.type, ir.IntegerType) else p
                   for p in a_fragments(0, k0 // nvidia.WGMMA_K)] if registers
                  else _advanced(a_base, nvidia.wgmma_k_offset(tile_a.descriptor, k0, True))
                  for k0 in steps]
    values = [acc.load(s) for s in range(layout.slots)]
    nvvm.WgmmaFenceAlignedOp()
    for operand_a, b_desc in zip(a_operands, b_descs):
        values = _wgmma_async(a_type.dtype, n, values, operand_a, b_desc, view.transpose_b)
    nvvm.WgmmaGroupSyncAlignedOp()
    nvvm.WgmmaWaitGroupSyncOp(0)
    for slot, value in enumerate(values):
        acc.store(value, slot)


# ---------------------------------------------------------------------------
# The module: kernels into a gpu.module, launches into gpu.launch_func.


def _block_sizes(module: ir.Operation) -> dict[str, list[ir.Operation]]:
    launches: dict[str, list[ir.Operation]] = {}

    def visit(op):
        if op.name == "hw.launch":
            launches.setdefault(hw.LaunchOp.from_operation(op.operation).kernel, []).append(
                op.operation)
        return ir.WalkResult.ADVANCE
    module.walk(visit, ir.WalkOrder.PRE_ORDER)
    return launches


def _symbol(op: ir.Operation) -> str:
    return ir.StringAttr(op.attributes["sym_name"]).value


def _epilogues(kernel: ir.Operation) -> set[str]:
    names = set()

    def visit(op):
        if op.name == "hw.store" and "epilogue" in op.attributes:
            names.add(ir.FlatSymbolRefAttr(op.attributes["epilogue"]).value)
        return ir.WalkResult.ADVANCE
    kernel.walk(visit, ir.WalkOrder.PRE_ORDER)
    return names


@register_pass
@dataclass
class ConvertHWToNVGPU(Pass):
    """Lowers hw kernels and launches to GPU kernels (gpu, nvgpu, nvvm) for an NVIDIA architecture."""

    argument = "convert-hw-to-nvgpu"
    chip: str = "sm_80"

    def run(self, module: ir.Operation) -> None:
        nvidia.architecture(self.chip, PassFailure)
        with module.context, module.location:
            body = module.regions[0].blocks[0]
            kernels = [op.operation for op in body.operations
                       if op.operation.name == "func.func" and hw.is_kernel(op.operation)]
            if not kernels:
                return
            launches = _block_sizes(module)
            module.attributes["gpu.container_module"] = ir.UnitAttr.get()
            target = ir.Attribute.parse(f'#nvvm.target<chip = "{self.chip}", features = '
                                        f'"{nvidia.ptx_features(self.chip)}">')
            with ir.InsertionPoint(body):
                gpu_module = gpu.GPUModuleOp(GPU_MODULE, targets=ir.ArrayAttr.get([target]))
            gpu_module.bodyRegion.blocks.append()
            gpu_body = gpu_module.bodyRegion.blocks[0]
            copied: set[str] = set()
            shared_bytes = {}
            for kernel in kernels:
                name = _symbol(kernel)
                blocks = {hw.LaunchOp.from_operation(l).block3 for l in launches.get(name, [])}
                if len(blocks) != 1:
                    raise PassFailure(f"kernel @{name} needs one block size to be compiled for "
                                      f"the GPU; its launches use {len(blocks)}", kernel.location)
                for epilogue in sorted(_epilogues(kernel) - copied):
                    found = hw.lookup_function(kernel, epilogue)
                    func_op = found.clone(ir.InsertionPoint(gpu_body))
                    func_op.attributes["sym_visibility"] = ir.StringAttr.get("private")
                    # Internal to the GPU module: once inlined into its
                    # kernels, LLVM drops it from the PTX.
                    func_op.attributes["llvm.linkage"] = ir.Attribute.parse(
                        "#llvm.linkage<internal>")
                    copied.add(epilogue)
                shared_bytes[name] = self.lower_kernel(kernel, gpu_body, blocks.pop())
            records = []
            for name, ops in launches.items():
                for launch in ops:
                    records.append(self.launch_record(launch, *shared_bytes[name]))
                    self.lower_launch(launch, *shared_bytes[name])
            module.attributes[LAUNCHES_ATTRIBUTE] = ir.ArrayAttr.get(records)

    def launch_record(self, launch: ir.Operation, shared_bytes: int,
                      descriptors: list[TmaDescriptor]) -> ir.Attribute:
        """What the kernel manifest says of a launch: kernel, grid, block,
        dynamic shared memory, the kernel's arguments and the TMA
        descriptors the host makes (argument, box, element type, swizzle)."""
        view = hw.LaunchOp.from_operation(launch)
        arguments = [str(v.type) for v in launch.operands]
        arguments += [f"TMA descriptor of argument #{d.argument} ({'x'.join(map(str, d.box))} boxes"
                      f"{', swizzled' if d.swizzled else ''})" for d in descriptors]
        i64 = ir.IntegerType.get_signless(64)
        tensor_maps = [ir.DictAttr.get({
            "argument": ir.IntegerAttr.get(i64, d.argument),
            "box": ir.DenseI64ArrayAttr.get(d.box),
            "dtype": ir.StringAttr.get(d.dtype),
            "swizzle_bytes": ir.IntegerAttr.get(i64, SWIZZLE_BYTES if d.swizzled else 0),
        }) for d in descriptors]
        return ir.DictAttr.get({
            "kernel": ir.StringAttr.get(view.kernel),
            "grid": ir.DenseI64ArrayAttr.get(list(view.grid3)),
            "block": ir.DenseI64ArrayAttr.get(list(view.block3)),
            "dynamic_shared_memory": ir.IntegerAttr.get(ir.IntegerType.get_signless(64),
                                                        shared_bytes),
            "arguments": ir.ArrayAttr.get([ir.StringAttr.get(a) for a in arguments]),
            "tma_descriptors": ir.ArrayAttr.get(tensor_maps),
        })

    def lower_kernel(self, kernel: ir.Operation, gpu_body: ir.Block,
                     block: tuple[int, int, int]) -> tuple[int, list[TmaDescriptor]]:
        """Moves a kernel into the GPU module and lowers its ops; returns
        its dynamic shared memory in bytes and the TMA descriptors its
        launches pass after its arguments."""
        with ir.InsertionPoint(gpu_body), kernel.location:
            gpu_func = gpu.GPUFuncOp(ir.TypeAttr.get(hw.function_type(kernel)),
                                     sym_name=_symbol(kernel), kernel=True,
                                     known_block_size=list(block))
        if hw.MIN_BLOCKS_ATTRIBUTE in kernel.attributes:
            gpu_func.attributes["nvvm.minctasm"] = kernel.attributes[hw.MIN_BLOCKS_ATTRIBUTE]
        entry = kernel.regions[0].blocks[0]
        entry.append_to(gpu_func.body)
        for op in list(entry.operations):
            if op.operation.name == "func.return":
                with ir.InsertionPoint(op.operation), op.operation.location:
                    gpu.ReturnOp([])
                op.operation.erase()
        lowering = KernelLowering(kernel, gpu_func.operation, block, self.chip)
        ops: list[ir.Operation] = []

        def collect(op):
            if op.name.startswith("hw."):
                ops.append(op.operation)
            return ir.WalkResult.ADVANCE
        gpu_func.operation.walk(collect, ir.WalkOrder.PRE_ORDER)
        arch = nvidia.architecture(self.chip, PassFailure)
        if nvidia.FEATURES["tma"].problem(arch) is None:
            lowering.plan = plan_tma(ops, entry, lowering.threads)
        elif any(op.name.startswith(("hw.tma_load", "hw.mbarrier")) for op in ops):
            first = next(op for op in ops if op.name.startswith(("hw.tma_load", "hw.mbarrier")))
            raise PassFailure(f"'{first.name}' needs TMA and mbarriers: sm_90a, not "
                              f"{self.chip}", first.location)
        pointer = ir.Type.parse("!llvm.ptr")
        arguments = [entry.add_argument(pointer, kernel.location)
                     for _ in lowering.plan.descriptors]
        ftype = hw.function_type(kernel)
        gpu_func.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(
            list(ftype.inputs) + [pointer] * len(arguments), []))
        lowering.prologue(entry)
        with ir.InsertionPoint(next(iter(entry.operations)).operation), kernel.location:
            for descriptor, argument in zip(lowering.plan.descriptors, arguments):
                descriptor.value = ir.Operation.create(
                    "builtin.unrealized_conversion_cast", results=[descriptor.type()],
                    operands=[argument]).result
        lowering.lower(ops)
        kernel.erase()
        return lowering.shared_bytes, lowering.plan.descriptors

    def lower_launch(self, launch: ir.Operation, shared_bytes: int,
                     descriptors: list[TmaDescriptor]) -> None:
        view = hw.LaunchOp.from_operation(launch)
        with ir.InsertionPoint(launch), launch.location:
            pointers = []
            for descriptor in descriptors:
                source = launch.operands[descriptor.argument]
                element = ir.MemRefType(source.type).element_type
                unranked = memref.CastOp(ir.UnrankedMemRefType.get(element, None), source).result
                made = nvgpu.TmaCreateDescriptorOp(descriptor.type(), unranked, [
                    index(b) for b in descriptor.box]).result
                pointers.append(ir.Operation.create(
                    "builtin.unrealized_conversion_cast", results=[ir.Type.parse("!llvm.ptr")],
                    operands=[made]).result)
            gpu.LaunchFuncOp([GPU_MODULE, view.kernel], tuple(index(g) for g in view.grid3),
                             tuple(index(b) for b in view.block3),
                             kernel_operands=list(launch.operands) + pointers,
                             dynamic_shared_memory_size=arith.constant(
                                 ir.IntegerType.get_signless(32), shared_bytes))
        launch.erase()
