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
  use the sharding it needs; a sharding written on a result that no
  resharding follows becomes one for its users (upstream cannot give a
  contraction over a split axis a result sharding of its own);
* `sharding-propagation{traversal=forward-backward}` and `cse` (upstream);
* the shardings of the function boundary are recorded as
  `lamina.split_axes` argument and result attributes (the `split_axes` of
  upstream's sharding: for each tensor axis, the grid axes it is split
  over), and every split axis is checked to be divisible by its grid axes;
* `shard-partition`, `canonicalize`, `cse` (upstream): functions take and
  return their local shards, and resharding between producers and
  consumers is the collectives `shard.all_reduce`, `shard.all_gather`,
  `shard.all_to_all`, and `shard.all_slice` (no communication);
* a generic whose body reads `linalg.index` on a split loop dim (causal
  attention's mask) gets each rank's offset added to that index, so that
  it sees global positions;
* an `all_slice` of an `all_reduce` over the same grid axes (a partial sum
  wanted split, which upstream reduces whole and then slices) becomes one
  `shard.reduce_scatter`, which communicates half as much on two ranks;
* the module is marked `dlti.map = #dlti.map<"MPI:Implementation" =
  "MPICH">`, which the lowering of the `mpi` dialect to calls needs.

Ops upstream has no sharding rule for (the tensor reshapes of
`nn.reshape`, pads, slices and concats, convolutions and pooling, whose
indexing maps are not projected permutations) follow Lamina's rules
(`local_rule`): such an op runs unchanged on local values where its
operands are split on axes it treats independently (the batch or the
output channels of a convolution, unpadded axes of a pad, untouched axes
of a slice or concat, the leading axis of a reshape's group); otherwise its
operands are gathered whole first. Upstream never sees these ops: they
leave the function while upstream propagates and partitions (their results
as arguments, their operands as results, annotated with the rule's
shardings) and come back on the local values.

Upstream's propagation and partitioning run in `mlir-opt` (the wheels are
built with assertions, and some unsupported inputs abort them), so a
failure is a located error.

Guarantees: no nn op and no `shard.shard`/`shard.sharding` op remain; the
`shard.grid` stays (the collectives refer to it); every collective left is
`shard.all_reduce`, `shard.all_gather`, `shard.all_to_all`,
`shard.reduce_scatter` or `shard.all_slice`, and ranks are read with
`shard.process_multi_index` / `shard.process_linear_index`.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith
from mlir.dialects import func as func_dialect
from mlir.dialects import shard as shard_dialect

from lamina.diagnostics import CompileError
from lamina.dialects.shard import grids
from lamina.pass_registry import Pass, PassFailure, register_pass

MPI_IMPLEMENTATION = '#dlti.map<"MPI:Implementation" = "MPICH">'

LOWERING = ["convert-nn-to-linalg", "canonicalize", "func.func(linalg-inline-scalar-operands)", "cse"]
PROPAGATION = ["func.func(sharding-propagation{traversal=forward-backward})"]
PARTITION = ["func.func(shard-partition)", "canonicalize", "cse"]


def split_axes_of(sharding_op: ir.Operation) -> list[list[int]]:
    """The split axes of a `shard.sharding` op: per tensor axis, its grid axes."""
    attr = sharding_op.attributes["split_axes"]
    text = str(attr)
    # #shard<axisarray[[], [0]]>: the bindings have no accessor for it.
    return [list(axes) for axes in json.loads(text[text.index("["):text.rindex("]") + 1])]


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


def _results_wanted_by_users(module: ir.Operation) -> None:
    """A sharding written on an op's result that no resharding follows says
    how its users want the value: it becomes `annotate_for_users`, so that
    the op keeps the sharding its operands give it and the value is
    resharded after it (upstream's propagation cannot give a contraction
    whose contracted axis is split a result sharding of its own)."""
    for shard in _walk(module, "shard.shard"):
        if "annotate_for_users" in shard.attributes:
            continue
        source = _defining_op(shard.operands[0])
        if source is None or not source.name.startswith("linalg."):
            continue
        if any(use.owner.name == "shard.shard" for use in shard.results[0].uses):
            continue
        shard.attributes["annotate_for_users"] = ir.UnitAttr.get()


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


# ---------------------------------------------------------------------------
# Ops upstream has no sharding rule for.
#
# Upstream's propagation stops at an op without its sharding interface
# (tensor reshapes, pads, slices and concats; convolutions and pooling,
# whose indexing maps are not projected permutations). Lamina takes such an
# op out of the function while upstream propagates and partitions the rest:
# its results become extra arguments and its operands extra results, each
# annotated with the sharding Lamina's rule for the op chooses from the
# shardings its operands arrive with. The op then comes back, on the local
# values, with local result types.


def _has_no_upstream_rule(op: ir.Operation) -> bool:
    return ((op.name.startswith("tensor.") and op.name != "tensor.empty")
            or op.name.startswith(("linalg.conv_", "linalg.pooling_", "linalg.depthwise_")))


Axes = list[list[int]]


def _pad_axes(axes: Axes, rank: int) -> Axes:
    return [list(a) for a in axes] + [[] for _ in range(rank - len(axes))]


def _static(op: ir.Operation, name: str) -> list[int]:
    return list(ir.DenseI64ArrayAttr(op.attributes[name]))


def _reassociation(op: ir.Operation) -> list[list[int]]:
    return [[ir.IntegerAttr(d).value for d in ir.ArrayAttr(group)]
            for group in ir.ArrayAttr(op.attributes["reassociation"])]


def _rank(value: ir.Value) -> int:
    return ir.RankedTensorType(value.type).rank


def _shape(value: ir.Value) -> list[int]:
    return list(ir.RankedTensorType(value.type).shape)


def _parts(axes: list[int], grid_shape: tuple[int, ...]) -> int:
    return math.prod(grid_shape[a] for a in axes)


def local_rule(op: ir.Operation, operand_axes: list[Axes],
               grid_shape: tuple[int, ...]) -> tuple[list[Axes], list[Axes]]:
    """Lamina's sharding rule for an op upstream has none for: from the
    shardings its operands arrive with, the shardings it needs them in and
    those of its results, chosen so that the op runs on local values
    unchanged (a split batch or output-channel axis of a convolution, an
    unpadded axis of a pad, an untouched axis of a slice or concat, the
    leading axis of a reshape's group). Anything else is gathered: whole
    operands and whole results."""
    tensors = [i for i, v in enumerate(op.operands) if isinstance(v.type, ir.RankedTensorType)]
    axes = {i: _pad_axes(operand_axes[i], _rank(op.operands[i])) for i in tensors}
    replicated = ([[] for _ in op.operands], [[] for _ in op.results])
    if op.name in ("linalg.conv_2d_nchw_fchw", "linalg.conv_2d_nhwc_hwcf"):
        image, filters = axes[0], axes[1]
        batch = image[0]
        channel = filters[0] if op.name.endswith("fchw") else filters[3]
        if any(image[1:]) or any(a for i, a in enumerate(filters)
                                 if i != (0 if op.name.endswith("fchw") else 3)):
            return replicated
        if set(batch) & set(channel):
            channel = []
        if op.name.endswith("fchw"):
            result = [batch, channel, [], []]
            need_filters = [channel, [], [], []]
        else:
            result = [batch, [], [], channel]
            need_filters = [[], [], [], channel]
        return [[batch], need_filters, result], [result]
    if op.name.startswith("linalg.pooling_nchw"):
        image = axes[0]
        result = [image[0], image[1], [], []]
        return [result[:2], [], result], [result]
    if op.name == "tensor.pad":
        low, high = _static(op, "static_low"), _static(op, "static_high")
        kept = [a if low[d] == 0 and high[d] == 0 else [] for d, a in enumerate(axes[0])]
        return [kept] + [[] for _ in op.operands[1:]], [kept]
    if op.name == "tensor.extract_slice" and _rank(op.results[0]) == _rank(op.operands[0]):
        offsets, sizes = _static(op, "static_offsets"), _static(op, "static_sizes")
        strides = _static(op, "static_strides")
        shape = _shape(op.operands[0])
        kept = [a if (offsets[d], sizes[d], strides[d]) == (0, shape[d], 1) else []
                for d, a in enumerate(axes[0])]
        return [kept] + [[] for _ in op.operands[1:]], [kept]
    if op.name == "tensor.concat":
        dim = ir.IntegerAttr(op.attributes["dim"]).value
        kept = [a if d != dim else [] for d, a in enumerate(axes[0])]
        return [kept for _ in op.operands], [kept]
    if op.name == "tensor.collapse_shape":
        result = []
        needed = [[] for _ in axes[0]]
        for group in _reassociation(op):
            leading = axes[0][group[0]]
            if leading and not any(axes[0][d] for d in group[1:]):
                needed[group[0]] = leading
                result.append(leading)
            else:
                result.append([])
        return [needed], [result]
    if op.name == "tensor.expand_shape":
        result_shape = _shape(op.results[0])
        result = [[] for _ in result_shape]
        needed = [[] for _ in axes[0]]
        for d, group in enumerate(_reassociation(op)):
            split = axes[0][d]
            if split and result_shape[group[0]] % _parts(split, grid_shape) == 0:
                needed[d] = split
                result[group[0]] = split
        return [needed] + [[] for _ in op.operands[1:]], [result]
    return replicated


@dataclass
class _Hidden:
    op: ir.Operation
    function: str
    arguments: list[int]
    returns: list[int]
    placeholders: list[ir.Operation]


def _functions(module: ir.Operation) -> list[ir.Operation]:
    return [f.operation for f in module.regions[0].blocks[0].operations
            if f.operation.name == "func.func" and f.operation.regions[0].blocks]


def _symbol(func: ir.Operation) -> str:
    return ir.StringAttr(func.attributes["sym_name"]).value


def _set_signature(func: ir.Operation) -> None:
    block = func.regions[0].blocks[0]
    terminator = block.operations[len(block.operations) - 1]
    func.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(
        [a.type for a in block.arguments], [v.type for v in terminator.operands]))


