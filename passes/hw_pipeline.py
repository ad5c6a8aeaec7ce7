"""--hw-pipeline: realises `hw.pipeline {stages = S}` with multi-buffered
asynchronous copies.

A loop annotated with `hw.pipeline` is written as if each iteration loaded
its tiles and then used them:

    scf.for %k = LB to UB step STEP {
      "hw.pipeline"() {stages = 3}
      (index arithmetic)
      %t = "hw.async_copy"(%a, %tile, ...)     or    "hw.tma_load"(%a, %tile, %bar, %c0, ...)
      "hw.commit"(%t, ...)
      "hw.wait"() {pending = 0}                or    "hw.mbarrier_wait"(%bar, %c0, %parity)
      (the ops that use the tiles)
    }

The pass gives each tile S stages (a new `hw.alloc` with a leading dim of
S) and loads iteration j's tiles S-1 iterations ahead: a prologue issues
the loads of the first S-1 iterations; each iteration of the steady-state
loop issues the loads of iteration j+S-1 into the stage iteration j-1 has
finished with, waits for its own (`hw.wait {pending = S-1}`, or the
mbarrier of its stage at parity `(j / S) % 2`, each stage getting its own
mbarrier) and runs its ops on stage `j % S`; the last S-1 iterations run
unrolled after the loop, waiting for fewer groups each. The ops that use
the tiles must be `hw.mma` and `hw.copy` (they take the stage as an
index); a barrier the loop body ends with stays (it orders an
iteration's reads before the next loads into their stage).

Expects loop bounds that are constants, tiles allocated by `hw.alloc` and
used only in the loop, and, before the wait, only index arithmetic, the
loads and their commit (one mbarrier, used only by the loop, for TMA).
Guarantees: no `hw.pipeline` is left (one of 1 stage is just removed); the
kernel computes the same values (the emulation runs both forms alike) and
`hw-check-hazards` accepts the result of a loop that was free of hazards.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, scf

from lamina.dialects import hw
from lamina.dialects.opdef import lookup_op
from lamina.pass_registry import Pass, PassFailure, register_pass
from lamina.types import type_view


def _constant(value: ir.Value) -> int | None:
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.name != "arith.constant":
        return None
    attribute = owner.attributes["value"]
    return ir.IntegerAttr(attribute).value if isinstance(attribute, ir.IntegerAttr) else None


def _inside(op: ir.Operation, ancestor: ir.Operation) -> bool:
    while op is not None:
        if op == ancestor:
            return True
        parent = op.parent
        op = parent.operation if parent is not None else None
    return False


def _index(value: int) -> ir.Value:
    return arith.constant(ir.IndexType.get(), value)


class LoopPipeliner:
    """Pipelines one annotated loop."""

    def __init__(self, loop: ir.Operation, annotation: ir.Operation):
        self.loop = loop
        self.annotation = annotation
        self.stages = hw.PipelineOp.from_operation(annotation).stages
        bounds = [_constant(v) for v in list(loop.operands)[:3]]
        if None in bounds or len(loop.operands) != 3 or loop.results:
            raise PassFailure("hw-pipeline needs a loop with constant bounds and no iteration "
                              "arguments", annotation.location)
        self.lower, self.upper, self.step = bounds
        self.count = max(0, -(-(self.upper - self.lower) // self.step))
        body = loop.regions[0].blocks[0]
        self.iv = body.arguments[0]
        self.ops = [op.operation for op in body.operations][1:-1]

    # -- analysis --------------------------------------------------------------

    def split(self) -> None:
        """Finds the loads, their wait and the ops after it."""
        waits = [i for i, op in enumerate(self.ops)
                 if op.name in ("hw.wait", "hw.mbarrier_wait")]
        if not waits:
            raise PassFailure("the pipelined loop has no hw.wait or hw.mbarrier_wait after "
                              "its loads", self.annotation.location)
        self.wait = self.ops[waits[0]]
        self.tma = self.wait.name == "hw.mbarrier_wait"
        before, self.consumers = self.ops[:waits[0]], self.ops[waits[0] + 1:]
        loads = ("hw.tma_load",) if self.tma else ("hw.async_copy", "hw.commit")
        self.producers, self.index_ops = [], []
        for op in before:
            if op.name in loads:
                self.producers.append(op)
            elif op.name.startswith("arith.") and not op.regions:
                self.index_ops.append(op)
            else:
                raise PassFailure(f"hw-pipeline moves index arithmetic and the loads ahead; "
                                  f"'{op.name}' stands before the loop's wait", op.location)
        if not self.tma and hw.WaitOp.from_operation(self.wait).pending != 0:
            raise PassFailure("the wait of a loop to pipeline has pending = 0 (the pass "
                              "chooses how many groups stay in flight)", self.wait.location)
        self.tiles = []
        for op in self.producers:
            if op.name in ("hw.async_copy", "hw.tma_load"):
                tile = lookup_op(op.name).from_operation(op).operand("dst")
                if tile not in self.tiles:
                    self.tiles.append(tile)
        if not self.tiles:
            raise PassFailure("the pipelined loop loads no tile before its wait",
                              self.annotation.location)
        for tile in self.tiles:
            owner = tile.owner
            if isinstance(owner, ir.Block) or owner.name != "hw.alloc":
                raise PassFailure("hw-pipeline stages tiles made by hw.alloc",
                                  self.annotation.location)
            if not all(_inside(use.owner, self.loop) for use in tile.uses):
                raise PassFailure("hw-pipeline stages tiles used only by the pipelined loop",
                                  owner.location)
        if self.tma:
            view = hw.MBarrierWaitOp.from_operation(self.wait)
            self.barrier = view.operand("barrier")
            owner = self.barrier.owner
            if isinstance(owner, ir.Block) or owner.name != "hw.mbarrier_init":
                raise PassFailure("hw-pipeline needs the loop's mbarrier to come from "
                                  "hw.mbarrier_init", self.wait.location)
            if not all(_inside(use.owner, self.loop) for use in self.barrier.uses):
                raise PassFailure("hw-pipeline gives each stage its own mbarrier; the loop's "
                                  "mbarrier is used outside it", owner.location)

    # -- building --------------------------------------------------------------

    def staged_allocs(self) -> None:
        """A staged copy of each tile, after its allocation."""
        self.staged = {}
        for tile in self.tiles:
            view = type_view(tile.type)
            staged_type = view.with_shape((self.stages,) + view.shape).to_mlir()
            with ir.InsertionPoint.after(tile.owner), tile.owner.location:
                self.staged[tile] = hw.AllocOp.build(result_type=type_view(staged_type))
        if self.tma:
            init = self.barrier.owner
            view = hw.MBarrierInitOp.from_operation(init)
            with ir.InsertionPoint.after(init), init.location:
                self.staged_barrier = hw.MBarrierInitOp.build(count=view.count,
                                                              barriers=self.stages)

    def iteration(self, j) -> ir.Value:
        """The loop index of iteration `j` (an int or an index value)."""
        if isinstance(j, int):
            return _index(self.lower + j * self.step)
        return j

    def stage_of(self, k: ir.Value) -> ir.Value:
        """(k - LB) / STEP % S."""
        j = arith.divui(arith.subi(k, _index(self.lower)), _index(self.step))
        return arith.remui(j, _index(self.stages))

    def restaged(self, op: ir.Operation, mapping: dict, stage: ir.Value) -> ir.Operation:
        """`op` rebuilt with the staged tiles in place of the tiles, each
        indexed by `stage` (`mapping` maps the other operands)."""
        operands = [mapping.get(v, v) for v in op.operands]
        name = op.name
        view = lookup_op(name).from_operation(op)
        if name == "hw.mma":
            a, b, c = operands[:3]
            indices = operands[3:]
            lead_a = type_view(op.operands[0].type).rank - 2
            lead, rest = indices[:lead_a], indices[lead_a:]
            if op.operands[0] in self.staged:
                a, lead = self.staged[op.operands[0]], [stage] + lead
            if op.operands[1] in self.staged:
                b, rest = self.staged[op.operands[1]], [stage] + rest
            operands = [a, b, c] + lead + rest
        elif name in ("hw.copy", "hw.async_copy", "hw.tma_load"):
            names = [d.name for d in view.operand_decls]
            src, dst = op.operands[names.index("src")], op.operands[names.index("dst")]
            t = hw.transfer(type_view(src.type), type_view(dst.type))
            first = len(operands) - t.index_count
            src_indices, dst_indices = t.split(operands[first:])
            head = operands[:first]
            if src in self.staged:
                head[names.index("src")] = self.staged[src]
                src_indices = [stage] + src_indices
            if dst in self.staged:
                head[names.index("dst")] = self.staged[dst]
                dst_indices = [stage] + dst_indices
            if name == "hw.tma_load":
                head[names.index("barrier")] = self.staged_barrier
                head[names.index("barrier_index")] = stage
            operands = head + src_indices + dst_indices
        elif any(v in self.staged for v in op.operands):
            raise PassFailure(f"hw-pipeline cannot give '{name}' a stage of its tile (hw.mma "
                              "and hw.copy can)", op.location)
        attributes = {name: op.attributes[name] for name in op.attributes}
        return ir.Operation.create(name, results=[r.type for r in op.results],
                                   operands=operands, attributes=attributes, loc=op.location)

    def copy_ops(self, ops, k: ir.Value, stage: ir.Value) -> None:
        """Clones `ops` at the insertion point for loop index `k`, tiles at
        `stage`."""
        mapping = {self.iv: k}
        for op in ops:
            uses_tiles = any(v in self.staged for v in op.operands) or op.name == "hw.tma_load"
            if uses_tiles or op.name == "hw.commit":
                clone = self.restaged(op, mapping, stage)
            else:
                clone = op.clone(ip=ir.InsertionPoint.current)
                self.remap(clone, mapping)
            for old, new in zip(op.results, clone.results):
                mapping[old] = new

    @staticmethod
    def remap(op: ir.Operation, mapping: dict) -> None:
        def visit(inner):
            for i, operand in enumerate(inner.operands):
                if operand in mapping:
                    inner.operands[i] = mapping[operand]
            return ir.WalkResult.ADVANCE
        op.walk(visit, ir.WalkOrder.PRE_ORDER)

    def issue(self, j) -> None:
        k = self.iteration(j)
        self.copy_ops(self.index_ops + self.producers, k, self.stage_of(k))

    def wait_for(self, j, in_flight_after: int) -> None:
        """Waits for iteration `j`'s loads, `in_flight_after` later groups
        staying in flight."""
        location = self.wait.location
        if not self.tma:
            hw.WaitOp.build(pending=in_flight_after, loc=location)
            return
        k = self.iteration(j)
        stage = self.stage_of(k)
        j_value = arith.divui(arith.subi(k, _index(self.lower)), _index(self.step))
        parity = arith.remui(arith.divui(j_value, _index(self.stages)), _index(2))
        hw.MBarrierWaitOp.build(self.staged_barrier, stage, parity, loc=location)

    def consume(self, j) -> None:
        k = self.iteration(j)
        self.copy_ops(self.index_ops + self.consumers, k, self.stage_of(k))

    def run(self) -> None:
        self.split()
        self.staged_allocs()
        ahead = self.stages - 1
        steady = max(0, self.count - ahead)
        with ir.InsertionPoint(self.loop), self.loop.location:
            for j in range(min(ahead, self.count)):
                self.issue(j)
            if steady:
                loop = scf.ForOp(_index(self.lower), _index(self.lower + steady * self.step),
                                 _index(self.step))
                with ir.InsertionPoint(loop.body):
                    k = loop.induction_variable
                    self.issue(arith.addi(k, _index(ahead * self.step)))
                    self.wait_for(k, ahead)
                    self.consume(k)
                    scf.YieldOp([])
            for j in range(steady, self.count):
                self.wait_for(j, self.count - 1 - j)
                self.consume(j)
        self.loop.erase()
        for tile in self.tiles:
            tile.owner.erase()
        if self.tma:
            self.barrier.owner.erase()


@register_pass
@dataclass
class HWPipeline(Pass):
    """Realises hw.pipeline annotations: multi-buffered tiles loaded stages-1 iterations ahead."""

    argument = "hw-pipeline"

    def run(self, op: ir.Operation) -> None:
        annotations = []

        def visit(inner):
            if inner.name == "hw.pipeline":
                annotations.append(inner.operation)
            return ir.WalkResult.ADVANCE
        op.walk(visit, ir.WalkOrder.PRE_ORDER)
        with op.context:
            for annotation in annotations:
                loop = annotation.parent.operation
                if hw.PipelineOp.from_operation(annotation).stages < 2:
                    annotation.erase()
                    continue
                LoopPipeliner(loop, annotation).run()
