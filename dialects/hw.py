"""The `hw` dialect: block-collective ops on tiles in explicit memory spaces.

The hardware level of Lamina. Its ops work on memrefs whose memory space
says where the data lives: global memory (no memory space), shared memory
(`#gpu.address_space<workgroup>`) and registers
(`#gpu.address_space<private>`). Every op is *block-collective*: all
threads of a thread block execute it together, and its meaning is defined
on whole tiles (copy this 128x32 tile from global to shared memory; add
A x B to this register tile on tensor cores). That meaning is what the CPU
emulation runs (`convert-hw-to-loops`) and what the GPU lowering
distributes over warps and threads (`convert-hw-to-nvgpu`).

A kernel is a `func.func` with the unit attribute `hw.kernel`, launched
from host code by `hw.launch` with its grid and block sizes. Its arguments
are memrefs in global memory and scalars; `hw.block_id` says which block is
running. A kernel may also say how many of its blocks an SM must hold at
once (`hw.min_blocks_per_sm = N`), which bounds the registers its threads
get. Shared and register tiles are allocated at the top of the kernel
with `hw.alloc`.

Tiles and boxes. A copy moves a *box*: the last two dims (one for a
vector) of its *tile operand*, the operand that is closer to the
registers (registers, then shared, then global memory). The leading dims
of a tile select one of several buffers (a pipeline stage, a batch). The
other operand is the *buffer* the box is placed in: it is indexed in
every dim, the box starting at the indices of its last dims. A copy's
indices are the buffer's (one per dim) and the tile's leading dims', in
operand order (source first). Where a box reaches past the end of a
global memref, loads read zeros and stores skip the elements outside: this
is how shapes that tiles do not divide are handled.

Elementwise register-tile ops (`hw.add`, `hw.relu`, `hw.gelu`, ...) are
defined by their scalar expression (`lamina.scalar`), as nn's elementwise
ops are; `hw.elementwise {fn = "nn.OP"}` is any elementwise nn op, a
plugin's included, on register tiles. Their NumPy reference, emulation and
GPU code all come from that one expression.

Runs of elements. The elementwise and row kernels work on 1-d register
tiles: `hw.load_elements` loads a run of consecutive elements of an index
space (the flattened shape of a result) from a global memref that
broadcasts to it, `hw.store_elements` stores a tile as such a run, and
`hw.block_reduce` folds a tile into one element that every thread holds
(through a shared scratch tile between barriers on the GPU), which
elementwise ops then read broadcast.

Convolutions. `hw.conv_elements` loads a run of a convolution's result
space as the f32 sums of each element's window (a direct kernel, each
thread walking its elements' windows), and `hw.im2col` gathers a box of a
convolution's im2col matrix (output pixels by filter taps) into a shared
tile, the A operand of an implicit GEMM's K step on tensor cores.

Hazards. Threads are not synchronised by the ops themselves: a tile written
by one op and read by another needs a `hw.barrier` in between (a
`hw.wait` is one), an asynchronous copy (`hw.async_copy`, committed by
`hw.commit`) is complete only after a `hw.wait` that leaves fewer groups
in flight, and a TMA load (`hw.tma_load`) only after an
`hw.mbarrier_wait` observes the phase it completes. `hw-check-hazards`
reports every violation at its op.

Hardware instructions. `hw.prmt` and `hw.cvt_e4m3x2` apply one PTX
instruction to every element of register tiles (of i32, i16, f32, ...;
allocations, copies and stores take i8, i16 and i32 tiles for them); they
and the instructions plugins declare are defined in
`lamina.dialects.hw_instructions`, with the architecture each needs (`hw-check`)
and its meaning, which the emulation runs.

Ops print and parse in MLIR's generic form:

    "hw.mma"(%a, %b, %acc, %stage, %stage) : (memref<3x128x32xf16, #gpu.address_space<workgroup>>, memref<3x32x128xf16, #gpu.address_space<workgroup>>, memref<128x128xf32, #gpu.address_space<private>>, index, index) -> ()
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np
from mlir import ir

from lamina import scalar
from lamina.types import MemRefType, TensorType

from . import nn
from .opdef import (AnyType, BoolAttr, Dialect, EnumAttr, F64Attr, I64ArrayAttr, Index,
                    IntAttr, MemRefOf, Operand, Result, StrAttr, SymbolRefAttr, Variadic,
                    VerifyError, lookup_op)


class HW(Dialect, name="hw"):
    """Lamina's hardware-level dialect."""


class TokenType(HW.Type, name="token"):
    """An asynchronous copy in flight, until a `hw.commit` groups it."""


class MBarrierType(HW.Type, name="mbarrier"):
    """A group of mbarriers in shared memory (`hw.mbarrier_init`)."""


# The unit attribute that makes a func.func a kernel.
KERNEL_ATTRIBUTE = "hw.kernel"
# A kernel's optional i64 attribute: the blocks an SM must hold at once
# (ptxas allocates registers for that many; without it, ptxas picks an
# occupancy level itself and may spill to reach it).
MIN_BLOCKS_ATTRIBUTE = "hw.min_blocks_per_sm"

# Memory spaces from the registers outwards: the closer operand of a copy is
# its tile.
_SPACE_ORDER = {"private": 0, "workgroup": 1, "global": 2}
_SPACE_WORDS = {"private": "registers", "workgroup": "shared memory", "global": "global memory"}

# Element types of tiles.
TILE_TYPES = ("f32", "f16", "bf16")

# Element types that allocations, copies and stores also move: the integers
# of hardware instructions (lamina.dialects.hw_instructions).
DATA_TYPES = TILE_TYPES + ("i8", "i16", "i32")

# Element types of the tiles of `hw.elementwise` and `hw.cast`, and of the
# runs of elements (`hw.load_elements`, `hw.store_elements`) and the
# data-movement ops (`hw.gather_elements`, ...): every element type of nn
# tensors (floats, the booleans of comparisons and conditions, integers).
MAP_TYPES = TILE_TYPES + ("i1", "i32", "i64")

# (A, B, C) element types of the tensor-core MMA; f32 operands are tf32.
MMA_TYPES = (("f16", "f16", "f32"), ("bf16", "bf16", "f32"), ("f32", "f32", "f32"))

# How hw.mma multiplies f32 operands on tensor cores (see MmaOp).
MMA_PRECISIONS = ("tf32", "tf32_rounded", "3xtf32")

MAX_THREADS_PER_BLOCK = 1024


def dims(shape: Sequence[int]) -> str:
    return "x".join(map(str, shape)) or "scalar"


# ---------------------------------------------------------------------------
# Where a copy's box lies in its operands.


Region = tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class Placement:
    """How one operand of a copy holds the box: a `tile` (its leading dims
    indexed, the box at the origin of its last dims) or a `buffer` (every
    dim indexed, the box starting at the indices of its last dims)."""

    memref: MemRefType
    role: str
    box: tuple[int, ...]

    @property
    def index_count(self) -> int:
        rank = self.memref.rank
        return rank if self.role == "buffer" else rank - len(self.box)

    def region(self, indices: Sequence[int]) -> Region:
        """The element ranges `[lo, hi)` the box covers, per dim."""
        lead = self.memref.rank - len(self.box)
        ranges = [(int(i), int(i) + 1) for i in indices[:lead]]
        offsets = indices[lead:] if self.role == "buffer" else [0] * len(self.box)
        ranges += [(int(o), int(o) + b) for o, b in zip(offsets, self.box)]
        return tuple(ranges)


@dataclass(frozen=True)
class Transfer:
    """The box of a copy and where it lies in the source and destination."""

    src: Placement
    dst: Placement

    @property
    def box(self) -> tuple[int, ...]:
        return self.src.box

    @property
    def row_extents(self) -> tuple[int, int, int]:
        """The lengths of the box's rows and of both memrefs' rows (what a
        chunk each thread moves must divide)."""
        return (self.box[-1], self.src.memref.shape[-1], self.dst.memref.shape[-1])

    @property
    def index_count(self) -> int:
        return self.src.index_count + self.dst.index_count

    def split(self, indices: Sequence) -> tuple[list, list]:
        """The source's and the destination's indices."""
        indices = list(indices)
        return indices[:self.src.index_count], indices[self.src.index_count:]

    def regions(self, indices: Sequence[int]) -> tuple[Region, Region]:
        src, dst = self.split(indices)
        return self.src.region(src), self.dst.region(dst)


def tile_box(tile: MemRefType) -> tuple[int, ...]:
    """The box of a tile: its last two dims (its only dim for a vector)."""
    return tile.shape[-min(2, tile.rank):]


def transfer(src: MemRefType, dst: MemRefType) -> Transfer:
    """The placement of a copy from `src` to `dst`; raises VerifyError."""
    if src.space == dst.space:
        raise VerifyError(f"copies from {_SPACE_WORDS[src.space]} to {_SPACE_WORDS[dst.space]}; "
                          "a copy moves a tile between two memory spaces")
    if src.rank == 0 or dst.rank == 0:
        raise VerifyError("copies a rank-0 memref; tiles have one or more dims")
    tile_is_dst = _SPACE_ORDER[dst.space] < _SPACE_ORDER[src.space]
    tile, buffer = (dst, src) if tile_is_dst else (src, dst)
    box = tile_box(tile)
    if buffer.rank < len(box):
        raise VerifyError(f"the {dims(box)} box of {tile} does not fit the rank of {buffer}")
    if buffer.space != "global" and any(b > d for b, d in zip(box, buffer.shape[-len(box):])):
        raise VerifyError(f"the {dims(box)} box of {tile} does not fit in {buffer}")
    tile_place = Placement(tile, "tile", box)
    buffer_place = Placement(buffer, "buffer", box)
    return (Transfer(buffer_place, tile_place) if tile_is_dst
            else Transfer(tile_place, buffer_place))


def _check_index_count(what: str, expected: int, got: int, detail: str) -> None:
    if expected != got:
        raise VerifyError(f"{what} expects {expected} indices ({detail}), got {got}")


def _describe_indices(t: Transfer) -> str:
    parts = []
    for name, place in (("source", t.src), ("destination", t.dst)):
        what = "every dim" if place.role == "buffer" else "its leading dims"
        parts.append(f"{place.index_count} for the {name} {place.memref}, {what}")
    return "; ".join(parts)


def _same_dtype(*memrefs: MemRefType) -> str:
    dtypes = [m.dtype for m in memrefs]
    if len(set(dtypes)) > 1:
        raise VerifyError("element types differ: " + " vs ".join(dtypes))
    return dtypes[0]


