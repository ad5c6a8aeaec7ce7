"""The pipeline report: one self-contained HTML page about a compilation.

    lamina-compile model.mlir --report=report.html
    lamina-run model.mlir --random --bench --report=report.html

A `CompileReport` is a pipeline observer (`pipeline.observers`): after each
stage it records the stage's IR (or artifact) and time, the fusion graph
(after the `fused` stage, or the first stage where there is none), the
fusion groups, the functions and kernels of the last MLIR stage, and the
GPU launches where the program has them (from the kernel manifest when its
stage ran). `html()` writes the page: a summary, the stages with their
timings, the fusion graph (an SVG laid out by Graphviz's `dot`, inline),
the kernel list, the benchmark numbers where a benchmark ran, and the IR
after every stage in collapsible sections. Without `dot` the page says
that it has no picture, and the tools warn. Everything is inline (CSS, SVG,
a few lines of script to expand or collapse the IR), so the page needs no
network.
"""

from __future__ import annotations

import html
import json
import sys
import time
from dataclasses import dataclass, field
from typing import Any

from mlir import ir

from lamina import graphview
from lamina.diagnostics import UsageError, atomic_output, check_output_path


@dataclass
class StageRecord:
    name: str
    description: str
    kind: str
    seconds: float
    text: str
    lines: int


@dataclass
class FusionGroup:
    name: str
    kind: str
    ops: list[str]
    location: str


@dataclass
class Function:
    name: str
    op: str  # func.func, llvm.func, gpu.func
    role: str  # public, private, external, GPU kernel
    location: str


