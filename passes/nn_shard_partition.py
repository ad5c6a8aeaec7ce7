"""--nn-shard-partition: an nn program with shardings becomes the program of one rank.

Expects nn ops on tensors (before `nn-decompose` and `nn-fuse`) and, for
the pass to do anything, upstream `shard` annotations on them: a
`shard.grid`, `shard.sharding` values and `shard.shard` ops on nn values
(`annotate_for_users` on an operand, or on a result). A module without a
`shard.grid` is left as it is, so the pass costs nothing for programs that
run in one process.

With a grid, the pass runs these steps, upstream's wherever upstream has
them:

* `convert-nn-to-linalg`, `canonicalize`, `linalg-inline-scalar-operands`
  (rank-0 operands, which upstream's sharding attributes cannot print,
  become scalars in the bodies), `cse`: every nn op lowers
  straight to linalg (composite ops to their fused generics, not through
  `nn-decompose`, whose reshapes upstream cannot partition), so that
  upstream's sharding rules for linalg apply: contractions and
  elementwise ops follow their indexing maps, and a reduction over a split
  axis (softmax and log_softmax along a split axis, layer_norm and
  rms_norm over one, a matmul whose contracted axis is split) becomes a
  partial result and a `shard.all_reduce` (sum or max) of it;
* each `tensor.empty` gets one user, so that propagation can give each
  use the sharding it needs;
* `sharding-propagation{traversal=forward-backward}` and `cse` (upstream);
* the shardings of the function boundary are recorded as
  `lamina.split_axes` argument and result attributes (the `split_axes` of
  upstream's sharding: for each tensor axis, the grid axes it is split
  over), and every split axis is checked to be divisible by its grid axes;
* `shard-partition`, `canonicalize`, `cse` (upstream): functions take and
  return their local shards, and resharding between producers and
  consumers is the collectives `shard.all_reduce`, `shard.all_gather`,
  `shard.all_to_all`, and `shard.all_slice` (no communication);
* an `all_slice` of an `all_reduce` over the same grid axes (a partial sum
  wanted split, which upstream reduces whole and then slices) becomes one
  `shard.reduce_scatter`, which communicates half as much on two ranks;
* the module is marked `dlti.map = #dlti.map<"MPI:Implementation" =
  "MPICH">`, which the lowering of the `mpi` dialect to calls needs.

Upstream's propagation and partitioning run in `mlir-opt` (the wheels are
built with assertions, and some unsupported inputs abort them), so a
failure is a located error. Ops upstream has no sharding rule for (the
tensor reshapes of `nn.reshape`, the padding of `nn.conv2d`, concat and
slices) are reported at the op.

Guarantees: no nn op and no `shard.shard`/`shard.sharding` op remain; the
`shard.grid` stays (the collectives refer to it); every collective left is
`shard.all_reduce`, `shard.all_gather`, `shard.all_to_all`,
`shard.reduce_scatter` or `shard.all_slice`, and ranks are read with
`shard.process_multi_index` / `shard.process_linear_index`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from mlir import ir

from lamina.diagnostics import CompileError
from lamina.pass_registry import Pass, PassFailure, register_pass

MPI_IMPLEMENTATION = '#dlti.map<"MPI:Implementation" = "MPICH">'

LOWERING = ["convert-nn-to-linalg", "canonicalize", "func.func(linalg-inline-scalar-operands)", "cse"]
PROPAGATION = ["func.func(sharding-propagation{traversal=forward-backward})"]
PARTITION = ["func.func(shard-partition)", "canonicalize", "cse"]


def grids(module: ir.Operation) -> dict[str, tuple[int, ...]]:
    """The `shard.grid` ops at the top of a module: name -> shape."""
    found = {}
    for op in module.regions[0].blocks[0].operations:
        op = op.operation
        if op.name == "shard.grid":
            name = ir.StringAttr(op.attributes["sym_name"]).value
            found[name] = tuple(ir.DenseI64ArrayAttr(op.attributes["shape"]))
    return found


def split_axes_of(sharding_op: ir.Operation) -> list[list[int]]:
    """The split axes of a `shard.sharding` op: per tensor axis, its grid axes."""
    attr = sharding_op.attributes["split_axes"]
    text = str(attr)
    # #shard<axisarray[[], [0]]>: the bindings have no accessor for it.
    inner = text[text.index("[") : text.rindex("]") + 1]
    return [list(axes) for axes in eval(inner, {"__builtins__": {}})]  # noqa: S307 - a literal


def grid_of(sharding_op: ir.Operation) -> str:
    return ir.FlatSymbolRefAttr(sharding_op.attributes["grid"]).value


def _split_axes_attr(split_axes: list[list[int]]) -> ir.Attribute:
    return ir.ArrayAttr.get([ir.ArrayAttr.get([ir.IntegerAttr.get(ir.IntegerType.get_signless(64), a)
                                               for a in axes]) for axes in split_axes])


def _defining_op(value: ir.Value) -> ir.Operation | None:
    owner = value.owner
    return None if isinstance(owner, ir.Block) else getattr(owner, "operation", owner)


def _walk(root: ir.Operation, name: str) -> list[ir.Operation]:
    found = []

    def visit(op):
        if op.name == name:
            found.append(op)
        return ir.WalkResult.ADVANCE

    root.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found


def _run_upstream(module: ir.Operation, passes: list[str], step: str) -> None:
    from lamina.pipeline import Pipeline, Stage
    try:
        Pipeline([Stage(step, passes, isolated=True)]).run(module)
    except CompileError as error:
        first = error.diagnostics[0]
        location = (ir.Location.file(first.filename, first.line, first.col)
                    if first.filename else None)
        raise PassFailure(f"{first.message} (while partitioning: {step})", location) from None


def _one_user_per_empty(module: ir.Operation) -> None:
    for empty in _walk(module, "tensor.empty"):
        uses = list(empty.results[0].uses)
        for use in uses[1:]:
            with ir.InsertionPoint(empty), empty.location:
                copy = empty.clone()
            use.owner.operands[use.operand_number] = copy.results[0]


def _record_boundary(module: ir.Operation, grid_shapes: dict[str, tuple[int, ...]]) -> None:
    """Records each public function's argument and result shardings as
    `lamina.split_axes`, and checks every split axis is divisible."""
    for shard in _walk(module, "shard.shard"):
        sharding = _defining_op(shard.operands[1])
        if sharding is None or sharding.name != "shard.sharding":
            continue
        shape = ir.RankedTensorType(shard.operands[0].type).shape
        grid_shape = grid_shapes.get(grid_of(sharding))
        if grid_shape is None:
            continue
        for axis, axes in enumerate(split_axes_of(sharding)):
            parts = math.prod(grid_shape[a] for a in axes)
            if axis < len(shape) and parts > 1 and shape[axis] % parts:
                raise PassFailure(
                    f"axis {axis} of {shard.operands[0].type} has size {shape[axis]}, which the "
                    f"{parts} devices of grid @{grid_of(sharding)} (axes {axes}) do not divide",
                    shard.location)
    for func in module.regions[0].blocks[0].operations:
        func = func.operation
        if func.name != "func.func" or not func.regions[0].blocks:
            continue
        block = func.regions[0].blocks[0]
        arguments = []
        for argument in block.arguments:
            axes: list[list[int]] = []
            for use in argument.uses:
                if use.owner.name == "shard.shard":
                    axes = split_axes_of(_defining_op(use.owner.operands[1]))
                    break
            arguments.append(ir.DictAttr.get({"lamina.split_axes": _split_axes_attr(axes)}))
        results = []
        terminator = block.operations[len(block.operations) - 1]
        for value in terminator.operands:
            owner = _defining_op(value)
            axes = []
            if owner is not None and owner.name == "shard.shard":
                axes = split_axes_of(_defining_op(owner.operands[1]))
            results.append(ir.DictAttr.get({"lamina.split_axes": _split_axes_attr(axes)}))
        func.attributes["arg_attrs"] = ir.ArrayAttr.get(arguments)
        func.attributes["res_attrs"] = ir.ArrayAttr.get(results)


def _fold_reduce_scatters(module: ir.Operation) -> None:
    """`all_slice(all_reduce(x))` over the same grid axes is
    `reduce_scatter(x)`: each rank receives only its slice of the sum, half
    the bytes of an all-reduce on two ranks."""
    for all_slice in _walk(module, "shard.all_slice"):
        reduced = _defining_op(all_slice.operands[0])
        if (reduced is None or reduced.name != "shard.all_reduce"
                or len(list(reduced.results[0].uses)) != 1
                or str(reduced.attributes["grid"]) != str(all_slice.attributes["grid"])
                or str(reduced.attributes["grid_axes"]) != str(all_slice.attributes["grid_axes"])):
            continue
        attributes = {"grid": reduced.attributes["grid"],
                      "grid_axes": reduced.attributes["grid_axes"],
                      "scatter_axis": all_slice.attributes["slice_axis"]}
        if "reduction" in reduced.attributes:
            attributes["reduction"] = reduced.attributes["reduction"]
        with ir.InsertionPoint(all_slice), all_slice.location:
            scattered = ir.Operation.create("shard.reduce_scatter",
                                            results=[all_slice.results[0].type],
                                            operands=[reduced.operands[0]],
                                            attributes=attributes)
        all_slice.results[0].replace_all_uses_with(scattered.results[0])
        all_slice.erase()
        reduced.erase()


@register_pass
@dataclass
class NNShardPartition(Pass):
    """Partitions an nn program annotated with upstream shardings into the program of one rank (upstream sharding-propagation and shard-partition on its linalg form)."""

    argument = "nn-shard-partition"

    def run(self, op: ir.Operation) -> None:
        grid_shapes = grids(op)
        if not grid_shapes:
            return
        _run_upstream(op, LOWERING, "lowering to linalg")
        _one_user_per_empty(op)
        _run_upstream(op, PROPAGATION, "sharding propagation")
        _record_boundary(op, grid_shapes)
        _run_upstream(op, PARTITION, "partition")
        _fold_reduce_scatters(op)
        op.attributes["dlti.map"] = ir.Attribute.parse(MPI_IMPLEMENTATION)
