"""bench/quantized.py end to end on a two-convolution network: the QDQ
model made by ONNX Runtime's quantize_static, every system timed (or saying
why it failed), Lamina's fused int8 program within a few output
quantisation steps of ONNX Runtime's, and the table written."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, "bench"))
import quantized  # noqa: E402  (bench/quantized.py)


def test_tiny_model_runs_on_every_system(tmp_path):
    output = tmp_path / "results.md"
    assert quantized.main(["--models", "tiny", "--rounds", "1", "--budget", "0.01",
                           "--output", str(output)]) == 0
    text = output.read_text()
    for system in quantized.SYSTEMS:
        assert f"| tiny | 2 | {system} |" in text
    assert "fails" not in text


def test_lamina_matches_onnxruntime_within_output_steps(tmp_path):
    rows = quantized.measure("tiny", ["onnxruntime", "lamina", "lamina-f32"], 1, 1, 0.01,
                             str(tmp_path))
    for row in rows:
        assert "error" not in row, row
        # The output is dequantised from uint8: a few of its steps (1/255
        # of its range each) at most, where ORT's int8 kernels round ties
        # another way.
        assert row["difference"] < 0.05, row
