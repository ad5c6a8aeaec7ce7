"""Weights bound once: `lamina.compile(module).bind(weights)` runs what
depends on the weights alone (batch norms folded into filters, filter
transposes) in an initialiser, once, and the bound function takes the
other arguments.

Bound and unbound calls compute the same sums in other orders (a batch
norm's scale applied to the filter instead of to the sums), so they are
compared at float32's tolerance of Lamina's checks (rtol 1e-4, atol 1e-5
scaled by the largest magnitude), and against the NumPy reference
interpreter at the same tolerance.
"""

from __future__ import annotations

import numpy as np
import pytest

import lamina
from lamina.reference import compare, evaluate
from lamina.runtime import CompiledFunction

# A convolution then an inference batch norm, as the importers build it
# (`y * scale + shift`, scale and shift from the statistics), then a
# ReLU and a linear layer whose weight is transposed: every weight an
# argument named as from_torch names them.
PROGRAM = """
func.func @main(%w: tensor<8x3x3x3xf32> {lamina.parameter = "conv.weight"},
                %gamma: tensor<8xf32> {lamina.parameter = "bn.weight"},
                %beta: tensor<8xf32> {lamina.parameter = "bn.bias"},
                %mean: tensor<8xf32> {lamina.parameter = "bn.running_mean"},
                %var: tensor<8xf32> {lamina.parameter = "bn.running_var"},
                %fc: tensor<5x128xf32> {lamina.parameter = "fc.weight"},
                %x: tensor<1x3x6x6xf32>) -> tensor<1x5xf32> {
  %eps = arith.constant dense<1.0e-05> : tensor<f32>
  %y = "nn.conv2d"(%x, %w) : (tensor<1x3x6x6xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x4x4xf32>
  %0 = "nn.add"(%var, %eps) : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %1 = "nn.rsqrt"(%0) : (tensor<8xf32>) -> tensor<8xf32>
  %scale = "nn.mul"(%1, %gamma) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %2 = "nn.mul"(%mean, %scale) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %shift = "nn.sub"(%beta, %2) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %s = "nn.reshape"(%scale) : (tensor<8xf32>) -> tensor<8x1x1xf32>
  %t = "nn.reshape"(%shift) : (tensor<8xf32>) -> tensor<8x1x1xf32>
  %3 = "nn.mul"(%y, %s) : (tensor<1x8x4x4xf32>, tensor<8x1x1xf32>) -> tensor<1x8x4x4xf32>
  %4 = "nn.add"(%3, %t) : (tensor<1x8x4x4xf32>, tensor<8x1x1xf32>) -> tensor<1x8x4x4xf32>
  %5 = "nn.relu"(%4) : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %6 = "nn.reshape"(%5) : (tensor<1x8x4x4xf32>) -> tensor<1x128xf32>
  %fct = "nn.transpose"(%fc) {perm = array<i64: 1, 0>} : (tensor<5x128xf32>) -> tensor<128x5xf32>
  %7 = "nn.matmul"(%6, %fct) : (tensor<1x128xf32>, tensor<128x5xf32>) -> tensor<1x5xf32>
  return %7 : tensor<1x5xf32>
}
"""

NAMES = ["conv.weight", "bn.weight", "bn.bias", "bn.running_mean", "bn.running_var", "fc.weight"]


def _weights(seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((8, 3, 3, 3)).astype(np.float32),
            rng.uniform(0.5, 2.0, 8).astype(np.float32),
            rng.standard_normal(8).astype(np.float32),
            rng.standard_normal(8).astype(np.float32),
            rng.uniform(0.5, 2.0, 8).astype(np.float32),
            rng.standard_normal((5, 128)).astype(np.float32)]


