"""Pictures of nn programs: the dataflow graph of each function, laid out by
Graphviz's `dot`, with fusion groups as coloured clusters.

    lamina-opt model.mlir --nn-decompose --nn-fuse --view-graph=graph.svg

`to_dot(modules)` writes the graph in Graphviz's language; `render(dot,
"svg")` lays it out with `dot` (the Debian package `graphviz`) and returns
the picture. What is drawn, per function of each module (functions that are
the bodies of `nn.fused` ops are drawn inside their callers, not alone):

* one box per op at the function's top level, with the op's name and its
  result types (`8x128xf32`); its location and attributes are its tooltip.
  Constants are small grey boxes. An op with regions is one box;
* the function's arguments (ovals, named as in the source file when it can
  be read) and results (houses);
* one edge per operand, labelled with the value's shape and element type;
* fusion groups as clusters coloured by their kind and labelled with their
  name and kind: an `nn.fused` op is drawn as its body's ops, its operands
  and results wired to the body's arguments and returned values; ops that
  `nn-inline-fused` marked with `lamina.fusion_group` and
  `lamina.fusion_kind` are drawn in the cluster of their group.

Upstream's `--view-op-graph` pass draws any op's regions and def-use edges;
this picture is the nn-level view: fusion groups, types on the edges, and
calls of fusion bodies drawn in place.
"""

from __future__ import annotations

import functools
import html
import os
import re
import shutil
import subprocess
from collections import defaultdict

from mlir import ir

from lamina.dialects.nn import FUSION_GROUP_ATTRIBUTE as FUSION_GROUP
from lamina.dialects.nn import FUSION_KIND_ATTRIBUTE as FUSION_KIND

# Output formats by file extension: what `dot -T` makes of them (None: the
# graph in Graphviz's language, not laid out).
FORMATS = {".svg": "svg", ".png": "png", ".dot": None, ".gv": None}

# Fill colours of fusion clusters by kind, light enough for black text.
KIND_COLOURS = {
    "contraction": "#dbe9f6",
    "convolution": "#fde3cf",
    "reduction": "#dcf0d5",
    "elementwise": "#fcf3c8",
}
OTHER_KIND_COLOUR = "#ece4f4"

_CONSTANT_OPS = {"arith.constant", "tensor.empty", "nn.constant"}


class GraphError(Exception):
    """A picture that cannot be made: no `dot`, an unknown format, or `dot`
    failing on the graph."""


def picture_format(path: str, flag: str) -> str | None:
    """The `dot -T` format of an output path by its extension (None for a
    `.dot`/`.gv` file). Raises GraphError for another extension."""
    extension = os.path.splitext(path)[1].lower()
    if extension not in FORMATS:
        raise GraphError(f"{flag}: unknown picture format '{extension or path}' (use .svg, "
                         ".png, or .dot for the graph in Graphviz's language)")
    return FORMATS[extension]


def find_dot(flag: str) -> str:
    """The path of Graphviz's `dot`. Raises GraphError naming `flag`."""
    dot = shutil.which("dot")
    if dot is None:
        raise GraphError(f"{flag} needs Graphviz's dot, which is not on PATH (Debian: "
                         "apt-get install graphviz)")
    return dot


def render(dot_text: str, fmt: str, flag: str = "--view-graph") -> bytes:
    """Lays out a graph with `dot` and returns the picture (`fmt`: svg or
    png). Raises GraphError."""
    try:
        result = subprocess.run([find_dot(flag), f"-T{fmt}"], input=dot_text.encode(),
                                capture_output=True, timeout=300)
    except subprocess.TimeoutExpired:
        raise GraphError(f"{flag}: dot took more than 300 s to lay out the graph") from None
    if result.returncode != 0 or not result.stdout:
        message = result.stderr.decode(errors="replace").strip()[-2000:]
        raise GraphError(f"{flag}: dot failed (exit code {result.returncode}): {message}")
    return result.stdout


def short_type(value_type: ir.Type) -> str:
    """`tensor<8x128xf32>` as `8x128xf32`; other types as MLIR prints them."""
    text = str(value_type)
    if text.startswith("tensor<") and text.endswith(">"):
        return text[len("tensor<"):-1]
    return text


def op_location(op: ir.Operation) -> str:
    """`file:line:col` of an op, or its location as MLIR prints it."""
    text = str(op.location)
    found = re.search(r'"([^"]*)":(\d+):(\d+)', text)
    return f"{found.group(1)}:{found.group(2)}:{found.group(3)}" if found else text


@functools.lru_cache(maxsize=16)
def _source_lines(path: str) -> list[str]:
    try:
        with open(path, errors="replace") as f:
            return f.read().splitlines()
    except OSError:
        return []


