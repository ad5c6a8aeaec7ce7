"""Convolution kernels: nn.conv2d and its fusion group's epilogue.

Every `nn.conv2d` (f32, f16, bf16; NCHW or NHWC; strides, padding,
dilations, groups, depthwise included, and a bias), alone or with the
elementwise ops of its fusion group (`nn-fuse`: bias add, activation,
residual add, cast), becomes one kernel and its launch; which kernel is
the NVIDIA target model's choice (`nvidia.conv_kernel`):

* the direct kernel, on CUDA cores (`DirectConvKernel`): a grid-stride
  kernel over the result's index space, as an elementwise group's
  (`groups.GroupKernel`), one output element per thread
  (`nvidia.direct_conv_kernel_shape`): `hw.conv_elements` sums the
  products of each element's window (its group's input channels and the
  filter's taps, the input read as zero in the padding) in f32 and adds
  the bias, the sum is rounded once to the conv's type, as the nn
  reference rounds it, and the group's other ops are computed on it in
  registers (`hw.elementwise`, each rounded to its type; their other
  operands loaded broadcast, `hw.load_elements`) before the results are
  stored as runs;
* implicit GEMM, on tensor cores, for f16 and bf16 convs of one group
  (`ImplicitGemm`): a matmul of the input's im2col matrix (pixels by K =
  C*KH*KW taps in the filter's (c, kh, kw) order) and the filter's OIHW
  rows (O x K, read in place), in matmul's kernel (`matmul.KernelBuilder`:
  tiles from its cost model, the K loop, the mma.sync fragments of the
  NVIDIA target model, the epilogue function of the group's ops), the
  im2col tile of each K step gathered from the input into shared memory
  by `hw.im2col` (zeros in the padding and past the matrix's ends)
  instead of copied. An NHWC result is the M = N*OH*OW pixels by O
  channels matrix (A the im2col tile, B the filter read transposed,
  per-channel values a vector of the columns); an NCHW result a batch of
  the images' O x OH*OW matrices (A the filter, B the image's im2col tile
  transposed, the images along the grid's third dim, per-channel values
  per row: `hw.store` extras of shape [1, O, 1]). sm_90a runs the same
  mma.sync path: wgmma's operands come by TMA, which loads boxes, not
  gathers.
"""

from __future__ import annotations

import math

from mlir import ir
from mlir.dialects import arith, scf, tensor

from lamina import scalar
from lamina.dialects import hw, nn
from lamina.lowering.hw_to_loops import index
from lamina.lowering.nn_to_hw.groups import ROW, GroupKernel, KernelGroup
from lamina.lowering.nn_to_hw.kernels import GroupNotLowered, HWLowering, launch, splat_value
from lamina.lowering.nn_to_hw.matmul import (KernelBuilder, MatmulChain, TileConfig, choose_tiles,
                                             is_epilogue_op)
from lamina.lowering.nn_to_hw.movement import reshaped_view
from lamina.lowering.registry import lowering
from lamina.targets import nvidia
from lamina.types import MemRefType, type_view


def conv_of(group: KernelGroup) -> ir.Operation | None:
    """The nn.conv2d a group is built around (its only one), or None."""
    convs = [op for op in group.ops if op.name == "nn.conv2d"]
    return convs[0] if len(convs) == 1 else None


