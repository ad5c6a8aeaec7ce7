"""The per-group profile (lamina.profile, `lamina-run --profile`): every
fusion group and every op outside groups is timed alone, repeated groups
are compiled once, layout changes are found and classified, and the table
reaches stdout and the HTML report. Times are not compared with anything
(the benchmarks do that): only that they were measured."""

from __future__ import annotations

import os
import subprocess
import sys

import lamina
from lamina.profile import profile
from lamina.targets import get_target

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONVNET = os.path.join(ROOT, "examples", "convnet.mlir")
TOOLS = os.path.dirname(sys.executable)

# Two linear layers of the same shapes, then a third of others: the second
# repeats the first's group and is compiled once; the third, alone in no
# group, is an op of its own.
REPEATED = """func.func @main(%x: tensor<8x32xf32>, %w0: tensor<32x32xf32>, %w1: tensor<32x32xf32>,
                %w2: tensor<32x16xf32>) -> tensor<8x16xf32> {
  %0 = "nn.matmul"(%x, %w0) : (tensor<8x32xf32>, tensor<32x32xf32>) -> tensor<8x32xf32>
  %1 = "nn.relu"(%0) : (tensor<8x32xf32>) -> tensor<8x32xf32>
  %2 = "nn.matmul"(%1, %w1) : (tensor<8x32xf32>, tensor<32x32xf32>) -> tensor<8x32xf32>
  %3 = "nn.relu"(%2) : (tensor<8x32xf32>) -> tensor<8x32xf32>
  %4 = "nn.matmul"(%3, %w2) : (tensor<8x32xf32>, tensor<32x16xf32>) -> tensor<8x16xf32>
  return %4 : tensor<8x16xf32>
}
"""


def _fast(module):
    return profile(module, get_target("cpu:threads=1"), min_seconds=0.01)


def test_convnet_groups_and_layout_changes():
    found = _fast(lamina.parse(CONVNET))
    by_name = {group.name: group for group in found.groups}
    assert [g.kind for g in found.groups if g.kind != "op"] == [
        "convolution", "convolution", "contraction", "reduction"]
    assert {g.ops[0] for g in found.groups if g.kind == "op"} >= {
        "nn.max_pool2d", "nn.avg_pool2d", "nn.reshape"}
    assert by_name["fusion_0"].ops == ["nn.conv2d", "nn.relu"]
    assert "convnet.mlir" in by_name["fusion_0"].location
    assert all(group.seconds > 0 for group in found.groups)
    # The convolutions compute channels-last: their filters (weight
    # arguments) change layout inside their groups, ...
    changes = by_name["fusion_0"].layout_changes
    assert [(c.source, c.permutation, c.weights) for c in changes] == [
        ("tensor<8x3x3x3xf32>", (2, 3, 1, 0), True)]
    assert all(c.seconds > 0 for c in changes)
    # ... and the activations at the edges of the channels-last region,
    # in transposes of their own, whose time is theirs.
    edges = [g for g in found.groups if g.ops == ["nn.transpose"]]
    assert [[(c.source, c.permutation, c.weights) for c in g.layout_changes]
            for g in edges] == [[("tensor<1x3x16x16xf32>", (0, 2, 3, 1), False)],
                                [("tensor<1x3x3x16xf32>", (0, 3, 1, 2), False)]]
    assert all(g.layout_changes[0].seconds == g.seconds for g in edges)
    assert by_name["fusion_2"].layout_changes == []
    table = found.table()
    assert table.splitlines()[0].startswith("| group | kind | ops |")
    assert "conv2d+relu" in table and f"{len(found.groups)} groups, " in table
    assert found.total_seconds == sum(g.seconds for g in found.groups)


def test_repeated_groups_are_compiled_once():
    found = _fast(lamina.parse(REPEATED))
    assert [(g.name, g.kind, g.ops, g.same_as) for g in found.groups] == [
        ("fusion_0", "contraction", ["nn.matmul", "nn.relu"], None),
        ("fusion_1", "contraction", ["nn.matmul", "nn.relu"], "fusion_0"),
        ("nn.matmul#2", "op", ["nn.matmul"], None)]
    first, second, _ = found.groups
    assert second.seconds == first.seconds and second.compile_seconds == 0.0
    assert first.compile_seconds > 0
    assert "3 groups, 2 distinct" in found.table()
    assert "| fusion_1 | contraction | matmul+relu | tensor<8x32xf32> |" in found.table()
    assert "as fusion_0 |" in found.table()


def test_a_gpu_target_is_refused():
    try:
        profile(lamina.parse(CONVNET), get_target("cuda:sm_80"))
    except ValueError as error:
        assert "cpu target" in str(error)
    else:
        raise AssertionError("no error")


def test_lamina_run_prints_the_profile_and_reports_it(tmp_path):
    report = tmp_path / "report.html"
    done = subprocess.run([os.path.join(TOOLS, "lamina-run"), CONVNET, "--random", "-q",
                           "--profile", "--target=cpu:threads=1", f"--report={report}"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "profile on cpu" in done.stdout
    assert "| fusion_0 | convolution | conv2d+relu |" in done.stdout
    assert "the whole program" in done.stdout
    page = report.read_text()
    assert 'id="profile-table"' in page and page.count('class="profile-row"') >= 7


def test_lamina_run_profile_on_a_gpu_target_is_an_error():
    done = subprocess.run([os.path.join(TOOLS, "lamina-run"), CONVNET, "--random", "--profile",
                           "--target=cuda:sm_80", "--emulate"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 1
    assert "--profile is for runs on the cpu target" in done.stderr
    assert "Traceback" not in done.stderr
