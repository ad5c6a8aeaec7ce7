"""bench/run.py's parts that need no timing: the peers compute what Lamina
computes (the transformer block written for jax and torch against the
NumPy reference of examples/attention.mlir), and the table reports rates,
shares of the copy bandwidth, ratios and rows a system cannot run. The
test extra installs torch and jax for it."""

import os
import sys

import numpy as np
import pytest

import lamina
from lamina.reference import evaluate

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, "bench"))
import run  # noqa: E402  (bench/run.py)


@pytest.fixture(scope="module")
def block():
    arrays = run.inputs("block")
    [want] = evaluate(lamina.parse(run.lamina_source("block")), arrays)
    return arrays, want


def assert_close(got, want):
    """Equal up to f32 rounding at the output's scale (the random weights
    make values of a few hundred)."""
    scale = float(np.abs(want).max())
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-5 * scale)


def test_torch_block_is_the_example(block):
    import torch
    import torch.nn.functional as F
    arrays, want = block
    got = run.example_block(torch, [torch.from_numpy(a) for a in arrays],
                            lambda y, axis: torch.softmax(y, dim=axis),
                            lambda y: F.gelu(y, approximate="tanh"), lambda y, p: y.permute(*p))
    assert_close(got.numpy(), want)


def test_jax_block_is_the_example(block):
    import jax
    import jax.numpy as jnp
    arrays, want = block
    got = run.example_block(jnp, [jnp.asarray(a) for a in arrays], jax.nn.softmax,
                            lambda y: jax.nn.gelu(y, approximate=True),
                            lambda y, p: jnp.transpose(y, p))
    assert_close(np.asarray(got), want)


@pytest.mark.parametrize("workload", sorted(run.GROUPS))
def test_grouped_convolutions_are_the_workload(workload):
    # The NumPy and torch versions of the grouped convolutions compute what
    # Lamina's program of the workload means (its reference evaluator).
    import torch
    import torch.nn.functional as F
    x, w = run.inputs(workload)
    [want] = evaluate(lamina.parse(run.lamina_source(workload)), [x, w])
    got = np.empty_like(want)
    run._numpy_function(workload, np)(x, w, got)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    groups = run.GROUPS[workload]
    got = F.conv2d(torch.from_numpy(x), torch.from_numpy(w), padding=1, groups=groups)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-4, atol=1e-4)


def test_pointwise_convolution_is_the_workload():
    import torch
    import torch.nn.functional as F
    x, w = run.inputs("pointwise")
    [want] = evaluate(lamina.parse(run.lamina_source("pointwise")), [x, w])
    got = np.empty_like(want)
    run._numpy_function("pointwise", np)(x, w, got)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    got = F.conv2d(torch.from_numpy(x), torch.from_numpy(w))
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-4, atol=1e-4)


def test_table():
    rows = [
        {"system": "lamina", "workload": "elementwise", "seconds": 0.005,
         "compile_seconds": 0.2, "cached_seconds": 0.01},
        {"system": "numpy", "workload": "elementwise", "seconds": 0.02, "compile_seconds": None},
        {"system": "jax", "workload": "elementwise", "seconds": 0.01, "compile_seconds": 0.1},
        {"system": "numpy", "workload": "matmul1024_bf16", "absent": "NumPy has no bf16 matmul"},
        {"system": "torch_compile", "missing": "No module named 'torch'"},
    ]
    text = run.table(rows, ["elementwise", "matmul1024_bf16"],
                     ["lamina", "numpy", "jax", "torch_compile"], 2, bandwidth=50.0)
    lines = text.splitlines()
    # 5 arrays of 64 MiB in 5 ms: 67.1 GB/s, 134% of 50 GB/s; 4x NumPy, 2x jax.
    assert "| elementwise | lamina | 5.00 | 67.1 GB/s | 134% | 4.00 | 2.00 | 200 | 10 |" in lines
    assert "| elementwise | numpy | 20.00 | 16.8 GB/s | 34% | 1.00 | 0.50 | - | - |" in lines
    assert "| matmul1024_bf16 | numpy | - (NumPy has no bf16 matmul) | | | | | | |" in lines
    assert lines[-1] == "torch_compile: missing (No module named 'torch')"


