"""What a schedule needs to know about linalg ops on tensors: loop extents,
iterator kinds, indexing maps, contraction dimensions, the dim that vector
code runs along, and the fusion groups of a function."""

from __future__ import annotations

from dataclasses import dataclass, field

from mlir import ir
from mlir.dialects import linalg as linalg_dialect

from lamina.dialects.nn import FUSION_GROUP_ATTRIBUTE as FUSION_GROUP
from lamina.dialects.nn import FUSION_KIND_ATTRIBUTE as FUSION_KIND

# Discardable attributes: the fusion markers `nn-inline-fused` puts on the
# ops of a group (defined with the nn dialect), and the tag a schedule's
# transform script matches on.
SCHEDULE_TAG = "lamina.schedule"
# The fields of the CPU model a tuner chose for a group (lamina.tuning),
# a dictionary on each of the group's ops that the schedule pass reads.
SCHEDULE_CHOICE = "lamina.schedule_choice"

# The extent a schedule plans a '?' loop for: large enough that the
# register and cache tiles of a static loop of this size are the ones a
# long dynamic loop wants, and a multiple of them, so that the tiles of
# a '?' loop are static and its tail (the loop peeled) the only partial one.
PLANNING_EXTENT = 256

# Ops whose input is indexed by sums of loops (windows), analysed all the
# same: the direct convolutions the cost model schedules.
WINDOWED = ("linalg.conv_2d_nhwc_hwcf", "linalg.depthwise_conv_2d_nhwc_hwc")


@dataclass
class LinalgOp:
    """A linalg op with static loop extents (a '?' loop's is
    PLANNING_EXTENT, and it is flagged in `dynamic`)."""

    op: ir.Operation
    extents: tuple[int, ...]
    reduction: tuple[bool, ...]
    maps: tuple[tuple[int | None, ...], ...]
    """Per operand (inputs, then outputs): the loop dim each of its dims is
    indexed by, None for a constant index (a broadcast of size 1) or a
    window of a convolution's input (an output position plus a filter
    position, whose loops the other operands index)."""
    inputs: int
    tag: str = ""
    strided: tuple[bool, ...] = ()
    """Per operand: whether it is a slice whose innermost dim has a stride
    (a strided convolution's window), which vector code reads element by
    element."""
    dynamic: tuple[bool, ...] = ()
    """Per loop: whether its extent is '?' (known at run time only)."""

    @property
    def is_dynamic(self) -> bool:
        return any(self.dynamic)

    @property
    def name(self) -> str:
        return self.op.name

    @property
    def rank(self) -> int:
        return len(self.extents)

    @property
    def output_map(self) -> tuple[int | None, ...]:
        return self.maps[self.inputs]

    def contiguous_dims(self) -> list[int]:
        """Loop dims that every operand reads or writes as its innermost
        dim, or does not index at all (a broadcast), innermost first."""
        found = []
        strided = self.strided or (False,) * len(self.maps)
        for dim in reversed(range(self.rank)):
            if all(dim not in dims or dims[-1] == dim and not gathered
                   for dims, gathered in zip(self.maps, strided)):
                found.append(dim)
        return found

    def vector_dim(self) -> int | None:
        """The loop dim vector code runs along: the innermost dim of the
        output if every operand reads it contiguously, else the innermost
        such loop; None when there is none."""
        contiguous = self.contiguous_dims()
        output = [d for d in self.output_map if d is not None]
        if output and output[-1] in contiguous:
            return output[-1]
        return contiguous[0] if contiguous else None


