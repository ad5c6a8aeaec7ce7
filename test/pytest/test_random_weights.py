"""`--random` draws weights scaled by their fan-in, and `--check` says when a
checked result is degenerate (constant, saturated, one-hot)."""

import os
import subprocess
import sys

import numpy as np
import pytest

import lamina
from lamina.reference import (degeneracy, evaluate, index_bounds, random_inputs,
                              weight_fan_ins)
from lamina.runtime import find_entry
from lamina.types import TensorType, type_view

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONVNET = os.path.join(ROOT, "examples", "convnet.mlir")
BIN = os.path.dirname(sys.executable)

# A weight reached through a transpose (as ONNX's Gemm with transB gives),
# and a marked parameter that feeds no matmul or conv2d.
TRANSPOSED = """
func.func @main(%x: tensor<4x32xf32>, %w: tensor<16x32xf32>,
                %g: tensor<8x16xf32> {lamina.parameter = "g"}) -> (tensor<4x16xf32>, tensor<8x16xf32>) {
  %t = "nn.transpose"(%w) {perm = array<i64: 1, 0>} : (tensor<16x32xf32>) -> tensor<32x16xf32>
  %0 = "nn.matmul"(%x, %t) : (tensor<4x32xf32>, tensor<32x16xf32>) -> tensor<4x16xf32>
  %1 = "nn.relu"(%g) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0, %1 : tensor<4x16xf32>, tensor<8x16xf32>
}
"""

# A softmax of logits no draw keeps small: one-hot whatever the inputs.
SHARP_SOFTMAX = """
func.func @main(%x: tensor<4x10xf32>) -> tensor<4x10xf32> {
  %k = arith.constant dense<1000.0> : tensor<f32>
  %0 = "nn.mul"(%x, %k) : (tensor<4x10xf32>, tensor<f32>) -> tensor<4x10xf32>
  %1 = "nn.softmax"(%0) {axis = -1 : i64} : (tensor<4x10xf32>) -> tensor<4x10xf32>
  return %1 : tensor<4x10xf32>
}
"""


# Token ids into an embedding table of 1000 rows (through a reshape), and an
# integer input that indexes nothing.
EMBEDDING = """
func.func @main(%table: tensor<1000x16xf32>, %ids: tensor<2x64xi64>, %n: tensor<2x64xi64>)
    -> (tensor<128x16xf32>, tensor<2x64xi64>) {
  %flat = "nn.reshape"(%ids) : (tensor<2x64xi64>) -> tensor<128xi64>
  %0 = "nn.gather"(%table, %flat) {axis = 0 : i64} : (tensor<1000x16xf32>, tensor<128xi64>) -> tensor<128x16xf32>
  %1 = "nn.add"(%n, %ids) : (tensor<2x64xi64>, tensor<2x64xi64>) -> tensor<2x64xi64>
  return %0, %1 : tensor<128x16xf32>, tensor<2x64xi64>
}
"""


def test_gather_indices_are_drawn_in_range():
    module = lamina.parse(EMBEDDING)
    assert index_bounds(module) == [None, 1000, None]
    table, ids, other = random_inputs(_inputs(module), seed=4, bounds=index_bounds(module))
    assert ids.min() >= 0 and ids.max() < 1000 and ids.max() > 100
    assert other.min() >= -8 and other.max() <= 8 and other.min() < 0


def _inputs(module):
    func = find_entry(module)
    return [type_view(a.type) for a in func.regions[0].blocks[0].arguments]


def test_weights_are_recognised_by_use_and_mark():
    # image, conv filter 8x3x3x3 and its bias, filter 16x8x3x3 and its bias,
    # the classifier's matrix 144x10 and its bias (added, not a weight).
    assert weight_fan_ins(lamina.parse_file(CONVNET)) == [None, 27, 27, 72, 72, 144, None]
    # The transposed weight's fan-in is K of the matmul (32), not its first dim.
    assert weight_fan_ins(lamina.parse(TRANSPOSED)) == [None, 32, 8]


def test_weights_are_drawn_at_fan_in_scale():
    types = [TensorType((64, 256), "f32"), TensorType((256, 64), "f32")]
    data, weight = random_inputs(types, seed=3, fan_ins=[None, 256])
    assert np.abs(data).max() <= 1 and np.abs(data).max() > 0.99
    bound = np.sqrt(3 / 256)
    assert np.abs(weight).max() <= bound and np.abs(weight).max() > 0.95 * bound
    # Variance 1/fan_in: a layer's outputs are as large as its inputs.
    assert 0.8 < np.std(data @ weight) / np.std(data) < 1.25
    # A weight of fan-in 1 or 2 is drawn no larger than other inputs.
    (small,) = random_inputs([TensorType((1, 64), "f32")], seed=3, fan_ins=[1])
    assert np.abs(small).max() <= 1
    # Without fan-ins the draws are what they were.
    np.testing.assert_array_equal(random_inputs(types, seed=3)[0], data)


def test_convnet_softmax_is_not_one_hot():
    module = lamina.parse_file(CONVNET)
    arrays = random_inputs(_inputs(module), seed=0, fan_ins=weight_fan_ins(module))
    (probabilities,) = evaluate(module, arrays)
    assert probabilities.max() < 0.9 and degeneracy(probabilities) is None
    unscaled = evaluate(module, random_inputs(_inputs(module), seed=0))[0]
    assert degeneracy(unscaled).startswith("one-hot")


@pytest.mark.parametrize("values, verdict", [
    (np.full((3, 4), 2.5, np.float32), "constant"),
    (np.tanh(40 * np.linspace(-1, 1, 100, dtype=np.float32)), "saturated"),
    (np.eye(10, dtype=np.float32)[[1, 3, 5, 7]] * 0.999 + 0.0001, "one-hot"),
    (np.linspace(0, 1, 50, dtype=np.float32), None),
    (np.array([[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]], np.float32), None),
    (np.maximum(np.linspace(-1, 1, 40, dtype=np.float32), 0), None),   # relu: half zeros
    (np.array([True, False, True]), None),                             # not floats
])
def test_degeneracy(values, verdict):
    found = degeneracy(values)
    assert (found is None) if verdict is None else found.startswith(verdict), found


def test_the_fuzzer_draws_what_lamina_run_random_draws():
    from lamina.fuzz import generate_program
    from lamina.fuzz_check import program_inputs
    program = generate_program(1)                    # a matmul of a weight
    module = lamina.parse(program.text())
    expected = random_inputs(_inputs(module), seed=4, fan_ins=weight_fan_ins(module))
    assert any(f is not None for f in weight_fan_ins(module))
    for drawn, wanted in zip(program_inputs(program, 4), expected):
        np.testing.assert_array_equal(drawn, wanted)


def _lamina_run(path, *options):
    return subprocess.run([os.path.join(BIN, "lamina-run"), str(path), *options],
                          capture_output=True, text=True, timeout=300)


def test_lamina_run_random_checks_a_convnet_without_warning():
    result = _lamina_run(CONVNET, "--random", "--check")
    assert result.returncode == 0, result.stderr
    assert "check: all results match the reference" in result.stdout
    assert "warning" not in result.stderr, result.stderr


def test_lamina_run_warns_of_a_degenerate_result(tmp_path):
    path = tmp_path / "sharp.mlir"
    path.write_text(SHARP_SOFTMAX)
    result = _lamina_run(path, "--random", "--check")
    assert result.returncode == 0, result.stderr
    assert ("lamina-run: warning: res0 checks little, its reference is one-hot: 4 of 4 rows "
            "put more than 0.99 on one element") in result.stderr
    assert "warning" not in result.stdout
