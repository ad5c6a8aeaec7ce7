"""ONNX ConvInteger, QLinearConv and QLinearMatMul through
`lamina.from_onnx`, compiled for the CPU, against onnxruntime on small
random models: uint8 and int8 activations, int8 weights per tensor or per
output channel (uint8 ones per tensor), zero points on both operands,
padding, strides, groups, an int32 bias; results exactly equal.

And a QDQ ResNet-style block (conv-relu-conv plus the residual, relu),
quantised by onnxruntime's `quantize_static` (QDQ format, uint8
activations, int8 weights per channel, a random calibration reader),
imported with its weights as constants, fused by nn-fuse-qdq and
compiled, against onnxruntime running the same QDQ model: within one
quantisation step of the output, and at most 2% of the outputs differ by
that step (the residual addition stays in float between its
dequantisations and quantisation, where ONNX Runtime computes a
QLinearAdd; the biases are added after the rescaling).
"""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
onnxruntime = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import lamina  # noqa: E402
from lamina.passes.nn_fuse_qdq import NNFuseQDQ  # noqa: E402

RNG = np.random.default_rng(24)
ONNX_TYPES = {np.uint8: TensorProto.UINT8, np.int8: TensorProto.INT8}


def quantized(shape, dtype):
    low = 0 if dtype == np.uint8 else -128
    return RNG.integers(low, low + 256, shape).astype(dtype)


def run_both(node, inputs, initializers, output_type, opset=13):
    """The one-node model's output from onnxruntime and from Lamina."""
    graph = helper.make_graph(
        [node], "qlinear",
        [helper.make_tensor_value_info(name, ONNX_TYPES[array.dtype.type], array.shape)
         for name, array in inputs.items()],
        [helper.make_tensor_value_info("y", output_type, None)],
        [numpy_helper.from_array(array, name) for name, array in initializers.items()])
    data = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    data = onnx.shape_inference.infer_shapes(data).SerializeToString()
    session = onnxruntime.InferenceSession(data, providers=["CPUExecutionProvider"])
    want = session.run(None, inputs)[0]
    got = lamina.compile(lamina.from_onnx(data, params="constants"))(*inputs.values())
    return want, got


@pytest.mark.parametrize("x_dtype, w_dtype", [(np.uint8, np.uint8), (np.uint8, np.int8)])
@pytest.mark.parametrize("pads, strides, group", [
    ((1, 1, 1, 1), (1, 1), 1), ((0, 0, 0, 0), (2, 2), 1), ((1, 2, 1, 0), (1, 1), 2)])
