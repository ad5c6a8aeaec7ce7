"""Quantised matmuls and convolutions as integer nn ops: the product of
`(a - za)` and `(w - zw)` computed exactly in wrapping i32 from the
quantised operands themselves (i8 or ui8 activations, i8 weights) and
terms of their zero points, and its requantisation.

    acc = a x w - zw * rowsum(a) - za * colsum(w) + K * za * zw          (matmul)
    acc = conv(a, w) - zw[o] * windowsum(a) - za * filtersum(w)[o]
          + taps * za * zw[o]                                           (conv2d)
    q   = saturate(round_half_to_even(relu?(f32(acc) * multiplier + shift)) + zy)

Zero points are NumPy arrays (i32), or i32 tensors computed at run time:
per tensor, or per row of a matmul's activation or per column of its
weight, per output channel of a convolution's weight; terms of known zero
points that are zero are left out. A convolution's padding holds za (a
real zero, as ONNX's ConvInteger and QLinearConv define it): where za is
known, the activation is padded with it, so that every window, at the
borders too, has the same zero-point terms; where it is computed at run
time, the padding holds zeros and za's term is za times the sums of each
filter's taps that fall inside the input (the convolution of an image of
ones with the filters). Sums
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


# A zero point is an i32 array, or an i32 tensor computed at run time.


def _known_zero(zero_point) -> bool:
    return isinstance(zero_point, (np.ndarray, np.integer)) and not np.any(zero_point)


def _term(zero_point, reshape=lambda z: z) -> ir.Value:
    """A zero point as an i32 tensor, `reshape`d (an array or a value)."""
    if isinstance(zero_point, (np.ndarray, np.integer)):
        return constant(reshape(np.asarray(zero_point)), "i32")
    return reshape(zero_point)


def _product_term(count: int, za, zw, reshape=lambda z: z) -> ir.Value:
    """`count * za * zw`, folded where both are known."""
    if isinstance(za, (np.ndarray, np.integer)) and isinstance(zw, (np.ndarray, np.integer)):
        both = np.asarray(count * za.astype(np.int64) * zw.astype(np.int64)).astype(np.int32)
        return constant(reshape(both), "i32")
    return nn.MulOp.build(nn.MulOp.build(_term(za), _term(zw, reshape)),
                          constant(np.array(count, np.int32), "i32"))


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
    return signed, np.asarray(zero_point - UNSIGNED_OFFSET)


def integer_matmul(a: ir.Value, w: ir.Value, za, zw) -> ir.Value:
    """`(a - za) x (w - zw)` in i32 for `a` of i8 or ui8 `[..., M, K]` and
    `w` of i8 `[K, N]` (or batched); `za` per tensor or per row (`[M,
    1]`), `zw` per tensor or per column (`[N]`)."""
    k = value_type(w).shape[-2]
    accumulator = nn.MatmulOp.build(a, w)
    if not _known_zero(zw):
        row_sums = nn.MatmulOp.build(a, constant(np.ones((k, 1), np.int8), "i8"))
        accumulator = nn.SubOp.build(accumulator, nn.MulOp.build(row_sums, _term(zw)))
    if not _known_zero(za):
        column_sums = nn.MatmulOp.build(constant(np.ones((1, k), np.int8), "i8"), w)
        accumulator = nn.SubOp.build(accumulator, nn.MulOp.build(column_sums, _term(za)))
    if not _known_zero(za) and not _known_zero(zw):
        accumulator = nn.AddOp.build(accumulator, _product_term(k, za, zw))
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
    if isinstance(values, (np.ndarray, np.integer)):
        values = np.asarray(values)
        return values.reshape(values.shape + (1, 1)) if values.ndim == 1 else values
    t = value_type(values)
    if t.rank != 1:
        return values
    return nn.ReshapeOp.build(values, result_type=t.with_shape(t.shape + (1, 1)))


def integer_conv2d(x: ir.Value, w: ir.Value, zx, zw, window: Window) -> ir.Value:
    """`conv(x - zx, w - zw)` in i32 for `x` of i8 or ui8 and `w` of i8
    (OIHW), the padding holding zx; `zx` per tensor, `zw` per tensor or
    per output channel (`[O]`)."""
    out_channels, group_channels, kh, kw = value_type(w).shape
    layout, padding = window.layout, window.padding
    channels = group_channels * window.groups
    if isinstance(zx, (np.ndarray, np.integer)) and np.any(zx) and any(padding):
        top, left, bottom, right = padding
        low, high = [0] * 4, [0] * 4
        h, w_dim = {"NCHW": (2, 3), "NHWC": (1, 2)}[layout]
        low[h], low[w_dim], high[h], high[w_dim] = top, left, bottom, right
        x = nn.PadOp.build(x, low=low, high=high, value=float(zx))
        padding = (0, 0, 0, 0)
    attributes = dict(strides=window.strides, dilations=window.dilations,
                      groups=window.groups, layout=layout)
    accumulator = nn.Conv2dOp.build(x, w, None, padding=padding, **attributes)
    by_channel = lambda z: per_channel(z, layout)  # noqa: E731
    if not _known_zero(zw):
        # Each output channel's window sums of x: over all channels (one
        # filter of ones), or over its group's (one filter per channel).
        filters = 1 if window.groups == 1 else out_channels
        ones = constant(np.ones((filters, group_channels, kh, kw), np.int8), "i8")
        window_sums = nn.Conv2dOp.build(x, ones, None, padding=padding, **attributes)
        accumulator = nn.SubOp.build(accumulator, nn.MulOp.build(window_sums,
                                                                 _term(zw, by_channel)))
    if not _known_zero(zx):
        if any(padding):
            # zx not known, the padding zeros: the sums of each filter's
            # taps inside the input, at every position.
            image = list(value_type(x).shape)
            image[0] = 1
            filter_sums = nn.Conv2dOp.build(constant(np.ones(image, np.int8), "i8"), w, None,
                                            padding=padding, **attributes)
        else:
            # Each filter's sum: its convolution with one window of ones.
            shape = (1, channels, kh, kw) if layout == "NCHW" else (1, kh, kw, channels)
            filter_sums = nn.Conv2dOp.build(constant(np.ones(shape, np.int8), "i8"), w, None,
                                            groups=window.groups, layout=layout)
        accumulator = nn.SubOp.build(accumulator, nn.MulOp.build(filter_sums, _term(zx)))
    if not _known_zero(zx) and not _known_zero(zw):
        if any(padding):
            # Each position's count of taps inside the input.
            image = list(value_type(x).shape)
            image[0] = 1
            counts = nn.Conv2dOp.build(constant(np.ones(image, np.int8), "i8"), constant(
                np.ones((out_channels, group_channels, kh, kw), np.int8), "i8"), None,
                padding=padding, **attributes)
            term = nn.MulOp.build(counts, nn.MulOp.build(_term(zx), _term(zw, by_channel)))
        else:
            term = _product_term(group_channels * kh * kw, zx, zw, by_channel)
        accumulator = nn.AddOp.build(accumulator, term)
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
