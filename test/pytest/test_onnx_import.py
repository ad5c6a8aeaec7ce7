"""ONNX models through Lamina: `lamina.from_onnx`, with the initializers as
arguments and as constants, compiled for the CPU.

PyTorch models are built here with random weights (no downloads) and
exported with `torch.onnx.export`: by default its dynamo exporter
(onnxscript; opset 20 in torch 2.14), and once with the TorchScript exporter
(opset 17), whose graphs compute shapes at run time (Shape, Gather,
Concat, ...). The models are an MLP, a transformer encoder block
(multi-head attention, LayerNorm, a GELU MLP) and torchvision's resnet18 in
eval mode on a 1x3x64x64 input; two models built with onnx.helper touch the
other mapped ops (batch normalization, grouped and 1-D convolutions,
pooling with ceil mode and without counting padding, reductions with axes
as inputs, gathers, slices, casts, attention with a boolean mask and causal
attention, ...). Every result is compared in
float32 with onnxruntime, and the exported PyTorch models also with
PyTorch eager, at rtol = atol = 1e-4. Each model is exported, imported and
compiled once per module.
"""

from __future__ import annotations

import time
import warnings

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
onnxruntime = pytest.importorskip("onnxruntime")
torch = pytest.importorskip("torch")
torchvision = pytest.importorskip("torchvision")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from torch import nn  # noqa: E402

import lamina  # noqa: E402
from lamina.diagnostics import file_location  # noqa: E402
from lamina.importers.onnx_import import parameters  # noqa: E402

pytestmark = pytest.mark.xdist_group("onnx-import")

RTOL = ATOL = 1e-4  # float32, against onnxruntime and PyTorch eager


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10),
                                    nn.Softmax(dim=-1))

    def forward(self, x):
        return self.layers(x)


class EncoderBlock(nn.Module):
    """A pre-norm transformer encoder block."""

    def __init__(self, dim=32, heads=4):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attention = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        h = self.norm1(x)
        x = x + self.attention(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.norm2(x))


def random_input(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def export(model, inputs, path, dynamo=True, **options):
    """`model` in eval mode, with random weights, exported to `path`."""
    torch.manual_seed(0)
    model = model.eval()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, tuple(torch.from_numpy(x) for x in inputs), str(path),
                          dynamo=dynamo, **options)
    return str(path)


def eager(model, inputs):
    with torch.no_grad():
        return model.eval()(*[torch.from_numpy(x) for x in inputs]).numpy()


def onnxruntime_outputs(path, inputs):
    session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
    return session.run(None, {i.name: x for i, x in zip(session.get_inputs(), inputs)})


def lamina_outputs(path, inputs, params="arguments"):
    """Imports, compiles (timed) and runs the model; the outputs as a list."""
    module = lamina.from_onnx(path, params=params)
    start = time.perf_counter()
    main = lamina.compile(module)
    compile_seconds = time.perf_counter() - start
    outputs = main(*(parameters(module, path) if params == "arguments" else []), *inputs)
    print(f"{path}: compiled in {compile_seconds:.2f} s ({params})")
    return list(outputs) if isinstance(outputs, tuple) else [outputs]


def assert_close(actual, expected):
    np.testing.assert_allclose(actual, expected, rtol=RTOL, atol=ATOL)


# ---------------------------------------------------------------------------
# PyTorch models exported to ONNX.


@pytest.fixture(scope="module")
def models_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("onnx")


@pytest.fixture(scope="module")
def resnet18(models_dir):
    torch.manual_seed(0)
    model = torchvision.models.resnet18()
    inputs = [random_input(1, 3, 64, 64)]
    path = export(model, inputs, models_dir / "resnet18.onnx")
    return model, inputs, path, lamina_outputs(path, inputs)


def test_resnet18_matches_onnxruntime_and_eager(resnet18):
    model, inputs, path, (actual,) = resnet18
    assert actual.shape == (1, 1000)
    assert_close(actual, onnxruntime_outputs(path, inputs)[0])
    assert_close(actual, eager(model, inputs))


