"""Transformer language models through ONNX, from int64 `input_ids`: GPT-2,
BERT (with a padding mask) and a Llama-style decoder (`language_models.py`)
exported with `torch.onnx.export` (its dynamo exporter, opset 18, offline)
and imported with `lamina.from_onnx`, against eager PyTorch in float32 at
rtol = atol = 1e-4 (they differ by about 2e-6); and a model built with
onnx.helper whose nodes compute on integer tensors at run time (Gather,
GatherElements, GatherND, Trilu, Range, CumSum, ArgMax, Where, Equal,
Less, Cast to and from integers, And, Or, Xor, Not, IsNaN, Sin, Cos),
against onnxruntime: integer and boolean results exactly, floats at
rtol = atol = 1e-5."""

from __future__ import annotations

import functools
import warnings

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
onnxruntime = pytest.importorskip("onnxruntime")
torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("onnxscript")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import lamina  # noqa: E402
from lamina.importers.onnx_import import parameters  # noqa: E402

from language_models import MODELS, build, inputs  # noqa: E402

RTOL = ATOL = 1e-4


@functools.cache
def exported(name: str, directory: str) -> str:
    model, args = build(name), inputs(name)
    path = f"{directory}/{name}.onnx"
    names = ["input_ids", "attention_mask"][:len(args)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, args, path, input_names=names, dynamo=True, opset_version=18,
                          external_data=False, verbose=False)
    return path


@pytest.fixture(scope="module")
def models_dir(tmp_path_factory):
    return str(tmp_path_factory.mktemp("language-models"))


@pytest.mark.parametrize("name", MODELS)
def test_exported_model_matches_eager(name, models_dir):
    path = exported(name, models_dir)
    graph_inputs = onnx.load(path).graph.input
    assert {i.type.tensor_type.elem_type for i in graph_inputs} == {TensorProto.INT64}
    module = lamina.from_onnx(path)
    args = inputs(name)
    got = lamina.compile(module)(*parameters(module, path), *[a.numpy() for a in args])
    with torch.no_grad():
        want = build(name)(*args).numpy()
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)


def _node(op_type, inputs, outputs, **attributes):
    return helper.make_node(op_type, inputs, outputs, name=outputs[0], **attributes)


def _integers_model(path: str) -> str:
    i64, f32, boolean = TensorProto.INT64, TensorProto.FLOAT, TensorProto.BOOL
    nodes = [
        _node("Gather", ["table", "ids"], ["embedded"], axis=0),
        _node("Gather", ["scores", "columns"], ["picked"], axis=1),
        _node("GatherElements", ["scores", "along"], ["elements"], axis=1),
        _node("GatherND", ["scores", "pairs"], ["pairs_taken"]),
        _node("Trilu", ["scores", "one"], ["upper"], upper=1),
        _node("Trilu", ["ids"], ["lower"], upper=0),
        _node("Range", ["zero", "six", "one"], ["positions"]),
        _node("Add", ["ids", "positions"], ["shifted"]),
        _node("Mul", ["shifted", "ids"], ["product"]),
        _node("CumSum", ["product", "one"], ["running"]),
        _node("ArgMax", ["scores"], ["best"], axis=1, keepdims=0),
        _node("Less", ["ids", "positions"], ["less"]),
        _node("Equal", ["ids", "three"], ["equal"]),
        _node("Or", ["less", "equal"], ["either"]),
        _node("And", ["less", "equal"], ["both"]),
        _node("Xor", ["less", "equal"], ["one_of"]),
        _node("Not", ["either"], ["neither"]),
        _node("Where", ["either", "ids", "positions"], ["chosen"]),
        _node("Cast", ["chosen"], ["as_float"], to=f32),
        _node("Cast", ["scores"], ["as_int"], to=TensorProto.INT32),
        _node("Cast", ["either"], ["as_count"], to=i64),
        _node("Div", ["scores", "scores"], ["ratios"]),
        _node("IsNaN", ["ratios"], ["nan"]),
        _node("Sin", ["scores"], ["sine"]),
        _node("Cos", ["scores"], ["cosine"]),
    ]
    names = ["embedded", "picked", "elements", "pairs_taken", "upper", "lower", "running",
             "best", "neither", "both", "one_of", "as_float", "as_int", "as_count", "nan",
             "sine", "cosine"]
    initializers = [numpy_helper.from_array(np.asarray(v, dtype), name) for name, v, dtype in [
        ("table", np.arange(40).reshape(10, 4) * 0.5, np.float32),
        ("columns", [[5, -1], [0, 2]], np.int64),
        ("along", [[0, 5, 2, 2, -6, 1], [4, 4, 0, 1, 3, 3]], np.int64),
        ("pairs", [[1, 2], [0, -1], [1, 0]], np.int64),
        ("zero", 0, np.int64), ("six", 6, np.int64), ("one", 1, np.int64),
        ("three", 3, np.int64)]]
    graph = helper.make_graph(
        nodes, "integers",
        [helper.make_tensor_value_info("ids", i64, [2, 6]),
         helper.make_tensor_value_info("scores", f32, [2, 6])],
        [], initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    inferred = {i.name: i for i in onnx.shape_inference.infer_shapes(model).graph.value_info}
    model.graph.output.extend(inferred[name] for name in names)
    onnx.save(model, path)
    return path


def test_integer_nodes_match_onnxruntime(tmp_path):
    path = _integers_model(str(tmp_path / "integers.onnx"))
    ids = np.array([[0, 7, 3, 9, -5, 1], [4, 3, 8, 2, 6, -10]], np.int64)
    scores = np.random.default_rng(5).standard_normal((2, 6)).astype(np.float32) * 3
    scores[1, 2] = scores[1, 4] = scores[1].max() + 1      # a tie: the first index wins
    scores[0, 1] = 0.0                                     # 0 / 0 is NaN
    session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
    expected = session.run(None, {"ids": ids, "scores": scores})
    module = lamina.from_onnx(path)
    actual = lamina.compile(module)(*parameters(module, path), ids, scores)
    assert len(actual) == len(expected)
    for output, got, want in zip(session.get_outputs(), actual, expected):
        assert got.dtype == want.dtype and got.shape == want.shape, output.name
        if want.dtype.kind in "biu":
            np.testing.assert_array_equal(got, want, err_msg=output.name)
        else:
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=output.name)


def test_unsupported_input_type_is_named(tmp_path):
    graph = helper.make_graph([_node("Identity", ["x"], ["y"])], "float8",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT8E4M3FN, [4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT8E4M3FN, [4])])
    path = str(tmp_path / "float8.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)]), path)
    with pytest.raises(lamina.CompileError, match="input 'x' has element type float8e4m3fn; nn "
                       "tensors are float, float16, bfloat16, double, int8, uint8, int16, uint16, "
                       "int32, uint32, int64, uint64 or bool"):
        lamina.from_onnx(path)