def _clipped(region: Region, shape: Sequence[int]) -> Region | None:
    """The part of `region` inside `shape`, or None when it is empty."""
    clipped = tuple((max(lo, 0), min(hi, size)) for (lo, hi), size in zip(region, shape))
    return clipped if all(lo < hi for lo, hi in clipped) else None


def copy_reference(t: Transfer, src: np.ndarray, dst: np.ndarray, indices) -> None:
    """A copy on NumPy arrays, in place: the parts of the box outside a
    global memref read zeros and are not written."""
    src_region, dst_region = t.regions([int(i) for i in indices])
    rank = len(t.box)
    box = np.zeros(t.box, src.dtype)

    def box_part(region: Region, inside: Region) -> tuple[slice, ...]:
        return tuple(slice(lo - full, hi - full)
                     for (full, _), (lo, hi) in zip(region[-rank:], inside[-rank:]))

    read = _clipped(src_region, src.shape)
    if read is not None:
        part = box[box_part(src_region, read)]
        part[...] = src[tuple(slice(lo, hi) for lo, hi in read)].reshape(part.shape)
    written = _clipped(dst_region, dst.shape)
    if written is not None:
        target = tuple(slice(lo, hi) for lo, hi in written)
        dst[target] = box[box_part(dst_region, written)].reshape(dst[target].shape).astype(
            dst.dtype)


# ---------------------------------------------------------------------------
# Where ops may appear.


def enclosing_function(operation: ir.Operation | None) -> ir.Operation | None:
    """The func.func an op is nested in, or None."""
    while operation is not None:
        parent = operation.parent
        if parent is None:
            return None
        operation = parent.operation
        if operation.name == "func.func":
            return operation
    return None


def is_kernel(func: ir.Operation | None) -> bool:
    return func is not None and KERNEL_ATTRIBUTE in func.attributes


def lookup_function(operation: ir.Operation, name: str) -> ir.Operation | None:
    """The func.func called `name` in the symbol table around `operation`."""
    table = operation
    while table is not None and table.name not in ("builtin.module", "gpu.module"):
        parent = table.parent
        table = parent.operation if parent is not None else None
    if table is None:
        return None
    for op in table.regions[0].blocks[0].operations:
        op = op.operation
        if (op.name == "func.func" and "sym_name" in op.attributes
                and ir.StringAttr(op.attributes["sym_name"]).value == name):
            return op
    return None


def function_type(func: ir.Operation) -> ir.FunctionType:
    return ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)


class KernelOp(HW.Operation):
    """Base of the ops that run inside a kernel (a func.func with the
    `hw.kernel` attribute); block-collective."""

    def verify(self, *operands):
        self.verify_place()
        self.verify_operands(*operands)

    def verify_place(self) -> None:
        if self.operation is not None and not is_kernel(enclosing_function(self.operation)):
            raise VerifyError("must be inside a kernel (a func.func with the hw.kernel "
                              "attribute)")

    def verify_operands(self, *operands) -> None:
        """The op's own rules on its operand types."""


class SynchronisationOp(KernelOp):
    """Base of the ops that order the others (commits, waits, barriers,
    mbarriers, annotations): on the values of tiles they do nothing, which
    is their NumPy reference."""

    def reference(self, *operands):
        return None


# ---------------------------------------------------------------------------
# Launch structure.


class LaunchOp(HW.Operation, name="launch"):
    """Runs the kernel `kernel` on a grid of thread blocks: `grid` blocks
    (x, y, z; missing dims are 1) of `block` threads each. The arguments
    are the kernel's: memrefs in global memory (written in place) and
    scalars. The block size is part of the kernel's code (its tiles are
    distributed over these threads), so every launch of a kernel uses the
    same one.

    Example: "hw.launch"(%a, %b, %c) {kernel = @matmul_kernel, grid = array<i64: 8, 4>, block = array<i64: 128>} : (memref<256x64xf16>, memref<64x512xf16>, memref<256x512xf32>) -> ()
    """

    args: Variadic[Operand[AnyType()]]
    kernel: SymbolRefAttr
    grid: I64ArrayAttr
    block: I64ArrayAttr

    def verify(self, args):
        for name, sizes in (("grid", self.grid), ("block", self.block)):
            if not 1 <= len(sizes) <= 3 or any(s < 1 for s in sizes):
                raise VerifyError(f"'{name}' must have 1 to 3 sizes >= 1, got {list(sizes)}")
        threads = math.prod(self.block)
        if threads % 32 or threads > MAX_THREADS_PER_BLOCK:
            raise VerifyError(f"a block of {threads} threads: blocks have a multiple of 32 "
                              f"threads (whole warps), at most {MAX_THREADS_PER_BLOCK}")
        for index, arg in enumerate(args):
            if isinstance(arg, MemRefType) and arg.space != "global":
                raise VerifyError(f"argument #{index} is in {_SPACE_WORDS[arg.space]}; kernels "
                                  "take memrefs in global memory and scalars")
        if self.operation is None:
            return
        if is_kernel(enclosing_function(self.operation)):
            raise VerifyError("launches a kernel from inside a kernel")
        kernel = lookup_function(self.operation, self.kernel)
        if kernel is None:
            raise VerifyError(f"kernel @{self.kernel} is not a function of the module")
        if not is_kernel(kernel):
            raise VerifyError(f"@{self.kernel} is not a kernel (it has no hw.kernel attribute)")
        expected = [str(t) for t in function_type(kernel).inputs]
        given = [str(v.type) for v in self.operation.operands]
        if expected != given or function_type(kernel).results:
            raise VerifyError(f"arguments ({', '.join(given)}) do not match kernel "
                              f"@{self.kernel} ({', '.join(expected)})")

    @property
    def grid3(self) -> tuple[int, int, int]:
        return tuple(self.grid) + (1,) * (3 - len(self.grid))

    @property
    def block3(self) -> tuple[int, int, int]:
        return tuple(self.block) + (1,) * (3 - len(self.block))

    @property
    def threads(self) -> int:
        return math.prod(self.block)


class BlockIdOp(KernelOp, name="block_id"):
    """The index of the running block along grid dim `dim` (0 = x, 1 = y,
    2 = z).

    Example: %bx = "hw.block_id"() {dim = 0 : i64} : () -> index
    """

    result: Result[Index]
    dim: IntAttr = 0

    def verify_operands(self):
        if self.dim not in (0, 1, 2):
            raise VerifyError(f"'dim' must be 0, 1 or 2, got {self.dim}")


class PipelineOp(SynchronisationOp, name="pipeline"):
    """Software pipelining: the enclosing `scf.for` is to run with
    `stages` iterations' copies in flight. It stands first in the loop's
    body; `hw-pipeline` realises it, multi-buffering the shared tiles that
    the loop's async copies and TMA loads fill.

    Example: "hw.pipeline"() {stages = 3 : i64} : () -> ()
    """

    stages: IntAttr

    def verify_operands(self):
        if self.stages < 1:
            raise VerifyError(f"'stages' must be >= 1, got {self.stages}")
        if self.operation is None:
            return
        parent = self.operation.parent
        block = self.operation.block
        first = next(iter(block.operations)).operation
        if parent is None or parent.operation.name != "scf.for" or first != self.operation:
            raise VerifyError("must be the first op of an scf.for body")


# ---------------------------------------------------------------------------
# Tiles and copies.


class AllocOp(KernelOp, name="alloc"):
    """A tile in shared memory (`#gpu.address_space<workgroup>`, visible to
    every thread of the block) or in registers
    (`#gpu.address_space<private>`, spread over the block's threads). The
    contents are undefined. Allocations stand at the top level of a
    kernel, so that their sizes are known before it runs.

    `warps` (rows x cols of warps, optional) chooses the warp grid of a
    register tile in mma.sync's accumulator layout, and makes an M x 1
    register tile hold the row statistics of such tiles (row maxima and
    sums, `hw.reduce_max`, broadcast over their rows): the tiles of one grid
    share their rows' threads.

    Example: %a = "hw.alloc"() : () -> memref<3x128x32xf16, #gpu.address_space<workgroup>>
    """

    result: Result[MemRefOf(*DATA_TYPES, "i1", "i64")]
    warps: I64ArrayAttr = ()

    def verify_place(self):
        super().verify_place()
        if self.operation is not None and self.operation.parent.operation.name != "func.func":
            raise VerifyError("must be at the top level of the kernel (not in a loop or branch)")

    def verify_operands(self):
        if self.given_result_types and self.result_type.space == "global":
            raise VerifyError(f"allocates {self.result_type} in global memory; hw.alloc makes "
                              "tiles in shared memory (workgroup) or registers (private)")
        if self.warps and (len(self.warps) != 2 or min(self.warps) < 1 or (
                self.given_result_types and self.result_type.space != "private")):
            raise VerifyError(f"'warps' is the grid (rows x cols of warps, each >= 1) of a "
                              f"register tile; got {list(self.warps)}")


class TransferOp(KernelOp):
    """Base of the copies: a box from `src` to `dst` at `indices` (see the
    module docstring). Each copy declares its operands; `src`, `dst` and
    `indices` are among them."""

    def operand_groups(self, groups: Sequence) -> tuple:
        """(src, dst, indices) among the op's operand groups."""
        names = [d.name for d in self.operand_decls]
        return tuple(groups[names.index(n)] for n in ("src", "dst", "indices"))

    def verify_operands(self, *groups):
        src, dst, indices = self.operand_groups(groups)
        _same_dtype(src, dst)
        t = transfer(src, dst)
        _check_index_count(self.op_name(), t.index_count, len(indices), _describe_indices(t))

    def reference(self, *groups):
        """The copy on NumPy arrays, in place (the op's operand types say
        which operand is the tile)."""
        src, dst, indices = self.operand_groups(groups)
        src_type, dst_type, _ = self.operand_groups(self._group(self.operand_types))
        copy_reference(transfer(src_type, dst_type), src, dst, indices)


class CopyOp(TransferOp, name="copy"):
    """Copies a box between global memory, shared memory and registers;
    synchronous for the issuing threads. Loads past the end of a global
    memref read zeros, stores past it are skipped.

    Example: "hw.copy"(%a, %a_smem, %row, %col) : (memref<256x64xf16>, memref<128x32xf16, #gpu.address_space<workgroup>>, index, index) -> ()
    """

    src: Operand[MemRefOf(*DATA_TYPES)]
    dst: Operand[MemRefOf(*DATA_TYPES)]
    indices: Variadic[Operand[Index]]


