"""--nn-auto-shard: shardings chosen by a communication cost model, written
as upstream `shard` annotations.

For each function of nn ops, `lamina.sharding_cost` evaluates the
candidate strategies on a 1-D grid of `grid` devices — `replicated`,
`data-parallel` (activations split on their batch axis),
`sequence-parallel` (activations of rank >= 3 split on axis -2) and
`tensor-parallel` (Megatron: matmul parameters split by columns, or by
heads where a weight has a heads dim, then by rows, so that a pair
communicates one all-reduce) — counts the bytes per
step of the collectives partitioning will insert (ring all-reduce
`2(n-1)/n * size`, all-gather `(n-1)/n * size`, all-to-all
`(n-1)/n^2 * size`; a shard of a whole tensor is a local slice), and
keeps the cheapest, ties going to less memory per device. Parameters
(arguments none of whose dims becomes the leading dim of a result, through
the loops the ops share: weights, biases, scales) are stored split across
the grid with `weights=sharded` (the default: a
strategy that needs one whole gathers it every step) or whole on every
device with `weights=replicated`. Activations arrive whole on every
device; results stay where they are computed. `strategy=NAME` annotates
that candidate instead of the cheapest. Where the grid divides none of the
dims a strategy would split, the strategy is not applicable; where no
other is left, the program stays `replicated` (with `report`, a remark
says why), so any grid size gives a valid program.

The program is annotated in upstream's syntax: a `shard.grid @grid(shape =
N)` symbol, and `shard.sharding`/`shard.shard` ops on nn values: every
argument and every op result gets `shard.shard %v to %s` (how it is
stored or computed), and each use that reads it differently gets
`shard.shard ... annotate_for_users` (a parameter gathered whole, the
all-reduce of a matmul's partial sums). A value with partial sums (a
split contraction) has no result annotation; its users read it whole. The
function gets `lamina.sharding_strategy` and `lamina.communicated_bytes`
(per device per step). After Lamina's nn->linalg lowering
(`convert-nn-to-linalg`), upstream `func.func(sharding-propagation), cse,
func.func(shard-partition)` turns an MLP, an attention over a batch or a
multi-head attention block whose weights carry the heads into per-rank
code with exactly the collectives the report counts (a matmul of a
batched operand with a 2-d weight, and a 2-d attention, lower through
tensor reshapes, which upstream's partitioning has no rule for).

`report` prints the choice and every candidate, with its collectives, its
bytes per step and its memory per device, as remarks at the function on
stderr:

    mlp.mlir:1:1: remark: nn-auto-shard: @mlp on a grid of 2: tensor-parallel, 256 bytes per step
    mlp.mlir:1:1: remark: candidate data-parallel: 2112 bytes per step (all_gather %arg1 1024, ...); 7360 bytes per device

Expects verified nn IR with static shapes and no shardings (a module with
a `shard.grid` is an error at that op); run it before `nn-fuse` (a fused
group is computed whole). Ops the nn categories do not describe (other
dialects, reshape, concat, composites other than the normalisations,
softmaxes and attention) are computed whole: their operands are gathered.
Guarantees: the same computation, annotated; nothing else changes.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from fractions import Fraction

from mlir import ir
from mlir.dialects import shard

from lamina.diagnostics import Diagnostic, file_location
from lamina.pass_registry import OptionError, Pass, PassFailure, register_pass
from lamina.sharding_cost import PARTIAL, STRATEGIES, Plan, choose, program_of

GRID = "grid"


@dataclass
class FunctionReport:
    """The choice for one function and every candidate's plan."""

    function: str
    chosen: Plan
    candidates: list[Plan]
    fallback: str = ""

    def lines(self) -> list[str]:
        head = (f"nn-auto-shard: @{self.function} on a grid of {self.chosen.grid}: "
                f"{self.chosen.strategy}, {_whole(self.chosen.bytes)} bytes per step")
        if self.fallback:
            head += f" ({self.fallback})"
        return [head] + [f"candidate {plan.summary()}" for plan in self.candidates]


