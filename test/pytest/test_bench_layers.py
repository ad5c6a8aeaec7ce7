"""bench/layers.py's parts that need no timing: the layers it finds in a
model (distinct shapes and parameters, with counts), their FLOPs and
modules, one system's failure reported in its row, and the table's ratios,
shares and order. torchvision, onnxruntime and openvino come with the test
and bench extras."""

import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, "bench"))
import layers  # noqa: E402  (bench/layers.py)


def test_resnet18_layers_are_distinct_with_counts():
    found = layers.model_layers("resnet18")
    stem = layers.Layer("conv", (1, 3, 224, 224), (3, 64, (7, 7), (2, 2), (3, 3), 1, (1, 1)))
    assert list(found)[0] == stem and found[stem] == 1
    # Four 3x3 64->64 convolutions at 56x56, two per basic block of the first stage.
    block = layers.Layer("conv", (1, 64, 56, 56), (64, 64, (3, 3), (1, 1), (1, 1), 1, (1, 1)))
    assert found[block] == 4
    assert sum(found.values()) == 21  # 20 convolutions and the classifier
    assert layers.Layer("linear", (1, 512), (512, 1000)) in found
    assert stem.describe() == "conv 7x7 3->64 at 224x224 stride 2"
    # 2 x 64 x 112 x 112 x 3 x 7 x 7 multiply-adds.
    assert stem.gflop() == pytest.approx(2 * 64 * 112 * 112 * 3 * 49 / 1e9)


def test_depthwise_layer_is_named_and_counted_per_channel():
    layer = layers.Layer("conv", (1, 32, 112, 112), (32, 32, (3, 3), (1, 1), (1, 1), 32, (1, 1)))
    assert layer.describe() == "conv 3x3 32->32 at 112x112 depthwise"
    assert layer.gflop() == pytest.approx(2 * 32 * 112 * 112 * 9 / 1e9)


def test_a_system_that_fails_says_why_and_the_others_are_timed(monkeypatch):
    prepare = layers.prepare

    def failing(system, *args):
        if system == "openvino":
            raise RuntimeError("no such device\nsecond line")
        return prepare(system, *args)
    monkeypatch.setattr(layers, "prepare", failing)
    layer = layers.Layer("linear", (1, 64), (64, 32))
    results = layers.time_layer(layer, ["lamina", "onnxruntime", "openvino"], threads=1,
                                rounds=1, budget=0.01)
    assert results["openvino"] == "RuntimeError: no such device"
    for system in ("lamina", "onnxruntime"):
        best, median = results[system]
        assert 0 < best <= median


def test_table_orders_by_share_with_ratios():
    small = layers.Layer("linear", (1, 64), (64, 32))
    large = layers.Layer("conv", (1, 8, 16, 16), (8, 8, (3, 3), (1, 1), (1, 1), 1, (1, 1)))
    rows = [(small, 1, {"lamina": (0.001, 0.002), "onnxruntime": (0.001, 0.001),
                        "openvino": "RuntimeError: no"}),
            (large, 3, {"lamina": (0.002, 0.002), "onnxruntime": (0.003, 0.004),
                        "openvino": (0.002, 0.003)})]
    lines = layers.table("m", rows, ["lamina", "onnxruntime", "openvino"]).splitlines()
    assert lines[2].startswith("| conv 3x3 8->8 at 16x16 | 3 |")
    # The faster engine's median over Lamina's; 3 x 2 ms of 8 ms in all.
    assert lines[2].endswith("| 1.50 | 75.0% |")
    assert lines[3].endswith("| RuntimeError: no | 0.50 | 25.0% |")
