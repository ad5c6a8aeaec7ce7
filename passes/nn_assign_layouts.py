"""--nn-assign-layouts: each 4-D activation stored NCHW or channels-last
(NHWC), chosen for the whole program, with layout changes only at its
edges and where an op needs one.

nn's ops take NCHW activations; the CPU computes a dense convolution
(groups 1) in NHWC, a grouped one in NCHW, and a depthwise one (a filter
per channel), a 1x1 one of stride 1 on an unpadded input, elementwise ops
and the others in either. Left alone,
every dense convolution other than those 1x1 ones transposes its input
to NHWC and its result back (`cpu-convolutions-to-channels-last`). This
pass instead stores whole regions of the program channels-last:

* the ops that can compute in either layout are grouped into regions,
  two ops being in one region when one's 4-D result is the other's 4-D
  operand. They are: convolutions and pooling (with `layout = "NHWC"`),
  elementwise ops with a 4-D result (rank-4 operands, residual adds
  included, are in the region; lower-rank ones, such as a batch norm's
  per-channel `[C, 1, 1]` scale and shift, are reshaped or transposed
  into the layout where the op reads them), concatenation (its axis
  permuted), `nn.pad` (its pads permuted) and reductions with `keepdims`
  (their axes permuted);
* each region is stored NHWC where that leaves fewer transposes: each
  dense convolution saves two (those of its channels-last rewrite; none
  for a 1x1 one of stride 1, which is a matrix product in either layout),
  each grouped convolution costs two (it computes in NCHW between
  transposes), each depthwise one counts as a dense one (it computes in
  NHWC with no transpose, a vector of channels per pixel, where in NCHW it
  is a sum of shifted rows per channel: 2-3x slower), and each activation crossing the region's edge costs one
  (none where the change of layout is a reshape: when at most one dim
  is not 1, or the dims that are not 1 keep their order). Option
  `layout=NHWC` stores every region holding a convolution or pooling
  channels-last, `layout=NCHW` none;
* an op that reads an NHWC activation without a rule of its own gets the
  NCHW activation, transposed once and shared by all such readers, as do
  the function's results. Three readers take the NHWC activation as it
  is: `nn.transpose` (its permutation composed with the layout's),
  `nn.reshape` when the layout change is itself a reshape (the flatten
  after a global average pooling), and reductions without `keepdims`
  whose kept dims keep their order (`[N, C]` from a pooling over `H, W`).

Weights keep their layout (OIHW filters, `[C]` biases): the filter's
transpose belongs to the convolution's rewrite, which folds it for a
constant.

Upstream MLIR assigns no layouts: its data-layout propagation moves
`linalg.pack`/`unpack` through generics (C++ patterns, with no pass or
transform op in LLVM 22) and its canonicalisation composes transposes;
the choice of a layout per region, at the operator level where
convolutions and their epilogues are still whole ops, is Lamina's.

Expects verified nn IR on static shapes, before `nn-decompose` and
`nn-fuse` (the composites of a 4-D activation keep NCHW). Guarantees:
verified nn IR computing the same values, each op the same sum in the
same order; the function's signature is unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from lamina.dialects import nn
from lamina.dialects.opdef import lookup_op
from lamina.pass_registry import Pass, PassFailure, register_pass

NCHW, NHWC = "NCHW", "NHWC"
TO_NHWC = nn.LAYOUTS[NHWC]
TO_NCHW = tuple(TO_NHWC.index(d) for d in range(4))

# What each change of layout costs in transposes (see the module docstring).
_DENSE_CONVOLUTION_GAIN = 2
_GROUPED_CONVOLUTION_COST = 2
_EDGE_COST = 1


def _shape(value: ir.Value) -> tuple[int, ...]:
    return tuple(ir.RankedTensorType(value.type).shape)


def _is_activation(value: ir.Value) -> bool:
    return isinstance(value.type, ir.RankedTensorType) and value.type.rank == 4


def _keeps_order(shape, permutation) -> bool:
    """Whether `shape` permuted by `permutation` holds its elements in the
    same order (its dims that are not 1 keep their order): the permutation
    is then a reshape."""
    moved = [d for d in permutation if shape[d] != 1]
    return moved == sorted(moved)


def _permuted_shape(shape, permutation) -> list[int]:
    return [shape[d] for d in permutation]


def _i64s(operation: ir.Operation, name: str) -> list[int]:
    return list(ir.DenseI64ArrayAttr(operation.attributes[name]))


def _convolution_saves(operation: ir.Operation) -> int:
    """The transposes a convolution saves computing channels-last (see the
    module docstring)."""
    view = nn.Conv2dOp.from_operation(operation)
    weight = _shape(operation.operands[1])
    if view.groups != 1:
        depthwise = weight[0] == view.groups and weight[1] == 1
        return _DENSE_CONVOLUTION_GAIN if depthwise else -_GROUPED_CONVOLUTION_COST
    pointwise = (weight[2:] == (1, 1) and tuple(view.strides) == (1, 1)
                 and not any(view.padding))
    return 0 if pointwise else _DENSE_CONVOLUTION_GAIN


class _Rule:
    """How an op computes in either layout: which operands are in its
    region, and how its attributes and result type follow the layout."""

    def __init__(self, operation: ir.Operation):
        self.operation = operation

    def activations(self) -> list[int]:
        """The operands in the op's region."""
        return [i for i, v in enumerate(self.operation.operands) if _is_activation(v)]

    def attributes(self) -> dict[str, ir.Attribute]:
        """The op's attributes for its NHWC form."""
        return {}

    def transposes_saved(self) -> int:
        return 0