def test_resnet18_weights_as_arguments_or_constants(resnet18):
    model, inputs, path, _ = resnet18
    module = lamina.from_onnx(path)
    main = module.body.operations[0]
    weights = parameters(module, path)
    assert len(weights) > 20
    assert [tuple(ir_type.shape) for ir_type in main.type.inputs] == \
        [w.shape for w in weights] + [(1, 3, 64, 64)]
    text = str(lamina.from_onnx(path, params="constants"))
    assert "lamina.parameter" not in text and text.count("lamina.input") == 1
    assert text.count('"nn.conv2d"') == 20 and "nn.max_pool2d" in text


@pytest.fixture(scope="module")
def encoder_block():
    torch.manual_seed(0)
    return EncoderBlock(), [random_input(2, 8, 32)]


@pytest.mark.parametrize("exporter, params", [("dynamo", "arguments"), ("dynamo", "constants"),
                                              ("torchscript", "arguments")])
def test_encoder_block(encoder_block, models_dir, exporter, params):
    model, inputs = encoder_block
    options = {"dynamo": False, "opset_version": 17} if exporter == "torchscript" else {}
    path = export(model, inputs, models_dir / f"block-{exporter}.onnx", **options)
    (actual,) = lamina_outputs(path, inputs, params)
    assert_close(actual, onnxruntime_outputs(path, inputs)[0])
    assert_close(actual, eager(model, inputs))


@pytest.fixture(scope="module")
def mlp(models_dir):
    torch.manual_seed(0)
    model, inputs = MLP(), [random_input(4, 64)]
    return model, inputs, export(model, inputs, models_dir / "mlp.onnx")


@pytest.mark.parametrize("params", ["arguments", "constants"])
def test_mlp(mlp, params):
    model, inputs, path = mlp
    (actual,) = lamina_outputs(path, inputs, params)
    assert_close(actual, onnxruntime_outputs(path, inputs)[0])
    assert_close(actual, eager(model, inputs))


def test_ops_are_located_at_their_nodes(mlp):
    _, _, path = mlp
    graph = onnx.load(path).graph
    module = lamina.from_onnx(path)
    main = module.body.operations[0]
    first = next(op for op in main.regions[0].blocks[0].operations
                 if op.operation.name.startswith("nn."))
    node = graph.node[0]
    assert str(first.location).startswith(f'loc("{node.name}"(')
    assert file_location(first.location) == (path, 1, 1)


def test_dynamic_dimension_is_an_error_naming_the_input(models_dir):
    path = export(MLP(), [random_input(4, 64)], models_dir / "dynamic.onnx", dynamo=False,
                  input_names=["x"], dynamic_axes={"x": {0: "batch"}})
    with pytest.raises(lamina.CompileError) as error:
        lamina.from_onnx(path)
    assert str(error.value) == (f"{path}: error: input 'x' has a dynamic dimension 0 ('batch'); "
                                "Lamina needs static shapes (export the model with fixed input "
                                "shapes)")


# ---------------------------------------------------------------------------
# Models built with onnx.helper.


def tensor_info(name, shape, elem_type=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem_type, shape)


def constant(name, value, dtype=np.float32):
    return numpy_helper.from_array(np.asarray(value, dtype), name)


def make_model(path, nodes, inputs, outputs, initializers, opset=18, domains=()):
    """A model of `nodes`; outputs given as names take the types ONNX infers."""
    named = [o for o in outputs if isinstance(o, str)]
    graph = helper.make_graph(nodes, "test", inputs, [o for o in outputs if o not in named],
                              initializers)
    opsets = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, 1) for d in domains]
    model = helper.make_model(graph, opset_imports=opsets)
    if named:
        inferred = {i.name: i for i in onnx.shape_inference.infer_shapes(model).graph.value_info}
        model.graph.output.extend(inferred[name] for name in named)
    onnx.save(model, str(path))
    return str(path)