def _replace_return(block: ir.Block, operands: list[ir.Value]) -> None:
    terminator = block.operations[len(block.operations) - 1]
    with ir.InsertionPoint(terminator), terminator.location:
        func_dialect.ReturnOp(operands)
    terminator.erase()


def _localize_captures(op: ir.Operation) -> None:
    """Constants an op's regions use from outside are cloned into them, so
    that the op can leave its function and come back."""
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                for index, operand in enumerate(inner.operands):
                    owner = _defining_op(operand)
                    if owner is None or owner.parent == inner.parent or owner.name != "arith.constant":
                        continue
                    if _is_inside(owner, op):
                        continue
                    with ir.InsertionPoint.at_block_begin(block):
                        copy = owner.clone()
                    inner.operands[index] = copy.results[0]


def _is_inside(inner: ir.Operation, outer: ir.Operation) -> bool:
    parent = inner.parent
    while parent is not None:
        if parent == outer:
            return True
        parent = parent.parent if parent.name != "builtin.module" else None
    return False


def _hide(module: ir.Operation, grid: str | None = None,
          decisions: list[tuple[list[Axes], list[Axes]]] | None = None) -> list[_Hidden]:
    """Takes every op without an upstream rule out of its function (see
    above); with `decisions`, annotates its operands and results with them."""
    hidden: list[_Hidden] = []
    for func in _functions(module):
        block = func.regions[0].blocks[0]
        ops = [o.operation for o in block.operations]
        terminator = ops[-1]
        first_extra = len(terminator.operands)
        extras: list[ir.Value] = []
        for op in ops[:-1]:
            if not _has_no_upstream_rule(op):
                continue
            decision = (decisions[len(hidden)] if decisions is not None
                        and len(hidden) < len(decisions) else None)
            _localize_captures(op)
            arguments = []
            for index, result in enumerate(op.results):
                argument = block.add_argument(result.type, op.location)
                result.replace_all_uses_with(argument)
                if decision is not None:
                    with ir.InsertionPoint(op), op.location:
                        annotated = annotate(argument, grid, decision[1][index])
                    for use in list(argument.uses):
                        if use.owner != _defining_op(annotated):
                            use.owner.operands[use.operand_number] = annotated
                arguments.append(len(block.arguments) - 1)
            returns = []
            for index, operand in enumerate(op.operands):
                value = operand
                if decision is not None and isinstance(operand.type, ir.RankedTensorType):
                    with ir.InsertionPoint(op), op.location:
                        value = annotate(operand, grid, decision[0][index])
                returns.append(first_extra + len(extras))
                extras.append(value)
            op.detach_from_parent()
            # The op leaves the module's values: upstream's passes replace
            # them (the module travels to mlir-opt as text and back).
            placeholders = []
            for index, operand in enumerate(op.operands):
                with ir.Location.unknown():
                    placeholder = ir.Operation.create("ub.poison", results=[operand.type],
                                                      attributes={"value": ir.Attribute.parse(
                                                          "#ub.poison")})
                placeholders.append(placeholder)
                op.operands[index] = placeholder.results[0]
            hidden.append(_Hidden(op, _symbol(func), arguments, returns, placeholders))
        if extras:
            _replace_return(block, list(terminator.operands) + extras)
            _set_signature(func)
    return hidden


