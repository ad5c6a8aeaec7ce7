"""ONNX QuantizeLinear and DequantizeLinear through `lamina.from_onnx`,
compiled for the CPU, against onnxruntime: exactly equal. Models built with
onnx.helper at opsets 10, 13, 19 and 21: per tensor and per axis, int8 and
uint8, zero points given or left out (uint8 0), parameters as initializers
(constants) and as graph inputs (computed at run time); inputs with ties
(x.5 of the scale), saturating values, infinities and NaN. Unsupported forms
(blocked quantisation, int16, float16 scales) are errors at the node."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
onnxruntime = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import lamina  # noqa: E402
from lamina.diagnostics import CompileError  # noqa: E402

ONNX_TYPES = {np.int8: TensorProto.INT8, np.uint8: TensorProto.UINT8,
              np.float32: TensorProto.FLOAT}


def model(nodes, inputs, outputs, initializers=(), opset=21):
    graph = helper.make_graph(nodes, "quantization", inputs, outputs,
                              [numpy_helper.from_array(a, name) for name, a in initializers])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def value(name, dtype, shape):
    return helper.make_tensor_value_info(name, ONNX_TYPES[dtype], list(shape))


def both(proto, *arrays, optimized=True):
    """Lamina's and onnxruntime's results of the model on `arrays`
    (`optimized=False`: without onnxruntime's graph rewrites)."""
    data = proto.SerializeToString()
    options = onnxruntime.SessionOptions()
    if not optimized:
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = onnxruntime.InferenceSession(data, options, providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    want = session.run(None, dict(zip(names, arrays)))
    got = lamina.compile(lamina.from_onnx(data, params="constants"))(*arrays)
    got = got if isinstance(got, (list, tuple)) else [got]
    return got, want


def inputs_with_ties(rng, shape, scale, axis=None):
    """Multiples of half the scale (ties at the odd ones), values that
    saturate, infinities and NaN (onnxruntime gives the least value, as
    nn.quantize defines)."""
    if axis is not None:
        scale = scale.reshape([-1 if d == axis else 1 for d in range(len(shape))])
    x = (rng.integers(-400, 400, shape) * 0.5 * scale).astype(np.float32)
    x.reshape(-1)[:5] = [np.inf, -np.inf, 1e20, -1e20, np.nan]
    return x


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
@pytest.mark.parametrize("opset", [10, 13, 19, 21])
def test_quantize_dequantize_per_tensor(dtype, opset):
    rng = np.random.default_rng(opset)
    scale = np.array(0.25, np.float32)
    zero_point = np.array(3 if dtype == np.int8 else 131, dtype)
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"]),
             helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"])]
    proto = model(nodes, [value("x", np.float32, (4, 33))],
                  [value("q", dtype, (4, 33)), value("y", np.float32, (4, 33))],
                  [("s", scale), ("z", zero_point)], opset)
    x = inputs_with_ties(rng, (4, 33), scale)
    got, want = both(proto, x)
    assert got[0].dtype == dtype
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_quantize_dequantize_per_axis(dtype, axis):
    rng = np.random.default_rng(7)
    shape = (3, 8, 5)
    channels = shape[axis]
    info = np.iinfo(dtype)
    scale = (2.0 ** rng.integers(-4, 1, channels)).astype(np.float32)
    zero_point = rng.integers(info.min // 2, info.max // 2, channels).astype(dtype)
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], axis=axis),
             helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"], axis=axis)]
    proto = model(nodes, [value("x", np.float32, shape)],
                  [value("q", dtype, shape), value("y", np.float32, shape)],
                  [("s", scale), ("z", zero_point)], 13)
    x = inputs_with_ties(rng, shape, scale, axis % 3)
    got, want = both(proto, x)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_default_zero_point_is_uint8_zero():
    nodes = [helper.make_node("QuantizeLinear", ["x", "s"], ["q"])]
    proto = model(nodes, [value("x", np.float32, (10,))], [value("q", np.uint8, (10,))],
                  [("s", np.array(0.5, np.float32))], 13)
    x = np.linspace(-3, 200, 10).astype(np.float32)
    got, want = both(proto, x)
    assert got[0].dtype == np.uint8
    np.testing.assert_array_equal(got[0], want[0])


def test_output_dtype_without_zero_point():
    nodes = [helper.make_node("QuantizeLinear", ["x", "s"], ["q"],
                              output_dtype=TensorProto.INT8)]
    proto = model(nodes, [value("x", np.float32, (10,))], [value("q", np.int8, (10,))],
                  [("s", np.array(0.5, np.float32))], 21)
    x = np.linspace(-100, 100, 10).astype(np.float32)
    got, want = both(proto, x)
    assert got[0].dtype == np.int8
    np.testing.assert_array_equal(got[0], want[0])


def test_parameters_at_run_time():
    """Scale and zero point as graph inputs, and a quantised graph input."""
    nodes = [helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"], axis=0),
             helper.make_node("QuantizeLinear", ["y", "s", "z"], ["r"], axis=0)]
    proto = model(nodes, [value("q", np.uint8, (4, 6)), value("s", np.float32, (4,)),
                          value("z", np.uint8, (4,))],
                  [value("y", np.float32, (4, 6)), value("r", np.uint8, (4, 6))], opset=13)
    rng = np.random.default_rng(3)
    q = rng.integers(0, 256, (4, 6)).astype(np.uint8)
    s = np.array([0.1, 0.5, 1.0, 3.0], np.float32)
    z = np.array([0, 128, 255, 7], np.uint8)
    got, want = both(proto, q, s, z)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_int8_weights_stay_quantised():
    """A constant int8 weight is dequantised in the program (where
    nn-fold-constants or a QDQ fusion finds it), not at import. (With its
    graph rewrites, onnxruntime quantises x too for this pattern and
    differs by about 1e-2.)"""
    weight = np.arange(-6, 6, dtype=np.int8).reshape(3, 4)
    nodes = [helper.make_node("DequantizeLinear", ["w", "s", "z"], ["wf"]),
             helper.make_node("MatMul", ["x", "wf"], ["y"])]
    proto = model(nodes, [value("x", np.float32, (2, 3))], [value("y", np.float32, (2, 4))],
                  [("w", weight), ("s", np.array(0.5, np.float32)),
                   ("z", np.array(1, np.int8))], 13)
    assert '"nn.dequantize"' in str(lamina.from_onnx(proto.SerializeToString()))
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    got, want = both(proto, x, optimized=False)
    np.testing.assert_array_equal(got[0], want[0])


@pytest.mark.parametrize("node,inputs,initializers,output,message", [
    (helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"], block_size=2, axis=1),
     [value("q", np.int8, (2, 4))],
     [("s", np.ones((2, 2), np.float32)), ("z", np.zeros((2, 2), np.int8))],
     value("y", np.float32, (2, 4)), "attribute 'block_size' = 2 is not supported (only its default, 0)"),
    (helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"]),
     [],
     [("q", np.zeros(4, np.int16)), ("s", np.array(1.0, np.float32)),
      ("z", np.array(0, np.int16))],
     value("y", np.float32, (4,)), "dequantisation of int16 is not supported (only int8 and uint8)"),
    (helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"]),
     [value("x", np.float32, (4,))],
     [("s", np.array(1.0, np.float16)), ("z", np.array(0, np.int8))],
     value("y", np.int8, (4,)), "y_scale of element type f16 is not supported (only float)"),
])
def test_unsupported_forms_are_errors_at_the_node(node, inputs, initializers, output, message):
    proto = model([node], inputs, [output], initializers, 21)
    with pytest.raises(CompileError) as failure:
        lamina.from_onnx(proto.SerializeToString())
    assert f"node #0 ({node.op_type}): {message}" in str(failure.value)
