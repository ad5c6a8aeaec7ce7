"""The GPU's convolution kernels, emulated (cuda:sm_80) against the nn
reference (NumPy, f32 sums rounded once) over a grid of convolutions:
f32, f16 and bf16, NCHW and NHWC, strides, uneven padding, dilations,
groups (depthwise with a channel multiplier), 1x1 and 7x7 filters, one
input channel, sizes no tile divides, and K and M of several tiles for
the implicit GEMM; each case checks that it got the kernel the target
model chooses (`nvidia.conv_kernel`): hw.im2col and hw.mma for implicit
GEMM, hw.conv_elements for the direct kernel."""

from __future__ import annotations

import math

import numpy as np
import pytest

from lamina.parsing import parse
from lamina.reference import compare, evaluate, tolerance
from lamina.targets import nvidia
from lamina.targets.cuda import CUDATarget
from lamina.types import numpy_dtype

# name: (N, C, H, W, O, KH, KW, strides, padding, dilations, groups)
CASES = {
    "1x1": (2, 5, 6, 7, 9, 1, 1, (1, 1), (0, 0, 0, 0), (1, 1), 1),
    "3x3-stride2": (1, 3, 11, 9, 8, 3, 3, (2, 2), (1, 1, 1, 1), (1, 1), 1),
    "7x7-stem": (1, 3, 13, 13, 4, 7, 7, (2, 2), (3, 3, 3, 3), (1, 1), 1),
    "depthwise-x2": (1, 4, 7, 6, 8, 3, 3, (1, 1), (1, 1, 1, 1), (1, 1), 4),
    "grouped-dilated": (2, 6, 5, 5, 4, 3, 3, (1, 1), (0, 1, 2, 1), (1, 2), 2),
    "one-channel": (1, 1, 9, 8, 3, 5, 3, (1, 2), (2, 1, 2, 1), (2, 1), 1),
    "several-tiles": (1, 20, 10, 14, 70, 3, 3, (1, 1), (1, 1, 1, 1), (1, 1), 1),
}

# (dtype, layout) pairs per case: tensor cores where the model says so.
VARIANTS = [("f32", "NCHW"), ("f16", "NHWC"), ("bf16", "NCHW")]
EXTRA = [("1x1", "f32", "NHWC"), ("3x3-stride2", "f16", "NCHW"), ("7x7-stem", "bf16", "NHWC"),
         ("depthwise-x2", "bf16", "NHWC"), ("several-tiles", "f16", "NCHW"),
         ("grouped-dilated", "f16", "NCHW")]
GRID = [(name, dtype, layout) for name in CASES for dtype, layout in VARIANTS] + EXTRA


def window_out(size: int, kernel: int, stride: int, dilation: int, pad: int) -> int:
    return (size + pad - dilation * (kernel - 1) - 1) // stride + 1