class AsyncCopyOp(TransferOp, name="async_copy"):
    """Starts copying a box from global to shared memory (cp.async); the
    token is committed in a group by `hw.commit`, and the box may be read
    once a `hw.wait` has completed that group. Loads past the end of the
    global memref read zeros.

    Example: %t = "hw.async_copy"(%a, %a_smem, %row, %col, %stage) : (memref<256x64xf16>, memref<3x128x32xf16, #gpu.address_space<workgroup>>, index, index, index) -> !hw.token
    """

    src: Operand[MemRefOf(*TILE_TYPES, space="global")]
    dst: Operand[MemRefOf(*TILE_TYPES, space="workgroup")]
    indices: Variadic[Operand[Index]]
    token: Result[TokenType]


class CommitOp(SynchronisationOp, name="commit"):
    """Commits the async copies of `tokens` as one group (cp.async's
    commit_group); groups complete in order.

    Example: "hw.commit"(%ta, %tb) : (!hw.token, !hw.token) -> ()
    """

    tokens: Variadic[Operand[TokenType]]


class WaitOp(SynchronisationOp, name="wait"):
    """Waits until at most `pending` committed groups of async copies are
    in flight, then synchronises the block (cp.async.wait_group and a
    barrier): the copies of every older group are complete and visible to
    all threads.

    Example: "hw.wait"() {pending = 1 : i64} : () -> ()
    """

    pending: IntAttr = 0

    def verify_operands(self):
        if self.pending < 0:
            raise VerifyError(f"'pending' must be >= 0, got {self.pending}")


class BarrierOp(SynchronisationOp, name="barrier"):
    """Synchronises the threads of the block: what any of them wrote to
    shared memory before is visible to all after, and tiles read before
    may be overwritten after.

    Example: "hw.barrier"() : () -> ()
    """


# ---------------------------------------------------------------------------
# TMA and mbarriers (sm_90a).


class MBarrierInitOp(SynchronisationOp, name="mbarrier_init"):
    """Creates `barriers` mbarriers in shared memory, each completing a
    phase when `count` arrivals (`hw.mbarrier_arrive`, `hw.tma_load`) have
    happened and the bytes of their TMA loads have landed.

    Example: %bar = "hw.mbarrier_init"() {count = 1 : i64, barriers = 3 : i64} : () -> !hw.mbarrier
    """

    barrier: Result[MBarrierType]
    count: IntAttr = 1
    barriers: IntAttr = 1

    def verify_operands(self):
        if self.count < 1 or self.barriers < 1:
            raise VerifyError(f"'count' and 'barriers' must be >= 1, got {self.count} and "
                              f"{self.barriers}")


class MBarrierArriveOp(SynchronisationOp, name="mbarrier_arrive"):
    """The block arrives once on mbarrier `index` of `barrier`.

    Example: "hw.mbarrier_arrive"(%bar, %stage) : (!hw.mbarrier, index) -> ()
    """

    barrier: Operand[MBarrierType]
    index: Operand[Index]


class MBarrierWaitOp(SynchronisationOp, name="mbarrier_wait"):
    """Waits until the phase of parity `parity` (0 or 1) of mbarrier
    `index` has completed (mbarrier.try_wait.parity): the phase counter
    of a barrier starts at 0, so a loop waits on parity `(k / stages) % 2`.
    TMA loads that arrived in that phase are then visible to the block.

    Example: "hw.mbarrier_wait"(%bar, %stage, %parity) : (!hw.mbarrier, index, index) -> ()
    """

    barrier: Operand[MBarrierType]
    index: Operand[Index]
    parity: Operand[Index]


class TmaLoadOp(TransferOp, name="tma_load"):
    """Starts a TMA load (cp.async.bulk.tensor) of a box from global to
    shared memory that arrives on mbarrier `barrier_index` of `barrier`
    with its bytes; the box may be read once an `hw.mbarrier_wait` has
    observed that phase. Loads past the end of the global memref read
    zeros. sm_90a.

    Example: "hw.tma_load"(%a, %a_smem, %bar, %stage, %row, %col, %stage) : (memref<256x64xf16>, memref<3x128x64xf16, #gpu.address_space<workgroup>>, !hw.mbarrier, index, index, index, index) -> ()
    """

    src: Operand[MemRefOf(*TILE_TYPES, space="global")]
    dst: Operand[MemRefOf(*TILE_TYPES, space="workgroup")]
    barrier: Operand[MBarrierType]
    barrier_index: Operand[Index]
    indices: Variadic[Operand[Index]]


# ---------------------------------------------------------------------------
# Tensor cores.


class MmaOp(KernelOp, name="mma"):
    """`C += A x B` on tensor cores: A (M x K) and B (K x N) are boxes of
    shared tiles (leading dims indexed by `indices`, A's first), C an
    M x N register tile. f16 x f16 and bf16 x bf16 accumulate in f32;
    f32 x f32 multiplies in tf32 and accumulates in f32, its operands as
    `precision` says: `tf32` (the low 13 bits of the mantissas dropped, as
    the tensor cores read f32), `tf32_rounded` (rounded to the nearest
    tf32, ties away from zero: cvt.rna.tf32.f32) or `3xtf32` (accurate to
    f32: each operand split into a rounded tf32 `big` part and the tf32
    rounding of its residual `small`, and `big x small + small x big +
    big x big` accumulated, as CUTLASS's 3xTF32 does; the dropped `small x
    small` is under 2^-22 of the product). `transpose_a` and
    `transpose_b` read A from a K x M box and B from an N x K box, stored
    transposed (a linear layer's weight, read in place). `instruction`
    chooses the tensor-core instructions: `mma_sync` (ldmatrix +
    mma.sync, sm_80 and later), `wgmma` (sm_90a: operands that TMA loads
    with 128-byte rows, one warpgroup, not transposed) or `auto` (wgmma
    where it applies, else mma.sync).

    Example: "hw.mma"(%a, %b, %acc, %stage, %stage) : (memref<3x128x32xf16, #gpu.address_space<workgroup>>, memref<3x32x128xf16, #gpu.address_space<workgroup>>, memref<128x128xf32, #gpu.address_space<private>>, index, index) -> ()
    """

    a: Operand[MemRefOf(*TILE_TYPES, space="workgroup")]
    b: Operand[MemRefOf(*TILE_TYPES, space="workgroup")]
    c: Operand[MemRefOf("f32", space="private")]
    indices: Variadic[Operand[Index]]
    instruction: EnumAttr("auto", "mma_sync", "wgmma") = "auto"
    precision: EnumAttr(*MMA_PRECISIONS) = "tf32"
    transpose_a: BoolAttr = False
    transpose_b: BoolAttr = False

    def verify_operands(self, a, b, c, indices):
        if a.rank < 2 or b.rank < 2 or c.rank != 2:
            raise VerifyError(f"mma takes matrices: A and B of rank >= 2, C of rank 2; got "
                              f"{a}, {b}, {c}")
        (m, k), (k2, n) = self.matrix_shape(a, "a"), self.matrix_shape(b, "b")
        if k != k2 or c.shape != (m, n):
            expected = (f"A {'KxM' if self.transpose_a else 'MxK'}, "
                        f"B {'NxK' if self.transpose_b else 'KxN'}, C MxN")
            raise VerifyError(f"mma shapes do not match: A {dims(a.shape[-2:])}, B "
                              f"{dims(b.shape[-2:])}, C {dims(c.shape)} (expected {expected})")
        if (a.dtype, b.dtype, c.dtype) not in MMA_TYPES:
            raise VerifyError(f"mma takes f16 x f16 -> f32, bf16 x bf16 -> f32 or f32 x f32 -> "
                              f"f32 (tf32); got {a.dtype} x {b.dtype} -> {c.dtype}")
        if self.precision != "tf32" and a.dtype != "f32":
            raise VerifyError(f"precision = \"{self.precision}\" is for f32 operands, not "
                              f"{a.dtype}")
        if self.instruction == "wgmma" and (self.transpose_a or self.transpose_b):
            raise VerifyError("wgmma here reads A as MxK and B as KxN; transposed operands "
                              "are read by mma.sync")
        expected = a.rank - 2 + b.rank - 2
        _check_index_count("hw.mma", expected, len(indices),
                           f"{a.rank - 2} for A's and {b.rank - 2} for B's leading dims")

    def matrix_shape(self, operand: MemRefType, name: str) -> tuple[int, int]:
        """The (rows, cols) of `operand`'s matrix (A: M x K, B: K x N) as
        the product reads it, its box transposed where it is stored so."""
        rows, cols = operand.shape[-2:]
        transposed = self.transpose_a if name == "a" else self.transpose_b
        return (cols, rows) if transposed else (rows, cols)

    def reference(self, a, b, c, indices):
        lead_a = a.ndim - 2
        ia, ib = [int(i) for i in indices[:lead_a]], [int(i) for i in indices[lead_a:]]
        lhs, rhs = a[tuple(ia)].astype(np.float32), b[tuple(ib)].astype(np.float32)
        if self.transpose_a:
            lhs = lhs.T
        if self.transpose_b:
            rhs = rhs.T
        if a.dtype != np.float32:
            products = [(lhs, rhs)]
        elif self.precision == "3xtf32":
            (big_a, small_a), (big_b, small_b) = split_tf32(lhs), split_tf32(rhs)
            products = [(big_a, small_b), (small_a, big_b), (big_a, big_b)]
        else:
            rounding = to_tf32 if self.precision == "tf32" else nn.round_tf32
            products = [(rounding(lhs), rounding(rhs))]
        for x, y in products:
            c += np.matmul(x.astype(np.float64), y.astype(np.float64)).astype(np.float32)