def annotate(value: ir.Value, grid: str, axes: Axes, for_users: bool = True) -> ir.Value:
    """`value` annotated (for its users, or as produced) with a sharding of
    `grid`: `shard.sharding` + `shard.shard` at the insertion point."""
    sharding = shard_dialect.ShardingOp(ir.FlatSymbolRefAttr.get(grid),
                                        ir.Attribute.parse(f"#shard<axisarray{axes}>"), [], [])
    return shard_dialect.ShardOp(value, sharding.result, annotate_for_users=for_users).result


def _arriving_axes(value: ir.Value) -> Axes:
    """The sharding a value has after propagation (replicated if none)."""
    owner = _defining_op(value)
    if owner is not None and owner.name == "shard.shard":
        return split_axes_of(_defining_op(owner.operands[1]))
    for use in value.uses:
        if use.owner.name == "shard.shard":
            return split_axes_of(_defining_op(use.owner.operands[1]))
    return []


def _discard(hidden: list[_Hidden]) -> None:
    """Erases hidden ops that will not come back (before their placeholders)."""
    for entry in hidden:
        entry.op.erase()
    hidden.clear()


def _restore(module: ir.Operation, hidden: list[_Hidden]) -> None:
    """Puts the hidden ops back, on the partitioned (local) values."""
    by_function: dict[str, list[_Hidden]] = {}
    for entry in hidden:
        by_function.setdefault(entry.function, []).append(entry)
    for func in _functions(module):
        entries = by_function.get(_symbol(func), [])
        if not entries:
            continue
        block = func.regions[0].blocks[0]
        for entry in entries:
            op = entry.op
            # Read afresh: an earlier op's result may have replaced an argument.
            terminator = block.operations[len(block.operations) - 1]
            for index, position in enumerate(entry.returns):
                op.operands[index] = terminator.operands[position]
            arguments = [block.arguments[i] for i in entry.arguments]
            # Right after its last operand: the operands' resharding stands
            # where the op stood, before every user of its results.
            definitions = {_defining_op(v) for v in op.operands} - {None}
            ops = [o.operation for o in block.operations]
            last = max((i for i, o in enumerate(ops) if o in definitions), default=-1)
            ir.InsertionPoint(ops[last + 1]).insert(op)
            for result, argument in zip(op.results, arguments):
                result.set_type(argument.type)
                argument.replace_all_uses_with(result)
            _fix_static_shapes(op)
        removed_returns = {p for e in entries for p in e.returns}
        returned = list(block.operations[len(block.operations) - 1].operands)
        _replace_return(block, [v for i, v in enumerate(returned) if i not in removed_returns])
        for index in sorted((i for e in entries for i in e.arguments), reverse=True):
            block.erase_argument(index)
        for key, count in (("arg_attrs", len(block.arguments)),
                           ("res_attrs", len(returned) - len(removed_returns))):
            if key in func.attributes:
                func.attributes[key] = ir.ArrayAttr.get(list(ir.ArrayAttr(func.attributes[key]))[:count])
        _set_signature(func)


