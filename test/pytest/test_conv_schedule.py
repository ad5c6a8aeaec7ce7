"""Convolutions scheduled as direct channels-last convolutions match NumPy:
strides, padding, dilations, widths and channel counts no register tile
divides, batches, 1x1 and 5x5 filters, f16 and bf16, constant filters,
with bias, relu and residual epilogues, on one and two threads; and the
cost model's choices as data."""

import re

import numpy as np
import pytest

import lamina
from lamina.reference import compare, evaluate, random_inputs
from lamina.passes.cpu_convolutions_to_channels_last import CPUConvolutionsToChannelsLast
from lamina.schedules import choose_schedules
from lamina.targets.cpu_model import CPUModel

CONV = """
func.func @main(%x: tensor<{x}x{t}>, %w: tensor<{w}x{t}>, %b: tensor<{f}x{t}>, %r: tensor<{y}x{t}>)
    -> tensor<{y}x{t}> {{
  %0 = "nn.conv2d"(%x, %w, %b) {{strides = array<i64: {s}>, padding = array<i64: {p}>,
                                dilations = array<i64: {d}>}}
      : (tensor<{x}x{t}>, tensor<{w}x{t}>, tensor<{f}x{t}>) -> tensor<{y}x{t}>
  %1 = "nn.relu"(%0) : (tensor<{y}x{t}>) -> tensor<{y}x{t}>
  %2 = "nn.add"(%1, %r) : (tensor<{y}x{t}>, tensor<{y}x{t}>) -> tensor<{y}x{t}>
  return %2 : tensor<{y}x{t}>
}}
"""


def conv_source(n, c, h, w, f, k, stride=(1, 1), padding=(0, 0, 0, 0), dilation=(1, 1),
                dtype="f32"):
    """A conv2d with bias, then relu and a residual add (one fusion group)."""
    top, left, bottom, right = padding
    oh = (h + top + bottom - dilation[0] * (k - 1) - 1) // stride[0] + 1
    ow = (w + left + right - dilation[1] * (k - 1) - 1) // stride[1] + 1
    dims = lambda *d: "x".join(map(str, d))
    return CONV.format(x=dims(n, c, h, w), w=dims(f, c, k, k), f=f, y=dims(n, f, oh, ow),
                       s=", ".join(map(str, stride)), p=", ".join(map(str, padding)),
                       d=", ".join(map(str, dilation)), t=dtype)


def tiled(source: str, threads: int) -> str:
    module = lamina.parse(source)
    lamina.get_target(f"cpu:threads={threads}").pipeline().run(module, until="tiled")
    return str(module)


def check(source: str, threads: int):
    """The compiled program matches the NumPy reference, and its convolution
    was scheduled (no linalg convolution is left to the loops stage)."""
    code = tiled(source, threads)
    assert "linalg.conv" not in code and "vector.contract" in code
    # The accumulators are carried in registers by the reduction loops.
    assert re.search(r"scf\.for .* iter_args\(.*\) -> \(vector<", code)
    f = lamina.compile(source, target=f"cpu:threads={threads}")
    args = random_inputs(f.inputs, seed=1)
    (expected,) = evaluate(lamina.parse(source), args)
    comparison = compare(f(*args), expected, f.results[0].dtype)
    assert comparison.ok, str(comparison)