def node(op_type, inputs, outputs, **attributes):
    return helper.make_node(op_type, inputs, outputs, name=outputs[0], **attributes)


def weights(*shape, seed=1):
    return random_input(*shape, seed=seed) * 0.5


def windows_model(path):
    """Convolutions, batch normalization, pooling and hard activations."""
    nodes = [
        node("Conv", ["x", "w1", "b1"], ["conv"], pads=[1, 1, 1, 1]),
        node("BatchNormalization", ["conv", "scale", "shift", "mean", "var"], ["bn"],
             epsilon=1e-3),
        node("Conv", ["bn", "w2"], ["grouped"], group=3, strides=[2, 2], auto_pad="SAME_UPPER"),
        node("MaxPool", ["grouped"], ["max"], kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1),
        node("AveragePool", ["grouped"], ["avg"], kernel_shape=[3, 3], strides=[2, 2],
             pads=[1, 1, 1, 1]),
        node("Add", ["max", "avg"], ["pooled"]),
        node("LeakyRelu", ["pooled"], ["leaky"], alpha=0.1),
        node("Clip", ["leaky", "low", "high"], ["clipped"]),
        node("GlobalAveragePool", ["bn"], ["gap"]),
        node("Flatten", ["gap"], ["flat"]),
        node("Gemm", ["flat", "fc", "fc_bias"], ["dense"], alpha=0.5, beta=2.0, transB=1),
        node("Reshape", ["bn", "rows"], ["sequence"]),
        node("Conv", ["sequence", "w1d"], ["conv1d"], pads=[2, 2], dilations=[2]),
        node("AveragePool", ["conv1d"], ["pool1d"], kernel_shape=[2], strides=[2],
             count_include_pad=1, pads=[1, 0]),
        node("HardSwish", ["pooled"], ["hard_swish"]),
        node("HardSigmoid", ["dense"], ["hard_sigmoid"], alpha=0.3, beta=0.4),
    ]
    initializers = [
        constant("w1", weights(6, 3, 3, 3)), constant("b1", weights(6, seed=2)),
        constant("scale", weights(6, seed=3) + 1), constant("shift", weights(6, seed=4)),
        constant("mean", weights(6, seed=5)), constant("var", np.abs(weights(6, seed=6)) + 0.5),
        constant("w2", weights(6, 2, 3, 3, seed=7)), constant("low", -0.5),
        constant("high", 1.0), constant("fc", weights(5, 6, seed=8)),
        constant("fc_bias", weights(5, seed=9)), constant("rows", [1, 6, 81], np.int64),
        constant("w1d", weights(4, 6, 3, seed=10)),
    ]
    return make_model(path, nodes, [tensor_info("x", [1, 3, 9, 9])],
                      [tensor_info("clipped", [1, 6, 3, 3]), tensor_info("dense", [1, 5]),
                       tensor_info("pool1d", [1, 4, 41]), "hard_swish", "hard_sigmoid"],
                      initializers)


