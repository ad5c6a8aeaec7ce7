"""The nn dialect's shape rules and NumPy references, without MLIR.

Shape rules are called as `Op.detached(**attrs).infer_type(*types)` and
checked against NumPy's own shape arithmetic where NumPy has it. References
are checked against independent formulations (naive loops for convolution,
pooling and attention, explicit formulas for the normalisations), at the
tolerances stated next to each comparison.
"""

from __future__ import annotations

import itertools
import math

import ml_dtypes
import numpy as np
import pytest

from lamina.dialects import nn
from lamina.dialects.nn import TensorType as T
from lamina.dialects.opdef import VerifyError

F32 = dict(rtol=1e-5, atol=1e-6)  # f32 reference vs f32/f64 formula


def f32(shape):
    return T(tuple(shape), "f32")


def rng(seed=0):
    return np.random.default_rng(seed)


def random(shape, seed=0, low=-2.0, high=2.0):
    return rng(seed).uniform(low, high, size=shape).astype(np.float32)


# ---------------------------------------------------------------------------
# Broadcasting.


@pytest.mark.parametrize("shapes, expected", [
    (((), ()), ()),
    (((4,), ()), (4,)),
    (((2, 1), (3,)), (2, 3)),
    (((5, 1, 4), (3, 1)), (5, 3, 4)),
    (((1,), (1, 1, 7)), (1, 1, 7)),
    (((2, 3), (2, 3), (1, 3)), (2, 3)),
    (((0, 1), (1, 5)), (0, 5)),
])
def test_broadcast_shapes(shapes, expected):
    assert nn.broadcast_shapes(*shapes) == expected


@pytest.mark.parametrize("shapes, message", [
    (((2, 3), (4,)), "operands are not broadcast-compatible: 2x3 vs 4"),
    (((2,), (3,), ()), "operands are not broadcast-compatible: 2 vs 3 vs scalar"),
    (((2, 1, 3), (4, 2)), "operands are not broadcast-compatible: 2x1x3 vs 4x2"),
])
def test_broadcast_shapes_errors(shapes, message):
    with pytest.raises(VerifyError, match=f"^{message}$"):
        nn.broadcast_shapes(*shapes)


def test_broadcast_shapes_agree_with_numpy():
    generator = rng(1)
    agreed = failed = 0
    for _ in range(400):
        shapes = [tuple(int(d) for d in generator.choice([1, 2, 3], size=generator.integers(0, 4)))
                  for _ in range(generator.integers(2, 4))]
        try:
            expected = np.broadcast_shapes(*shapes)
        except ValueError:
            with pytest.raises(VerifyError):
                nn.broadcast_shapes(*shapes)
            failed += 1
        else:
            assert nn.broadcast_shapes(*shapes) == expected, shapes
            agreed += 1
    assert agreed > 50 and failed > 50  # both branches were exercised


# ---------------------------------------------------------------------------
# Shape rules.


@pytest.mark.parametrize("op", [nn.NegOp, nn.AbsOp, nn.ExpOp, nn.LogOp, nn.SqrtOp, nn.RsqrtOp,
                                nn.TanhOp, nn.SigmoidOp, nn.ReluOp, nn.ErfOp, nn.SiluOp,
                                nn.GeluOp])
@pytest.mark.parametrize("t", [T((), "f32"), T((3,), "f16"), T((2, 3, 4), "bf16")])
def test_unary_keeps_the_type(op, t):
    assert op.detached().infer_type(t) == t


@pytest.mark.parametrize("op", [nn.AddOp, nn.SubOp, nn.MulOp, nn.DivOp, nn.MaximumOp,
                                nn.MinimumOp, nn.PowOp])
def test_binary_broadcasts(op):
    assert op.detached().infer_type(f32((2, 1)), f32((3,))) == f32((2, 3))
    assert op.detached().infer_type(T((4,), "bf16"), T((), "bf16")) == T((4,), "bf16")
    with pytest.raises(VerifyError, match="element types differ: f32 vs f16"):
        op.detached().infer_type(f32((4,)), T((4,), "f16"))


def test_remainder_broadcasts_floats():
    op = nn.RemainderOp.detached()
    assert op.infer_type(f32((2, 1)), f32((3,))) == f32((2, 3))
    assert op.infer_type(T((4,), "f64"), T((), "f64")) == T((4,), "f64")


@pytest.mark.parametrize("op", [nn.BitwiseAndOp, nn.BitwiseOrOp, nn.BitwiseXorOp,
                                nn.ShiftLeftOp, nn.ShiftRightOp])
def test_bit_ops_broadcast_integers_only(op):
    assert op.detached().infer_type(T((2, 1), "i32"), T((3,), "i32")) == T((2, 3), "i32")
    assert op.detached().infer_type(T((4,), "i64"), T((), "i64")) == T((4,), "i64")
    with pytest.raises(VerifyError, match="element types differ: i32 vs i64"):
        op.detached().infer_type(T((4,), "i32"), T((4,), "i64"))
    # The verifier holds them to integers (the rule's dtype check is the op's own).
    assert op.element_types == ("i32", "i64")


def test_compare_gives_i1():
    for predicate in ("eq", "ne", "lt", "le", "gt", "ge"):
        op = nn.CompareOp.detached(predicate=predicate)
        assert op.infer_type(f32((2, 1)), f32((1, 5))) == T((2, 5), "i1")
    with pytest.raises(TypeError, match="requires attribute 'predicate'"):
        nn.CompareOp.detached()


def test_select():
    op = nn.SelectOp.detached()
    assert op.infer_type(T((2, 1), "i1"), f32((3,)), f32(())) == f32((2, 3))
    # The condition's element type is the operand's own rule, not the op's.
    assert [d.constraint.dtypes for d in nn.SelectOp.operand_decls] == [("i1",), (), ()]
    assert nn.SelectOp.element_types == ("f32", "f16", "bf16", "f64", "i32", "i64", "i1")
    with pytest.raises(VerifyError, match="element types differ"):
        op.infer_type(T((3,), "i1"), f32((3,)), T((3,), "f16"))


