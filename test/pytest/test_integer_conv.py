"""nn.conv2d on i8 x i8 and ui8 x i8 operands, compiled for the CPU:
results exactly equal to a naive loop over windows in Python integers
(wrapped to i32) and to the NumPy reference, for padded, strided, grouped,
depthwise and 1x1 convolutions, channels-last ones, and the extreme values
of both types, with and without VNNI."""

import numpy as np
import pytest

import lamina
from lamina.dialects import nn

RNG = np.random.default_rng(24)

CONV = """
func.func @main(%x: tensor<{x}x{dtype}>, %w: tensor<{w}xi8>) -> tensor<{y}xi32> {{
  %y = "nn.conv2d"(%x, %w) {{strides = array<i64: {s}, {s}>, padding = array<i64: {p}, {p}, {p}, {p}>, groups = {g} : i64, layout = "{layout}"}} : (tensor<{x}x{dtype}>, tensor<{w}xi8>) -> tensor<{y}xi32>
  return %y : tensor<{y}xi32>
}}
"""


def dims(shape):
    return "x".join(map(str, shape))


def naive(x, w, stride, pad, groups):
    """Sums over each window in Python integers, wrapped to i32 (NCHW)."""
    n, c, h, width = x.shape
    o, cg, kh, kw = w.shape
    xp = np.pad(x.astype(object), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = (h + 2 * pad - kh) // stride + 1, (width + 2 * pad - kw) // stride + 1
    out = np.zeros((n, o, oh, ow), object)
    for f in range(o):
        g = f // (o // groups)
        for i in range(oh):
            for j in range(ow):
                window = xp[:, g * cg:(g + 1) * cg, i * stride:i * stride + kh,
                            j * stride:j * stride + kw]
                out[:, f, i, j] = (window * w[f].astype(object)).sum(axis=(1, 2, 3))
    return ((out + 2 ** 31) % 2 ** 32 - 2 ** 31).astype(np.int32)


def operands(x_shape, w_shape, dtype):
    if dtype == "ui8":
        x = RNG.integers(0, 256, x_shape, dtype=np.uint8)
        x.flat[:2] = (0, 255)
    else:
        x = RNG.integers(-128, 128, x_shape, dtype=np.int8)
        x.flat[:2] = (-128, 127)
    w = RNG.integers(-128, 128, w_shape, dtype=np.int8)
    w.flat[:2] = (-128, 127)
    return x, w


@pytest.mark.parametrize("target", ["cpu", "cpu:haswell"])
@pytest.mark.parametrize("dtype", ["i8", "ui8"])
@pytest.mark.parametrize("x_shape, w_shape, stride, pad, groups", [
    ((1, 16, 10, 10), (24, 16, 3, 3), 1, 1, 1),
    ((2, 8, 9, 9), (16, 8, 3, 3), 2, 1, 1),
    ((1, 64, 7, 7), (32, 64, 1, 1), 1, 0, 1),
    ((2, 12, 5, 5), (20, 12, 1, 1), 1, 0, 1),
    ((1, 16, 8, 8), (16, 1, 3, 3), 1, 1, 16),
    ((1, 8, 6, 6), (12, 4, 3, 3), 1, 2, 2),
])
def test_matches_naive_windows_exactly(x_shape, w_shape, stride, pad, groups, dtype, target):
    x, w = operands(x_shape, w_shape, dtype)
    want = naive(x, w, stride, pad, groups)
    source = CONV.format(x=dims(x_shape), w=dims(w_shape), y=dims(want.shape), dtype=dtype,
                         s=stride, p=pad, g=groups, layout="NCHW")
    got = lamina.compile(source, target=target)(x, w)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, want)
    view = nn.Conv2dOp.detached(strides=(stride, stride), padding=(pad,) * 4, groups=groups)
    np.testing.assert_array_equal(view.reference(x, w, None), want)


@pytest.mark.parametrize("dtype", ["i8", "ui8"])
def test_channels_last(dtype):
    x, w = operands((1, 8, 8, 16), (24, 16, 3, 3), dtype)
    want = naive(np.transpose(x, (0, 3, 1, 2)), w, 1, 1, 1).transpose(0, 2, 3, 1)
    source = CONV.format(x=dims(x.shape), w=dims(w.shape), y=dims(want.shape), dtype=dtype,
                         s=1, p=1, g=1, layout="NHWC")
    np.testing.assert_array_equal(lamina.compile(source)(x, w), want)


def test_reference_wraps_like_i32():
    x = np.full((1, 1024, 46, 46), -128, np.int8)
    w = np.full((1, 1024, 46, 46), -128, np.int8)
    exact = 2 ** 14 * 1024 * 46 * 46     # past 2**35
    got = nn.Conv2dOp.detached().reference(x, w, None)
    assert got[0, 0, 0, 0] == (exact + 2 ** 31) % 2 ** 32 - 2 ** 31