def test_conv_integer(x_dtype, w_dtype, pads, strides, group):
    x = quantized((2, 8, 9, 9), x_dtype)
    w = quantized((12, 8 // group, 3, 3), w_dtype)
    zx, zw = np.array(131, x_dtype), np.array(3 if w_dtype == np.int8 else 140, w_dtype)
    node = helper.make_node("ConvInteger", ["x", "w", "zx", "zw"], ["y"], pads=pads,
                            strides=strides, group=group)
    want, got = run_both(node, {"x": x}, {"w": w, "zx": zx, "zw": zw}, TensorProto.INT32)
    assert got.dtype == np.int32 and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("x_dtype", [np.uint8, np.int8])
@pytest.mark.parametrize("per_channel", [False, True], ids=["per_tensor", "per_channel"])
@pytest.mark.parametrize("pads, strides, group, bias", [
    ((1, 1, 1, 1), (1, 1), 1, True), ((1, 1, 1, 1), (2, 2), 1, False),
    ((0, 0, 0, 0), (1, 1), 1, True), ((1, 1, 1, 1), (1, 1), 16, True)])
def test_qlinear_conv(x_dtype, per_channel, pads, strides, group, bias):
    channels, out_channels = 16, 16
    kernel = (1, 1) if pads == (0, 0, 0, 0) else (3, 3)
    x = quantized((1, channels, 10, 10), x_dtype)
    w = quantized((out_channels, channels // group) + kernel, np.int8)
    zx = np.array(120 if x_dtype == np.uint8 else -5, x_dtype)
    shape = (out_channels,) if per_channel else ()
    initializers = {
        "sx": np.array(0.0183, np.float32), "zx": zx, "w": w,
        "sw": RNG.uniform(0.002, 0.01, shape).astype(np.float32),
        "zw": np.zeros(shape, np.int8),
        # ONNX Runtime's QLinearConv makes the input's type.
        "sy": np.array(0.09, np.float32),
        "zy": np.array(110 if x_dtype == np.uint8 else -10, x_dtype)}
    names = ["x", "sx", "zx", "w", "sw", "zw", "sy", "zy"]
    if bias:
        initializers["b"] = RNG.integers(-3000, 3000, out_channels).astype(np.int32)
        names.append("b")
    node = helper.make_node("QLinearConv", names, ["y"], pads=pads, strides=strides,
                            group=group)
    want, got = run_both(node, {"x": x}, initializers, ONNX_TYPES[x_dtype])
    assert got.dtype == x_dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    assert len(np.unique(got)) > 20


@pytest.mark.parametrize("a_dtype", [np.uint8, np.int8])
@pytest.mark.parametrize("per_column", [False, True], ids=["per_tensor", "per_column"])
@pytest.mark.parametrize("a_shape", [(7, 48), (2, 5, 48)])
def test_qlinear_matmul(a_dtype, per_column, a_shape):
    a = quantized(a_shape, a_dtype)
    b = quantized((48, 20), np.int8)
    shape = (20,) if per_column else ()
    initializers = {
        "sa": np.array(0.021, np.float32), "za": np.array(133 if a_dtype == np.uint8 else 9,
                                                          a_dtype),
        "b": b, "sb": RNG.uniform(0.002, 0.01, shape).astype(np.float32),
        "zb": np.zeros(shape, np.int8) if per_column else np.array(-6, np.int8),
        # ONNX Runtime's QLinearMatMul makes the activation's type.
        "sy": np.array(0.13, np.float32),
        "zy": np.array(125 if a_dtype == np.uint8 else -3, a_dtype)}
    node = helper.make_node("QLinearMatMul", ["a", "sa", "za", "b", "sb", "zb", "sy", "zy"],
                            ["y"])
    want, got = run_both(node, {"a": a}, initializers, ONNX_TYPES[a_dtype],
                         opset=21 if per_column else 13)
    assert got.dtype == a_dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    assert len(np.unique(got)) > 20


# -- a QDQ ResNet-style block -----------------------------------------------------------

CHANNELS, SIZE = 32, 14


def resnet_block():
    """x -> conv3x3 -> relu -> conv3x3 -> + x -> relu, float."""
    def conv_weight(name):
        fan_in = CHANNELS * 9
        return numpy_helper.from_array(
            (RNG.standard_normal((CHANNELS, CHANNELS, 3, 3)) / np.sqrt(fan_in))
            .astype(np.float32), name)

    def bias(name):
        return numpy_helper.from_array(RNG.uniform(-0.1, 0.1, CHANNELS).astype(np.float32),
                                       name)
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["c2", "x"], ["s"]),
        helper.make_node("Relu", ["s"], ["y"]),
    ]
    shape = [1, CHANNELS, SIZE, SIZE]
    graph = helper.make_graph(
        nodes, "resnet_block", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)],
        [conv_weight("w1"), bias("b1"), conv_weight("w2"), bias("b2")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


class RandomCalibration:
    """onnxruntime's CalibrationDataReader over random inputs."""

    def __init__(self, count: int):
        self.batches = iter([{"x": RNG.standard_normal((1, CHANNELS, SIZE, SIZE))
                              .astype(np.float32)} for _ in range(count)])

    def get_next(self):
        return next(self.batches, None)


def quantized_resnet_block(tmp_path) -> str:
    from onnxruntime.quantization import QuantFormat, QuantType, quantize_static
    float_path, qdq_path = str(tmp_path / "block.onnx"), str(tmp_path / "block.qdq.onnx")
    onnx.save(resnet_block(), float_path)
    quantize_static(float_path, qdq_path, RandomCalibration(16), quant_format=QuantFormat.QDQ,
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
                    per_channel=True)
    return qdq_path


def fusing_pipeline():
    pipeline = lamina.Pipeline.for_target("cpu")
    return pipeline.insert_after("nn-canonicalize", NNFuseQDQ(), stage="nn")


def conv_types(module) -> list[str]:
    from mlir import ir
    found = []

    def visit(op):
        if op.name == "nn.conv2d":
            found.append(str(op.results[0].type.element_type))
        return ir.WalkResult.ADVANCE
    module.operation.walk(visit)
    return found


def test_qdq_resnet_block_matches_onnxruntime(tmp_path):
    path = quantized_resnet_block(tmp_path)
    model = onnx.load(path)
    op_types = [node.op_type for node in model.graph.node]
    assert op_types.count("Conv") == 2 and "DequantizeLinear" in op_types
    x = RNG.standard_normal((1, CHANNELS, SIZE, SIZE)).astype(np.float32)
    session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
    want = session.run(None, {"x": x})[0]

    fused = fusing_pipeline().run(lamina.from_onnx(path, params="constants"), until="nn")
    # Both convolutions are integer ones (their weight sums folded).
    assert set(conv_types(fused)) == {"i32"}
    got = lamina.compile(lamina.from_onnx(path, params="constants"),
                         pipeline=fusing_pipeline())(x)
    assert got.shape == want.shape and got.dtype == np.float32
    output_dequantize = model.graph.node[-1]
    assert output_dequantize.op_type == "DequantizeLinear"
    step = float(numpy_helper.to_array(next(
        i for i in model.graph.initializer if i.name == output_dequantize.input[1])))
    difference = np.abs(got - want)
    assert difference.max() <= step * 1.001
    differ = difference > step / 2
    print(f"QDQ ResNet block: {differ.sum()} of {differ.size} outputs differ by one step "
          f"({step:.5f})")
    assert differ.mean() <= 0.02
    assert len(np.unique(got)) > 20


def test_qlinear_matmul_float16_scales():
    """float16 scales are widened to f32 (exactly): the results are the ONNX
    reference evaluator's, which combines the scales in float16, within one
    step where the two multipliers round a product near a tie apart."""
    from onnx.reference import ReferenceEvaluator
    a, b = quantized((4, 32), np.uint8), quantized((32, 6), np.uint8)
    initializers = {"sa": np.array(0.0213, np.float16), "za": np.array(120, np.uint8),
                    "b": b, "sb": np.array(0.0087, np.float16), "zb": np.array(130, np.uint8),
                    "sy": np.array(0.11, np.float16), "zy": np.array(128, np.uint8)}
    node = helper.make_node("QLinearMatMul", ["a", "sa", "za", "b", "sb", "zb", "sy", "zy"],
                            ["y"])
    graph = helper.make_graph(
        [node], "qlinear", [helper.make_tensor_value_info("a", TensorProto.UINT8, a.shape)],
        [helper.make_tensor_value_info("y", TensorProto.UINT8, (4, 6))],
        [numpy_helper.from_array(array, name) for name, array in initializers.items()])
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    want = ReferenceEvaluator(proto).run(None, {"a": a})[0]
    got = lamina.compile(lamina.from_onnx(proto.SerializeToString(), params="constants"))(a)
    difference = np.abs(got.astype(np.int32) - want)
    assert difference.max() <= 1 and (difference > 0).mean() <= 0.1
    assert len(np.unique(got)) > 10
