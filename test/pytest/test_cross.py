"""Programs compiled for AArch64 on this machine and run under QEMU
(lamina.targets.cross), from Python."""

import shutil

import numpy as np
import pytest

import lamina
from lamina.diagnostics import CompileError
from lamina.targets import get_target
from lamina.targets.cross import driver_source, emulator_command
from lamina.types import TensorType

needs_qemu = pytest.mark.skipif(
    not (shutil.which("qemu-aarch64") and shutil.which("aarch64-linux-gnu-gcc")),
    reason="qemu-aarch64 and aarch64-linux-gnu-gcc are not installed")

SOURCE = """
func.func @main(%x: tensor<5x12xf32>, %w: tensor<12x8xf32>, %m: tensor<5x8xi1>)
    -> (tensor<5x8xf32>, tensor<5xf32>) {
  %0 = "nn.matmul"(%x, %w) : (tensor<5x12xf32>, tensor<12x8xf32>) -> tensor<5x8xf32>
  %1 = "nn.tanh"(%0) : (tensor<5x8xf32>) -> tensor<5x8xf32>
  %z = arith.constant dense<0.0> : tensor<5x8xf32>
  %2 = "nn.select"(%m, %1, %z) : (tensor<5x8xi1>, tensor<5x8xf32>, tensor<5x8xf32>) -> tensor<5x8xf32>
  %3 = "nn.reduce_sum"(%2) {axes = array<i64: 1>} : (tensor<5x8xf32>) -> tensor<5xf32>
  return %2, %3 : tensor<5x8xf32>, tensor<5xf32>
}
"""


@needs_qemu
@pytest.mark.parametrize("spec", ["cpu:aarch64", "cpu:aarch64-sve256", "cpu:aarch64+sve"])
def test_emulated_function_matches_numpy(spec):
    function = lamina.compile(SOURCE, target=spec)
    assert "qemu-aarch64" in function.describe()
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, (5, 12)).astype(np.float32)
    w = rng.uniform(-1, 1, (12, 8)).astype(np.float32)
    mask = rng.uniform(size=(5, 8)) > 0.5
    masked, sums = function(x, w, mask)
    expected = np.where(mask, np.tanh(x @ w), 0)
    np.testing.assert_allclose(masked, expected, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(sums, expected.sum(axis=1), rtol=1e-4, atol=1e-5)
    with pytest.raises(TypeError, match="runs under emulation"):
        function.bind([x])


def test_missing_emulator_names_the_packages(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(CompileError, match="apt-get install qemu-user gcc-aarch64-linux-gnu"):
        emulator_command(get_target("cpu:aarch64").model)


@needs_qemu
def test_emulator_runs_each_model_at_its_vector_length():
    assert emulator_command(get_target("cpu:aarch64").model)[1:] == ["-cpu", "max,sve=off"]
    assert emulator_command(get_target("cpu:aarch64-sve512").model)[1:] == [
        "-cpu", "max,sve-default-vector-length=64"]
    assert emulator_command(get_target("cpu:aarch64+sve").model)[1:] == [
        "-cpu", "max,sve-default-vector-length=32"]


def test_driver_passes_every_argument_and_result():
    source = driver_source("f", [TensorType((2, 3), "f32"), TensorType((), "i64")],
                           [TensorType((4,), "bf16")])
    assert "void _mlir_ciface_f(memref2_t *, memref0_t *, memref1_t *);" in source
    assert 'buffer(argv[1], "arg0.bin", 24, 1)' in source
    assert 'buffer(argv[1], "arg1.bin", 8, 1)' in source
    assert 'save(argv[1], "res0.bin", v2.aligned, 8)' in source
    assert "v0.sizes[1] = 3; v0.strides[1] = 1;" in source


@needs_qemu
def test_vector_length_agnostic_code_runs_at_every_length():
    """cpu:aarch64+sve code is scalable: the same executable matches NumPy
    at SVE lengths of 128 to 2048 bits, the tails masked (37 columns)."""
    source = """
func.func @main(%a: tensor<5x37xf32>, %b: tensor<37xf32>) -> tensor<5x37xf32> {
  %0 = "nn.add"(%a, %b) : (tensor<5x37xf32>, tensor<37xf32>) -> tensor<5x37xf32>
  %1 = "nn.relu"(%0) : (tensor<5x37xf32>) -> tensor<5x37xf32>
  %2 = "nn.exp"(%1) : (tensor<5x37xf32>) -> tensor<5x37xf32>
  return %2 : tensor<5x37xf32>
}
"""
    assert "vector<1x[16]xf32>" in str(get_target("cpu:aarch64+sve").emit(lamina.parse(source),
                                                                           "tiled"))
    function = lamina.compile(source, target="cpu:aarch64+sve")
    rng = np.random.default_rng(1)
    a = rng.uniform(-1, 1, (5, 37)).astype(np.float32)
    b = rng.uniform(-1, 1, 37).astype(np.float32)
    expected = np.exp(np.maximum(a + b, 0))
    for vector_bytes in (16, 32, 64, 256):
        function.command[-1] = f"max,sve-default-vector-length={vector_bytes}"
        np.testing.assert_allclose(function(a, b), expected, rtol=1e-5, atol=1e-6)
