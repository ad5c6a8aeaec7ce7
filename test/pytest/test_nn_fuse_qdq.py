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


def matmul_types(module) -> list[str]:
    found = []

    def visit(op):
        if op.name == "nn.matmul":
            found.append(str(op.results[0].type.element_type))
        return ir.WalkResult.ADVANCE
    module.operation.walk(visit)
    return found


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