@pytest.mark.parametrize("workload", sorted(run.LINEAR))
def test_linear_layers_are_the_workload(workload):
    # NumPy, jax and torch compute what Lamina's program of each linear
    # layer means, 3-D activations included; NumPy's gelu is the tanh form
    # (it has no erf), within 1e-3 of the exact one at these values' scale.
    import jax.numpy as jnp
    import torch
    arrays = run.inputs(workload)
    [want] = evaluate(lamina.parse(run.lamina_source(workload)), arrays)
    assert want.shape == run._output_shape(workload)
    got = np.empty_like(want)
    run._numpy_function(workload, np)(*arrays, got)
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-3)
    got = run.jax_function(workload)(*[jnp.asarray(a) for a in arrays])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=1e-3)
    with torch.no_grad():
        got = run.torch_function(workload)(*[torch.from_numpy(a) for a in arrays])
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-4, atol=1e-3)


def test_target_option_names_lamina_target():
    assert run.lamina_target_spec("cpu", 2) == "cpu:threads=2"
    assert run.lamina_target_spec("cpu:x86-64-v3", 1) == "cpu:x86-64-v3,threads=1"
    assert run.lamina_target_spec("cpu:znver4,-avx512f", 2) == "cpu:znver4,-avx512f,threads=2"
    with pytest.raises(SystemExit):
        run.main(["--target=cpu:bogus", "--workloads", "matmul512"])
    with pytest.raises(SystemExit):
        run.main(["--target=cpu:aarch64", "--workloads", "matmul512"])
    with pytest.raises(SystemExit):
        run.main(["--target=cuda:sm_80", "--workloads", "matmul512"])


def test_lamina_runs_the_target_option(monkeypatch):
    monkeypatch.setenv("LAMINA_BENCH_TARGET", "cpu:x86-64-v3")
    targets = []
    real = lamina.get_target
    monkeypatch.setattr(lamina, "get_target", lambda spec: targets.append(spec) or real(spec))
    monkeypatch.setattr(run, "measure", lambda call, **_: (call(), 1.0)[1])
    seconds, _, _ = run.run_lamina("matmul512", 1)
    assert seconds == 1.0
    assert targets[0] == "cpu:x86-64-v3,threads=1"


def test_int8_rows_compute_the_workload():
    # onnxruntime's MatMulInteger is the exact i32 product of the int8
    # inputs, and Lamina's program is nn.matmul's i8 x i8 -> i32 on them
    # (f64 products of these integers are exact: |sums| < 2**53).
    onnxruntime = pytest.importorskip("onnxruntime")
    a, b = run.inputs("matmul1024_int8")
    assert a.dtype == b.dtype == np.int8
    want = (a.astype(np.float64) @ b.astype(np.float64)).astype(np.int32)
    session = onnxruntime.InferenceSession(run.onnxruntime_model("matmul1024_int8"),
                                           providers=["CPUExecutionProvider"])
    np.testing.assert_array_equal(session.run(None, {"a": a, "b": b})[0], want)
    module = lamina.parse(run.lamina_source("matmul1024_int8"))
    assert "(tensor<1024x1024xi8>, tensor<1024x1024xi8>) -> tensor<1024x1024xi32>" in str(module)
    assert run.work("matmul1024_int8") == (2.0 * 1024 ** 3, "GOP/s")
    with pytest.raises(NotImplementedError):
        run.onnxruntime_model("matmul1024")


@pytest.mark.parametrize("workload", ["conv2d_int8", "pointwise_int8"])
def test_int8_convolution_rows_compute_the_workload(workload):
    # onnxruntime's ConvInteger and Lamina's nn.conv2d (ui8 x i8 -> i32) of
    # the same inputs: the same exact sums.
    onnxruntime = pytest.importorskip("onnxruntime")
    x, w = run.inputs(workload)
    assert x.dtype == np.uint8 and w.dtype == np.int8
    session = onnxruntime.InferenceSession(run.onnxruntime_model(workload),
                                           providers=["CPUExecutionProvider"])
    want = session.run(None, {"a": x, "b": w})[0]
    got = lamina.compile(lamina.parse(run.lamina_source(workload)))(x, w)
    np.testing.assert_array_equal(got, want)
    float_workload = workload.removesuffix("_int8")
    assert run.work(workload) == (run.work(float_workload)[0], "GOP/s")
