"""The communication cost model behind `--nn-auto-shard`.

A function of nn ops is seen as a `Program`: its tensors (arguments, op
results) and its steps (ops), each step with its loops and, for each
operand and result, which loop each dim reads (from the op category's
indexing maps). A strategy (one of `STRATEGIES`) decides, op by op, which
loop of each step is split across a 1-D device grid of `n` devices: the
split follows from the operands (the largest split operand leads), seeds
say where the activations arrive split, and tensor parallelism chooses the
split of a matmul with a parameter. `evaluate` returns the `Plan`: the sharding of
every tensor and operand, the collectives partitioning inserts, and their
bytes per step.

What the bytes count (inference, per device per step, ring algorithms):

* all-reduce of a tensor of `s` bytes: `2 (n-1)/n * s` (a split reduction
  loop leaves partial sums; they are reduced where they are first used,
  and at the return);
* all-gather: `(n-1)/n * s` (a split operand that a step needs whole);
* all-to-all: `(n-1)/n^2 * s` (an operand split along another dim);
* taking a shard of a whole tensor is a local slice: 0 bytes.

Where values live at the function boundary:

* activations (arguments with a dim that becomes the leading dim of a
  result, the batch or the tokens, through the loops the steps share)
  arrive whole on every device: a strategy's seed shard is a slice;
* parameters (the other arguments: weights, biases, scales, whatever
  their rank) are stored split across the grid, each device holding `1/n`
  (`weights=sharded`, the default: the model outgrows one device): a
  strategy that splits a parameter the way it is used stores it that way,
  one that needs it whole all-gathers it every step. With
  `weights=replicated` every device holds every parameter and taking a
  shard is free;
* results stay where they are computed (split results are not gathered).

Candidates: `replicated` (no split), `data-parallel` (activations split on
their batch dim), `sequence-parallel` (activations of rank >= 3 split on
axis -2, their sequence), `tensor-parallel` (Megatron: a matmul with a
parameter splits the parameter along a loop the other operand does not
read, its columns or its heads, when that operand is whole, and along the
contracted dim when that operand arrives split along it, so that a
column-then-row pair communicates one all-reduce). The plan with the
fewest bytes wins; ties go to the one with less memory per device, then
to the earlier candidate. A candidate whose seeds the grid does not divide
is not applicable; where only `replicated` is left, it is chosen.

This module needs MLIR only in `program_of`, which reads a `func.func`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Optional

PARTIAL = "partial"
# A tensor's sharding: None (whole on every device), a split dim, or PARTIAL.
Sharding = Optional[object]

STRATEGIES = ("replicated", "data-parallel", "sequence-parallel", "tensor-parallel")


@dataclass(frozen=True)
class Tensor:
    """A value of the program: its shape, element size and role."""

    name: str
    shape: tuple[int, ...]
    itemsize: int
    argument: bool = False
    parameter: bool = False

    @property
    def bytes(self) -> int:
        return self.itemsize * math.prod(self.shape)


@dataclass(frozen=True)
class Access:
    """A tensor a step reads or writes, and the loop each of its dims reads
    (None for a dim that reads no single loop: a broadcast dim, a window)."""

    tensor: int
    loops: Optional[tuple[Optional[int], ...]]

    def dim_of(self, loop: int) -> Optional[int]:
        if self.loops is None:
            return None
        for dim, read in enumerate(self.loops):
            if read == loop:
                return dim
        return None


@dataclass(frozen=True)
class Step:
    """One op: its loop sizes, which loops may be split (parallel loops, and
    reductions whose split leaves partial results), and its accesses."""

    name: str
    sizes: tuple[int, ...]
    splittable: frozenset[int]
    reductions: frozenset[int]
    operands: tuple[Access, ...]
    results: tuple[Access, ...]
    contraction: bool = False


@dataclass
class Program:
    """The tensors and steps of one function, the tensors it returns, and
    the batch dim of each activation (default: its first)."""

    name: str
    tensors: list[Tensor]
    steps: list[Step]
    outputs: list[int]
    batch_dims: dict[int, int] = field(default_factory=dict)

    @property
    def activations(self) -> list[int]:
        return [i for i, t in enumerate(self.tensors) if t.argument and not t.parameter]

    @property
    def parameters(self) -> list[int]:
        return [i for i, t in enumerate(self.tensors) if t.parameter]


@dataclass(frozen=True)
class Collective:
    """A collective the partitioned program runs: its kind, the tensor, the
    tensor's global bytes and the bytes each device sends."""

    kind: str
    tensor: str
    size: int
    bytes: Fraction

    def __str__(self) -> str:
        return f"{self.kind} {self.tensor} {_format_bytes(self.bytes)}"


