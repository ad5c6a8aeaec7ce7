"""ONNX Attention through `lamina.from_onnx`: sliding windows and rows
whose keys a boolean mask hides all, against the `onnx` package's
reference evaluator and against a float64 NumPy attention written here;
every path nn.attention can take on the CPU (the flash-style lowering of
the default pipeline, the whole-row lowering, the decomposition into
primitive nn ops, and the op's NumPy reference) gives 0 for a row masked
whole, as ONNX defines it. f32, rtol = atol = 1e-5.
"""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import lamina  # noqa: E402
from lamina.lowering.nn_to_linalg import ConvertNNToLinalg  # noqa: E402
from lamina.passes.nn_decompose import NNDecompose  # noqa: E402
from lamina.reference import evaluate  # noqa: E402

RTOL = ATOL = 1e-5
SHAPE = (1, 2, 7, 4)  # batch, heads, sequence, head size


def attention_model(mask: bool = False, opset: int = 25, **attributes):
    inputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, SHAPE) for n in "qkv"]
    names = ["q", "k", "v"]
    if mask:
        inputs.append(helper.make_tensor_value_info("mask", TensorProto.BOOL, [SHAPE[2], SHAPE[2]]))
        names.append("mask")
    node = helper.make_node("Attention", names, ["y"], name="attention", **attributes)
    graph = helper.make_graph([node], "attention", inputs,
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, SHAPE)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def numpy_attention(q, k, v, seen):
    """softmax over the keys `seen` (a boolean [Sq, Sk]) of q k^T / sqrt(D),
    times v; 0 for a query that sees no key."""
    scores = q.astype(np.float64) @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    scores = np.where(seen, scores, -np.inf)
    peak = scores.max(-1, keepdims=True)
    weights = np.exp(scores - np.where(np.isneginf(peak), 0, peak))
    total = weights.sum(-1, keepdims=True)
    return (weights / np.where(total == 0, 1, total)) @ v


def window(left: int, right: int, causal: bool = False) -> np.ndarray:
    distance = np.arange(SHAPE[2])[:, None] - np.arange(SHAPE[2])[None, :]
    seen = np.ones((SHAPE[2], SHAPE[2]), bool)
    if left >= 0:
        seen &= distance <= left
    if right >= 0:
        seen &= -distance <= right
    if causal:
        seen &= distance >= 0
    return seen


def arrays(seed: int = 0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(SHAPE).astype(np.float32) for _ in range(3)]


@pytest.mark.parametrize("left,right,causal", [(1, -1, False), (-1, 2, False), (2, 0, False),
                                               (0, 0, False), (3, -1, True)])
def test_sliding_window(left, right, causal):
    model = attention_model(left_window_size=left, right_window_size=right,
                            is_causal=int(causal))
    q, k, v = arrays()
    got = lamina.compile(lamina.from_onnx(model))(q, k, v)
    np.testing.assert_allclose(got, numpy_attention(q, k, v, window(left, right, causal)),
                               rtol=RTOL, atol=ATOL)
    expected, = ReferenceEvaluator(model).run(None, {"q": q, "k": k, "v": v})
    np.testing.assert_allclose(got, expected, rtol=RTOL, atol=ATOL)


def test_sliding_window_with_a_mask():
    model = attention_model(mask=True, left_window_size=1)
    q, k, v = arrays(1)
    mask = np.random.default_rng(2).random((SHAPE[2], SHAPE[2])) > 0.3
    got = lamina.compile(lamina.from_onnx(model))(q, k, v, mask)
    np.testing.assert_allclose(got, numpy_attention(q, k, v, mask & window(1, -1)),
                               rtol=RTOL, atol=ATOL)


def masked_rows():
    mask = np.random.default_rng(3).random((SHAPE[2], SHAPE[2])) > 0.4
    mask[[0, 3]] = False  # two queries see no key
    mask[1, 2] = True
    return mask


def cpu_pipeline(path: str):
    pipeline = lamina.Pipeline.for_target("cpu")
    if path == "whole-row":
        pipeline.replace("convert-nn-to-linalg", ConvertNNToLinalg(), stage="linalg")
    elif path == "decomposed":
        pipeline.replace("nn-decompose", NNDecompose(keep_attention=False), stage="fused")
    return pipeline


@pytest.mark.parametrize("path", ["flash", "whole-row", "decomposed"])
def test_row_masked_whole_gives_zero(path):
    q, k, v = arrays(4)
    mask = masked_rows()
    module = lamina.from_onnx(attention_model(mask=True))
    got = lamina.compile(module, pipeline=cpu_pipeline(path))(q, k, v, mask)
    assert not np.isnan(got).any()
    assert (got[..., [0, 3], :] == 0).all()
    np.testing.assert_allclose(got, numpy_attention(q, k, v, mask), rtol=RTOL, atol=ATOL)
    expected, = ReferenceEvaluator(attention_model(mask=True)).run(
        None, {"q": q, "k": k, "v": v, "mask": mask})
    np.testing.assert_allclose(got, expected, rtol=RTOL, atol=ATOL)


def test_row_masked_whole_in_the_reference():
    q, k, v = arrays(5)
    mask = masked_rows()
    got, = evaluate(lamina.from_onnx(attention_model(mask=True)), [q, k, v, mask])
    assert (got[..., [0, 3], :] == 0).all()
    np.testing.assert_allclose(got, numpy_attention(q, k, v, mask), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("attributes,message", [
    ({"softmax_precision": TensorProto.DOUBLE},
     "attribute 'softmax_precision' = double is not supported (only the inputs' type, f32)"),
    ({"left_window_size": -2}, "attribute 'left_window_size' must be -1 or >= 0, got -2"),
])
def test_attributes_not_implemented_are_errors(attributes, message):
    with pytest.raises(lamina.CompileError) as error:
        lamina.from_onnx(attention_model(**attributes))
    assert f"node #0 'attention' (Attention): {message}" in str(error.value)