@pytest.mark.parametrize("shape,options,threads", [
    # The bench's register tile (8 pixels x 32 channels), two threads.
    ((1, 64, 20, 20, 64, 3), dict(padding=(1, 1, 1, 1)), 2),
    # A batch of two, stride 2, uneven padding, 7 output channels.
    ((2, 5, 13, 11, 7, 3), dict(stride=(2, 2), padding=(1, 0, 2, 1)), 2),
    # 5x5 filters, 10 output channels, 17 pixels wide (no divisor up to 8).
    ((1, 3, 17, 17, 10, 5), dict(padding=(2, 2, 2, 2)), 1),
    # 1x1 filters, 33 output channels: a matrix product (pixels x
    # channels), no transposes; and a batch of three sharing the filter.
    ((1, 16, 9, 9, 33, 1), dict(), 2),
    ((3, 24, 7, 7, 40, 1), dict(), 2),
    # 1x1 filters of stride 2 stay channels last.
    ((1, 16, 9, 9, 32, 1), dict(stride=(2, 2)), 1),
    # 48 channels (16-wide tiles), 30 pixels (6-pixel tiles).
    ((1, 8, 30, 30, 48, 3), dict(padding=(1, 1, 1, 1)), 1),
    # Dilations with unequal strides.
    ((1, 4, 15, 16, 12, 3), dict(stride=(2, 1), dilation=(2, 2), padding=(0, 1, 0, 1)), 2),
    # Rows of 19 and 29 pixels split into 8-pixel tiles and the rest.
    ((1, 8, 9, 37, 16, 3), dict(stride=(2, 2), padding=(1, 1, 1, 1)), 2),
    ((1, 16, 6, 29, 32, 3), dict(padding=(1, 1, 1, 1)), 1),
    # 7 rows: the threads share the output channels.
    ((1, 16, 7, 7, 128, 3), dict(padding=(1, 1, 1, 1)), 2),
    # 5 rows and 3 register tiles of 11 channels: the rows (3 and 2).
    ((1, 14, 12, 9, 33, 7), dict(stride=(2, 1), padding=(1, 2, 2, 0)), 2),
])
def test_direct_convolution_matches_numpy(shape, options, threads):
    check(conv_source(*shape, **options), threads)


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_half_precision_convolution(dtype):
    check(conv_source(1, 6, 10, 10, 16, 3, padding=(1, 1, 1, 1), dtype=dtype), threads=2)


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_half_precision_pointwise_convolution(dtype):
    check(conv_source(2, 12, 6, 6, 20, 1, dtype=dtype), threads=2)


GROUPED = """
func.func @main(%x: tensor<{x}x{t}>, %w: tensor<{w}x{t}>, %b: tensor<{f}x{t}>) -> tensor<{y}x{t}> {{
  %0 = "nn.conv2d"(%x, %w, %b) {{strides = array<i64: {s}>, padding = array<i64: {p}>,
                                dilations = array<i64: {d}>, groups = {g} : i64}}
      : (tensor<{x}x{t}>, tensor<{w}x{t}>, tensor<{f}x{t}>) -> tensor<{y}x{t}>
  %1 = "nn.relu"(%0) : (tensor<{y}x{t}>) -> tensor<{y}x{t}>
  return %1 : tensor<{y}x{t}>
}}
"""


