"""The public Python API: lamina.parse / compile / jit and the nn builders."""

import math
import os

import ml_dtypes
import numpy as np
import pytest
from mlir import ir

import lamina
from lamina import nn
from lamina.context import make_context
from lamina.dialects.nn import NN

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples")


def erf(x):
    return np.vectorize(math.erf)(x)


def rand(*shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed + len(shape)).uniform(-1, 1, shape).astype(dtype)


def test_public_names():
    for name in ("parse", "compile", "jit", "Pipeline", "nn", "CompileError", "get_target"):
        assert hasattr(lamina, name)
    for op_name in NN.ops:
        assert callable(getattr(nn, op_name)), op_name


def test_compile_a_file():
    f = lamina.compile(os.path.join(EXAMPLES, "mlp.mlir"))
    args = [rand(*t.shape, seed=i) for i, t in enumerate(f.inputs)]
    x, w1, b1, w2, b2 = [a.astype(np.float64) for a in args]
    h = x @ w1 + b1
    logits = (0.5 * h * (1 + erf(h / math.sqrt(2)))) @ w2 + b2
    expected = np.exp(logits - logits.max(-1, keepdims=True))
    expected /= expected.sum(-1, keepdims=True)
    np.testing.assert_allclose(f(*args), expected, rtol=1e-4, atol=1e-6)


def test_jit_traces_once_per_signature():
    traced = []

    @lamina.jit
    def scale_shift(x, b):
        traced.append(x.shape)
        return x * 2.0 + b

    x, b = rand(4, 8), rand(8)
    np.testing.assert_allclose(scale_shift(x, b), x * 2 + b, rtol=1e-6)
    np.testing.assert_allclose(scale_shift(x + 1, b), (x + 1) * 2 + b, rtol=1e-6)
    assert traced == [(4, 8)]
    scale_shift(rand(2, 8), b)
    assert traced == [(4, 8), (2, 8)] and len(scale_shift.cache) == 2
    assert scale_shift.__name__ == "scale_shift"


def test_jit_with_target_and_several_results():
    @lamina.jit(target="cpu")
    def stats(x):
        return nn.reduce_sum(x, -1), nn.reduce_max(x, axes=(0,), keepdims=True), x

    x = rand(3, 5)
    total, largest, same = stats(x)
    np.testing.assert_allclose(total, x.sum(-1), rtol=1e-5)
    np.testing.assert_array_equal(largest, x.max(0, keepdims=True))
    np.testing.assert_array_equal(same, x)


def test_operators_and_constants():
    @lamina.jit
    def arithmetic(x, y):
        return (1 - x) / (y * y + 1), -x ** 2, x @ nn.transpose(y, (1, 0)), 3.0 * x

    x, y = rand(2, 3), rand(2, 3, seed=5)
    a, b, c, d = arithmetic(x, y)
    np.testing.assert_allclose(a, (1 - x) / (y * y + 1), rtol=1e-6)
    np.testing.assert_allclose(b, -(x ** 2), rtol=1e-6)
    np.testing.assert_allclose(c, x @ y.T, rtol=1e-5)
    np.testing.assert_allclose(d, 3 * x, rtol=1e-6)


def test_builders_with_given_result_types():
    @lamina.jit
    def shapes(x):
        flat = nn.reshape(x, (-1,))
        wide = nn.broadcast_to(nn.reshape(x, (1, 6)), (4, 6))
        return flat, wide, nn.cast(x, "bf16"), nn.cast(x, np.float16)

    x = rand(2, 3)
    flat, wide, bf, half = shapes(x)
    np.testing.assert_array_equal(flat, x.reshape(-1))
    np.testing.assert_array_equal(wide, np.broadcast_to(x.reshape(1, 6), (4, 6)))
    assert bf.dtype == ml_dtypes.bfloat16 and half.dtype == np.float16
    np.testing.assert_array_equal(bf, x.astype(ml_dtypes.bfloat16))


