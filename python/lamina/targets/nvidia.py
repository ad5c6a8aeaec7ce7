"""The NVIDIA GPU model: what Lamina knows of each architecture it targets.

One module holds the hardware facts that the GPU lowerings
(`convert-nn-to-hw`, `convert-hw-to-nvgpu`), the checker (`hw-check`), the
CUDA target and the tile cost models read, so that none of them keeps a
constant of its own:

* the architectures (`ARCHITECTURES`, `architecture(name)`, the one check
  of a chip's name): compute capability, the PTX ISA version the code
  declares (`ptx_features`), SM count of the reference part, shared
  memory and register budgets, the alignment of shared tiles, and the
  shared memory each block leaves to the system (`RESERVED_SHARED_BYTES`);
* the features and the architecture and PTX version each needs
  (`FEATURES`: cp.async, mma.sync, TMA, mbarriers, wgmma);
* the tensor cores: mma.sync's shapes and operand types per element type
  (`mma_sync_shape`), what wgmma takes (`wgmma_problem` for hw.mma,
  `wgmma_contract_problem` for hw.contract), the tf32
  products of an f32 product (`TF32_PRODUCTS`: three for 3xTF32) and the
  registers an MMA tile holds (`mma_sync_registers`);
* the register fragment layouts: where each thread holds its elements of
  a register tile (`register_layout`: mma.sync's accumulator, wgmma's,
  vectors of a 1-d tile the block's threads divide (`VectorLayout`), one
  element held by every thread (`ReplicatedLayout`), round robin
  otherwise) and the bank swizzle of shared tiles
  (`BankSwizzle`). The layouts are index arithmetic written once over an
  `Arithmetic`: on Python integers (`INTEGERS`, for tests and models) or,
  in `convert-hw-to-nvgpu`, on the IR's index values;
* copies and TMA: the chunks cp.async moves (`chunk_width`) and the TMA
  boxes (`tma_box`, `tma_box_problem`, `SWIZZLE_BYTES`);
* occupancy: how many blocks of a kernel an SM holds (`occupancy`);
* the shapes of the elementwise and row kernels: threads per block and
  elements per thread (`elementwise_kernel_shape`, `row_kernel_shape`).

The module imports nothing of Lamina but `lamina.types`: every layer may
read it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from lamina.types import numpy_dtype

# Threads of a warp and of a warpgroup (wgmma's four warps).
WARP = 32
WARPGROUP = 128
# The largest block: 32 warps.
MAX_THREADS = 1024
# 32-bit registers a thread may use.
REGISTERS_PER_THREAD = 255
# Registers are allocated to warps in units of 256.
REGISTER_UNIT = 256
# Shared memory an SM reserves for the system in each block.
RESERVED_SHARED_BYTES = 1024
# mbarriers take 8 bytes of static shared memory each.
MBARRIER_BYTES = 8


@dataclass(frozen=True)
class Architecture:
    """What Lamina uses of an NVIDIA GPU architecture."""

    name: str
    # The compute capability as a number (80, 90) and its PTX ISA version.
    sm: int
    ptx_version: tuple[int, int]
    # Shared memory a block may use (the opt-in maximum), in bytes.
    shared_memory_bytes: int
    # Streaming multiprocessors of the reference part (A100, H100/H200).
    sms: int
    # Architecture-specific features (sm_90a: wgmma).
    specific: bool = False
    # What one SM holds at once: shared memory (bytes), 32-bit registers,
    # threads and blocks.
    shared_memory_per_sm: int = 164 * 1024
    registers_per_sm: int = 65536
    threads_per_sm: int = 2048
    blocks_per_sm: int = 32
    # The alignment in bytes of shared tiles and of the block's dynamic
    # shared memory: 1024 where TMA fills 128-byte-swizzled boxes.
    shared_alignment: int = 128

    @property
    def ptx(self) -> str:
        return f"{self.ptx_version[0]}.{self.ptx_version[1]}"

    def supports(self, sm: int, specific: bool, ptx: tuple[int, int]) -> bool:
        """Whether code needing compute capability `sm` (this architecture
        only when `specific`) and PTX `ptx` runs here."""
        return (self.sm >= sm and self.ptx_version >= ptx
                and (self.specific or not specific))


ARCHITECTURES = {
    "sm_80": Architecture("sm_80", 80, (7, 0), 163 * 1024, 108),
    "sm_89": Architecture("sm_89", 89, (8, 1), 99 * 1024, 142, shared_memory_per_sm=100 * 1024,
                          threads_per_sm=1536, blocks_per_sm=24),
    "sm_90a": Architecture("sm_90a", 90, (8, 0), 227 * 1024, 132, specific=True,
                           shared_memory_per_sm=228 * 1024, shared_alignment=1024),
}


def architecture(name: str, error: type[Exception] = ValueError) -> Architecture:
    """The architecture called `name`; raises `error` (a ValueError, or the
    caller's kind, e.g. a pass's PassFailure) naming the known ones."""
    if name not in ARCHITECTURES:
        raise error(f"unknown CUDA architecture '{name}' (known: {', '.join(ARCHITECTURES)})")
    return ARCHITECTURES[name]


def ptx_features(chip: str) -> str:
    """The PTX ISA version an architecture's code declares (NVVM target features)."""
    major, minor = architecture(chip).ptx_version
    return f"+ptx{major}{minor}"