def _fix_static_shapes(op: ir.Operation) -> None:
    """Static shape attributes that must follow the local result type."""
    shape = _shape(op.results[0])
    if op.name == "tensor.expand_shape":
        op.attributes["static_output_shape"] = ir.DenseI64ArrayAttr.get(shape)
    elif op.name == "tensor.extract_slice":
        op.attributes["static_sizes"] = ir.DenseI64ArrayAttr.get(shape)



# ---------------------------------------------------------------------------
# Iteration indices. A generic whose body reads `linalg.index` (causal
# attention's mask compares a query's and a key's position) sees local
# indices after partitioning; where its loop dim is split, the rank's offset
# is added back, so that the body sees global positions.

INDEX_SPLIT = "lamina.index_split"


def _dim_positions(op: ir.Operation) -> list[list[int]]:
    """For each operand of a linalg op, the loop dim of each of its axes."""
    return [[ir.AffineDimExpr(e).position for e in ir.AffineMapAttr(m).value.results]
            for m in ir.ArrayAttr(op.attributes["indexing_maps"])]


def _mark_index_splits(module: ir.Operation) -> None:
    """Records, on each generic that reads `linalg.index`, the grid axes
    each loop dim is split over (from the shardings propagation gave its
    operands and results)."""
    for generic in _walk(module, "linalg.generic"):
        if not _walk(generic, "linalg.index"):
            continue
        loops = len(ir.ArrayAttr(generic.attributes["iterator_types"]))
        split: list[list[int]] = [[] for _ in range(loops)]
        values = list(generic.operands) + list(generic.results)
        for value, dims in zip(values, _dim_positions(generic)):
            owner = _defining_op(value)
            axes = (split_axes_of(_defining_op(owner.operands[1]))
                    if owner is not None and owner.name == "shard.shard"
                    else _arriving_axes(value))
            for tensor_axis, grid_axes in enumerate(axes):
                if grid_axes and tensor_axis < len(dims):
                    split[dims[tensor_axis]] = list(grid_axes)
        if any(split):
            generic.attributes[INDEX_SPLIT] = _split_axes_attr(split)


