"""--convert-nn-to-hw: nn programs as hw kernels for an NVIDIA architecture.

Each fusion group (`nn.fused`, from `nn-fuse`) becomes one kernel and its
launch, and so does each nn op outside a group that a kernel covers:

* contraction groups: the matmul's kernel below, the group's other ops its
  epilogue (`group_chain`: elementwise ops of the result's shape with an
  arith-only scalar form, casts, splat constants, arguments shaped like
  the result or like a row of it; each op computed in f32 and rounded to
  its type, as the nn references do). A group that is no such chain is
  lowered op by op;
* elementwise groups (and elementwise ops): a grid-stride kernel over the
  result's index space, each block a tile of consecutive elements
  (`nvidia.elementwise_kernel_shape`), each thread its vectors of it;
* reduction groups (and reductions): a row kernel, one block per row (a
  warp for short rows, `nvidia.row_kernel_shape`), the blocks striding
  over the rows, the row held in registers so that its inputs are read
  once and its outputs written once. A row is the folded axes' elements:
  contiguous (and read in vectors) where they are trailing, else walked in
  place, strided, with no transpose. A row longer than the registers hold
  (16384 elements) is walked in chunks, once per reduction (the chunks'
  folds folded) and once for the results, its values computed again in
  each pass.

Both are written the same way (`GroupKernel`): each value of the group is
a 1-d register tile, a row's (or a tile's) elements or a row's statistic
(one element every thread holds); inputs are loaded per thread, broadcast
into the group's index space (`hw.load_elements`: an operand that
broadcasts is read from global memory per element rather than held by
other threads), each nn op is the `hw.elementwise` of its scalar form
(`hw.cast` for casts), each reduction a `hw.block_reduce` (warp shuffles,
then a shared scratch of one f32 per warp between barriers) in f32 with
its finish (a mean's division), and outputs are stored as runs
(`hw.store_elements`). Why hw kernels rather than linalg -> gpu through
the transform dialect: the row kernels keep a row in registers across
several reductions and their consumers (softmax's two passes over one
read), which tiling each linalg op on its own does not, and the emulation
and the hazard checker see the block-collective ops.

Matmul kernels in detail. Each `nn.matmul` of two f16 or bf16 tensors, 2-d or batched (3-d, one
batch dim of the same size in both; the batch runs along the grid's third
dim), with the chain of ops
that consumes it fused as its epilogue — an `nn.add` of a bias (a row of
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
  errors far under the f16/bf16 rounding of its result). The K loop carries an
  `hw.pipeline` annotation of S stages, which `hw-pipeline` realises;
* loads are TMA loads on an mbarrier on sm_90a (global rows of a
  multiple of 16 bytes), cp.async otherwise (rows of a multiple of 4
  bytes), else synchronous copies (no pipelining); tiles past the ends of
  M, N and K read zeros and store nothing, so shapes that tiles do not
  divide need no padding;
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

The lowerings are class-keyed, in the registry of this conversion
(`lamina.lowering.registry`, `to="hw"`), where the matmul chain's is
registered for `nn.MatmulOp` and a plugin registers its op's:

    @lowering(MyOp, to="hw")
    def lower_my_op(op, target: HWLowering) -> list[ir.Operation] | None:
        kernel = new_kernel(target.kernels, target.name, argument_types, loc)
        ...                                   # the kernel's hw ops
        launch(op.operation, [x], target.name, grid)
        return [op.operation]                 # the ops it lowered

Each op of a host function with a lowering (its class's or its nearest
base class's) is offered to it in order, the op's location current; the
function returns the ops it lowered, whose results it has replaced (the
pass erases them, last first), or None to leave the op. `new_kernel` and
`launch` build the kernel function and replace the op's result by a
launch's output buffer.

Expects verified nn IR (fusion groups formed or not). An nn op it does not
convert is an error at the op saying why (the cuda targets have no other
way to the GPU yet), unless `keep-unconverted` is set: data movement,
attention, convolutions, f32 matmuls, groups reading or writing
booleans. Guarantees: the groups and ops it converts are gone, and so are
the bodies of the groups;
each kernel verifies and computes the values of its ops, f16 and bf16
products and sums accumulated in f32 and rounded once, each elementwise
op rounded to its type, as the nn references do.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from mlir import ir
from mlir.dialects import arith, bufferization, func, memref, scf, tensor

from lamina import scalar
from lamina.dialects import hw, nn
from lamina.dialects.opdef import lookup_op
from lamina.lowering.hw_to_loops import index
from lamina.lowering.registry import lowering, registry
from lamina.pass_registry import Pass, PassFailure, register_pass
from lamina.targets import nvidia
from lamina.targets.nvidia import RESERVED_SHARED_BYTES, shared_alignment
from lamina.types import MemRefType, TensorType, VerifyError, type_view

# One warpgroup per block (what wgmma needs, and 4 warps for mma.sync).
THREADS = nvidia.WARPGROUP
# f32 accumulator registers a thread may hold, leaving room for the
# fragments, addresses and loop state below the limit of
# nvidia.REGISTERS_PER_THREAD (255).
ACCUMULATOR_REGISTERS = 128


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
                 batch: int = 1) -> TileConfig:
    """The tiling of an M x N x K f16/bf16 matmul (`batch` of them) with the
    least estimated time on `chip`.

    The model: a block's time is its tile's work (BM * BN * K, K rounded up
    to BK) divided by how well the tile feeds the tensor cores (its
    arithmetic intensity BM * BN / (BM + BN), the loads each MMA step
    amortises); blocks run in waves of one per SM, so the estimate is
    waves x block time. Tiles must fit the register budget (the f32
    accumulator spread over 128 threads) and their stages the shared
    memory. More stages hide more latency, up to the number of K steps,
    but not so many that two blocks no longer fit in an SM's shared
    memory: a second resident block hides the loads' latency and the
    epilogue better than a deeper pipeline (measured on an H200, f16
    4096^3 with 128x128x64 tiles: 4 stages, one block per SM, 410
    TFLOP/s; 3 stages, two blocks, 554; bench/results-gpu.md). With TMA
    and wgmma (sm_90a), BK is 64 (128-byte rows, as wgmma reads them
    swizzled) and BN a multiple of 64."""
    arch = nvidia.architecture(chip)
    block_k = 64 if tma else 32
    k_steps = -(-k // block_k)
    best, best_time = None, None
    for block_m in (128, 64):
        for block_n in (128, 64):
            if block_m * block_n // THREADS > ACCUMULATOR_REGISTERS:
                continue
            blocks = -(-m // block_m) * -(-n // block_n) * batch
            waves = -(-blocks // arch.sms)
            intensity = block_m * block_n / (block_m + block_n)
            # K = 0 still stores its tile (the epilogue of zeros).
            time = waves * block_m * block_n * max(k_steps, 1) * block_k / intensity
            if best_time is None or time < best_time:
                best, best_time = (block_m, block_n), time
    block_m, block_n = best
    fitting = [candidate for candidate in (4, 3, 2) if candidate <= k_steps and TileConfig(
        block_m, block_n, block_k, candidate).shared_bytes() <= arch.shared_memory_bytes]
    # A block's shared memory as an SM counts it: its tiles, the alignment
    # of the dynamic shared memory and what the system reserves.

    def per_block(stages: int) -> int:
        return (TileConfig(block_m, block_n, block_k, stages).shared_bytes()
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


def _fits_matmul_kernel(matmul: ir.Operation) -> bool:
    a, b = (type_view(v.type) for v in matmul.operands)
    return a.dtype in ("f16", "bf16") and a.rank == b.rank and a.rank in (2, 3) \
        and a.shape[:-2] == b.shape[:-2]


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
        if op is matmul or _splat(op) is not None:
            if _splat(op) is not None:
                produced.add(op.results[0])
            continue
        op_class = lookup_op(op.name)
        if op_class is None or not issubclass(op_class, nn.ElementwiseOp) \
                or type_view(op.results[0].type).shape != result.shape \
                or type_view(op.results[0].type).dtype not in hw.TILE_TYPES:
            return None
        if not issubclass(op_class, nn.CastOp):
            tree = op_class.from_operation(op).scalar_tree()
            if tree is None or not scalar.arith_only_supported(tree):
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
                       group_inputs=inputs, group_result=returned.operands[0])


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
    return chain


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
        # A batched matmul runs its batch along the grid's third dim.
        self.batch = a.shape[0] if a.rank == 3 else None
        self.m, self.k = a.shape[-2:]
        self.n = b.shape[-1]
        self.dtype = a.dtype
        self.element = ir.Type.parse(self.dtype)
        self.out = type_view(chain.last.results[0].type)
        self.extras = [type_view(v.type) for v in chain.extras]
        row_bytes = {dim * 2 for dim in (self.k, self.n)}
        # TMA loads where wgmma reads them (sm_90a) and the rows allow.
        self.tma = nvidia.FEATURES["wgmma"].problem(nvidia.architecture(chip)) is None and all(
            b % nvidia.TMA_ROW_ALIGNMENT == 0 for b in row_bytes)
        self.asynchronous = self.tma or all(b % 4 == 0 for b in row_bytes)
        self.tiles = tiles or choose_tiles(self.m, self.n, self.k, chip, self.tma,
                                           self.batch or 1)

    @property
    def grid(self) -> tuple[int, ...]:
        grid = (-(-self.m // self.tiles.block_m), -(-self.n // self.tiles.block_n))
        return grid + (self.batch,) if self.batch else grid

    def extra_shape(self, extra) -> tuple[int, ...]:
        """The shape the kernel reads a bias or residual in: the result's
        (a residual, or a [1, N] bias of a one-row result, which is the
        same), else a vector of the N columns (a bias row)."""
        return extra.shape if extra.shape == self.out.shape else (self.n,)

    def argument_types(self) -> list[ir.Type]:
        batch = (self.batch,) if self.batch else ()
        types = [MemRefType(batch + (self.m, self.k), self.dtype),
                 MemRefType(batch + (self.k, self.n), self.dtype)]
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
                    value = arith.addf(value, arith.extf(ir.F32Type.get(),
                                                         function.arguments[1]))
                if self.chain.activation is not None:
                    value = scalar.to_mlir(self.chain.activation, [value], arith_only=True)
                # Rounded to the matmul's type once, as the nn ops' results
                # are, then cast (nn.cast) to the output's.
                if self.chain.group_ops is None:
                    value = arith.truncf(self.element, value)
                if self.chain.group_ops is None and self.out.dtype != self.dtype:
                    value = arith.extf(ir.F32Type.get(), value)
                    if self.out.dtype != "f32":
                        value = arith.truncf(output, value)
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
        values = {chain.matmul.results[0]: arith.truncf(self.element, arguments[0])}
        values.update(zip(chain.group_extras, arguments[1:]))

        def operand(value: ir.Value) -> ir.Value:
            if value not in values:  # a splat constant
                values[value] = scalar.cast_float(
                    arith.constant(f32, _splat(value.owner.operation)),
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
                # K = 0: nothing to load or multiply; the result is the
                # epilogue of zeros (the nn reference's empty sum).
                if self.k:
                    barrier = (hw.MBarrierInitOp.build(count=2) if self.tma else None)
                    a_tile = hw.AllocOp.build(result_type=MemRefType(
                        (t.block_m, t.block_k), self.dtype, "workgroup"))
                    b_tile = hw.AllocOp.build(result_type=MemRefType(
                        (t.block_k, t.block_n), self.dtype, "workgroup"))
                acc = hw.AllocOp.build(result_type=MemRefType((t.block_m, t.block_n), "f32",
                                                              "private"))
                hw.FillOp.build(acc)
                if self.k:
                    self.k_loop(a, b, a_tile, b_tile, acc, barrier, row, col, batch)
                hw.StoreOp.build(acc, c, extras, batch + [row, col], epilogue=epilogue)
                func.ReturnOp([])

    def k_loop(self, a, b, a_tile, b_tile, acc, barrier, row, col, batch) -> None:
        """The loop over K: each step loads the A and B tiles and
        accumulates their product into `acc`."""
        t = self.tiles
        k_end = -(-self.k // t.block_k) * t.block_k
        loop = scf.ForOp(index(0), index(k_end), index(t.block_k))
        with ir.InsertionPoint(loop.body):
            k = loop.induction_variable
            if self.asynchronous and t.stages > 1:
                hw.PipelineOp.build(stages=t.stages)
            if self.tma:
                zero = index(0)
                hw.TmaLoadOp.build(a, a_tile, barrier, zero, batch + [row, k])
                hw.TmaLoadOp.build(b, b_tile, barrier, zero, batch + [k, col])
                step = arith.divui(k, index(t.block_k))
                parity = arith.remui(step, index(2))
                hw.MBarrierWaitOp.build(barrier, zero, parity)
            elif self.asynchronous:
                tokens = [hw.AsyncCopyOp.build(a, a_tile, batch + [row, k]),
                          hw.AsyncCopyOp.build(b, b_tile, batch + [k, col])]
                hw.CommitOp.build(tokens)
                hw.WaitOp.build(pending=0)
            else:
                hw.CopyOp.build(a, a_tile, batch + [row, k])
                hw.CopyOp.build(b, b_tile, batch + [k, col])
                hw.BarrierOp.build()
            hw.MmaOp.build(a_tile, b_tile, acc, [])
            hw.BarrierOp.build()
            scf.YieldOp([])


def _buffer(value: ir.Value) -> ir.Value:
    """A read-only buffer of a tensor, of the tensor's shape."""
    view = type_view(value.type)
    memref_type = MemRefType(view.shape, view.dtype).to_mlir()
    return bufferization.ToBufferOp(memref_type, value, read_only=True).result