def test_builders_take_keywords_optionals_and_lists():
    @lamina.jit
    def layers(x, w, b, y):
        conv = nn.conv2d(x, w, bias=b, padding=(1, 1, 1, 1))
        joined = nn.concat([y, y], axis=0)
        return conv, joined, nn.softmax(y, -1), nn.gelu(y, approximate="tanh")

    x, w, b, y = rand(1, 2, 5, 5), rand(3, 2, 3, 3), rand(3), rand(2, 4)
    conv, joined, soft, gelu = layers(x, w, b, y)
    assert conv.shape == (1, 3, 5, 5)
    module = lamina.parse(str(layers.trace(x, w, b, y)))
    from lamina.reference import evaluate
    np.testing.assert_allclose(conv, evaluate(module, [x, w, b, y])[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(joined, np.concatenate([y, y]))
    e = np.exp(y - y.max(-1, keepdims=True))
    np.testing.assert_allclose(soft, e / e.sum(-1, keepdims=True), rtol=1e-5)
    z = y.astype(np.float64)
    tanh_gelu = 0.5 * z * (1 + np.tanh(math.sqrt(2 / math.pi) * (z + 0.044715 * z ** 3)))
    np.testing.assert_allclose(gelu, tanh_gelu, rtol=1e-5, atol=1e-6)


def test_half_precision_arguments():
    @lamina.jit
    def relu_add(x, y):
        return nn.relu(x + y)

    x = rand(16).astype(ml_dtypes.bfloat16)
    y = rand(16, seed=3).astype(ml_dtypes.bfloat16)
    expected = np.maximum((x.astype(np.float32) + y.astype(np.float32)), 0)
    np.testing.assert_array_equal(relu_add(x, y), expected.astype(ml_dtypes.bfloat16))
    h = rand(16).astype(np.float16)
    np.testing.assert_array_equal(relu_add(h, h), np.maximum(h + h, 0))


def test_trace_gives_the_nn_program():
    @lamina.jit
    def mlp(x, w):
        return nn.relu(nn.matmul(x, w))

    module = mlp.trace(rand(2, 3), rand(3, 4))
    text = str(module)
    assert "func.func @mlp(%arg0: tensor<2x3xf32>, %arg1: tensor<3x4xf32>) -> tensor<2x4xf32>" in text
    assert '"nn.matmul"' in text and '"nn.relu"' in text
    location = module.body.operations[0].regions[0].blocks[0].operations[0].location
    assert "test_api.py" in str(location)


def test_shape_errors_point_at_the_caller():
    @lamina.jit
    def bad(x, w):
        return nn.matmul(x, w)

    with pytest.raises(lamina.CompileError) as info:
        bad(rand(2, 3), rand(2, 3))
    diagnostic = info.value.diagnostics[0]
    assert diagnostic.filename == __file__
    assert "'nn.matmul' op matmul contraction dims differ: 3 vs 2" in diagnostic.message


def test_builder_argument_errors():
    @lamina.jit
    def unknown(x):
        return nn.softmax(x, axes=2)

    with pytest.raises(TypeError, match="no operand or attribute 'axes'"):
        unknown(rand(2))

    @lamina.jit
    def unsupported(x):
        return x

    with pytest.raises(TypeError, match="argument #0: arrays of complex64 are not supported"):
        unsupported(np.zeros(2, np.complex64))


def test_builders_outside_jit():
    context = make_context()
    with context, ir.Location.unknown():
        module = ir.Module.create()
        with ir.InsertionPoint(module.body):
            from mlir.dialects import func
            f32 = ir.F32Type.get()
            t = ir.RankedTensorType.get([4], f32)

            @func.FuncOp.from_py_func(t)
            def double_exp(x):
                return nn.exp(x) + nn.exp(x)

    compiled = lamina.compile(module)
    x = rand(4)
    np.testing.assert_allclose(compiled(x), 2 * np.exp(x), rtol=1e-6)