class ContractOp(KernelOp, name="contract"):
    """`C += A x B`, or `C += A x B^T` with `transpose_b` (B an N x K box:
    the keys of attention scores, rows of K read in place), where A
    (M x K) and B are boxes of shared tiles (leading dims indexed by
    `indices`, A's first) and C an M x N f32 register tile. `unit` says
    where: `tensor_cores` (f16 x f16 or bf16 x bf16 on mma.sync, products
    accumulated in f32) or `fma` (CUDA cores: f32 products of the
    operands' values summed in the order of k with fused multiply-adds,
    accurate to f32 for f32 operands). On tensor cores A may also be a
    register tile (M x K, no leading dims) whose warps hold the rows that
    C's hold (both allocated with `warps = [W, 1]`): mma.sync's
    accumulator fragments are its A fragments (attention's P, fed from
    the registers that computed it). On sm_90a, where the shared operands
    are tiles that `hw.tma_load` fills 128-byte swizzled and one
    warpgroup holds C's 64 rows, the GPU lowering multiplies with wgmma
    (A from registers or shared memory, B K-major with `transpose_b`,
    MN-major without); the meaning is the same.

    Example: "hw.contract"(%q, %k, %s) {transpose_b = true} : (memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #gpu.address_space<private>>) -> ()
    """

    a: Operand[MemRefOf(*TILE_TYPES)]
    b: Operand[MemRefOf(*TILE_TYPES, space="workgroup")]
    c: Operand[MemRefOf("f32", space="private")]
    indices: Variadic[Operand[Index]]
    transpose_b: BoolAttr = False
    unit: EnumAttr("tensor_cores", "fma") = "tensor_cores"

    def problem_shape(self, a: MemRefType, b: MemRefType) -> tuple[int, int, int]:
        """(M, N, K) of the product of boxes `a` and `b`."""
        (m, k), (rows, cols) = a.shape[-2:], b.shape[-2:]
        return (m, rows, k) if self.transpose_b else (m, cols, k)

    def verify_operands(self, a, b, c, indices):
        if a.rank < 2 or b.rank < 2 or c.rank != 2:
            raise VerifyError(f"contracts matrices: A and B of rank >= 2, C of rank 2; got "
                              f"{a}, {b}, {c}")
        m, n, k = self.problem_shape(a, b)
        k2 = b.shape[-1] if self.transpose_b else b.shape[-2]
        if k != k2 or c.shape != (m, n):
            expected = "B NxK" if self.transpose_b else "B KxN"
            raise VerifyError(f"contract shapes do not match: A {dims(a.shape[-2:])}, B "
                              f"{dims(b.shape[-2:])}, C {dims(c.shape)} (expected A MxK, "
                              f"{expected}, C MxN)")
        _same_dtype(a, b)
        if a.space == "global" or a.space == "private" and (
                self.unit != "tensor_cores" or a.rank != 2):
            raise VerifyError(f"A is {a} in {_SPACE_WORDS[a.space]}; A is a shared tile, or on "
                              "tensor cores a 2-d register tile")
        if self.unit == "tensor_cores" and a.dtype not in ("f16", "bf16"):
            raise VerifyError(f"contract on tensor cores takes f16 or bf16 operands, not "
                              f"{a.dtype} (unit = \"fma\" multiplies f32 on CUDA cores)")
        _check_index_count("hw.contract", a.rank - 2 + b.rank - 2, len(indices),
                           f"{a.rank - 2} for A's and {b.rank - 2} for B's leading dims")

    def reference(self, a, b, c, indices):
        lead_a = a.ndim - 2
        ia, ib = [int(i) for i in indices[:lead_a]], [int(i) for i in indices[lead_a:]]
        lhs, rhs = a[tuple(ia)].astype(np.float32), b[tuple(ib)].astype(np.float32)
        rhs = rhs.T if self.transpose_b else rhs
        c += np.matmul(lhs.astype(np.float64), rhs.astype(np.float64)).astype(np.float32)


class MaskOp(KernelOp, name="mask"):
    """Hides elements of a 2-d register tile of scores: element (r, c),
    at (`row` + r, `col` + c) of the scores of queries x keys, becomes
    -inf where its key is past the last one (`col` + c >= `keys`) or, with
    `causal`, after its query (`col` + c > `row` + r).

    Example: "hw.mask"(%s, %row, %col) {keys = 100 : i64, causal = true} : (memref<64x64xf32, #gpu.address_space<private>>, index, index) -> ()
    """

    x: Operand[MemRefOf("f32", space="private")]
    row: Operand[Index]
    col: Operand[Index]
    keys: IntAttr
    causal: BoolAttr = False

    def verify_operands(self, x, row, col):
        if x.rank != 2:
            raise VerifyError(f"masks a 2-d register tile; got {x}")
        if self.keys < 0:
            raise VerifyError(f"'keys' must be >= 0, got {self.keys}")

    def hidden(self, rows: int, cols: int, row: int, col: int) -> np.ndarray:
        """Which elements of a rows x cols tile at (row, col) are hidden."""
        r = row + np.arange(rows)[:, None]
        c = col + np.arange(cols)[None, :]
        return (c >= self.keys) | ((c > r) if self.causal else False)

    def reference(self, x, row, col):
        x[self.hidden(*x.shape, int(row), int(col))] = -np.inf


def to_tf32(x: np.ndarray) -> np.ndarray:
    """f32 values as the tensor cores read them in tf32: the low 13 bits of
    the mantissa dropped."""
    bits = np.ascontiguousarray(x, np.float32).view(np.uint32) & np.uint32(nn.TF32_MASK)
    return bits.view(np.float32)


