"""ONNX MatMulInteger through `lamina.from_onnx`: int8 and uint8 operands
with and without zero points (scalar, per row of A, per column of B,
known at import or computed at run time), batched and 1-D operands,
weights as initializers; results exactly equal to onnxruntime's (and to
NumPy's where onnxruntime does not take the form). A zero point of
another type than its operand is an error at the node."""

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


def model(tmp_path, a_shape, b, zero_points=(None, None), b_shape=None, a_type=TensorProto.INT8,
          zero_types=(np.int8, np.int8)):
    """MatMulInteger(a, b, za, zb): `b` an initializer (an array) or an
    input (None, of `b_shape`); zero points as initializers."""
    inputs = [helper.make_tensor_value_info("a", a_type, a_shape)]
    initializers, names = [], ["a", "b"]
    if b is None:
        inputs.append(helper.make_tensor_value_info("b", TensorProto.INT8, b_shape))
    else:
        initializers.append(numpy_helper.from_array(b, "b"))
    for name, zero, zero_type in zip(("za", "zb"), zero_points, zero_types):
        names.append(name if zero is not None else "")
        if zero is not None:
            initializers.append(numpy_helper.from_array(np.asarray(zero, zero_type), name))
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


@pytest.mark.parametrize("b_dtype", [np.int8, np.uint8])
def test_uint8_activations_match_onnxruntime(tmp_path, b_dtype):
    a = RNG.integers(0, 256, (6, 40), dtype=np.uint8)
    low = 0 if b_dtype == np.uint8 else -128
    b = RNG.integers(low, low + 256, (40, 9)).astype(b_dtype)
    path = model(tmp_path, a.shape, b, (200, low + 3), a_type=TensorProto.UINT8,
                 zero_types=(np.uint8, b_dtype))
    got = lamina_output(path, a)
    np.testing.assert_array_equal(got, onnxruntime_output(path, a))
    np.testing.assert_array_equal(got, numpy_output(a, b, 200, low + 3))


def test_uint8_weights_by_int8_activations(tmp_path):
    a = int8(5, 33)
    b = RNG.integers(0, 256, (33, 7), dtype=np.uint8)
    zb = RNG.integers(0, 256, 7, dtype=np.uint8)
    path = model(tmp_path, a.shape, b, (-4, zb), zero_types=(np.int8, np.uint8))
    np.testing.assert_array_equal(lamina_output(path, a), numpy_output(a, b, -4, zb))


def test_zero_point_computed_at_run_time(tmp_path):
    inputs = [helper.make_tensor_value_info("a", TensorProto.INT8, (2, 8)),
              helper.make_tensor_value_info("za", TensorProto.INT8, ())]
    b = int8(8, 4)
    graph = helper.make_graph([helper.make_node("MatMulInteger", ["a", "b", "za"], ["y"],
                                                name="y")],
                              "matmul_integer", inputs,
                              [helper.make_tensor_value_info("y", TensorProto.INT32, (2, 4))],
                              [numpy_helper.from_array(b, "b")])
    path = str(tmp_path / "runtime_zero_point.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]), path)
    a, za = int8(2, 8), np.array(-77, np.int8)
    np.testing.assert_array_equal(lamina_output(path, a, za), numpy_output(a, b, za))


def test_zero_point_of_another_type_is_an_error_at_the_node(tmp_path):
    path = model(tmp_path, (2, 8), int8(8, 4), (3, None), zero_types=(np.uint8, np.int8))
    with pytest.raises(lamina.CompileError, match=r"node #0 'y' \(MatMulInteger\): a_zero_point "
                       r"'za' has element type ui8; the operand is i8"):
        lamina.from_onnx(path)