def test_cast_takes_the_result_type():
    target = T((2, 3), "bf16")
    assert nn.CastOp.detached([target]).infer_type(f32((2, 3))) == target
    with pytest.raises(VerifyError, match="cast changes the shape"):
        nn.CastOp.detached([T((6,), "f16")]).infer_type(f32((2, 3)))
    assert nn.CastOp.detached([T((2, 3), "i64")]).infer_type(f32((2, 3))) == T((2, 3), "i64")
    # Every element type of nn is a cast's result type, bytes and unsigned ones included.
    assert nn.CastOp.detached([T((2, 3), "i8")]).infer_type(f32((2, 3))) == T((2, 3), "i8")
    assert nn.CastOp.detached([T((2, 3), "ui16")]).infer_type(T((2, 3), "i32")) == T((2, 3), "ui16")


@pytest.mark.parametrize("a, b", [
    ((4, 8), (8, 16)), ((3, 4, 8), (8, 5)), ((8, 5), (2, 5, 3)), ((3, 4, 8), (2, 1, 8, 5)),
    ((1, 2, 3), (4, 3, 2)), ((2, 1, 2, 3), (1, 6, 3, 1)),
])
def test_matmul_shapes_agree_with_numpy(a, b):
    expected = np.matmul(np.zeros(a, np.float32), np.zeros(b, np.float32)).shape
    assert nn.MatmulOp.detached().infer_type(f32(a), f32(b)).shape == expected


@pytest.mark.parametrize("a, b, message", [
    ((8,), (8, 4), "matmul operands must have rank >= 2"),
    ((4, 8), (7, 2), "matmul contraction dims differ: 8 vs 7"),
    ((3, 4, 8), (2, 8, 5), r"matmul batch dims are not broadcast-compatible: \[3\] vs \[2\]"),
])
def test_matmul_errors(a, b, message):
    with pytest.raises(VerifyError, match=message):
        nn.MatmulOp.detached().infer_type(f32(a), f32(b))


def conv_out(size, kernel, stride, dilation, pad):
    """The usual output-size formula, as in PyTorch's documentation."""
    return math.floor((size + pad - dilation * (kernel - 1) - 1) / stride + 1)


@pytest.mark.parametrize("attrs", [
    {}, {"strides": (2, 2)}, {"padding": (1, 1, 1, 1)}, {"padding": (0, 1, 2, 3)},
    {"dilations": (2, 1)}, {"strides": (3, 2), "padding": (2, 0, 1, 1), "dilations": (1, 2)},
])
def test_conv2d_shape(attrs):
    op = nn.Conv2dOp.detached(**attrs)
    strides, padding, dilations = op.strides, op.padding, op.dilations
    out = op.infer_type(f32((2, 4, 9, 10)), f32((6, 4, 3, 2)), None)
    assert out == f32((2, 6,
                       conv_out(9, 3, strides[0], dilations[0], padding[0] + padding[2]),
                       conv_out(10, 2, strides[1], dilations[1], padding[1] + padding[3])))
    assert op.infer_type(f32((2, 4, 9, 10)), f32((6, 4, 3, 2)), f32((6,))) == out


def test_conv2d_groups_and_errors():
    op = nn.Conv2dOp.detached(groups=2)
    assert op.infer_type(f32((1, 4, 5, 5)), f32((6, 2, 3, 3)), None) == f32((1, 6, 3, 3))
    with pytest.raises(VerifyError, match="not divisible by groups = 2"):
        op.infer_type(f32((1, 3, 5, 5)), f32((6, 1, 3, 3)), None)
    with pytest.raises(VerifyError, match="input channels differ: input has 4, weight expects 4 x 2"):
        op.infer_type(f32((1, 4, 5, 5)), f32((6, 4, 3, 3)), None)
    with pytest.raises(VerifyError, match=r"bias must have shape \[6\]"):
        op.infer_type(f32((1, 4, 5, 5)), f32((6, 2, 3, 3)), f32((2,)))
    with pytest.raises(VerifyError, match="kernel 7x7 does not fit the padded input 5x5"):
        nn.Conv2dOp.detached().infer_type(f32((1, 1, 5, 5)), f32((1, 1, 7, 7)), None)
    with pytest.raises(VerifyError, match="'strides' values must be >= 1"):
        nn.Conv2dOp.detached(strides=(0, 1)).verify(f32((1, 1, 5, 5)), f32((1, 1, 1, 1)), None)


@pytest.mark.parametrize("op", [nn.MaxPool2dOp, nn.AvgPool2dOp])
def test_pool_shape(op):
    view = op.detached(kernel=(3, 2), strides=(2, 1), padding=(1, 0, 1, 1))
    assert view.infer_type(f32((2, 3, 7, 6))) == f32((2, 3, conv_out(7, 3, 2, 1, 2),
                                                      conv_out(6, 2, 1, 1, 1)))
    with pytest.raises(VerifyError, match="pooling window 3x3 does not fit"):
        op.detached(kernel=(3, 3)).infer_type(f32((1, 1, 2, 2)))