@dataclass
class CompileReport:
    """Observes a pipeline run and writes the HTML report (see the module
    docstring)."""

    source: str
    target: str
    stages: list[StageRecord] = field(default_factory=list)
    graph_dot: str | None = None
    graph_stage: str | None = None
    fusion_groups: list[FusionGroup] = field(default_factory=list)
    functions: list[Function] = field(default_factory=list)
    launches: list[dict[str, Any]] = field(default_factory=list)
    kernel_resources: dict[str, Any] = field(default_factory=dict)
    benchmark: list[tuple[str, str]] = field(default_factory=list)
    checks: list[str] = field(default_factory=list)
    profile: Any = None  # a lamina.profile.Profile, where one ran
    graph_problem: str = ""  # why the page has no picture (no dot), set by html()
    created: str = field(default_factory=lambda: time.strftime("%Y-%m-%d %H:%M:%S"))

    def __call__(self, stage, product: Any, seconds: float) -> None:
        if isinstance(product, ir.Module):
            text = str(product)
            if self.graph_dot is None or stage.name == "fused":
                self.graph_dot = graphview.to_dot(product)
                self.graph_stage = stage.name
                self.fusion_groups = fusion_groups(product)
            self.functions = functions(product)
            launches = module_launches(product)
            if launches:
                self.launches = launches
        elif isinstance(product, bytes):
            text = f"<{len(product)} bytes of {stage.kind}>"
        else:
            text = str(product)
            if stage.kind == "json":
                self._read_manifest(text)
        self.stages.append(StageRecord(stage.name, stage.description, stage.kind, seconds,
                                       text, text.count("\n") + 1))

    def _read_manifest(self, text: str) -> None:
        try:
            manifest = json.loads(text)
        except ValueError:
            return
        if isinstance(manifest, dict) and isinstance(manifest.get("launches"), list):
            self.launches = manifest["launches"]
            self.kernel_resources = manifest.get("kernels") or {}

    def add_benchmark(self, name: str, value: str) -> None:
        self.benchmark.append((name, value))

    # -- the page --------------------------------------------------------------

    def html(self) -> str:
        """The page. Without Graphviz's dot it has no picture, and
        `graph_problem` says why."""
        total = sum(s.seconds for s in self.stages)
        svg = ""
        if self.graph_dot:
            try:
                svg = _inline_svg(graphview.render(self.graph_dot, "svg", "--report").decode())
            except graphview.GraphError as error:
                self.graph_problem = str(error)
        parts = [
            "<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8">',
            f"<title>Lamina report: {_e(self.source)}</title>",
            f"<style>{_STYLE}</style></head><body>",
            "<h1>Lamina report</h1>",
            f'<p class="summary"><b>{_e(self.source)}</b> for target <b>{_e(self.target)}</b>: '
            f'{len(self.stages)} stages in {total * 1e3:.1f} ms ({_e(self.created)})</p>',
            '<nav><a href="#stages">Stages</a> <a href="#graph">Fusion graph</a> '
            '<a href="#kernels">Kernels</a>'
            + (' <a href="#benchmark">Benchmark</a>' if self.benchmark or self.checks else "")
            + (' <a href="#profile">Profile</a>' if self.profile is not None else "")
            + ' <a href="#ir">IR</a></nav>',
            self._stages_section(total),
            self._graph_section(svg),
            self._kernels_section(),
            self._benchmark_section(),
            self._profile_section(),
            self._ir_section(),
            f"<script>{_SCRIPT}</script>",
            "</body></html>",
        ]
        return "\n".join(p for p in parts if p) + "\n"

    def _stages_section(self, total: float) -> str:
        rows = []
        longest = max((s.seconds for s in self.stages), default=0.0) or 1.0
        for s in self.stages:
            rows.append(
                f'<tr class="stage-row"><td><a href="#ir-{_e(s.name)}">{_e(s.name)}</a></td>'
                f"<td>{_e(s.description)}</td><td>{_e(s.kind)}</td>"
                f'<td class="number">{s.seconds * 1e3:.1f}</td>'
                f'<td class="bar"><span style="width:{100 * s.seconds / longest:.1f}%"></span>'
                "</td></tr>")
        return (
            '<section id="stages"><h2>Stages and timings</h2>'
            '<table id="timings"><thead><tr><th>Stage</th><th>What it produces</th><th>Kind</th>'
            '<th>Time (ms)</th><th></th></tr></thead><tbody>' + "".join(rows) +
            f'</tbody><tfoot><tr><td>total</td><td></td><td></td>'
            f'<td class="number">{total * 1e3:.1f}</td><td></td></tr></tfoot></table></section>')

    def _graph_section(self, svg: str) -> str:
        if not svg:
            return (f'<section id="graph"><h2>Fusion graph</h2><p class="problem">'
                    f'{_e(self.graph_problem or "The pipeline produced no module to draw.")}'
                    '</p></section>')
        legend = "".join(
            f'<span class="swatch" style="background:{colour}"></span>{_e(kind)} '
            for kind, colour in graphview.KIND_COLOURS.items())
        return (f'<section id="graph"><h2>Fusion graph</h2><p>After stage '
                f'<b>{_e(self.graph_stage or "")}</b>. Fusion groups: {legend}</p>'
                f'<div class="graph">{svg}</div></section>')

    def _kernels_section(self) -> str:
        parts = ['<section id="kernels"><h2>Kernels</h2>']
        if self.launches:
            rows = []
            for launch in self.launches:
                resources = self.kernel_resources.get(launch.get("kernel")) or {}
                rows.append(
                    f'<tr class="kernel"><td>{_e(launch.get("kernel", ""))}</td>'
                    f'<td>{_e(_dims(launch.get("grid")))}</td>'
                    f'<td>{_e(_dims(launch.get("block")))}</td>'
                    f'<td class="number">{_e(launch.get("dynamic_shared_memory", ""))}</td>'
                    f'<td class="number">{_e(resources.get("registers", "-"))}</td>'
                    f'<td class="number">{_e(resources.get("spill_stores", "-"))}</td></tr>')
            parts.append(
                '<h3>GPU launches</h3><table id="launches"><thead><tr><th>Kernel</th>'
                '<th>Grid</th><th>Block</th><th>Dynamic shared memory (bytes)</th>'
                '<th>Registers</th><th>Spill stores</th></tr></thead><tbody>'
                + "".join(rows) + "</tbody></table>")
        if self.fusion_groups:
            rows = [f'<tr class="fusion-group"><td>{_e(g.name)}</td><td>{_e(g.kind)}</td>'
                    f'<td>{len(g.ops)}</td><td>{_e(", ".join(g.ops))}</td>'
                    f'<td>{_e(g.location)}</td></tr>' for g in self.fusion_groups]
            parts.append(
                f'<h3>Fusion groups (after stage {_e(self.graph_stage or "")})</h3>'
                '<table id="fusion-groups"><thead><tr><th>Group</th><th>Kind</th><th>Ops</th>'
                '<th>Op names</th><th>Location</th></tr></thead><tbody>'
                + "".join(rows) + "</tbody></table>")
        last = next((s.name for s in reversed(self.stages) if s.kind == "mlir"), "")
        rows = [f'<tr class="kernel"><td>{_e(f.name)}</td><td>{_e(f.op)}</td>'
                f'<td>{_e(f.role)}</td><td>{_e(f.location)}</td></tr>' for f in self.functions]
        parts.append(
            f'<h3>Functions (after stage {_e(last)})</h3><table id="functions"><thead><tr>'
            '<th>Name</th><th>Op</th><th>Role</th><th>Location</th></tr></thead><tbody>'
            + "".join(rows) + "</tbody></table></section>")
        return "".join(parts)

    def _benchmark_section(self) -> str:
        if not self.benchmark and not self.checks:
            return ""
        rows = "".join(f"<tr><td>{_e(name)}</td><td>{_e(value)}</td></tr>"
                       for name, value in self.benchmark)
        checks = "".join(f"<li>{_e(line)}</li>" for line in self.checks)
        return ('<section id="benchmark"><h2>Benchmark</h2>'
                + (f'<table id="benchmark-table"><tbody>{rows}</tbody></table>' if rows else "")
                + (f'<h3>Check against the reference</h3><ul id="checks">{checks}</ul>'
                   if checks else "") + "</section>")

    def _profile_section(self) -> str:
        profile = self.profile
        if profile is None:
            return ""
        total = profile.total_seconds or 1.0
        longest = max((g.seconds for g in profile.groups), default=0.0) or 1.0
        rows = []
        for g in sorted(profile.groups, key=lambda g: -g.seconds):
            changes = "".join(
                f"<li>{_e(c.source)} [{_e(','.join(map(str, c.permutation)))}] "
                f"{'weights' if c.weights else 'activations'}"
                + (f" {c.seconds * 1e3:.3g} ms" if c.seconds is not None else "") + "</li>"
                for c in g.layout_changes)
            compiled = f"as {g.same_as}" if g.same_as else f"{g.compile_seconds:.2f}"
            rows.append(
                f'<tr class="profile-row"><td>{_e(g.name)}</td><td>{_e(g.kind)}</td>'
                f'<td>{_e(", ".join(g.ops))}</td><td>{_e(", ".join(g.results))}</td>'
                f'<td class="number">{g.seconds * 1e3:.3g}</td>'
                f'<td class="number">{100 * g.seconds / total:.1f}%</td>'
                f'<td class="bar"><span style="width:{100 * g.seconds / longest:.1f}%"></span></td>'
                f'<td><ul>{changes}</ul></td><td class="number">{_e(compiled)}</td></tr>')
        layout = sum(g.layout_seconds for g in profile.groups)
        whole = (f"; the whole program {profile.program_seconds * 1e3:.3g} ms"
                 if profile.program_seconds is not None else "")
        return ('<section id="profile"><h2>Profile</h2>'
                f'<p>Each fusion group and each op outside groups compiled and timed alone '
                f'(median): sum {profile.total_seconds * 1e3:.3g} ms, of which layout changes '
                f'{layout * 1e3:.3g} ms{_e(whole)}.</p>'
                '<table id="profile-table"><thead><tr><th>Group</th><th>Kind</th><th>Ops</th>'
                '<th>Result</th><th>Time (ms)</th><th>Share</th><th></th>'
                '<th>Layout changes</th><th>Compile (s)</th></tr></thead><tbody>'
                + "".join(rows) + "</tbody></table></section>")

    def _ir_section(self) -> str:
        sections = []
        for s in self.stages:
            sections.append(
                f'<details class="ir" id="ir-{_e(s.name)}"><summary><b>{_e(s.name)}</b> '
                f'({_e(s.kind)}, {s.lines} lines, {s.seconds * 1e3:.1f} ms)</summary>'
                f"<pre><code>{_e(s.text)}</code></pre></details>")
        return ('<section id="ir"><h2>IR after each stage</h2><p>'
                '<button type="button" id="expand-all">Expand all</button> '
                '<button type="button" id="collapse-all">Collapse all</button></p>'
                + "".join(sections) + "</section>")