def reshaped(value: ir.Value, shape: tuple[int, ...]) -> ir.Value:
    """`value`, a tensor, collapsed to `shape` (its dims of size 1 dropped:
    a [1, N] bias row as the [N] vector a kernel reads), at the current
    insertion point; `value` itself when it has that shape."""
    view = type_view(value.type)
    if view.shape == tuple(shape):
        return value
    assert len(shape) == 1 and view.shape[-1] == shape[0] \
        and all(d == 1 for d in view.shape[:-1]), (view.shape, shape)
    return tensor.collapse_shape(TensorType(tuple(shape), view.dtype).to_mlir(), value,
                                 [list(range(view.rank))])


def new_kernel(kernels: ir.Block, name: str, argument_types: list[ir.Type],
               location: ir.Location) -> func.FuncOp:
    """An empty kernel (a private func.func with `hw.kernel`) at the end of
    `kernels`, the module's body; its body is for the caller to build."""
    with ir.InsertionPoint(kernels), location:
        kernel = func.FuncOp(name, (argument_types, []), visibility="private")
        kernel.attributes[hw.KERNEL_ATTRIBUTE] = ir.UnitAttr.get()
    return kernel


def launch(last: ir.Operation, inputs: list[ir.Value], kernel: str, grid: tuple[int, ...],
           block: tuple[int, ...] = (THREADS,), results: list[ir.Value] | None = None) -> None:
    """Replaces the results of `last`, an op of the host function (or those
    of them in `results`), by the outputs of a launch of `kernel`: its
    arguments are buffers of the tensors `inputs`, of their shapes, and a
    new buffer for each result, which the kernel writes; the caller erases
    the ops it lowered. Results with no elements (a dim of size 0) are new
    buffers alone: no launch (a grid has no size 0), and the kernel, which
    a lowering need not build then (`is_empty`), is erased where it was
    built."""
    results = list(last.results) if results is None else results
    empty = all(0 in type_view(r.type).shape for r in results)
    with ir.InsertionPoint(last), last.location:
        operands = [] if empty else [_buffer(v) for v in inputs]
        outs = [type_view(r.type) for r in results]
        buffers = [memref.AllocOp(MemRefType(out.shape, out.dtype).to_mlir(), [], []).result
                   for out in outs]
        if empty:
            _erase_kernel(last, kernel)
        else:
            hw.LaunchOp.build(operands + buffers, kernel=kernel, grid=grid, block=block)
        values = [bufferization.ToTensorOp(out.to_mlir(), result, restrict=True,
                                           writable=True).result
                  for out, result in zip(outs, buffers)]
    for old, value in zip(results, values):
        old.replace_all_uses_with(value)


