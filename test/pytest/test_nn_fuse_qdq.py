"""nn-fuse-qdq: QDQ matmuls as integer matmuls with a requantising
epilogue, compiled for the CPU.

* An ONNX QDQ MLP built with onnx.helper (three layers: 512 -> 384 -> 256
  -> 64, Relu between them in float, as quantisers leave it; activations
  uint8 or int8 per tensor, weights int8 per tensor or per column, nonzero
  activation zero points), imported with its weights as constants, fused,
  compiled and compared with onnxruntime, whose QDQ transformer runs
  these as QLinearMatMul (an exact i32 accumulator, requantised as
  float(acc) * scale, rounded half to even, saturated): every output is
  equal.
* The fused program of one layer with zero points on both operands and a
  uint8 argument, against the integer formula in NumPy: exactly equal.
"""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
onnxruntime = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from mlir import ir  # noqa: E402

import lamina  # noqa: E402
from lamina.parsing import parse  # noqa: E402
from lamina.passes.nn_fuse_qdq import NNFuseQDQ  # noqa: E402

SIZES = (512, 384, 256, 64)
BATCH = 32


def qdq_mlp(rng, activation, per_column):
    """x -> Q -> [DQ -> MatMul(DQ(W)) -> Q -> DQ -> Relu -> Q]... -> DQ."""
    zero = {np.uint8: 128, np.int8: 0}[activation]
    nodes, initializers = [], []

    def initializer(name, array):
        initializers.append(numpy_helper.from_array(array, name))
        return name

    scale = initializer("s_x", np.array(0.0173, np.float32))
    zero_point = initializer("z_x", np.array(zero + 5, activation))
    nodes.append(helper.make_node("QuantizeLinear", ["x", scale, zero_point], ["q_x"]))
    value = "q_x"
    layers = list(zip(SIZES[:-1], SIZES[1:]))
    for i, (k, n) in enumerate(layers):
        weight = rng.standard_normal((k, n)).astype(np.float32) / np.sqrt(k)
        weight_scale = (np.abs(weight).max(0) if per_column else np.abs(weight).max()) / 127
        weight_scale = np.asarray(weight_scale, np.float32)
        quantized = np.clip(np.rint(weight / weight_scale), -127, 127).astype(np.int8)
        initializer(f"w{i}", quantized)
        initializer(f"s_w{i}", weight_scale)
        initializer(f"z_w{i}", np.zeros(weight_scale.shape, np.int8))
        nodes += [
            helper.make_node("DequantizeLinear", [value, scale, zero_point], [f"a{i}"]),
            helper.make_node("DequantizeLinear", [f"w{i}", f"s_w{i}", f"z_w{i}"], [f"wf{i}"],
                             axis=1),
            helper.make_node("MatMul", [f"a{i}", f"wf{i}"], [f"y{i}"]),
        ]
        scale = initializer(f"s_y{i}", np.array(0.0437 + 0.0113 * i, np.float32))
        zero_point = initializer(f"z_y{i}", np.array(zero - 3 * i, activation))
        nodes.append(helper.make_node("QuantizeLinear", [f"y{i}", scale, zero_point],
                                      [f"q{i}"]))
        value = f"q{i}"
        if i < len(layers) - 1:
            nodes += [
                helper.make_node("DequantizeLinear", [value, scale, zero_point], [f"d{i}"]),
                helper.make_node("Relu", [f"d{i}"], [f"r{i}"]),
                helper.make_node("QuantizeLinear", [f"r{i}", scale, zero_point], [f"rq{i}"]),
            ]
            value = f"rq{i}"
    nodes.append(helper.make_node("DequantizeLinear", [value, scale, zero_point], ["y"]))
    graph = helper.make_graph(
        nodes, "qdq_mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                         [BATCH, SIZES[0]])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [BATCH, SIZES[-1]])],
        initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def fusing_pipeline():
    pipeline = lamina.Pipeline.for_target("cpu")
    return pipeline.insert_after("nn-canonicalize", NNFuseQDQ(), stage="nn")


def op_types(module, name: str) -> list[str]:
    """The result element types of the ops called `name`."""
    found = []

    def visit(op):
        if op.name == name:
            found.append(str(op.results[0].type.element_type))
        return ir.WalkResult.ADVANCE
    module.operation.walk(visit)
    return found


def matmul_types(module) -> list[str]:
    return op_types(module, "nn.matmul")


@pytest.mark.parametrize("per_column", [False, True], ids=["per_tensor", "per_column"])
@pytest.mark.parametrize("activation", [np.uint8, np.int8], ids=["uint8", "int8"])
def test_qdq_mlp_matches_onnxruntime(activation, per_column):
    rng = np.random.default_rng(0)
    data = qdq_mlp(rng, activation, per_column).SerializeToString()
    x = (rng.standard_normal((BATCH, SIZES[0])) * 2).astype(np.float32)
    session = onnxruntime.InferenceSession(data, providers=["CPUExecutionProvider"])
    want = session.run(None, {"x": x})[0]

    module = lamina.from_onnx(data, params="constants")
    fused = fusing_pipeline().run(lamina.from_onnx(data, params="constants"), until="nn")
    # Every matmul is an integer one (the weights' column sums are folded).
    assert matmul_types(fused) and set(matmul_types(fused)) == {"i32"}
    got = lamina.compile(module, pipeline=fusing_pipeline())(x)
    assert got.dtype == np.float32 and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    assert len(np.unique(got)) > 50  # not saturated


def test_fused_layer_matches_the_integer_formula():
    """Zero points on both operands, the weight's per column, a uint8
    activation given as an argument: acc = sum (a - za)(w - zw) in
    integers, then round_half_to_even(f32(acc) * (sa * sw / sy)) + zy,
    saturated."""
    rng = np.random.default_rng(1)
    m, k, n = 7, 300, 9
    weight = rng.integers(-128, 128, (k, n)).astype(np.int8)
    zw = rng.integers(-20, 20, n).astype(np.int8)
    sw = rng.uniform(0.001, 0.01, n).astype(np.float32)
    sa, za, sy, zy = np.float32(0.02), np.uint8(140), np.float32(0.9), np.int8(-7)
    text = f"""
func.func @main(%q: tensor<{m}x{k}xui8>) -> tensor<{m}x{n}xi8> {{
  %sa = arith.constant dense<{sa}> : tensor<f32>
  %za = arith.constant dense<{za}> : tensor<ui8>
  %w = arith.constant dense<{weight.tolist()}> : tensor<{k}x{n}xi8>
  %sw = arith.constant dense<{sw.tolist()}> : tensor<{n}xf32>
  %zw = arith.constant dense<{zw.tolist()}> : tensor<{n}xi8>
  %sy = arith.constant dense<{sy}> : tensor<f32>
  %zy = arith.constant dense<{zy}> : tensor<i8>
  %a = "nn.dequantize"(%q, %sa, %za) : (tensor<{m}x{k}xui8>, tensor<f32>, tensor<ui8>) -> tensor<{m}x{k}xf32>
  %wf = "nn.dequantize"(%w, %sw, %zw) : (tensor<{k}x{n}xi8>, tensor<{n}xf32>, tensor<{n}xi8>) -> tensor<{k}x{n}xf32>
  %y = "nn.matmul"(%a, %wf) : (tensor<{m}x{k}xf32>, tensor<{k}x{n}xf32>) -> tensor<{m}x{n}xf32>
  %r = "nn.quantize"(%y, %sy, %zy) : (tensor<{m}x{n}xf32>, tensor<f32>, tensor<i8>) -> tensor<{m}x{n}xi8>
  return %r : tensor<{m}x{n}xi8>
}}"""
    q = rng.integers(0, 256, (m, k)).astype(np.uint8)
    got = lamina.compile(text, pipeline=fusing_pipeline())(q)
    accumulator = (q.astype(np.int64) - int(za)) @ (weight.astype(np.int64) - zw.astype(np.int64))
    multiplier = (sa * sw) / sy
    want = np.clip(np.rint(accumulator.astype(np.float32) * multiplier) + zy, -128, 127)
    np.testing.assert_array_equal(got, want.astype(np.int8))
    assert (got == 127).any() or (got == -128).any() or len(np.unique(got)) > 20


def conv_integer_formula(q, za, weight, zw, stride, pad, groups):
    """sum over each window of (x - za)(w - zw) in integers, the padding
    holding za (a real zero), NCHW."""
    n, c, h, width = q.shape
    o, cg, kh, kw = weight.shape
    x = np.pad(q.astype(np.int64) - int(za), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    w = weight.astype(np.int64) - zw.astype(np.int64).reshape(-1, 1, 1, 1)
    oh, ow = (h + 2 * pad - kh) // stride + 1, (width + 2 * pad - kw) // stride + 1
    out = np.zeros((n, o, oh, ow), np.int64)
    for f in range(o):
        g = f // (o // groups)
        for i in range(oh):
            for j in range(ow):
                window = x[:, g * cg:(g + 1) * cg, i * stride:i * stride + kh,
                           j * stride:j * stride + kw]
                out[:, f, i, j] = (window * w[f]).sum(axis=(1, 2, 3))
    return out


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("activation", ["ui8", "i8"])
@pytest.mark.parametrize("stride, pad, groups, epilogue", [
    (1, 1, 1, "bias_relu"), (2, 1, 1, "none"), (1, 1, 2, "bias"), (1, 0, 1, "relu"),
])
def test_fused_conv_matches_the_integer_formula(stride, pad, groups, epilogue, activation,
                                                layout):
    """A QDQ convolution with zero points on both operands (the weight's
    per output channel) and padding: the integer convolution of (x - za)
    and (w - zw) with za in the padding, requantised as
    round_half_to_even(f32(acc) * (sa * sw / sy) + bias / sy) + zy (relu
    before rounding), saturated: equal to that formula except where it is
    within a rounding error of a tie."""
    rng = np.random.default_rng(2)
    n, c, h, w_, o, k = 2, 8, 9, 9, 12, 3
    cg = c // groups
    weight = rng.integers(-128, 128, (o, cg, k, k)).astype(np.int8)
    zw = rng.integers(-20, 20, o).astype(np.int8)
    sw = rng.uniform(0.001, 0.01, o).astype(np.float32)
    bias = rng.uniform(-2, 2, o).astype(np.float32)
    unsigned = activation == "ui8"
    dtype = np.uint8 if unsigned else np.int8
    za = dtype(140 if unsigned else -9)
    sa, sy, zy = np.float32(0.02), np.float32(0.9), np.int8(-7)
    oh = (h + 2 * pad - k) // stride + 1
    x_shape, y_shape = (n, c, h, w_), (n, o, oh, oh)
    if layout == "NHWC":
        x_shape, y_shape = (n, h, w_, c), (n, oh, oh, o)
    dims = lambda shape: "x".join(map(str, shape))  # noqa: E731
    bias_operand = ", %b" if "bias" in epilogue else ""
    bias_type = ", tensor<{}xf32>".format(o) if "bias" in epilogue else ""
    relu = "bias_relu" == epilogue or epilogue == "relu"
    product = "%yr" if relu else "%y"
    relu_line = (f'%yr = "nn.relu"(%y) : (tensor<{dims(y_shape)}xf32>) -> '
                 f'tensor<{dims(y_shape)}xf32>') if relu else ""
    text = f"""
func.func @main(%q: tensor<{dims(x_shape)}x{activation}>) -> tensor<{dims(y_shape)}xi8> {{
  %sa = arith.constant dense<{sa}> : tensor<f32>
  %za = arith.constant dense<{za}> : tensor<{activation}>
  %w = arith.constant dense<{weight.tolist()}> : tensor<{o}x{cg}x{k}x{k}xi8>
  %sw = arith.constant dense<{sw.tolist()}> : tensor<{o}xf32>
  %zw = arith.constant dense<{zw.tolist()}> : tensor<{o}xi8>
  %b = arith.constant dense<{bias.tolist()}> : tensor<{o}xf32>
  %sy = arith.constant dense<{sy}> : tensor<f32>
  %zy = arith.constant dense<{zy}> : tensor<i8>
  %a = "nn.dequantize"(%q, %sa, %za) : (tensor<{dims(x_shape)}x{activation}>, tensor<f32>, tensor<{activation}>) -> tensor<{dims(x_shape)}xf32>
  %wf = "nn.dequantize"(%w, %sw, %zw) {{axis = 0 : i64}} : (tensor<{o}x{cg}x{k}x{k}xi8>, tensor<{o}xf32>, tensor<{o}xi8>) -> tensor<{o}x{cg}x{k}x{k}xf32>
  %y = "nn.conv2d"(%a, %wf{bias_operand}) {{strides = array<i64: {stride}, {stride}>, padding = array<i64: {pad}, {pad}, {pad}, {pad}>, groups = {groups} : i64, layout = "{layout}"}} : (tensor<{dims(x_shape)}xf32>, tensor<{o}x{cg}x{k}x{k}xf32>{bias_type}) -> tensor<{dims(y_shape)}xf32>
  {relu_line}
  %r = "nn.quantize"({product}, %sy, %zy) : (tensor<{dims(y_shape)}xf32>, tensor<f32>, tensor<i8>) -> tensor<{dims(y_shape)}xi8>
  return %r : tensor<{dims(y_shape)}xi8>
}}"""
    low, high = (0, 256) if unsigned else (-128, 128)
    q = rng.integers(low, high, x_shape).astype(dtype)
    fused = fusing_pipeline().run(parse(text), until="nn")
    assert op_types(fused, "nn.conv2d") and set(op_types(fused, "nn.conv2d")) == {"i32"}
    got = lamina.compile(text, pipeline=fusing_pipeline())(q)
    q_nchw = np.transpose(q, (0, 3, 1, 2)) if layout == "NHWC" else q
    accumulator = conv_integer_formula(q_nchw, za, weight, zw, stride, pad, groups)
    multiplier = ((sa * sw) / sy).reshape(-1, 1, 1)
    real = accumulator.astype(np.float32) * multiplier
    if "bias" in epilogue:
        real = real + (bias / sy).reshape(-1, 1, 1)
    if relu:
        real = np.maximum(real, 0)
    want = np.clip(np.rint(real) + zy, -128, 127).astype(np.int8)
    if layout == "NHWC":
        want = np.transpose(want, (0, 2, 3, 1))
        real = np.transpose(real, (0, 2, 3, 1))
    differ = got != want
    # Only where the float epilogue is within rounding of a tie.
    assert np.all(np.abs(np.abs(real[differ] - np.floor(real[differ])) - 0.5) < 1e-4)
    assert np.abs(got.astype(np.int32) - want).max() <= 1
    assert differ.mean() < 0.01
    assert len(np.unique(got)) > 20