def elementwise_model(path):
    """Broadcasting arithmetic, activations, reductions, data movement and
    attention (opset 23)."""
    nodes = [
        node("Sub", ["x", "y"], ["diff"]),
        node("Abs", ["diff"], ["abs"]),
        node("Add", ["abs", "one"], ["positive"]),
        node("Div", ["x", "positive"], ["ratio"]),
        node("Pow", ["positive", "two"], ["square"]),
        node("Pow", ["positive", "y"], ["power"]),
        node("Max", ["ratio", "y", "half"], ["max"]),
        node("Min", ["max", "square"], ["min"]),
        node("Log", ["positive"], ["log"]),
        node("Sqrt", ["positive"], ["sqrt"]),
        node("Exp", ["min"], ["exp"]),
        node("Erf", ["x"], ["erf"]),
        node("Tanh", ["power"], ["tanh"]),
        node("Sigmoid", ["y"], ["sigmoid"]),
        node("Reciprocal", ["positive"], ["reciprocal"]),
        node("Neg", ["sqrt"], ["neg"]),
        node("Sum", ["log", "exp", "erf", "tanh"], ["sum4"]),
        node("Mul", ["sum4", "sigmoid"], ["mul"]),
        node("Add", ["mul", "reciprocal"], ["mix"]),
        node("Add", ["mix", "neg"], ["elementwise"]),
        node("Softmax", ["elementwise"], ["softmax"], axis=1),
        node("LogSoftmax", ["x"], ["log_softmax"]),
        node("ReduceSum", ["softmax", "axis1"], ["row_sums"], keepdims=0),
        node("ReduceMean", ["log_softmax", "axis_last"], ["mean"]),
        node("ReduceMax", ["x", "axes02"], ["max_all"], keepdims=1),
        node("LayerNormalization", ["x", "gamma"], ["norm"], axis=-1, epsilon=1e-3),
        node("Transpose", ["norm"], ["transposed"], perm=[2, 0, 1]),
        node("Slice", ["transposed", "starts", "ends", "axes", "steps"], ["sliced"]),
        node("Gather", ["x", "one_index"], ["picked"], axis=1),
        node("Gather", ["x", "scattered"], ["scattered_picks"], axis=2),
        node("Unsqueeze", ["picked", "axis1"], ["unsqueezed"]),
        node("Concat", ["x", "unsqueezed"], ["joined"], axis=1),
        node("Expand", ["y", "expanded_shape"], ["expanded"]),
        node("Greater", ["x", "expanded"], ["greater"]),
        node("Where", ["greater", "x", "half"], ["where"]),
        node("Cast", ["where"], ["half_precision"], to=TensorProto.FLOAT16),
        node("Cast", ["half_precision"], ["rounded"], to=TensorProto.FLOAT),
        node("Pad", ["rounded", "pads", "pad_value"], ["padded"]),
        node("Split", ["padded"], ["left", "right"], axis=2, num_outputs=2),
        node("Squeeze", ["max_all", "axes02"], ["squeezed"]),
        node("MatMul", ["squeezed", "vector"], ["matvec"]),
        node("ReduceMax", ["joined", "axis1"], ["joined_max"], keepdims=0),
        node("Attention", ["x", "x", "norm", "key_mask"], ["attended"], q_num_heads=2,
             kv_num_heads=2, scale=0.7),
        node("Unsqueeze", ["joined", "axis1"], ["heads"]),
        node("Attention", ["heads", "heads", "heads"], ["causal"], is_causal=1),
    ]
    initializers = [
        constant("one", 1.0), constant("two", 2.0), constant("half", 0.5),
        constant("axis0", [0], np.int64), constant("axis1", [1], np.int64),
        constant("axis_last", [-1], np.int64), constant("axes02", [0, 2], np.int64),
        constant("gamma", weights(4, seed=11) + 1),
        constant("starts", [1, 0], np.int64), constant("ends", [4, 100], np.int64),
        constant("axes", [0, 2], np.int64), constant("steps", [2, 1], np.int64),
        constant("one_index", 1, np.int64), constant("scattered", [[3, 0], [1, 1]], np.int64),
        constant("expanded_shape", [2, 1, 1], np.int64),
        constant("pads", [0, 0, 1, 0, 0, 1], np.int64), constant("pad_value", 0.25),
        constant("vector", weights(3, 2, seed=12)),
        constant("key_mask", [[1, 0, 1], [1, 1, 0], [0, 1, 1]], np.bool_),
    ]
    outputs = ["elementwise", "softmax", "row_sums", "mean", "sliced", "joined", "left",
               "right", "matvec", "joined_max", "scattered_picks", "attended", "causal"]
    return make_model(path, nodes, [tensor_info("x", [2, 3, 4]), tensor_info("y", [3, 4])],
                      outputs, initializers, opset=23)