def _erase_kernel(op: ir.Operation, name: str) -> None:
    """Erases the kernel `name` of the module holding `op`, if there is one."""
    module = op.parent
    while module.name != "builtin.module":
        module = module.parent
    for candidate in module.regions[0].blocks[0].operations:
        if hw.is_kernel(candidate.operation) \
                and ir.StringAttr(candidate.attributes["sym_name"]).value == name:
            candidate.operation.erase()
            return


def is_empty(op: ir.Operation) -> bool:
    """Whether the results of `op` have no elements (a dim of size 0)."""
    return all(0 in type_view(r.type).shape for r in op.results)




# ---------------------------------------------------------------------------
# Elementwise and row kernels: the ops of a fusion group (or one op) on
# runs of their index space.

# Where a value of a row kernel lives: a tile of the row's elements, or the
# row's statistic (one element every thread holds).
ROW, STAT = "row", "stat"


class GroupNotLowered(Exception):
    """A group (or op) that the elementwise and row kernels do not cover."""


@dataclass
class KernelGroup:
    """The nn ops of one kernel: `ops` in order (nn ops and splat
    constants), reading `arguments` (the kernel's inputs, in order) and
    giving `results` (its outputs, in order)."""

    ops: list[ir.Operation]
    arguments: list[ir.Value]
    results: list[ir.Value]
    # The host's values passed for `arguments`.
    inputs: list[ir.Value]

    @classmethod
    def of_op(cls, op: ir.Operation) -> "KernelGroup":
        """One nn op as a group: its distinct operands are the inputs."""
        operands = []
        for value in op.operands:
            if not any(value == seen for seen in operands):
                operands.append(value)
        return cls([op], operands, list(op.results), operands)

    @classmethod
    def of_fused(cls, op: ir.Operation, body: ir.Operation) -> "KernelGroup":
        """The body of an nn.fused op."""
        block = body.regions[0].blocks[0]
        ops = [o.operation for o in block.operations]
        returned = ops.pop()
        return cls(ops, list(block.arguments), list(returned.operands), list(op.operands))