def _offset_indices(module: ir.Operation, grid: str, grid_shape: tuple[int, ...]) -> None:
    """Adds each rank's offset to the `linalg.index` of split loop dims."""
    for generic in _walk(module, "linalg.generic"):
        if INDEX_SPLIT not in generic.attributes:
            continue
        split = [[ir.IntegerAttr(a).value for a in ir.ArrayAttr(g)]
                 for g in ir.ArrayAttr(generic.attributes[INDEX_SPLIT])]
        del generic.attributes[INDEX_SPLIT]
        sizes: dict[int, int] = {}
        for value, dims in zip(list(generic.operands) + list(generic.results),
                               _dim_positions(generic)):
            for axis, dim in enumerate(dims):
                sizes.setdefault(dim, ir.RankedTensorType(value.type).shape[axis])
        index_type = ir.IndexType.get()
        offsets: dict[int, ir.Value] = {}
        with ir.InsertionPoint(generic), generic.location:
            for dim, grid_axes in enumerate(split):
                if not grid_axes:
                    continue
                position = ir.Operation.create(
                    "shard.process_multi_index", results=[index_type] * len(grid_axes),
                    attributes={"grid": ir.FlatSymbolRefAttr.get(grid),
                                "axes": ir.DenseI16ArrayAttr.get(grid_axes)})
                block_index = position.results[0]
                for a, value in zip(grid_axes[1:], list(position.results)[1:]):
                    block_index = arith.addi(arith.muli(
                        block_index, arith.constant(index_type, grid_shape[a])), value)
                offsets[dim] = arith.muli(block_index, arith.constant(index_type, sizes[dim]))
        for index_op in _walk(generic, "linalg.index"):
            dim = ir.IntegerAttr(index_op.attributes["dim"]).value
            if dim not in offsets:
                continue
            local = index_op.results[0]
            uses = list(local.uses)
            with ir.InsertionPoint(index_op.block.operations[_position(index_op) + 1]), \
                    index_op.location:
                shifted = arith.addi(local, offsets[dim])
            for use in uses:
                use.owner.operands[use.operand_number] = shifted


