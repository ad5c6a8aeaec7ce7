"""ONNX op types Lamina composes of nn ops (hyperbolic and inverse
trigonometric functions, PRelu, Shrink, SwiGLU, the instance, group,
mean-variance and local response normalisations, Lp pooling, Det) and
double tensors, each model built with onnx.helper, imported with its
weights as constants, compiled for the CPU and compared with onnxruntime:
float32 at rtol = atol = 1e-5 (the series and reflections of the
inverse functions included), float64 at 1e-12; and arithmetic on int8,
int16 and the unsigned integers, compared exactly with onnx's reference
evaluator (onnxruntime has no kernels of several of them)."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
onnxruntime = pytest.importorskip("onnxruntime")

import onnx.reference  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import lamina  # noqa: E402


def run_both(nodes, inputs, outputs, initializers=(), opset=23, types=None,
             reference=False, shapes=None):
    """The outputs of onnxruntime and of Lamina for `inputs` (name -> array);
    `types` are the outputs' element types (all float where None);
    `shapes`: output shapes onnx's shape inference leaves out;
    `reference`: onnx's reference evaluator instead of onnxruntime (for op
    types newer than onnxruntime's)."""
    def info(name, array):
        elem = helper.np_dtype_to_tensor_dtype(array.dtype)
        return helper.make_tensor_value_info(name, elem, array.shape)
    graph = helper.make_graph(
        nodes, "composed", [info(n, a) for n, a in inputs.items()],
        [helper.make_tensor_value_info(n, t, (shapes or {}).get(n))
         for n, t in zip(outputs, types or [TensorProto.FLOAT] * len(outputs))],
        [numpy_helper.from_array(np.asarray(a), n) for n, a in initializers])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 10
    model = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    if reference:
        expected = onnx.reference.ReferenceEvaluator(model).run(outputs, inputs)
        function = lamina.compile(lamina.from_onnx(model, params="constants"))
        actual = function(*inputs.values())
        return list(actual) if isinstance(actual, tuple) else [actual], expected
    session = onnxruntime.InferenceSession(model.SerializeToString(),
                                           providers=["CPUExecutionProvider"])
    expected = session.run(outputs, inputs)
    function = lamina.compile(lamina.from_onnx(model, params="constants"))
    actual = function(*inputs.values())
    actual = list(actual) if isinstance(actual, tuple) else [actual]
    return actual, expected


def assert_match(actual, expected, names, tolerance):
    assert len(actual) == len(expected)
    for name, got, want in zip(names, actual, expected):
        assert got.dtype == want.dtype and got.shape == want.shape, name
        np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance, err_msg=name)


def test_trigonometric_and_hyperbolic_functions():
    rng = np.random.default_rng(0)
    # Values near 0 (the series), past 1 (atan's reflection), large ones.
    wide = np.concatenate([rng.standard_normal(40), [0.0, 1e-6, -3e-3, 0.1249, 0.1251, 1.0,
                                                       -1.0, 7.5, -40.0, 1e6]]).astype(np.float32)
    unit = np.concatenate([rng.uniform(-0.999, 0.999, 40), [0.0, 1e-5, -0.12, 0.13, 0.9999,
                                                             -0.9999, 1.0, -1.0]]).astype(np.float32)
    beyond_one = rng.uniform(1.0, 20.0, 16).astype(np.float32)
    small = rng.uniform(-1.4, 1.4, 16).astype(np.float32)  # tan away from its poles
    nodes = [helper.make_node(op, [x], [op.lower()]) for op, x in [
        ("Sinh", "wide_small"), ("Cosh", "wide_small"), ("Asinh", "wide"), ("Atan", "wide"),
        ("Tan", "small"), ("Atanh", "open_unit"), ("Asin", "unit"), ("Acos", "unit"),
        ("Acosh", "beyond_one")]]
    inputs = {"wide": wide, "wide_small": np.clip(wide, -40, 40), "unit": unit,
              "open_unit": np.clip(unit, -0.999, 0.999), "beyond_one": beyond_one,
              "small": small}
    names = [n.output[0] for n in nodes]
    actual, expected = run_both(nodes, inputs, names)
    assert_match(actual, expected, names, 1e-5)


