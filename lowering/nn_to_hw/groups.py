"""Elementwise and row kernels: the ops of a fusion group (or one op) on
runs of their index space (see the package's docstring)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, func, scf

from lamina.dialects import hw, nn
from lamina.dialects.opdef import lookup_op
from lamina.lowering.hw_to_loops import index
from lamina.lowering.nn_to_hw.kernels import (THREADS, GroupNotLowered, HWLowering, _erase_kernel,
                                              launch, new_kernel, splat_value)
from lamina.lowering.registry import lowering
from lamina.targets import nvidia
from lamina.types import MemRefType, type_view

# ---------------------------------------------------------------------------
# Elementwise and row kernels: the ops of a fusion group (or one op) on
# runs of their index space.

# Where a value of a row kernel lives: a tile of the row's elements, or the
# row's statistic (one element every thread holds).
ROW, STAT = "row", "stat"



@dataclass
class KernelGroup:
    """The nn ops of one kernel: `ops` in order (nn ops and splat
    constants), reading `arguments` (the kernel's inputs, in order) and
    giving `results` (its outputs, in order)."""

    ops: list[ir.Operation]
    arguments: list[ir.Value]
    results: list[ir.Value]
    # The host's values passed for `arguments`.
    inputs: list[ir.Value]

    @classmethod
    def of_op(cls, op: ir.Operation) -> "KernelGroup":
        """One nn op as a group: its distinct operands are the inputs."""
        operands = []
        for value in op.operands:
            if not any(value == seen for seen in operands):
                operands.append(value)
        return cls([op], operands, list(op.results), operands)

    @classmethod
    def of_fused(cls, op: ir.Operation, body: ir.Operation) -> "KernelGroup":
        """The body of an nn.fused op."""
        block = body.regions[0].blocks[0]
        ops = [o.operation for o in block.operations]
        returned = ops.pop()
        return cls(ops, list(block.arguments), list(returned.operands), list(op.operands))



class GroupKernel:
    """Writes the grid-stride kernel of an elementwise or reduction group.

    Elementwise groups: the index space is the shape every output has; a
    block's tile is `threads * per_thread` consecutive elements of it, and
    the blocks stride over the tiles. Reduction groups: their reductions
    fold the same axes of one domain; a row is a run of the folded
    elements (walked in place where the axes are not trailing), a block holds it in registers (`nvidia.row_kernel_shape`:
    one warp for short rows), and the blocks stride over the rows. Each
    value of the group is a register tile: a row's (or tile's) elements, or
    the row's statistic after a `hw.block_reduce` (a tile of one element
    every thread holds, broadcast where row values read it); inputs are
    loaded per thread, broadcast into the space (`hw.load_elements`), and
    outputs stored as runs (`hw.store_elements`). Each nn op rounds its
    result to its type as the nn references do; reductions accumulate in
    f32."""

    def __init__(self, group: KernelGroup, name: str, chip: str):
        self.group, self.name = group, name
        self.arch = nvidia.architecture(chip)
        self.views = {}
        for op in group.ops:
            if op.name.startswith("nn."):
                self.views[op] = lookup_op(op.name).from_operation(op)
        reductions = [v for v in self.views.values() if isinstance(v, nn.ReductionOp)]
        for value in group.results:
            if type_view(value.type).dtype not in hw.MAP_TYPES:
                raise GroupNotLowered(f"its result {value.type} is not of an element type "
                                      "kernels write (f32, f16, bf16, i1, i32, i64)")
        for value in group.arguments:
            if type_view(value.type).dtype not in hw.MAP_TYPES:
                raise GroupNotLowered(f"it reads {value.type}; kernels read f32, f16, bf16, "
                                      "i1, i32 and i64")
        for op, view in self.views.items():
            if not isinstance(view, (nn.ElementwiseOp, nn.ReductionOp)):
                raise GroupNotLowered(f"it holds '{op.name}'")
            types = {type_view(v.type).dtype for v in list(op.operands) + list(op.results)}
            if not types <= set(hw.MAP_TYPES) \
                    or isinstance(view, nn.ReductionOp) and not types <= set(hw.REDUCE_TYPES):
                raise GroupNotLowered(f"'{op.name}' has {', '.join(sorted(types))} operands "
                                      "and results; its register tiles hold f32, f16, bf16, "
                                      "i1, i32 and i64, and reductions fold f32, f16, bf16, "
                                      "i32 and i64")
        if reductions:
            self.row_space(reductions)
        else:
            shapes = {type_view(v.type).shape for v in group.results}
            if len(shapes) != 1:
                raise GroupNotLowered("its results differ in shape")  # lower_group splits them
            self.domain = shapes.pop()
            elements = math.prod(self.domain)
            self.threads, per_thread, self.grid = nvidia.elementwise_kernel_shape(
                elements, self.arch)
            self.length = self.threads * per_thread
            self.columns = self.length
            self.chunks = 1
            self.rows = -(-elements // self.length)
            self.stat_shapes = set()
            self.order = ()

    def row_space(self, reductions: list) -> None:
        domains = {type_view(v.operation.operands[0].type).shape for v in reductions}
        rank = len(next(iter(domains)))
        axes = {v.normalized_axes(rank) for v in reductions}
        if len(domains) != 1 or len(axes) != 1:
            raise GroupNotLowered("its reductions differ in domain or axes")
        self.domain, axes = domains.pop(), axes.pop()
        kept_axes = [d for d in range(rank) if d not in axes]
        # Rows over leading axes are walked in place (strided, no transpose):
        # the kept dims first, then the folded ones.
        self.order = () if axes == tuple(range(rank - len(axes), rank)) else tuple(
            kept_axes + list(axes))
        self.columns = math.prod(self.domain[d] for d in axes)
        self.rows = math.prod(self.domain[d] for d in kept_axes)
        self.threads, per_thread, self.chunks = nvidia.row_kernel_shape(self.columns)
        self.length = self.threads * per_thread
        resident = max(1, self.arch.threads_per_sm // self.threads)
        self.grid = max(1, min(self.rows, resident * self.arch.sms))
        kept = tuple(1 if i in axes else d for i, d in enumerate(self.domain))
        self.stat_shapes = {kept, tuple(self.domain[d] for d in kept_axes)}

    # -- levels ----------------------------------------------------------------

    def natural(self, value: ir.Value) -> str | None:
        """Where a value lives by what computes it: a reduction's result is
        a statistic, an elementwise op's what its operands are (a row where
        a row value or its own shape says so); None for inputs and
        constants and what only they compute (loaded where they are read)."""
        if value in self._natural:
            return self._natural[value]
        owner = value.owner
        level = None
        if not isinstance(owner, ir.Block) and owner.operation in self.views:
            view = self.views[owner.operation]
            if isinstance(view, nn.ReductionOp):
                level = STAT
            else:
                levels = {self.natural(v) for v in owner.operation.operands}
                if ROW in levels:
                    level = ROW
                elif STAT in levels:
                    level = STAT if self.stat_shaped(value) else ROW
        self._natural[value] = level
        return level

    def stat_shaped(self, value: ir.Value) -> bool:
        shape = type_view(value.type).shape
        return any(shape == s[len(s) - len(shape):] and all(d == 1 for d in s[:len(s) - len(shape)])
                   for s in self.stat_shapes)

    # -- building ----------------------------------------------------------------

    def argument_types(self) -> list[ir.Type]:
        return [MemRefType(type_view(v.type).shape, type_view(v.type).dtype).to_mlir()
                for v in self.group.arguments + self.group.results]

    def tile(self, level: str, dtype: str) -> ir.Value:
        length = self.length if level == ROW else 1
        with ir.InsertionPoint(self.loop_op), self.location:
            return hw.AllocOp.build(result_type=MemRefType((length,), dtype, "private"))

    def build(self, body: ir.Block, location: ir.Location) -> None:
        self.location = location
        self._natural: dict = {}
        kernel = new_kernel(body, self.name, self.argument_types(), location)
        try:
            self.build_body(kernel, location)
        except GroupNotLowered:
            kernel.operation.erase()
            raise

    def build_body(self, kernel: func.FuncOp, location: ir.Location) -> None:
        entry = kernel.add_entry_block()
        arguments = list(entry.arguments)
        self.buffers = dict(zip(self.group.arguments, arguments))
        outputs = arguments[len(self.group.arguments):]
        with location, ir.InsertionPoint(entry):
            # A block of several warps folds their totals through a shared
            # scratch vector per type folded in (f32, or an integer's own).
            self.scratches = {}
            if self.threads > nvidia.WARP:
                for view in self.views.values():
                    if isinstance(view, nn.ReductionOp):
                        folded = hw.BlockReduceOp.folded_type(
                            type_view(view.operation.operands[0].type).dtype)
                        if folded not in self.scratches:
                            self.scratches[folded] = [hw.AllocOp.build(result_type=MemRefType(
                                (self.threads // nvidia.WARP,), folded, "workgroup"))]
            start = hw.BlockIdOp.build(dim=0)
            loop = scf.ForOp(start, index(self.rows), index(self.grid))
            self.loop_op = loop.operation
            with ir.InsertionPoint(loop.body):
                row = loop.induction_variable
                self.row_start = arith.muli(row, index(self.columns))
                self.offsets = {STAT: row}
                self.tiles: dict = {}
                self.chunk = 0
                for value, out in zip(self.group.results, outputs):
                    self.store(value, out)
                scf.YieldOp([])
            func.ReturnOp([])

    def store(self, value: ir.Value, out: ir.Value) -> None:
        level = self.natural(value) or ROW
        shape = type_view(value.type).shape
        if level == ROW and shape != self.domain:
            raise GroupNotLowered(f"its result {value.type} is not of the shape of its rows' "
                                  f"space {hw.dims(self.domain)}")
        for chunk in self.walk_chunks(level):
            tile = self.materialise(value, level, shape if level == STAT else self.domain)
            hw.StoreElementsOp.build(tile, out, self.offset(level), shape=list(shape),
                                     count=self.run_count(level), **self.walk(level))

    def walk_chunks(self, level: str):
        """Sets `chunk` to each chunk of a row in turn (a row that fits in
        registers is one; a statistic is its row's); the values of a row
        walked in chunks are computed again in each pass over them, so
        that only one chunk's are held at a time."""
        chunks = range(self.chunks) if level == ROW else [self.chunk]
        outer = self.chunk
        for chunk in chunks:
            self.chunk = chunk
            yield chunk
            if self.chunks > 1:
                self.tiles = {k: t for k, t in self.tiles.items() if k[1] != ROW}
        self.chunk = outer

    def offset(self, level: str) -> ir.Value:
        """Where the current chunk of the row (or the row's statistic) starts."""
        if level == STAT:
            return self.offsets[STAT]
        if self.chunk == 0:
            return self.row_start
        return arith.addi(self.row_start, index(self.chunk * self.length))

    def walk(self, level: str) -> dict:
        """The walk of a row's space (a statistic's space is walked in order)."""
        return {"order": list(self.order)} if level == ROW and self.order else {}

    def run_count(self, level: str) -> int:
        if level == STAT:
            return 1
        return min(self.length, self.columns - self.chunk * self.length)

    def materialise(self, value: ir.Value, level: str, space: tuple[int, ...]) -> ir.Value:
        """The register tile holding `value` at `level` (a statistic's tile
        where a row reads it: broadcast)."""
        natural = self.natural(value)
        if natural == STAT:
            level, space = STAT, type_view(value.type).shape
        key = (value, level, space, self.chunk if level == ROW else None)
        if key in self.tiles:
            return self.tiles[key]
        view = type_view(value.type)
        owner = value.owner
        op = None if isinstance(owner, ir.Block) else owner.operation
        if value in self.buffers:
            tile = self.tile(level, view.dtype)
            hw.LoadElementsOp.build(self.buffers[value], tile, self.offset(level),
                                    shape=list(space), count=self.run_count(level),
                                    **self.walk(level))
        elif op is not None and splat_value(op) is not None:
            tile = self.tile(level, view.dtype)
            hw.FillOp.build(tile, value=splat_value(op))
        elif op is not None and op in self.views:
            tile = self.compute(self.views[op], op, level, space)
        else:
            raise GroupNotLowered(f"it reads {value.type} made by '{op.name if op else 'a block'}'")
        self.tiles[key] = tile
        return tile

    def compute(self, view, op: ir.Operation, level: str, space) -> ir.Value:
        if isinstance(view, nn.ReductionOp):
            return self.reduce(view, op)
        operand_space = self.domain if level == ROW else type_view(op.results[0].type).shape
        inputs = [self.materialise(v, level, operand_space) for v in op.operands]
        out = self.tile(level, type_view(op.results[0].type).dtype)
        if isinstance(view, nn.CastOp):
            hw.CastOp.build(inputs[0], out)
            return out
        # The nn op's attributes are the hw op's (created whole: its verifier
        # reads them, `predicate` of nn.compare).
        attributes = {name: op.attributes[name] for name in op.attributes}
        attributes["fn"] = ir.StringAttr.get(op.name)
        ir.Operation.create(hw.MapOp.op_name(), operands=inputs + [out], attributes=attributes)
        return out

    def reduce(self, view: nn.ReductionOp, op: ir.Operation) -> ir.Value:
        total = None
        for chunk in self.walk_chunks(ROW):
            x = self.materialise(op.operands[0], ROW, self.domain)
            # Floats fold in f32; integers in their own type.
            folded = hw.BlockReduceOp.folded_type(type_view(x.type).dtype)
            if type_view(x.type).dtype != folded:
                wide = self.tile(ROW, folded)
                hw.CastOp.build(x, wide)
                x = wide
            part = self.tile(STAT, folded)
            hw.BlockReduceOp.build(x, part, self.scratches.get(folded, []),
                                   combine=view.combine_kind(), count=self.run_count(ROW))
            if total is None:
                total = part
            else:  # the chunks' folds folded
                hw.MapOp.build([total, part], total, fn=f"nn.{view.combine_kind()}")
        finish = view.finish_tree(self.columns)
        if finish.kind != "arg":
            if finish.kind not in ("div", "mul") or [a.kind for a in finish.args] != ["arg", "const"]:
                raise GroupNotLowered(f"'{op.name}' finishes its fold with {finish!r}")
            factor = self.tile(STAT, "f32")
            hw.FillOp.build(factor, value=finish.args[1].value)
            hw.MapOp.build([total, factor], total, fn=f"nn.{finish.kind}")
        dtype = type_view(op.results[0].type).dtype
        if dtype == folded:
            return total
        out = self.tile(STAT, dtype)
        hw.CastOp.build(total, out)
        return out


def lower_group(group: KernelGroup, last: ir.Operation, target: "HWLowering") -> None:
    """The kernel of `group` and its launch in place of `last`'s results
    (an elementwise group whose results differ in shape: a kernel per
    shape, each computing what its results need); raises GroupNotLowered,
    leaving no kernel, when the group is not one of an elementwise or row
    kernel's."""
    by_shape: dict[tuple[int, ...], list[int]] = {}
    for i, value in enumerate(group.results):
        by_shape.setdefault(type_view(value.type).shape, []).append(i)
    rows = any(isinstance(lookup_op(op.name), type) and issubclass(lookup_op(op.name),
                                                                   nn.ReductionOp)
               for op in group.ops)
    parts = [list(range(len(group.results)))] if rows or len(by_shape) == 1 \
        else list(by_shape.values())
    built = []
    try:
        for number, part in enumerate(parts):
            name = target.name if len(parts) == 1 else f"{target.name}_{number}"
            results = [last.results[i] for i in part]
            kernel = None
            if not all(0 in type_view(r.type).shape for r in results):
                kernel = GroupKernel(KernelGroup(group.ops, group.arguments,
                                                 [group.results[i] for i in part], group.inputs),
                                     name, target.chip)
                kernel.build(target.kernels, last.location)
            built.append((kernel, name, results))
    except GroupNotLowered:
        for kernel, name, _ in built:
            _erase_kernel(last, name)
        raise
    for kernel, name, results in built:
        launch(last, group.inputs, name, (kernel.grid,) if kernel else (),
               (kernel.threads,) if kernel else (THREADS,), results)



@lowering(nn.ElementwiseOp, to="hw")
@lowering(nn.ReductionOp, to="hw")
def lower_elementwise_or_row(op, target: HWLowering) -> list[ir.Operation]:
    """An elementwise op or a reduction outside any group, as a kernel of
    its own (`GroupKernel`)."""
    try:
        lower_group(KernelGroup.of_op(op.operation), op.operation, target)
    except GroupNotLowered as reason:
        return target.leave(op.operation, str(reason))
    return [op.operation]


