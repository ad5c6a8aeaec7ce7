"""--hw-check-hazards: reports the synchronisation hazards of hw kernels.

Real hardware leaves these undefined; the emulation would hide them (it
runs one op after the other). Each is a located error at the offending op:

* a read of a shared tile whose async copy is not complete: never
  committed, or committed but not completed by any `hw.wait` (reported at
  the read), or left in flight by a `hw.wait {pending = N}` whose N is too
  large (reported at the wait, with the largest N that would do);
* a read of a shared tile whose TMA load's mbarrier phase no
  `hw.mbarrier_wait` has observed;
* a write to a shared tile that other threads may still be reading, or
  that another op wrote, with no barrier (`hw.barrier`, `hw.wait`) in
  between; a read of a shared tile written with no barrier in between; a
  write to a tile whose async copy or TMA load is still in flight;
* a read of a shared tile by a gather (`hw.gather_elements`, which may
  read any of its elements) with no barrier after the tile's write; a
  write of a shared tile by an im2col gather (`hw.im2col`, whose threads
  write all over it) that other threads may still be reading;
* a block reduction's scratch tile written or read by another op with no
  barrier in between (the reduction synchronises the block after writing
  it and after reading it);
* an `hw.mbarrier_wait` on a phase that nothing completes (a deadlock:
  every thread waits, and no arrival is left to come).

The check runs each kernel on the values it can compute: index arithmetic
(arith), `scf.for` loops with constant bounds and their iteration
arguments, `scf.if` on known conditions and `hw.block_id`, for the first
and the last block of each launch's grid. It is exact for such kernels,
straight-line or software-pipelined: tiles are tracked as the boxes of
elements each op reads and writes, per stage. Registers and global
memory are not tracked (register tiles belong to the threads that hold
them; blocks do not share global memory within a launch). Where a loop
bound, a condition or an index cannot be computed (it depends on memory),
the ops that depend on it are not checked; so are ops with regions other
than `scf.for` and `scf.if`, and what a kernel does after its first
STEP_LIMIT ops for a block.

Expects verified hw IR. Guarantees: the IR is not changed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from mlir import ir

from lamina.diagnostics import file_location
from lamina.dialects import hw
from lamina.dialects.opdef import lookup_op
from lamina.pass_registry import Pass, PassFailure, register_pass
from lamina.types import type_view

# Ops executed per kernel and block before the check gives up on it.
STEP_LIMIT = 2_000_000


def where(operation: ir.Operation) -> str:
    """`'op' at file:line:col`, for messages about another op."""
    found = file_location(operation.location)
    if not found:
        return f"'{operation.name}'"
    filename, line, col = found
    return f"'{operation.name}' at {os.path.basename(filename)}:{line}:{col}"


def overlaps(a: hw.Region, b: hw.Region) -> bool:
    return all(lo1 < hi2 and lo2 < hi1 for (lo1, hi1), (lo2, hi2) in zip(a, b))


@dataclass
class Tile:
    """A shared tile: its type, for messages."""

    type: str

    def describe(self, region: hw.Region) -> str:
        ranges = ", ".join(str(lo) if hi == lo + 1 else f"{lo}:{hi}" for lo, hi in region)
        return f"shared tile {self.type}[{ranges}]"


@dataclass
class Access:
    tile: Tile
    region: hw.Region
    op: ir.Operation


@dataclass
class AsyncWrite(Access):
    """An async copy in flight; `group` once committed."""

    group: "Group | None" = None


@dataclass
class Group:
    """A committed group of async copies; `left_by` is the last wait that
    left it in flight, with the number of groups committed after it then."""

    writes: list[AsyncWrite]
    left_by: tuple[ir.Operation, int, int] | None = None


@dataclass
class TmaWrite(Access):
    barrier: "MBarriers | None" = None
    index: int = 0
    phase: int = 0


@dataclass
class MBarriers:
    """A group of mbarriers: per barrier, the arrivals of its current
    phase, the phases completed and the last phase a wait observed."""

    count: int
    arrivals: list[int]
    completed: list[int]
    observed: list[int]


class Stop(Exception):
    """Ends the check of one kernel and block."""


class Unknown(Exception):
    """A value the check needs cannot be computed."""


_INT_OPS = {
    "arith.addi": lambda a, b: a + b, "arith.subi": lambda a, b: a - b,
    "arith.muli": lambda a, b: a * b, "arith.divui": lambda a, b: a // b,
    "arith.divsi": lambda a, b: int(a / b), "arith.floordivsi": lambda a, b: a // b,
    "arith.ceildivsi": lambda a, b: -(-a // b), "arith.ceildivui": lambda a, b: -(-a // b),
    "arith.remui": lambda a, b: a % b, "arith.remsi": lambda a, b: a - b * int(a / b),
    "arith.minui": min, "arith.minsi": min, "arith.maxui": max, "arith.maxsi": max,
    "arith.andi": lambda a, b: a & b, "arith.ori": lambda a, b: a | b,
    "arith.xori": lambda a, b: a ^ b, "arith.shli": lambda a, b: a << b,
    "arith.shrui": lambda a, b: a >> b, "arith.shrsi": lambda a, b: a >> b,
}
_CASTS = ("arith.index_cast", "arith.index_castui", "arith.extui", "arith.extsi",
          "arith.trunci")
# arith.cmpi predicates by their enum value.
_COMPARE = [lambda a, b: a == b, lambda a, b: a != b, lambda a, b: a < b,
            lambda a, b: a <= b, lambda a, b: a > b, lambda a, b: a >= b,
            lambda a, b: a < b, lambda a, b: a <= b, lambda a, b: a > b,
            lambda a, b: a >= b]


class KernelCheck:
    """Runs one kernel for one block, collecting hazards."""

    def __init__(self, kernel: ir.Operation, block_id: tuple[int, int, int],
                 problems: dict):
        self.kernel = kernel
        self.block_id = block_id
        self.problems = problems
        self.values: dict[ir.Value, object] = {}
        self.tiles: dict[ir.Value, Tile] = {}
        self.reads: list[Access] = []
        self.writes: list[Access] = []
        self.uncommitted: dict[ir.Value, AsyncWrite] = {}
        self.in_flight: list[Group] = []
        self.tma: list[TmaWrite] = []
        self.mbarriers: dict[ir.Value, MBarriers] = {}
        self.steps = 0

    # -- reporting -----------------------------------------------------------

    def problem(self, operation: ir.Operation, kind: str, message: str) -> None:
        """Records a hazard; an op reports the first of each kind. Ops are
        told apart by name and location (their Python wrappers do not hash
        alike), so the copies of an op that hw-pipeline makes report once."""
        key = (operation.name, str(operation.location), kind)
        self.problems.setdefault(key, (operation, message))

    # -- values --------------------------------------------------------------

    def value(self, v: ir.Value):
        if v not in self.values or self.values[v] is None:
            raise Unknown(v)
        return self.values[v]

    def indices(self, values) -> list[int]:
        return [self.value(v) for v in values]

    def run(self) -> None:
        try:
            self.run_block(self.kernel.regions[0].blocks[0], [])
        except Stop:
            pass

    def run_block(self, block: ir.Block, arguments: list) -> list | None:
        """Runs a block; returns the values its terminator passes on."""
        for argument, value in zip(block.arguments, arguments):
            self.values[argument] = value
        for op in block.operations:
            op = op.operation
            self.steps += 1
            if self.steps > STEP_LIMIT:
                raise Stop
            if op.name in ("scf.yield", "func.return"):
                return [self.values.get(v) for v in op.operands]
            try:
                self.step(op)
            except Unknown:
                for result in op.results:
                    self.values[result] = None
        return None

    def step(self, op: ir.Operation) -> None:
        name = op.name
        if name.startswith("hw."):
            self.hw_op(op)
        elif name == "arith.constant":
            attribute = op.attributes["value"]
            if isinstance(attribute, ir.IntegerAttr):
                self.values[op.results[0]] = ir.IntegerAttr(attribute).value
        elif name in _INT_OPS:
            self.values[op.results[0]] = _INT_OPS[name](*self.indices(op.operands))
        elif name in _CASTS:
            self.values[op.results[0]] = self.value(op.operands[0])
        elif name == "arith.cmpi":
            predicate = ir.IntegerAttr(op.attributes["predicate"]).value
            self.values[op.results[0]] = int(_COMPARE[predicate](*self.indices(op.operands)))
        elif name == "arith.select":
            condition = self.value(op.operands[0])
            self.values[op.results[0]] = self.values.get(op.operands[1 if condition else 2])
        elif name == "scf.for":
            self.run_for(op)
        elif name == "scf.if":
            condition = self.value(op.operands[0])
            region = op.regions[0 if condition else 1]
            outputs = self.run_block(region.blocks[0], []) if region.blocks else []
            for result, value in zip(op.results, outputs or []):
                self.values[result] = value

    def run_for(self, op: ir.Operation) -> None:
        lower, upper, step = self.indices(list(op.operands)[:3])
        carried = [self.values.get(v) for v in list(op.operands)[3:]]
        body = op.regions[0].blocks[0]
        iv = lower
        while iv < upper:
            outputs = self.run_block(body, [iv] + carried)
            carried = outputs if outputs is not None else carried
            iv += step
        for result, value in zip(op.results, carried):
            self.values[result] = value

    # -- hw ops --------------------------------------------------------------

    def hw_op(self, op: ir.Operation) -> None:
        view = lookup_op(op.name).from_operation(op)
        name = op.name
        if name == "hw.block_id":
            self.values[op.results[0]] = self.block_id[view.dim]
        elif name == "hw.alloc":
            tile = type_view(op.results[0].type)
            if tile.space == "workgroup":
                self.tiles[op.results[0]] = Tile(str(tile))
        elif name in ("hw.copy", "hw.async_copy", "hw.tma_load"):
            self.transfer(op, view)
        elif name in ("hw.mma", "hw.contract"):
            self.mma(op, view)
        elif name == "hw.fill":
            out = view.operand("out")
            if out in self.tiles:
                self.write(op, self.tiles[out], tuple((0, d) for d in type_view(out.type).shape))
        elif name == "hw.gather_elements":
            # A gather from a shared tile may read any of its elements.
            src = view.operand("src")
            if src in self.tiles:
                self.read(op, self.tiles[src], tuple((0, d) for d in type_view(src.type).shape))
        elif name == "hw.im2col":
            # Each thread gathers elements all over the tile.
            dst = view.operand("dst")
            if dst in self.tiles:
                self.write(op, self.tiles[dst], tuple((0, d) for d in type_view(dst.type).shape))
        elif name == "hw.commit":
            self.commit(op, view)
        elif name == "hw.wait":
            self.wait(op, view.pending)
        elif name == "hw.barrier":
            self.barrier()
        elif name == "hw.block_reduce":
            # Each warp writes its total into the scratch tile, the block
            # synchronises, reads it and synchronises again.
            for scratch in view.operand("scratch"):
                if scratch in self.tiles:
                    region = tuple((0, d) for d in type_view(scratch.type).shape)
                    self.write(op, self.tiles[scratch], region)
                    self.barrier()
                    self.read(op, self.tiles[scratch], region)
                    self.barrier()
        elif name == "hw.mbarrier_init":
            self.mbarriers[op.results[0]] = MBarriers(view.count, [0] * view.barriers,
                                                      [0] * view.barriers, [-1] * view.barriers)
        elif name == "hw.mbarrier_arrive":
            self.arrive(op, view.operand("barrier"), self.value(view.operand("index")))
        elif name == "hw.mbarrier_wait":
            self.mbarrier_wait(op, view)

    def transfer(self, op: ir.Operation, view) -> None:
        src, dst = view.operand("src"), view.operand("dst")
        t = hw.transfer(type_view(src.type), type_view(dst.type))
        src_region, dst_region = t.regions(self.indices(view.operand("indices")))
        if src in self.tiles:
            self.read(op, self.tiles[src], src_region)
        if dst not in self.tiles:
            return
        tile = self.tiles[dst]
        if op.name == "hw.copy":
            self.write(op, tile, dst_region)
        elif op.name == "hw.async_copy":
            self.check_write(op, tile, dst_region)
            self.uncommitted[op.results[0]] = AsyncWrite(tile, dst_region, op)
        else:
            barrier = view.operand("barrier")
            self.check_write(op, tile, dst_region)
            state = self.mbarrier(op, barrier)
            index = self.barrier_index(op, state, self.value(view.operand("barrier_index")))
            self.tma.append(TmaWrite(tile, dst_region, op, state, index, state.completed[index]))
            self.arrive(op, barrier, index)

    def mma(self, op: ir.Operation, view) -> None:
        a, b = view.operand("a"), view.operand("b")
        a_type, b_type = type_view(a.type), type_view(b.type)
        indices = self.indices(view.operand("indices"))
        lead = a_type.rank - 2
        for value, memref, stage in ((a, a_type, indices[:lead]), (b, b_type, indices[lead:])):
            if value in self.tiles:
                place = hw.Placement(memref, "tile", memref.shape[-2:])
                self.read(op, self.tiles[value], place.region(stage))

    # -- shared memory accesses ----------------------------------------------

    def read(self, op: ir.Operation, tile: Tile, region: hw.Region) -> None:
        what = tile.describe(region)
        for write in self.uncommitted.values():
            if write.tile is tile and overlaps(write.region, region):
                self.problem(op, "uncommitted", f"reads {what} while its async copy ({where(write.op)}) is in "
                                 "flight: the copy was never committed (hw.commit), so no "
                                 "hw.wait completes it")
        for group in self.in_flight:
            for write in group.writes:
                if write.tile is not tile or not overlaps(write.region, region):
                    continue
                if group.left_by is not None:
                    wait, pending, newer = group.left_by
                    self.problem(wait, "pending", f"pending = {pending} leaves the async copy "
                                       f"({where(write.op)}) in flight, and {what} is read by "
                                       f"{where(op)}: pending = {newer} completes it")
                else:
                    self.problem(op, "not-waited", f"reads {what} before its async copy ({where(write.op)}) "
                                     "is complete: no hw.wait after the copy's commit")
        for write in self.tma:
            if write.tile is tile and overlaps(write.region, region) and \
                    write.barrier.observed[write.index] < write.phase:
                self.problem(op, "tma-not-waited", f"reads {what} before its TMA load ({where(write.op)}) is "
                                 f"complete: no hw.mbarrier_wait observed phase {write.phase} "
                                 f"(parity {write.phase % 2}) of mbarrier #{write.index}")
        for write in self.writes:
            if write.tile is tile and write.op != op and overlaps(write.region, region):
                self.problem(op, "read-after-write", f"reads {what}, written by {where(write.op)} with no barrier in "
                                 "between: other threads' parts of it may not be written yet")
        self.reads.append(Access(tile, region, op))

    def check_write(self, op: ir.Operation, tile: Tile, region: hw.Region) -> None:
        what = tile.describe(region)
        for read in self.reads:
            if read.tile is tile and read.op != op and overlaps(read.region, region):
                self.problem(op, "write-after-read", f"overwrites {what}, which other threads may still be reading "
                                 f"({where(read.op)}), with no barrier in between")
        for write in self.writes:
            if write.tile is tile and write.op != op and overlaps(write.region, region):
                self.problem(op, "write-after-write", f"overwrites {what}, written by {where(write.op)} with no "
                                 "barrier in between")
        pending = list(self.uncommitted.values()) + [w for g in self.in_flight for w in g.writes]
        pending += [w for w in self.tma if w.barrier.observed[w.index] < w.phase]
        for write in pending:
            if write.tile is tile and overlaps(write.region, region):
                self.problem(op, "write-in-flight", f"overwrites {what} while an asynchronous copy into it "
                                 f"({where(write.op)}) is in flight")

    def write(self, op: ir.Operation, tile: Tile, region: hw.Region) -> None:
        self.check_write(op, tile, region)
        self.writes.append(Access(tile, region, op))

    # -- synchronisation -------------------------------------------------------

    def barrier(self) -> None:
        self.reads.clear()
        self.writes.clear()

    def commit(self, op: ir.Operation, view) -> None:
        group = Group([])
        for token in view.operand("tokens"):
            write = self.uncommitted.pop(token, None)
            if write is None:
                self.problem(op, "commit", "commits a copy that is already committed")
                continue
            write.group = group
            group.writes.append(write)
        self.in_flight.append(group)

    def wait(self, op: ir.Operation, pending: int) -> None:
        if pending < len(self.in_flight):
            self.in_flight = self.in_flight[len(self.in_flight) - pending:]
        for position, group in enumerate(self.in_flight):
            group.left_by = (op, pending, len(self.in_flight) - 1 - position)
        self.barrier()

    def mbarrier(self, op: ir.Operation, barrier: ir.Value) -> MBarriers:
        if barrier not in self.mbarriers:
            raise Unknown(barrier)
        return self.mbarriers[barrier]

    def barrier_index(self, op: ir.Operation, state: MBarriers, index: int) -> int:
        if not 0 <= index < len(state.arrivals):
            self.problem(op, "mbarrier-index", f"uses mbarrier #{index} of a group of {len(state.arrivals)}")
            raise Stop
        return index

    def arrive(self, op: ir.Operation, barrier: ir.Value, index: int) -> None:
        state = self.mbarrier(op, barrier)
        index = self.barrier_index(op, state, index)
        state.arrivals[index] += 1
        if state.arrivals[index] == state.count:
            state.arrivals[index] = 0
            state.completed[index] += 1

    def mbarrier_wait(self, op: ir.Operation, view) -> None:
        state = self.mbarrier(op, view.operand("barrier"))
        index = self.barrier_index(op, state, self.value(view.operand("index")))
        parity = self.value(view.operand("parity")) % 2
        completed = state.completed[index]
        if completed % 2 == parity:
            self.problem(op, "deadlock", f"waits for phase {completed} (parity {parity}) of mbarrier "
                             f"#{index}, which nothing completes: {state.arrivals[index]} of "
                             f"{state.count} arrivals have happened and none follows (deadlock)")
            raise Stop
        state.observed[index] = max(state.observed[index], completed - 1)


def _grids(module: ir.Operation) -> dict[str, list[tuple[int, int, int]]]:
    """The grids each kernel is launched with."""
    grids: dict[str, list[tuple[int, int, int]]] = {}

    def visit(op):
        if op.name == "hw.launch":
            launch = hw.LaunchOp.from_operation(op.operation)
            grids.setdefault(launch.kernel, []).append(launch.grid3)
        return ir.WalkResult.ADVANCE
    module.walk(visit, ir.WalkOrder.PRE_ORDER)
    return grids


def check_hazards(module: ir.Operation) -> list[tuple[ir.Operation, str]]:
    """The hazards of every kernel of `module`: (op, message)."""
    grids = _grids(module)
    problems: dict = {}
    for op in module.regions[0].blocks[0].operations:
        kernel = op.operation
        if kernel.name != "func.func" or not hw.is_kernel(kernel):
            continue
        name = ir.StringAttr(kernel.attributes["sym_name"]).value
        blocks = {(0, 0, 0)}
        for grid in grids.get(name, []):
            blocks.add(tuple(g - 1 for g in grid))
        for block_id in sorted(blocks):
            KernelCheck(kernel, block_id, problems).run()
    return list(problems.values())


@register_pass
@dataclass
class HWCheckHazards(Pass):
    """Reports the synchronisation hazards of hw kernels (reads of copies in flight, missing barriers, deadlocked mbarriers) at their ops."""

    argument = "hw-check-hazards"

    def run(self, op: ir.Operation) -> None:
        errors = check_hazards(op)
        for operation, message in errors[:-1]:
            operation.location.emit_error(message)
        if errors:
            operation, message = errors[-1]
            raise PassFailure(message, operation.location)