def _input(seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((1, 3, 6, 6)).astype(np.float32)


@pytest.fixture(scope="module")
def compiled():
    return lamina.compile(PROGRAM)


def test_bound_equals_unbound_and_reference(compiled):
    weights, x = _weights(), _input()
    unbound = compiled(*weights, x)
    bound = compiled.bind(weights)
    assert [t.shape for t in bound.inputs] == [(1, 3, 6, 6)]
    result = bound(x)
    assert compare(result, unbound, "f32").ok
    expected = evaluate(lamina.parse(PROGRAM), weights + [x])[0]
    assert compare(result, expected, "f32").ok, compare(result, expected, "f32")


def test_initializer_runs_once(compiled, monkeypatch):
    calls = []
    run = CompiledFunction.call_with_results

    def counted(self, arrays, results):
        calls.append(self.name)
        return run(self, arrays, results)

    monkeypatch.setattr(CompiledFunction, "call_with_results", counted)
    bound = compiled.bind(_weights())
    for seed in range(3):
        bound(_input(seed))
    assert calls == [bound.initializer.name, "main", "main", "main"]


def test_main_takes_prepared_weights(compiled):
    """The batch norm is folded into the filter and the transposes run in
    the initialiser: the main function's prepared weights are the scaled
    filter in the convolution's layout (HWCF), the shift, and the linear
    weight in the layout of its contraction (transposed, its rows
    [C*H*W] split as the flattened activations are); no statistics."""
    bound = compiled.bind(_weights())
    shapes = [tuple(p.shape) for p in bound.prepared]
    assert len(shapes) == 3 and (3, 3, 3, 8) in shapes and (8, 1, 1) in shapes, shapes
    assert sorted(p.size for p in bound.prepared) == [8, 216, 640], shapes
    weights = _weights()
    scale = weights[1] / np.sqrt(weights[4] + np.float32(1e-5))
    filters = [p for p in bound.prepared if p.shape == (3, 3, 3, 8)][0]
    np.testing.assert_allclose(filters, (weights[0] * scale[:, None, None, None])
                               .transpose(2, 3, 1, 0), rtol=1e-5, atol=1e-6)


def test_bind_by_name_and_position(compiled):
    weights, x = _weights(), _input()
    expected = compiled.bind(weights)(x)
    named = compiled.bind({name: w for name, w in zip(NAMES, weights)})
    np.testing.assert_array_equal(named(x), expected)
    # Bind all but the filter: the filter becomes the first argument.
    some = compiled.bind({i: w for i, w in enumerate(weights) if i != 0})
    assert [t.shape for t in some.inputs] == [(8, 3, 3, 3), (1, 3, 6, 6)]
    assert compare(some(weights[0], x), expected, "f32").ok


def test_bound_weights_are_copied(compiled):
    """The bound function owns its prepared weights: changing the arrays
    given to bind() afterwards changes nothing."""
    weights, x = _weights(), _input()
    bound = compiled.bind(weights)
    before = bound(x)
    for w in weights:
        w[...] = 0
    np.testing.assert_array_equal(bound(x), before)


def test_bind_errors(compiled):
    with pytest.raises(ValueError, match="no argument named 'bn.scale'"):
        compiled.bind({"bn.scale": np.zeros(8, np.float32)})
    with pytest.raises(ValueError, match=r"argument #1: expected tensor<8xf32>"):
        compiled.bind({1: np.zeros(7, np.float32)})
    with pytest.raises(ValueError, match="binding every argument"):
        compiled.bind(_weights() + [_input()])
    with pytest.raises(TypeError, match="not one array"):
        compiled.bind(_weights()[0])
    with pytest.raises(ValueError, match="bound twice"):
        compiled.bind({0: _weights()[0], "conv.weight": _weights()[0]})


LINEAR = """
func.func @main(%x: tensor<16x128xf32>, %w: tensor<128x64xf32> {lamina.parameter = "w"})
    -> tensor<16x64xf32> {
  %y = "nn.matmul"(%x, %w) : (tensor<16x128xf32>, tensor<128x64xf32>) -> tensor<16x64xf32>
  %z = "nn.relu"(%y) : (tensor<16x64xf32>) -> tensor<16x64xf32>
  return %z : tensor<16x64xf32>
}
"""


def test_packed_panels_are_prepared_once():
    """A bound matmul weight is packed into the contraction schedule's
    panels in the initialiser: the prepared weight is 3-D, and the bound
    call sums in the same order as the unbound one (equal results)."""
    rng = np.random.default_rng(2)
    x = rng.standard_normal((16, 128)).astype(np.float32)
    w = rng.standard_normal((128, 64)).astype(np.float32)
    f = lamina.compile(LINEAR)
    bound = f.bind({"w": w})
    assert len(bound.prepared) == 1 and bound.prepared[0].ndim == 3, \
        [p.shape for p in bound.prepared]
    np.testing.assert_array_equal(bound(x), f(x, w))


def test_marks_in_the_source_do_not_bind():
    """`lamina.bound` in the program itself binds nothing: compile() takes
    every argument (bind() sets the marks on a copy)."""
    program = PROGRAM.replace('{lamina.parameter = "conv.weight"}',
                              '{lamina.bound, lamina.parameter = "conv.weight"}')
    weights, x = _weights(), _input()
    result = lamina.compile(program)(*weights, x)
    expected = evaluate(lamina.parse(PROGRAM), weights + [x])[0]
    assert compare(result, expected, "f32").ok


def test_prepared_weights_are_aligned(compiled):
    from lamina.runtime import WEIGHT_ALIGNMENT
    bound = compiled.bind(_weights())
    assert all(p.ctypes.data % WEIGHT_ALIGNMENT == 0 and p.flags.c_contiguous
               for p in bound.prepared)


@pytest.mark.parametrize("params", ["constants", "arguments"])
def test_batch_norms_after_conv_and_linear_from_torch(params):
    """Batch norms after a convolution and after a linear layer, from
    PyTorch: folded into the weights at compile time (constants) or at
    bind time (arguments), and equal to eager PyTorch at rtol = atol = 1e-4."""
    torch = pytest.importorskip("torch")
    from lamina.importers.torch_import import weights

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(3, 8, 3, bias=True)
            self.bn = torch.nn.BatchNorm2d(8)
            self.fc = torch.nn.Linear(8 * 4 * 4, 6)
            self.bn1d = torch.nn.BatchNorm1d(6)

        def forward(self, x):
            y = torch.relu(self.bn(self.conv(x)))
            return self.bn1d(self.fc(y.flatten(1)))

    torch.manual_seed(0)
    model = Model().eval()
    with torch.no_grad():
        for bn in (model.bn, model.bn1d):
            bn.running_mean.uniform_(-0.5, 0.5)
            bn.running_var.uniform_(0.5, 2.0)
            bn.weight.uniform_(0.5, 1.5)
            bn.bias.uniform_(-0.2, 0.2)
    x = torch.randn(2, 3, 6, 6)
    with torch.no_grad():
        expected = model(x).numpy()
    module = lamina.from_torch(model, (x,), params=params)
    nn_ops = str(lamina.get_target("cpu").emit(module, "nn"))
    f = lamina.compile(module)
    if params == "constants":
        assert '"nn.mul"' not in nn_ops and '"nn.rsqrt"' not in nn_ops
        result = f(x.numpy())
    else:
        result = f.bind(weights(module, model))(x.numpy())
    np.testing.assert_allclose(result, expected, rtol=1e-4, atol=1e-4)