def composed_model(path):
    """The op types Lamina composes of nn ops: activations, reductions,
    normalizations, losses, index ops and rearrangements (opset 23)."""
    nodes = [
        node("Elu", ["x"], ["elu"], alpha=0.7),
        node("Selu", ["x"], ["selu"]),
        node("Celu", ["x"], ["celu"], alpha=1.5),
        node("Softplus", ["x"], ["softplus"]),
        node("Softsign", ["x"], ["softsign"]),
        node("ThresholdedRelu", ["x"], ["thresholded"], alpha=0.2),
        node("Mish", ["x"], ["mish"]),
        node("Sign", ["x"], ["sign"]),
        node("Mean", ["elu", "selu", "celu"], ["mean"]),
        node("Sum", ["mean", "softplus", "softsign", "thresholded", "mish", "sign"],
             ["activations"]),
        node("ReduceL1", ["x", "axis1"], ["l1"]),
        node("ReduceL2", ["x", "axis1"], ["l2"], keepdims=0),
        node("ReduceSumSquare", ["x"], ["sum_square"], keepdims=0),
        node("ReduceLogSumExp", ["x", "axis_last"], ["log_sum_exp"]),
        node("ReduceLogSum", ["softplus", "axis_last"], ["log_sum"], keepdims=0),
        node("LpNormalization", ["x"], ["lp"], axis=1, p=1),
        node("RMSNormalization", ["x", "gamma"], ["rms"], epsilon=1e-3),
        node("Hardmax", ["x"], ["hardmax"], axis=1),
        node("ArgMin", ["x"], ["argmin"], axis=2, keepdims=0),
        node("ArgMax", ["sign"], ["last_argmax"], axis=2, select_last_index=1),
        node("Clip", ["x", "low", "high"], ["clipped"]),
        node("NegativeLogLikelihoodLoss", ["x", "target", "class_weights"], ["nll"],
             ignore_index=1),
        node("SoftmaxCrossEntropyLoss", ["x", "target"], ["cross_entropy", "log_prob"],
             reduction="sum"),
        node("Reshape", ["x", "image_shape"], ["image"]),
        node("SpaceToDepth", ["image"], ["depth"], blocksize=2),
        node("DepthToSpace", ["depth"], ["space"], blocksize=2, mode="CRD"),
        node("OneHot", ["target", "depth_count", "on_off"], ["one_hot"], axis=1),
    ]
    initializers = [
        constant("axis1", [1], np.int64), constant("axis_last", [-1], np.int64),
        constant("gamma", weights(8, seed=11) + 1), constant("class_weights", [0.5, 1, 2]),
        constant("image_shape", [1, 4, 2, 6], np.int64), constant("depth_count", 5, np.int64),
        constant("on_off", [0.0, 3.0]),
    ]
    inputs = [tensor_info("x", [2, 3, 8]), tensor_info("target", [2, 8], TensorProto.INT64),
              tensor_info("low", []), tensor_info("high", [])]
    outputs = ["activations", "l1", "l2", "sum_square", "log_sum_exp", "log_sum", "lp", "rms",
               "hardmax", "argmin", "last_argmax", "clipped", "nll", "cross_entropy",
               "log_prob", "space", "one_hot"]
    return make_model(path, nodes, inputs, outputs, initializers, opset=23)


def composed_inputs(session):
    x = random_input(2, 3, 8, seed=0)
    x[0, 0, :3] = 0  # ties for ArgMin and Sign's zero
    target = np.random.default_rng(1).integers(0, 3, (2, 8)).astype(np.int64)
    return [x, target, np.array(-0.5, np.float32), np.array(0.75, np.float32)]


@pytest.mark.parametrize("build", [windows_model, elementwise_model, composed_model])
def test_mapped_ops_match_onnxruntime(models_dir, build):
    path = build(models_dir / f"{build.__name__}.onnx")
    session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
    inputs = composed_inputs(session) if build is composed_model else \
        [random_input(*i.shape, seed=n) for n, i in enumerate(session.get_inputs())]
    expected = onnxruntime_outputs(path, inputs)
    actual = lamina_outputs(path, inputs)
    assert len(actual) == len(expected)
    for output, got, want in zip(session.get_outputs(), actual, expected):
        assert got.shape == want.shape and got.dtype == want.dtype, output.name
        np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL, err_msg=output.name)