@dataclass
class Plan:
    """A strategy's shardings and costs. `shardings[t]` is how tensor `t`
    is produced (for a parameter, how it is stored); `uses[(s, k)]` how
    operand `k` of step `s` is read; `outputs` how each result is returned."""

    strategy: str
    grid: int
    applicable: bool = True
    reason: str = ""
    shardings: dict[int, Sharding] = field(default_factory=dict)
    uses: dict[tuple[int, int], Sharding] = field(default_factory=dict)
    outputs: list[Sharding] = field(default_factory=list)
    collectives: list[Collective] = field(default_factory=list)
    memory: int = 0

    @property
    def bytes(self) -> Fraction:
        return sum((c.bytes for c in self.collectives), Fraction(0))

    def summary(self) -> str:
        if not self.applicable:
            return f"{self.strategy}: not applicable: {self.reason}"
        moved = ", ".join(str(c) for c in self.collectives) or "no collectives"
        return (f"{self.strategy}: {_format_bytes(self.bytes)} bytes per step ({moved}); "
                f"{self.memory} bytes per device")


def _format_bytes(value: Fraction) -> str:
    return str(value.numerator) if value.denominator == 1 else f"{float(value):.1f}"


# ---------------------------------------------------------------------------
# Collective sizes (ring algorithms, bytes each device sends).


def all_reduce_bytes(size: int, n: int) -> Fraction:
    return Fraction(2 * (n - 1), n) * size


def all_gather_bytes(size: int, n: int) -> Fraction:
    return Fraction(n - 1, n) * size


def all_to_all_bytes(size: int, n: int) -> Fraction:
    return Fraction(n - 1, n * n) * size


# ---------------------------------------------------------------------------
# Evaluation.