def check_report_path(path: str | None) -> None:
    """Raises UsageError, before any work, when a --report file cannot be
    written."""
    if path == "-":
        raise UsageError("--report needs a file name (the product goes to stdout)")
    if path is not None:
        check_output_path(path)


def write_report(report: CompileReport, path: str, prog: str) -> None:
    """Writes the page to `path`, whole or not at all; says on stderr when
    the page has no fusion graph because `dot` is missing or failed."""
    page = report.html()
    if report.graph_problem:
        print(f"{prog}: warning: the report has no fusion graph: {report.graph_problem}",
              file=sys.stderr)
    with atomic_output(path) as out:
        out.write(page)


def _e(value: Any) -> str:
    return html.escape(str(value))


def _dims(values) -> str:
    return " x ".join(str(v) for v in values) if isinstance(values, list) else str(values or "")


def _inline_svg(svg: str) -> str:
    """dot's SVG without its XML prolog and doctype, for inlining in HTML."""
    start = svg.find("<svg")
    return svg[start:] if start >= 0 else svg


def _string(attribute: ir.Attribute) -> str:
    return str(attribute).strip('"')


def fusion_groups(module: ir.Module) -> list[FusionGroup]:
    """The fusion groups of a module: `nn.fused` ops with their bodies' ops,
    or ops marked by `nn-inline-fused`."""
    bodies = {_string(op.attributes["sym_name"]): op for op in module.body.operations
              if op.operation.name == "func.func"}
    groups: dict[str, FusionGroup] = {}

    def visit(op):
        attributes = op.attributes
        if op.name == "nn.fused" and "body" in attributes:
            name = str(attributes["body"]).lstrip("@")
            body = bodies.get(name)
            ops = [o.operation.name for o in body.regions[0].blocks[0].operations
                   if o.operation.name not in ("func.return", "arith.constant")] if body else []
            kind = _string(attributes["kind"]) if "kind" in attributes else ""
            groups[name] = FusionGroup(name, kind, ops, graphview.op_location(op))
        elif graphview.FUSION_GROUP in attributes and op.name != "arith.constant":
            name = _string(attributes[graphview.FUSION_GROUP])
            kind = _string(attributes[graphview.FUSION_KIND]) \
                if graphview.FUSION_KIND in attributes else ""
            group = groups.setdefault(name, FusionGroup(name, kind, [],
                                                        graphview.op_location(op)))
            group.ops.append(op.name)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    return list(groups.values())