def analyze(op: ir.Operation) -> "LinalgOp | None":
    """The loop structure of a linalg op on ranked tensors, or None
    (memrefs, non-affine-projection maps, i1, an empty iteration domain);
    a '?' loop is planned as PLANNING_EXTENT long."""
    if not op.name.startswith("linalg."):
        return None
    attribute = linalg_dialect.get_indexing_maps(op)
    if attribute is None:
        return None
    maps = [ir.AffineMapAttr(a).value for a in attribute]
    operands = list(op.operands)
    if len(maps) != len(operands) or not maps:
        return None
    extents: list[int | None] = [None] * maps[0].n_dims
    dynamic = [False] * maps[0].n_dims
    dims_of: list[tuple[int | None, ...]] = []
    for value, indexing in zip(operands, maps):
        t = value.type
        if not isinstance(t, ir.RankedTensorType):
            if isinstance(t, ir.ShapedType):
                return None
            dims_of.append(())
            continue
        if str(t.element_type) == "i1":
            return None
        dims = []
        for position, expr in enumerate(indexing.results):
            if isinstance(expr, ir.AffineDimExpr):
                dim = ir.AffineDimExpr(expr).position
                if not t.is_dynamic_dim(position):
                    # A static reader of a '?' loop fixes its extent.
                    extents[dim], dynamic[dim] = t.shape[position], False
                elif extents[dim] is None:
                    extents[dim], dynamic[dim] = PLANNING_EXTENT, True
                dims.append(dim)
            elif isinstance(expr, ir.AffineConstantExpr) and t.shape[position] == 1:
                dims.append(None)
            elif op.name in WINDOWED:
                dims.append(None)
            else:
                return None
        dims_of.append(tuple(dims))
    # An empty iteration domain is left to the loops stage (a reduction's
    # result is its init, the identity): upstream's tiling asserts on one.
    if None in extents or 0 in extents:
        return None
    # A loop that indexes no output is a reduction (true of every linalg op
    # whose maps are projections).
    inputs = len(operands) - len(op.results)
    written = {d for dims in dims_of[inputs:] for d in dims}
    reduction = tuple(d not in written for d in range(len(extents)))
    return LinalgOp(op, tuple(extents), reduction, tuple(dims_of), inputs,
                    strided=tuple(_strided_slice(value) for value in operands),
                    dynamic=tuple(dynamic))


def _strided_slice(value: ir.Value) -> bool:
    owner = value.owner
    owner = owner.operation if isinstance(owner, ir.OpView) else owner
    if not isinstance(owner, ir.Operation) or owner.name != "tensor.extract_slice":
        return False
    strides = list(ir.DenseI64ArrayAttr(owner.attributes["static_strides"]))
    return bool(strides) and strides[-1] != 1


@dataclass(frozen=True)
class ContractionDims:
    """The roles of a contraction's loops: batch (of both operands or of
    one, and loops of one iteration), rows (m), columns (n) and the
    reduction (k)."""

    batch: tuple[int, ...]
    m: int
    n: int
    k: int


def contraction_dims(linalg: LinalgOp) -> ContractionDims | None:
    """The dims of a `C[b, m, n] += A[b, m, k] * B[b, k, n]`-shaped op
    (operands in any order of their dims), or None."""
    if linalg.inputs != 2 or len(linalg.op.results) != 1:
        return None
    if linalg.name not in ("linalg.matmul", "linalg.batch_matmul") and not _is_multiply_add(linalg.op):
        return None
    a, b, c = (set(d for d in dims if d is not None) for dims in linalg.maps)
    batch, m, n, k = [], [], [], []
    for dim in range(linalg.rank):
        if linalg.reduction[dim]:
            (k if dim in a and dim in b and dim not in c else []).append(dim)
        elif dim in a and dim in b and dim in c:
            batch.append(dim)
        elif dim in a and dim in c:
            m.append(dim)
        elif dim in b and dim in c:
            n.append(dim)
    # Dims of one operand and C beyond one of them are batch dims of that
    # operand only: a batch that B does not have is a linear layer's
    # activations `[batch, tokens, features]` times a weight shared by every
    # batch (the form `nn.matmul`'s lowering gives once reshape propagation
    # has expanded its collapsed rows back through the matmul), one that A
    # does not have a weight per batch. Such a contraction is the packed
    # matmul looped over that batch, B's panels (A's blocks) packed once for
    # every batch. m, n and k are the innermost of their dims (in C's order,
    # A's for k) that are not unit ones, so that unit dims anywhere (the
    # batch of one of a linear layer, a weight's batch of one that the
    # propagation leaves as a unit reduction) leave the 2-D matmul's rows,
    # columns and reduction; loops of one iteration of any role are batch
    # dims of one, which the packing and the tiles leave as they are.
    a_map, _, c_map = linalg.maps
    m = _innermost_of_many(linalg, m, c_map, batch)
    n = _innermost_of_many(linalg, n, c_map, batch)
    k = _innermost_of_many(linalg, k, a_map, batch)
    if m is None or n is None or k is None or len(batch) + 3 != linalg.rank:
        return None
    if any(linalg.reduction[d] and linalg.extents[d] != 1 for d in batch):
        return None
    return ContractionDims(tuple(sorted(batch)), m, n, k)