@pytest.mark.parametrize("op", [nn.ReduceSumOp, nn.ReduceMaxOp, nn.ReduceMinOp, nn.ReduceMeanOp])
@pytest.mark.parametrize("axes", [(0,), (-1,), (0, 2), (2, -3), (1, 0, 2)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reduction_shapes_agree_with_numpy(op, axes, keepdims):
    x = np.empty((2, 3, 4), np.float32)
    expected = np.sum(x, axis=axes, keepdims=keepdims).shape
    assert op.detached(axes=axes, keepdims=keepdims).infer_type(f32(x.shape)).shape == expected


def test_reduction_errors():
    with pytest.raises(VerifyError, match="reduction needs at least one axis"):
        nn.ReduceSumOp.detached(axes=()).infer_type(f32((2,)))
    with pytest.raises(VerifyError, match="reduction axis -3 is out of range for rank 2"):
        nn.ReduceSumOp.detached(axes=(-3,)).infer_type(f32((2, 2)))
    with pytest.raises(VerifyError, match=r"reduction axes repeat: \[0, -2\]"):
        nn.ReduceSumOp.detached(axes=(0, -2)).infer_type(f32((2, 2)))


@pytest.mark.parametrize("op", [nn.SoftmaxOp, nn.LogSoftmaxOp])
def test_softmax_axis(op):
    assert op.detached(axis=-2).infer_type(f32((2, 3))) == f32((2, 3))
    with pytest.raises(VerifyError, match="axis 2 is out of range for rank 2"):
        op.detached(axis=2).infer_type(f32((2, 3)))


def test_normalization_parameter_shapes():
    x = f32((2, 3, 8))
    assert nn.LayerNormOp.detached().infer_type(x, f32((8,)), f32((8,))) == x
    assert nn.LayerNormOp.detached(axis=1).infer_type(x, f32((3, 8)), f32((3, 8))) == x
    assert nn.RmsNormOp.detached(axis=-2).infer_type(x, f32((3, 8))) == x
    with pytest.raises(VerifyError, match=r"gamma must have shape \[3x8\]"):
        nn.RmsNormOp.detached(axis=1).infer_type(x, f32((8,)))
    with pytest.raises(VerifyError, match=r"beta must have shape \[8\]"):
        nn.LayerNormOp.detached().infer_type(x, f32((8,)), f32((1, 8)))
    with pytest.raises(VerifyError, match="'epsilon' must be >= 0"):
        nn.LayerNormOp.detached(epsilon=-1.0).verify(x, f32((8,)), f32((8,)))


def test_attention_shapes():
    op = nn.AttentionOp.detached()
    q, k, v = f32((2, 4, 16, 8)), f32((2, 4, 32, 8)), f32((2, 4, 32, 5))
    assert op.infer_type(q, k, v, None) == f32((2, 4, 16, 5))
    for mask in [(16, 32), (1, 32), (4, 1, 32), (2, 4, 16, 32), ()]:
        assert op.infer_type(q, k, v, f32(mask)) == f32((2, 4, 16, 5))
    for mask in [(16, 31), (3, 16, 32), (1, 2, 4, 16, 32)]:
        with pytest.raises(VerifyError, match="does not broadcast to the scores"):
            op.infer_type(q, k, v, f32(mask))
    with pytest.raises(VerifyError, match="head dims of q and k differ: 8 vs 7"):
        op.infer_type(q, f32((2, 4, 32, 7)), v, None)
    with pytest.raises(VerifyError, match="key and value lengths differ: 32 vs 31"):
        op.infer_type(q, k, f32((2, 4, 31, 5)), None)
    with pytest.raises(VerifyError, match="batch dims differ"):
        op.infer_type(q, f32((2, 3, 32, 8)), f32((2, 3, 32, 5)), None)


@pytest.mark.parametrize("perm", list(itertools.permutations(range(3))))
def test_transpose_shape_agrees_with_numpy(perm):
    x = np.empty((2, 3, 4), np.float32)
    assert nn.TransposeOp.detached(perm=perm).infer_type(f32(x.shape)).shape == \
        np.transpose(x, perm).shape


def test_transpose_errors():
    for perm in [(0, 0), (1,), (0, 1, 2), (0, 2)]:
        with pytest.raises(VerifyError, match="is not a permutation"):
            nn.TransposeOp.detached(perm=perm).infer_type(f32((2, 3)))


def test_reshape_and_broadcast_to():
    assert nn.ReshapeOp.detached([f32((3, 4))]).infer_type(f32((2, 6))) == f32((3, 4))
    with pytest.raises(VerifyError, match="reshape changes the element count"):
        nn.ReshapeOp.detached([f32((5,))]).infer_type(f32((2, 3)))
    assert nn.BroadcastToOp.detached([f32((2, 3, 4))]).infer_type(f32((3, 1))) == f32((2, 3, 4))
    for source, target in [((3,), (2, 4)), ((2, 4), (1, 4)), ((2, 4), (4,))]:
        with pytest.raises(VerifyError, match="cannot broadcast"):
            nn.BroadcastToOp.detached([f32(target)]).infer_type(f32(source))


def test_concat_shapes_and_errors():
    op = nn.ConcatOp.detached(axis=-1)
    assert op.infer_type([f32((2, 1)), f32((2, 3)), f32((2, 2))]) == f32((2, 6))
    assert nn.ConcatOp.detached(axis=0).infer_type([f32((4,))]) == f32((4,))
    with pytest.raises(VerifyError, match="concat operands have different ranks: 2, 1"):
        op.infer_type([f32((2, 1)), f32((2,))])
    with pytest.raises(VerifyError, match="concat operand #2 differs in dim 0: 3 vs 2"):
        op.infer_type([f32((2, 1)), f32((2, 1)), f32((3, 1))])
    with pytest.raises(VerifyError, match="element types differ: f32 vs f16"):
        op.infer_type([f32((2, 1)), T((2, 1), "f16")])


def test_slice_shapes_agree_with_numpy():
    generator = rng(2)
    x = np.empty((5, 7), np.float32)
    for _ in range(200):
        starts = [int(generator.integers(0, d + 1)) for d in x.shape]
        limits = [int(generator.integers(s, d + 1)) for s, d in zip(starts, x.shape)]
        strides = [int(generator.integers(1, 4)) for _ in x.shape]
        op = nn.SliceOp.detached(starts=starts, limits=limits, strides=strides)
        expected = x[tuple(slice(s, l, t) for s, l, t in zip(starts, limits, strides))].shape
        assert op.infer_type(f32(x.shape)).shape == expected


def test_slice_and_pad_errors():
    with pytest.raises(VerifyError, match="slice bounds in dim 1"):
        nn.SliceOp.detached(starts=(0, 3), limits=(1, 2)).infer_type(f32((2, 4)))
    with pytest.raises(VerifyError, match="'strides' must have 2 elements"):
        nn.SliceOp.detached(starts=(0, 0), limits=(1, 1), strides=(1,)).infer_type(f32((2, 4)))
    assert nn.PadOp.detached(low=(1, 0), high=(2, 3)).infer_type(f32((2, 4))) == f32((5, 7))
    with pytest.raises(VerifyError, match="'high' values must be >= 0"):
        nn.PadOp.detached(low=(0, 0), high=(0, -1)).infer_type(f32((2, 4)))


def test_gather_shapes_agree_with_numpy_take():
    table = np.zeros((5, 6, 7), np.float32)
    for axis, indices in ((0, (2, 3)), (1, (4,)), (-1, ()), (2, (1, 2, 1))):
        op = nn.GatherOp.detached(axis=axis)
        want = np.take(table, np.zeros(indices, np.int64), axis=axis).shape
        assert op.infer_type(f32(table.shape), T(indices, "i64")) == f32(want)
    with pytest.raises(VerifyError, match="axis 3 is out of range for rank 3"):
        nn.GatherOp.detached(axis=3).infer_type(f32(table.shape), T((2,), "i32"))
    with pytest.raises(VerifyError, match="gather from an empty axis"):
        nn.GatherOp.detached().infer_type(f32((0, 4)), T((2,), "i32"))


def test_iota_cumsum_and_argmax_shapes():
    assert nn.IotaOp.detached([T((3, 4), "i64")], axis=-1).infer_type() == T((3, 4), "i64")
    with pytest.raises(VerifyError, match="cannot make indices of element type i1"):
        nn.IotaOp.detached([T((3,), "i1")]).infer_type()
    assert nn.CumsumOp.detached(axis=-2).infer_type(T((3, 4), "i32")) == T((3, 4), "i32")
    with pytest.raises(VerifyError, match="axis 2 is out of range"):
        nn.CumsumOp.detached(axis=2).infer_type(T((3, 4), "i32"))
    x = f32((3, 4, 5))
    assert nn.ArgmaxOp.detached(axis=1).infer_type(x) == T((3, 5), "i64")
    assert nn.ArgmaxOp.detached(axis=-1, keepdims=True).infer_type(x) == T((3, 4, 1), "i64")
    with pytest.raises(VerifyError, match="argmax along an empty axis"):
        nn.ArgmaxOp.detached(axis=0).infer_type(f32((0, 2)))


def test_quantize_and_dequantize_shapes():
    x = f32((2, 3, 4))
    assert nn.QuantizeOp.detached().infer_type(x, f32(()), T((), "ui8")) == T((2, 3, 4), "ui8")
    assert nn.QuantizeOp.detached(axis=-1).infer_type(x, f32((4,)), T((4,), "i8")) == T(
        (2, 3, 4), "i8")
    assert nn.DequantizeOp.detached(axis=0).infer_type(
        T((2, 3, 4), "i8"), f32((2,)), T((2,), "i8")) == x
    with pytest.raises(VerifyError, match="per-channel scale has 4 elements but axis 1"):
        nn.QuantizeOp.detached().infer_type(x, f32((4,)), T((4,), "i8"))
    with pytest.raises(VerifyError, match="scale and zero point shapes differ"):
        nn.QuantizeOp.detached().infer_type(x, f32((3,)), T((), "i8"))
    with pytest.raises(VerifyError, match="zero point type i8 differs from the quantised type ui8"):
        nn.DequantizeOp.detached().infer_type(T((2, 3, 4), "ui8"), f32(()), T((), "i8"))


def test_integer_ops_keep_integer_types():
    i64 = T((2, 3), "i64")
    assert nn.AddOp.detached().infer_type(i64, T((3,), "i64")) == i64
    assert nn.CompareOp.detached(predicate="lt").infer_type(i64, i64) == T((2, 3), "i1")
    assert nn.ReduceSumOp.detached(axes=(1,)).infer_type(i64) == T((2,), "i64")
    with pytest.raises(VerifyError, match="element types differ: i64 vs i32"):
        nn.MulOp.detached().infer_type(i64, T((2, 3), "i32"))


def test_detached_views_check_attribute_names():
    with pytest.raises(TypeError, match="has no attribute 'axiss'"):
        nn.SoftmaxOp.detached(axiss=1)
    assert nn.SoftmaxOp.detached().axis == -1
    assert nn.AttentionOp.detached().scale is None


def test_fused_takes_its_result_types_as_given():
    """nn.fused has no rule of its own: its results are its body's (checked
    against the function where the op sits in a module)."""
    view = nn.FusedOp.detached(kind="elementwise", body="fusion_0")
    assert view.infer_type([f32((2, 4)), f32((4,))]) is None
    view.verify([f32((2, 4))])
    with pytest.raises(TypeError, match="requires attribute 'body'"):
        nn.FusedOp.detached(kind="elementwise")


def test_every_op_is_tested_here():
    """A new op must come with a shape test above (and a reference test below)."""
    tested = {"neg", "abs", "exp", "log", "sqrt", "rsqrt", "tanh", "sigmoid", "relu", "erf",
              "silu", "gelu", "add", "sub", "mul", "div", "maximum", "minimum", "pow", "compare",
              "select", "cast", "matmul", "conv2d", "max_pool2d", "avg_pool2d", "reduce_sum",
              "reduce_max", "reduce_min", "reduce_mean", "softmax", "log_softmax", "layer_norm",
              "rms_norm", "attention", "transpose", "reshape", "broadcast_to", "concat", "slice",
              "pad", "fused", "sin", "cos", "gather", "iota", "cumsum", "argmax", "quantize",
              "dequantize", "remainder", "bitwise_and", "bitwise_or", "bitwise_xor",
              "shift_left", "shift_right"}
    assert set(nn.NN.ops) == tested


# ---------------------------------------------------------------------------
# References against independent formulations.


def test_elementwise_references():
    x = random((3, 5), low=0.1, high=3.0)
    y = random((5,), seed=1, low=0.5, high=2.0)
    cases = {
        nn.NegOp: -x, nn.AbsOp: np.abs(-x), nn.ExpOp: np.exp(x), nn.LogOp: np.log(x),
        nn.SqrtOp: np.sqrt(x), nn.RsqrtOp: x ** -0.5, nn.TanhOp: np.tanh(x),
        nn.ReluOp: np.where(x - 1 > 0, x - 1, 0),
    }
    for op, expected in cases.items():
        argument = -x if op is nn.AbsOp else (x - 1 if op is nn.ReluOp else x)
        got = op.detached().reference(argument)
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, expected, **F32, err_msg=op.name)
    z = random((3, 5), seed=3, low=-6, high=6)
    # sigmoid and silu through tanh: sigmoid(z) = (1 + tanh(z/2)) / 2.
    np.testing.assert_allclose(nn.SigmoidOp.detached().reference(z), 0.5 * (1 + np.tanh(z / 2)),
                               **F32)
    np.testing.assert_allclose(nn.SiluOp.detached().reference(z), z * 0.5 * (1 + np.tanh(z / 2)),
                               **F32)
    binary = {nn.AddOp: x + y, nn.SubOp: x - y, nn.MulOp: x * y, nn.DivOp: x / y,
              nn.MaximumOp: np.maximum(x, y), nn.MinimumOp: np.minimum(x, y),
              nn.PowOp: np.exp(y * np.log(x))}
    for op, expected in binary.items():
        np.testing.assert_allclose(op.detached().reference(x, y), expected, rtol=1e-5,
                                   err_msg=op.name)


def test_remainder_and_bit_op_references():
    x = np.array([7.5, -7.5, 7.5, -7.5, 0.25], np.float32)
    y = np.array([2.0, 2.0, -2.0, -2.0, 3.0], np.float32)
    # C's fmod: the sign of the dividend, |result| < |divisor|.
    np.testing.assert_array_equal(nn.RemainderOp.detached().reference(x, y),
                                  [1.5, -1.5, 1.5, -1.5, 0.25])
    a = np.array([12, -12, 5, 0x7FFFFFFF], np.int32)
    b = np.array([10, 3, -1, 1], np.int32)
    np.testing.assert_array_equal(nn.BitwiseAndOp.detached().reference(a, b), a & b)
    np.testing.assert_array_equal(nn.BitwiseOrOp.detached().reference(a, b), a | b)
    np.testing.assert_array_equal(nn.BitwiseXorOp.detached().reference(a, b), a ^ b)
    n = np.array([1, 31, 32, -1], np.int32)
    # Amounts outside [0, width): 0 to the left, the sign's copies to the right.
    np.testing.assert_array_equal(nn.ShiftLeftOp.detached().reference(a, n),
                                  [24, 0, 0, 0])
    np.testing.assert_array_equal(nn.ShiftRightOp.detached().reference(a, n), [6, -1, 0, 0])


def test_erf_known_values():
    # Abramowitz & Stegun table 7.1.
    x = np.array([0.0, 0.1, 0.5, 1.0, 1.5, 2.0, -1.0], np.float32)
    expected = [0.0, 0.1124629160, 0.5204998778, 0.8427007929, 0.9661051465, 0.9953222650,
                -0.8427007929]
    np.testing.assert_allclose(nn.ErfOp.detached().reference(x), expected, rtol=1e-6, atol=1e-7)


def test_gelu_exact_is_x_times_normal_cdf():
    x = np.linspace(-5, 5, 101).astype(np.float32)
    # The normal CDF by the trapezoidal rule on a fine grid, independent of erf.
    grid = np.linspace(-12, 5, 340001)
    pdf = np.exp(-grid ** 2 / 2) / math.sqrt(2 * math.pi)
    cdf = np.concatenate([[0.0], np.cumsum((pdf[1:] + pdf[:-1]) / 2 * np.diff(grid))])
    expected = x * np.interp(x, grid, cdf)
    np.testing.assert_allclose(nn.GeluOp.detached().reference(x), expected, rtol=1e-5, atol=1e-6)


def test_gelu_tanh_is_close_to_exact():
    x = np.linspace(-8, 8, 4001).astype(np.float32)
    exact = nn.GeluOp.detached(approximate="none").reference(x)
    approx = nn.GeluOp.detached(approximate="tanh").reference(x)
    difference = np.abs(exact - approx)
    # The tanh approximation's largest error is about 4.7e-4 (near |x| = 2).
    assert difference.max() < 1e-3
    assert difference.max() > 1e-5  # it is an approximation, not the same function


def test_compare_and_select_references():
    a = np.array([[1.0, 2.0, 3.0], [3.0, 2.0, 1.0]], np.float32)
    b = np.array([2.0, 2.0, 2.0], np.float32)
    expected = {"eq": [[0, 1, 0], [0, 1, 0]], "ne": [[1, 0, 1], [1, 0, 1]],
                "lt": [[1, 0, 0], [0, 0, 1]], "le": [[1, 1, 0], [0, 1, 1]],
                "gt": [[0, 0, 1], [1, 0, 0]], "ge": [[0, 1, 1], [1, 1, 0]]}
    for predicate, table in expected.items():
        got = nn.CompareOp.detached(predicate=predicate).reference(a, b)
        assert got.dtype == np.bool_
        assert got.tolist() == np.array(table, bool).tolist(), predicate
    mask = np.array([[True], [False]])
    got = nn.SelectOp.detached().reference(mask, a, b)
    assert got.tolist() == [[1.0, 2.0, 3.0], [2.0, 2.0, 2.0]]


def test_cast_references():
    x = np.array([0.0, 1.0, -2.5, 1.0 / 3.0, 60000.0], np.float32)
    half = nn.CastOp.detached([T((5,), "f16")]).reference(x)
    assert half.dtype == np.float16 and half.tolist() == x.astype(np.float16).tolist()
    brain = nn.CastOp.detached([T((5,), "bf16")]).reference(x)
    assert brain.dtype == ml_dtypes.bfloat16
    np.testing.assert_allclose(brain.astype(np.float32), x, rtol=2 ** -8)
    flags = nn.CastOp.detached([T((5,), "i1")]).reference(x)
    assert flags.tolist() == [False, True, True, True, True]
    back = nn.CastOp.detached([T((5,), "f32")]).reference(flags)
    assert back.dtype == np.float32 and back.tolist() == [0.0, 1.0, 1.0, 1.0, 1.0]


def naive_matmul(a, b):
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = np.broadcast_to(a, batch + a.shape[-2:])
    b = np.broadcast_to(b, batch + b.shape[-2:])
    out = np.zeros(batch + (a.shape[-2], b.shape[-1]), np.float64)
    for index in np.ndindex(*batch):
        for i in range(a.shape[-2]):
            for j in range(b.shape[-1]):
                out[index + (i, j)] = sum(float(a[index + (i, k)]) * float(b[index + (k, j)])
                                          for k in range(a.shape[-1]))
    return out


@pytest.mark.parametrize("a, b", [((3, 4), (4, 2)), ((2, 3, 4), (4, 5)),
                                  ((2, 1, 3, 4), (3, 4, 2))])
def test_matmul_reference(a, b):
    x, y = random(a, seed=4), random(b, seed=5)
    np.testing.assert_allclose(nn.MatmulOp.detached().reference(x, y), naive_matmul(x, y),
                               rtol=1e-5, atol=1e-5)


def naive_conv2d(x, w, bias, strides, padding, dilations, groups):
    n, c, h, wd = x.shape
    o, ci, kh, kw = w.shape
    top, left, bottom, right = padding
    oh = conv_out(h, kh, strides[0], dilations[0], top + bottom)
    ow = conv_out(wd, kw, strides[1], dilations[1], left + right)
    out = np.zeros((n, o, oh, ow), np.float64)
    per_group = o // groups
    for b, oc, i, j in itertools.product(range(n), range(o), range(oh), range(ow)):
        g = oc // per_group
        total = float(bias[oc]) if bias is not None else 0.0
        for cc, p, q in itertools.product(range(ci), range(kh), range(kw)):
            row = i * strides[0] + p * dilations[0] - top
            col = j * strides[1] + q * dilations[1] - left
            if 0 <= row < h and 0 <= col < wd:
                total += float(x[b, g * ci + cc, row, col]) * float(w[oc, cc, p, q])
        out[b, oc, i, j] = total
    return out


@pytest.mark.parametrize("attrs, with_bias", [
    ({}, False),
    ({}, True),
    ({"strides": (2, 2), "padding": (1, 1, 1, 1)}, True),
    ({"padding": (0, 2, 1, 0), "dilations": (2, 1)}, False),
    ({"groups": 2, "strides": (1, 2)}, True),
    ({"groups": 4, "padding": (1, 1, 1, 1), "dilations": (1, 2)}, False),  # depthwise
])
def test_conv2d_reference_against_loops(attrs, with_bias):
    op = nn.Conv2dOp.detached(**attrs)
    x = random((2, 4, 6, 7), seed=6)
    w = random((4, 4 // op.groups, 3, 2), seed=7)
    bias = random((4,), seed=8) if with_bias else None
    got = op.reference(x, w, bias)
    expected = naive_conv2d(x, w, bias, op.strides, op.padding, op.dilations, op.groups)
    assert got.shape == op.infer_type(f32(x.shape), f32(w.shape), None).shape
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def naive_pool(x, kernel, strides, padding, kind):
    n, c, h, w = x.shape
    top, left, bottom, right = padding
    oh = conv_out(h, kernel[0], strides[0], 1, top + bottom)
    ow = conv_out(w, kernel[1], strides[1], 1, left + right)
    out = np.zeros((n, c, oh, ow), np.float64)
    for b, ch, i, j in itertools.product(range(n), range(c), range(oh), range(ow)):
        window = []
        for p, q in itertools.product(range(kernel[0]), range(kernel[1])):
            row, col = i * strides[0] + p - top, j * strides[1] + q - left
            inside = 0 <= row < h and 0 <= col < w
            window.append(float(x[b, ch, row, col]) if inside else None)
        if kind == "max":  # padding never wins
            out[b, ch, i, j] = max(v for v in window if v is not None)
        else:  # padding counts as zeros; the divisor is the whole window
            out[b, ch, i, j] = sum(v or 0.0 for v in window) / len(window)
    return out


@pytest.mark.parametrize("attrs", [
    {"kernel": (2, 2)},
    {"kernel": (2, 2), "strides": (2, 2)},
    {"kernel": (3, 3), "strides": (2, 2), "padding": (1, 1, 1, 1)},
    {"kernel": (3, 2), "strides": (1, 2), "padding": (2, 0, 0, 1)},
])
@pytest.mark.parametrize("op, kind", [(nn.MaxPool2dOp, "max"), (nn.AvgPool2dOp, "avg")])
def test_pool_reference_against_loops(op, kind, attrs):
    view = op.detached(**attrs)
    x = random((2, 3, 6, 5), seed=9, low=-3, high=-1)  # all negative: padding must not win
    expected = naive_pool(x, view.kernel, view.strides, view.padding, kind)
    np.testing.assert_allclose(view.reference(x), expected, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("axes, keepdims", [((1,), False), ((-1,), True), ((0, 2), False),
                                            ((2, 0, 1), True)])
def test_reduction_references_against_loops(axes, keepdims):
    x = random((2, 3, 4), seed=10)
    rank = x.ndim
    reduced = sorted(a % rank for a in axes)
    kept = [d for d in range(rank) if d not in reduced]
    # Move the reduced dims last and flatten them: one row per output element.
    rows = np.transpose(x, kept + reduced).reshape(
        [x.shape[d] for d in kept] + [-1]).astype(np.float64)
    out_shape = [1 if d in reduced else x.shape[d] for d in range(rank)] if keepdims else \
        [x.shape[d] for d in kept]
    formulas = {nn.ReduceSumOp: lambda r: sum(r), nn.ReduceMaxOp: max, nn.ReduceMinOp: min,
                nn.ReduceMeanOp: lambda r: sum(r) / len(r)}
    for op, formula in formulas.items():
        expected = np.array([formula(list(row)) for row in rows.reshape(-1, rows.shape[-1])])
        got = op.detached(axes=axes, keepdims=keepdims).reference(x)
        assert got.shape == tuple(out_shape) and got.dtype == np.float32
        np.testing.assert_allclose(got.reshape(-1), expected, rtol=1e-5, atol=1e-6,
                                   err_msg=op.name)


@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_softmax_references(axis):
    x = random((3, 4, 5), seed=11, low=-4, high=4)
    e = np.exp(x.astype(np.float64))
    softmax = e / e.sum(axis=axis, keepdims=True)
    np.testing.assert_allclose(nn.SoftmaxOp.detached(axis=axis).reference(x), softmax, **F32)
    np.testing.assert_allclose(nn.LogSoftmaxOp.detached(axis=axis).reference(x),
                               np.log(softmax), rtol=1e-5, atol=1e-5)


def test_softmax_is_stable_for_large_inputs():
    x = np.array([[1000.0, 1000.0, 999.0], [-1000.0, 0.0, 1000.0]], np.float32)
    y = nn.SoftmaxOp.detached().reference(x)
    assert np.all(np.isfinite(y))
    np.testing.assert_allclose(y.sum(axis=-1), 1.0, rtol=1e-6)
    shifted = nn.SoftmaxOp.detached().reference(x - x.max(axis=-1, keepdims=True))
    np.testing.assert_allclose(y, shifted, **F32)
    assert np.all(np.isfinite(nn.LogSoftmaxOp.detached().reference(x)))


@pytest.mark.parametrize("axis", [-1, 1])
def test_layer_norm_and_rms_norm_references(axis):
    x = random((2, 3, 8), seed=12, low=-3, high=5)
    dims = tuple(range(axis % 3, 3))
    gamma = random(x.shape[axis % 3:], seed=13, low=0.5, high=1.5)
    beta = random(x.shape[axis % 3:], seed=14)
    epsilon = 1e-3
    x64 = x.astype(np.float64)
    mean = x64.mean(axis=dims, keepdims=True)
    variance = x64.var(axis=dims, keepdims=True)  # biased, as in layer normalisation
    expected = (x64 - mean) / np.sqrt(variance + epsilon) * gamma + beta
    got = nn.LayerNormOp.detached(axis=axis, epsilon=epsilon).reference(x, gamma, beta)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
    rms = np.sqrt((x64 ** 2).mean(axis=dims, keepdims=True) + epsilon)
    got = nn.RmsNormOp.detached(axis=axis, epsilon=epsilon).reference(x, gamma)
    np.testing.assert_allclose(got, x64 / rms * gamma, rtol=1e-5, atol=1e-5)


def test_layer_norm_output_is_normalised():
    x = random((4, 16), seed=15, low=-10, high=10)
    y = nn.LayerNormOp.detached(epsilon=0.0).reference(x, np.ones(16, np.float32),
                                                       np.zeros(16, np.float32))
    np.testing.assert_allclose(y.mean(axis=-1), 0.0, atol=1e-5)
    np.testing.assert_allclose(y.std(axis=-1), 1.0, rtol=1e-4)


def naive_attention(q, k, v, mask, causal, scale):
    batch = q.shape[:-2]
    sq, sk = q.shape[-2], k.shape[-2]
    mask = None if mask is None else np.broadcast_to(mask, batch + (sq, sk))
    out = np.zeros(batch + (sq, v.shape[-1]))
    for index in np.ndindex(*batch):
        for i in range(sq):
            scores = []
            for j in range(sk):
                if causal and j > i:
                    continue
                s = scale * float(np.dot(q[index + (i,)].astype(np.float64), k[index + (j,)]))
                scores.append((j, s + (float(mask[index + (i, j)]) if mask is not None else 0.0)))
            top = max(s for _, s in scores)
            weights = [(j, math.exp(s - top)) for j, s in scores]
            total = sum(w for _, w in weights)
            out[index + (i,)] = sum(w / total * v[index + (j,)].astype(np.float64)
                                    for j, w in weights)
    return out


@pytest.mark.parametrize("mask_shape, causal, scale", [
    (None, False, None), (None, True, None), ((5, 7), False, 0.3), ((2, 1, 7), True, None),
    ((1,), False, 2.0),
])
def test_attention_reference_against_loops(mask_shape, causal, scale):
    q, k, v = random((2, 5, 4), seed=16), random((2, 7, 4), seed=17), random((2, 7, 3), seed=18)
    mask = random(mask_shape, seed=19) if mask_shape else None
    op = nn.AttentionOp.detached(causal=causal, scale=scale)
    expected = naive_attention(q, k, v, mask, causal,
                               scale if scale is not None else 1 / math.sqrt(q.shape[-1]))
    got = op.reference(q, k, v, mask)
    assert got.shape == op.infer_type(f32(q.shape), f32(k.shape), f32(v.shape),
                                      None if mask is None else f32(mask.shape)).shape
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def test_attention_first_query_sees_only_the_first_key_when_causal():
    q, k = random((1, 3, 2), seed=20), random((1, 3, 2), seed=21)
    v = np.arange(9, dtype=np.float32).reshape(1, 3, 3)
    out = nn.AttentionOp.detached(causal=True).reference(q, k, v, None)
    np.testing.assert_allclose(out[0, 0], v[0, 0], **F32)


def test_data_movement_references():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    assert nn.TransposeOp.detached(perm=(2, 0, 1)).reference(x)[3, 1, 2] == x[1, 2, 3]
    reshaped = nn.ReshapeOp.detached([f32((4, 6))]).reference(x)
    assert reshaped.shape == (4, 6) and reshaped.ravel().tolist() == x.ravel().tolist()
    broadcast = nn.BroadcastToOp.detached([f32((5, 2, 3, 4))]).reference(x)
    assert broadcast.shape == (5, 2, 3, 4) and (broadcast[4] == x).all()
    joined = nn.ConcatOp.detached(axis=-1).reference([x, x[..., :1]])
    assert joined.shape == (2, 3, 5) and (joined[..., 4] == x[..., 0]).all()
    sliced = nn.SliceOp.detached(starts=(1, 0, 1), limits=(2, 3, 4), strides=(1, 2, 2)).reference(x)
    assert sliced.tolist() == [[[13.0, 15.0], [21.0, 23.0]]]
    padded = nn.PadOp.detached(low=(0, 1, 0), high=(1, 0, 2), value=-1.0).reference(x)
    assert padded.shape == (3, 4, 6)
    assert (padded[:2, 1:, :4] == x).all()
    assert (padded[2] == -1).all() and (padded[:, 0] == -1).all() and (padded[..., 4:] == -1).all()


@pytest.mark.parametrize("dtype, rtol", [("f16", 2e-3), ("bf16", 1.6e-2)])
def test_low_precision_references_round_once(dtype, rtol):
    """f16/bf16 references compute in f32 and round the result once: they
    match the f32 reference to the format's precision and keep the dtype."""
    np_dtype = nn.numpy_dtype(dtype)
    x = random((4, 8), seed=22).astype(np_dtype)
    g = np.ones(8, np_dtype)
    x32 = x.astype(np.float32)
    cases = [
        (nn.SoftmaxOp.detached(), (x,), (x32,)),
        (nn.GeluOp.detached(approximate="tanh"), (x,), (x32,)),
        (nn.RmsNormOp.detached(), (x, g), (x32, g.astype(np.float32))),
        (nn.MatmulOp.detached(), (x, x.T.copy()), (x32, x32.T.copy())),
        (nn.ReduceMeanOp.detached(axes=(1,)), (x,), (x32,)),
    ]
    for op, low, high in cases:
        got = op.reference(*low)
        assert got.dtype == np_dtype, op.name
        np.testing.assert_allclose(got.astype(np.float32), op.reference(*high), rtol=rtol,
                                   atol=rtol, err_msg=op.name)


def test_gather_reference_against_loops():
    """Indices outside the axis are clamped into it."""
    x = random((4, 5, 3), seed=31)
    indices = np.array([[-2, 0, 4], [5, 1, 9]])
    got = nn.GatherOp.detached(axis=1).reference(x, indices)
    want = np.empty((4, 2, 3, 3), np.float32)
    for i, j, k, m in itertools.product(range(4), range(2), range(3), range(3)):
        want[i, j, k, m] = x[i, min(max(indices[j, k], 0), 4), m]
    np.testing.assert_array_equal(got, want)


def test_iota_cumsum_and_argmax_references_against_loops():
    iota = nn.IotaOp.detached([T((2, 3), "f32")], axis=1).reference()
    assert iota.dtype == np.float32 and iota.tolist() == [[0, 1, 2], [0, 1, 2]]
    x = rng(32).integers(-2**30, 2**30, (3, 6)).astype(np.int32)
    got = nn.CumsumOp.detached(axis=1).reference(x)
    want = np.zeros_like(x)
    for i in range(3):
        total = np.int32(0)
        for j in range(6):
            with np.errstate(over="ignore"):
                total = np.int32(total + x[i, j])   # wraps, as i32 does
            want[i, j] = total
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, want)
    ties = np.array([[1.0, 3.0, 3.0, 0.0], [np.nan, 2.0, np.nan, 5.0]], np.float32)
    first = nn.ArgmaxOp.detached(axis=1).reference(ties)
    assert first.dtype == np.int64 and first.tolist() == [1, 0]


def test_quantize_references_against_loops():
    """Per channel along axis 0, element by element: x / scale in f32,
    rounded half to even, shifted, saturated (NaN: the least value)."""
    x = np.array([[0.5, 1.5, -2.5, 1e9], [np.nan, -np.inf, 3.75, -0.25]], np.float32)
    scale = np.array([1.0, 0.5], np.float32)
    zero_point = np.array([10, 250], np.uint8)
    got = nn.QuantizeOp.detached(axis=0).reference(x, scale, zero_point)
    want = np.empty(x.shape, np.uint8)
    for (i, j), value in np.ndenumerate(x):
        quotient = float(np.float32(value) / scale[i])
        if np.isnan(quotient):
            want[i, j] = 0
        else:
            rounded = round(quotient) if np.isfinite(quotient) else quotient
            want[i, j] = min(max(rounded + int(zero_point[i]), 0), 255)
    assert got.dtype == np.uint8
    np.testing.assert_array_equal(got, want)
    assert want.tolist() == [[10, 12, 8, 255], [0, 0, 255, 250]]
    back = nn.DequantizeOp.detached(axis=0).reference(got, scale, zero_point)
    assert back.dtype == np.float32
    assert back.tolist() == [[0.0, 2.0, -2.0, 245.0], [-125.0, -125.0, 2.5, 0.0]]


def test_integer_references_are_exact():
    """Integers are computed on in their own type: no f32 rounding, and
    products wrap as two's complement."""
    big = np.array([2**40 + 1, -(2**40) - 3], np.int64)
    assert nn.AddOp.detached().reference(big, np.int64(1)).tolist() == [2**40 + 2, -(2**40) - 2]
    wrapped = nn.MulOp.detached().reference(np.array([2**20], np.int32), np.array([2**12],
                                                                                  np.int32))
    assert wrapped.dtype == np.int32 and wrapped.tolist() == [0]
    assert nn.CastOp.detached([T((3,), "i64")]).reference(
        np.array([-1.7, 2.9, 0.5], np.float32)).tolist() == [-1, 2, 0]
