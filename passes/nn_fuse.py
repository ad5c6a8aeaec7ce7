"""--nn-fuse: fusion groups as visible IR.

Partitions the nn ops of each function into fusion groups and outlines each
group of two or more ops into a private function `@fusion_N`, called by an
`nn.fused` op whose `kind` names what the group is built around:

    %y = "nn.fused"(%x, %w, %b) {body = @fusion_0, kind = "contraction"}
        : (tensor<8x64xf32>, tensor<64x128xf32>, tensor<128xf32>) -> tensor<8x128xf32>
    func.func private @fusion_0(...) { matmul, add, gelu's parts; return }

The decisions use the op categories of `lamina.dialects.nn` (fusion kind,
iteration domain, result shapes), never op names, so a user's elementwise op
fuses like a built-in one. Ops are visited in order; each joins the groups
of its operands' producers when the rules allow, else starts its own group:

* elementwise chains, with broadcasting: elementwise ops join elementwise
  groups whatever their shapes;
* producers into reductions, and the consumers of their row statistics: a
  reduction joins the group of its producers, and elementwise ops over its
  rows join it, when every op of the group iterates the same rows: a
  reduction over the same domain and axes, or an elementwise op shaped like
  the domain, like the row statistics with `keepdims`, or like them without
  (read where NumPy's broadcasting lines them up with the rows). A
  decomposed softmax or layer_norm is one group: one pass over each row's
  inputs for a schedule that keeps the row in cache;
* contraction and convolution epilogues: a matmul, conv2d or pooling op
  starts a group (its producers stay outside: no prologue fusion), and its
  elementwise consumers shaped like its result join it (bias, activation,
  residual add, cast). One contraction or convolution per group, and none
  in a reduction group;
* multi-output groups: a value of a group used outside it is one of the
  group's results;
* nothing is computed twice: groups do not overlap, so an expensive
  producer (contraction, convolution, reduction) with users in several
  groups is computed once, in its group, and read by the others;
* no cycles: an op does not join a group if a path leaves the group and
  comes back to the op;
* `max-group-size`: a group stops growing at that many nn ops.

Data movement ops (reshape, transpose, slice, concat, pad, broadcast_to),
opaque ops (composites left whole, such as `nn.attention`; `nn.fused`) and
ops of other dialects are boundaries. Splat constants are cloned into the
groups that read them; other values a group reads are its inputs. A group
of one op, or one without inputs, is left as it is. Functions that are the
bodies of `nn.fused` ops are not fused again.

Expects verified nn IR; run `nn-decompose` first so that fusion sees inside
composite ops. Guarantees: verified IR computing the same values, every
group a private `func.func` holding nn ops (and constants) called by one
`nn.fused` op whose results are the function's; ops are reordered only
where a group's results must come before their users.

Lowering: `convert-nn-to-linalg` lowers `nn.fused` to a `func.call` of its
body (lowered too), so that upstream cleanups and elementwise fusion act
within each group and never across groups; `nn-inline-fused` then inlines
the bodies and marks the ops they produced (see its documentation for the
markers a schedule reads).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field

from mlir import ir
from mlir.dialects import func

from lamina.dialects import nn
from lamina.dialects.opdef import lookup_op
from lamina.pass_registry import Pass, register_pass
from lamina.types import TensorType

Shape = tuple[int, ...]
_ANCHORS = (nn.CONTRACTION, nn.CONVOLUTION)
_FUSIBLE = (nn.ELEMENTWISE, nn.REDUCTION) + _ANCHORS


@dataclass(frozen=True)
class Rows:
    """The rows a reduction group iterates: the reductions' domain and
    reduced axes, and the shapes its ops may have."""

    domain: Shape
    axes: tuple[int, ...]

    @property
    def kept(self) -> Shape:
        """Row statistics with `keepdims`."""
        return tuple(1 if d in self.axes else size for d, size in enumerate(self.domain))

    @property
    def dropped(self) -> Shape:
        """Row statistics without `keepdims`."""
        return tuple(size for d, size in enumerate(self.domain) if d not in self.axes)

    def reads(self, result: Shape, operand: Shape) -> bool:
        """True when an elementwise op of shape `result` reads an operand of
        shape `operand` (both of the group) at its own row: same-rank
        shapes line up dim by dim, and row statistics without `keepdims`
        line up with the rows only when the reduced axes lead."""
        pairs = {(self.domain, self.domain), (self.domain, self.kept),
                 (self.kept, self.kept), (self.dropped, self.dropped)}
        if self.axes == tuple(range(len(self.axes))):
            pairs |= {(self.domain, self.dropped), (self.kept, self.dropped)}
        return (result, operand) in pairs


@dataclass(eq=False)
class Group:
    """A fusion group under construction: its ops in program order, the
    contraction or convolution it is built around, or its rows."""

    members: list[ir.Operation] = field(default_factory=list)
    anchor: ir.Operation | None = None
    rows: Rows | None = None

    @property
    def kind(self) -> str:
        if self.anchor is not None:
            return nn.fusion_kind(lookup_op(self.anchor.name))
        return nn.REDUCTION if self.rows is not None else nn.ELEMENTWISE


def _kind(operation: ir.Operation) -> str:
    """The fusion kind of a top-level op; only ops with one tensor result
    and no regions take part in fusion."""
    op_class = lookup_op(operation.name)
    if (op_class is None or len(operation.results) != 1 or len(operation.regions)
            or not isinstance(operation.results[0].type, ir.RankedTensorType)):
        return nn.OPAQUE
    return nn.fusion_kind(op_class)


def _shape(value: ir.Value) -> Shape:
    return tuple(ir.RankedTensorType(value.type).shape)


def _type_groups(view) -> list:
    """The operand types of an op's view, grouped like its operands (as
    the category interfaces take them)."""
    def of(value):
        return None if value is None else TensorType.from_mlir(value.type, dynamic=True)

    groups = [view.operand(decl.name) for decl in view.operand_decls]
    return [[of(v) for v in g] if isinstance(g, list) else of(g) for g in groups]


def _rows(operation: ir.Operation) -> Rows:
    """The rows a reduction iterates, from its iteration domain."""
    view = lookup_op(operation.name).from_operation(operation)
    domain = view.iteration_domain(*_type_groups(view))
    return Rows(domain.sizes, domain.reduction_dims)


def _is_splat_constant(operation: ir.Operation) -> bool:
    if operation.name != "arith.constant":
        return False
    value = operation.attributes["value"]
    return isinstance(value, ir.DenseElementsAttr) and ir.DenseElementsAttr(value).is_splat


class BlockFusion:
    """Forms the fusion groups of one block and outlines them."""

    def __init__(self, block: ir.Block, max_group_size: int):
        self.block = block
        self.max_group_size = max_group_size
        self.ops = [op.operation for op in block.operations]
        self.index = {op: i for i, op in enumerate(self.ops)}
        self.users = {op: self._users(op) for op in self.ops}
        self.group_of: dict[ir.Operation, Group] = {}

    def _top(self, operation: ir.Operation) -> ir.Operation | None:
        """The op of this block that is or holds `operation`."""
        while operation is not None and operation.block != self.block:
            operation = operation.parent
        return operation

    def _users(self, op: ir.Operation) -> list[ir.Operation]:
        found = []
        for result in op.results:
            for use in result.uses:
                user = self._top(use.owner.operation)
                if user is not None and user not in found:
                    found.append(user)
        return found

    def _producer(self, value: ir.Value) -> ir.Operation | None:
        owner = value.owner
        if isinstance(owner, ir.Block):
            return None
        return self._top(owner.operation)

    def _producers(self, op: ir.Operation) -> list[ir.Operation]:
        """The ops of this block whose values `op` (or an op inside it) reads."""
        found = []

        def visit(nested):
            for value in nested.operands:
                producer = self._producer(value)
                if producer is not None and producer != op and producer not in found:
                    found.append(producer)
            return ir.WalkResult.ADVANCE

        op.walk(visit, ir.WalkOrder.PRE_ORDER)
        return found

    # -- forming groups --------------------------------------------------------

    def form_groups(self) -> list[Group]:
        for op in self.ops:
            kind = _kind(op)
            if kind not in _FUSIBLE:
                continue
            if kind in _ANCHORS:
                self._assign(Group(), op)
                continue
            candidates = []
            for value in op.operands:
                producer = self._producer(value)
                group = self.group_of.get(producer)
                if group is not None and group not in candidates:
                    candidates.append(group)
            options = [candidates] + ([[g] for g in candidates] if len(candidates) > 1 else [])
            chosen = next((option for option in options if option and self._can_join(option, op)),
                          None)
            self._assign(self._merge(chosen) if chosen else Group(), op)
        groups = []
        for group in self.group_of.values():
            if group not in groups:
                groups.append(group)
        return groups

    def _assign(self, group: Group, op: ir.Operation) -> None:
        group.members.append(op)
        kind = _kind(op)
        if kind in _ANCHORS:
            group.anchor = op
        elif kind == nn.REDUCTION:
            group.rows = _rows(op)
        self.group_of[op] = group

    def _merge(self, groups: list[Group]) -> Group:
        merged = groups[0]
        for other in groups[1:]:
            merged.members.extend(other.members)
            merged.anchor = merged.anchor or other.anchor
            merged.rows = merged.rows or other.rows
            for member in other.members:
                self.group_of[member] = merged
        merged.members.sort(key=self.index.__getitem__)
        return merged

    def _can_join(self, groups: list[Group], op: ir.Operation) -> bool:
        """Whether `op` (elementwise or a reduction) may join `groups`,
        merging them."""
        members = [m for g in groups for m in g.members] + [op]
        if self.max_group_size and len(members) > self.max_group_size:
            return False
        anchors = [g.anchor for g in groups if g.anchor is not None]
        rows = {g.rows for g in groups if g.rows is not None}
        if _kind(op) == nn.REDUCTION:
            rows.add(_rows(op))
        if len(anchors) > 1 or len(rows) > 1 or (anchors and rows):
            return False
        if anchors and not self._epilogue(members, anchors[0]):
            return False
        if rows and not self._same_rows(members, rows.pop()):
            return False
        return not self._cycle(set(members), op)

    def _epilogue(self, members: list[ir.Operation], anchor: ir.Operation) -> bool:
        """Every op besides the anchor is elementwise and shaped like its result."""
        shape = _shape(anchor.results[0])
        return all(m == anchor or (_kind(m) == nn.ELEMENTWISE and _shape(m.results[0]) == shape)
                   for m in members)

    def _same_rows(self, members: list[ir.Operation], rows: Rows) -> bool:
        """Every elementwise op reads the group's values at its own row."""
        inside = set(members)
        for member in members:
            if _kind(member) != nn.ELEMENTWISE:
                continue
            result = _shape(member.results[0])
            if result not in (rows.domain, rows.kept, rows.dropped):
                return False
            for value in member.operands:
                if self._producer(value) in inside and not rows.reads(result, _shape(value)):
                    return False
        return True

    def _cycle(self, members: set[ir.Operation], op: ir.Operation) -> bool:
        """True when a path leaves `members` and comes back: an op outside
        that uses a member and on which a member depends. Members all come
        before `op`, so the path lies before it."""
        limit = self.index[op]
        stack = [user for m in members for user in self.users[m]
                 if user not in members and self.index[user] < limit]
        seen = set()
        while stack:
            current = stack.pop()
            if current in seen:
                continue
            seen.add(current)
            for user in self.users[current]:
                if user in members:
                    return True
                if self.index[user] < limit:
                    stack.append(user)
        return False

    # -- outlining ---------------------------------------------------------------

    def outline(self, groups: list[Group], names, after: ir.Operation) -> ir.Operation:
        """Replaces each group by an nn.fused op calling a new private
        function, inserted after `after`, and orders the block so that every
        value comes before its users. Returns the last function inserted
        (or `after`)."""
        plans = [plan for plan in (GroupPlan.of(g, self) for g in groups
                                   if len(g.members) > 1) if plan is not None]
        while True:
            plan_of = {member: plan for plan in plans for member in plan.group.members}
            items = list(dict.fromkeys(plan_of.get(op, op) for op in self.ops[:-1]))
            order = self._order(items)
            if len(order) == len(items):
                break
            # Groups that feed each other through ops outside them form a
            # cycle no check of one group sees: the first group left
            # unordered stays unfused, until the rest can be ordered.
            placed = {id(item) for item in order}
            blocked = next(item for item in items
                           if isinstance(item, GroupPlan) and id(item) not in placed)
            plans = [plan for plan in plans if plan is not blocked]
        if not plans:
            return after
        terminator = self.ops[-1]
        for plan in plans:
            after = plan.build_function(next(names), after)
        replaced: dict[ir.Value, ir.Value] = {}
        for item in order:
            if isinstance(item, GroupPlan):
                with ir.InsertionPoint(terminator):
                    item.replace(replaced)
            else:
                item.move_before(terminator)
        for plan in plans:
            for member in reversed(plan.group.members):
                member.erase()
            for constant in plan.cloned_constants:
                if not any(True for result in constant.results for _ in result.uses):
                    constant.erase()
        return after

    def _order(self, items: list) -> list:
        """The items (ops and group plans) in an order where producers come
        first, otherwise as close to program order as possible (a group
        stands where its last op stood)."""
        number = {}
        for i, item in enumerate(items):
            for op in (item.group.members if isinstance(item, GroupPlan) else [item]):
                number[op] = i
        position = [self.index[item.group.members[-1]] if isinstance(item, GroupPlan)
                    else self.index[item] for item in items]
        depends = [set() for _ in items]
        dependents = [[] for _ in items]
        for op, i in number.items():
            for producer in self._producers(op):
                source = number.get(producer)
                if source is not None and source != i and source not in depends[i]:
                    depends[i].add(source)
                    dependents[source].append(i)
        ready = [(position[i], i) for i in range(len(items)) if not depends[i]]
        heapq.heapify(ready)
        order = []
        while ready:
            _, i = heapq.heappop(ready)
            order.append(items[i])
            for dependent in dependents[i]:
                depends[dependent].discard(i)
                if not depends[dependent]:
                    heapq.heappush(ready, (position[dependent], dependent))
        return order


