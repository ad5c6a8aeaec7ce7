"""ONNX MatMulInteger through `lamina.from_onnx`: int8 operands with and
without zero points (scalar, per row of A, per column of B), batched and
1-D operands, weights as initializers; results exactly equal to
onnxruntime's (and to NumPy's where onnxruntime does not take the zero
point's form). uint8 operands and zero points computed at run time are
errors at the node."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
onnxruntime = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import lamina  # noqa: E402

RNG = np.random.default_rng(10)


def int8(*shape):
    return RNG.integers(-128, 128, shape, dtype=np.int8)


def model(tmp_path, a_shape, b, zero_points=(None, None), b_shape=None, a_type=TensorProto.INT8):
    """MatMulInteger(a, b, za, zb): `b` an initializer (an array) or an
    input (None, of `b_shape`); zero points as initializers."""
    inputs = [helper.make_tensor_value_info("a", a_type, a_shape)]
    initializers, names = [], ["a", "b"]
    if b is None:
        inputs.append(helper.make_tensor_value_info("b", TensorProto.INT8, b_shape))
    else:
        initializers.append(numpy_helper.from_array(b, "b"))
    for name, zero in zip(("za", "zb"), zero_points):
        names.append(name if zero is not None else "")
        if zero is not None:
            initializers.append(numpy_helper.from_array(np.asarray(zero, np.int8), name))
    while names[-1] == "":
        names.pop()
    graph = helper.make_graph([helper.make_node("MatMulInteger", names, ["y"], name="y")],
                              "matmul_integer", inputs,
                              [helper.make_tensor_value_info("y", TensorProto.INT32, None)],
                              initializers)
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    proto = onnx.shape_inference.infer_shapes(proto)
    path = str(tmp_path / "matmul_integer.onnx")
    onnx.save(proto, path)
    return path


def lamina_output(path, *inputs):
    return lamina.compile(lamina.from_onnx(path))(*inputs)


def onnxruntime_output(path, *inputs):
    session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    return session.run(None, dict(zip(names, inputs)))[0]


def numpy_output(a, b, za=0, zb=0):
    za = np.asarray(za, np.int64)
    if za.ndim == 1:
        za = za[:, None]
    exact = np.matmul(a.astype(np.int64) - za, b.astype(np.int64) - np.asarray(zb, np.int64))
    return exact.astype(np.int32)


@pytest.mark.parametrize("a_shape, b_shape, zero_points", [
    ((5, 7), (7, 3), (None, None)),
    ((17, 64), (64, 33), (3, None)),
    ((16, 45), (45, 19), (None, -5)),
    ((9, 40), (40, 24), (-128, 127)),
    ((2, 3, 6, 20), (20, 10), (7, "per column")),
    ((20,), (20, 6), (-1, 2)),
    ((4, 20), (20,), (0, 0)),
])
def test_weights_match_onnxruntime(tmp_path, a_shape, b_shape, zero_points):
    a, b = int8(*a_shape), int8(*b_shape)
    za, zb = zero_points
    if zb == "per column":
        zb = int8(b_shape[-1])
    path = model(tmp_path, a_shape, b, (za, zb))
    got = lamina_output(path, a)
    want = onnxruntime_output(path, a)
    assert got.dtype == np.int32 and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_runtime_operands_match_onnxruntime(tmp_path):
    a, b = int8(3, 11, 13), int8(3, 13, 8)
    path = model(tmp_path, a.shape, None, (None, None), b_shape=b.shape)
    np.testing.assert_array_equal(lamina_output(path, a, b), onnxruntime_output(path, a, b))


def test_zero_point_per_row_of_a(tmp_path):
    a, b = int8(6, 30), int8(30, 5)
    za, zb = int8(6), int8(5)
    path = model(tmp_path, a.shape, b, (za, zb))
    np.testing.assert_array_equal(lamina_output(path, a), numpy_output(a, b, za, zb))


def test_uint8_weights_are_an_error_at_the_node(tmp_path):
    b = RNG.integers(0, 256, (8, 4), dtype=np.uint8)
    path = model(tmp_path, (2, 8), b)
    with pytest.raises(lamina.CompileError, match=r"node #0 'y' \(MatMulInteger\): input 'b' has "
                       r"element type uint8; MatMulInteger is imported for int8 operands only "
                       r"\(nn.matmul takes i8 x i8\)"):
        lamina.from_onnx(path)


def test_uint8_input_is_named(tmp_path):
    path = model(tmp_path, (2, 8), int8(8, 4), a_type=TensorProto.UINT8)
    with pytest.raises(lamina.CompileError, match=r"node #0 'y' \(MatMulInteger\): input 'a' has "
                       r"element type ui8; MatMulInteger is imported for int8 operands only"):
        lamina.from_onnx(path)


def test_zero_point_computed_at_run_time_is_an_error(tmp_path):
    inputs = [helper.make_tensor_value_info("a", TensorProto.INT8, (2, 8)),
              helper.make_tensor_value_info("za", TensorProto.INT8, ())]
    graph = helper.make_graph([helper.make_node("MatMulInteger", ["a", "b", "za"], ["y"],
                                                name="y")],
                              "matmul_integer", inputs,
                              [helper.make_tensor_value_info("y", TensorProto.INT32, (2, 4))],
                              [numpy_helper.from_array(int8(8, 4), "b")])
    path = str(tmp_path / "runtime_zero_point.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]), path)
    with pytest.raises(lamina.CompileError, match="a_zero_point 'za' must be known when the "
                       "model is imported"):
        lamina.from_onnx(path)