def argument_name(argument: ir.Value) -> str:
    """An argument's name in the source (`%x`) where its location points at
    it in a readable file, else the name MLIR prints (`%arg0`)."""
    found = re.search(r'"([^"]*)":(\d+):(\d+)', str(argument.location))
    if found:
        lines = _source_lines(found.group(1))
        line, column = int(found.group(2)), int(found.group(3))
        if 0 < line <= len(lines):
            name = re.match(r"%[\w.$-]+", lines[line - 1][column - 1:])
            if name:
                return name.group(0)
    return argument.get_name()


def _string(attribute: ir.Attribute) -> str:
    return ir.StringAttr(attribute).value if isinstance(attribute, ir.StringAttr) else str(
        attribute).strip('"')


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


class _Drawing:
    """The statements of one DOT graph, built function by function."""

    def __init__(self, symbols: dict[str, ir.Operation]):
        self.symbols = symbols
        self.lines: list[str] = []
        # Edges go after every cluster, at the top level: a node named in a
        # cluster's statements, an edge's included, belongs to the cluster.
        self.edges: list[str] = []
        self.count = 0
        self.clusters = 0

    def new_id(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    def emit(self, depth: int, statement: str) -> None:
        self.lines.append("  " * depth + statement)

    def open_cluster(self, depth: int, label: str, fill: str, style: str = "filled,rounded",
                     tooltip: str = "") -> None:
        self.clusters += 1
        self.emit(depth, f"subgraph cluster_{self.clusters} {{")
        self.emit(depth + 1, f"label={_quote(label)}; style={_quote(style)}; "
                             f"fillcolor={_quote(fill)}; color=\"#6b6b6b\"; "
                             f"tooltip={_quote(tooltip or label)};")

    def edge(self, source: str, target: str, value: ir.Value) -> None:
        self.edges.append(f"  {source} -> {target} [label={_quote(short_type(value.type))}];")

    # -- functions -------------------------------------------------------------

    def function(self, function: ir.Operation, depth: int) -> None:
        name = _string(function.attributes["sym_name"])
        self.open_cluster(depth, f"@{name}", "#ffffff", style="rounded",
                          tooltip=f"func.func @{name} ({op_location(function)})")
        block = function.regions[0].blocks[0]
        producers: dict[ir.Value, str] = {}
        for argument in block.arguments:
            node = self.new_id("arg")
            label = f"<{html.escape(argument_name(argument))}<br/>" \
                    f"<font point-size=\"10\">{html.escape(short_type(argument.type))}</font>>"
            self.emit(depth + 1, f"{node} [shape=oval, style=filled, fillcolor=\"#f2f2f2\", "
                                 f"label={label}];")
            producers[argument] = node
        self.block(block, producers, depth + 1, inside=())
        self.emit(depth, "}")

    def block(self, block: ir.Block, producers: dict[ir.Value, str], depth: int,
              inside: tuple[str, ...]) -> list[ir.Value]:
        """Draws a block's ops; returns the values its terminator returns
        (drawn as the function's results at the top level)."""
        groups: dict[str, list[ir.Operation]] = defaultdict(list)
        order: list[tuple[str, object]] = []
        returned: list[ir.Value] = []
        for op in block.operations:
            op = op.operation
            if op.name in ("func.return", "nn.yield"):
                returned = list(op.operands)
                continue
            group = op.attributes[FUSION_GROUP] if FUSION_GROUP in op.attributes else None
            if group is not None:
                name = _string(group)
                if name not in groups:
                    order.append(("group", name))
                groups[name].append(op)
            else:
                order.append(("op", op))
        for what, item in order:
            if what == "group":
                ops = groups[item]
                kind = _string(ops[0].attributes[FUSION_KIND]) if FUSION_KIND in \
                    ops[0].attributes else "fused"
                self.open_cluster(depth, f"{item} · {kind}",
                                  KIND_COLOURS.get(kind, OTHER_KIND_COLOUR))
                for op in ops:
                    self.op(op, producers, depth + 1, inside)
                self.emit(depth, "}")
            else:
                self.op(item, producers, depth, inside)
        if not inside:
            for index, value in enumerate(returned):
                node = self.new_id("result")
                self.emit(depth, f"{node} [shape=house, style=filled, fillcolor=\"#f2f2f2\", "
                                 f"label=<result {index}<br/><font point-size=\"10\">"
                                 f"{html.escape(short_type(value.type))}</font>>];")
                if value in producers:
                    self.edge(producers[value], node, value)
        return returned

    def op(self, op: ir.Operation, producers: dict[ir.Value, str], depth: int,
           inside: tuple[str, ...]) -> None:
        body = self.fusion_body(op)
        if body is not None and _symbol_name(op.attributes["body"]) not in inside:
            self.fused(op, body, producers, depth, inside)
            return
        node = self.new_id("op")
        results = "<br/>".join(html.escape(short_type(r.type)) for r in op.results)
        tooltip = op_location(op)
        shown = [f"{name} = {op.attributes[name]}" for name in op.attributes
                 if name not in (FUSION_GROUP, FUSION_KIND)]
        if shown:
            tooltip += "\n" + "\n".join(shown)
        if op.name in _CONSTANT_OPS:
            self.emit(depth, f"{node} [shape=box, style=\"filled,rounded\", fillcolor=\"#eeeeee\", "
                             f"fontsize=9, label=<{html.escape(_constant_label(op))}"
                             f"<br/>{results}>, tooltip={_quote(tooltip)}];")
        else:
            self.emit(depth, f"{node} [shape=box, style=\"filled,rounded\", fillcolor=\"#ffffff\", "
                             f"label=<<b>{html.escape(op.name)}</b><br/><font point-size=\"10\">"
                             f"{results}</font>>, tooltip={_quote(tooltip)}];")
        for operand in op.operands:
            if operand in producers:
                self.edge(producers[operand], node, operand)
        for result in op.results:
            producers[result] = node

    def fusion_body(self, op: ir.Operation) -> ir.Operation | None:
        if op.name != "nn.fused" or "body" not in op.attributes:
            return None
        body = self.symbols.get(_symbol_name(op.attributes["body"]))
        if body is None or not body.regions or not body.regions[0].blocks:
            return None
        return body

    def fused(self, op: ir.Operation, body: ir.Operation, producers: dict[ir.Value, str],
              depth: int, inside: tuple[str, ...]) -> None:
        name = _symbol_name(op.attributes["body"])
        kind = _string(op.attributes["kind"]) if "kind" in op.attributes else "fused"
        self.open_cluster(depth, f"{name} · {kind}", KIND_COLOURS.get(kind, OTHER_KIND_COLOUR),
                          tooltip=f"nn.fused @{name} ({op_location(op)})")
        block = body.regions[0].blocks[0]
        inner: dict[ir.Value, str] = dict(producers)
        # The body's arguments are the fused op's operands: edges from their
        # producers go straight to the ops inside.
        for argument, operand in zip(block.arguments, op.operands):
            if operand in producers:
                inner[argument] = producers[operand]
        returned = self.block(block, inner, depth + 1, inside + (name,))
        self.emit(depth, "}")
        for result, value in zip(op.results, returned):
            if value in inner:
                producers[result] = inner[value]


def _constant_label(op: ir.Operation) -> str:
    """`constant 0.5` for a splat constant with a short value, else the op's name."""
    if "value" in op.attributes:
        splat = re.fullmatch(r"dense<([^<>\[\]]{1,14})>.*", str(op.attributes["value"]))
        if splat:
            value = splat.group(1).strip()
            try:
                value = f"{float(value):.6g}"
            except ValueError:
                pass
            return f"constant {value}"
    return op.name


def _symbol_name(attribute: ir.Attribute) -> str:
    return str(attribute).lstrip("@").strip('"')


def _functions(module: ir.Module) -> tuple[list[ir.Operation], dict[str, ir.Operation]]:
    """The functions to draw, and every function by name."""
    symbols: dict[str, ir.Operation] = {}
    functions: list[ir.Operation] = []
    bodies: set[str] = set()
    for op in module.body.operations:
        op = op.operation
        if op.name != "func.func":
            continue
        symbols[_string(op.attributes["sym_name"])] = op
        if op.regions[0].blocks:
            functions.append(op)

    def visit(op):
        if op.name == "nn.fused" and "body" in op.attributes:
            bodies.add(_symbol_name(op.attributes["body"]))
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    drawn = [f for f in functions if _string(f.attributes["sym_name"]) not in bodies]
    return drawn, symbols


def to_dot(modules: ir.Module | list[ir.Module], title: str = "") -> str:
    """The graph of every function of `modules`, in Graphviz's language."""
    if isinstance(modules, ir.Module):
        modules = [modules]
    lines = [
        "digraph lamina {",
        "  graph [rankdir=TB, fontname=\"Helvetica\", fontsize=12, nodesep=0.3, ranksep=0.45"
        + (f", label={_quote(title)}, labelloc=t" if title else "") + "];",
        "  node [fontname=\"Helvetica\", fontsize=11, margin=\"0.12,0.05\", color=\"#555555\"];",
        "  edge [fontname=\"Helvetica\", fontsize=9, fontcolor=\"#333333\", color=\"#555555\"];",
    ]
    drawing = _Drawing({})
    for module in modules:
        functions, drawing.symbols = _functions(module)
        for function in functions:
            drawing.function(function, 1)
    return "\n".join(lines + drawing.lines + drawing.edges + ["}"]) + "\n"