@dataclass
class ShardingReport:
    """What `nn-auto-shard` chose, function by function."""

    functions: list[FunctionReport] = field(default_factory=list)

    def __str__(self) -> str:
        return "\n".join(line for f in self.functions for line in f.lines())


def _whole(value: Fraction) -> int:
    return round(value)


def _split_axes(sharding) -> str:
    """Upstream's `split_axes` for a tensor whole or split along one dim
    over the grid's axis 0."""
    if sharding is None or sharding == PARTIAL:
        return "[[]]"
    return "[" + ", ".join("[0]" if d == sharding else "[]" for d in range(sharding + 1)) + "]"


class _Annotator:
    """Writes one plan's shardings into one function: `shard.sharding`
    values at the top, a `shard.shard` after each value (how it is stored
    or computed), and one `annotate_for_users` per other way it is read."""

    def __init__(self, function: ir.Operation, plan: Plan):
        self.function = function
        self.plan = plan
        self.top = ir.InsertionPoint.at_block_begin(function.regions[0].blocks[0])
        self.shardings: dict[str, ir.Value] = {}

    def _sharding(self, sharding) -> ir.Value:
        axes = _split_axes(sharding)
        if axes not in self.shardings:
            with self.top, self.function.location:
                self.shardings[axes] = shard.sharding(
                    ir.FlatSymbolRefAttr.get(GRID), ir.Attribute.parse(f"#shard<axisarray{axes}>"),
                    [], [])
        return self.shardings[axes]

    def annotate(self, program) -> None:
        """Annotates the function `program` was read from (before any
        annotation: its ops are the program's steps, in order)."""
        entry = self.function.regions[0].blocks[0]
        operations = [op.operation for op in entry.operations]
        values = _values(self.function)
        reads: dict[int, dict[object, list[tuple[ir.Operation, int]]]] = {}

        def read(tensor_index, sharding, operation, position):
            reads.setdefault(tensor_index, {}).setdefault(sharding, []).append(
                (operation, position))

        for index, (operation, step) in enumerate(zip(operations[:-1], program.steps)):
            for position, (access, operand) in enumerate(
                    zip(step.operands, _tensor_operands(operation))):
                read(access.tensor, self.plan.uses[(index, position)], operation, operand)
        ret = operations[-1]
        for tensor_index, want, operand in zip(program.outputs, self.plan.outputs,
                                               _tensor_operands(ret)):
            read(tensor_index, want, ret, operand)
        for tensor_index, value in enumerate(values):
            self._annotate_value(value, self.plan.shardings[tensor_index],
                                 reads.get(tensor_index, {}))

    def _annotate_value(self, value: ir.Value, have, reads) -> None:
        if isinstance(value, ir.BlockArgument):
            point, location = self.top, self.function.location
        else:
            point, location = ir.InsertionPoint.after(value.owner), value.owner.location
        source = value
        if have != PARTIAL:
            with point, location:
                source = shard.shard(value, self._sharding(have))
        for want, readers in reads.items():
            annotated = source
            if want != have:
                with ir.InsertionPoint.after(source.owner), location:
                    annotated = shard.shard(source, self._sharding(want), annotate_for_users=True)
            for reader, position in readers:
                reader.operands[position] = annotated


def _tensor_operands(operation: ir.Operation) -> list[int]:
    return [i for i, v in enumerate(operation.operands) if isinstance(v.type, ir.RankedTensorType)]


def _values(function: ir.Operation) -> list[ir.Value]:
    """The function's tensor values in the order `program_of` numbers them."""
    entry = function.regions[0].blocks[0]
    values = [a for a in entry.arguments if isinstance(a.type, ir.RankedTensorType)]
    for operation in entry.operations:
        if operation.operation.name == "func.return":
            continue
        values.extend(r for r in operation.results if isinstance(r.type, ir.RankedTensorType))
    return values


