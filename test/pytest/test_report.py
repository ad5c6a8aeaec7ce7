"""lamina-compile/lamina-run --report without a browser: bad report paths
and failing programs write nothing, a machine without Graphviz gets a page
that says it has no picture, and a CUDA target's report lists the kernels'
launches (see test_report_browser.py for the rendered page)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import lamina
from lamina.report import CompileReport
from lamina.targets import get_target

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOLS = os.path.dirname(sys.executable)
MLP = os.path.join(ROOT, "examples", "mlp.mlir")
CPU_STAGES = get_target("cpu").pipeline().stages

BAD = """func.func @main(%x: tensor<4x8xf32>, %w: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = "nn.matmul"(%x, %w) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
"""

MATMUL_BIAS_RELU = """func.func @main(%a: tensor<128x64xf16>, %b: tensor<64x96xf16>,
                %bias: tensor<96xf16>) -> tensor<128x96xf16> {
  %m = "nn.matmul"(%a, %b) : (tensor<128x64xf16>, tensor<64x96xf16>) -> tensor<128x96xf16>
  %s = "nn.add"(%m, %bias) : (tensor<128x96xf16>, tensor<96xf16>) -> tensor<128x96xf16>
  %r = "nn.relu"(%s) : (tensor<128x96xf16>) -> tensor<128x96xf16>
  return %r : tensor<128x96xf16>
}
"""


def tool(name: str, *args: str, env: dict | None = None, cwd=None):
    return subprocess.run([os.path.join(TOOLS, name), *args], capture_output=True, text=True,
                          timeout=600, env=env, cwd=cwd)


def test_unwritable_report_is_a_usage_error(tmp_path):
    missing = tmp_path / "missing" / "report.html"
    done = tool("lamina-compile", MLP, "--emit=nn", f"--report={missing}",
                "-o", str(tmp_path / "out.mlir"))
    assert done.returncode == 1
    assert done.stderr == (f"lamina-compile: error: cannot write output file '{missing}': "
                           f"directory '{missing.parent}' does not exist\n")
    assert os.listdir(tmp_path) == []
    done = tool("lamina-compile", MLP, "--emit=nn", "--report=-")
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == ("lamina-compile: error: --report needs a file name (the product "
                           "goes to stdout)\n")


def test_failing_program_writes_no_report(tmp_path):
    (tmp_path / "bad.mlir").write_text(BAD)
    for name in ("lamina-compile", "lamina-run"):
        done = tool(name, "bad.mlir", "--report=report.html",
                    *(["--random"] if name == "lamina-run" else []), cwd=tmp_path)
        assert done.returncode == 1
        assert done.stderr.startswith("bad.mlir:2:8: error: 'nn.matmul' op"), done.stderr
        assert "Traceback" not in done.stderr
    assert sorted(os.listdir(tmp_path)) == ["bad.mlir"]


def test_report_without_graphviz(tmp_path):
    report = tmp_path / "report.html"
    env = dict(os.environ, PATH=TOOLS)  # Lamina's tools, no dot
    done = tool("lamina-compile", MLP, "--emit=linalg", f"--report={report}", env=env)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ("lamina-compile: warning: the report has no fusion graph: --report "
                           "needs Graphviz's dot, which is not on PATH (Debian: apt-get install "
                           "graphviz)\n")
    page = report.read_text()
    assert "<svg" not in page and "needs Graphviz&#x27;s dot" in page
    assert page.count('<details class="ir"') == CPU_STAGES.index("linalg") + 1
    # The softmax: max, subtraction, exp, sum, reciprocal, product.
    assert '<tr class="fusion-group"><td>fusion_2</td><td>reduction</td><td>6</td>' in page


def test_cuda_report_lists_launches():
    target = get_target("cuda:sm_80")
    pipeline = target.pipeline()
    report = CompileReport("<string>", target.name)
    pipeline.observers.append(report)
    target.emit(lamina.parse(MATMUL_BIAS_RELU), "gpu", pipeline=pipeline)
    assert [s.name for s in report.stages] == ["nn", "fused", "hw", "gpu"]
    assert all(s.seconds > 0 for s in report.stages)
    assert len(report.launches) == 1
    launch = report.launches[0]
    assert launch["kernel"] == "main_matmul_0"
    assert launch["block"][0] % 32 == 0 and launch["dynamic_shared_memory"] > 0
    kernels = [f.name for f in report.functions if f.role == "GPU kernel"]
    assert kernels == ["main_matmul_0"]
    # The fusion graph: the matmul, its bias and relu in one contraction group.
    assert report.graph_stage == "fused" and "contraction" in report.graph_dot
    if shutil.which("dot"):
        page = report.html()
        assert '<tr class="kernel"><td>main_matmul_0</td>' in page and "<svg" in page


def test_report_of_a_stage_records_only_the_stages_run(tmp_path):
    report = tmp_path / "report.html"
    done = tool("lamina-compile", MLP, "--emit=fused", f"--report={report}")
    assert done.returncode == 0, done.stderr
    page = report.read_text()
    assert page.count('<details class="ir"') == CPU_STAGES.index("fused") + 1
    assert 'id="ir-nn"' in page and 'id="ir-fused"' in page and 'id="ir-linalg"' not in page
    assert "http://" not in page.replace("http://www.w3.org/", "") and "https://" not in page