class _Elementwise(_Rule):
    """Rank-4 operands are in the region; lower-rank ones (a batch norm's
    per-channel scale) are reshaped or transposed where they are read."""


class _Convolution(_Rule):
    def activations(self):
        return [0]

    def attributes(self):
        return {"layout": ir.StringAttr.get(NHWC)}

    def transposes_saved(self):
        return _convolution_saves(self.operation) if self.operation.name == "nn.conv2d" else 0


class _Concat(_Rule):
    def applies(self) -> bool:
        return all(_is_activation(v) for v in self.operation.operands)

    def attributes(self):
        axis = ir.IntegerAttr(self.operation.attributes["axis"]).value % 4
        return {"axis": ir.IntegerAttr.get(ir.IntegerType.get_signless(64),
                                           TO_NHWC.index(axis))}


class _Pad(_Rule):
    def attributes(self):
        return {name: ir.DenseI64ArrayAttr.get(_permuted_shape(_i64s(self.operation, name),
                                                               TO_NHWC))
                for name in ("low", "high")}


class _Reduction(_Rule):
    """A reduction with `keepdims` computes in either layout; one without
    reads NHWC when its kept dims keep their order (a reader of the
    region: its result has no layout)."""

    def axes(self) -> list[int]:
        return [a % 4 for a in _i64s(self.operation, "axes")]

    def keepdims(self) -> bool:
        attribute = self.operation.attributes
        return "keepdims" in attribute and ir.BoolAttr(attribute["keepdims"]).value

    def reads_nhwc(self) -> bool:
        kept = [d for d in TO_NHWC if d not in self.axes()]
        return self.keepdims() or kept == sorted(kept)

    def attributes(self):
        return {"axes": ir.DenseI64ArrayAttr.get(sorted(TO_NHWC.index(a) for a in self.axes()))}


def _rule(operation: ir.Operation) -> _Rule | None:
    """The op's rule for computing in either layout, or None."""
    op_class = lookup_op(operation.name)
    if op_class is None or len(operation.results) != 1 or not _is_activation(
            operation.results[0]):
        return None
    if issubclass(op_class, nn.ElementwiseOp):
        return _Elementwise(operation)
    if issubclass(op_class, (nn.Conv2dOp, nn.Pool2dOp)):
        view = op_class.from_operation(operation)
        return _Convolution(operation) if view.layout == NCHW else None
    if issubclass(op_class, nn.ConcatOp):
        rule = _Concat(operation)
        return rule if rule.applies() else None
    if issubclass(op_class, nn.PadOp) and _is_activation(operation.operands[0]):
        return _Pad(operation)
    if issubclass(op_class, nn.ReductionOp) and _is_activation(operation.operands[0]):
        return _Reduction(operation)
    return None


class _Regions:
    """Union-find over the ops with a rule, joined through activations."""

    def __init__(self):
        self.parent: dict[ir.Operation, ir.Operation] = {}

    def add(self, operation):
        self.parent.setdefault(operation, operation)

    def find(self, operation):
        while self.parent[operation] != operation:
            self.parent[operation] = self.parent[self.parent[operation]]
            operation = self.parent[operation]
        return operation

    def join(self, a, b):
        self.parent[self.find(a)] = self.find(b)