class _Evaluation:
    """Walks a program's steps in order under one strategy."""

    def __init__(self, program: Program, strategy: str, grid: int, weights: str,
                 seeds: dict[int, Sharding]):
        self.program = program
        self.n = grid
        self.weights = weights
        self.plan = Plan(strategy, grid)
        self.plan.shardings.update(seeds)
        self.resharded: dict[tuple[int, Sharding], None] = {}

    def _divides(self, size: int) -> bool:
        return size % self.n == 0

    def _suggestions(self, step: Step) -> list[tuple[int, int]]:
        """(bytes, loop) for each operand that arrives split along a loop the
        step may split; parameters suggest nothing (they are stored as the
        plan needs them)."""
        found = []
        for access in step.operands:
            tensor = self.program.tensors[access.tensor]
            have = self.plan.shardings.get(access.tensor)
            if tensor.parameter or not isinstance(have, int) or access.loops is None:
                continue
            loop = access.loops[have]
            if loop is not None and loop in step.splittable and self._divides(step.sizes[loop]):
                found.append((tensor.bytes, loop))
        return found

    def _megatron_loop(self, step: Step) -> Optional[int]:
        """The loop a matmul with one parameter operand splits in the
        tensor-parallel strategy: the contracted loop when the other
        operand arrives split along it (row parallel), else a parallel loop
        only the parameter reads (column parallel)."""
        params = [a for a in step.operands if self.program.tensors[a.tensor].parameter]
        others = [a for a in step.operands if not self.program.tensors[a.tensor].parameter]
        if len(params) != 1 or len(others) != 1 or others[0].loops is None:
            return None
        param, other = params[0], others[0]
        have = self.plan.shardings.get(other.tensor)
        if isinstance(have, int):
            loop = other.loops[have]
            if loop in step.reductions and loop in step.splittable \
                    and self._divides(step.sizes[loop]):
                return loop
            return None
        for loop in sorted(step.splittable - step.reductions):
            if (param.dim_of(loop) is not None and other.dim_of(loop) is None
                    and self._divides(step.sizes[loop])):
                return loop
        return None

    def _use(self, tensor_index: int, want: Sharding) -> None:
        """Counts what reading a tensor with sharding `want` costs (once
        per tensor and sharding, as the partitioned program shares it)."""
        key = (tensor_index, want)
        if key in self.resharded:
            return
        self.resharded[key] = None
        tensor = self.program.tensors[tensor_index]
        have = self.plan.shardings.get(tensor_index)
        if have == want:
            return
        if have == PARTIAL:
            self.plan.collectives.append(Collective(
                "all_reduce", tensor.name, tensor.bytes, all_reduce_bytes(tensor.bytes, self.n)))
        elif have is None:
            pass
        elif want is None:
            self.plan.collectives.append(Collective(
                "all_gather", tensor.name, tensor.bytes, all_gather_bytes(tensor.bytes, self.n)))
        else:
            self.plan.collectives.append(Collective(
                "all_to_all", tensor.name, tensor.bytes, all_to_all_bytes(tensor.bytes, self.n)))
        if want is not None:
            self.plan.memory += tensor.bytes // self.n
        elif have is not None:
            self.plan.memory += tensor.bytes

    def run(self) -> Plan:
        program, plan = self.program, self.plan
        for index, step in enumerate(program.steps):
            loop = self._megatron_loop(step) if (
                plan.strategy == "tensor-parallel" and step.contraction) else None
            if loop is None:
                suggestions = self._suggestions(step)
                loop = max(suggestions, key=lambda s: s[0])[1] if suggestions else None
            for position, access in enumerate(step.operands):
                want = access.dim_of(loop) if loop is not None else None
                shape = program.tensors[access.tensor].shape
                plan.uses[(index, position)] = (
                    want if want is not None and self._divides(shape[want]) else None)
            for access in step.results:
                if loop is not None and loop in step.reductions:
                    plan.shardings[access.tensor] = PARTIAL
                else:
                    plan.shardings[access.tensor] = None if loop is None else access.dim_of(loop)
        self._store_parameters()
        for tensor_index in range(len(program.tensors)):
            plan.shardings.setdefault(tensor_index, None)
        for (index, position), want in plan.uses.items():
            self._use(program.steps[index].operands[position].tensor, want)
        for tensor_index in program.outputs:
            have = plan.shardings.get(tensor_index)
            want = None if have == PARTIAL else have
            plan.outputs.append(want)
            self._use(tensor_index, want)
        for tensor_index, tensor in enumerate(program.tensors):
            have = plan.shardings.get(tensor_index)
            plan.memory += tensor.bytes // self.n if isinstance(have, int) else tensor.bytes
        return plan

    def _store_parameters(self) -> None:
        """Where each parameter is stored: whole with `weights=replicated`;
        else split as its first split use reads it, else along its first
        dim the grid divides (whole where none does)."""
        for tensor_index in self.program.parameters:
            split = [w for (s, k), w in self.plan.uses.items()
                     if self.program.steps[s].operands[k].tensor == tensor_index
                     and w is not None]
            if self.weights == "replicated":
                stored = None
            elif split:
                stored = split[0]
            else:
                shape = self.program.tensors[tensor_index].shape
                stored = next((d for d, size in enumerate(shape) if self._divides(size)), None)
            self.plan.shardings[tensor_index] = stored


def _seeds(program: Program, strategy: str, grid: int) -> tuple[dict[int, Sharding], str]:
    """Where the activations arrive split under a strategy, or why the
    strategy does not apply."""
    activations = program.activations
    if strategy in ("replicated", "tensor-parallel"):
        if strategy == "tensor-parallel" and not any(
                step.contraction and any(program.tensors[a.tensor].parameter for a in step.operands)
                for step in program.steps):
            return {}, "no matmul reads a parameter"
        return {}, ""
    if not activations:
        return {}, "the function has no activation arguments"
    seeds = {}
    for index in activations:
        tensor = program.tensors[index]
        if strategy == "sequence-parallel" and len(tensor.shape) < 3:
            return {}, (f"{tensor.name} has rank {len(tensor.shape)}: "
                        "no sequence axis besides the batch")
        if not tensor.shape:
            continue
        dim = (program.batch_dims.get(index, 0) if strategy == "data-parallel"
               else len(tensor.shape) - 2)
        what = "batch" if strategy == "data-parallel" else "sequence"
        if tensor.shape[dim] % grid:
            return {}, (f"the {what} axis of {tensor.name} ({tensor.shape[dim]}) is not "
                        f"divisible by the grid ({grid})")
        seeds[index] = dim
    return seeds, ""