def grouped_source(n, c, h, w, f, k, groups, stride=(1, 1), padding=(0, 0, 0, 0),
                   dilation=(1, 1), dtype="f32"):
    """A grouped conv2d with bias, then relu (one fusion group)."""
    top, left, bottom, right = padding
    oh = (h + top + bottom - dilation[0] * (k - 1) - 1) // stride[0] + 1
    ow = (w + left + right - dilation[1] * (k - 1) - 1) // stride[1] + 1
    dims = lambda *d: "x".join(map(str, d))
    return GROUPED.format(x=dims(n, c, h, w), w=dims(f, c // groups, k, k), f=f,
                          y=dims(n, f, oh, ow), g=groups, s=", ".join(map(str, stride)),
                          p=", ".join(map(str, padding)), d=", ".join(map(str, dilation)),
                          t=dtype)


@pytest.mark.parametrize("shape,groups,options,threads,vectorised", [
    # Depthwise 3x3 (one channel per group), padded, two threads.
    ((2, 16, 12, 12, 16, 3), 16, dict(padding=(1, 1, 1, 1)), 2, True),
    # Depthwise with a channel multiplier of 2, stride 2, uneven padding;
    # rows of 6 pixels, which no vector of 4 or more divides: scalar code.
    ((1, 6, 11, 13, 12, 3), 6, dict(stride=(2, 2), padding=(1, 0, 2, 1)), 2, False),
    # Depthwise 5x5, dilated, rows of 12.
    ((1, 8, 14, 16, 8, 5), 8, dict(dilation=(2, 1), padding=(2, 0, 2, 0)), 1, True),
    # Groups of 4 channels (36 taps, unrolled), 28-pixel rows.
    ((2, 32, 28, 28, 32, 3), 8, dict(padding=(1, 1, 1, 1)), 2, True),
    # Groups of 8 channels with 3x3 filters (72 taps: C is a reduction loop).
    ((1, 16, 10, 16, 24, 3), 2, dict(padding=(1, 1, 1, 1)), 2, True),
    # 7x7 depthwise (49 taps), no padding, stride 2 (strided windows).
    ((1, 4, 21, 21, 4, 7), 4, dict(stride=(2, 2)), 1, True),
    # Unit dims beside the group's one channel (rows of one pixel, one
    # output row), with strides and dilations along them: the slices keep
    # every dim (upstream aborted on the rank-reducing ones).
    ((2, 8, 8, 1, 8, 1), 8, dict(stride=(2, 3), dilation=(2, 1), padding=(1, 0, 0, 0)), 2, False),
    ((3, 8, 1, 2, 24, 1), 8, dict(stride=(2, 1), dilation=(2, 1)), 1, False),
])
def test_grouped_convolution_matches_numpy(shape, groups, options, threads, vectorised):
    source = grouped_source(*shape, groups, **options)
    code = tiled(source, threads)
    # Rewritten as a sum over the filter's taps and vectorised: no
    # convolution, and no padded input built by tensor.pad, is left.
    assert "linalg.conv" not in code and "tensor.pad" not in code
    vector_sums = re.search(r"arith\.addf .*fastmath<contract> : vector<", code)
    assert bool(vector_sums) == vectorised
    f = lamina.compile(source, target=f"cpu:threads={threads}")
    args = random_inputs(f.inputs, seed=3)
    (expected,) = evaluate(lamina.parse(source), args)
    comparison = compare(f(*args), expected, f.results[0].dtype)
    assert comparison.ok, str(comparison)


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_half_precision_grouped_convolution(dtype):
    source = grouped_source(1, 8, 9, 12, 8, 3, 8, padding=(1, 1, 1, 1), dtype=dtype)
    f = lamina.compile(source, target="cpu:threads=2")
    args = random_inputs(f.inputs, seed=4)
    (expected,) = evaluate(lamina.parse(source), args)
    comparison = compare(f(*args), expected, dtype)
    assert comparison.ok, str(comparison)


DEPTHWISE_NHWC = """
func.func @main(%x: tensor<{x}x{t}>, %w: tensor<{w}x{t}>, %b: tensor<{c}x{t}>) -> tensor<{y}x{t}> {{
  %0 = "nn.conv2d"(%x, %w, %b) {{strides = array<i64: {s}>, padding = array<i64: {p}>,
                                dilations = array<i64: {d}>, groups = {c} : i64,
                                layout = "NHWC"}}
      : (tensor<{x}x{t}>, tensor<{w}x{t}>, tensor<{c}x{t}>) -> tensor<{y}x{t}>
  %1 = "nn.relu"(%0) : (tensor<{y}x{t}>) -> tensor<{y}x{t}>
  return %1 : tensor<{y}x{t}>
}}
"""


def depthwise_nhwc_source(n, h, w, c, k, stride=(1, 1), padding=(0, 0, 0, 0),
                          dilation=(1, 1), dtype="f32"):
    """A channels-last depthwise conv2d with bias, then relu."""
    top, left, bottom, right = padding
    oh = (h + top + bottom - dilation[0] * (k - 1) - 1) // stride[0] + 1
    ow = (w + left + right - dilation[1] * (k - 1) - 1) // stride[1] + 1
    dims = lambda *d: "x".join(map(str, d))
    return DEPTHWISE_NHWC.format(x=dims(n, h, w, c), w=dims(c, 1, k, k), c=c,
                                 y=dims(n, oh, ow, c), s=", ".join(map(str, stride)),
                                 p=", ".join(map(str, padding)),
                                 d=", ".join(map(str, dilation)), t=dtype)


@pytest.mark.parametrize("shape,options,threads", [
    # MobileNet's: 3x3 padded, 144 channels (16-wide tiles), 14 pixels wide.
    ((1, 14, 14, 144, 3), dict(padding=(1, 1, 1, 1)), 2),
    # Stride 2, 24 channels (no vector of 16 divides them: 8-wide), two images.
    ((2, 13, 11, 24, 3), dict(stride=(2, 2), padding=(1, 0, 2, 1)), 2),
    # 32 channels in one register tile; rows of 19 (split 16 + 3).
    ((1, 7, 19, 32, 3), dict(padding=(1, 1, 1, 1)), 1),
    # 5x5 dilated, odd channel count; 7 rows on two threads.
    ((1, 11, 12, 5, 5), dict(dilation=(2, 1), padding=(2, 2, 2, 2)), 2),
    # 7x7 of stride 2 with no padding, a row of one pixel.
    ((1, 9, 7, 16, 7), dict(stride=(2, 2)), 1),
])
def test_depthwise_nhwc_convolution_matches_numpy(shape, options, threads):
    source = depthwise_nhwc_source(*shape, **options)
    code = tiled(source, threads)
    # Computed by the direct schedule: FMAs on vectors of channels whose
    # accumulators the loop over the filter's rows carries; the activations
    # are not transposed (only the filter is, into [KH, KW, C]).
    assert "linalg.depthwise_conv" not in code and "linalg.conv" not in code
    n, h, w, c, _ = shape
    assert not [line for line in code.splitlines()
                if "linalg.transpose" in line and f"{n}x{h}x{w}x{c}x" in line]
    assert re.search(r"scf\.for .* iter_args\(.*\) -> \(vector<", code)
    f = lamina.compile(source, target=f"cpu:threads={threads}")
    args = random_inputs(f.inputs, seed=5)
    (expected,) = evaluate(lamina.parse(source), args)
    comparison = compare(f(*args), expected, f.results[0].dtype)
    assert comparison.ok, str(comparison)


DEPTHWISE_NHWC_PLAIN = """
func.func @main(%x: tensor<{x}x{t}>, %w: tensor<{w}x{t}>) -> tensor<{y}x{t}> {{
  %0 = "nn.conv2d"(%x, %w) {{strides = array<i64: {s}>, padding = array<i64: {p}>,
                            groups = {c} : i64, layout = "NHWC"}}
      : (tensor<{x}x{t}>, tensor<{w}x{t}>) -> tensor<{y}x{t}>
  return %0 : tensor<{y}x{t}>
}}
"""


@pytest.mark.parametrize("size,channels,stride,epilogue,threads,split", [
    # MobileNet's sizes, stride 1 and 2, padding 1, channel counts no
    # register tile of 32 divides (24, 40, 72), with the bias and relu on
    # each part's tiles and with no epilogue.
    (112, 24, 1, True, 2, True),
    (112, 40, 2, False, 2, True),
    (56, 40, 2, True, 2, True),
    (14, 72, 2, True, 2, True),
    # 28 pixels: border parts of 4 columns, an interior of 20.
    (28, 16, 1, True, 2, True),
    # Too small to split (border parts of more than 40% of the output).
    (14, 72, 1, False, 1, False),
    (7, 40, 1, True, 2, False),
    (7, 24, 2, False, 1, False),
])
def test_split_padded_depthwise_matches_numpy(size, channels, stride, epilogue, threads, split):
    if epilogue:
        source = depthwise_nhwc_source(1, size, size, channels, 3, stride=(stride, stride),
                                       padding=(1, 1, 1, 1))
    else:
        out = (size - 1) // stride + 1
        dims = lambda *d: "x".join(map(str, d))
        source = DEPTHWISE_NHWC_PLAIN.format(
            x=dims(1, size, size, channels), w=dims(channels, 1, 3, 3), c=channels,
            y=dims(1, out, out, channels), s=f"{stride}, {stride}", p="1, 1, 1, 1", t="f32")
    code = tiled(source, threads)
    # No padded copy of the whole input where the convolution is split: the
    # interior reads it in place, the border parts pad slices of a few rows
    # or columns.
    assert "linalg.depthwise_conv" not in code
    whole = f"tensor<1x{size}x{size}x{channels}xf32> to tensor<1x{size + 2}x{size + 2}x"
    assert "tensor.pad" in code and (whole not in code) == split
    f = lamina.compile(source, target=f"cpu:threads={threads}")
    args = random_inputs(f.inputs, seed=7)
    (expected,) = evaluate(lamina.parse(source), args)
    comparison = compare(f(*args), expected, f.results[0].dtype)
    assert comparison.ok, str(comparison)


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_half_precision_depthwise_nhwc_convolution(dtype):
    source = depthwise_nhwc_source(1, 9, 12, 32, 3, padding=(1, 1, 1, 1), dtype=dtype)
    f = lamina.compile(source, target="cpu:threads=2")
    args = random_inputs(f.inputs, seed=6)
    (expected,) = evaluate(lamina.parse(source), args)
    comparison = compare(f(*args), expected, dtype)
    assert comparison.ok, str(comparison)


def test_grouped_convolution_next_to_a_dense_one():
    # The same input feeds a grouped convolution (a sum over taps) and a
    # dense one (channels last, register tiles of FMAs).
    source = """
func.func @main(%x: tensor<1x4x9x9xf32>, %g: tensor<6x2x3x3xf32>, %w: tensor<8x4x3x3xf32>)
    -> (tensor<1x6x7x7xf32>, tensor<1x8x7x7xf32>) {
  %0 = "nn.conv2d"(%x, %g) {groups = 2 : i64} : (tensor<1x4x9x9xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x7x7xf32>
  %1 = "nn.conv2d"(%x, %w) : (tensor<1x4x9x9xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x7x7xf32>
  return %0, %1 : tensor<1x6x7x7xf32>, tensor<1x8x7x7xf32>
}"""
    code = tiled(source, threads=2)
    assert "linalg.conv" not in code and "vector.contract" in code
    f = lamina.compile(source, target="cpu:threads=2")
    args = random_inputs(f.inputs, seed=2)
    for actual, expected in zip(f(*args), evaluate(lamina.parse(source), args)):
        comparison = compare(actual, expected, "f32")
        assert comparison.ok, str(comparison)


def schedules_of(source: str, threads: int):
    module = lamina.parse(source)
    lamina.get_target("cpu").pipeline().run(module, until="linalg")
    assert CPUConvolutionsToChannelsLast().apply(module.operation)
    assert str(module).count("linalg.conv_2d_nhwc_hwcf") == 1
    return choose_schedules(module.operation, CPUModel(threads=threads))


def test_direct_schedule_is_data():
    # Loops (n, oh, ow, f, kh, kw, c): two threads share the 56 output rows;
    # the register tile is 8 pixels x 32 channels, one filter row and one
    # input channel at a time, the filter's width whole (unrolled).
    (conv,) = [s for s in schedules_of(conv_source(1, 64, 56, 56, 64, 3, padding=(1, 1, 1, 1)), 2)
               if s.kind == "convolution"]
    assert conv.threads == (0, 28, 0, 0, 0, 0, 0)
    assert conv.tile_sizes == ((0, 1, 8, 32, 1, 0, 1),)
    assert len(conv.fills) == 1
    # A batch at least as large as the threads is what they share.
    (batched,) = [s for s in schedules_of(conv_source(4, 8, 12, 12, 16, 3), 2)
                  if s.kind == "convolution"]
    assert batched.threads == (2, 0, 0, 0, 0, 0, 0)
    assert batched.tile_sizes == ((1, 1, 5, 0, 1, 0, 1),)
    # A row of 17 pixels: 16 in 8-pixel tiles, then one tile of the last.
    (split,) = [s for s in schedules_of(conv_source(1, 8, 17, 17, 64, 3, padding=(1, 1, 1, 1)), 2)
                if s.kind == "convolution"]
    assert split.split == (2, 16)
    assert split.tile_sizes == ((0, 1, 8, 32, 1, 0, 1), (0, 1, 0, 32, 1, 0, 1))
    # 7 output rows do not split evenly over two threads; 4 tiles of 32
    # output channels do.
    (channels,) = [s for s in schedules_of(conv_source(1, 16, 7, 7, 128, 3, padding=(1, 1, 1, 1)), 2)
                   if s.kind == "convolution"]
    assert channels.threads == (0, 0, 0, 64, 0, 0, 0)
    assert channels.tile_sizes == ((0, 1, 0, 32, 1, 0, 1),)


def test_temporaries_are_reused_across_calls():
    # The NHWC copies of the input and result are freed at the end of each
    # call; the next call reuses their memory instead of faulting in fresh
    # pages.
    import resource
    f = lamina.compile(conv_source(1, 64, 56, 56, 64, 3, padding=(1, 1, 1, 1)),
                       target="cpu:threads=1")
    args = f.check_arguments(random_inputs(f.inputs, seed=0))
    results = f.allocate_results()
    f.call_with_results(args, results)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(3):
        f.call_with_results(args, results)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before < 300


def constant_filter_source(dtype: str) -> str:
    weights = np.random.default_rng(3).uniform(-1, 1, (8, 4, 3, 3)).round(2)
    literal = np.array2string(weights, separator=", ", threshold=10**6,
                              formatter={"float_kind": lambda v: f"{v:.2f}"})
    return f"""
func.func @main(%x: tensor<1x4x10x10x{dtype}>) -> tensor<1x8x10x10x{dtype}> {{
  %w = arith.constant dense<{literal}> : tensor<8x4x3x3x{dtype}>
  %0 = "nn.conv2d"(%x, %w) {{padding = array<i64: 1, 1, 1, 1>}}
      : (tensor<1x4x10x10x{dtype}>, tensor<8x4x3x3x{dtype}>) -> tensor<1x8x10x10x{dtype}>
  return %0 : tensor<1x8x10x10x{dtype}>
}}"""


def test_constant_filter_is_transposed_at_compile_time():
    source = constant_filter_source("f32")
    assert "tensor<8x4x3x3xf32>" not in tiled(source, threads=2)
    check(source, threads=2)


def test_bf16_constant_filter_is_transposed_at_each_call():
    # NumPy cannot hold bf16 elements: the filter stays a constant in FCHW,
    # transposed by the program.
    code = tiled(constant_filter_source("bf16"), threads=2)
    assert "tensor<8x4x3x3xbf16>" in code and "linalg.conv" not in code