def _innermost_of_many(linalg: LinalgOp, dims: list[int], operand_map: tuple[int | None, ...],
                       batch: list[int]) -> int | None:
    """The one of `dims` (loops of one role) that the packed contraction
    blocks: the innermost in `operand_map`'s order with more than one
    iteration, else the innermost; the others go to `batch`."""
    if not dims:
        return None
    order = [d for d in operand_map if d in dims]
    chosen = next((d for d in reversed(order) if linalg.extents[d] > 1), order[-1])
    batch += [d for d in dims if d != chosen]
    return chosen


def _is_multiply_add(op: ir.Operation) -> bool:
    """A body `out + in0 * in1` (with element extensions)."""
    if op.name != "linalg.generic":
        return False
    names = [o.name for o in op.regions[0].blocks[0].operations]
    core = [n for n in names if n not in ("arith.extf", "arith.truncf", "arith.extsi",
                                          "arith.extui")]
    return core in (["arith.mulf", "arith.addf", "linalg.yield"],
                    ["arith.muli", "arith.addi", "linalg.yield"])


# ---------------------------------------------------------------------------
# Groups.


@dataclass
class Group:
    """Ops scheduled together: `ops` in program order. The root, whose loops
    the others fuse into, is the op whose result leaves the group that the
    most members feed (the last such op on a tie); members that do not feed
    it (another result of the group, a sibling) cannot fuse into its loops.
    `loop` is the loop a lowering placed the ops in (flash attention's
    body, `loop_body_groups`), None for the function's own ops."""

    name: str
    ops: list[LinalgOp] = field(default_factory=list)
    kind: str = ""
    loop: ir.Operation | None = None

    @property
    def root(self) -> LinalgOp:
        leaving = [op for op in self.ops if self._leaves(op)] or self.ops
        return max(reversed(leaving), key=lambda op: len(self.feeding(op)))

    def feeding(self, linalg: LinalgOp) -> list[LinalgOp]:
        """The members whose results `linalg` uses, directly or through
        other ops of the group (members, reshapes marked with the group),
        consumers before their producers."""
        members = {_op_key(op.op): op for op in self.ops}
        markers = self._markers()
        reached = {_op_key(linalg.op)}
        found: list[LinalgOp] = []
        body = list(linalg.op.parent.regions[0].blocks[0].operations)
        for operation in reversed(body):
            op = operation.operation
            key = _op_key(op)
            if key in reached or (key not in members and not (
                    FUSION_GROUP in op.attributes and str(op.attributes[FUSION_GROUP]) in markers)):
                continue
            if any(_op_key(_top_level(use.owner)) in reached
                   for result in op.results for use in result.uses):
                reached.add(key)
                if key in members:
                    found.append(members[key])
        return found

    def _markers(self) -> set[str]:
        """The fusion groups the members were marked with."""
        return {str(m.op.attributes[FUSION_GROUP]) for m in self.ops
                if FUSION_GROUP in m.op.attributes}

    def _leaves(self, linalg: LinalgOp) -> bool:
        members = [op.op for op in self.ops]
        for result in linalg.op.results:
            for use in result.uses:
                if not any(_top_level(use.owner) == m for m in members):
                    return True
        return False