def _position(op: ir.Operation) -> int:
    return next(i for i, o in enumerate(op.block.operations) if o.operation == op)

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
        _results_wanted_by_users(op)
        grid = next(iter(grid_shapes))
        decisions = self._decide(op, grid, grid_shapes[grid])
        hidden = _hide(op, grid, decisions) if decisions else []
        try:
            _run_upstream(op, PROPAGATION, "sharding propagation")
            _record_boundary(op, grid_shapes)
            _mark_index_splits(op)
            _run_upstream(op, PARTITION, "partition")
        except PassFailure:
            _discard(hidden)
            raise
        _restore(op, hidden)
        _offset_indices(op, grid, grid_shapes[grid])
        _fold_reduce_scatters(op)
        op.attributes["dlti.map"] = ir.Attribute.parse(MPI_IMPLEMENTATION)

    @staticmethod
    def _decide(module: ir.Operation, grid: str, grid_shape: tuple[int, ...]):
        """Lamina's rule for each op without an upstream one, in program
        order, from the shardings its operands arrive with: found by
        propagating on a copy with those ops taken out, the ones decided
        so far annotated with their rules (propagation runs again after an
        op whose results stay split, as they change what follows)."""
        decisions: list = []
        while True:
            probe = ir.Operation.parse(module.get_asm(enable_debug_info=True,
                                                      print_generic_op_form=True))
            hidden = _hide(probe, grid, decisions)
            if len(decisions) == len(hidden):
                _discard(hidden)
                return decisions
            _run_upstream(probe, PROPAGATION, "sharding propagation")
            decided = {(e.function, a): axes for e, d in zip(hidden, decisions)
                       for a, axes in zip(e.arguments, d[1])}
            for entry in hidden[len(decisions):]:
                func = next(f for f in _functions(probe) if _symbol(f) == entry.function)
                block = func.regions[0].blocks[0]
                returned = list(block.operations[len(block.operations) - 1].operands)
                operand_axes = []
                for position in entry.returns:
                    value = returned[position]
                    # The result of an earlier hidden op arrives as its rule says.
                    key = (entry.function, value.arg_number) if isinstance(value.owner,
                                                                          ir.Block) else None
                    operand_axes.append(decided[key] if key in decided
                                        else _arriving_axes(value))
                decision = local_rule(entry.op, operand_axes, grid_shape)
                decisions.append(decision)
                for argument, axes in zip(entry.arguments, decision[1]):
                    decided[(entry.function, argument)] = axes
                if any(axis for axes in decision[1] for axis in axes):
                    break
            _discard(hidden)