class GroupPlan:
    """How one group is outlined: its inputs, outputs and cloned constants."""

    def __init__(self, group: Group, inputs: list[ir.Value], outputs: list[ir.Value],
                 constants: list[ir.Operation]):
        self.group = group
        self.inputs = inputs
        self.outputs = outputs
        self.cloned_constants = constants
        self.function: str | None = None

    @classmethod
    def of(cls, group: Group, fusion: BlockFusion) -> "GroupPlan | None":
        """The plan of a group; None for a group without inputs or outputs."""
        inside = set(group.members)
        inputs, outputs, constants = [], [], []
        for member in group.members:
            for value in member.operands:
                producer = fusion._producer(value)
                if producer in inside:
                    continue
                if producer is not None and _is_splat_constant(producer):
                    if producer not in constants:
                        constants.append(producer)
                elif value not in inputs:
                    inputs.append(value)
            for result in member.results:
                if any(fusion._top(use.owner.operation) not in inside for use in result.uses):
                    outputs.append(result)
        if not inputs or not outputs:
            return None
        return cls(group, inputs, outputs, constants)

    def build_function(self, name: str, after: ir.Operation) -> ir.Operation:
        """The private function holding the group's ops, after `after`."""
        root = self.group.members[-1]
        with root.location:
            function = func.FuncOp(name, ([v.type for v in self.inputs],
                                          [v.type for v in self.outputs]),
                                   visibility="private", ip=ir.InsertionPoint.after(after))
            entry = function.add_entry_block()
            mapping = dict(zip(self.inputs, entry.arguments))
            with ir.InsertionPoint(entry):
                for constant in self.cloned_constants:
                    mapping[constant.results[0]] = _copy(constant, []).results[0]
                for member in self.group.members:
                    copy = _copy(member, [mapping[v] for v in member.operands])
                    for old, new in zip(member.results, copy.results):
                        mapping[old] = new
                func.ReturnOp([mapping[v] for v in self.outputs])
        self.function = name
        return function.operation

    def replace(self, replaced: dict[ir.Value, ir.Value]) -> None:
        """The nn.fused op, at the current insertion point, in place of the
        group's results; `replaced` maps the results of the groups replaced
        so far to the values that replace them, and gets this group's."""
        root = self.group.members[-1]
        inputs = [replaced.get(v, v) for v in self.inputs]
        result_types = [TensorType.from_mlir(v.type, dynamic=True) for v in self.outputs]
        results = nn.FusedOp.build(inputs, result_types=result_types,
                                   kind=self.group.kind, body=self.function, loc=root.location)
        for old, new in zip(self.outputs, results):
            old.replace_all_uses_with(new)
            replaced[old] = new