def evaluate(program: Program, strategy: str, grid: int, weights: str = "sharded") -> Plan:
    """The plan of one strategy on a grid of `grid` devices."""
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy '{strategy}' (strategies: {', '.join(STRATEGIES)})")
    seeds, reason = _seeds(program, strategy, grid)
    if reason:
        return Plan(strategy, grid, applicable=False, reason=reason)
    plan = _Evaluation(program, strategy, grid, weights, seeds).run()
    if strategy != "replicated" and not any(
            isinstance(s, int) or s == PARTIAL for s in plan.shardings.values()):
        return Plan(strategy, grid, applicable=False,
                    reason=f"the grid ({grid}) divides no dim the strategy would split")
    return plan


def choose(program: Program, grid: int, weights: str = "sharded") -> tuple[Plan, list[Plan]]:
    """Every candidate's plan, and the chosen one: fewest bytes, then least
    memory per device, then the earlier candidate."""
    plans = [evaluate(program, strategy, grid, weights) for strategy in STRATEGIES]
    applicable = [p for p in plans if p.applicable]
    chosen = min(applicable, key=lambda p: (p.bytes, p.memory, plans.index(p)))
    return chosen, plans


# ---------------------------------------------------------------------------
# Reading a program from a func.func of nn ops.

_LOOP = re.compile(r"^d(\d+)$")


def _loops_of(indexing_map) -> Optional[tuple[Optional[int], ...]]:
    if indexing_map is None:
        return None
    return tuple(int(m.group(1)) if (m := _LOOP.match(r.strip())) else None
                 for r in indexing_map.results)


def _structure(view, operand_types) -> Optional[tuple]:
    """(loop sizes, splittable loops, reduction loops, operand loops, result
    loops) of an nn op, from its category; None for an op whose dims no
    interface relates (it is computed whole)."""
    from lamina.dialects import nn

    if isinstance(view, nn.AttentionOp):
        q, k, v, mask = operand_types
        batch = len(q.shape) - 2
        b = tuple(range(batch))
        sq, sk, d, dv = batch, batch + 1, batch + 2, batch + 3
        sizes = q.shape[:-1] + (k.shape[-2], q.shape[-1], v.shape[-1])
        accesses = [b + (sq, d), b + (sk, d), b + (sk, dv)]
        if mask is not None:
            scores = b + (sq, sk)
            offset = len(scores) - len(mask.shape)
            accesses.append(tuple(None if size == 1 and sizes[scores[offset + i]] != 1
                                  else scores[offset + i] for i, size in enumerate(mask.shape)))
        return sizes, frozenset(b + (sq, dv)), frozenset((sk, d)), accesses, [b + (sq, dv)]
    if hasattr(view, "indexing_maps") and hasattr(view, "iteration_domain"):
        domain = view.iteration_domain(*operand_types)
        maps = view.indexing_maps(*operand_types)
        loops = [_loops_of(m) for m in maps]
        reductions = frozenset(domain.reduction_dims)
        return domain.sizes, frozenset(range(domain.rank)), reductions, loops[:-1], loops[-1:]
    if isinstance(view, nn.CompositeOp) and hasattr(view, "axis"):
        # Normalisations and softmaxes: the rows are the dims outside the
        # normalised ones; scale and shift operands read the normalised dims.
        x = operand_types[0]
        if hasattr(view, "normalized_dims"):
            normalised = view.normalized_dims(x)
        else:
            normalised = (view.axis % len(x.shape),)
        loops = tuple(range(len(x.shape)))
        accesses = [loops] + [normalised[-len(t.shape):] if t.shape else ()
                              for t in operand_types[1:] if t is not None]
        return (x.shape, frozenset(loops) - frozenset(normalised), frozenset(normalised),
                accesses, [loops])
    return None