def functions(module: ir.Module) -> list[Function]:
    """The functions of a module, GPU kernels in its GPU modules included."""
    found: list[Function] = []

    def visit(op):
        if op.name in ("func.func", "llvm.func", "gpu.func"):
            attributes = op.attributes
            name = _string(attributes["sym_name"])
            if "gpu.kernel" in attributes or "nvvm.kernel" in attributes:
                role = "GPU kernel"
            elif not op.regions[0].blocks:
                role = "external"
            elif "sym_visibility" in attributes and _string(
                    attributes["sym_visibility"]) == "private":
                role = "private"
            elif "linkage" in attributes and "internal" in str(attributes["linkage"]):
                role = "internal"
            else:
                role = "public"
            location = graphview.op_location(op)
            found.append(Function(name, op.name, role,
                                  "" if location.endswith(":0:0") else location))
            return ir.WalkResult.SKIP
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found


def module_launches(module: ir.Module) -> list[dict[str, Any]]:
    """The launches convert-hw-to-nvgpu records on a module, if any."""
    from lamina.targets.cuda import launch_records  # only cuda targets need it
    return launch_records(module)


_STYLE = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif;
       margin: 1.5em auto; max-width: 1200px; padding: 0 1em; color: #222; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { font-size: 1.25em; border-bottom: 1px solid #ddd; padding-bottom: 0.2em; margin-top: 1.6em; }
h3 { font-size: 1.05em; }
nav a { margin-right: 1em; }
table { border-collapse: collapse; margin: 0.5em 0; }
th, td { border: 1px solid #ddd; padding: 0.25em 0.6em; text-align: left; vertical-align: top; }
th { background: #f4f4f4; }
td.number { text-align: right; font-variant-numeric: tabular-nums; }
td.bar { width: 200px; }
td.bar span { display: block; height: 0.8em; background: #6d9ecf; min-width: 1px; }
tfoot td { font-weight: bold; }
.graph { overflow: auto; border: 1px solid #ddd; padding: 0.5em; max-height: 90vh; }
.graph svg { max-width: 100%; height: auto; }
.swatch { display: inline-block; width: 0.9em; height: 0.9em; border: 1px solid #888;
          margin: 0 0.25em 0 0.6em; vertical-align: middle; }
details.ir { border: 1px solid #ddd; margin: 0.3em 0; border-radius: 4px; }
details.ir summary { cursor: pointer; padding: 0.3em 0.6em; background: #f7f7f7; }
details.ir pre { margin: 0; padding: 0.6em; overflow: auto; max-height: 70vh;
                 font: 12px/1.35 ui-monospace, "DejaVu Sans Mono", Menlo, monospace; }
"""

_SCRIPT = """
function setAll(open) {
  document.querySelectorAll("details.ir").forEach(function (d) { d.open = open; });
}
document.getElementById("expand-all").addEventListener("click", function () { setAll(true); });
document.getElementById("collapse-all").addEventListener("click", function () { setAll(false); });
if (location.hash.startsWith("#ir-")) {
  var target = document.getElementById(location.hash.slice(1));
  if (target) { target.open = true; }
}
"""