def test_every_unsupported_node_in_one_error(models_dir):
    nodes = [
        node("TopK", ["x", "k"], ["values", "indices"]),
        node("Relu", ["values"], ["after_topk"]),
        node("Unique", ["x"], ["mod"]),
        helper.make_node("Fancy", ["x"], ["fancy"], domain="com.example"),
        node("Slice", ["x", "start", "end", "axis", "step"], ["reversed"]),
        node("Conv", ["volume", "kernel"], ["conv3d"]),
        node("Add", ["after_topk", "mod"], ["y"]),
    ]
    initializers = [constant("k", [2], np.int64), constant("start", [-1], np.int64),
                    constant("end", [-5], np.int64), constant("axis", [1], np.int64),
                    constant("step", [-1], np.int64), constant("kernel", weights(1, 1, 2, 2, 2))]
    path = make_model(models_dir / "unsupported.onnx", nodes,
                      [tensor_info("x", [2, 4]), tensor_info("volume", [1, 1, 3, 3, 3])],
                      [tensor_info("y", [2, 2]), tensor_info("fancy", [2, 4]),
                       tensor_info("reversed", [2, 4]), tensor_info("conv3d", [1, 1, 2, 2, 2])],
                      initializers, domains=["com.example"])
    with pytest.raises(lamina.CompileError) as error:
        lamina.from_onnx(path)
    assert str(error.value) == "\n  ".join([
        f"{path}: error: 5 ONNX nodes cannot be imported:",
        "node #0 'values' (TopK): not supported",
        "node #2 'mod' (Unique): not supported",
        "node #3 (com.example.Fancy): not supported",
        "node #4 'reversed' (Slice): slice step -1 in dim 1 is not supported (nn.slice takes "
        "steps >= 1)",
        "node #5 'conv3d' (Conv): only 1-D and 2-D windows (inputs of rank 3 or 4) are "
        "supported, got rank 5"])


def test_files_that_are_no_models(tmp_path):
    with pytest.raises(FileNotFoundError):
        lamina.from_onnx(str(tmp_path / "missing.onnx"))
    text = tmp_path / "model.onnx"
    text.write_text("func.func @main() {\n  return\n}\n")
    with pytest.raises(lamina.CompileError, match=r"model\.onnx: error: not an ONNX model"):
        lamina.from_onnx(str(text))
    with pytest.raises(ValueError, match="params must be one of arguments, constants"):
        lamina.from_onnx(str(text), params="weights")


@pytest.mark.parametrize("reverse", [0, 1])
@pytest.mark.parametrize("exclusive", [0, 1])
@pytest.mark.parametrize("elem_type", [TensorProto.FLOAT, TensorProto.INT32])
def test_cumsum_exclusive_and_reverse(elem_type, exclusive, reverse):
    dtype = helper.tensor_dtype_to_np_dtype(elem_type)
    graph = helper.make_graph(
        [node("CumSum", ["x", "axis"], ["y"], exclusive=exclusive, reverse=reverse)], "cumsum",
        [tensor_info("x", [3, 4], elem_type)], [tensor_info("y", [3, 4], elem_type)],
        [constant("axis", 1, np.int64)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    x = (np.arange(12).reshape(3, 4) * 3 - 7).astype(dtype)
    flipped = x[:, ::-1] if reverse else x
    expected = np.cumsum(flipped, axis=1) - (flipped if exclusive else 0)
    expected = expected[:, ::-1] if reverse else expected
    result = lamina.compile(lamina.from_onnx(model, params="constants"))(x)
    assert result.dtype == dtype
    np.testing.assert_array_equal(result, expected)
