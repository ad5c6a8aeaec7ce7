"""Per-group profile of a program compiled for the CPU.

    lamina-run model.mlir --profile
    lamina-run model.mlir --profile --report=report.html

A program's time is the sum of its fusion groups' (`nn-fuse`) and of the
ops no group holds. `profile(module, target)` runs the target's pipeline
to its `fused` stage, then compiles each group, and each op outside a
group, as a program of its own (its operands the program's arguments,
constants kept as constants, so that it is scheduled as the whole
program schedules it) and times it on random arguments drawn as
`lamina-run --random` draws them. Groups that are the same computation (a
transformer's repeated blocks, a ResNet's repeated convolution shapes) are
compiled and timed once and reported for each.

The layout changes of a group are the transposes its `schedule` stage
holds (the NCHW <-> NHWC copies around a channels-last convolution, a
filter's permutation): each is listed with whether it moves activations or
weights, and each distinct one is timed as a program of its own
(`nn.transpose`), so that the time a model spends changing layouts is a
number, not a guess. A transpose outside groups (those the `layout` stage
inserts at the edges of a channels-last region) is a layout change whose
time is its own.

Timing a group alone leaves out what the whole program shares between
groups (caches warm with the previous group's results, one call instead
of many): `Profile.program_seconds`, the whole program's time measured in
the same run, says how far the sum is from the real thing.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field
from typing import Sequence

from mlir import ir
from mlir.dialects import func

from lamina.linalg_builders import defining_op, matching_ops
from lamina.reference import index_bounds, random_inputs, weight_fan_ins
from lamina.runtime import clone_module, find_entry


def measure(function, arrays: Sequence, warmup_seconds: float = 0.05,
            min_seconds: float = 0.2, min_runs: int = 5, max_runs: int = 10000) -> list[float]:
    """Run times in seconds of `function` (an `ArrayFunction`) on checked
    `arrays`, after warming up by time (CPUs need a moment to reach full
    speed)."""
    results = function.allocate_results()
    deadline = time.perf_counter() + warmup_seconds
    while time.perf_counter() < deadline:
        function.call_with_results(arrays, results)
    times: list[float] = []
    start = time.perf_counter()
    while len(times) < max_runs and (len(times) < min_runs
                                     or time.perf_counter() - start < min_seconds):
        before = time.perf_counter()
        function.call_with_results(arrays, results)
        times.append(time.perf_counter() - before)
    return times


@dataclass
class LayoutChange:
    """A transpose in a group's scheduled IR: `source` (a tensor type) by
    `permutation`; `weights` when it permutes a weight or a constant."""

    source: str
    permutation: tuple[int, ...]
    weights: bool
    seconds: float | None = None  # the median of it timed alone


@dataclass
class GroupProfile:
    name: str           # the group's body (`fusion_3`) or the op (`nn.max_pool2d`)
    kind: str           # the group's kind, or `op` for an op outside groups
    ops: list[str]      # its nn ops
    results: list[str]  # its result types
    location: str
    seconds: float      # median time of the group alone
    compile_seconds: float
    layout_changes: list[LayoutChange] = field(default_factory=list)
    same_as: str | None = None  # the group it repeats (compiled and timed once)

    @property
    def layout_seconds(self) -> float:
        return sum(change.seconds or 0.0 for change in self.layout_changes)


@dataclass
class Profile:
    target: str
    groups: list[GroupProfile]
    program_seconds: float | None = None

    @property
    def total_seconds(self) -> float:
        return sum(group.seconds for group in self.groups)

    def table(self) -> str:
        """The profile as a Markdown table, slowest group first, with the
        share of each in the sum and the layout changes it holds."""
        total = self.total_seconds or 1.0
        lines = ["| group | kind | ops | result | time | share | layout changes | compile |",
                 "|---|---|---|---|---|---|---|---|"]
        for group in sorted(self.groups, key=lambda g: -g.seconds):
            changes = _describe_changes(group.layout_changes)
            compiled = (f"as {group.same_as}" if group.same_as
                        else f"{group.compile_seconds:.2f} s")
            lines.append(f"| {group.name} | {group.kind} | {_ops(group.ops)} | "
                         f"{', '.join(group.results)} | {_ms(group.seconds)} | "
                         f"{100 * group.seconds / total:.1f}% | {changes} | {compiled} |")
        lines.append("")
        layout = sum(group.layout_seconds for group in self.groups)
        summary = (f"{len(self.groups)} groups, {len({g.same_as or g.name for g in self.groups})} "
                   f"distinct; sum of the groups {_ms(self.total_seconds)}, of which layout "
                   f"changes {_ms(layout)} ({100 * layout / total:.1f}%)")
        if self.program_seconds is not None:
            summary += f"; the whole program {_ms(self.program_seconds)}"
        lines.append(summary)
        return "\n".join(lines)

    def describe(self) -> str:
        return f"profile on {self.target} (median times of each group alone)\n" + self.table()


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3g} ms"


def _ops(names: Sequence[str]) -> str:
    short = [name.removeprefix("nn.") for name in names]
    return "+".join(short) if len(short) <= 6 else "+".join(short[:5]) + f"+... ({len(short)})"


def _describe_changes(changes: Sequence[LayoutChange]) -> str:
    if not changes:
        return ""
    parts = []
    for change in changes:
        what = "weights" if change.weights else "activations"
        timed = f" {_ms(change.seconds)}" if change.seconds is not None else ""
        parts.append(f"{change.source} [{','.join(map(str, change.permutation))}] {what}{timed}")
    return "; ".join(parts)


def _standalone(op: ir.Operation, body: ir.Operation | None) -> ir.Module:
    """A module whose @main computes `op` alone (for an `nn.fused` op, the
    ops of its `body`): `op`'s operands are @main's arguments, except
    constants, which are copied."""
    mapping: dict[ir.Value, ir.Value] = {}
    arguments: list[ir.Value] = []
    for value in op.operands:
        if defining_op(value, "arith.constant") is None and value not in arguments:
            arguments.append(value)
    with op.location:
        module = ir.Module.create()
        with ir.InsertionPoint(module.body):
            function = func.FuncOp("main", ir.FunctionType.get(
                [v.type for v in arguments], [r.type for r in op.results]))
        block = function.add_entry_block()
        with ir.InsertionPoint(block):
            for value in op.operands:
                if value in mapping:
                    continue
                if value in arguments:
                    mapping[value] = block.arguments[arguments.index(value)]
                else:
                    mapping[value] = defining_op(value, "arith.constant").clone().results[0]
            if body is None:
                results = _clone(op, mapping)
            else:
                inner = body.regions[0].blocks[0]
                for argument, value in zip(inner.arguments, op.operands):
                    mapping[argument] = mapping[value]
                results = []
                for inner_op in inner.operations:
                    if inner_op.name == "func.return":
                        results = [mapping[v] for v in inner_op.operands]
                    else:
                        _clone(inner_op, mapping)
            func.ReturnOp(results)
    return module


def _clone(op: ir.Operation, mapping: dict[ir.Value, ir.Value]) -> list[ir.Value]:
    copy = op.operation.clone()
    for index, value in enumerate(op.operands):
        if value in mapping:
            copy.operands[index] = mapping[value]
    for old, new in zip(op.results, copy.results):
        mapping[old] = new
    return list(copy.results)


def _layout_changes(module: ir.Module, target) -> list[LayoutChange]:
    """The transposes of `module`'s @main after the target's `schedule`
    stage (run on a copy)."""
    weights = weight_fan_ins(module, "main")
    copy = clone_module(module)
    # The groups stay inline in @main, where their transposes are counted.
    pipeline = target.pipeline()
    pipeline.remove("cpu-outline-fusion-groups")
    pipeline.run(copy, until="schedule")
    entry = find_entry(copy, "main").regions[0].blocks[0]
    changes = []
    for transpose in matching_ops(find_entry(copy, "main"),
                                  lambda op: op.name == "linalg.transpose"):
        source = transpose.operands[0]
        if isinstance(source.owner, ir.Block):
            is_weight = source.owner == entry and weights[source.arg_number] is not None
        else:
            is_weight = defining_op(source, "arith.constant") is not None
        permutation = tuple(ir.DenseI64ArrayAttr(transpose.attributes["permutation"]))
        changes.append(LayoutChange(str(source.type), permutation, is_weight))
    return changes


def _time_program(module: ir.Module, target, seed: int, min_seconds: float):
    function = target.compile(module, entry="main")
    arrays = function.check_arguments(random_inputs(function.inputs, seed,
                                                    weight_fan_ins(module, "main"),
                                                    index_bounds(module, "main")))
    return function, statistics.median(measure(function, arrays, min_seconds=min_seconds))


def _transpose_program(source: str, permutation: Sequence[int], context: ir.Context) -> ir.Module:
    with context, ir.Location.unknown():
        shape_type = ir.RankedTensorType(ir.Type.parse(source))
        shape = [shape_type.shape[p] for p in permutation]
        result = ir.RankedTensorType.get(shape, shape_type.element_type)
    perm = ", ".join(map(str, permutation))
    return ir.Module.parse(
        f"func.func @main(%x: {source}) -> {result} {{\n"
        f"  %0 = \"nn.transpose\"(%x) {{perm = array<i64: {perm}>}} : ({source}) -> {result}\n"
        f"  return %0 : {result}\n}}\n", context)


def profile(module: ir.Module, target, entry: str | None = None, seed: int = 0,
            min_seconds: float = 0.2, whole=None, arrays: Sequence | None = None) -> Profile:
    """Profiles function `entry` of `module` (not modified) on the CPU
    `target`: each fusion group and each op outside groups compiled and
    timed alone (see the module's docstring). With `whole` (the compiled
    program) and its checked `arrays`, the whole program is timed too.
    Raises CompileError."""
    if getattr(target, "kind", None) != "cpu":
        raise ValueError(f"a profile is of programs for the cpu target, not '{target.name}'")
    copy = clone_module(module)
    name = find_entry(copy, entry).attributes["sym_name"]
    target.pipeline().run(copy, until="fused")
    symbols = ir.SymbolTable(copy.operation)
    function = symbols[ir.StringAttr(name).value]
    groups: list[GroupProfile] = []
    seen: dict[str, GroupProfile] = {}
    transposes: dict[tuple[str, tuple[int, ...]], float] = {}
    for index, op in enumerate(function.regions[0].blocks[0].operations):
        op = op.operation
        if op.name in ("func.return", "arith.constant"):
            continue
        body = None
        if op.name == "nn.fused":
            body = symbols[ir.FlatSymbolRefAttr(op.attributes["body"]).value]
            group_name = ir.FlatSymbolRefAttr(op.attributes["body"]).value
            kind = ir.StringAttr(op.attributes["kind"]).value
            ops = [inner.operation.name for inner in body.regions[0].blocks[0].operations
                   if inner.operation.name not in ("func.return", "arith.constant")]
        else:
            group_name, kind, ops = f"{op.name}#{index}", "op", [op.name]
        standalone = _standalone(op, body)
        key = str(standalone)
        results = [str(r.type) for r in op.results]
        location = str(op.location)
        if key in seen:
            first = seen[key]
            groups.append(GroupProfile(group_name, kind, ops, results, location, first.seconds,
                                       0.0, first.layout_changes, first.name))
            continue
        compiled, seconds = _time_program(standalone, target, seed, min_seconds)
        changes = _layout_changes(standalone, target)
        if op.name == "nn.transpose" and len(changes) == 1:
            # A layout change of its own (as the layout stage inserts
            # them): its time is the op's.
            changes[0].seconds = seconds
        for change in (c for c in changes if c.seconds is None):
            signature = (change.source, change.permutation)
            if signature not in transposes:
                _, transposes[signature] = _time_program(
                    _transpose_program(change.source, change.permutation, module.context),
                    target, seed, min_seconds)
            change.seconds = transposes[signature]
        group = GroupProfile(group_name, kind, ops, results, location, seconds,
                             compiled.compile_seconds, changes)
        seen[key] = group
        groups.append(group)
    program_seconds = None
    if whole is not None and arrays is not None:
        program_seconds = statistics.median(measure(whole, arrays, min_seconds=min_seconds))
    return Profile(target.name, groups, program_seconds)