def test_activations_and_normalisations():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 6, 5, 4)).astype(np.float32)
    matrices = rng.standard_normal((4, 3, 3)).astype(np.float32)
    nodes = [
        helper.make_node("PRelu", ["x", "slope"], ["prelu"]),
        helper.make_node("Shrink", ["x"], ["shrink"], lambd=0.4, bias=0.3),
        helper.make_node("MeanVarianceNormalization", ["x"], ["mvn"], axes=[0, 2, 3]),
        helper.make_node("InstanceNormalization", ["x", "scale", "bias"], ["instance"],
                         epsilon=1e-3),
        helper.make_node("GroupNormalization", ["x", "scale", "bias"], ["group"],
                         num_groups=3, epsilon=1e-4),
        helper.make_node("LRN", ["x"], ["lrn"], size=5, alpha=1e-2, beta=0.75, bias=1.5),
        helper.make_node("LpPool", ["x"], ["lp3"], kernel_shape=[2, 3], p=3,
                         pads=[1, 0, 0, 1]),
        helper.make_node("LpPool", ["x"], ["lp2"], kernel_shape=[3, 2], strides=[2, 1],
                         auto_pad="SAME_UPPER"),
        helper.make_node("Det", ["matrices"], ["det"]),
    ]
    initializers = [("slope", rng.standard_normal((6, 1, 1)).astype(np.float32)),
                    ("scale", rng.standard_normal(6).astype(np.float32)),
                    ("bias", rng.standard_normal(6).astype(np.float32))]
    names = [n.output[0] for n in nodes]
    actual, expected = run_both(nodes, {"x": x, "matrices": matrices}, names, initializers,
                                shapes={"group": x.shape})
    assert_match(actual, expected, names, 1e-5)


def test_swiglu():
    rng = np.random.default_rng(3)
    a, b = (rng.standard_normal((2, 3, 8)).astype(np.float32) for _ in range(2))
    nodes = [helper.make_node("SwiGLU", ["a", "b"], ["swiglu"], alpha=1.3)]
    actual, expected = run_both(nodes, {"a": a, "b": b}, ["swiglu"], opset=28, reference=True)
    assert_match(actual, expected, ["swiglu"], 1e-5)


def test_double_tensors():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((3, 5))
    nodes = [helper.make_node("Exp", ["x"], ["exp"]),
             helper.make_node("Sigmoid", ["x"], ["sigmoid"]),
             helper.make_node("Max", ["x", "exp"], ["max"]),
             helper.make_node("Cast", ["x"], ["half"], to=TensorProto.FLOAT16),
             helper.make_node("Cast", ["x"], ["brain"], to=TensorProto.BFLOAT16),
             helper.make_node("Cast", ["half"], ["back"], to=TensorProto.DOUBLE)]
    names = ["exp", "sigmoid", "max", "half", "back"]
    double, half = TensorProto.DOUBLE, TensorProto.FLOAT16
    actual, expected = run_both(nodes[:4] + nodes[5:], {"x": x}, names,
                                types=[double, double, double, half, double])
    assert_match(actual, expected, names, 1e-12)


