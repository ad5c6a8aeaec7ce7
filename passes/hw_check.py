"""--hw-check: checks hw kernels against an NVIDIA architecture (`chip`).

Every violation is an error at the op (the GPU lowering and upstream's
NVVM lowering assume these hold, and some of upstream's passes abort
instead of reporting):

* shared memory: a kernel's shared tiles (laid out as the GPU lowering
  lays them, 128-byte aligned, 1024 on sm_90a) and mbarriers fit what a
  block may use on the architecture; the error is at the tile that
  crosses the limit;
* async copies: cp.async moves 4, 8 or 16 bytes per thread, so the rows
  of the box and of both memrefs must be a multiple of 4 bytes, and a
  constant column offset a multiple of the chunk the lowering chooses;
* TMA loads: 2-d boxes of 2-d or 3-d (batched) memrefs that are kernel
  arguments, at most 256
  rows of a multiple of 16 bytes, rows wider than 128 bytes a multiple
  of 128 (they come in swizzled 128-byte boxes), global rows a multiple
  of 16 bytes;
* MMA: tensor-core shapes (M a multiple of 16, N of 8, K of 16, 8 for
  tf32) whose accumulator the block's warps divide into 16x8 fragments,
  or, for `instruction = "wgmma"`, what wgmma needs;
* features per architecture and PTX version: cp.async, ldmatrix and
  mma.sync need sm_80 and PTX 7.0; TMA loads sm_90 and PTX 8.0, mbarriers
  (waited for by parity) sm_90 and PTX 7.8; wgmma sm_90a and PTX 8.0. The target's architecture and PTX
  version (`cuda:sm_80`: PTX 7.0, `cuda:sm_89`: PTX 8.1, `cuda:sm_90a`:
  PTX 8.0) must have them;
* block reductions: a block of several warps needs a scratch tile of at
  least one element per warp;
* contractions (`hw.contract`) on tensor cores: mma.sync's shapes and
  accumulator, as for MMA, and a register A whose warps hold the rows of
  the accumulator's (both allocated with `warps = [W, 1]`); row
  reductions (`hw.reduce_max`, `hw.reduce_sum`): of such an accumulator
  into its row statistics;
* hardware instructions (`lamina.dialects.hw_instructions`): the architecture and
  PTX version they declare (`hw.cvt_e4m3x2`: sm_89 and PTX 7.8).

Expects verified hw IR; block sizes come from the kernels' launches (a
kernel without a launch is checked for what does not depend on them).
Guarantees: the IR is not changed.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from lamina.dialects import hw
from lamina.dialects.opdef import lookup_op
from lamina.dialects.hw_instructions import Instruction
from lamina.pass_registry import Pass, PassFailure, register_pass
from lamina.targets import nvidia
from lamina.targets.nvidia import (FEATURES, MBARRIER_BYTES, WARP, AccumulatorLayout, Architecture,
                                   RowLayout, TmaBox, register_layout, wgmma_problem)
from lamina.types import type_view

_element_bytes = nvidia.dtype_bytes


def _constant(value: ir.Value) -> int | None:
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.name != "arith.constant":
        return None
    attribute = owner.attributes["value"]
    return ir.IntegerAttr(attribute).value if isinstance(attribute, ir.IntegerAttr) else None


class KernelChecker:
    """Collects the violations of one kernel."""

    def __init__(self, kernel: ir.Operation, arch: Architecture, threads: int | None):
        self.kernel = kernel
        self.arch = arch
        self.threads = threads
        self.errors: list[tuple[ir.Operation, str]] = []
        self.entry = kernel.regions[0].blocks[0]

    def error(self, op: ir.Operation, message: str) -> None:
        self.errors.append((op, message))

    def feature(self, op: ir.Operation, name: str, what: str) -> bool:
        """Reports `what` needing feature `name` the architecture lacks."""
        needed = FEATURES[name].problem(self.arch)
        if needed is None:
            return True
        self.error(op, f"{what} needs {needed}; target cuda:{self.arch.name} "
                       f"is {self.arch.name} with PTX {self.arch.ptx}")
        return False

    def run(self) -> list[tuple[ir.Operation, str]]:
        ops: list[ir.Operation] = []

        def collect(op):
            if op.name.startswith("hw."):
                ops.append(op.operation)
            return ir.WalkResult.ADVANCE
        self.kernel.walk(collect, ir.WalkOrder.PRE_ORDER)
        self.shared_memory(ops)
        tiles = {}
        for op in ops:
            if op.name == "hw.tma_load":
                descriptor = self.tma_load(op)
                if descriptor is not None:
                    tiles[hw.TmaLoadOp.from_operation(op).operand("dst")] = descriptor
            elif op.name == "hw.async_copy":
                self.async_copy(op)
            elif op.name.startswith("hw.mbarrier"):
                self.feature(op, "mbarrier", f"'{op.name}'")
            elif op.name == "hw.block_reduce":
                self.block_reduce(op)
            elif op.name == "hw.contract":
                self.contract(op)
            elif op.name in ("hw.reduce_max", "hw.reduce_sum"):
                self.row_reduce(op)
            elif isinstance(lookup_op(op.name), type) and issubclass(lookup_op(op.name),
                                                                     Instruction):
                self.instruction(op)
        for op in ops:
            if op.name == "hw.mma":
                self.mma(op, tiles)
        return self.errors

    def layout(self, tile: ir.Value):
        """The register layout of a tile that an hw.alloc makes (with its
        warp grid), or None where the block size is unknown."""
        if self.threads is None:
            return None
        owner = tile.owner
        warps = () if isinstance(owner, ir.Block) or owner.name != "hw.alloc" else \
            hw.AllocOp.from_operation(owner.operation).warps
        return register_layout(type_view(tile.type).shape, self.threads, warps=warps)

    def contract(self, op: ir.Operation) -> None:
        """On tensor cores: mma.sync's shapes, an accumulator the warps
        divide into 16x8 fragments and a register A whose warps hold C's
        rows."""
        view = hw.ContractOp.from_operation(op)
        if view.unit != "tensor_cores" or not self.feature(op, "mma.sync",
                                                            "'hw.contract' on tensor cores"):
            return
        a, c = view.operand("a"), view.operand("c")
        a_type = type_view(a.type)
        m, n, k = view.problem_shape(a_type, type_view(view.operand("b").type))
        shape = nvidia.mma_sync_shape(a_type.dtype)
        if m % shape.m or n % shape.n or k % shape.k:
            self.error(op, f"tensor cores multiply {shape.m}x{shape.k} by {shape.k}x{shape.n} "
                           f"{a_type.dtype} fragments: M = {m} must be a multiple of {shape.m}, "
                           f"N = {n} of {shape.n} and K = {k} of {shape.k}")
            return
        c_layout = self.layout(c)
        if c_layout is None:
            return
        if not isinstance(c_layout, AccumulatorLayout):
            self.error(op, f"the {self.threads // WARP} warps of the block cannot divide the "
                           f"{m}x{n} accumulator into 16x8 fragments evenly (each warp takes "
                           "whole fragments)")
        elif a_type.space == "private":
            a_layout = self.layout(a)
            if not (isinstance(a_layout, AccumulatorLayout) and a_layout.warp_cols == 1
                    and c_layout.warp_cols == 1 and a_layout.warp_rows == c_layout.warp_rows):
                self.error(op, "A is a register tile whose warps do not hold the rows of the "
                               "accumulator's warps: allocate both with warps = [W, 1]")

    def row_reduce(self, op: ir.Operation) -> None:
        """A row reduction of a register tile is one of an accumulator whose
        warps hold whole rows, into the row statistics of its warps."""
        view = lookup_op(op.name).from_operation(op)
        x_layout, out_layout = self.layout(view.operand("x")), self.layout(view.operand("out"))
        if x_layout is None:
            return
        if not (isinstance(x_layout, AccumulatorLayout) and x_layout.warp_cols == 1
                and isinstance(out_layout, RowLayout) and out_layout.accumulates(x_layout)):
            self.error(op, f"'{op.name}' reduces the rows of an accumulator tile whose warps "
                           "hold whole rows into their row statistics: allocate both with "
                           f"warps = [{self.threads // WARP}, 1]")

    def block_reduce(self, op: ir.Operation) -> None:
        """A block of several warps folds their totals through a scratch
        tile of one element per warp."""
        if self.threads is None or self.threads <= WARP:
            return
        warps = self.threads // WARP
        scratch = list(hw.BlockReduceOp.from_operation(op).operand("scratch"))
        if not scratch or type_view(scratch[0].type).shape[0] < warps:
            given = f"a scratch tile of {type_view(scratch[0].type).shape[0]}" if scratch \
                else "no scratch tile"
            self.error(op, f"a block reduction in a block of {warps} warps folds their totals "
                           f"through a shared f32 scratch tile of at least {warps} elements; "
                           f"it has {given}")

    def instruction(self, op: ir.Operation) -> None:
        """A hardware instruction exists on the architecture (and its PTX)."""
        view = lookup_op(op.name).from_operation(op)
        arch, (major, minor) = view.needs
        if arch.endswith("a") and (self.arch.sm != view.sm or not self.arch.specific):
            self.error(op, f"'{op.name}' needs {arch} (architecture-specific); the target is "
                           f"{self.arch.name}")
        elif self.arch.sm < view.sm:
            self.error(op, f"'{op.name}' needs {arch} or newer; the target is {self.arch.name}")
        elif self.arch.ptx_version < (major, minor):
            self.error(op, f"'{op.name}' needs PTX {major}.{minor}; the target "
                           f"{self.arch.name} has PTX {self.arch.ptx}")

    # -- shared memory ---------------------------------------------------------

    def shared_memory(self, ops: list[ir.Operation]) -> None:
        alignment = self.arch.shared_alignment
        budget = self.arch.shared_memory_bytes
        used = sum(MBARRIER_BYTES * hw.MBarrierInitOp.from_operation(op).barriers
                   for op in ops if op.name == "hw.mbarrier_init")
        for op in ops:
            if op.name != "hw.alloc":
                continue
            tile = type_view(op.results[0].type)
            if tile.space != "workgroup":
                continue
            size = _element_bytes(tile.dtype)
            for extent in tile.shape:
                size *= extent
            used = -(-used // alignment) * alignment + size
            if used > budget:
                self.error(op, f"the shared tiles of this kernel need {used} bytes up to this "
                               f"one; a block on {self.arch.name} has at most {budget} "
                               f"({budget // 1024} KiB)")
                return

    # -- copies ----------------------------------------------------------------

    def async_copy(self, op: ir.Operation) -> None:
        if not self.feature(op, "cp.async", "'hw.async_copy'"):
            return
        view = hw.AsyncCopyOp.from_operation(op)
        src, dst = view.operand("src"), view.operand("dst")
        t = hw.transfer(type_view(src.type), type_view(dst.type))
        element = _element_bytes(t.src.memref.dtype)
        width = nvidia.chunk_width(t.row_extents, element)
        if width * element < 4:
            rows = {"the box": t.box[-1], f"{t.src.memref}": t.src.memref.shape[-1],
                    f"{t.dst.memref}": t.dst.memref.shape[-1]}
            odd = [f"{name} ({extent * element} bytes)" for name, extent in rows.items()
                   if extent * element % 4]
            self.error(op, "misaligned async copy: cp.async moves 4, 8 or 16 bytes per "
                           f"thread, and the rows of {', '.join(odd)} are not a multiple of 4 "
                           "bytes")
            return
        src_indices, _ = t.split(list(view.operand("indices")))
        column = _constant(src_indices[-1])
        if column is not None and column % width:
            self.error(op, f"misaligned async copy: column {column} of {t.src.memref} is not "
                           f"a multiple of the {width * element}-byte chunks ({width} elements) "
                           "each thread copies")

    def tma_load(self, op: ir.Operation) -> TmaBox | None:
        if not self.feature(op, "tma", "'hw.tma_load'"):
            return None
        view = hw.TmaLoadOp.from_operation(op)
        src, dst = view.operand("src"), view.operand("dst")
        t = hw.transfer(type_view(src.type), type_view(dst.type))
        if not (isinstance(src.owner, ir.Block) and src.owner == self.entry):
            self.error(op, "TMA loads read a global memref that is an argument of the kernel "
                           "(the host makes its descriptor)")
            return None
        if t.src.memref.rank not in (2, 3) or len(t.box) != 2:
            self.error(op, f"TMA loads move 2-d boxes of 2-d or 3-d memrefs, not from "
                           f"{t.src.memref}")
            return None
        rows, cols = t.box
        dtype = t.src.memref.dtype
        global_row_bytes = t.src.memref.shape[-1] * _element_bytes(dtype)
        problem = nvidia.tma_box_problem(rows, cols, dtype)
        if problem:
            self.error(op, problem)
        elif global_row_bytes % nvidia.TMA_ROW_ALIGNMENT:
            self.error(op, f"TMA needs global rows of a multiple of {nvidia.TMA_ROW_ALIGNMENT} "
                           f"bytes; rows of {t.src.memref} are {global_row_bytes}")
        else:
            return nvidia.tma_box(rows, cols, dtype)
        return None

    # -- tensor cores ----------------------------------------------------------

    def mma(self, op: ir.Operation, tiles: dict) -> None:
        view = hw.MmaOp.from_operation(op)
        a, b, c = view.operand("a"), view.operand("b"), view.operand("c")
        a_type, c_type = type_view(a.type), type_view(c.type)
        if view.instruction == "wgmma":
            if not self.feature(op, "wgmma", "'hw.mma' with instruction = \"wgmma\""):
                return
            if self.threads is not None:
                problem = wgmma_problem(a_type, c_type, tiles.get(a), tiles.get(b),
                                        self.threads, view.transpose_a or view.transpose_b)
                if problem:
                    self.error(op, f"this MMA cannot be a wgmma: {problem}")
            return
        if not self.feature(op, "mma.sync", "'hw.mma'"):
            return
        shape = nvidia.mma_sync_shape(a_type.dtype)
        m, k = view.matrix_shape(a_type, "a")
        n = c_type.shape[1]
        if m % shape.m or n % shape.n or k % shape.k:
            self.error(op, f"tensor cores multiply {shape.m}x{shape.k} by {shape.k}x{shape.n} "
                           f"{a_type.dtype} fragments: M = {m} must be a multiple of {shape.m}, "
                           f"N = {n} of {shape.n} and K = {k} of {shape.k}")
            return
        if self.threads is None:
            return
        wgmma = (self.arch.specific and view.instruction == "auto" and not wgmma_problem(
            a_type, c_type, tiles.get(a), tiles.get(b), self.threads,
            view.transpose_a or view.transpose_b))
        if not wgmma and not isinstance(register_layout(c_type.shape, self.threads),
                                        AccumulatorLayout):
            self.error(op, f"the {self.threads // WARP} warps of the block cannot divide the "
                           f"{m}x{n} accumulator into 16x8 fragments evenly (each warp takes "
                           "whole fragments)")


def _launch_threads(module: ir.Operation) -> dict[str, set[int]]:
    threads: dict[str, set[int]] = {}

    def visit(op):
        if op.name == "hw.launch":
            launch = hw.LaunchOp.from_operation(op.operation)
            threads.setdefault(launch.kernel, set()).add(launch.threads)
        return ir.WalkResult.ADVANCE
    module.walk(visit, ir.WalkOrder.PRE_ORDER)
    return threads


@register_pass
@dataclass
class HWCheck(Pass):
    """Checks hw kernels against an NVIDIA architecture: shared memory, async copies, TMA boxes, MMA shapes, features and PTX versions."""

    argument = "hw-check"
    chip: str = "sm_80"

    def run(self, op: ir.Operation) -> None:
        arch = nvidia.architecture(self.chip, PassFailure)
        threads = _launch_threads(op)
        errors = []
        for inner in op.regions[0].blocks[0].operations:
            kernel = inner.operation
            if kernel.name != "func.func" or not hw.is_kernel(kernel):
                continue
            name = ir.StringAttr(kernel.attributes["sym_name"]).value
            sizes = threads.get(name, set())
            errors += KernelChecker(kernel, arch, next(iter(sizes)) if len(sizes) == 1
                                    else None).run()
        for operation, message in errors[:-1]:
            operation.location.emit_error(message)
        if errors:
            operation, message = errors[-1]
            raise PassFailure(message, operation.location)