class DirectConvKernel(GroupKernel):
    """The direct kernel of a conv2d and the elementwise ops of its group:
    a `GroupKernel` over the conv's result, whose conv value is the tile
    `hw.conv_elements` sums (rounded to the conv's type)."""

    def __init__(self, group: KernelGroup, conv: ir.Operation, name: str, chip: str):
        others = KernelGroup([op for op in group.ops if op != conv], group.arguments,
                             group.results, group.inputs)
        super().__init__(others, name, chip)
        self.group = group
        self.conv = conv
        self.views[conv] = nn.Conv2dOp.from_operation(conv)
        result = type_view(conv.results[0].type)
        if self.domain != result.shape:
            raise GroupNotLowered(f"its results are not of its convolution's shape "
                                  f"{hw.dims(result.shape)}")
        elements = math.prod(self.domain)
        self.threads, per_thread, self.grid = nvidia.direct_conv_kernel_shape(elements,
                                                                              self.arch)
        self.length = self.columns = self.threads * per_thread
        self.rows = -(-elements // self.length)

    def compute(self, view, op: ir.Operation, level: str, space) -> ir.Value:
        if op != self.conv:
            return super().compute(view, op, level, space)
        buffers = []
        for value in op.operands:
            if value not in self.buffers:
                raise GroupNotLowered("its convolution reads a value computed in the group")
            buffers.append(self.buffers[value])
        bias = buffers[2] if len(buffers) > 2 else None
        total = self.tile(ROW, "f32")
        top, left, _, _ = view.padding
        hw.ConvElementsOp.build(buffers[0], buffers[1], total, self.offset(ROW), bias,
                                shape=list(self.domain), count=self.run_count(ROW),
                                strides=list(view.strides), padding=[top, left],
                                dilations=list(view.dilations), groups=view.groups,
                                layout=view.layout)
        dtype = type_view(op.results[0].type).dtype
        if dtype == "f32":
            return total
        out = self.tile(ROW, dtype)
        hw.CastOp.build(total, out)
        return out


def lower_conv_group(group: KernelGroup, last: ir.Operation, target: HWLowering
                     ) -> list[ir.Operation] | None:
    """The kernel of a conv2d's group (or of a conv alone) and its launch
    in place of `last`'s results; None (the reason left with `target`)
    where the group is no conv kernel's."""
    conv = conv_of(group)
    if conv is None:
        return target.leave(last, "it holds no nn.conv2d or several")
    if all(0 in type_view(r.type).shape for r in last.results):
        launch(last, [], target.name, ())
        return [last]
    view = nn.Conv2dOp.from_operation(conv)
    dtype = type_view(conv.results[0].type).dtype
    if dtype in nn.INTEGER_ACCUMULATORS:
        return target.leave(last, "the convolution kernels of the cuda targets take float "
                            f"operands; these are {view.operand_types[0].dtype}")
    if nvidia.conv_kernel(dtype, view.groups) == "implicit_gemm":
        chain = conv_chain(group, conv, last)
        if chain is not None:
            builder = ImplicitGemm(chain, target.name, target.chip, target.tiles)
            builder.build(target.kernels, conv.location)
            builder.launch()
            return [last]
    try:
        kernel = DirectConvKernel(group, conv, target.name, target.chip)
        kernel.build(target.kernels, conv.location)
    except GroupNotLowered as reason:
        return target.leave(last, f"it is no convolution kernel's: {reason}")
    launch(last, group.inputs, target.name, (kernel.grid,), (kernel.threads,),
           list(last.results))
    return [last]


@lowering(nn.Conv2dOp, to="hw")
def lower_conv2d(op: nn.Conv2dOp, target: HWLowering) -> list[ir.Operation] | None:
    """A conv2d outside any group, as a kernel of its own."""
    return lower_conv_group(KernelGroup.of_op(op.operation), op.operation, target)


def lower_conv_fused(op: nn.FusedOp, target: HWLowering) -> list[ir.Operation] | None:
    """A convolution group built around a conv2d as one kernel."""
    group = KernelGroup.of_fused(op.operation, op.body_function())
    return lower_conv_group(group, op.operation, target)


def is_conv_group(fused: ir.Operation, body: ir.Operation, chip: str) -> bool:
    """Whether a convolution group is one conv kernel's: built around a
    conv2d (not a pooling) whose operands are the group's inputs, its
    other ops elementwise ops of the conv's result shape. Other groups are
    lowered op by op."""
    group = KernelGroup.of_fused(fused, body)
    conv = conv_of(group)
    if conv is None:
        return False
    try:
        DirectConvKernel(group, conv, "", chip)
    except GroupNotLowered:
        return False
    return all(value in group.arguments for value in conv.operands)


# ---------------------------------------------------------------------------
# Implicit GEMM on tensor cores.


def conv_chain(group: KernelGroup, conv: ir.Operation, last: ir.Operation) -> MatmulChain | None:
    """The conv and its group's other ops as a matmul kernel's chain (the
    conv in the matmul's place, its bias the first extra): one result, the
    other ops elementwise ops of the conv's result shape with arith-only
    scalar forms (and casts), reading splat constants and inputs shaped
    like the result or like a vector of its channels (`channel_shapes`);
    None otherwise (the direct kernel computes the group)."""
    if len(group.results) != 1 or len(last.results) != 1:
        return None
    result = type_view(conv.results[0].type)
    view = nn.Conv2dOp.from_operation(conv)
    shapes = channel_shapes(result.shape, view.layout) | {result.shape}
    produced = {conv.results[0]}
    extras = list(conv.operands[2:])
    epilogue = []
    for op in group.ops:
        if op == conv or splat_value(op) is not None:
            if op != conv:
                produced.add(op.results[0])
            continue
        if not is_epilogue_op(op, result.shape):
            return None
        for value in op.operands:
            if value in produced:
                continue
            if value not in group.arguments or type_view(value.type).shape not in shapes \
                    or type_view(value.type).dtype not in hw.TILE_TYPES:
                return None
            if value not in extras:
                extras.append(value)
        produced.add(op.results[0])
        epilogue.append(op)
    if group.results[0] not in produced:
        return None
    return MatmulChain(conv, ops=[last], group_ops=epilogue, group_extras=extras,
                       group_inputs=dict(zip(group.arguments, group.inputs)),
                       group_result=group.results[0])


def channel_shapes(shape: tuple[int, ...], layout: str) -> set[tuple[int, ...]]:
    """The shapes of a value per output channel that broadcast (NumPy
    rules) to a conv result of `shape`: [O] (a conv's bias) and [1, O]
    [1, 1, 1, O] in NHWC, [O, 1, 1] and [1, O, 1, 1] in NCHW."""
    if layout == "NHWC":
        out = shape[-1]
        return {(out,), (1, out), (1, 1, 1, out)}
    out = shape[1]
    return {(out, 1, 1), (1, out, 1, 1)}


class ImplicitGemm(KernelBuilder):
    """The implicit GEMM kernel of a conv chain: matmul's kernel
    (`KernelBuilder`: its tiles, mma.sync, epilogue and store) multiplying
    the input's im2col matrix (pixels by K = C*KH*KW taps, gathered by
    `hw.im2col`) and the filter's O x K rows (OIHW, read in place). An
    NHWC result's rows are the pixels: M = N*OH*OW, N = O, A the im2col
    tile and B the filter read transposed. An NCHW result is a batch of
    the images' O x OH*OW matrices: M = O, N = OH*OW, the batch the
    images (the grid's third dim), A the filter's rows and B the image's
    im2col tile transposed (`transposed`: taps by pixels); its per-channel
    extras are per row (broadcast, [1, O, 1]). The loads are synchronous
    (a gather is no async copy), so the K loop is not pipelined: one stage
    of tiles."""

    def __init__(self, chain: MatmulChain, name: str, chip: str,
                 tiles: TileConfig | None = None):
        self.chain, self.name, self.chip = chain, name, chip
        conv = chain.matmul
        self.view = nn.Conv2dOp.from_operation(conv)
        self.nchw = self.view.layout == "NCHW"
        x, weight = (type_view(v.type) for v in conv.operands[:2])
        result = type_view(conv.results[0].type)
        self.x_type, self.result_shape = x, result.shape
        n, out, oh, ow = hw._to_nchw(result.shape, self.view.layout)
        self.pixels = (n, oh, ow)
        self.k = math.prod(weight.shape[1:])
        self.channels = out
        # The batch (NCHW: the images, along the grid's third dim) is B's
        # (`operand_batches`): the image whose im2col tile B gathers.
        if self.nchw:
            self.m, self.n, self.batch = out, oh * ow, n
            self.batch_shape, self.operand_batches = (n,), [(), (n,)]
            shape = (n, out, oh * ow)
        else:
            self.m, self.n, self.batch = n * oh * ow, out, None
            self.batch_shape, self.operand_batches = (), [(), ()]
            shape = (n * oh * ow, out)
        self.dtype = x.dtype
        self.element = ir.Type.parse(self.dtype)
        self.folded = False
        self.out = type_view(chain.group_result.type).with_shape(shape)
        self.extras = [type_view(v.type) for v in chain.extras]
        self.transpose_a, self.transpose_b = False, not self.nchw
        self.precision = "tf32"
        self.tma = self.asynchronous = False
        chosen = tiles or choose_tiles(self.m, self.n, self.k, chip, False, self.batch or 1,
                                       self.dtype)
        self.tiles = TileConfig(chosen.block_m, chosen.block_n, chosen.block_k, 1)

    def extra_shape(self, extra) -> tuple[int, ...]:
        """A residual as the result's matrix (or batch of them); a value per
        channel as a vector of the columns (NHWC) or per row, broadcast
        ([1, O, 1], NCHW)."""
        if extra.shape == self.result_shape:
            return self.out.shape
        return (1, self.channels, 1) if self.nchw else (self.channels,)

    def argument_types(self) -> list[ir.Type]:
        types = [MemRefType(self.x_type.shape, self.dtype),
                 MemRefType((self.channels, self.k), self.dtype)]
        types += [MemRefType(self.extra_shape(e), e.dtype) for e in self.extras]
        types.append(MemRefType(self.out.shape, self.out.dtype))
        return [t.to_mlir() for t in types]

    def tile_shapes(self) -> tuple[tuple[int, int], tuple[int, int]]:
        t = self.tiles
        b = (t.block_k, t.block_n) if self.nchw else (t.block_n, t.block_k)
        return (t.block_m, t.block_k), b

    def group_epilogue(self, arguments: list[ir.Value]) -> ir.Value:
        """The conv's value (its f32 sum plus its bias, rounded to its type),
        then the group's ops."""
        if len(self.chain.matmul.operands) > 2:
            arguments = [arith.addf(arguments[0], scalar.cast_float(arguments[1],
                                                                    ir.F32Type.get()))
                         ] + arguments[1:]
        return super().group_epilogue(arguments)

    def k_loop(self, x, weight, a_tile, b_tile, acc, barrier, row, col, batches) -> None:
        """Each K step gathers the im2col tile (`hw.im2col`) and copies the
        filter's tile, then multiplies them on tensor cores; `batches` are
        the operands' batch indices (NCHW: B's, the image)."""
        t, view = self.tiles, self.view
        top, left, _, _ = view.padding
        window = list(type_view(self.chain.matmul.operands[1].type).shape[2:])
        k_end = -(-self.k // t.block_k) * t.block_k
        loop = scf.ForOp(index(0), index(k_end), index(t.block_k))
        with ir.InsertionPoint(loop.body):
            k = loop.induction_variable
            geometry = dict(space=list(self.pixels), window=window, strides=list(view.strides),
                            padding=[top, left], dilations=list(view.dilations),
                            layout=view.layout)
            if self.nchw:
                # The image's pixels from `col` on (the columns past its
                # last pixel are stored nowhere).
                pixel = arith.addi(arith.muli(batches[1][0], index(self.n)), col)
                hw.CopyOp.build(weight, a_tile, [row, k])
                hw.Im2colOp.build(x, b_tile, pixel, k, transposed=True, **geometry)
            else:
                hw.Im2colOp.build(x, a_tile, row, k, **geometry)
                hw.CopyOp.build(weight, b_tile, [col, k])
            hw.BarrierOp.build()
            hw.MmaOp.build(a_tile, b_tile, acc, [], precision=self.precision,
                           transpose_a=False, transpose_b=self.transpose_b)
            hw.BarrierOp.build()
            scf.YieldOp([])

    def launch(self) -> None:
        """The launch in place of the chain's op: the kernel reads the input,
        the filter's rows ([O, C*KH*KW], a view), the extras in the shapes
        it reads them in (`extra_shape`, views) and writes the result's
        matrix, which `tensor.expand_shape` gives the users in the
        result's shape."""
        chain, last = self.chain, self.chain.last
        conv = chain.matmul
        with ir.InsertionPoint(last), last.location:
            inputs = [chain.host_value(conv.operands[0]),
                      reshaped_view(chain.host_value(conv.operands[1]), (self.channels, self.k))]
            for value, extra in zip(chain.extras, self.extras):
                inputs.append(reshaped_view(chain.host_value(value), self.extra_shape(extra)))
        result = last.results[0]
        groups = [[0], [1], [2, 3]] if self.nchw else [[0, 1, 2], [3]]
        with ir.InsertionPoint.after(last), last.location:
            matrix = tensor.collapse_shape(type_view(result.type).with_shape(
                self.out.shape).to_mlir(), result, groups)
            shaped = tensor.expand_shape(result.type, matrix, groups, [],
                                         list(self.result_shape))
        result.replace_all_uses_except(shaped, matrix.owner.operation)
        launch(matrix.owner.operation, inputs, self.name, self.grid)
        matrix.owner.operation.erase()