def shared_alignment(chip: str) -> int:
    """The alignment in bytes of shared tiles, and of the block's dynamic
    shared memory (see gpu-extern-dynamic-shared-memory): 1024 on sm_90a,
    for 128-byte-swizzled TMA boxes, else 128."""
    return architecture(chip).shared_alignment


@dataclass(frozen=True)
class Feature:
    """A hardware feature and what it needs: compute capability,
    architecture-specific or not, PTX version, the PTX instructions."""

    sm: int
    specific: bool
    ptx: tuple[int, int]
    instructions: str

    def problem(self, arch: Architecture) -> str | None:
        """What `arch` lacks for the feature ("sm_90a and PTX 8.0
        (wgmma.mma_async)"), or None when it has it."""
        if arch.supports(self.sm, self.specific, self.ptx):
            return None
        return (f"sm_{self.sm}{'a' if self.specific else ''} and PTX {self.ptx[0]}.{self.ptx[1]} "
                f"({self.instructions})")


FEATURES = {
    "cp.async": Feature(80, False, (7, 0), "cp.async"),
    "mma.sync": Feature(80, False, (7, 0), "ldmatrix + mma.sync"),
    "tma": Feature(90, False, (8, 0), "cp.async.bulk.tensor"),
    "mbarrier": Feature(90, False, (7, 8), "mbarrier.try_wait.parity"),
    "wgmma": Feature(90, True, (8, 0), "wgmma.mma_async"),
}


def dtype_bytes(dtype: str) -> int:
    return numpy_dtype(dtype).itemsize


# ---------------------------------------------------------------------------
# Tensor cores.

# mma.sync's accumulator fragment: 16 rows by 8 columns (m16n8kK).
MMA_M, MMA_N = 16, 8


@dataclass(frozen=True)
class MmaShape:
    """One mma.sync: m x n x k and the PTX type of its operands."""

    m: int
    n: int
    k: int
    ptx_type: str


# Per operand element type (f32 operands are multiplied as tf32).
MMA_SYNC_SHAPES = {
    "f16": MmaShape(MMA_M, MMA_N, 16, "f16"),
    "bf16": MmaShape(MMA_M, MMA_N, 16, "bf16"),
    "f32": MmaShape(MMA_M, MMA_N, 8, "tf32"),
}


def mma_sync_shape(dtype: str) -> MmaShape:
    return MMA_SYNC_SHAPES[dtype]


# f32 products on tensor cores: mma.sync's tf32 products each f32 product
# takes. Accurate to f32 (3xTF32: each operand split into a tf32 part
# and a tf32 residual, three products), or one where tf32 is allowed.
TF32_PRODUCTS = {"3xtf32": 3, "tf32_rounded": 1, "tf32": 1}

# 32-bit registers of a thread that an MMA kernel's accumulator and one
# k-step's operand fragments may take, leaving the rest of
# REGISTERS_PER_THREAD to addresses, loop state and the epilogue (ptxas
# spills nothing at 128x128 f16 tiles: 128 + 32).
MMA_TILE_REGISTERS = 160


def mma_sync_registers(rows: int, cols: int, threads: int, products: int = 1) -> int:
    """The 32-bit registers a thread holds for an mma.sync of a rows x cols
    block tile: its share of the f32 accumulator (mma.sync's layout over
    the block's warps, `register_layout`) and one k-step's fragments of A
    (4 registers per 16-row fragment) and B (2 per 8-column fragment), of
    f16, bf16 and tf32 alike, twice over when the products are 3xTF32's
    (big and small parts)."""
    layout = register_layout((rows, cols), threads)
    fragments = 4 * layout.frag_rows + 2 * layout.frag_cols \
        if isinstance(layout, AccumulatorLayout) else 0
    return rows * cols // threads + fragments * (2 if products > 1 else 1)