def _producer(value: ir.Value) -> ir.Operation | None:
    owner = value.owner
    return None if isinstance(owner, ir.Block) else owner.operation


class _Assignment:
    """The layout assignment of one function body (one block)."""

    def __init__(self, block: ir.Block, layout: str):
        self.block = block
        self.rules = {}
        for op in block.operations:
            rule = _rule(op.operation)
            if rule is not None:
                self.rules[op.operation] = rule
        self.regions = _Regions()
        for operation, rule in self.rules.items():
            self.regions.add(operation)
            for index in rule.activations():
                producer = _producer(operation.operands[index])
                if producer in self.rules:
                    self.regions.join(operation, producer)
        self.nhwc_regions = self._choose(layout)

    def in_region(self, operation) -> bool:
        """Whether `operation` computes channels-last."""
        return operation in self.rules and self.regions.find(operation) in self.nhwc_regions

    def _choose(self, layout: str) -> set:
        members: dict[ir.Operation, list[ir.Operation]] = {}
        for operation in self.rules:
            members.setdefault(self.regions.find(operation), []).append(operation)
        if layout == NCHW:
            return set()
        if layout == NHWC:
            return {root for root, ops in members.items()
                    if any(isinstance(self.rules[op], _Convolution) for op in ops)}
        return {root for root, ops in members.items() if self._saved(ops) > 0}

    def _saved(self, ops: list[ir.Operation]) -> int:
        """The transposes a region saves when stored channels-last."""
        inside = set(ops)
        saved = sum(self.rules[op].transposes_saved() for op in ops)
        entering = set()
        for op in ops:
            for index in self.rules[op].activations():
                value = op.operands[index]
                if _producer(value) not in inside and not _keeps_order(_shape(value), TO_NHWC):
                    entering.add(value)
        leaving = 0
        for op in ops:
            result = op.results[0]
            if _keeps_order(_shape(result), TO_NHWC):
                continue
            readers = [use.owner for use in result.uses]
            if any(not (isinstance(r, ir.OpView) and r.operation in inside or _is_sink(r))
                   for r in readers):
                leaving += 1
        return saved - _EDGE_COST * (len(entering) + leaving)


def _is_sink(reader) -> bool:
    """Whether `reader` takes an NHWC activation as it is (see the module
    docstring): a transpose, a reshape that the layout change is, a
    reduction without keepdims whose kept dims keep their order."""
    if not isinstance(reader, ir.OpView):
        return False
    operation = reader.operation
    if len(operation.operands) != 1 or not _is_activation(operation.operands[0]):
        return False
    if operation.name == "nn.transpose":
        return True
    if operation.name == "nn.reshape":
        return _keeps_order(_shape(operation.operands[0]), TO_NHWC)
    op_class = lookup_op(operation.name)
    if op_class is None or not issubclass(op_class, nn.ReductionOp):
        return False
    reduction = _Reduction(operation)
    return not reduction.keepdims() and reduction.reads_nhwc()


def _transposed(value: ir.Value, permutation, location) -> ir.Value:
    """`value` in the other layout: a reshape where the change keeps the
    elements' order, else a transpose."""
    shape = _shape(value)
    if _keeps_order(shape, permutation):
        return _reshaped(value, _permuted_shape(shape, permutation), location)
    return nn.TransposeOp.build(value, perm=tuple(permutation), loc=location)


def _reshaped(value: ir.Value, shape, location) -> ir.Value:
    element = nn.TensorType.from_mlir(value.type, dynamic=True).dtype
    return nn.ReshapeOp.build(value, result_type=nn.TensorType(tuple(shape), element),
                              loc=location)


def _broadcast_operand(value: ir.Value, location) -> ir.Value:
    """A lower-rank operand broadcast against an NHWC activation: padded
    to rank 4 with leading 1s (NumPy's rule), then permuted."""
    shape = _shape(value)
    if not shape:
        return value
    padded = (1,) * (4 - len(shape)) + shape
    if _keeps_order(padded, TO_NHWC):
        return _reshaped(value, _permuted_shape(padded, TO_NHWC), location)
    return _transposed(_reshaped(value, padded, location), TO_NHWC, location)