def _splat(op: ir.Operation) -> float | None:
    """The value of a splat constant tensor, or None for other ops."""
    if op.name != "arith.constant":
        return None
    attribute = op.attributes["value"]
    if not isinstance(attribute, ir.DenseElementsAttr) or not attribute.is_splat:
        return None
    element = attribute.get_splat_value()
    return float(ir.FloatAttr(element).value) if isinstance(element, ir.FloatAttr) else None


class GroupKernel:
    """Writes the grid-stride kernel of an elementwise or reduction group.

    Elementwise groups: the index space is the shape every output has; a
    block's tile is `threads * per_thread` consecutive elements of it, and
    the blocks stride over the tiles. Reduction groups: their reductions
    fold the same axes of one domain; a row is a run of the folded
    elements (walked in place where the axes are not trailing), a block holds it in registers (`nvidia.row_kernel_shape`:
    one warp for short rows), and the blocks stride over the rows. Each
    value of the group is a register tile: a row's (or tile's) elements, or
    the row's statistic after a `hw.block_reduce` (a tile of one element
    every thread holds, broadcast where row values read it); inputs are
    loaded per thread, broadcast into the space (`hw.load_elements`), and
    outputs stored as runs (`hw.store_elements`). Each nn op rounds its
    result to its type as the nn references do; reductions accumulate in
    f32."""

    def __init__(self, group: KernelGroup, name: str, chip: str):
        self.group, self.name = group, name
        self.arch = nvidia.architecture(chip)
        self.views = {}
        for op in group.ops:
            if op.name.startswith("nn."):
                self.views[op] = lookup_op(op.name).from_operation(op)
        reductions = [v for v in self.views.values() if isinstance(v, nn.ReductionOp)]
        for value in group.results:
            if type_view(value.type).dtype not in hw.TILE_TYPES:
                raise GroupNotLowered(f"its result {value.type} is not of f32, f16 or bf16; "
                                      "kernels write f32, f16 and bf16")
        for value in group.arguments:
            if type_view(value.type).dtype not in hw.TILE_TYPES:
                raise GroupNotLowered(f"it reads {value.type}; kernels read f32, f16 and bf16")
        for op, view in self.views.items():
            if not isinstance(view, (nn.ElementwiseOp, nn.ReductionOp)):
                raise GroupNotLowered(f"it holds '{op.name}'")
            types = {type_view(v.type).dtype for v in list(op.operands) + list(op.results)}
            if not types <= set(hw.MAP_TYPES) or isinstance(view, nn.CastOp) and "i1" in types \
                    or isinstance(view, nn.ReductionOp) and "i1" in types:
                raise GroupNotLowered(f"'{op.name}' has {', '.join(sorted(types))} operands "
                                      "and results; its register tiles hold f32, f16, bf16 "
                                      "(and i1 between comparisons and selects)")
        if reductions:
            self.row_space(reductions)
        else:
            shapes = {type_view(v.type).shape for v in group.results}
            if len(shapes) != 1:
                raise GroupNotLowered("its results differ in shape")  # lower_group splits them
            self.domain = shapes.pop()
            elements = math.prod(self.domain)
            self.threads, per_thread, self.grid = nvidia.elementwise_kernel_shape(
                elements, self.arch)
            self.length = self.threads * per_thread
            self.columns = self.length
            self.chunks = 1
            self.rows = -(-elements // self.length)
            self.stat_shapes = set()
            self.order = ()

    def row_space(self, reductions: list) -> None:
        domains = {type_view(v.operation.operands[0].type).shape for v in reductions}
        rank = len(next(iter(domains)))
        axes = {v.normalized_axes(rank) for v in reductions}
        if len(domains) != 1 or len(axes) != 1:
            raise GroupNotLowered("its reductions differ in domain or axes")
        self.domain, axes = domains.pop(), axes.pop()
        kept_axes = [d for d in range(rank) if d not in axes]
        # Rows over leading axes are walked in place (strided, no transpose):
        # the kept dims first, then the folded ones.
        self.order = () if axes == tuple(range(rank - len(axes), rank)) else tuple(
            kept_axes + list(axes))
        self.columns = math.prod(self.domain[d] for d in axes)
        self.rows = math.prod(self.domain[d] for d in kept_axes)
        self.threads, per_thread, self.chunks = nvidia.row_kernel_shape(self.columns)
        self.length = self.threads * per_thread
        resident = max(1, self.arch.threads_per_sm // self.threads)
        self.grid = max(1, min(self.rows, resident * self.arch.sms))
        kept = tuple(1 if i in axes else d for i, d in enumerate(self.domain))
        self.stat_shapes = {kept, tuple(self.domain[d] for d in kept_axes)}

    # -- levels ----------------------------------------------------------------

    def natural(self, value: ir.Value) -> str | None:
        """Where a value lives by what computes it: a reduction's result is
        a statistic, an elementwise op's what its operands are (a row where
        a row value or its own shape says so); None for inputs and
        constants and what only they compute (loaded where they are read)."""
        if value in self._natural:
            return self._natural[value]
        owner = value.owner
        level = None
        if not isinstance(owner, ir.Block) and owner.operation in self.views:
            view = self.views[owner.operation]
            if isinstance(view, nn.ReductionOp):
                level = STAT
            else:
                levels = {self.natural(v) for v in owner.operation.operands}
                if ROW in levels:
                    level = ROW
                elif STAT in levels:
                    level = STAT if self.stat_shaped(value) else ROW
        self._natural[value] = level
        return level

    def stat_shaped(self, value: ir.Value) -> bool:
        shape = type_view(value.type).shape
        return any(shape == s[len(s) - len(shape):] and all(d == 1 for d in s[:len(s) - len(shape)])
                   for s in self.stat_shapes)

    # -- building ----------------------------------------------------------------

    def argument_types(self) -> list[ir.Type]:
        return [MemRefType(type_view(v.type).shape, type_view(v.type).dtype).to_mlir()
                for v in self.group.arguments + self.group.results]

    def tile(self, level: str, dtype: str) -> ir.Value:
        length = self.length if level == ROW else 1
        with ir.InsertionPoint(self.loop_op), self.location:
            return hw.AllocOp.build(result_type=MemRefType((length,), dtype, "private"))

    def build(self, body: ir.Block, location: ir.Location) -> None:
        self.location = location
        self._natural: dict = {}
        kernel = new_kernel(body, self.name, self.argument_types(), location)
        try:
            self.build_body(kernel, location)
        except GroupNotLowered:
            kernel.operation.erase()
            raise

    def build_body(self, kernel: func.FuncOp, location: ir.Location) -> None:
        entry = kernel.add_entry_block()
        arguments = list(entry.arguments)
        self.buffers = dict(zip(self.group.arguments, arguments))
        outputs = arguments[len(self.group.arguments):]
        with location, ir.InsertionPoint(entry):
            self.scratch = []
            if self.threads > nvidia.WARP and any(isinstance(v, nn.ReductionOp)
                                                  for v in self.views.values()):
                self.scratch = [hw.AllocOp.build(result_type=MemRefType(
                    (self.threads // nvidia.WARP,), "f32", "workgroup"))]
            start = hw.BlockIdOp.build(dim=0)
            loop = scf.ForOp(start, index(self.rows), index(self.grid))
            self.loop_op = loop.operation
            with ir.InsertionPoint(loop.body):
                row = loop.induction_variable
                self.row_start = arith.muli(row, index(self.columns))
                self.offsets = {STAT: row}
                self.tiles: dict = {}
                self.chunk = 0
                for value, out in zip(self.group.results, outputs):
                    self.store(value, out)
                scf.YieldOp([])
            func.ReturnOp([])

    def store(self, value: ir.Value, out: ir.Value) -> None:
        level = self.natural(value) or ROW
        shape = type_view(value.type).shape
        if level == ROW and shape != self.domain:
            raise GroupNotLowered(f"its result {value.type} is not of the shape of its rows' "
                                  f"space {hw.dims(self.domain)}")
        for chunk in self.walk_chunks(level):
            tile = self.materialise(value, level, shape if level == STAT else self.domain)
            hw.StoreElementsOp.build(tile, out, self.offset(level), shape=list(shape),
                                     count=self.run_count(level), **self.walk(level))

    def walk_chunks(self, level: str):
        """Sets `chunk` to each chunk of a row in turn (a row that fits in
        registers is one; a statistic is its row's); the values of a row
        walked in chunks are computed again in each pass over them, so
        that only one chunk's are held at a time."""
        chunks = range(self.chunks) if level == ROW else [self.chunk]
        outer = self.chunk
        for chunk in chunks:
            self.chunk = chunk
            yield chunk
            if self.chunks > 1:
                self.tiles = {k: t for k, t in self.tiles.items() if k[1] != ROW}
        self.chunk = outer

    def offset(self, level: str) -> ir.Value:
        """Where the current chunk of the row (or the row's statistic) starts."""
        if level == STAT:
            return self.offsets[STAT]
        if self.chunk == 0:
            return self.row_start
        return arith.addi(self.row_start, index(self.chunk * self.length))

    def walk(self, level: str) -> dict:
        """The walk of a row's space (a statistic's space is walked in order)."""
        return {"order": list(self.order)} if level == ROW and self.order else {}

    def run_count(self, level: str) -> int:
        if level == STAT:
            return 1
        return min(self.length, self.columns - self.chunk * self.length)

    def materialise(self, value: ir.Value, level: str, space: tuple[int, ...]) -> ir.Value:
        """The register tile holding `value` at `level` (a statistic's tile
        where a row reads it: broadcast)."""
        natural = self.natural(value)
        if natural == STAT:
            level, space = STAT, type_view(value.type).shape
        key = (value, level, space, self.chunk if level == ROW else None)
        if key in self.tiles:
            return self.tiles[key]
        view = type_view(value.type)
        owner = value.owner
        op = None if isinstance(owner, ir.Block) else owner.operation
        if value in self.buffers:
            tile = self.tile(level, view.dtype)
            hw.LoadElementsOp.build(self.buffers[value], tile, self.offset(level),
                                    shape=list(space), count=self.run_count(level),
                                    **self.walk(level))
        elif op is not None and _splat(op) is not None:
            tile = self.tile(level, view.dtype)
            hw.FillOp.build(tile, value=_splat(op))
        elif op is not None and op in self.views:
            tile = self.compute(self.views[op], op, level, space)
        else:
            raise GroupNotLowered(f"it reads {value.type} made by '{op.name if op else 'a block'}'")
        self.tiles[key] = tile
        return tile

    def compute(self, view, op: ir.Operation, level: str, space) -> ir.Value:
        if isinstance(view, nn.ReductionOp):
            return self.reduce(view, op)
        operand_space = self.domain if level == ROW else type_view(op.results[0].type).shape
        inputs = [self.materialise(v, level, operand_space) for v in op.operands]
        out = self.tile(level, type_view(op.results[0].type).dtype)
        if isinstance(view, nn.CastOp):
            hw.CastOp.build(inputs[0], out)
            return out
        # The nn op's attributes are the hw op's (created whole: its verifier
        # reads them, `predicate` of nn.compare).
        attributes = {name: op.attributes[name] for name in op.attributes}
        attributes["fn"] = ir.StringAttr.get(op.name)
        ir.Operation.create(hw.MapOp.op_name(), operands=inputs + [out], attributes=attributes)
        return out

    def reduce(self, view: nn.ReductionOp, op: ir.Operation) -> ir.Value:
        total = None
        for chunk in self.walk_chunks(ROW):
            x = self.materialise(op.operands[0], ROW, self.domain)
            if type_view(x.type).dtype != "f32":
                wide = self.tile(ROW, "f32")
                hw.CastOp.build(x, wide)
                x = wide
            part = self.tile(STAT, "f32")
            hw.BlockReduceOp.build(x, part, self.scratch, combine=view.combine_kind(),
                                   count=self.run_count(ROW))
            if total is None:
                total = part
            else:  # the chunks' folds folded
                hw.MapOp.build([total, part], total, fn=f"nn.{view.combine_kind()}")
        finish = view.finish_tree(self.columns)
        if finish.kind != "arg":
            if finish.kind not in ("div", "mul") or [a.kind for a in finish.args] != ["arg", "const"]:
                raise GroupNotLowered(f"'{op.name}' finishes its fold with {finish!r}")
            factor = self.tile(STAT, "f32")
            hw.FillOp.build(factor, value=finish.args[1].value)
            hw.MapOp.build([total, factor], total, fn=f"nn.{finish.kind}")
        dtype = type_view(op.results[0].type).dtype
        if dtype == "f32":
            return total
        out = self.tile(STAT, dtype)
        hw.CastOp.build(total, out)
        return out


def lower_group(group: KernelGroup, last: ir.Operation, target: "HWLowering") -> None:
    """The kernel of `group` and its launch in place of `last`'s results
    (an elementwise group whose results differ in shape: a kernel per
    shape, each computing what its results need); raises GroupNotLowered,
    leaving no kernel, when the group is not one of an elementwise or row
    kernel's."""
    by_shape: dict[tuple[int, ...], list[int]] = {}
    for i, value in enumerate(group.results):
        by_shape.setdefault(type_view(value.type).shape, []).append(i)
    rows = any(isinstance(lookup_op(op.name), type) and issubclass(lookup_op(op.name),
                                                                   nn.ReductionOp)
               for op in group.ops)
    parts = [list(range(len(group.results)))] if rows or len(by_shape) == 1 \
        else list(by_shape.values())
    built = []
    try:
        for number, part in enumerate(parts):
            name = target.name if len(parts) == 1 else f"{target.name}_{number}"
            results = [last.results[i] for i in part]
            kernel = None
            if not all(0 in type_view(r.type).shape for r in results):
                kernel = GroupKernel(KernelGroup(group.ops, group.arguments,
                                                 [group.results[i] for i in part], group.inputs),
                                     name, target.chip)
                kernel.build(target.kernels, last.location)
            built.append((kernel, name, results))
    except GroupNotLowered:
        for kernel, name, _ in built:
            _erase_kernel(last, name)
        raise
    for kernel, name, results in built:
        launch(last, group.inputs, name, (kernel.grid,) if kernel else (),
               (kernel.threads,) if kernel else (THREADS,), results)


# ---------------------------------------------------------------------------
# The registry: an nn op's lowering to hw kernels, by op class.


@dataclass
class HWLowering:
    """What an nn->hw lowering gets besides the op's view: the target
    `chip`, the tiling the user forced (`tiles`, None: the lowering's
    choice), the module's body that kernels go into (`kernels`) and a
    name for the op's kernel, unique in the module (`name`). A lowering
    that leaves its op may say why (`leave`): the error that reports the
    op says so."""

    chip: str
    tiles: TileConfig | None
    kernels: ir.Block
    name: str
    reasons: list = field(default_factory=list)

    def leave(self, op: ir.Operation, reason: str) -> None:
        """Leaves `op` unconverted, for `reason`; returns None (what the
        lowering returns)."""
        self.reasons.append((op, reason))


TO_HW = registry("hw")


@lowering(nn.MatmulOp, to="hw")
def lower_matmul_chain(op: nn.MatmulOp, target: HWLowering) -> list[ir.Operation] | None:
    """A matmul and the chain that consumes it (`find_chain`) as one kernel
    and its launch; returns the chain's ops. None: the matmul does not fit
    a kernel (it stays)."""
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
    """The launch of a chain's kernel in place of its last op."""
    inputs = [chain.host_value(v) for v in chain.matmul.operands]
    with ir.InsertionPoint(chain.last), chain.last.location:
        for value, extra in zip(chain.extras, builder.extras):
            inputs.append(reshaped(chain.host_value(value), builder.extra_shape(extra)))
    launch(chain.last, inputs, builder.name, builder.grid)


@lowering(nn.ElementwiseOp, to="hw")
@lowering(nn.ReductionOp, to="hw")
def lower_elementwise_or_row(op, target: HWLowering) -> list[ir.Operation]:
    """An elementwise op or a reduction outside any group, as a kernel of
    its own (`GroupKernel`)."""
    try:
        lower_group(KernelGroup.of_op(op.operation), op.operation, target)
    except GroupNotLowered as reason:
        return target.leave(op.operation, str(reason))
    return [op.operation]


@lowering(nn.FusedOp, to="hw")
def lower_fused(op: nn.FusedOp, target: HWLowering) -> list[ir.Operation]:
    """An elementwise or reduction group as one kernel (`GroupKernel`); a
    contraction group as its matmul's kernel with the group's other ops as
    its epilogue (`group_chain`; the pass inlines the others before)."""
    body = op.body_function()
    if op.kind in (nn.CONTRACTION, nn.CONVOLUTION):
        chain = group_chain(op.operation, body)
        if chain is None:
            return target.leave(op.operation, f"its group @{op.body} is no matmul kernel's")
        if is_empty(chain.last):
            launch(chain.last, [], target.name, ())
            return chain.ops
        builder = KernelBuilder(chain, target.name, target.chip, target.tiles)
        builder.build(target.kernels, chain.matmul.location)
        launch_chain(chain, builder)
        return chain.ops
    try:
        lower_group(KernelGroup.of_fused(op.operation, body), op.operation, target)
    except GroupNotLowered as reason:
        return target.leave(op.operation, f"its group @{op.body} is neither an elementwise "
                            f"nor a row kernel's: {reason}")
    return [op.operation]


def inline_group(fused: ir.Operation, body: ir.Operation) -> None:
    """Replaces an nn.fused op by a copy of its body's ops."""
    block = body.regions[0].blocks[0]
    mapping = {argument: operand for argument, operand in zip(block.arguments, fused.operands)}
    with ir.InsertionPoint(fused):
        for op in block.operations:
            op = op.operation
            if op.name == "func.return":
                for result, value in zip(fused.results, op.operands):
                    result.replace_all_uses_with(mapping.get(value, value))
                continue
            copy = op.clone(ir.InsertionPoint(fused))
            for i, operand in enumerate(copy.operands):
                if operand in mapping:
                    copy.operands[i] = mapping[operand]
            for old, new in zip(op.results, copy.results):
                mapping[old] = new
    fused.erase()


@register_pass
@dataclass
class ConvertNNToHW(Pass):
    """Lowers fusion groups and nn ops to hw kernels and launches: f16/bf16 matmuls with their epilogues, elementwise groups, and row kernels for reductions and their groups (softmax, layer_norm, rms_norm)."""

    argument = "convert-nn-to-hw"
    chip: str = "sm_80"
    keep_unconverted: bool = False
    tiles: str = ""
    """BMxBNxBKxSTAGES (e.g. 128x128x64x3): every kernel's tiling instead
    of the cost model's choice (`choose_tiles`); hw-check holds it to the
    architecture's limits."""

    def run(self, module: ir.Operation) -> None:
        nvidia.architecture(self.chip, PassFailure)
        forced = parse_tiles(self.tiles) if self.tiles else None
        body = module.regions[0].blocks[0]
        self.reasons: list[tuple[ir.Operation, str]] = []
        with module.context:
            groups = self.fusion_groups(module)
            names = {nn.FusedOp.from_operation(f).body for f in groups}
            bodies = {ir.StringAttr(f.attributes["sym_name"]).value: f for f in (
                op.operation for op in body.operations) if f.name == "func.func"}
            # Contraction and convolution groups with no kernel of their own
            # are lowered op by op.
            for fused in groups:
                body_function = bodies[nn.FusedOp.from_operation(fused).body]
                if ir.StringAttr(fused.attributes["kind"]).value in (nn.CONTRACTION,
                                                                     nn.CONVOLUTION) \
                        and group_chain(fused, body_function) is None:
                    inline_group(fused, body_function)
            functions = [op for name, op in bodies.items()
                         if not hw.is_kernel(op) and name not in names]
            for function in functions:
                self.convert(function, body, forced)
            # The bodies of the groups lowered (or inlined) are no longer called.
            called = {nn.FusedOp.from_operation(f).body for f in self.fusion_groups(module)}
            for name in names - called:
                bodies[name].erase()
        if not self.keep_unconverted:
            self.report_unconverted(module)

    @staticmethod
    def kernel_kind(op: ir.Operation) -> str:
        """What an op's kernel is named after: the op (`matmul`, `exp`), a
        fusion group's kind (`elementwise`, `reduction`) or the anchor of
        a contraction group (`matmul`)."""
        if op.name != "nn.fused":
            return op.name.split(".", 1)[1]
        view = nn.FusedOp.from_operation(op)
        if view.kind in (nn.CONTRACTION, nn.CONVOLUTION):
            for inner in view.body_function().regions[0].blocks[0].operations:
                op_class = lookup_op(inner.operation.name)
                if op_class is not None and getattr(op_class, "fusion_kind", None) == view.kind:
                    return inner.operation.name.split(".", 1)[1]
        return view.kind

    @staticmethod
    def fusion_groups(module: ir.Operation) -> list[ir.Operation]:
        found = []

        def visit(op):
            if op.name == "nn.fused":
                found.append(op.operation)
            return ir.WalkResult.ADVANCE
        module.walk(visit, ir.WalkOrder.PRE_ORDER)
        return found

    def convert(self, function: ir.Operation, kernels: ir.Block,
                forced: TileConfig | None) -> None:
        """Lowers the ops of a host function that have an nn->hw lowering,
        in order; kernel `N` of op kind `K` in function `F` is `F_K_N`."""
        ops = []

        def visit(op):
            if TO_HW.lookup(lookup_op(op.name)) is not None:
                ops.append(op.operation)
            return ir.WalkResult.ADVANCE
        function.walk(visit, ir.WalkOrder.PRE_ORDER)
        host = ir.StringAttr(function.attributes["sym_name"]).value
        numbers: dict[str, int] = {}
        pending = []
        for op in ops:
            kind = self.kernel_kind(op)
            pending.append((op, f"{host}_{kind}_{numbers.setdefault(kind, 0)}"))
            numbers[kind] += 1
        while pending:
            op, name = pending.pop(0)
            op_class = lookup_op(op.name)
            try:
                view = op_class.from_operation(op)
            except VerifyError as error:
                raise PassFailure(f"'{op.name}' op {error}", op.location) from None
            with op.location:
                lowered = TO_HW.lookup(op_class)(view, HWLowering(self.chip, forced, kernels,
                                                                  name, self.reasons))
            lowered = list(lowered or [])
            # Ops the lowering took are offered to no other (compared while
            # they exist: Operations compare equal across their wrappers).
            pending = [(p, n) for p, n in pending if not any(p == done for done in lowered)]
            for done in reversed(lowered):
                if any(len(list(result.uses)) for result in done.results):
                    raise PassFailure(f"the nn->hw lowering of '{op.name}' left a use of "
                                      f"'{done.name}', which it lowered", done.location)
                done.erase()

    def report_unconverted(self, module: ir.Operation) -> None:
        left: list[ir.Operation] = []
        # A group left is reported at its nn.fused op, not in its body.
        bodies = {nn.FusedOp.from_operation(f).body for f in self.fusion_groups(module)}

        def visit(op):
            if op.name == "func.func" and ir.StringAttr(op.attributes["sym_name"]).value in bodies:
                return ir.WalkResult.SKIP
            if op.name.startswith("nn."):
                left.append(op.operation)
            return ir.WalkResult.ADVANCE
        module.walk(visit, ir.WalkOrder.PRE_ORDER)
        for op in left:
            reason = next((r for o, r in self.reasons if o == op), None) or (
                "the cuda targets compile 2-d and batched f16 and bf16 nn.matmul (with an "
                "elementwise epilogue), elementwise ops and groups, and reductions with "
                "their groups (softmax, layer_norm, rms_norm)")
            message = f"'{op.name}' is not lowered to hw kernels: {reason}"
            if op is left[-1]:
                raise PassFailure(message, op.location)
            op.location.emit_error(message)