def program_of(function) -> Program:
    """The program of a `func.func` (an `ir.Operation`): every op but the
    return is a step; ops the nn categories do not describe are computed
    whole on every device."""
    from mlir import ir

    from lamina.dialects.opdef import lookup_op
    from lamina.types import TensorType, byte_size

    tensors: list[Tensor] = []
    index_of: dict = {}

    def add(value, name, argument=False):
        t = ir.RankedTensorType(value.type)
        itemsize = byte_size(ir.RankedTensorType.get([], t.element_type, loc=ir.Location.unknown()))
        index_of[value] = len(tensors)
        tensors.append(Tensor(name, tuple(t.shape), itemsize, argument))

    names = ir.AsmState(function)
    entry = function.regions[0].blocks[0]
    for argument in entry.arguments:
        if isinstance(argument.type, ir.RankedTensorType):
            add(argument, argument.get_name(names), argument=True)
    steps: list[Step] = []
    outputs: list[int] = []
    for operation in entry.operations:
        operation = operation.operation
        if operation.name == "func.return":
            outputs = [index_of[v] for v in operation.operands if v in index_of]
            continue
        results = [r for r in operation.results if isinstance(r.type, ir.RankedTensorType)]
        for result in results:
            add(result, result.get_name(names))
        operands = [v for v in operation.operands if v in index_of]
        op_class = lookup_op(operation.name)
        structure = None
        if op_class is not None and len(results) == 1 and not operation.regions:
            view = op_class.from_operation(operation)
            groups = [view.operand(decl.name) for decl in view.operand_decls]
            types = [[TensorType.from_mlir(v.type) for v in g] if isinstance(g, list)
                     else None if g is None else TensorType.from_mlir(g.type) for g in groups]
            structure = _structure(view, types)
        if structure is None:
            steps.append(Step(operation.name, (), frozenset(), frozenset(),
                              tuple(Access(index_of[v], None) for v in operands),
                              tuple(Access(index_of[r], None) for r in results)))
            continue
        sizes, splittable, reductions, operand_loops, result_loops = structure
        accesses = tuple(Access(index_of[v], loops) for v, loops in zip(operands, operand_loops))
        steps.append(Step(operation.name, tuple(sizes), splittable, reductions, accesses,
                          (Access(index_of[results[0]], result_loops[0]),),
                          contraction=getattr(view, "fusion_kind", None) == "contraction"))
    program = Program(function.attributes["sym_name"].value, tensors, steps, outputs)
    _mark_parameters(program)
    return program


def _mark_parameters(program: Program) -> None:
    """Arguments none of whose dims become the leading dim of a result
    (through the loops the steps share) are parameters; an activation's
    dim that does is its batch dim."""
    parent: dict = {}

    def find(key):
        parent.setdefault(key, key)
        while parent[key] != key:
            parent[key] = parent[parent[key]]
            key = parent[key]
        return key

    for index, step in enumerate(program.steps):
        for access in step.operands + step.results:
            for dim, loop in enumerate(access.loops or ()):
                if loop is not None:
                    parent[find(("tensor", access.tensor, dim))] = find(("loop", index, loop))
        if len(step.operands) == 1 and len(step.results) == 1 and step.operands[0].loops is None:
            # A reshape keeps the leading dims its operand and result share.
            source, target = step.operands[0].tensor, step.results[0].tensor
            for dim, (a, b) in enumerate(zip(program.tensors[source].shape,
                                             program.tensors[target].shape)):
                if a != b:
                    break
                parent[find(("tensor", source, dim))] = find(("tensor", target, dim))
    leading = {find(("tensor", output, 0)) for output in program.outputs
               if program.tensors[output].shape}
    for index, tensor in enumerate(program.tensors):
        if not tensor.argument:
            continue
        batch = [d for d in range(len(tensor.shape)) if find(("tensor", index, d)) in leading]
        if batch:
            program.batch_dims[index] = batch[0]
        else:
            program.tensors[index] = Tensor(tensor.name, tensor.shape, tensor.itemsize,
                                            argument=True, parameter=True)
