"""The HTML report of each example model, loaded in headless Chromium
(Debian's package `chromium`): the DOM after the page's script ran has the
stages with their timings, the fusion graph as an SVG with a cluster per
fusion group, the kernel list and, from lamina-run --bench, the benchmark.

Skipped where `chromium` or Graphviz's `dot` is absent (.ci/run installs
both).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser

import pytest

from lamina.targets import get_target

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOLS = os.path.dirname(sys.executable)
CHROMIUM = shutil.which("chromium")

pytestmark = pytest.mark.skipif(CHROMIUM is None or shutil.which("dot") is None,
                                reason="needs Debian's chromium and Graphviz's dot")

CPU = get_target("cpu").pipeline()


class Page(HTMLParser):
    """What the tests read of a DOM: elements by id with their attributes
    and text, the classes of SVG groups, and table rows by table id."""

    def __init__(self, markup: str):
        super().__init__()
        self.elements: dict[str, dict] = {}
        self.svg_group_classes: list[str] = []
        self.rows: dict[str, list[list[str]]] = {}
        self._open: list[tuple[str, str | None]] = []
        self._table: str | None = None
        self._row: list[str] | None = None
        self._cell: list[str] | None = None
        self._in_svg = 0
        self.feed(markup)

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if "id" in attributes:
            self.elements[attributes["id"]] = {"tag": tag, "attrs": attributes, "text": []}
        self._open.append((tag, attributes.get("id")))
        if tag == "svg":
            self._in_svg += 1
        if tag == "g" and self._in_svg:
            self.svg_group_classes.append(attributes.get("class", ""))
        if tag == "table":
            self._table = attributes.get("id")
            self.rows.setdefault(self._table, [])
        elif tag == "tr" and self._table:
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = []

    def handle_endtag(self, tag):
        while self._open:
            open_tag, _ = self._open.pop()
            if open_tag == tag:
                break
        if tag == "svg":
            self._in_svg -= 1
        elif tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._row.append("".join(self._cell).strip())
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self.rows[self._table].append(self._row)
            self._row = None
        elif tag == "table":
            self._table = None

    def handle_data(self, data):
        for _, element_id in self._open:
            if element_id is not None:
                self.elements[element_id]["text"].append(data)
        if self._cell is not None:
            self._cell.append(data)

    def text(self, element_id: str) -> str:
        return "".join(self.elements[element_id]["text"])


def rendered(report: str, fragment: str, tmp_path) -> Page:
    """The DOM of the report after headless Chromium loaded it (and ran its
    script) at `#fragment`."""
    done = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
         "--no-first-run", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", "--disable-dev-shm-usage", f"--user-data-dir={tmp_path / 'profile'}",
         "--dump-dom", f"file://{report}#{fragment}"],
        capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "<html" in done.stdout, done.stderr[-3000:]
    return Page(done.stdout)


def make_report(tool: str, example: str, tmp_path, *args: str) -> str:
    report = str(tmp_path / f"{tool}-{os.path.splitext(example)[0]}.html")
    done = subprocess.run([os.path.join(TOOLS, tool), os.path.join(ROOT, "examples", example),
                           f"--report={report}", *args], capture_output=True, text=True,
                          timeout=600, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "warning" not in done.stderr and "Traceback" not in done.stderr, done.stderr
    return report


def check_common(page: Page, groups: dict[str, str], last_stage: str) -> None:
    """What every report shows: the stages in order with a time each (every
    MLIR stage of the CPU pipeline, then the artifacts `last_stage` is made
    from), the IR of each stage, the fusion graph with one cluster per
    group, and the fusion groups and functions."""
    timings = page.rows["timings"]
    assert timings[0][:4] == ["Stage", "What it produces", "Kind", "Time (ms)"]
    stages = [row[0] for row in timings[1:-1]]
    assert stages[:len(CPU.mlir_stages)] == CPU.mlir_stages and stages[-1] == last_stage
    assert sorted(stages, key=CPU.stages.index) == stages
    times = [float(row[3]) for row in timings[1:-1]]
    assert all(t >= 0 for t in times) and sum(times) > 0
    assert timings[-1][0] == "total"
    assert float(timings[-1][3]) == pytest.approx(sum(times), abs=0.1 * len(times))

    for stage in stages:
        section = page.elements[f"ir-{stage}"]
        assert section["tag"] == "details"
        assert page.text(f"ir-{stage}").lstrip().startswith(stage)
    assert "nn.matmul" in page.text("ir-nn") or "nn.conv2d" in page.text("ir-nn")
    assert '"nn.fused"' in page.text("ir-fused")
    assert "llvm.func @_mlir_ciface_main" in page.text("ir-llvm-mlir")

    # dot draws each function and each fusion group as a cluster.
    assert page.svg_group_classes.count("cluster") == 1 + len(groups)
    graph = page.text("graph")
    assert "After stage fused" in graph and "@main" in graph
    for name, kind in groups.items():
        assert f"{name} · {kind}" in graph

    assert {row[0]: row[1] for row in page.rows["fusion-groups"][1:]} == groups
    functions = {row[0]: row[2] for row in page.rows["functions"][1:]}
    assert functions["_mlir_ciface_main"] == "public"


def test_mlp_report_from_lamina_run(tmp_path):
    report = make_report("lamina-run", "mlp.mlir", tmp_path, "--random", "--check", "--bench",
                         "-q")
    page = rendered(report, "ir-fused", tmp_path)
    check_common(page, {"fusion_0": "contraction", "fusion_1": "contraction",
                        "fusion_2": "reduction"}, "llvm-mlir")
    # The page's script opened the stage named in the address; the others
    # stay closed.
    assert "open" in page.elements["ir-fused"]["attrs"]
    assert "open" not in page.elements["ir-nn"]["attrs"]
    benchmark = {row[0]: row[1] for row in page.rows["benchmark-table"]}
    assert re.fullmatch(r"[0-9.]+ ms", benchmark["run, median"])
    assert int(benchmark["runs"]) >= 5
    assert "all" not in page.text("checks") and ": ok" in page.text("checks")


def test_attention_report(tmp_path):
    report = make_report("lamina-compile", "attention.mlir", tmp_path, "--emit=llvm-mlir",
                         "-o", os.devnull)
    page = rendered(report, "", tmp_path)
    check_common(page, {"fusion_0": "reduction", "fusion_1": "contraction",
                        "fusion_2": "reduction", "fusion_3": "contraction",
                        "fusion_4": "contraction"}, "llvm-mlir")
    assert "nn.attention" in page.text("graph")
    assert "benchmark" not in page.elements


def test_convnet_report_to_the_object_file(tmp_path):
    report = make_report("lamina-compile", "convnet.mlir", tmp_path, "-o",
                         str(tmp_path / "convnet.o"))
    page = rendered(report, "", tmp_path)
    check_common(page, {"fusion_0": "convolution", "fusion_1": "convolution",
                        "fusion_2": "contraction", "fusion_3": "reduction"},
                 "obj")
    assert "define void @_mlir_ciface_main" in page.text("ir-llvm")
    assert re.search(r"<\d+ bytes of obj>", page.text("ir-obj"))
    assert "nn.max_pool2d" in page.text("graph")