@register_pass
@dataclass
class NNAutoShard(Pass):
    """Chooses each function's sharding on a device grid (data, sequence or tensor parallel) by the bytes it communicates; writes upstream shard annotations."""

    argument = "nn-auto-shard"
    anchor = "builtin.module"

    grid: int = field(default=2, metadata={"minimum": 1, "maximum": 1 << 20})
    weights: str = "sharded"
    strategy: str = "auto"
    report: bool = False

    def __post_init__(self):
        super().__post_init__()
        if self.weights not in ("sharded", "replicated"):
            raise OptionError(f"option 'weights' of pass '{self.argument}' must be 'sharded' or "
                              f"'replicated', got '{self.weights}'")
        if self.strategy not in ("auto",) + STRATEGIES:
            raise OptionError(f"option 'strategy' of pass '{self.argument}' must be one of "
                              f"auto, {', '.join(STRATEGIES)}; got '{self.strategy}'")

    def run(self, op: ir.Operation) -> None:
        self.shard_module(op)

    def shard_module(self, module: ir.Operation) -> ShardingReport:
        """Annotates every function of `module`; returns what was chosen."""
        body = module.regions[0].blocks[0]
        functions = []
        for operation in body.operations:
            operation = operation.operation
            if operation.name.startswith("shard."):
                raise PassFailure("nn-auto-shard expects a program without shardings; this one "
                                  f"already has '{operation.name}'", operation.location)
            if operation.name == "func.func" and operation.regions[0].blocks:
                functions.append(operation)
        report = ShardingReport()
        if not functions:
            return report
        with module.context, module.location:
            with ir.InsertionPoint.at_block_begin(body):
                shard.grid(GRID, [self.grid])
            for function in functions:
                report.functions.append(self._shard_function(function))
        if self.report:
            for entry, function in zip(report.functions, functions):
                found = file_location(function.location)
                filename, line, col = found if found else (None, 0, 0)
                for message in entry.lines():
                    print(Diagnostic(filename, line, col, "remark", message).format(),
                          file=sys.stderr)
        return report

    def _shard_function(self, function: ir.Operation) -> FunctionReport:
        program = program_of(function)
        chosen, plans = choose(program, self.grid, self.weights)
        fallback = ""
        if self.strategy != "auto":
            chosen = next(p for p in plans if p.strategy == self.strategy)
            if not chosen.applicable:
                raise PassFailure(f"strategy '{self.strategy}' does not apply to "
                                  f"@{program.name}: {chosen.reason}", function.location)
        elif chosen.strategy == "replicated" and len(
                [p for p in plans if p.applicable]) == 1 and self.grid > 1:
            fallback = "no other strategy applies"
        _Annotator(function, chosen).annotate(program)
        function.attributes["lamina.sharding_strategy"] = ir.StringAttr.get(chosen.strategy)
        function.attributes["lamina.communicated_bytes"] = ir.IntegerAttr.get(
            ir.IntegerType.get_signless(64), _whole(chosen.bytes))
        return FunctionReport(program.name, chosen, plans, fallback)


def auto_shard(module, grid: int = 2, weights: str = "sharded", strategy: str = "auto"):
    """Annotates a copy of `module` (an `ir.Module` or MLIR text) with the
    shardings `nn-auto-shard` chooses on a grid of `grid` devices; returns
    the annotated module and the `ShardingReport`. Raises CompileError."""
    from lamina.context import make_context, verify
    from lamina.diagnostics import CompileError, DiagnosticCollector
    from lamina.parsing import parse_source

    text = module if isinstance(module, str) else module.operation.get_asm(enable_debug_info=True)
    sharder = NNAutoShard(grid=grid, weights=weights, strategy=strategy)
    context = make_context()
    with context, DiagnosticCollector(context) as collected:
        copy = parse_source(text, "<module>", context)
        try:
            report = sharder.shard_module(copy.operation)
        except PassFailure as failure:
            (failure.location or copy.operation.location).emit_error(str(failure))
            raise CompileError(collected.diagnostics) from None
        if not verify(copy.operation):
            raise CompileError(collected.diagnostics)
    return copy, report