def program(case, dtype: str, layout: str, bias: bool) -> tuple[str, list[tuple[int, ...]]]:
    n, c, h, w, o, kh, kw, strides, padding, dilations, groups = case
    oh = window_out(h, kh, strides[0], dilations[0], padding[0] + padding[2])
    ow = window_out(w, kw, strides[1], dilations[1], padding[1] + padding[3])

    def shaped(shape):
        return shape if layout == "NCHW" else (shape[0], shape[2], shape[3], shape[1])

    shapes = [shaped((n, c, h, w)), (o, c // groups, kh, kw)] + ([(o,)] if bias else [])
    out = shaped((n, o, oh, ow))

    def t(shape):
        return f"tensor<{'x'.join(map(str, shape))}x{dtype}>"
    arguments = ", ".join(f"%a{i}: {t(s)}" for i, s in enumerate(shapes))
    uses = ", ".join(f"%a{i}" for i in range(len(shapes)))
    attributes = (f"strides = array<i64: {strides[0]}, {strides[1]}>, "
                  f"padding = array<i64: {', '.join(map(str, padding))}>, "
                  f"dilations = array<i64: {dilations[0]}, {dilations[1]}>, "
                  f"groups = {groups} : i64, layout = \"{layout}\"")
    text = (f"func.func @main({arguments}) -> {t(out)} {{\n"
            f"  %y = \"nn.conv2d\"({uses}) {{{attributes}}} : "
            f"({', '.join(t(s) for s in shapes)}) -> {t(out)}\n"
            f"  %r = \"nn.relu\"(%y) : ({t(out)}) -> {t(out)}\n"
            f"  return %r : {t(out)}\n}}\n")
    return text, shapes


def inputs(shapes, dtype: str, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    fan_in = math.prod(shapes[1][1:])
    scales = [1.0, 1.0 / math.sqrt(fan_in), 0.5]
    return [(rng.uniform(-1, 1, shape) * scale).astype(numpy_dtype(dtype))
            for shape, scale in zip(shapes, scales)]


def emulated_against_reference(text: str, arguments, dtype: str, length: int):
    module = parse(text)
    expected = evaluate(parse(text), arguments)[0]
    actual = CUDATarget("sm_80").emulation().compile(module)(*arguments)
    actual = actual[0] if isinstance(actual, (list, tuple)) else actual
    assert actual.shape == expected.shape and actual.dtype == expected.dtype
    rtol, atol = tolerance(dtype, length)
    comparison = compare(np.asarray(actual), np.asarray(expected), dtype, rtol, atol)
    assert comparison.ok, str(comparison)
    assert np.abs(np.asarray(expected, np.float32)).max() > 0  # not a vacuous comparison


def hw_of(text: str) -> str:
    module = parse(text)
    CUDATarget("sm_80").pipeline().run(module, until="hw")
    return str(module)


@pytest.mark.parametrize("name,dtype,layout", GRID, ids=[f"{n}-{d}-{l}" for n, d, l in GRID])
def test_conv_kernel_matches_the_reference(name, dtype, layout):
    case = CASES[name]
    bias = name != "one-channel"
    text, shapes = program(case, dtype, layout, bias)
    groups = case[-1]
    kind = nvidia.conv_kernel(dtype, groups)
    hw = hw_of(text)
    if kind == "implicit_gemm":
        assert '"hw.im2col"' in hw and '"hw.mma"' in hw and "hw.conv_elements" not in hw
    else:
        assert '"hw.conv_elements"' in hw and "hw.im2col" not in hw
    length = case[1] // groups * case[5] * case[6]
    emulated_against_reference(text, inputs(shapes, dtype, seed=len(name)), dtype, length)


RESIDUAL = """func.func @main(%x: tensor<2x6x5x24xf16>, %w: tensor<16x24x3x3xf16>, %b: tensor<16xf16>, %r: tensor<2x6x5x16xf16>) -> tensor<2x6x5x16xf16> {
  %y = "nn.conv2d"(%x, %w) {padding = array<i64: 1, 1, 1, 1>, layout = "NHWC"} : (tensor<2x6x5x24xf16>, tensor<16x24x3x3xf16>) -> tensor<2x6x5x16xf16>
  %1 = "nn.add"(%y, %b) : (tensor<2x6x5x16xf16>, tensor<16xf16>) -> tensor<2x6x5x16xf16>
  %2 = "nn.add"(%1, %r) : (tensor<2x6x5x16xf16>, tensor<2x6x5x16xf16>) -> tensor<2x6x5x16xf16>
  %3 = "nn.relu"(%2) : (tensor<2x6x5x16xf16>) -> tensor<2x6x5x16xf16>
  return %3 : tensor<2x6x5x16xf16>
}"""


def test_implicit_gemm_epilogue_reads_a_bias_and_a_residual():
    """A bias add and a residual add after the conv are the implicit
    GEMM's epilogue: one kernel, the residual read as the result's rows."""
    hw = hw_of(RESIDUAL)
    assert hw.count('"hw.launch"') == 1 and '"hw.im2col"' in hw
    # The store writes the result's rows, reading the bias by column and
    # the residual as rows.
    assert "memref<60x16xf16>, memref<16xf16>, memref<60x16xf16>, index, index) -> ()" in hw
    rng = np.random.default_rng(1)
    arguments = [rng.uniform(-1, 1, (2, 6, 5, 24)), rng.uniform(-0.1, 0.1, (16, 24, 3, 3)),
                 rng.uniform(-1, 1, (16,)), rng.uniform(-1, 1, (2, 6, 5, 16))]
    emulated_against_reference(RESIDUAL, [a.astype(np.float16) for a in arguments], "f16",
                               24 * 9)


BLOCK_NCHW = """func.func @main(%x: tensor<2x12x9x7xbf16>, %w: tensor<16x12x3x3xbf16>, %b: tensor<16xbf16>, %s: tensor<1x16x1x1xbf16>, %t: tensor<16x1x1xbf16>, %r: tensor<2x16x9x7xbf16>) -> tensor<2x16x9x7xbf16> {
  %y = "nn.conv2d"(%x, %w, %b) {padding = array<i64: 1, 1, 1, 1>} : (tensor<2x12x9x7xbf16>, tensor<16x12x3x3xbf16>, tensor<16xbf16>) -> tensor<2x16x9x7xbf16>
  %m = "nn.mul"(%y, %s) : (tensor<2x16x9x7xbf16>, tensor<1x16x1x1xbf16>) -> tensor<2x16x9x7xbf16>
  %a = "nn.add"(%m, %t) : (tensor<2x16x9x7xbf16>, tensor<16x1x1xbf16>) -> tensor<2x16x9x7xbf16>
  %c = "nn.add"(%a, %r) : (tensor<2x16x9x7xbf16>, tensor<2x16x9x7xbf16>) -> tensor<2x16x9x7xbf16>
  %o = "nn.relu"(%c) : (tensor<2x16x9x7xbf16>) -> tensor<2x16x9x7xbf16>
  return %o : tensor<2x16x9x7xbf16>
}"""


def test_nchw_implicit_gemm_reads_channel_values_per_row():
    """An NCHW conv's implicit GEMM is a batch of O x OH*OW matrices: its
    bias and batch norm's scale and shift are values per row ([1, O, 1],
    broadcast), the residual the result's matrices."""
    hw = hw_of(BLOCK_NCHW)
    assert hw.count('"hw.launch"') == 1 and "transposed = true" in hw
    assert ("memref<2x16x63xbf16>, memref<1x16x1xbf16>, memref<1x16x1xbf16>, "
            "memref<1x16x1xbf16>, memref<2x16x63xbf16>, index, index, index) -> ()") in hw
    rng = np.random.default_rng(2)
    shapes = [(2, 12, 9, 7), (16, 12, 3, 3), (16,), (1, 16, 1, 1), (16, 1, 1), (2, 16, 9, 7)]
    arguments = [(rng.uniform(-1, 1, s) * (0.1 if i == 1 else 1)).astype(numpy_dtype("bf16"))
                 for i, s in enumerate(shapes)]
    emulated_against_reference(BLOCK_NCHW, arguments, "bf16", 12 * 9)