def split_tf32(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """An f32 array as 3xTF32 splits it: the tf32 `big` part (rounded) and
    the tf32 rounding of the residual `x - big` (exact in f32)."""
    big = nn.round_tf32(x)
    return big, nn.round_tf32((np.asarray(x, np.float32) - big).astype(np.float32))


# ---------------------------------------------------------------------------
# Register tiles.


class RegisterTileOp(KernelOp):
    """Base of the ops on register tiles (whole tiles, no indices)."""

    def verify_operands(self, *tiles):
        for tile in tiles:
            if tile.space != "private":
                raise VerifyError(f"works on register tiles; {tile} is in "
                                  f"{_SPACE_WORDS[tile.space]}")
        self.verify_tiles(*tiles)

    def verify_tiles(self, *tiles) -> None:
        pass


class FillOp(KernelOp, name="fill"):
    """Sets every element of a register or shared tile to `value`.

    Example: "hw.fill"(%acc) {value = 0.0 : f64} : (memref<128x128xf32, #gpu.address_space<private>>) -> ()
    """

    out: Operand[MemRefOf(*TILE_TYPES)]
    value: F64Attr = 0.0

    def verify_operands(self, out):
        if out.space == "global":
            raise VerifyError(f"fills {out} in global memory; hw.fill works on shared and "
                              "register tiles")

    def reference(self, out):
        out[...] = self.value


class ElementwiseTileOp(RegisterTileOp):
    """Base of the elementwise ops on register tiles: each element of
    `out` is a scalar expression (`lamina.scalar`) of the elements of the
    inputs at its position, computed in f32 and rounded once to `out`'s
    type. A subclass states the expression once, as nn's elementwise ops
    do (`def scalar(self, x): return maximum(x, 0)`), or takes an nn op's
    (`hw.elementwise`); its NumPy reference, its CPU emulation
    (`convert-hw-to-loops`) and its GPU code (`convert-hw-to-nvgpu`) all
    come from `scalar_tree()`: arith ops only where the expression has such
    a body (erf, tanh and sigmoid as rational approximations, as in the
    matmul epilogues), else also math ops (exp, log, sqrt, rsqrt, pow)."""

    scalar = None

    def inputs(self) -> list[ir.Value]:
        """The input tiles, in the expression's operand order."""
        return [self.operand(d.name) for d in self.operand_decls if d.name != "out"]

    def scalar_tree(self) -> "scalar.Scalar":
        """The op's expression traced on its inputs."""
        if self.scalar is None:
            raise NotImplementedError(f"{self.op_name()} has no scalar definition")
        return scalar.trace(self.scalar, len(self.operand_decls) - 1)

    def element(self, values: Sequence[ir.Value]) -> ir.Value:
        """The f32 result of one position from its f32 input elements, at
        the current insertion point."""
        tree = self.scalar_tree()
        return scalar.to_mlir(tree, values, arith_only=scalar.arith_only_supported(tree))

    def reference(self, *arrays):
        *inputs, out = arrays
        self.compute_into(inputs, out)

    def compute_into(self, inputs: Sequence[np.ndarray], out: np.ndarray) -> None:
        # Floats are computed on in f32; booleans and integers in their type.
        result = scalar.evaluate(self.scalar_tree(), [
            a if a.dtype.kind in "biu" else a.astype(np.float32) for a in inputs])
        out[...] = np.broadcast_to(result, out.shape).astype(out.dtype)


class UnaryOp(ElementwiseTileOp):
    """Base of elementwise ops `out = f(x)` on register tiles of one shape
    and element type (`out` may be `x`); computed in f32."""

    x: Operand[MemRefOf(*TILE_TYPES, space="private")]
    out: Operand[MemRefOf(*TILE_TYPES, space="private")]

    def verify_tiles(self, x, out):
        if x.shape != out.shape:
            raise VerifyError(f"shapes differ: {dims(x.shape)} vs {dims(out.shape)}")
        self.verify_dtypes(x, out)

    def verify_dtypes(self, x, out):
        _same_dtype(x, out)


class NegOp(UnaryOp, name="neg"):
    """Negation, elementwise on a register tile.

    Example: "hw.neg"(%x, %x) : (memref<64x64xf32, #gpu.address_space<private>>, memref<64x64xf32, #gpu.address_space<private>>) -> ()
    """

    def scalar(self, x):
        return -x


class ExpOp(UnaryOp, name="exp"):
    """`e^x`, elementwise on a register tile.

    Example: "hw.exp"(%x, %y) : (memref<64x64xf32, #gpu.address_space<private>>, memref<64x64xf32, #gpu.address_space<private>>) -> ()
    """

    def scalar(self, x):
        return scalar.exp(x)


class ReluOp(UnaryOp, name="relu"):
    """`max(x, 0)`, elementwise on a register tile.

    Example: "hw.relu"(%acc, %acc) : (memref<128x128xf32, #gpu.address_space<private>>, memref<128x128xf32, #gpu.address_space<private>>) -> ()
    """

    def scalar(self, x):
        return scalar.maximum(x, 0)


class GeluOp(UnaryOp, name="gelu"):
    """Gaussian error linear unit (tanh approximation), elementwise on a
    register tile.

    Example: "hw.gelu"(%acc, %acc) : (memref<128x128xf32, #gpu.address_space<private>>, memref<128x128xf32, #gpu.address_space<private>>) -> ()
    """

    def scalar(self, x):
        return nn.GeluOp.detached(approximate="tanh").scalar(x)


class CastOp(UnaryOp, name="cast"):
    """Converts a register tile to another element type as nn.cast does:
    floats round to nearest even, floats to integers toward zero, integers
    narrow by truncation and widen by sign extension, a number to i1 is
    `x != 0` and i1 to a number 0 or 1.

    Example: "hw.cast"(%acc, %h) : (memref<128x128xf32, #gpu.address_space<private>>, memref<128x128xf16, #gpu.address_space<private>>) -> ()
    """

    x: Operand[MemRefOf(*MAP_TYPES, space="private")]
    out: Operand[MemRefOf(*MAP_TYPES, space="private")]

    def verify_dtypes(self, x, out):
        pass

    def compute_into(self, inputs, out):
        (x,) = inputs
        out[...] = (x != 0) if out.dtype == np.bool_ else x.astype(out.dtype)

    def scalar(self, x):
        return x


def _verify_broadcast(inputs, out) -> None:
    """Every input broadcasts to `out`'s shape (NumPy rules)."""
    for y in inputs:
        if y.rank > out.rank or any(a != b and a != 1 for a, b in
                                    zip(y.shape[::-1], out.shape[::-1])):
            raise VerifyError(f"{dims(y.shape)} does not broadcast to {dims(out.shape)}")


class BinaryOp(ElementwiseTileOp):
    """Base of elementwise ops `out = f(x, y)` on register tiles: `y`
    broadcasts to `x`'s shape with NumPy's rules (a row `1xN` or `N`, a
    column `Mx1`); `out` has `x`'s shape and may be `x`. Computed in f32."""

    x: Operand[MemRefOf(*TILE_TYPES, space="private")]
    y: Operand[MemRefOf(*TILE_TYPES, space="private")]
    out: Operand[MemRefOf(*TILE_TYPES, space="private")]

    def verify_tiles(self, x, y, out):
        _same_dtype(x, y, out)
        if out.shape != x.shape:
            raise VerifyError(f"shapes differ: {dims(x.shape)} vs {dims(out.shape)}")
        _verify_broadcast([y], x)


class AddOp(BinaryOp, name="add"):
    """`x + y` on register tiles, `y` broadcast.

    Example: "hw.add"(%acc, %bias, %acc) : (memref<128x128xf32, #gpu.address_space<private>>, memref<1x128xf32, #gpu.address_space<private>>, memref<128x128xf32, #gpu.address_space<private>>) -> ()
    """

    def scalar(self, x, y):
        return x + y


class SubOp(BinaryOp, name="sub"):
    """`x - y` on register tiles, `y` broadcast.

    Example: "hw.sub"(%s, %rowmax, %s) : (memref<64x64xf32, #gpu.address_space<private>>, memref<64x1xf32, #gpu.address_space<private>>, memref<64x64xf32, #gpu.address_space<private>>) -> ()
    """

    def scalar(self, x, y):
        return x - y


class MulOp(BinaryOp, name="mul"):
    """`x * y` on register tiles, `y` broadcast.

    Example: "hw.mul"(%x, %scale, %x) : (memref<64x64xf32, #gpu.address_space<private>>, memref<1x64xf32, #gpu.address_space<private>>, memref<64x64xf32, #gpu.address_space<private>>) -> ()
    """

    def scalar(self, x, y):
        return x * y


class MaxOp(BinaryOp, name="max"):
    """`max(x, y)` on register tiles, `y` broadcast.

    Example: "hw.max"(%m, %new, %m) : (memref<64x1xf32, #gpu.address_space<private>>, memref<64x1xf32, #gpu.address_space<private>>, memref<64x1xf32, #gpu.address_space<private>>) -> ()
    """

    def scalar(self, x, y):
        return scalar.maximum(x, y)


class MapOp(ElementwiseTileOp, name="elementwise"):
    """Any elementwise nn op on register tiles: `out = fn(inputs...)`,
    computed as the nn op `fn` (`"nn.leaky_relu"`: a built-in op or a
    plugin's) defines it in the scalar form; the nn op's attributes are this
    op's, by the same names (`approximate = "tanh"` for `nn.gelu`). The
    inputs are the nn op's operands, in order, broadcast to `out`'s shape
    (NumPy rules); their element types are the nn op's: floats, and i1 for
    a comparison's result and a select's condition.

    Example: "hw.elementwise"(%x, %x) {fn = "nn.silu"} : (memref<64x64xf32, #gpu.address_space<private>>, memref<64x64xf32, #gpu.address_space<private>>) -> ()
    """

    tiles: Variadic[Operand[MemRefOf(*MAP_TYPES, space="private")]]
    out: Operand[MemRefOf(*MAP_TYPES, space="private")]
    fn: StrAttr

    def inputs(self) -> list[ir.Value]:
        return list(self.operand("tiles"))

    def nn_op(self) -> "nn.ElementwiseOp":
        """A view of the nn op `fn` with this op's attributes; raises
        VerifyError when `fn` is no elementwise nn op with a scalar form."""
        op_class = lookup_op(self.fn)
        if not (isinstance(op_class, type) and issubclass(op_class, nn.ElementwiseOp)):
            raise VerifyError(f"'{self.fn}' is not an elementwise nn op")
        if op_class.scalar is None:
            raise VerifyError(f"'{self.fn}' has no scalar definition (`def scalar(self, x)`)")
        present = self.operation.attributes if self.operation is not None else {}
        attrs = {}
        for decl in op_class.attr_decls:
            if decl.name in present:
                try:
                    attrs[decl.name] = decl.kind.to_python(present[decl.name])
                except ValueError:
                    raise VerifyError(f"attribute '{decl.name}' of '{self.fn}' must be "
                                      f"{decl.kind.description}, got "
                                      f"{present[decl.name]}") from None
        try:
            op = op_class.detached(**attrs)
        except TypeError as error:
            raise VerifyError(str(error)) from None
        op.check_attributes()
        return op

    def scalar_tree(self) -> "scalar.Scalar":
        return self.nn_op().scalar_tree()

    def verify_operands(self, tiles, out):
        super().verify_operands(*tiles, out)

    def reference(self, tiles, out):
        self.compute_into(tiles, out)

    def verify_tiles(self, *tiles):
        *inputs, out = tiles
        op = self.nn_op()
        if len(inputs) != len(op.operand_decls):
            raise VerifyError(f"'{self.fn}' takes {len(op.operand_decls)} operand(s), got "
                              f"{len(inputs)} tile(s)")
        _verify_broadcast(inputs, out)
        # The element types are the nn op's: its result type from its
        # operands' (a comparison gives i1, a select takes an i1 condition).
        operand_types = [TensorType(out.shape, t.dtype) for t in inputs]
        for decl, t in zip(op.operand_decls, operand_types):
            allowed = getattr(decl.constraint, "dtypes", ()) or getattr(op, "element_types", ())
            if allowed and t.dtype not in allowed:
                raise VerifyError(f"operand '{decl.name}' of '{self.fn}' is {t.dtype}; it takes "
                                  f"{' or '.join(allowed)}")
        expected = op.infer_type(*operand_types).dtype
        if out.dtype != expected:
            raise VerifyError(f"'{self.fn}' of {', '.join(t.dtype for t in inputs)} gives "
                              f"{expected}, not {out.dtype}")


class ReduceOp(RegisterTileOp):
    """Base of row reductions: `out` (M x 1) is the reduction of each row
    of `x` (M x N), computed in f32."""

    x: Operand[MemRefOf(*TILE_TYPES, space="private")]
    out: Operand[MemRefOf(*TILE_TYPES, space="private")]

    def verify_tiles(self, x, out):
        _same_dtype(x, out)
        if x.rank != 2 or out.shape != (x.shape[0], 1):
            raise VerifyError(f"reduces the rows of an MxN register tile into an Mx1 one; got "
                              f"{dims(x.shape)} into {dims(out.shape)}")

    def reference(self, x, out):
        out[...] = self.compute(x.astype(np.float32)).reshape(out.shape).astype(out.dtype)

    def compute(self, x: np.ndarray) -> np.ndarray:
        raise NotImplementedError


class ReduceSumOp(ReduceOp, name="reduce_sum"):
    """The sum of each row of a register tile.

    Example: "hw.reduce_sum"(%p, %l) : (memref<64x64xf32, #gpu.address_space<private>>, memref<64x1xf32, #gpu.address_space<private>>) -> ()
    """

    def compute(self, x):
        return x.sum(axis=-1)


class ReduceMaxOp(ReduceOp, name="reduce_max"):
    """The maximum of each row of a register tile.

    Example: "hw.reduce_max"(%s, %m) : (memref<64x64xf32, #gpu.address_space<private>>, memref<64x1xf32, #gpu.address_space<private>>) -> ()
    """

    def compute(self, x):
        return x.max(axis=-1)


# ---------------------------------------------------------------------------
# Elements of an index space: the elementwise and row kernels.


def broadcast_coordinates(coordinates: Sequence, operand_shape: Sequence[int]) -> list:
    """The coordinates of an operand broadcast (NumPy rules) to the space
    of `coordinates`: its dims of 1 at 0, its missing leading dims
    dropped."""
    coordinates = list(coordinates)[len(coordinates) - len(operand_shape):]
    return [0 if size == 1 else c for size, c in zip(operand_shape, coordinates)]


def walked_coordinates(position, shape: Sequence[int], order: Sequence[int], ops=None) -> list:
    """The coordinates in `shape` of flat position `position` of a walk of
    its dims in `order` (row-major over `shape[order[0]], shape[order[1]],
    ...`): with `ops` (div, rem) on IR values, else on integers."""
    div, rem = ops or ((lambda a, b: a // b), (lambda a, b: a % b))
    walked = []
    for extent in reversed([shape[d] for d in order][1:]):
        walked.append(rem(position, extent))
        position = div(position, extent)
    walked.append(position)
    walked.reverse()
    coordinates = [None] * len(shape)
    for d, c in zip(order, walked):
        coordinates[d] = c
    return coordinates


class ElementsOp(KernelOp):
    """Base of the ops that move a 1-d register tile to or from a run of
    elements of an index space: `shape` is the space, walked row-major in
    the order of its dims `order` (all of them, in order, by default; a
    reduction's rows over leading axes walk its kept dims first, then the
    folded ones), `offset` the flat position of the tile's element 0,
    `count` how many of the tile's first elements are in the run. The
    global memref has `shape` or broadcasts to it (NumPy rules); positions
    past the run or past the end of the space are not moved."""

    def walk(self) -> tuple[int, ...]:
        return tuple(self.order) or tuple(range(len(self.shape)))

    def verify_operands(self, tile, buffer, offset):
        if tile.rank != 1:
            raise VerifyError(f"moves a 1-d register tile; got {tile}")
        _same_dtype(tile, buffer)
        if any(s < 0 for s in self.shape):
            raise VerifyError(f"'shape' has a negative size: {list(self.shape)}")
        _verify_broadcast([buffer], MemRefType(tuple(self.shape), buffer.dtype))
        if not 0 <= self.count <= tile.shape[0]:
            raise VerifyError(f"'count' must be in [0, {tile.shape[0]}], got {self.count}")
        if sorted(self.walk()) != list(range(len(self.shape))):
            raise VerifyError(f"'order' must be a permutation of the {len(self.shape)} dims of "
                              f"the space, got {list(self.order)}")

    def run_length(self, tile_length: int) -> int:
        return self.count

    def positions(self, tile_length: int, offset: int) -> list[tuple[int, tuple[int, ...]]]:
        """(tile element, coordinates in the space) of each position moved."""
        size = math.prod(self.shape)
        return [(i, tuple(walked_coordinates(offset + i, self.shape, self.walk())))
                for i in range(self.run_length(tile_length)) if offset + i < size]


class LoadElementsOp(ElementsOp, name="load_elements"):
    """Loads a run of elements of the index space `shape` from global
    memory into a 1-d register tile: element `i` of `dst` is `src` at the
    coordinates of flat position `offset + i`, broadcast into `src`'s shape
    (a bias row, a row statistic, a scalar). Elements of `dst` outside the
    run read zeros. Each thread loads its own elements, so an operand that
    broadcasts is read from global memory per element, and elements whose
    `src` is the space itself, contiguous and aligned, as vectors.

    Example: "hw.load_elements"(%x, %tile, %offset) {shape = array<i64: 7, 33>, count = 33 : i64} : (memref<7x33xf32>, memref<64xf32, #gpu.address_space<private>>, index) -> ()
    """

    src: Operand[MemRefOf(*MAP_TYPES, space="global")]
    dst: Operand[MemRefOf(*MAP_TYPES, space="private")]
    offset: Operand[Index]
    shape: I64ArrayAttr
    count: IntAttr
    order: I64ArrayAttr = ()

    def verify_operands(self, src, dst, offset):
        super().verify_operands(dst, src, offset)

    def reference(self, src, dst, offset):
        dst[...] = 0
        for i, coordinates in self.positions(dst.shape[0], int(offset)):
            dst[i] = src[tuple(broadcast_coordinates(coordinates, src.shape))]


class StoreElementsOp(ElementsOp, name="store_elements"):
    """Stores a 1-d register tile into a run of elements of the index space
    `shape`, which is `dst`'s: element `i` of `src` goes to flat position
    `offset + i` of `dst`; elements outside the run are not stored. With
    `origin` (an index per dim of `dst`), the space is a box of `dst` placed
    there (a tile of a transpose's result): the element at coordinates `c`
    of the box goes to `dst[origin + c]`, and elements past the end of `dst`
    are not stored.

    Example: "hw.store_elements"(%tile, %y, %offset) {shape = array<i64: 7, 33>, count = 33 : i64} : (memref<64xf32, #gpu.address_space<private>>, memref<7x33xf32>, index) -> ()
    """

    src: Operand[MemRefOf(*MAP_TYPES, space="private")]
    dst: Operand[MemRefOf(*MAP_TYPES, space="global")]
    offset: Operand[Index]
    origin: Variadic[Operand[Index]]
    shape: I64ArrayAttr
    count: IntAttr
    order: I64ArrayAttr = ()

    def verify_operands(self, src, dst, offset, origin):
        if origin:
            if len(origin) != dst.rank or len(self.shape) != dst.rank:
                raise VerifyError(f"a box of {dst} has {dst.rank} dims and an origin of as "
                                  f"many indices; got a {dims(self.shape)} box at "
                                  f"{len(origin)} indices")
        elif dst.shape != tuple(self.shape):
            raise VerifyError(f"stores into {dst}, whose shape is not the space "
                              f"{dims(self.shape)}")
        ElementsOp.verify_operands(self, src, MemRefType(tuple(self.shape), dst.dtype), offset)

    def reference(self, src, dst, offset, origin):
        for i, coordinates in self.positions(src.shape[0], int(offset)):
            placed = tuple(c + int(o) for c, o in zip(coordinates, origin)) if origin \
                else coordinates
            if all(c < size for c, size in zip(placed, dst.shape)):
                dst[placed] = src[i]


# ---------------------------------------------------------------------------
# Data movement: runs of elements read through an index map.


def _fill_value(value: float, dtype: str):
    """`value` as an element of `dtype` (a boolean is `value != 0`)."""
    if dtype == "i1":
        return bool(value)
    if dtype in ("i32", "i64"):
        return int(value)
    return value


class GatherElementsOp(ElementsOp, name="gather_elements"):
    """Loads a run of elements of the index space `shape` into a 1-d
    register tile, each from the element of `src` that an index map picks:
    source dim `d` is at `c[dims[d]] * strides[d] + starts[d]` for the
    space coordinates `c` of the element's position (`dims[d] = -1`: at
    `starts[d]`). With `indices` (a global memref of i32 or i64), source
    dim `axis` is at the index `indices` holds at the space coordinates
    `c[dims[axis]]`, `c[dims[axis] + 1]`, ... (one per dim of `indices`),
    clamped into the dim (as nn.gather does). A position whose source
    coordinates fall outside `src` takes `value` where the op has one
    (padding; `value != 0` for booleans) and is left as it is where it has
    none, so that several gathers fill one tile (a concatenation); elements
    outside the run are left as they are. A transpose, a strided slice, a
    pad, a broadcast, a concatenation's part, a pooling window's tap and a
    table lookup are such maps. `src` is in global memory, or a shared tile
    (a transpose's, read across its rows; past its end is outside it too).
    Each thread reads its own elements, one by one.

    Example: "hw.gather_elements"(%x, %tile, %offset) {shape = array<i64: 33, 7>, count = 256 : i64, dims = array<i64: 1, 0>} : (memref<7x33xf32>, memref<256xf32, #gpu.address_space<private>>, index) -> ()
    """

    src: Operand[MemRefOf(*MAP_TYPES)]
    dst: Operand[MemRefOf(*MAP_TYPES, space="private")]
    offset: Operand[Index]
    indices: Optional[Operand[MemRefOf("i32", "i64", space="global")]]
    shape: I64ArrayAttr
    count: IntAttr
    dims: I64ArrayAttr
    starts: I64ArrayAttr = ()
    strides: I64ArrayAttr = ()
    axis: IntAttr = 0
    value: F64Attr = None
    order: I64ArrayAttr = ()

    def source_starts(self, rank: int) -> tuple[int, ...]:
        return tuple(self.starts) or (0,) * rank

    def source_strides(self, rank: int) -> tuple[int, ...]:
        return tuple(self.strides) or (1,) * rank

    def verify_operands(self, src, dst, offset, indices):
        if dst.rank != 1:
            raise VerifyError(f"moves a 1-d register tile; got {dst}")
        if src.space == "private":
            raise VerifyError(f"reads {src} in registers; it gathers from global or shared "
                              "memory")
        _same_dtype(src, dst)
        space = len(self.shape)
        if any(s < 0 for s in self.shape):
            raise VerifyError(f"'shape' has a negative size: {list(self.shape)}")
        if not 0 <= self.count <= dst.shape[0]:
            raise VerifyError(f"'count' must be in [0, {dst.shape[0]}], got {self.count}")
        if sorted(self.walk()) != list(range(space)):
            raise VerifyError(f"'order' must be a permutation of the {space} dims of the "
                              f"space, got {list(self.order)}")
        for name, values in (("dims", self.dims), ("starts", self.starts),
                             ("strides", self.strides)):
            if name == "dims" or values:
                if len(values) != src.rank:
                    raise VerifyError(f"'{name}' must have {src.rank} elements (one per dim "
                                      f"of {src}), got {len(values)}")
        for d, dim in enumerate(self.dims):
            width = indices.rank if indices is not None and d == self.axis else 1
            if dim != -1 and not 0 <= dim <= space - width:
                raise VerifyError(f"'dims' maps source dim {d} to dim {dim} of a space of "
                                  f"rank {space}")
        if indices is not None and not 0 <= self.axis < src.rank:
            raise VerifyError(f"'axis' {self.axis} is not a dim of {src}")

    def inside_dim(self, d: int, size: int) -> bool:
        """Whether source dim `d` (of `size`) is inside the source at every
        position of the space (a transpose's, a broadcast's)."""
        start = self.source_starts(len(self.dims))[d]
        if self.dims[d] == -1:
            return 0 <= start < size
        last = (self.shape[self.dims[d]] - 1) * self.source_strides(len(self.dims))[d] + start
        return start >= 0 and last < size

    def source(self, coordinates, src_shape, read_index=None, ops=None):
        """The source coordinates of the space coordinates `coordinates`
        (integers, or IR values with `ops` = (add, mul, clamp))."""
        add, mul, clamp = ops or ((lambda a, b: a + b), (lambda a, b: a * b),
                                  (lambda a, size: min(max(int(a), 0), size - 1)))
        rank = len(src_shape)
        found = []
        for d, (dim, start, stride) in enumerate(zip(self.dims, self.source_starts(rank),
                                                     self.source_strides(rank))):
            if read_index is not None and d == self.axis:
                found.append(clamp(read_index(coordinates[dim:] if dim >= 0 else []),
                                   src_shape[d]))
            elif dim == -1:
                found.append(start)
            else:
                found.append(add(mul(coordinates[dim], stride), start))
        return found

    def reference(self, src, dst, offset, indices):
        read_index = None
        if indices is not None:
            def read_index(coordinates):
                return indices[tuple(coordinates[:indices.ndim])]
        for i, coordinates in self.positions(dst.shape[0], int(offset)):
            found = self.source(coordinates, src.shape, read_index)
            if all(0 <= c < size for c, size in zip(found, src.shape)):
                dst[i] = src[tuple(found)]
            elif self.value is not None:
                dst[i] = _fill_value(self.value, self.operand_types[1].dtype)


class IndexElementsOp(ElementsOp, name="index_elements"):
    """A run of elements of the index space `shape` as a 1-d register
    tile of each position's coordinate along `axis` (nn.iota), in the
    tile's element type; elements outside the run are left as they are.

    Example: "hw.index_elements"(%tile, %offset) {shape = array<i64: 4, 8>, count = 256 : i64, axis = 1 : i64} : (memref<256xi64, #gpu.address_space<private>>, index) -> ()
    """

    dst: Operand[MemRefOf(*MAP_TYPES, space="private")]
    offset: Operand[Index]
    shape: I64ArrayAttr
    count: IntAttr
    axis: IntAttr
    order: I64ArrayAttr = ()

    def verify_operands(self, dst, offset):
        super().verify_operands(dst, MemRefType((), dst.dtype), offset)
        if not 0 <= self.axis < len(self.shape):
            raise VerifyError(f"'axis' {self.axis} is not a dim of the space {dims(self.shape)}")

    def reference(self, dst, offset):
        for i, coordinates in self.positions(dst.shape[0], int(offset)):
            dst[i] = coordinates[self.axis]


# The folds of `hw.fold_axis`.
AXIS_FOLDS = ("prefix_sum", "argmax")


class FoldAxisOp(ElementsOp, name="fold_axis"):
    """A run of elements of the index space `shape` as a 1-d register
    tile, each a fold of `src` along its dim `axis` at the position's
    other coordinates (the space is `src`'s shape, or it without `axis`,
    or with `axis` of size 1): `prefix_sum` is the sum of the elements up
    to the position's own coordinate along `axis` (nn.cumsum: floats in
    f32, rounded once, integers in their type, wrapping); `argmax` the
    index of the first greatest element of the whole axis, the first NaN
    where there is one (nn.argmax), in the tile's integer type. Each
    thread walks the axis for each of its elements. Elements outside the
    run are left as they are.

    Example: "hw.fold_axis"(%x, %tile, %offset) {shape = array<i64: 4>, count = 256 : i64, axis = 1 : i64, kind = "argmax"} : (memref<4x10xf32>, memref<256xi64, #gpu.address_space<private>>, index) -> ()
    """

    src: Operand[MemRefOf(*MAP_TYPES, space="global")]
    dst: Operand[MemRefOf(*MAP_TYPES, space="private")]
    offset: Operand[Index]
    shape: I64ArrayAttr
    count: IntAttr
    axis: IntAttr
    kind: EnumAttr(*AXIS_FOLDS)
    order: I64ArrayAttr = ()

    def verify_operands(self, src, dst, offset):
        super().verify_operands(dst, MemRefType((), dst.dtype), offset)
        if not 0 <= self.axis < src.rank:
            raise VerifyError(f"'axis' {self.axis} is not a dim of {src}")
        others = tuple(s for d, s in enumerate(src.shape) if d != self.axis)
        space = tuple(self.shape)
        if self.kind == "prefix_sum":
            fits = space == src.shape
        else:
            fits = space == others or (len(space) == src.rank and space[self.axis] == 1
                                       and space[:self.axis] + space[self.axis + 1:] == others)
        if not fits:
            raise VerifyError(f"the space {dims(space)} is not that of a {self.kind} of {src} "
                              f"along dim {self.axis}")
        if self.kind == "prefix_sum":
            _same_dtype(src, dst)
        elif dst.dtype not in ("i32", "i64"):
            raise VerifyError(f"argmax gives indices: its tile is of i32 or i64, not {dst.dtype}")

    def along(self, coordinates, rank: int, k):
        """The source coordinates at `k` along the axis."""
        coordinates = list(coordinates)
        if len(coordinates) == rank:
            coordinates[self.axis] = k
        else:
            coordinates.insert(self.axis, k)
        return coordinates

    def reference(self, src, dst, offset):
        for i, coordinates in self.positions(dst.shape[0], int(offset)):
            line = src[tuple(self.along(coordinates, src.ndim, slice(None)))]
            if self.kind == "argmax":
                dst[i] = np.argmax(line.astype(np.float32) if line.dtype.kind == "f" else line)
            elif src.dtype.kind in "iu":
                dst[i] = np.sum(line[:coordinates[self.axis] + 1], dtype=src.dtype)
            else:
                dst[i] = np.sum(line[:coordinates[self.axis] + 1].astype(np.float32))


# ---------------------------------------------------------------------------
# Convolutions: the window of each output element (the direct kernel) and
# boxes of the im2col matrix (the implicit GEMM kernel).

CONV_LAYOUTS = ("NCHW", "NHWC")


def _to_nchw(values: Sequence, layout: str) -> tuple:
    """Four coordinates (or sizes) in `layout`'s order, in NCHW's."""
    n, a, b, c = values
    return (n, a, b, c) if layout == "NCHW" else (n, c, a, b)


def _from_nchw(values: Sequence, layout: str) -> tuple:
    """Four NCHW coordinates (or sizes) in `layout`'s order."""
    n, c, h, w = values
    return (n, c, h, w) if layout == "NCHW" else (n, h, w, c)


class ConvGeometry:
    """What the convolution ops share: `strides`, `padding` (top, left:
    where a window starts above and left of its output element's scaled
    position), `dilations` and `layout` of the input and the result
    (NCHW, or NHWC); the filter is OIHW."""

    def verify_geometry(self, x, weight) -> None:
        for name, values, least in (("strides", self.strides, 1),
                                    ("padding", self.padding, 0),
                                    ("dilations", self.dilations, 1)):
            if len(values) != 2 or min(values) < least:
                raise VerifyError(f"'{name}' must be 2 values >= {least}, got {list(values)}")
        _same_dtype(x, weight)
        if x.rank != 4 or weight.rank != 4:
            raise VerifyError(f"convolves a rank-4 input with a rank-4 OIHW filter; got {x} "
                              f"and {weight}")

    def input_position(self, oh, ow, kh, kw, ops=None) -> tuple:
        """The input row and column of tap (kh, kw) of output (oh, ow):
        integers, or IR values with `ops` = (add, mul) (negative above and
        left of the input)."""
        add, mul = ops or ((lambda a, b: a + b), (lambda a, b: a * b))
        (sh, sw), (dh, dw), (top, left) = self.strides, self.dilations, self.padding
        return (add(add(mul(oh, sh), mul(kh, dh)), -top),
                add(add(mul(ow, sw), mul(kw, dw)), -left))


class ConvElementsOp(ElementsOp, ConvGeometry, name="conv_elements"):
    """Loads a run of elements of the index space `shape`, a convolution's
    result (N, O, OH, OW in `layout`'s order), into a 1-d f32 register
    tile, each the f32 sum of the products of its window: element (n, o,
    oh, ow) is the sum over the input channels c of its group (`groups`
    of them: c from g * C/groups, g = o / (O/groups)) and the taps (kh,
    kw) of `x[n, c, oh * stride + kh * dilation - pad, ...] * weight[o, c
    - g * C/groups, kh, kw]`, the input read as zero outside it (padding),
    plus `bias[o]` where the op has one; products are of the operands
    widened to f32. Elements outside the run are left as they are. Each
    thread computes its own elements, walking the window: the direct
    kernel of convolutions on CUDA cores.

    Example: "hw.conv_elements"(%x, %w, %acc, %offset) {shape = array<i64: 1, 4, 6, 6>, count = 144 : i64, strides = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilations = array<i64: 1, 1>} : (memref<1x3x8x8xf32>, memref<4x3x3x3xf32>, memref<256xf32, #gpu.address_space<private>>, index) -> ()
    """

    x: Operand[MemRefOf(*TILE_TYPES, space="global")]
    weight: Operand[MemRefOf(*TILE_TYPES, space="global")]
    dst: Operand[MemRefOf("f32", space="private")]
    offset: Operand[Index]
    bias: Optional[Operand[MemRefOf(*TILE_TYPES, space="global")]]
    shape: I64ArrayAttr
    count: IntAttr
    strides: I64ArrayAttr = (1, 1)
    padding: I64ArrayAttr = (0, 0)
    dilations: I64ArrayAttr = (1, 1)
    groups: IntAttr = 1
    layout: EnumAttr(*CONV_LAYOUTS) = "NCHW"
    order: I64ArrayAttr = ()

    def verify_operands(self, x, weight, dst, offset, bias):
        ElementsOp.verify_operands(self, dst, MemRefType((), "f32"), offset)
        self.verify_geometry(x, weight)
        if self.order:
            raise VerifyError("walks its space in order ('order' is not taken)")
        if len(self.shape) != 4:
            raise VerifyError(f"its space is a convolution's result (4 dims), got "
                              f"{dims(self.shape)}")
        n, channels, _, _ = _to_nchw(x.shape, self.layout)
        out_n, out, _, _ = _to_nchw(self.shape, self.layout)
        o, per_group, _, _ = weight.shape
        if self.groups < 1 or channels % self.groups or o % self.groups \
                or per_group * self.groups != channels:
            raise VerifyError(f"{groups_words(self.groups)} of {x} ({channels} channels) do "
                              f"not match the filter {weight}")
        if out_n != n or out != o:
            raise VerifyError(f"the space {dims(self.shape)} is not a {self.layout} result of "
                              f"{n} images of the filter's {o} channels")
        if bias is not None:
            _same_dtype(x, bias)
            if bias.shape != (o,):
                raise VerifyError(f"the bias {bias} is not a vector of the {o} output channels")

    def window_sum(self, x, weight, bias, coordinates) -> np.float32:
        """The element at space coordinates `coordinates` (NumPy arrays)."""
        n, o, oh, ow = _to_nchw(coordinates, self.layout)
        x = np.moveaxis(x, 3, 1) if self.layout == "NHWC" else x
        _, _, height, width = x.shape
        out, per_group, kh_size, kw_size = weight.shape
        g = o // (out // self.groups)
        total = np.float32(0.0)
        for kh in range(kh_size):
            for kw in range(kw_size):
                ih, iw = self.input_position(oh, ow, kh, kw)
                if not (0 <= ih < height and 0 <= iw < width):
                    continue
                taps = x[n, g * per_group:(g + 1) * per_group, ih, iw].astype(np.float32)
                total += np.float32(np.dot(taps, weight[o, :, kh, kw].astype(np.float32)))
        if bias is not None:
            total += np.float32(bias[o])
        return total

    def reference(self, x, weight, dst, offset, bias):
        for i, coordinates in self.positions(dst.shape[0], int(offset)):
            dst[i] = self.window_sum(x, weight, bias, coordinates)


class Im2colOp(KernelOp, ConvGeometry, name="im2col"):
    """Gathers a box of a convolution's im2col matrix into a shared tile:
    the matrix of M = N*OH*OW rows, the output pixels (n, oh, ow)
    row-major over `space` = [N, OH, OW], by K = C*KH*KW columns, the taps
    (c, kh, kw) row-major over the input's C channels and `window` =
    [KH, KW] (an OIHW filter's order); its element (m, k) is `x[n, c, oh *
    stride + kh * dilation - pad, ...]` (x in `layout`), zero in the
    padding. `dst[i, j]` is the element (row + i, col + j), zero past the
    matrix's ends: the A operand of an implicit GEMM's K step. With
    `transposed`, the tile holds the box transposed: `dst[i, j]` is the
    element (row + j, col + i), taps by pixels (the B operand of a GEMM
    whose rows are the output channels: an NCHW result's). Each thread
    gathers its elements one by one; the tile may be read once a barrier
    follows.

    Example: "hw.im2col"(%x, %a, %row, %k) {space = array<i64: 1, 8, 8>, window = array<i64: 3, 3>, padding = array<i64: 1, 1>, layout = "NHWC"} : (memref<1x8x8x16xf16>, memref<64x32xf16, #gpu.address_space<workgroup>>, index, index) -> ()
    """

    x: Operand[MemRefOf(*TILE_TYPES, space="global")]
    dst: Operand[MemRefOf(*TILE_TYPES, space="workgroup")]
    row: Operand[Index]
    col: Operand[Index]
    space: I64ArrayAttr
    window: I64ArrayAttr
    strides: I64ArrayAttr = (1, 1)
    padding: I64ArrayAttr = (0, 0)
    dilations: I64ArrayAttr = (1, 1)
    layout: EnumAttr(*CONV_LAYOUTS) = "NCHW"
    transposed: BoolAttr = False

    def verify_operands(self, x, dst, row, col):
        self.verify_geometry(x, MemRefType((1, 1, 1, 1), x.dtype))
        _same_dtype(x, dst)
        if dst.rank != 2:
            raise VerifyError(f"gathers a box into a 2-d shared tile; got {dst}")
        if len(self.space) != 3 or min(self.space) < 1 or len(self.window) != 2 \
                or min(self.window) < 1:
            raise VerifyError(f"'space' is [N, OH, OW] and 'window' [KH, KW], each >= 1; got "
                              f"{list(self.space)} and {list(self.window)}")
        if self.space[0] != x.shape[0]:
            raise VerifyError(f"the space's {self.space[0]} images are not the {x.shape[0]} "
                              f"of {x}")

    def matrix_shape(self, x_shape) -> tuple[int, int]:
        """(M, K) of the im2col matrix of an input of `x_shape`."""
        channels = _to_nchw(x_shape, self.layout)[1]
        return math.prod(self.space), channels * math.prod(self.window)

    def reference(self, x, dst, row, col):
        rows, cols = self.matrix_shape(x.shape)
        nchw = np.moveaxis(x, 3, 1) if self.layout == "NHWC" else x
        _, _, height, width = nchw.shape
        kh_size, kw_size = self.window
        dst[...] = 0
        box = dst.T if self.transposed else dst
        for i in range(box.shape[0]):
            m = int(row) + i
            if m >= rows:
                break
            n, oh, ow = walked_coordinates(m, self.space, range(3))
            for j in range(box.shape[1]):
                k = int(col) + j
                if k >= cols:
                    break
                c, kh, kw = k // (kh_size * kw_size), k // kw_size % kh_size, k % kw_size
                ih, iw = self.input_position(oh, ow, kh, kw)
                if 0 <= ih < height and 0 <= iw < width:
                    box[i, j] = nchw[n, c, ih, iw]


def groups_words(groups: int) -> str:
    return "one group" if groups == 1 else f"{groups} groups"


# The steps of a block reduction and their identities.
REDUCTION_COMBINES = {"add": 0.0, "mul": 1.0, "maximum": -math.inf, "minimum": math.inf}

# Element types a block reduction folds: floats in f32, the integers of nn
# tensors in their own type (wrapping, as nn's integer sums do).
REDUCE_TYPES = TILE_TYPES + ("i32", "i64")


def reduction_identity(combine: str, dtype: str) -> float | int:
    """The start of a fold of `dtype` elements: the combine's identity, an
    integer type's extreme for maximum and minimum."""
    if dtype in TILE_TYPES:
        return REDUCTION_COMBINES[combine]
    info = np.iinfo(np.dtype("int32" if dtype == "i32" else "int64"))
    return {"add": 0, "mul": 1, "maximum": int(info.min), "minimum": int(info.max)}[combine]


class BlockReduceOp(KernelOp, name="block_reduce"):
    """Folds the first `count` elements of a 1-d register tile with `combine` (add, mul, maximum, minimum; the nn
    reductions' steps) into a one-element register tile that every thread
    holds: floats in f32, rounded once to `out`'s type; i32 and i64 in
    their own type (`out`'s, wrapping; maximum and minimum signed); an
    empty fold gives the step's identity. On the GPU each thread folds its elements, each warp
    its threads' by shuffles (shfl.sync.bfly; an i64 as its two halves), and a block of several
    warps their totals through `scratch`, a shared vector (f32 for floats,
    the integer type for integers) of at least
    one element per warp, between barriers (each warp shuffles them again): the op writes and reads
    `scratch` and synchronises the block before and after, so consecutive
    reductions may share it. A block of one warp needs no scratch.

    Example: "hw.block_reduce"(%x, %max, %scratch) {combine = "maximum", count = 1000 : i64} : (memref<1024xf32, #gpu.address_space<private>>, memref<1xf32, #gpu.address_space<private>>, memref<8xf32, #gpu.address_space<workgroup>>) -> ()
    """

    x: Operand[MemRefOf(*REDUCE_TYPES, space="private")]
    out: Operand[MemRefOf(*REDUCE_TYPES, space="private")]
    scratch: Variadic[Operand[MemRefOf("f32", "i32", "i64", space="workgroup")]]
    combine: EnumAttr(*REDUCTION_COMBINES)
    count: IntAttr

    def verify_operands(self, x, out, scratch):
        if x.rank != 1 or math.prod(out.shape) != 1:
            raise VerifyError(f"folds a 1-d register tile into a tile of one element; got "
                              f"{x} into {out}")
        _same_dtype(x, out)
        folded = self.folded_type(x.dtype)
        if len(scratch) > 1 or scratch and (scratch[0].rank != 1 or scratch[0].dtype != folded):
            raise VerifyError(f"takes at most one scratch tile, a shared {folded} vector "
                              f"(the type {x.dtype} elements are folded in)")
        if not 0 <= self.count <= x.shape[0]:
            raise VerifyError(f"'count' must be in [0, {x.shape[0]}], got {self.count}")

    @staticmethod
    def folded_type(dtype: str) -> str:
        """The type the fold computes in: f32 for floats, an integer's own."""
        return "f32" if dtype in TILE_TYPES else dtype

    def fold(self, values: np.ndarray) -> float | int:
        integer = values.dtype.kind == "i"
        if values.size == 0:
            return reduction_identity(self.combine, "f32" if not integer else
                                      "i32" if values.dtype.itemsize == 4 else "i64")
        step = {"add": np.add, "mul": np.multiply, "maximum": np.maximum,
                "minimum": np.minimum}[self.combine]
        if integer:  # in the type itself, wrapping
            return step.reduce(values, dtype=values.dtype)
        return step.reduce(values.astype(np.float32))

    def reference(self, x, out, scratch):
        out[...] = np.asarray(self.fold(x[:self.count])).astype(out.dtype)


# ---------------------------------------------------------------------------
# Stores with an epilogue.


class StoreOp(KernelOp, name="store"):
    """Stores a register tile into global memory at `indices` (one per dim
    of `dst`; elements past its end are skipped), applying an epilogue on
    the way: each element becomes `epilogue(acc, extras...)`, a scalar
    `func.func` called with the element and, for each of `extras`, the
    element of that global memref at the same position (a memref of
    `dst`'s shape: a residual), at the same column (a vector: a bias) or
    broadcast (a memref of `dst`'s rank whose other dims are 1: at index 0
    of those, such as a [1, O, 1] value per row of an NCHW convolution's
    [N, O, OH*OW] result). Without an epilogue the element is converted to `dst`'s element type.
    The operands of the two variadic groups are counted by
    `operandSegmentSizes`.

    Example: "hw.store"(%acc, %c, %bias, %row, %col) {epilogue = @bias_relu, operandSegmentSizes = array<i32: 1, 1, 1, 2>} : (memref<128x128xf32, #gpu.address_space<private>>, memref<300x500xf16>, memref<500xf16>, index, index) -> ()
    """

    src: Operand[MemRefOf(*DATA_TYPES, space="private")]
    dst: Operand[MemRefOf(*DATA_TYPES, space="global")]
    extras: Variadic[Operand[MemRefOf(*TILE_TYPES, space="global")]]
    indices: Variadic[Operand[Index]]
    epilogue: SymbolRefAttr = None

    def verify_all(self):
        if "operandSegmentSizes" not in self.operation.attributes:
            raise VerifyError("needs 'operandSegmentSizes' (how many operands are extras and "
                              "how many indices)")
        super().verify_all()

    def verify_operands(self, src, dst, extras, indices):
        if src.rank != 2 or dst.rank < 2:
            raise VerifyError(f"stores a 2-d register tile into a global memref of rank >= 2; "
                              f"got {src} into {dst}")
        _check_index_count("hw.store", dst.rank, len(indices), f"one per dim of {dst}")
        if src.dtype != dst.dtype and not {src.dtype, dst.dtype} <= set(TILE_TYPES):
            raise VerifyError(f"stores {src.dtype} into {dst.dtype}; integer tiles are stored "
                              "into memrefs of their own type")
        for index, extra in enumerate(extras):
            if extra.rank == 1 and extra.shape[0] == dst.shape[-1] or extra.shape == dst.shape:
                continue
            if extra.rank == dst.rank and all(e in (1, d) for e, d in zip(extra.shape,
                                                                          dst.shape)):
                continue
            raise VerifyError(f"extra #{index} {extra} is neither a vector of {dst}'s columns "
                              f"({dst.shape[-1]}) nor of its shape (or its rank, broadcast)")
        if extras and self.epilogue is None:
            raise VerifyError("has extras but no epilogue to use them")
        if self.epilogue is None or self.operation is None:
            return
        func = lookup_function(self.operation, self.epilogue)
        if func is None:
            raise VerifyError(f"epilogue @{self.epilogue} is not a function of the module")
        ftype = function_type(func)
        expected = ["f32"] + [e.dtype for e in extras]
        given = [str(t) for t in ftype.inputs]
        results = [str(t) for t in ftype.results]
        if given != expected or results != [dst.dtype]:
            raise VerifyError(f"epilogue @{self.epilogue} has type ({', '.join(given)}) -> "
                              f"({', '.join(results)}); expected ({', '.join(expected)}) -> "
                              f"{dst.dtype}")

    def reference(self, src, dst, extras, indices):
        if self.epilogue is not None:
            raise NotImplementedError("hw.store with an epilogue has no NumPy reference (its "
                                      "epilogue is MLIR code)")
        row, col = (int(i) for i in indices[-2:])
        lead = tuple(int(i) for i in indices[:-2])
        rows = max(0, min(src.shape[0], dst.shape[-2] - row))
        cols = max(0, min(src.shape[1], dst.shape[-1] - col))
        dst[lead + (slice(row, row + rows), slice(col, col + cols))] = \
            src[:rows, :cols].astype(dst.dtype)