# The widest TMA box row wgmma reads swizzled, in bytes.
SWIZZLE_BYTES = 128
# A TMA box's rows: at most 256 of them, each a multiple of 16 bytes (as
# the global memref's rows must be).
TMA_MAX_ROWS = 256
TMA_ROW_ALIGNMENT = 16


def wgmma_problem(a, c, da, db, threads: int, transposed: bool = False) -> str | None:
    """Why an MMA cannot be a wgmma, or None when it can: `a` and `c` the
    A operand's and the accumulator's types (`.shape`, `.dtype`), `da` and
    `db` the TMA boxes (`TmaBox`, or anything with `.cols` and
    `.swizzled`) that fill A and B (None: not TMA-loaded), `transposed`
    whether an operand is stored transposed."""
    rows, cols = c.shape
    if a.dtype not in ("f16", "bf16"):
        return f"wgmma here takes f16 or bf16 operands, not {a.dtype}"
    if transposed:
        return "wgmma here reads A as MxK and B as KxN, not transposed"
    if da is None or db is None or not (da.swizzled and db.swizzled):
        return ("its A and B tiles must be loaded by hw.tma_load with rows of at least "
                f"{SWIZZLE_BYTES} bytes (swizzled)")
    if da.cols * 2 != SWIZZLE_BYTES or a.shape[-1] != da.cols:
        return f"A's rows (K) must be {SWIZZLE_BYTES} bytes: {SWIZZLE_BYTES // 2} elements"
    if threads != WARPGROUP:
        return f"the block must be one warpgroup ({WARPGROUP} threads), not {threads}"
    if rows % 64 or not 64 <= rows <= 256 or cols > 256:
        return f"the accumulator must have 64, 128, 192 or 256 rows and at most 256 columns, " \
               f"not {rows}x{cols}"
    return None


# wgmma's rows per instruction (m64nNk16): a warpgroup's share of a
# contraction, and the query rows of an sm_90a attention block.
WGMMA_M = 64
# wgmma's reduction step for f16 and bf16, and its widest N.
WGMMA_K = 16
WGMMA_MAX_N = 256


def wgmma_contract_problem(a, b, c, da, db, threads: int, transpose_b: bool,
                           a_in_registers: bool) -> str | None:
    """Why a contraction (`hw.contract`) cannot be a wgmma, or None when it
    can: `a`, `b` and `c` the operands' types (`.shape`, `.dtype`), `da`
    and `db` the TMA boxes that fill A and B (None: not TMA-loaded; A's is
    not read where A is a register tile, `a_in_registers`: wgmma takes an
    f16 or bf16 A from registers in mma.sync's A fragment layout),
    `transpose_b` whether B is stored N x K (K-major, the keys of attention
    scores) rather than K x N (MN-major, the values). Each shared operand
    comes in 128-byte swizzled boxes: K-major ones whole boxes of K, B's
    MN-major N whole boxes; one warpgroup holds the 64 rows of C."""
    rows, cols = c.shape
    k = a.shape[-1]
    swizzle_elements = SWIZZLE_BYTES // dtype_bytes(a.dtype) if a.dtype in ("f16", "bf16") \
        else 0
    if a.dtype not in ("f16", "bf16"):
        return f"wgmma here takes f16 or bf16 operands, not {a.dtype}"
    if threads != WARPGROUP:
        return f"the block must be one warpgroup ({WARPGROUP} threads), not {threads}"
    if rows != WGMMA_M or cols % MMA_N or cols > WGMMA_MAX_N:
        return (f"the accumulator must have {WGMMA_M} rows and a multiple of {MMA_N} columns "
                f"up to {WGMMA_MAX_N}, not {rows}x{cols}")
    if k % WGMMA_K:
        return f"K must be a multiple of {WGMMA_K}, not {k}"
    shared = [(db, b)] if a_in_registers else [(da, a), (db, b)]
    if any(box is None or not box.swizzled for box, _ in shared):
        return ("its shared operands must be loaded by hw.tma_load with rows of at least "
                f"{SWIZZLE_BYTES} bytes (swizzled)")
    if not a_in_registers and k % swizzle_elements:
        return f"A's K ({k}) must be whole {SWIZZLE_BYTES}-byte rows of boxes"
    if (b.shape[-1] if transpose_b else cols) % swizzle_elements:
        what = "K" if transpose_b else "N"
        return f"B's {what} must be whole {SWIZZLE_BYTES}-byte rows of boxes"
    return None