def _top_level(owner) -> ir.Operation:
    """The op of the function's body that holds `owner`."""
    operation = owner.operation if hasattr(owner, "operation") else owner
    while operation.parent is not None and operation.parent.name != "func.func":
        operation = operation.parent
    return operation


def function_groups(func: ir.Operation) -> list[Group]:
    """The groups of a function's top-level linalg ops: the fusion groups
    that `nn-inline-fused` marked, else each op on its own with the
    `linalg.fill`s that initialise it."""
    groups: dict[str, Group] = {}
    order: list[Group] = []
    pending_fills: dict[int, LinalgOp] = {}
    for operation in func.regions[0].blocks[0].operations:
        op = operation.operation
        linalg = analyze(op)
        if linalg is None:
            continue
        if FUSION_GROUP in op.attributes:
            name = ir.StringAttr(op.attributes[FUSION_GROUP]).value
            if name not in groups:
                kind = (ir.StringAttr(op.attributes[FUSION_KIND]).value
                        if FUSION_KIND in op.attributes else "")
                groups[name] = Group(name, kind=kind)
                order.append(groups[name])
            groups[name].ops.append(linalg)
            continue
        if op.name == "linalg.fill":
            pending_fills[_value_key(op.results[0])] = linalg
            continue
        group = Group(f"op{len(order)}")
        for init in list(op.operands)[linalg.inputs:]:
            fill = pending_fills.pop(_value_key(init), None)
            if fill is not None and _single_use(fill.op):
                group.ops.append(fill)
            elif fill is not None:
                pending_fills[_value_key(init)] = fill
        group.ops.append(linalg)
        order.append(group)
    for fill in pending_fills.values():
        order.append(Group(f"op{len(order)}", [fill]))
    return order


def loop_body_groups(func: ir.Operation) -> list[Group]:
    """One group per top-level loop of a function that holds linalg ops
    (`loop0`, `loop1`, ...): the ops inside it, in program order."""
    groups = []
    for operation in func.regions[0].blocks[0].operations:
        op = operation.operation
        if not op.name.startswith("scf."):
            continue
        nested: list[LinalgOp] = []

        def collect(child):
            linalg = analyze(child) if child.name.startswith("linalg.") else None
            if linalg is not None:
                nested.append(linalg)
            return ir.WalkResult.ADVANCE

        op.walk(collect, ir.WalkOrder.PRE_ORDER)
        if nested:
            groups.append(Group(f"loop{len(groups)}", nested, loop=op))
    return groups


def _value_key(value: ir.Value) -> int:
    return hash(value)


def _op_key(op: ir.Operation) -> int:
    return hash(op.operation)


def is_epilogue_chain(linalg: LinalgOp, epilogue: list[LinalgOp], group: Group) -> bool:
    """Whether `epilogue` (ops after `linalg` in program order) is a chain
    of elementwise ops over `linalg`'s result, the last one the group's
    root, that alone read `linalg`'s result and each other's: what a
    schedule can compute on each block of the result inside `linalg`'s
    loops."""
    if not epilogue or group.root is not epilogue[-1]:
        return False
    shape = tuple(linalg.extents[d] for d in linalg.output_map)
    members = {_op_key(op.op) for op in epilogue}
    for op in epilogue:
        if any(op.reduction) or op.output_map != tuple(range(len(shape))) or op.extents != shape:
            return False
    return all(_op_key(use.owner) in members
               for producer in [linalg] + epilogue[:-1] for use in producer.op.results[0].uses)


def _single_use(op: ir.Operation) -> bool:
    return sum(1 for _ in op.results[0].uses) == 1
