"""Quantised matmuls and convolutions as integer nn ops: the product of
`(a - za)` and `(w - zw)` computed exactly in wrapping i32 from the
quantised operands themselves (i8 or ui8 activations, i8 weights) and
terms of their zero points, and its requantisation.

    acc = a x w - zw * rowsum(a) - za * colsum(w) + K * za * zw          (matmul)
    acc = conv(a, w) - zw[o] * windowsum(a) - za * filtersum(w)[o]
          + taps * za * zw[o]                                           (conv2d)
    q   = saturate(round_half_to_even(relu?(f32(acc) * multiplier + shift)) + zy)

Zero points are NumPy arrays (i32): per tensor, or per column of a
matmul's weight, per output channel of a convolution's; terms of zero
points that are zero are left out. A convolution's padding holds za (a
real zero, as ONNX's ConvInteger and QLinearConv define it), so that
every window, at the borders too, has the same zero-point terms. Sums
over windows and filters are convolutions with ones, and row and column
sums matmuls with ones: integer products like the main one, which
`nn-fold-constants` folds where their operand is constant.

`nn-fuse-qdq` (QDQ programs) and the ONNX importer (MatMulInteger,
ConvInteger, QLinearMatMul, QLinearConv) build them. Each function
emits nn ops at the current insertion point and location.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from mlir import ir
from mlir.dialects import arith

from lamina.dialects import nn
from lamina.types import TensorType

# What a ui8 weight is moved by to become i8.
UNSIGNED_OFFSET = 128


def value_type(value: ir.Value) -> TensorType:
    return TensorType.from_mlir(value.type)


def constant(array: np.ndarray, dtype: str) -> ir.Value:
    """A tensor constant of `array` as `dtype`."""
    array = np.asarray(array)
    tensor_type = TensorType(array.shape, dtype).to_mlir()
    return arith.ConstantOp(tensor_type, ir.DenseElementsAttr.get(
        np.ascontiguousarray(array), type=tensor_type)).result


def moved_to_signed(value: ir.Value, zero_point: np.ndarray) -> tuple[ir.Value, np.ndarray]:
    """A ui8 operand as i8 and its zero point (i32), both less 128 (which
    changes no difference `w - zw`), through an exact dequantisation and
    quantisation by scale 1; an i8 operand as it is."""
    if value_type(value).dtype != "ui8":
        return value, zero_point
    one = constant(np.array(1.0, np.float32), "f32")
    offset = nn.DequantizeOp.build(value, one, constant(np.array(UNSIGNED_OFFSET, np.uint8),
                                                        "ui8"))
    signed = nn.QuantizeOp.build(offset, one, constant(np.array(0, np.int8), "i8"))
    return signed, zero_point - UNSIGNED_OFFSET


def integer_matmul(a: ir.Value, w: ir.Value, za: np.ndarray, zw: np.ndarray) -> ir.Value:
    """`(a - za) x (w - zw)` in i32 for `a` of i8 or ui8 `[..., M, K]` and
    `w` of i8 `[K, N]` (or batched); `za` per tensor or per row (an `[M,
    1]` array), `zw` per tensor or per column."""
    k = value_type(w).shape[-2]
    accumulator = nn.MatmulOp.build(a, w)
    if zw.any():
        row_sums = nn.MatmulOp.build(a, constant(np.ones((k, 1), np.int8), "i8"))
        accumulator = nn.SubOp.build(accumulator, nn.MulOp.build(row_sums, constant(zw, "i32")))
    if za.any():
        column_sums = nn.MatmulOp.build(constant(np.ones((1, k), np.int8), "i8"), w)
        accumulator = nn.SubOp.build(accumulator, nn.MulOp.build(column_sums,
                                                                 constant(za, "i32")))
    if za.any() and zw.any():
        both = (k * za.astype(np.int64) * zw.astype(np.int64)).astype(np.int32)
        accumulator = nn.AddOp.build(accumulator, constant(both, "i32"))
    return accumulator


@dataclass(frozen=True)
class Window:
    """A convolution's window attributes (as nn.conv2d's)."""

    strides: tuple[int, int] = (1, 1)
    padding: tuple[int, int, int, int] = (0, 0, 0, 0)
    dilations: tuple[int, int] = (1, 1)
    groups: int = 1
    layout: str = "NCHW"

    @staticmethod
    def of(conv: nn.Conv2dOp) -> "Window":
        return Window(tuple(conv.strides), tuple(conv.padding), tuple(conv.dilations),
                      conv.groups, conv.layout)


def per_channel(values: np.ndarray | ir.Value, layout: str) -> np.ndarray | ir.Value:
    """Per-output-channel values `[O]` (an array or a value) shaped to
    broadcast against a convolution's result in `layout`: `[O, 1, 1]` for
    NCHW, `[O]` for NHWC; a scalar as it is."""
    if layout == "NHWC":
        return values
    if isinstance(values, np.ndarray):
        return values.reshape(values.shape + (1, 1)) if values.ndim == 1 else values
    t = value_type(values)
    if t.rank != 1:
        return values
    return nn.ReshapeOp.build(values, result_type=t.with_shape(t.shape + (1, 1)))


def integer_conv2d(x: ir.Value, w: ir.Value, zx: np.ndarray, zw: np.ndarray,
                   window: Window) -> ir.Value:
    """`conv(x - zx, w - zw)` in i32 for `x` of i8 or ui8 and `w` of i8
    (OIHW), the padding holding zx; `zx` per tensor, `zw` per tensor or
    per output channel (`[O]`)."""
    out_channels, group_channels, kh, kw = value_type(w).shape
    layout, padding = window.layout, window.padding
    if zx.any() and any(padding):
        top, left, bottom, right = padding
        low, high = [0] * 4, [0] * 4
        h, w_dim = {"NCHW": (2, 3), "NHWC": (1, 2)}[layout]
        low[h], low[w_dim], high[h], high[w_dim] = top, left, bottom, right
        x = nn.PadOp.build(x, low=low, high=high, value=float(zx))
        padding = (0, 0, 0, 0)
    attributes = dict(strides=window.strides, dilations=window.dilations,
                      groups=window.groups, layout=layout)
    accumulator = nn.Conv2dOp.build(x, w, None, padding=padding, **attributes)
    if zw.any():
        # Each output channel's window sums of x: over all channels (one
        # filter of ones), or over its group's (one filter per channel).
        filters = 1 if window.groups == 1 else out_channels
        ones = constant(np.ones((filters, group_channels, kh, kw), np.int8), "i8")
        window_sums = nn.Conv2dOp.build(x, ones, None, padding=padding, **attributes)
        accumulator = nn.SubOp.build(accumulator, nn.MulOp.build(
            window_sums, constant(per_channel(zw, layout), "i32")))
    if zx.any():
        # Each filter's sum: its convolution with one window of ones.
        channels = group_channels * window.groups
        shape = (1, channels, kh, kw) if layout == "NCHW" else (1, kh, kw, channels)
        filter_sums = nn.Conv2dOp.build(constant(np.ones(shape, np.int8), "i8"), w, None,
                                        groups=window.groups, layout=layout)
        accumulator = nn.SubOp.build(accumulator, nn.MulOp.build(filter_sums,
                                                                 constant(zx, "i32")))
    if zx.any() and zw.any():
        taps = group_channels * kh * kw
        both = (taps * zx.astype(np.int64) * zw.astype(np.int64)).astype(np.int32)
        accumulator = nn.AddOp.build(accumulator, constant(per_channel(both, layout), "i32"))
    return accumulator


def requantized(accumulator: ir.Value, multiplier: ir.Value, zero_point: ir.Value,
                shift: ir.Value | None = None, relu: bool = False) -> ir.Value:
    """`saturate(round_half_to_even(relu?(f32(acc) * multiplier + shift))
    + zero_point)`, of the zero point's type (nn.quantize by scale 1)."""
    real = nn.CastOp.build(accumulator,
                           result_type=value_type(accumulator).with_dtype("f32"))
    real = nn.MulOp.build(real, multiplier)
    if shift is not None:
        real = nn.AddOp.build(real, shift)
    if relu:
        real = nn.ReluOp.build(real)
    return nn.QuantizeOp.build(real, constant(np.array(1.0, np.float32), "f32"), zero_point)
