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
  with an NHWC result (`ImplicitGemm`): the result's rows (M = N*OH*OW
  pixels by the O channels) are a matmul of the input's im2col matrix (M
  x K, K = C*KH*KW in the filter's (c, kh, kw) order) and the filter read
  as K x O in place (its OIHW rows are the K elements of an output
  channel: B stored transposed, `transpose_b`); matmul's kernel
  (`matmul.KernelBuilder`: tiles from its cost model, the K loop, the
  mma.sync fragments of the NVIDIA target model, the epilogue function of
  the group's ops) with the A tile of each K step gathered from the input
  into shared memory by `hw.im2col` (zeros in the padding and past the
  matrix's ends) instead of copied. sm_90a runs the same mma.sync path:
  wgmma's operands come by TMA, which loads boxes, not gathers.
"""

from __future__ import annotations

import math

from mlir import ir
from mlir.dialects import arith, scf, tensor

from lamina.dialects import hw, nn
from lamina.dialects.opdef import lookup_op
from lamina.lowering.hw_to_loops import index
from lamina.lowering.nn_to_hw.groups import ROW, GroupKernel, KernelGroup
from lamina.lowering.nn_to_hw.kernels import GroupNotLowered, HWLowering, is_empty, launch
from lamina.lowering.registry import lowering
from lamina.targets import nvidia
from lamina.types import type_view


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
    if nvidia.conv_kernel(dtype, view.groups, view.layout) == "implicit_gemm":
        pass  # IMPLICIT
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
