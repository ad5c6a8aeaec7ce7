"""nn.quantize and nn.dequantize compiled for the CPU against their NumPy
references, exactly: ties (x.5 rounds half to even), saturation, infinities
and NaN, per-tensor and per-channel parameters, i8 and ui8; and the
references against ONNX's definition written out element by element."""

from __future__ import annotations

import numpy as np
import pytest

import lamina
from lamina.dialects import nn
from lamina.types import TensorType

QUANTIZED_DTYPES = {"i8": np.int8, "ui8": np.uint8}


def _parameters_type(shape, dtype):
    return str(TensorType(tuple(shape), dtype))


def quantize_program(x_shape, parameter_shape, dtype, axis=1):
    x = str(TensorType(tuple(x_shape), "f32"))
    scale, zero_point = _parameters_type(parameter_shape, "f32"), _parameters_type(
        parameter_shape, dtype)
    q = str(TensorType(tuple(x_shape), dtype))
    return f"""
func.func @main(%x: {x}, %s: {scale}, %z: {zero_point}) -> {q} {{
  %q = "nn.quantize"(%x, %s, %z) {{axis = {axis} : i64}} : ({x}, {scale}, {zero_point}) -> {q}
  return %q : {q}
}}"""


def dequantize_program(x_shape, parameter_shape, dtype, axis=1):
    q = str(TensorType(tuple(x_shape), dtype))
    scale, zero_point = _parameters_type(parameter_shape, "f32"), _parameters_type(
        parameter_shape, dtype)
    y = str(TensorType(tuple(x_shape), "f32"))
    return f"""
func.func @main(%q: {q}, %s: {scale}, %z: {zero_point}) -> {y} {{
  %y = "nn.dequantize"(%q, %s, %z) {{axis = {axis} : i64}} : ({q}, {scale}, {zero_point}) -> {y}
  return %y : {y}
}}"""


def onnx_quantize(x, scale, zero_point):
    """QuantizeLinear element by element, as the ONNX operator text defines
    it (NaN: the least value, see nn.quantize)."""
    info = np.iinfo(zero_point.dtype)
    out = np.empty(x.shape, zero_point.dtype)
    for index, value in np.ndenumerate(x):
        quotient = float(np.float32(value) / np.float32(scale[index]))
        if np.isnan(quotient):
            out[index] = info.min
            continue
        rounded = round(quotient) if np.isfinite(quotient) else quotient  # half to even
        out[index] = int(min(max(rounded + int(zero_point[index]), info.min), info.max))
    return out


def _channel(parameter, x_shape, axis):
    if parameter.ndim == 0:
        return np.broadcast_to(parameter, x_shape)
    shape = [-1 if d == axis else 1 for d in range(len(x_shape))]
    return np.broadcast_to(parameter.reshape(shape), x_shape)


def special_values(rng, shape, scale):
    """Ties (k + 0.5 times the scale), saturating values, +-inf and NaN."""
    x = rng.integers(-300, 300, shape).astype(np.float32) + 0.5
    x = (x * scale).astype(np.float32)
    flat = x.reshape(-1)
    flat[:6] = [np.inf, -np.inf, np.nan, 1e30, -1e30, 0.0]
    return x


@pytest.mark.parametrize("dtype", ["i8", "ui8"])
@pytest.mark.parametrize("per_channel", [False, True])
def test_quantize_exact(dtype, per_channel):
    rng = np.random.default_rng(0)
    x_shape, axis = (3, 5, 7), 1
    np_dtype = QUANTIZED_DTYPES[dtype]
    info = np.iinfo(np_dtype)
    parameter_shape = (x_shape[axis],) if per_channel else ()
    # Powers of two keep x / scale exact, so that x.5 ties really are ties.
    scale = (2.0 ** rng.integers(-3, 2, parameter_shape)).astype(np.float32)
    zero_point = rng.integers(info.min // 2, info.max // 2 + 1, parameter_shape).astype(np_dtype)
    x = special_values(rng, x_shape, _channel(scale, x_shape, axis))
    compiled = lamina.compile(quantize_program(x_shape, parameter_shape, dtype, axis))
    got = compiled(x, scale, zero_point)
    want = nn.QuantizeOp.detached(axis=axis).reference(x, scale, zero_point)
    assert got.dtype == np_dtype
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(want, onnx_quantize(x, _channel(scale, x_shape, axis),
                                                      _channel(zero_point, x_shape, axis)))
    # The cases the test is there for do occur.
    assert (got == info.max).any() and (got == info.min).any()


def test_quantize_ties_to_even():
    compiled = lamina.compile(quantize_program((8,), (), "i8", axis=0))
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 126.5, -128.5], np.float32)
    got = compiled(x, np.float32(1.0), np.int8(0))
    np.testing.assert_array_equal(got, np.array([0, 2, 2, 0, -2, -2, 126, -128], np.int8))


@pytest.mark.parametrize("dtype", ["i8", "ui8"])
@pytest.mark.parametrize("per_channel", [False, True])
def test_dequantize_exact(dtype, per_channel):
    rng = np.random.default_rng(1)
    x_shape, axis = (4, 6), 0
    np_dtype = QUANTIZED_DTYPES[dtype]
    info = np.iinfo(np_dtype)
    parameter_shape = (x_shape[axis],) if per_channel else ()
    scale = rng.uniform(0.001, 0.5, parameter_shape).astype(np.float32)
    zero_point = rng.integers(info.min, info.max + 1, parameter_shape).astype(np_dtype)
    q = rng.integers(info.min, info.max + 1, x_shape).astype(np_dtype)
    q.reshape(-1)[:2] = [info.min, info.max]
    compiled = lamina.compile(dequantize_program(x_shape, parameter_shape, dtype, axis))
    got = compiled(q, scale, zero_point)
    want = nn.DequantizeOp.detached(axis=axis).reference(q, scale, zero_point)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, want)
    onnx = ((q.astype(np.float32) - _channel(zero_point, x_shape, axis).astype(np.float32))
            * _channel(scale, x_shape, axis))
    np.testing.assert_array_equal(want, onnx)


def test_round_trip_through_ui8_constant():
    """A ui8 constant and a per-channel negative axis: the constant is
    stored with the same bits as i8 below nn."""
    program = """
func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %s = arith.constant dense<[0.5, 0.25, 2.0]> : tensor<3xf32>
  %z = arith.constant dense<[128, 200, 3]> : tensor<3xui8>
  %q = "nn.quantize"(%x, %s, %z) {axis = -1 : i64} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xui8>) -> tensor<2x3xui8>
  %y = "nn.dequantize"(%q, %s, %z) {axis = -1 : i64} : (tensor<2x3xui8>, tensor<3xf32>, tensor<3xui8>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}"""
    x = np.array([[1.0, -7.3, 300.0], [-100.0, 13.9, 2.9]], np.float32)
    got = lamina.compile(program)(x)
    scale = np.array([0.5, 0.25, 2.0], np.float32)
    zero_point = np.array([128, 200, 3], np.uint8)
    q = nn.QuantizeOp.detached(axis=-1).reference(x, scale, zero_point)
    np.testing.assert_array_equal(got, nn.DequantizeOp.detached(axis=-1).reference(
        q, scale, zero_point))