# wgmma's matrix descriptors (an i64): the start address and the leading
# and stride byte offsets in 16-byte units, 14 bits each, at bits 0, 16
# and 32; the swizzle at bit 62.
DESCRIPTOR_UNIT_BYTES = 16
DESCRIPTOR_FIELD_MASK = (1 << 14) - 1
DESCRIPTOR_LEADING_BIT = 16


def wgmma_leading_offset(box) -> int:
    """The leading byte offset of an MN-major wgmma operand (B as K x N) in
    128-byte swizzled TMA boxes (`box`: `.box_bytes`): the stride from one
    box to the next along N, the boxes side by side in shared memory. (A
    K-major operand's k-step lies within one swizzled row: its leading
    offset is not read.)"""
    return box.box_bytes


def wgmma_k_offset(box, k0: int, k_major: bool) -> int:
    """The byte offset from a wgmma operand's tile to its k-step at `k0`,
    the tile in 128-byte swizzled TMA boxes (`box`: `.cols`, `.box_bytes`,
    `.dtype`): K-major (A, B^T), the box of column k0 (boxes side by side
    along K), then k0's bytes within the box's row (the swizzle is applied
    by address); MN-major (B as K x N), k0 rows of 128 bytes."""
    if not k_major:
        return k0 * SWIZZLE_BYTES
    return k0 // box.cols * box.box_bytes + k0 % box.cols * dtype_bytes(box.dtype)


# ---------------------------------------------------------------------------
# Copies and TMA boxes.


def chunk_width(extents: Sequence[int], element_bytes: int, limit_bytes: int = 16) -> int:
    """The widest chunk (in elements, at most `limit_bytes`) that divides
    every extent (the rows of a copy's box and of both its memrefs): what
    each thread moves at once (cp.async: 4, 8 or 16 bytes)."""
    width = limit_bytes // element_bytes
    while width > 1 and any(extent % width for extent in extents):
        width //= 2
    return max(width, 1)


@dataclass(frozen=True)
class TmaBox:
    """The boxes a TMA load moves: `rows` x `cols` elements, 128-byte
    swizzled when `swizzled` (rows of 128 bytes or more come in boxes 128
    bytes wide)."""

    rows: int
    cols: int
    dtype: str
    swizzled: bool

    @property
    def box_bytes(self) -> int:
        return self.rows * self.cols * dtype_bytes(self.dtype)


def tma_box_problem(rows: int, cols: int, dtype: str) -> str | None:
    """Why TMA cannot load a box of `rows` x `cols` elements, or None."""
    row_bytes = cols * dtype_bytes(dtype)
    if rows > TMA_MAX_ROWS:
        return f"a TMA box has at most {TMA_MAX_ROWS} rows, not {rows}"
    if row_bytes % TMA_ROW_ALIGNMENT:
        return (f"a TMA box row is a multiple of {TMA_ROW_ALIGNMENT} bytes, not {row_bytes} "
                f"({cols} x {dtype})")
    if row_bytes > SWIZZLE_BYTES and row_bytes % SWIZZLE_BYTES:
        return (f"TMA box rows wider than {SWIZZLE_BYTES} bytes come in {SWIZZLE_BYTES}-byte "
                f"boxes; {row_bytes} bytes is not a multiple")
    return None


def tma_box(rows: int, cols: int, dtype: str) -> TmaBox:
    """The boxes that load a `rows` x `cols` tile (`tma_box_problem` is
    None): rows of 128 bytes or more swizzled, in 128-byte-wide boxes."""
    swizzled = cols * dtype_bytes(dtype) >= SWIZZLE_BYTES
    box_cols = SWIZZLE_BYTES // dtype_bytes(dtype) if swizzled else cols
    return TmaBox(rows, box_cols, dtype, swizzled)


# ---------------------------------------------------------------------------
# Register fragment layouts, as index arithmetic.


class Arithmetic:
    """The index arithmetic the layouts are written in: here on Python
    integers; convert-hw-to-nvgpu subclasses it to build index ops on the
    thread's ids (with constants folded)."""

    def add(self, a, b):
        return a + b

    def mul(self, a, b: int):
        return a * b

    def div(self, a, b: int):
        return a // b

    def rem(self, a, b: int):
        return a % b

    def xor(self, a, b):
        return a ^ b

    def less(self, a, b: int):
        """`a < b`, or None where it holds for every thread."""
        return a < b


