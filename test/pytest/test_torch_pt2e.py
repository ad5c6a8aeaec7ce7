"""PyTorch 2 export quantisation through `from_torch`: a model quantised with
torchao's `prepare_pt2e` / `convert_pt2e` and X86InductorQuantizer (uint8
activations per tensor, int8 weights per output channel) imports as
nn.quantize / nn.dequantize, compiles, and matches the quantised model in
eager PyTorch; `nn-fuse-qdq` turns its linears into integer matmuls.

Tolerance: PyTorch computes each linear in f32 on the dequantised values,
and so does the imported program unfused; the two sum in different orders,
which can move a hidden activation that sits within an f32 rounding of a
quantisation tie by one step. Outputs must agree to 1e-5 except for such a
step, which moves an output by at most the hidden activation's scale times
the largest weight of the layer after it (`_one_step`)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import lamina
from lamina.pass_registry import get_pass

pt2e = pytest.importorskip("torchao.quantization.pt2e.quantize_pt2e")
x86 = pytest.importorskip("torchao.quantization.pt2e.quantizer.x86_inductor_quantizer")


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(64, 96)
        self.fc2 = torch.nn.Linear(96, 48)
        self.fc3 = torch.nn.Linear(48, 10)

    def forward(self, x):
        return self.fc3(torch.relu(self.fc2(torch.relu(self.fc1(x)))))


def _quantized(model: torch.nn.Module, example: torch.Tensor) -> torch.fx.GraphModule:
    torch.manual_seed(1)
    exported = torch.export.export(model.eval(), (example,)).module()
    quantizer = x86.X86InductorQuantizer()
    quantizer.set_global(x86.get_default_x86_inductor_quantization_config())
    prepared = pt2e.prepare_pt2e(exported, quantizer)
    for _ in range(4):
        prepared(torch.randn_like(example))  # calibration
    return pt2e.convert_pt2e(prepared)


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    example = torch.randn(8, 64)
    return _quantized(MLP(), example), example


def _one_step(quantized: torch.fx.GraphModule) -> float:
    """The most one hidden activation's quantisation step moves an output:
    the largest activation scale times the largest dequantised weight."""
    scales, weights = [], []
    for node in quantized.graph.nodes:
        if node.target == torch.ops.quantized_decomposed.quantize_per_tensor.default:
            scales.append(float(node.args[1]))
        if node.target == torch.ops.quantized_decomposed.dequantize_per_channel.default:
            q, s = (getattr(quantized, a.target) for a in node.args[:2])
            weights.append(float((q.float() * s[:, None]).abs().max()))
    return max(scales) * max(weights)


def _check(actual: np.ndarray, expected: np.ndarray, step: float) -> None:
    difference = np.abs(actual - expected)
    close = difference <= 1e-5 + 1e-5 * np.abs(expected)
    assert np.all(close | (difference <= step)), difference.max()
    assert close.mean() > 0.99, f"{(~close).sum()} outputs off by a quantisation step"


def test_the_quantised_graph_imports_as_quantize_and_dequantize(model):
    quantized, example = model
    text = str(lamina.from_torch(quantized, (example,), params="constants"))
    assert text.count('"nn.quantize"') == 3  # the input and two hidden activations
    assert text.count('"nn.dequantize"') == 6  # three activations, three weights
    assert "tensor<96x64xi8>" in text and "xui8>" in text


@pytest.mark.parametrize("params", ["constants", "arguments"])
def test_matches_the_quantised_model_in_eager(model, params):
    quantized, example = model
    module = lamina.from_torch(quantized, (example,), params=params)
    f = lamina.compile(module)
    weights = [] if params == "constants" else lamina.importers.torch_import.weights(module,
                                                                                     quantized)
    for seed in range(3):
        torch.manual_seed(10 + seed)
        x = torch.randn(8, 64) * 2
        expected = quantized(x).detach().numpy()
        _check(f(*weights, x.numpy()), expected, _one_step(quantized))


def test_fused_into_integer_matmuls(model):
    """nn-fuse-qdq: every linear becomes an i8 product with an i32
    accumulator (the last one in the float form), and the result still
    matches eager within a step."""
    quantized, example = model
    module = lamina.from_torch(quantized, (example,), params="constants")
    with module.context:
        assert get_pass("nn-fuse-qdq").apply(module.operation)
        assert get_pass("nn-fold-constants").apply(module.operation)
    text = str(module)
    assert text.count("xi32>") >= 3 and "tensor<8x64xf32>, tensor<64x96xf32>" not in text
    assert '"nn.dequantize"' not in text
    f = lamina.compile(module)
    x = torch.randn(8, 64)
    _check(f(x.numpy()), quantized(x).detach().numpy(), _one_step(quantized))


class _Ranged(torch.nn.Module):
    """quantize_per_tensor / per_channel with a range narrower than the
    type's (0..127 of uint8, -64..63 of int8), written by hand."""

    def forward(self, x, w):
        ops = torch.ops.quantized_decomposed
        q = ops.quantize_per_tensor.default(x, 0.05, 3, 0, 127, torch.uint8)
        y = ops.dequantize_per_tensor.default(q, 0.05, 3, 0, 127, torch.uint8)
        scales, zeros = torch.tensor([0.02, 0.04, 0.08]), torch.tensor([0, 1, -2])
        qw = ops.quantize_per_channel.default(w, scales, zeros, 0, -64, 63, torch.int8)
        return y, ops.dequantize_per_channel.default(qw, scales, zeros, 0, -64, 63, torch.int8)


def test_narrow_ranges_and_per_channel_quantisation_are_exact():
    x = torch.linspace(-3, 9, 240).reshape(4, 60)
    w = torch.linspace(-6, 6, 3 * 20).reshape(3, 20)
    module = lamina.from_torch(_Ranged(), (x, w))
    actual = lamina.compile(module)(x.numpy(), w.numpy())
    for a, e in zip(actual, _Ranged()(x, w)):
        np.testing.assert_array_equal(a, e.numpy())


def test_other_quantised_types_are_an_error():
    class Int16(torch.nn.Module):
        def forward(self, x):
            return torch.ops.quantized_decomposed.quantize_per_tensor.default(
                x, 0.1, 0, -32768, 32767, torch.int16)

    with pytest.raises(lamina.CompileError, match="quantisation to int16"):
        lamina.from_torch(Int16(), (torch.randn(4),))