def _copy(operation: ir.Operation, operands: list[ir.Value]) -> ir.Operation:
    """A copy of a region-free op reading `operands`, at the current
    insertion point."""
    return ir.Operation.create(operation.name, results=[r.type for r in operation.results],
                               operands=operands,
                               attributes={name: operation.attributes[name]
                                           for name in operation.attributes},
                               loc=operation.location)


def _symbol_names(module: ir.Operation) -> set[str]:
    names = set()
    for op in module.regions[0].blocks[0].operations:
        if "sym_name" in op.operation.attributes:
            names.add(ir.StringAttr(op.operation.attributes["sym_name"]).value)
    return names


def _fusion_bodies(module: ir.Operation) -> set[str]:
    """The functions called by nn.fused ops."""
    bodies = set()

    def visit(op):
        if op.name == nn.FusedOp.op_name():
            bodies.add(ir.FlatSymbolRefAttr(op.attributes["body"]).value)
        return ir.WalkResult.ADVANCE

    module.walk(visit, ir.WalkOrder.PRE_ORDER)
    return bodies


def _fresh_names(taken: set[str]):
    counter = 0
    while True:
        name = f"fusion_{counter}"
        counter += 1
        if name not in taken:
            taken.add(name)
            yield name


@register_pass
@dataclass
class NNFuse(Pass):
    """Forms fusion groups of nn ops (elementwise chains, reductions with their producers and row consumers, contraction and convolution epilogues) and outlines each into a private function called by nn.fused."""

    argument = "nn-fuse"
    anchor = "builtin.module"

    max_group_size: int = 64

    def run(self, op: ir.Operation) -> None:
        names = _fresh_names(_symbol_names(op))
        bodies = _fusion_bodies(op)
        functions = [f.operation for f in op.regions[0].blocks[0].operations
                     if f.operation.name == "func.func"
                     and ir.StringAttr(f.operation.attributes["sym_name"]).value not in bodies]
        for function in functions:
            after = function
            for block in function.regions[0].blocks:
                fusion = BlockFusion(block, self.max_group_size)
                after = fusion.outline(fusion.form_groups(), names, after)