class _Rewrite:
    """Rewrites one block after its assignment, op by op in order."""

    def __init__(self, assignment: _Assignment):
        self.assignment = assignment
        # The NHWC form of each activation that has one.
        self.nhwc: dict[ir.Value, ir.Value] = {}
        # The ops rewritten channels-last and their NHWC results: the NCHW
        # results' remaining readers get them transposed back at the end.
        self.replaced: list[tuple[ir.Operation, ir.Value]] = []
        # Lower-rank operands broadcast against NHWC activations, as read there.
        self.broadcast: dict[ir.Value, ir.Value] = {}

    def run(self) -> None:
        for op in list(self.assignment.block.operations):
            operation = op.operation
            with operation.location:
                if self.assignment.in_region(operation):
                    self._to_nhwc(operation)
                elif _is_sink(op) and operation.operands[0] in self.nhwc:
                    self._sink(operation)
        for operation, result in reversed(self.replaced):
            old = operation.results[0]
            if list(old.uses):
                with ir.InsertionPoint.after(result.owner), operation.location:
                    old.replace_all_uses_with(_transposed(result, TO_NCHW, operation.location))
            operation.erase()

    def nhwc_of(self, value: ir.Value, location) -> ir.Value:
        """The NHWC form of an activation: its own, or one made where it is
        defined (once, for all its readers)."""
        if value not in self.nhwc:
            producer = _producer(value)
            point = (ir.InsertionPoint.at_block_begin(self.assignment.block) if producer is None
                     else ir.InsertionPoint.after(producer))
            with point:
                self.nhwc[value] = _transposed(value, TO_NHWC, location)
        return self.nhwc[value]

    def broadcast_of(self, value: ir.Value, location) -> ir.Value:
        if value not in self.broadcast:
            self.broadcast[value] = _broadcast_operand(value, location)
        return self.broadcast[value]

    def _to_nhwc(self, operation: ir.Operation) -> None:
        rule = self.assignment.rules[operation]
        activations = rule.activations()
        location = operation.location
        with ir.InsertionPoint(operation):
            operands = [self.nhwc_of(v, location) if i in activations
                        else self.broadcast_of(v, location) if isinstance(rule, _Elementwise)
                        else v for i, v in enumerate(operation.operands)]
        result = operation.results[0]
        result_type = ir.RankedTensorType.get(_permuted_shape(_shape(result), TO_NHWC),
                                              result.type.element_type)
        attributes = {name: operation.attributes[name] for name in operation.attributes}
        attributes.update(rule.attributes())
        with ir.InsertionPoint(operation):
            new = ir.Operation.create(operation.name, results=[result_type], operands=operands,
                                      attributes=attributes, loc=location)
        self.nhwc[result] = new.results[0]
        self.replaced.append((operation, new.results[0]))

    def _sink(self, operation: ir.Operation) -> None:
        """A reader that takes the NHWC activation as it is."""
        source = self.nhwc[operation.operands[0]]
        location = operation.location
        with ir.InsertionPoint(operation):
            if operation.name == "nn.transpose":
                perm = _i64s(operation, "perm")
                composed = [TO_NCHW[p] for p in perm]
                new = (source if composed == list(range(4))
                       else nn.TransposeOp.build(source, perm=tuple(composed), loc=location))
            elif operation.name == "nn.reshape":
                new = _reshaped(source, _shape(operation.results[0]), location)
            else:
                attributes = {name: operation.attributes[name] for name in operation.attributes}
                attributes.update(_Reduction(operation).attributes())
                new = ir.Operation.create(operation.name, results=[operation.results[0].type],
                                          operands=[source], attributes=attributes,
                                          loc=location).results[0]
        operation.results[0].replace_all_uses_with(new)
        operation.erase()


LAYOUT_CHOICES = ("auto", NHWC, NCHW)


@register_pass
@dataclass
class NNAssignLayouts(Pass):
    """Stores 4-D activations NCHW or NHWC by region of the program, convolutions and pooling computing in the layout, with layout changes only at the edges and where an op needs one."""

    argument = "nn-assign-layouts"
    anchor = "func.func"

    layout: str = "auto"
    """`auto` (NHWC where it leaves fewer transposes), `NHWC` (every region holding a convolution or pooling) or `NCHW` (no change)."""

    def run(self, op: ir.Operation) -> None:
        if self.layout not in LAYOUT_CHOICES:
            raise PassFailure(f"nn-assign-layouts: 'layout' must be one of "
                              f"{', '.join(LAYOUT_CHOICES)}, got '{self.layout}'", op.location)
        for region in op.regions:
            for block in region.blocks:
                _Rewrite(_Assignment(block, self.layout)).run()
