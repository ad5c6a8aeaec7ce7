"""Matmul kernels: f16, bf16 and f32 contractions with their epilogues on tensor cores.

Each `nn.matmul` of two f16, bf16 or f32 tensors, 2-d or batched (any
number of batch dims on either operand, broadcasting as nn.matmul's do;
the result's batch runs along the grid's third dim, each operand's batch
dims collapsed into one and its index in it computed from the block's,
a broadcast dim contributing none; a batch of A over a 2-d B, a linear
layer on batched activations, is one matmul of A's rows: `folds_batch`),
with the chain
of ops that consumes it fused as its epilogue — an `nn.add` of a bias (a row of
N) or a residual (M x N), then a unary elementwise op (`nn.relu`,
`nn.gelu`, or any op defined in the scalar form of `lamina.scalar`, a
plugin's included, whose expression has an arith-only body), then an
`nn.cast` to f16, bf16 or f32 — becomes a kernel and its launch:

* the kernel computes one BM x BN tile of the result per block: it walks
  K in steps of BK, loading the A and B tiles of each step into shared
  memory and accumulating them on tensor cores in an f32 register tile,
  then stores the tile through an epilogue function (bias, activation,
  the conversion to the result's type), computed in f32 with arith ops
  only (erf, tanh and sigmoid as rational approximations, error 3.2e-7),
  so that the GPU code needs no libdevice, with fast-math flags that let
  it contract into FMAs and divide approximately (`EPILOGUE_FASTMATH`:
  errors far under the f16/bf16 rounding of its result, and under f32's
  tolerance of 1e-5 for an f32 result). The K loop carries an
  `hw.pipeline` annotation of S stages, which `hw-pipeline` realises;
* f32 operands are multiplied on tensor cores too, accurate to f32 by
  default: 3xTF32 (`hw.mma` with precision = "3xtf32", as CUTLASS's
  3xTF32 does: each operand split into its tf32 rounding and the tf32
  rounding of the residual, three m16n8k8 products accumulated in f32;
  within about 1e-6 relative of f32 sums, where one tf32 product is off
  by 1e-3). Why tensor cores rather than a CUDA-core (SIMT) kernel: three
  tf32 products run at a third of the dense tf32 rate, 52 TFLOP/s on an
  A100 (156 / 3) against 19.5 for f32 FMAs, 165 on an H100 against 67
  (mma.sync reaches less of the rate than wgmma, but keeps the lead), with
  the same kernel, tiles, pipeline and epilogues as f16's; the price is
  registers (3xTF32 holds each k-step's fragments
  twice, so the cost model's largest tile is 128x64) and four bytes an
  element of shared memory. Where nn.matmul allows tf32 (precision =
  "tf32", PyTorch's allow_tf32) the kernel multiplies once, its operands
  rounded to the nearest tf32 (precision = "tf32_rounded"), as the nn
  reference rounds them;
* an operand that an `nn.transpose` of its last two dims makes (a linear
  layer's weight W [N, K] in x times W^T, or a transposed A) is read in
  place: the kernel takes the transpose's input, its shared tiles hold
  the box as stored (B as BN x BK, A as BK x BM) and `hw.mma` reads them
  transposed (`transpose_a`, `transpose_b`: ldmatrix transposing A and not
  B for f16 and bf16, element loads at swapped indices for tf32); no
  transpose kernel runs, and the transpose goes with the chain where the
  chain is its only user (`MatmulChain.read_in_place`);
* loads are TMA loads on an mbarrier on sm_90a (f16 and bf16 operands not
  transposed, which wgmma reads; global rows of a multiple of 16 bytes),
  cp.async otherwise (rows of a multiple of 4 bytes; f32 and transposed
  operands, which mma.sync reads, on sm_90a too), else synchronous copies
  (no pipelining); tiles past the ends of M, N and K read zeros and store
  nothing, so shapes that tiles do not divide need no padding;
* the tile sizes and stages come from `choose_tiles`, a cost model of
  the architecture (shared memory and register budgets, the number of
  blocks against the number of SMs, the work wasted on partial tiles);
* in the host function, the chain is replaced by `hw.launch` on buffers
  of its tensors (`bufferization.to_buffer`, each of its tensor's shape; a
  [1, N] bias row of a result of more rows collapsed to [N] first) and a
  new result buffer (`memref.alloc`, made a tensor again by
  `bufferization.to_tensor`), so that one-shot bufferization turns the
  host function into memrefs;
* degenerate dims: M, N or K of 1 (a GEMV) are tiles' partial ends like
  any other; a result with no elements (M, N or the batch 0) is a new
  empty buffer and no kernel (a grid has no size 0); with K = 0 the
  kernel loads nothing and stores the epilogue of a zero accumulator (the
  nn reference's empty sum: the bias, its activation, cast).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, func, scf, tensor

from lamina import scalar
from lamina.dialects import hw, nn
from lamina.dialects.opdef import lookup_op
from lamina.lowering.hw_to_loops import index
from lamina.lowering.nn_to_hw.kernels import (THREADS, HWLowering, is_empty, launch, new_kernel,
                                              reshaped, splat_value)
from lamina.lowering.registry import lowering
from lamina.pass_registry import PassFailure
from lamina.targets import nvidia
from lamina.targets.nvidia import RESERVED_SHARED_BYTES, shared_alignment
from lamina.types import MemRefType, VerifyError, type_view

@dataclass(frozen=True)
class TileConfig:
    """How a matmul is tiled: BM x BN result tiles per block, BK-wide
    steps over K, `stages` of loads in flight."""

    block_m: int
    block_n: int
    block_k: int
    stages: int

    def shared_bytes(self, element_bytes: int = 2) -> int:
        return self.stages * (self.block_m + self.block_n) * self.block_k * element_bytes


def choose_tiles(m: int, n: int, k: int, chip: str, tma: bool = False,
                 batch: int = 1, dtype: str = "f16", precision: str = "3xtf32") -> TileConfig:
    """The tiling of an M x N x K matmul (`batch` of them) of `dtype`
    operands (f16, bf16, or f32 multiplied as `precision` says, one of
    hw.MMA_PRECISIONS) with the least estimated time on `chip`.

    The model: a block's time is its tile's work (BM * BN * K, K rounded up
    to BK) divided by how well the tile feeds the tensor cores (its
    arithmetic intensity BM * BN / (BM + BN), the loads each MMA step
    amortises); blocks run in waves of one per SM, so the estimate is
    waves x block time (three times the work for 3xTF32's products).
    Tiles must fit the register budget (`nvidia.mma_sync_registers`: the
    f32 accumulator spread over 128 threads and a k-step's operand
    fragments, which 3xTF32 holds twice; wgmma's accumulator alone) and
    their stages the shared memory (4 bytes an f32 element). More stages
    hide more latency, up to the number of K steps, but not so many that
    two blocks no longer fit in an SM's shared memory: a second resident
    block hides the loads' latency and the epilogue better than a deeper
    pipeline (measured on an H200, f16 4096^3 with 128x128x64 tiles: 4
    stages, one block per SM, 410 TFLOP/s; 3 stages, two blocks, 554;
    bench/results-gpu.md). With TMA
    and wgmma (sm_90a), BK is 64 (128-byte rows, as wgmma reads them
    swizzled) and BN a multiple of 64."""
    arch = nvidia.architecture(chip)
    element_bytes = nvidia.dtype_bytes(dtype)
    products = nvidia.TF32_PRODUCTS[precision] if dtype == "f32" else 1
    block_k = 64 if tma else 32
    k_steps = -(-k // block_k)
    best, best_time = None, None
    for block_m in (128, 64):
        for block_n in (128, 64):
            registers = (block_m * block_n // THREADS if tma else
                         nvidia.mma_sync_registers(block_m, block_n, THREADS, products))
            if registers > nvidia.MMA_TILE_REGISTERS:
                continue
            blocks = -(-m // block_m) * -(-n // block_n) * batch
            waves = -(-blocks // arch.sms)
            intensity = block_m * block_n / (block_m + block_n)
            # K = 0 still stores its tile (the epilogue of zeros).
            time = waves * block_m * block_n * max(k_steps, 1) * block_k * products / intensity
            if best_time is None or time < best_time:
                best, best_time = (block_m, block_n), time
    block_m, block_n = best
    fitting = [candidate for candidate in (4, 3, 2) if candidate <= k_steps and TileConfig(
        block_m, block_n, block_k, candidate).shared_bytes(element_bytes)
        <= arch.shared_memory_bytes]
    # A block's shared memory as an SM counts it: its tiles, the alignment
    # of the dynamic shared memory and what the system reserves.

    def per_block(stages: int) -> int:
        return (TileConfig(block_m, block_n, block_k, stages).shared_bytes(element_bytes)
                + shared_alignment(chip) + RESERVED_SHARED_BYTES)

    two_blocks = [c for c in fitting if 2 * per_block(c) <= arch.shared_memory_per_sm]
    stages = (two_blocks or fitting or [1])[0]
    return TileConfig(block_m, block_n, block_k, stages)


def parse_tiles(text: str) -> TileConfig:
    """A TileConfig from "BMxBNxBKxSTAGES"; raises PassFailure."""
    parts = text.split("x")
    if len(parts) != 4 or not all(p.isdigit() and int(p) > 0 for p in parts):
        raise PassFailure(f"tiles='{text}' is not BMxBNxBKxSTAGES (e.g. 128x128x64x3)")
    block_m, block_n, block_k, stages = map(int, parts)
    if block_m % 64 or block_n % 16 or block_k % 16:
        raise PassFailure(f"tiles='{text}': BM must be a multiple of 64, BN and BK of 16")
    return TileConfig(block_m, block_n, block_k, stages)



# ---------------------------------------------------------------------------
# Finding the chains.


@dataclass
class MatmulChain:
    """An nn.matmul and the epilogue ops fused into its kernel."""

    matmul: ir.Operation
    bias: ir.Value | None = None
    # The scalar definition of the unary elementwise op applied after the
    # bias (nn.relu, nn.gelu, or any op defined in the scalar form whose
    # expression has an arith-only body).
    activation: scalar.Scalar | None = None
    ops: list | None = None
    # A contraction group's chain: its body's ops after the matmul (the
    # epilogue, computed op by op), the body's arguments read by them
    # (`extras`, at the output's position or column) and the host's values
    # for the body's arguments.
    group_ops: list | None = None
    group_extras: list | None = None
    group_inputs: dict | None = None
    group_result: ir.Value | None = None
    # The host's values the kernel reads for A and B, and whether each is
    # stored transposed (the input of an nn.transpose of its last two
    # dims, read in place: `read_in_place`); None: the matmul's operands.
    operands: list | None = None
    transposed: tuple[bool, bool] = (False, False)

    @property
    def last(self) -> ir.Operation:
        return self.ops[-1]

    @property
    def extras(self) -> list[ir.Value]:
        """The values the epilogue reads besides the accumulator."""
        if self.group_ops is not None:
            return self.group_extras
        return [self.bias] if self.bias is not None else []

    def host_value(self, value: ir.Value) -> ir.Value:
        """The host's value for a value of the chain (a body's argument)."""
        return self.group_inputs.get(value, value) if self.group_inputs else value

    def read_in_place(self) -> "MatmulChain":
        """Finds the operands the kernel reads (`operands`, `transposed`): a
        matmul operand that an nn.transpose of the last two dims makes is
        read from the transpose's input, its box loaded transposed; the
        transpose joins the chain's ops (it is lowered with them) where
        the chain is its only user."""
        operands, transposed = [], []
        for position, value in enumerate(self.matmul.operands):
            host = self.host_value(value)
            # A's batch folded into its rows reads A's rows as they are.
            folded = position == 0 and folds_batch(self.matmul)
            source = None if folded else transposed_source(host)
            operands.append(host if source is None else source)
            transposed.append(source is not None)
            absorbed = source is not None and _single_user(host) is not None
            if absorbed and host.owner.operation not in self.ops:
                self.ops.insert(0, host.owner.operation)
        self.operands, self.transposed = operands, tuple(transposed)
        return self


def transposed_source(value: ir.Value) -> ir.Value | None:
    """The input of the nn.transpose that makes `value` by swapping its
    last two dims (what a matmul kernel reads in place), or None."""
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.name != "nn.transpose":
        return None
    perm = tuple(nn.TransposeOp.from_operation(owner.operation).perm)
    rank = len(perm)
    if rank < 2 or perm != tuple(range(rank - 2)) + (rank - 1, rank - 2):
        return None
    return owner.operation.operands[0]


# The operand types of the matmul kernels.
MATMUL_TYPES = ("f16", "bf16", "f32")


def _fits_matmul_kernel(matmul: ir.Operation) -> bool:
    a, b = (type_view(v.type) for v in matmul.operands)
    return a.dtype in MATMUL_TYPES and a.rank >= 2 and b.rank >= 2


def folds_batch(matmul: ir.Operation) -> bool:
    """Whether a matmul multiplies a batch of A by one B (x [..., M, K]
    times W [K, N], a linear layer on batched activations): one matmul of
    all of A's rows, [B * M, K] x [K, N]."""
    a, b = (type_view(v.type) for v in matmul.operands)
    return a.rank > 2 and b.rank == 2


def is_epilogue_op(op: ir.Operation, shape: tuple[int, ...]) -> bool:
    """Whether a kernel's epilogue computes `op` per element: an
    elementwise op with a result of `shape` and a tile type, a cast or an
    op whose scalar form has an arith-only body."""
    op_class = lookup_op(op.name)
    if op_class is None or not issubclass(op_class, nn.ElementwiseOp) \
            or type_view(op.results[0].type).shape != shape \
            or type_view(op.results[0].type).dtype not in hw.TILE_TYPES:
        return False
    if issubclass(op_class, nn.CastOp):
        return True
    try:
        tree = op_class.from_operation(op).scalar_tree()
    except VerifyError:
        return False
    return tree is not None and scalar.arith_only_supported(tree)


def group_chain(fused: ir.Operation, body: ir.Operation) -> MatmulChain | None:
    """The chain of a contraction group whose matmul fits a kernel and whose
    other ops are an epilogue: elementwise ops of the matmul's result shape
    with arith-only scalar forms (and casts), reading splat constants and
    arguments shaped like the result or like a row of it; None otherwise."""
    block = body.regions[0].blocks[0]
    ops = [o.operation for o in block.operations]
    returned = ops.pop()
    matmuls = [o for o in ops if o.name == "nn.matmul"]
    if len(matmuls) != 1 or len(returned.operands) != 1 or not _fits_matmul_kernel(matmuls[0]):
        return None
    matmul = matmuls[0]
    result = type_view(matmul.results[0].type)
    rows = {(result.shape[-1],), (1, result.shape[-1]), result.shape}
    produced = {matmul.results[0]}
    extras, epilogue = [], []
    for op in ops:
        if op is matmul or splat_value(op) is not None:
            if splat_value(op) is not None:
                produced.add(op.results[0])
            continue
        if not is_epilogue_op(op, result.shape):
            return None
        for value in op.operands:
            if value in produced:
                continue
            if not isinstance(value.owner, ir.Block) or type_view(value.type).shape not in rows \
                    or type_view(value.type).dtype not in hw.TILE_TYPES:
                return None
            if value not in extras:
                extras.append(value)
        produced.add(op.results[0])
        epilogue.append(op)
    inputs = dict(zip(block.arguments, fused.operands))
    if any(value not in inputs for value in matmul.operands):
        return None
    return MatmulChain(matmul, ops=[fused], group_ops=epilogue, group_extras=extras,
                       group_inputs=inputs, group_result=returned.operands[0]).read_in_place()


def _single_user(value: ir.Value) -> ir.Operation | None:
    uses = list(value.uses)
    if len(uses) != 1:
        return None
    owner = uses[0].owner
    return owner.operation if hasattr(owner, "operation") else owner


def find_chain(matmul: ir.Operation) -> MatmulChain | None:
    """The chain a matmul starts, or None when it does not fit a kernel."""
    if not _fits_matmul_kernel(matmul):
        return None
    result = type_view(matmul.results[0].type)
    chain = MatmulChain(matmul, ops=[matmul])
    user = _single_user(matmul.results[0])
    if user is not None and user.name == "nn.add":
        other = [v for v in user.operands if v != chain.last.results[0]]
        if len(other) == 1 and type_view(user.results[0].type) == result:
            extra = type_view(other[0].type)
            if extra.shape in ((result.shape[-1],), (1, result.shape[-1]), result.shape):
                chain.bias = other[0]
                chain.ops.append(user)
                user = _single_user(user.results[0])
    activation = _activation(user, result) if user is not None else None
    if activation is not None:
        chain.activation = activation
        chain.ops.append(user)
        user = _single_user(user.results[0])
    if user is not None and user.name == "nn.cast" \
            and type_view(user.results[0].type).dtype in ("f16", "bf16", "f32"):
        chain.ops.append(user)
    return chain.read_in_place()


# ---------------------------------------------------------------------------
# Epilogue activations on f32 scalars, with arith ops only: the kernels
# need no libdevice on the GPU, and the emulation computes the same values.


def _activation(operation: ir.Operation, result) -> scalar.Scalar | None:
    """The scalar definition of a unary elementwise op that can run in an
    epilogue: one of the result's type, defined in the scalar form with an
    arith-only body (erf, tanh and sigmoid as rational approximations,
    error 3.2e-7)."""
    op_class = lookup_op(operation.name)
    if op_class is None or not issubclass(op_class, nn.UnaryElementwiseOp) \
            or type_view(operation.results[0].type) != result:
        return None
    try:
        tree = op_class.from_operation(operation).scalar_tree()
    except VerifyError:
        return None
    return tree if tree is not None and scalar.arith_only_supported(tree) else None


# The fast-math flags of the epilogue's f32 arithmetic: products and sums
# may be contracted into fused multiply-adds, a division by a constant
# becomes a product by its reciprocal and other divisions are approximate
# (2 ulp), far under the rounding of the result to f16 or bf16 that
# follows. On the GPU, this is what the epilogue costs: a
# fused multiply-add per coefficient of erf's rational approximation and
# one reciprocal, instead of a multiply and an add, and IEEE division's
# slow path (measured on an H200, the fused matmul + bias + gelu issued
# twice the instructions of the plain matmul without them).
EPILOGUE_FASTMATH = {
    "arith.divf": "#arith.fastmath<arcp,contract,afn>",
}
CONTRACT = "#arith.fastmath<contract>"
FLOAT_ARITHMETIC = {"arith.addf", "arith.subf", "arith.mulf", "arith.divf", "arith.negf"}


def relax_epilogue_arithmetic(function: ir.Operation) -> None:
    """Sets EPILOGUE_FASTMATH on the f32 arithmetic of an epilogue function."""
    def visit(op):
        if op.name in FLOAT_ARITHMETIC:
            op.attributes["fastmath"] = ir.Attribute.parse(
                EPILOGUE_FASTMATH.get(op.name, CONTRACT))
        return ir.WalkResult.ADVANCE
    function.operation.walk(visit, ir.WalkOrder.PRE_ORDER)


# ---------------------------------------------------------------------------
# Building the kernel.


class KernelBuilder:
    """Writes the hw kernel of one chain."""

    def __init__(self, chain: MatmulChain, name: str, chip: str,
                 tiles: "TileConfig | None" = None):
        self.chain = chain
        self.name = name
        self.chip = chip
        a, b = (type_view(v.type) for v in chain.matmul.operands)
        result = type_view(chain.last.results[0].type)
        self.result_shape = result.shape
        # A batched matmul runs its batch along the grid's third dim, each
        # operand's batch dims collapsed into one (`operand_batch`); a
        # batch of A over one B is one matmul of A's rows (`folds_batch`).
        self.folded = folds_batch(chain.matmul)
        self.batch_shape = () if self.folded else \
            type_view(chain.matmul.results[0].type).shape[:-2]
        self.batch = math.prod(self.batch_shape) if self.batch_shape else None
        self.operand_batches = [() if self.folded else v.shape[:-2] for v in (a, b)]
        self.m = math.prod(a.shape[:-1]) if self.folded else a.shape[-2]
        self.k = a.shape[-1]
        self.n = b.shape[-1]
        self.dtype = a.dtype
        self.element = ir.Type.parse(self.dtype)
        # The result as the kernel writes it: its rows, where A's are
        # folded; its batch dims collapsed into one, where it has batch dims.
        self.out = result.with_shape((self.m, self.n)) if self.folded else \
            result.with_shape(((self.batch,) if self.batch else ()) + (self.m, self.n))
        self.extras = [type_view(v.type) for v in chain.extras]
        self.transpose_a, self.transpose_b = chain.transposed
        # f32 products: accurate to f32 (3xTF32), or one rounded tf32
        # product where the matmul allows it.
        self.precision = "tf32"
        if self.dtype == "f32":
            allowed = chain.matmul.name == "nn.matmul" \
                and nn.MatmulOp.from_operation(chain.matmul).precision == "tf32"
            self.precision = "tf32_rounded" if allowed else "3xtf32"
        element_bytes = nvidia.dtype_bytes(self.dtype)
        row_bytes = {shape[-1] * element_bytes for shape in self.operand_shapes()}
        # TMA loads where wgmma reads them (sm_90a: f16 and bf16 operands
        # not transposed) and the rows allow.
        self.tma = nvidia.FEATURES["wgmma"].problem(nvidia.architecture(chip)) is None \
            and self.dtype in ("f16", "bf16") and chain.transposed == (False, False) \
            and all(b % nvidia.TMA_ROW_ALIGNMENT == 0 for b in row_bytes)
        self.asynchronous = self.tma or all(b % 4 == 0 for b in row_bytes)
        self.tiles = tiles or choose_tiles(self.m, self.n, self.k, chip, self.tma,
                                           self.batch or 1, self.dtype, self.precision)

    def operand_shapes(self) -> tuple[tuple[int, int], tuple[int, int]]:
        """The (rows, cols) of A and B as the kernel reads them from global
        memory: K x M and N x K where they are stored transposed."""
        a = (self.k, self.m) if self.transpose_a else (self.m, self.k)
        b = (self.n, self.k) if self.transpose_b else (self.k, self.n)
        return a, b

    def tile_shapes(self) -> tuple[tuple[int, int], tuple[int, int]]:
        """The shared tiles of A and B, transposed as the operands are."""
        t = self.tiles
        a = (t.block_k, t.block_m) if self.transpose_a else (t.block_m, t.block_k)
        b = (t.block_n, t.block_k) if self.transpose_b else (t.block_k, t.block_n)
        return a, b

    @property
    def grid(self) -> tuple[int, ...]:
        grid = (-(-self.m // self.tiles.block_m), -(-self.n // self.tiles.block_n))
        return grid + (self.batch,) if self.batch else grid

    def extra_shape(self, extra) -> tuple[int, ...]:
        """The shape the kernel reads a bias or residual in: the result's
        as the kernel writes it (a residual, or a [1, N] bias of a one-row
        result, which is the same), else a vector of the N columns (a bias
        row)."""
        return self.out.shape if extra.shape == self.result_shape else (self.n,)

    @property
    def collapses(self) -> bool:
        """Whether the launch reshapes the result for the kernel: A's batch
        folded into its rows, or batch dims collapsed into one."""
        return self.folded or len(self.batch_shape) > 1

    def argument_types(self) -> list[ir.Type]:
        types = [MemRefType(((math.prod(batch),) if batch else ()) + shape, self.dtype)
                 for batch, shape in zip(self.operand_batches, self.operand_shapes())]
        types += [MemRefType(self.extra_shape(e), e.dtype) for e in self.extras]
        types.append(MemRefType(self.out.shape, self.out.dtype))
        return [t.to_mlir() for t in types]

    def epilogue(self, body: ir.Block, location: ir.Location) -> str:
        """A private function computing an output element."""
        name = f"{self.name}_epilogue"
        inputs = [ir.F32Type.get()] + [ir.Type.parse(e.dtype) for e in self.extras]
        output = ir.Type.parse(self.out.dtype)
        with ir.InsertionPoint(body), location:
            function = func.FuncOp(name, (inputs, [output]), visibility="private")
            with ir.InsertionPoint(function.add_entry_block()):
                value = function.arguments[0]
                if self.chain.group_ops is not None:
                    value = self.group_epilogue(list(function.arguments))
                elif self.extras:
                    value = arith.addf(value, scalar.cast_float(function.arguments[1],
                                                                ir.F32Type.get()))
                if self.chain.activation is not None:
                    value = scalar.to_mlir(self.chain.activation, [value], arith_only=True)
                # Rounded to the matmul's type once, as the nn ops' results
                # are, then cast (nn.cast) to the output's.
                if self.chain.group_ops is None:
                    value = scalar.cast_float(value, self.element)
                if self.chain.group_ops is None and self.out.dtype != self.dtype:
                    value = scalar.cast_float(scalar.cast_float(value, ir.F32Type.get()), output)
                func.ReturnOp([value])
        relax_epilogue_arithmetic(function)
        return name

    def group_epilogue(self, arguments: list[ir.Value]) -> ir.Value:
        """A contraction group's epilogue on an element: the matmul's value
        (the f32 accumulator rounded to its type), then each op of the
        group on f32 operands, rounded to its result's type, as the nn
        references compute them."""
        chain = self.chain
        f32 = ir.F32Type.get()
        values = {chain.matmul.results[0]: scalar.cast_float(arguments[0], self.element)}
        values.update(zip(chain.group_extras, arguments[1:]))

        def operand(value: ir.Value) -> ir.Value:
            if value not in values:  # a splat constant
                values[value] = scalar.cast_float(
                    arith.constant(f32, splat_value(value.owner.operation)),
                    ir.Type.parse(type_view(value.type).dtype))
            return scalar.cast_float(values[value], f32)
        for op in chain.group_ops:
            target = ir.Type.parse(type_view(op.results[0].type).dtype)
            operands = [operand(v) for v in op.operands]
            view = lookup_op(op.name).from_operation(op)
            if isinstance(view, nn.CastOp):
                result = operands[0]
            else:
                result = scalar.to_mlir(view.scalar_tree(), operands, arith_only=True)
            values[op.results[0]] = scalar.cast_float(result, target)
        return values[chain.group_result]

    def build(self, body: ir.Block, location: ir.Location) -> None:
        epilogue = self.epilogue(body, location)
        t = self.tiles
        types = self.argument_types()
        kernel = new_kernel(body, self.name, types, location)
        with location:
            with ir.InsertionPoint(kernel.add_entry_block()):
                args = list(kernel.arguments)
                a, b, c = args[0], args[1], args[-1]
                extras = args[2:-1]
                row = arith.muli(hw.BlockIdOp.build(dim=0), index(t.block_m))
                col = arith.muli(hw.BlockIdOp.build(dim=1), index(t.block_n))
                batch = [hw.BlockIdOp.build(dim=2)] if self.batch else []
                operand_batches = [self.operand_batch(batch, shape)
                                   for shape in self.operand_batches]
                # K = 0: nothing to load or multiply; the result is the
                # epilogue of zeros (the nn reference's empty sum).
                if self.k:
                    barrier = (hw.MBarrierInitOp.build(count=2) if self.tma else None)
                    a_tile, b_tile = (hw.AllocOp.build(result_type=MemRefType(
                        shape, self.dtype, "workgroup")) for shape in self.tile_shapes())
                acc = hw.AllocOp.build(result_type=MemRefType((t.block_m, t.block_n), "f32",
                                                              "private"))
                hw.FillOp.build(acc)
                if self.k:
                    self.k_loop(a, b, a_tile, b_tile, acc, barrier, row, col,
                                operand_batches)
                hw.StoreOp.build(acc, c, extras, batch + [row, col], epilogue=epilogue)
                func.ReturnOp([])

    def operand_batch(self, batch: list[ir.Value], shape: tuple[int, ...]) -> list[ir.Value]:
        """The index into an operand's collapsed batch dim of the result's
        batch entry `batch` (the block's third index): the entry's index in
        each of the result's batch dims, from the last, times the operand's
        stride for that dim; a dim the operand broadcasts (of size 1, or
        absent) contributes none. [] for an operand with no batch dims."""
        if not shape:
            return []
        if shape == self.batch_shape:
            return batch
        aligned = (1,) * (len(self.batch_shape) - len(shape)) + tuple(shape)
        total, stride, inner = index(0), 1, 1
        for extent, size in reversed(list(zip(self.batch_shape, aligned))):
            if size != 1:
                entry = arith.remui(arith.divui(batch[0], index(inner)), index(extent))
                total = arith.addi(total, arith.muli(entry, index(stride)))
            stride *= size
            inner *= extent
        return [total]

    def k_loop(self, a, b, a_tile, b_tile, acc, barrier, row, col, batches) -> None:
        """The loop over K: each step loads the A and B tiles and
        accumulates their product into `acc`; `batches` are the operands'
        batch indices."""
        t = self.tiles
        k_end = -(-self.k // t.block_k) * t.block_k
        loop = scf.ForOp(index(0), index(k_end), index(t.block_k))
        with ir.InsertionPoint(loop.body):
            k = loop.induction_variable
            # The boxes' origins in A and B, as they are stored.
            at_a = batches[0] + ([k, row] if self.transpose_a else [row, k])
            at_b = batches[1] + ([col, k] if self.transpose_b else [k, col])
            if self.asynchronous and t.stages > 1:
                hw.PipelineOp.build(stages=t.stages)
            if self.tma:
                zero = index(0)
                hw.TmaLoadOp.build(a, a_tile, barrier, zero, at_a)
                hw.TmaLoadOp.build(b, b_tile, barrier, zero, at_b)
                step = arith.divui(k, index(t.block_k))
                parity = arith.remui(step, index(2))
                hw.MBarrierWaitOp.build(barrier, zero, parity)
            elif self.asynchronous:
                tokens = [hw.AsyncCopyOp.build(a, a_tile, at_a),
                          hw.AsyncCopyOp.build(b, b_tile, at_b)]
                hw.CommitOp.build(tokens)
                hw.WaitOp.build(pending=0)
            else:
                hw.CopyOp.build(a, a_tile, at_a)
                hw.CopyOp.build(b, b_tile, at_b)
                hw.BarrierOp.build()
            hw.MmaOp.build(a_tile, b_tile, acc, [], precision=self.precision,
                           transpose_a=self.transpose_a, transpose_b=self.transpose_b)
            hw.BarrierOp.build()
            scf.YieldOp([])



@lowering(nn.MatmulOp, to="hw")
def lower_matmul_chain(op: nn.MatmulOp, target: HWLowering) -> list[ir.Operation] | None:
    """A matmul and the chain that consumes it (`find_chain`) as one kernel
    and its launch; returns the chain's ops. None: the matmul does not fit
    a kernel (it stays)."""
    if op.result_type.dtype in nn.INTEGER_ACCUMULATORS:
        return target.leave(op.operation, "the matmul kernels of the cuda targets take float "
                            f"operands; these are {op.operand_types[0].dtype}")
    chain = find_chain(op.operation)
    if chain is None:
        return None
    if is_empty(chain.last):
        launch(chain.last, [], target.name, ())  # no kernel: nothing to compute
        return chain.ops
    builder = KernelBuilder(chain, target.name, target.chip, target.tiles)
    builder.build(target.kernels, op.operation.location)
    launch_chain(chain, builder)
    return chain.ops


def launch_chain(chain: MatmulChain, builder: KernelBuilder) -> None:
    """The launch of a chain's kernel in place of its last op. Where A's
    batch is folded into its rows, the kernel reads A and the residuals
    as rows (`tensor.collapse_shape`) and writes the result's rows, which
    `tensor.expand_shape` gives its users in the result's shape; where
    the batch dims are more than one, the operands, residuals and result
    are collapsed to one batch dim so."""
    inputs = list(chain.operands or (chain.host_value(v) for v in chain.matmul.operands))
    groups = _row_groups if builder.folded else _batch_groups
    with ir.InsertionPoint(chain.last), chain.last.location:
        if builder.folded:
            inputs[0] = _rows(inputs[0])
        else:
            inputs = [_collapsed(v, _batch_groups) for v in inputs]
        for value, extra in zip(chain.extras, builder.extras):
            host, shape = chain.host_value(value), builder.extra_shape(extra)
            inputs.append(_collapsed(host, groups) if shape == builder.out.shape
                          and len(shape) < len(extra.shape) else reshaped(host, shape))
    if not builder.collapses:
        launch(chain.last, inputs, builder.name, builder.grid)
        return
    result = chain.last.results[0]
    with ir.InsertionPoint.after(chain.last), chain.last.location:
        rows = _collapsed(result, groups)
        shaped = tensor.expand_shape(result.type, rows, groups(type_view(result.type).rank),
                                     [], list(builder.result_shape))
    result.replace_all_uses_except(shaped, rows.owner.operation)
    launch(rows.owner.operation, inputs, builder.name, builder.grid)
    rows.owner.operation.erase()


def _row_groups(rank: int) -> list[list[int]]:
    """The reassociation that folds a tensor's leading dims into its rows."""
    return [list(range(rank - 1)), [rank - 1]]


def _batch_groups(rank: int) -> list[list[int]]:
    """The reassociation that collapses a tensor's batch dims into one."""
    return [list(range(rank - 2)), [rank - 2], [rank - 1]]


def _rows(value: ir.Value) -> ir.Value:
    """A tensor of rank >= 2 as a matrix of its rows ([..., M, K] as
    [prod(...) * M, K]), at the current insertion point."""
    return _collapsed(value, _row_groups)


def _collapsed(value: ir.Value, groups) -> ir.Value:
    """`value` with the dims of each of `groups(rank)` collapsed into one
    (unchanged where no group has more than one dim), at the current
    insertion point."""
    view = type_view(value.type)
    reassociation = groups(view.rank)
    if all(len(g) == 1 for g in reassociation) or view.rank < len(reassociation):
        return value
    shape = tuple(math.prod(view.shape[d] for d in g) for g in reassociation)
    return tensor.collapse_shape(view.with_shape(shape).to_mlir(), value, reassociation)