INTEGERS = Arithmetic()


@dataclass(frozen=True)
class Thread:
    """A thread of a block by its index (`tid`), with its warp and lane."""

    tid: int

    @property
    def warp(self) -> int:
        return self.tid // WARP

    @property
    def lane(self) -> int:
        return self.tid % WARP


@dataclass
class Placement:
    """Where one thread's elements of a 2-d register tile lie in the tile:
    slot `s` holds element (rows[r], cols[c]) with (r, c) = cells[s].
    Slots 2i and 2i + 1 hold adjacent columns of one row, the first at an
    even column (the tensor cores' accumulator layouts)."""

    rows: list
    cols: list
    cells: list[tuple[int, int]]

    def positions(self) -> list[tuple[tuple, object]]:
        return [((self.rows[r], self.cols[c]), None) for r, c in self.cells]


@dataclass(frozen=True)
class AccumulatorLayout:
    """mma.sync's accumulator layout: a grid of `warp_rows` x `warp_cols`
    warps, each holding `frag_rows` x `frag_cols` m16n8 fragments; a thread
    holds elements (g, 2t), (g, 2t+1), (g+8, 2t), (g+8, 2t+1) of each,
    where g = lane / 4 and t = lane % 4."""

    rows: int
    cols: int
    warp_rows: int
    warp_cols: int

    @property
    def frag_rows(self) -> int:
        return self.rows // (MMA_M * self.warp_rows)

    @property
    def frag_cols(self) -> int:
        return self.cols // (MMA_N * self.warp_cols)

    @property
    def slots(self) -> int:
        return self.frag_rows * self.frag_cols * 4

    @staticmethod
    def slot(fi: int, fj: int, h: int, v: int, frag_cols: int) -> int:
        return ((fi * frag_cols + fj) * 2 + h) * 2 + v

    def warp_origin(self, thread, ops: Arithmetic = INTEGERS) -> tuple:
        row = ops.mul(ops.div(thread.warp, self.warp_cols), self.rows // self.warp_rows)
        col = ops.mul(ops.rem(thread.warp, self.warp_cols), self.cols // self.warp_cols)
        return row, col

    def placement(self, thread, ops: Arithmetic = INTEGERS) -> Placement:
        row0, col0 = self.warp_origin(thread, ops)
        row0 = ops.add(row0, ops.div(thread.lane, 4))
        col0 = ops.add(col0, ops.mul(ops.rem(thread.lane, 4), 2))
        cells = [(fi * 2 + h, fj * 2 + v) for fi in range(self.frag_rows)
                 for fj in range(self.frag_cols) for h in range(2) for v in range(2)]
        return Placement([ops.add(row0, fi * MMA_M + h * 8) for fi in range(self.frag_rows)
                          for h in range(2)],
                         [ops.add(col0, fj * MMA_N + v) for fj in range(self.frag_cols)
                          for v in range(2)], cells)

    def positions(self, thread, ops: Arithmetic = INTEGERS) -> list[tuple[tuple, object]]:
        return self.placement(thread, ops).positions()


@dataclass(frozen=True)
class RoundRobinLayout:
    """Element `e` of the flattened tile is held by thread `e % T` in its
    slot `e // T`."""

    shape: tuple[int, ...]
    threads: int

    @property
    def slots(self) -> int:
        return -(-math.prod(self.shape) // self.threads)

    def positions(self, thread, ops: Arithmetic = INTEGERS) -> list[tuple[tuple, object]]:
        """Each slot's coordinates and whether the thread holds it (None:
        every thread does)."""
        size = math.prod(self.shape)
        found = []
        for s in range(self.slots):
            element = ops.add(thread.tid, s * self.threads)
            valid = ops.less(element, size) if (s + 1) * self.threads > size else None
            coordinates, rest = [], element
            for extent in reversed(self.shape[1:]):
                coordinates.append(ops.rem(rest, extent))
                rest = ops.div(rest, extent)
            coordinates.append(rest)
            found.append((tuple(reversed(coordinates)), valid))
        return found


@dataclass(frozen=True)
class WgmmaLayout:
    """wgmma's accumulator layout for one warpgroup (4 warps): the tile's
    rows in chunks of 64, warp w holding rows 16w..16w+15 of each; a
    thread holds elements (g, 8j+2t), (g, 8j+2t+1), (g+8, 8j+2t),
    (g+8, 8j+2t+1) of each 8-column group j, in that order (the order of
    the accumulator's registers)."""

    rows: int
    cols: int

    @property
    def slots(self) -> int:
        return self.rows * self.cols // WARPGROUP

    def placement(self, thread, ops: Arithmetic = INTEGERS) -> Placement:
        row0 = ops.add(ops.mul(thread.warp, 16), ops.div(thread.lane, 4))
        col0 = ops.mul(ops.rem(thread.lane, 4), 2)
        chunks, groups = self.rows // 64, self.cols // 8
        cells = [(chunk * 2 + h, j * 2 + v) for chunk in range(chunks) for j in range(groups)
                 for h in range(2) for v in range(2)]
        return Placement([ops.add(row0, chunk * 64 + h * 8) for chunk in range(chunks)
                          for h in range(2)],
                         [ops.add(col0, j * 8 + v) for j in range(groups) for v in range(2)],
                         cells)

    def positions(self, thread, ops: Arithmetic = INTEGERS) -> list[tuple[tuple, object]]:
        return self.placement(thread, ops).positions()


@dataclass(frozen=True)
class VectorLayout:
    """A 1-d tile in vectors of `width` elements, dealt round robin: thread
    t holds vectors t, t + T, t + 2T, ... (T threads), vector j of the
    thread in slots j * width .. j * width + width - 1. Consecutive threads
    hold consecutive vectors, so a warp's loads of one slot group are one
    contiguous run of global memory (coalesced), each thread's a vector."""

    length: int
    threads: int
    width: int

    @property
    def slots(self) -> int:
        return self.length // self.threads

    def positions(self, thread, ops: Arithmetic = INTEGERS) -> list[tuple[tuple, object]]:
        found = []
        for j in range(self.slots // self.width):
            start = ops.mul(ops.add(thread.tid, j * self.threads), self.width)
            found += [((ops.add(start, v),), None) for v in range(self.width)]
        return found


@dataclass(frozen=True)
class ReplicatedLayout:
    """A tile of one element that every thread holds (in its slot 0): a
    row's statistic after a block reduction, read by all the row's
    threads."""

    shape: tuple[int, ...]

    slots = 1

    def positions(self, thread, ops: Arithmetic = INTEGERS) -> list[tuple[tuple, object]]:
        return [((0,) * len(self.shape), None)]


@dataclass(frozen=True)
class RowLayout:
    """The statistics of the rows of an AccumulatorLayout tile (an M x 1
    tile: a row maximum, a row sum): each thread holds, in slot `fi * 2 +
    h`, the value of row `g + 8h` of its warp's `fi`-th fragment row, the
    rows whose elements it holds in the accumulator, so that the four
    threads of a row (and the warps of a row of the warp grid) hold its
    value alike."""

    rows: int
    warp_rows: int
    warp_cols: int

    @property
    def frag_rows(self) -> int:
        return self.rows // (MMA_M * self.warp_rows)

    @property
    def slots(self) -> int:
        return self.frag_rows * 2

    def positions(self, thread, ops: Arithmetic = INTEGERS) -> list[tuple[tuple, object]]:
        row0 = ops.add(ops.mul(ops.div(thread.warp, self.warp_cols),
                               self.rows // self.warp_rows), ops.div(thread.lane, 4))
        return [((ops.add(row0, fi * MMA_M + h * 8), 0), None)
                for fi in range(self.frag_rows) for h in range(2)]

    def accumulates(self, layout) -> bool:
        """Whether this layout holds the row statistics of `layout`."""
        return isinstance(layout, AccumulatorLayout) and (
            layout.rows, layout.warp_rows, layout.warp_cols) == (
                self.rows, self.warp_rows, self.warp_cols)


# Elements of a vector of a VectorLayout: 16 bytes of f32, 8 of f16/bf16.
VECTOR_ELEMENTS = 4


def register_layout(shape: Sequence[int], threads: int, wgmma: bool = False,
                    warps: Sequence[int] = ()):
    """The layout of a register tile of this shape in a block of `threads`
    (the accumulator of a wgmma: `wgmma`): mma.sync's accumulator where the
    block's warps divide the tile into whole 16x8 fragments (the warp grid
    closest to square, or the grid `warps`, rows x cols of warps, where it
    is given and divides the tile; an M x 1 tile with `warps` given holds
    the row statistics of such an accumulator: `RowLayout`); a 1-d tile
    whose length the threads divide in vectors (`VectorLayout`, the widest
    of up to VECTOR_ELEMENTS); one element replicated in every thread;
    else round robin."""
    shape = tuple(shape)
    if wgmma:
        return WgmmaLayout(*shape)
    if warps and len(shape) == 2 and warps[0] * warps[1] * WARP == threads:
        rows, cols = shape
        if rows % (MMA_M * warps[0]) == 0 and cols == 1:
            return RowLayout(rows, *warps)
        if rows % (MMA_M * warps[0]) == 0 and cols % (MMA_N * warps[1]) == 0:
            return AccumulatorLayout(rows, cols, *warps)
    if math.prod(shape) == 1:
        return ReplicatedLayout(shape)
    if len(shape) == 1 and shape[0] % threads == 0:
        width = next(w for w in (VECTOR_ELEMENTS, 2, 1) if shape[0] % (threads * w) == 0)
        return VectorLayout(shape[0], threads, width)
    warps = threads // WARP
    if len(shape) == 2:
        rows, cols = shape
        grids = [(wm, warps // wm) for wm in range(1, warps + 1) if warps % wm == 0]
        fitting = [(wm, wn) for wm, wn in grids
                   if rows % (MMA_M * wm) == 0 and cols % (MMA_N * wn) == 0]
        if fitting:
            wm, wn = min(fitting, key=lambda g: (abs(rows // g[0] - cols // g[1]), g))
            return AccumulatorLayout(rows, cols, wm, wn)
    return RoundRobinLayout(shape, threads)


# ---------------------------------------------------------------------------
# Shared memory banks.

# The banks: 32 of 4 bytes, 128 bytes per line; ldmatrix and cp.async
# move 16-byte chunks.
BANK_LINE_BYTES = 128
CHUNK_BYTES = 16
BANKS = 32


def transpose_tile() -> tuple[int, int, int]:
    """(side, threads, shared row length) of a transpose of the last two
    dims through shared memory: a block moves a BANKS x BANKS tile, read
    and written a row at a time by consecutive threads, the tile held in
    shared memory with one column of padding so that the elements of a
    column (4-byte ones) fall into distinct banks."""
    return BANKS, 256, BANKS + 1


@dataclass(frozen=True)
class BankSwizzle:
    """Where the 16-byte chunks of a shared tile's rows really are: chunk
    c of row r at chunk c XOR ((r // rows_per_line) % period). Rows that
    ldmatrix reads eight at a time (one 8x8 matrix, one row per lane, all
    at the same column) then fall into distinct banks: without it, rows
    of 64 bytes meet four times in the same banks and rows of 128 bytes or
    more eight times (measured on an H200 with the sm_80 matmul: L1 busy
    90% of the time, tensor cores 21%). Which tiles are swizzled is the
    GPU lowering's choice (convert-hw-to-nvgpu)."""

    rows_per_line: int
    period: int

    @classmethod
    def for_rows(cls, row_bytes: int) -> "BankSwizzle | None":
        """The swizzle of rows of `row_bytes` (a multiple of 16): eight
        consecutive rows cover the 128 bytes of the banks; the period is
        the largest power of two up to 8 that divides the chunks of a row,
        so that a chunk stays in its row. None when that is 1."""
        chunks = row_bytes // CHUNK_BYTES
        period = 8
        while chunks % period:
            period //= 2
        if period == 1:
            return None
        return cls(rows_per_line=max(1, BANK_LINE_BYTES // row_bytes), period=period)

    def chunk(self, row: int, chunk: int) -> int:
        """Where chunk `chunk` of row `row` is (what `column` computes)."""
        return chunk ^ ((row // self.rows_per_line) % self.period)

    def column(self, row, col, chunk_elements: int, ops: Arithmetic = INTEGERS):
        """Where element column `col` of row `row` is, in chunks of
        `chunk_elements`."""
        key = ops.rem(ops.div(row, self.rows_per_line), self.period)
        chunk = ops.xor(ops.div(col, chunk_elements), key)
        return ops.add(ops.mul(chunk, chunk_elements), ops.rem(col, chunk_elements))


# ---------------------------------------------------------------------------
# Occupancy.


def occupancy(arch: Architecture, registers: int, threads: int, shared_bytes: int) -> dict:
    """How many blocks of a kernel an SM of `arch` holds at once, and what
    limits it ("registers", "shared memory", "threads" or "blocks"):
    `registers` per thread (ptxas), `threads` per block, `shared_bytes`
    of static and dynamic shared memory per block (each block also leaves
    RESERVED_SHARED_BYTES to the system). 0 blocks: it cannot launch."""
    warps = -(-threads // WARP)
    per_warp = -(-registers * WARP // REGISTER_UNIT) * REGISTER_UNIT
    limits = {
        "registers": (arch.registers_per_sm // per_warp) // warps if per_warp else
        arch.blocks_per_sm,
        "shared memory": arch.shared_memory_per_sm // (shared_bytes + RESERVED_SHARED_BYTES),
        "threads": arch.threads_per_sm // (warps * WARP),
        "blocks": arch.blocks_per_sm,
    }
    limit = min(limits, key=lambda name: limits[name])
    return {"blocks_per_sm": limits[limit], "limited_by": limit}


# ---------------------------------------------------------------------------
# Elementwise and row kernels.

# Elements each thread holds of a row: more make the row's live tiles spill.
MAX_ROW_ELEMENTS_PER_THREAD = 16


def elementwise_kernel_shape(elements: int, arch: Architecture) -> tuple[int, int, int]:
    """(threads per block, elements per thread, blocks) of a grid-stride
    elementwise kernel over `elements`: 256 threads of two vectors each,
    and enough blocks to fill every SM eight times over (or one per tile
    where there are fewer)."""
    threads, per_thread = 256, 2 * VECTOR_ELEMENTS
    tiles = max(1, -(-elements // (threads * per_thread)))
    return threads, per_thread, min(tiles, 8 * arch.sms)


# Elements each thread holds of a chunk of a row too long for the registers.
LONG_ROW_ELEMENTS_PER_THREAD = 8


def row_kernel_shape(columns: int) -> tuple[int, int, int]:
    """(threads per block, elements per thread, chunks) of a kernel over
    rows of `columns`: a row held in registers (one chunk) with one warp
    for short rows, more threads for longer ones (up to MAX_THREADS, as
    few elements each as fit in MAX_ROW_ELEMENTS_PER_THREAD, a power of
    two); a row that does not fit is walked in chunks of MAX_THREADS x
    LONG_ROW_ELEMENTS_PER_THREAD elements, once per reduction and once for
    the results."""
    threads = WARP
    while threads < MAX_THREADS and threads * MAX_ROW_ELEMENTS_PER_THREAD // 2 < columns:
        threads *= 2
    per_thread = 1
    while threads * per_thread < columns:
        per_thread *= 2
    if per_thread > MAX_ROW_ELEMENTS_PER_THREAD:
        chunk = MAX_THREADS * LONG_ROW_ELEMENTS_PER_THREAD
        return MAX_THREADS, LONG_ROW_ELEMENTS_PER_THREAD, -(-columns // chunk)
    return threads, per_thread, 1


# ---------------------------------------------------------------------------
# Convolutions.

# The element types of convolutions on tensor cores (implicit GEMM).
IMPLICIT_GEMM_TYPES = ("f16", "bf16")


def conv_kernel(dtype: str, groups: int) -> str:
    """Which kernel a convolution gets: "implicit_gemm" (tensor cores: the
    input's im2col matrix, output pixels by K = C*KH*KW taps, times the
    filter, tiled as a matmul; NCHW and NHWC results alike) for f16 and
    bf16 convs of one group (a depthwise or grouped conv is many small
    GEMMs, K = C/groups * KH * KW, which leave the tensor cores idle),
    else "direct" (CUDA cores: each thread an output element, walking its
    window, f32 sums; f32 convs too, whose 3xTF32 products on tensor cores
    would need each gathered element split into two tf32 parts). NCHW and
    NHWC convs get the same choice."""
    if dtype in IMPLICIT_GEMM_TYPES and groups == 1:
        return "implicit_gemm"
    return "direct"


def direct_conv_kernel_shape(elements: int, arch: Architecture) -> tuple[int, int, int]:
    """(threads per block, elements per thread, blocks) of a direct
    convolution over `elements` outputs: 256 threads of one element each
    (consecutive threads consecutive outputs, so that their window reads
    of a row of the input are coalesced; an element walks its whole
    window, so one is work enough), the blocks striding over the tiles,
    eight per SM at most."""
    threads = 256
    tiles = max(1, -(-elements // threads))
    return threads, 1, min(tiles, 8 * arch.sms)