def test_double_to_half_rounds_once():
    """Halfway between two float16 values after a rounding to float32 but
    not before: rounding twice would give the even neighbour."""
    half_ulp = 2.0 ** -11  # of 1.0 in float16
    x = np.array([1 + half_ulp + 2.0 ** -40, 1 + half_ulp - 2.0 ** -40, 1 + half_ulp,
                  -(1 + 3 * half_ulp), 7e4, np.inf, 1e-30], np.float64)
    nodes = [helper.make_node("Cast", ["x"], ["half"], to=TensorProto.FLOAT16)]
    actual, _ = run_both(nodes, {"x": x}, ["half"], types=[TensorProto.FLOAT16])
    np.testing.assert_array_equal(actual[0], x.astype(np.float16))


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint16, np.uint32, np.uint64])
def test_narrow_and_unsigned_integers(dtype):
    """Arithmetic, orders, Where and Clip on integers nn computes on widened
    (uint64 as the int64 of its bits), wrapping as ONNX's arithmetic does;
    Div and Mod (both signs) of at most 32 bits."""
    info = np.iinfo(dtype)
    rng = np.random.default_rng(4)
    x = rng.integers(info.min, info.max, (3, 7), dtype=dtype, endpoint=True)
    y = rng.integers(info.min, info.max, (7,), dtype=dtype, endpoint=True)
    x[0, :3] = [info.min, info.max, 0]
    y[:3] = [info.max, info.max, 0]
    divisor = np.where(y == 0, 1, y).astype(dtype)
    arithmetic = ["Add", "Sub", "Mul", "Max", "Min"]
    orders = ["Less", "LessOrEqual", "Greater", "GreaterOrEqual", "Equal"]
    nodes = [helper.make_node(op, ["x", "y"], [op.lower()]) for op in arithmetic + orders]
    nodes += [helper.make_node("Where", ["less", "x", "y"], ["where"])]
    names = [n.output[0] for n in nodes]
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    types = [elem] * len(arithmetic) + [TensorProto.BOOL] * len(orders) + [elem]
    if np.dtype(dtype).itemsize < 8:
        nodes += [helper.make_node("Div", ["x", "divisor"], ["div"]),
                  helper.make_node("Mod", ["x", "divisor"], ["mod"]),
                  helper.make_node("Mod", ["x", "divisor"], ["fmod"], fmod=1),
                  helper.make_node("Clip", ["x", "low", "high"], ["clip"])]
        names += ["div", "mod", "fmod", "clip"]
        types += [elem] * 4
    bounds = [("low", np.array(info.min // 2 if info.min else 3, dtype)),
              ("high", np.array(info.max // 3, dtype))]
    # onnx's reference evaluator: onnxruntime has no Max, Where or Mod of
    # some of these types.
    actual, expected = run_both(nodes, {"x": x, "y": y, "divisor": divisor}, names,
                                bounds, types=types, reference=True)
    for name, got, want in zip(names, actual, expected):
        assert got.dtype == want.dtype and got.shape == want.shape, name
        np.testing.assert_array_equal(got, want, err_msg=name)


def test_float_power_of_integers():
    x = np.array([[-2.0, -1.5, 0.0, 3.0], [2.5, -0.5, 1.0, -3.0]], np.float32)
    n = np.array([3, 2, 0, -2], np.int64)
    nodes = [helper.make_node("Pow", ["x", "n"], ["pow"])]
    actual, expected = run_both(nodes, {"x": x, "n": n}, ["pow"])
    assert_match(actual, expected, ["pow"], 1e-6)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.int32, np.uint32, np.int64,
                                   np.uint64])
def test_bitwise_ops_and_shifts(dtype):
    """BitwiseAnd/Or/Xor/Not and BitShift both ways, amounts from 0 to past
    the width (and negative for the signed types), against onnx's reference
    evaluator (onnxruntime has BitShift of unsigned types only)."""
    info = np.iinfo(dtype)
    width = info.bits
    rng = np.random.default_rng(5)
    x = rng.integers(info.min, info.max, (4, 9), dtype=dtype, endpoint=True)
    x[0, :3] = [info.min, info.max, 0]
    y = rng.integers(info.min, info.max, (9,), dtype=dtype, endpoint=True)
    low = -3 if info.min < 0 else 0
    amount = np.array([0, 1, width - 1, width, width + 5, low, 3, 7, 2], dtype)
    nodes = [helper.make_node("BitwiseAnd", ["x", "y"], ["and"]),
             helper.make_node("BitwiseOr", ["x", "y"], ["or"]),
             helper.make_node("BitwiseXor", ["x", "y"], ["xor"]),
             helper.make_node("BitwiseNot", ["x"], ["not"]),
             helper.make_node("BitShift", ["x", "amount"], ["left"], direction="LEFT"),
             helper.make_node("BitShift", ["x", "amount"], ["right"], direction="RIGHT")]
    names = [n.output[0] for n in nodes]
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    actual, expected = run_both(nodes, {"x": x, "y": y, "amount": amount}, names, opset=28,
                                types=[elem] * len(names), reference=True)
    for name, got, want in zip(names, actual, expected):
        assert got.dtype == want.dtype and got.shape == want.shape, name
        np.testing.assert_array_equal(got, want, err_msg=name)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64])
def test_float_mod(dtype):
    x = np.array([5.5, -5.5, 5.5, -5.5, 1e4, 3.0, 0.1, 7.0, -0.0, 2.0], dtype)
    y = np.array([2.0, 2.0, -2.0, -2.0, 3.3, 0.7, 0.03, -7.0, 1.0, 0.5], dtype)
    nodes = [helper.make_node("Mod", ["x", "y"], ["fmod"], fmod=1)]
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    actual, expected = run_both(nodes, {"x": x, "y": y}, ["fmod"], types=[elem])
    np.testing.assert_array_equal(actual[0], expected[0])


@pytest.mark.parametrize("kind,attributes,reference", [
    ("LSTM", {"direction": "bidirectional", "clip": 2.5}, False),
    ("LSTM", {"layout": 1}, True),
    ("GRU", {"linear_before_reset": 1, "direction": "reverse"}, False),
    ("RNN", {"activations": ["Relu"], "clip": 3.0}, False),
    ("RNN", {"direction": "bidirectional"}, False),
])
def test_recurrent_layers(kind, attributes, reference):
    """RNN, GRU and LSTM unrolled over their sequence: biases, initial
    states, peepholes, directions, layouts, clipping, activations (against
    onnx's reference evaluator for the batchwise layout, which onnxruntime
    has not; the reference evaluator ignores activations and clip)."""
    rng = np.random.default_rng(6)
    steps, batch, features, hidden = 5, 3, 4, 6
    directions = 2 if attributes.get("direction") == "bidirectional" else 1
    gates = {"RNN": 1, "GRU": 3, "LSTM": 4}[kind]
    layout = attributes.get("layout", 0)
    data = lambda *shape: rng.standard_normal(shape).astype(np.float32)
    x = data(batch, steps, features) if layout else data(steps, batch, features)
    state_shape = (batch, directions, hidden) if layout else (directions, batch, hidden)
    inputs = {"x": x, "w": data(directions, gates * hidden, features),
              "r": data(directions, gates * hidden, hidden),
              "b": data(directions, 2 * gates * hidden), "h0": data(*state_shape)}
    names = ["x", "w", "r", "b", "", "h0"]
    if kind == "LSTM":
        inputs["c0"], inputs["p"] = data(*state_shape), data(directions, 3 * hidden)
        names += ["c0", "p"]
    outputs = ["y", "y_h"] + (["y_c"] if kind == "LSTM" else [])
    nodes = [helper.make_node(kind, names, outputs, hidden_size=hidden, **attributes)]
    actual, expected = run_both(nodes, inputs, outputs, opset=22, reference=reference)
    assert_match(actual, expected, outputs, 1e-5)


def test_lstm_with_sequence_lengths_at_run_time():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((6, 3, 2)).astype(np.float32)
    w = rng.standard_normal((1, 16, 2)).astype(np.float32)
    r = rng.standard_normal((1, 16, 4)).astype(np.float32)
    lengths = np.array([6, 2, 4], np.int32)
    nodes = [helper.make_node("LSTM", ["x", "w", "r", "", "lengths"], ["y", "y_h", "y_c"],
                              hidden_size=4)]
    actual, expected = run_both(nodes, {"x": x, "w": w, "r": r, "lengths": lengths},
                                ["y", "y_h", "y_c"], opset=22)
    assert_match(actual, expected, ["y", "y_h", "y_c"], 1e-5)


@pytest.mark.parametrize("attributes", [{}, {"interleaved": 1}, {"rotary_embedding_dim": 4},
                                        {"interleaved": 1, "rotary_embedding_dim": 4,
                                         "num_heads": 2}])
def test_rotary_embedding(attributes):
    rng = np.random.default_rng(8)
    rotated = attributes.get("rotary_embedding_dim", 8)
    x = rng.standard_normal((2, 2, 5, 8) if "num_heads" not in attributes else (2, 5, 16))
    angles = rng.uniform(0, 6, (20, rotated // 2))
    inputs = {"x": x.astype(np.float32), "cos": np.cos(angles).astype(np.float32),
              "sin": np.sin(angles).astype(np.float32),
              "positions": rng.integers(0, 20, (2, 5)).astype(np.int64)}
    nodes = [helper.make_node("RotaryEmbedding", ["x", "cos", "sin", "positions"], ["y"],
                              **attributes)]
    actual, expected = run_both(nodes, inputs, ["y"])
    assert_match(actual, expected, ["y"], 1e-5)


@pytest.mark.parametrize("x_shape,w_shape,attributes", [
    ((2, 4, 5, 6), (4, 3, 3, 2), {"strides": [2, 3], "pads": [1, 0, 2, 1], "group": 2,
                                  "output_padding": [1, 2]}),
    ((1, 3, 4, 4), (3, 2, 3, 3), {"dilations": [2, 1], "strides": [2, 2],
                                  "auto_pad": "SAME_LOWER"}),
    ((1, 2, 7), (2, 5, 4), {"strides": [3], "output_shape": [22]}),
])
def test_conv_transpose(x_shape, w_shape, attributes):
    rng = np.random.default_rng(9)
    inputs = {"x": rng.standard_normal(x_shape).astype(np.float32),
              "w": rng.standard_normal(w_shape).astype(np.float32),
              "b": rng.standard_normal(w_shape[1] * attributes.get("group", 1)).astype(
                  np.float32)}
    nodes = [helper.make_node("ConvTranspose", ["x", "w", "b"], ["y"], **attributes)]
    actual, expected = run_both(nodes, inputs, ["y"])
    assert_match(actual, expected, ["y"], 1e-5)


@pytest.mark.parametrize("with_state", [False, True])
def test_causal_conv_with_state(with_state):
    rng = np.random.default_rng(10)
    inputs = {"x": rng.standard_normal((2, 3, 6)).astype(np.float32),
              "w": rng.standard_normal((3, 1, 4)).astype(np.float32),
              "b": rng.standard_normal(3).astype(np.float32)}
    names = ["x", "w", "b"]
    if with_state:
        inputs["past"] = rng.standard_normal((2, 3, 3)).astype(np.float32)
        names.append("past")
    nodes = [helper.make_node("CausalConvWithState", names, ["y", "state"],
                              activation="silu" if with_state else "none")]
    actual, expected = run_both(nodes, inputs, ["y", "state"], opset=27, reference=True)
    assert_match(actual, expected, ["y", "state"], 1e-5)


@pytest.mark.parametrize("rule,decay_width", [("linear", None), ("gated", 2), ("delta", None),
                                              ("gated_delta", 8)])
def test_linear_attention(rule, decay_width):
    """Two key/value heads shared by four query heads, a past state, per
    head or per feature decay."""
    rng = np.random.default_rng(11)
    b, t, d_k, d_v = 2, 3, 4, 5
    data = lambda *shape: (0.5 * rng.standard_normal(shape)).astype(np.float32)
    inputs = {"q": data(b, t, 4 * d_k), "k": data(b, t, 2 * d_k), "v": data(b, t, 2 * d_v),
              "past": data(b, 2, d_k, d_v)}
    names = ["q", "k", "v", "past", "", ""]
    if decay_width:
        inputs["decay"] = -np.abs(data(b, t, decay_width))
        names[4] = "decay"
    if "delta" in rule:
        inputs["beta"] = np.abs(data(b, t, 2))
        names[5] = "beta"
    while names[-1] == "":
        names.pop()
    nodes = [helper.make_node("LinearAttention", names, ["y", "state"], q_num_heads=4,
                              kv_num_heads=2, update_rule=rule, chunk_size=16)]
    actual, expected = run_both(nodes, inputs, ["y", "state"], opset=27, reference=True,
                                shapes={"y": (b, t, 4 * d_v), "state": (b, 2, d_k, d_v)})
    assert_match(actual, expected, ["y", "state"], 1e-5)


@pytest.mark.parametrize("attributes,cache,mode", [
    ({"is_causal": 1}, "past", None),
    ({"softcap": 2.0, "is_causal": 1}, "past", 3),
    ({"is_causal": 1}, "lengths", 2),
    ({"softcap": 1.5}, None, 1),
])
def test_attention_cache_groups_and_scores(attributes, cache, mode):
    """Attention after a key/value cache (bottom-right causal), with valid
    key lengths given at run time, four query heads on two key/value heads,
    a short mask padded with -inf, softcap and the scores output, against
    onnx's reference evaluator."""
    rng = np.random.default_rng(12)
    data = lambda *shape: rng.standard_normal(shape).astype(np.float32)
    b, s, past, d = 2, 3, 4, 8
    keys = s + past if cache == "past" else s
    inputs = {"q": data(b, 4, s, d), "k": data(b, 2, s, d), "v": data(b, 2, s, d),
              "mask": data(s, keys - 1)}
    names = ["q", "k", "v", "mask"]
    outputs = ["y"]
    if cache == "past":
        inputs["past_k"], inputs["past_v"] = data(b, 2, past, d), data(b, 2, past, d)
        names += ["past_k", "past_v"]
        outputs += ["present_k", "present_v"]
    elif cache == "lengths":
        inputs["lengths"] = np.array([3, 2], np.int64)
        names += ["", "", "lengths"]
    if mode is not None:
        outputs += [""] * (3 - len(outputs)) + ["scores"]
        attributes = dict(attributes, qk_matmul_output_mode=mode)
    nodes = [helper.make_node("Attention", names, outputs, **attributes)]
    kept = [o for o in outputs if o]
    shapes = {"y": (b, 4, s, d), "present_k": (b, 2, keys, d), "present_v": (b, 2, keys, d),
              "scores": (b, 4, s, keys)}
    actual, expected = run_both(nodes, inputs, kept, opset=24, reference=True, shapes=shapes)
    assert_match(actual, expected, kept, 1e-5)


@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [0, 1])
def test_grid_sample(mode, padding_mode, align_corners):
    """Grid points inside and well outside the image (reflected more than
    once), halfway points (nearest rounds half to even); the cubic modes'
    sixteen taps make a graph whose fusion groups feed each other through
    unfused ops, which nn-fuse leaves partly unfused."""
    rng = np.random.default_rng(13)
    x = rng.standard_normal((2, 3, 5, 4)).astype(np.float32)
    grid = rng.uniform(-2.5, 2.5, (2, 3, 6, 2)).astype(np.float32)
    grid[0, 0, :4] = [[-1, -1], [1, 1], [0.125, -0.6], [0.5, 0.25]]
    nodes = [helper.make_node("GridSample", ["x", "grid"], ["y"], mode=mode,
                              padding_mode=padding_mode, align_corners=align_corners)]
    # Cubic taps at the border: onnxruntime clamps the taps where ONNX's
    # reference (which the backend tests follow) clamps the coordinate.
    reference = mode == "cubic" and padding_mode == "border"
    actual, expected = run_both(nodes, {"x": x, "grid": grid}, ["y"], opset=22,
                                reference=reference)
    assert_match(actual, expected, ["y"], 1e-4)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_floor_ceil_round(dtype):
    x = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, -0.2, 0.7, 3.0, -7.0, 1e10, -3e20, 8388609.0,
                  np.inf, -np.inf, np.nan, -0.0], dtype)
    nodes = [helper.make_node(op, ["x"], [op.lower()]) for op in ("Floor", "Ceil", "Round")]
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    actual, expected = run_both(nodes, {"x": x}, ["floor", "ceil", "round"], types=[elem] * 3)
    for got, want in zip(actual, expected):
        np.testing.assert_array_equal(got, want)


def test_dynamic_quantize_linear():
    x = np.random.default_rng(14).uniform(-3, 7, (3, 8)).astype(np.float32)
    nodes = [helper.make_node("DynamicQuantizeLinear", ["x"], ["y", "scale", "zero_point"])]
    actual, expected = run_both(nodes, {"x": x}, ["y", "scale", "zero_point"],
                                types=[TensorProto.UINT8, TensorProto.FLOAT, TensorProto.UINT8])
    for got, want in zip(actual, expected):
        np.testing.assert_allclose(got, want, rtol=1e-6)
