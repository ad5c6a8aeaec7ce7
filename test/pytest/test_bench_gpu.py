"""bench/gpu.py's whole-program rows without a GPU: the set is the
examples and the three models the issue names, an example's row runs its
launch graph in the CPU emulation and matches NumPy, and a model's row
(the GPT-2-small-sized block) imports whole and reports its memory plan,
its peak below the bytes its buffers would take apart."""

import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, "bench"))
import gpu  # noqa: E402  (bench/gpu.py)


def test_the_program_set():
    assert gpu.model_names() == [
        "examples/mlp.mlir", "examples/attention.mlir", "examples/llama_block.mlir",
        "examples/convnet.mlir", "examples/odd_shapes.mlir",
        "GPT-2-small block, 8x1024 tokens", "Llama-style block, 8x1024 tokens",
        "ResNet-50, batch 32"]


def test_an_example_row_runs_in_the_emulation():
    row = gpu.model_row(gpu.model_names().index("examples/convnet.mlir"), "sm_80", None,
                        emulate=True, runs=1)
    assert row["result"] == "ok (CPU emulation)"
    assert row["launches"] == 6 and 0 < row["arena_bytes"] < row["buffer_bytes"]
    assert "| examples/convnet.mlir | sm_80 | 6 |" in gpu.model_table([row])


def test_a_model_row_reports_its_plan():
    row = gpu.model_row(gpu.model_names().index("GPT-2-small block, 8x1024 tokens"), "sm_90a",
                        None, emulate=True, runs=1)
    assert row["result"].startswith("needs a GPU")
    assert row["launches"] >= 5 and row["buffers"] >= 5
    assert 0 < row["arena_bytes"] < row["buffer_bytes"]
