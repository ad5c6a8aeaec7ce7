"""--func-split-initializer: the computation on bound arguments moves into
an initialiser function, run once when they are bound.

A public function whose arguments carry `lamina.bound` (the weights a user
binds: `lamina.compile(module).bind(weights)`) is split in two:

* `@NAME_init` takes the bound arguments (with their attributes) and
  returns the prepared weights: everything the function computes from
  bound arguments and constants alone;
* `@NAME` takes its other arguments, in their order, then the prepared
  weights, each marked `lamina.prepared`; it names its initialiser in
  `lamina.initializer`.

An op is moved when its operands (and the values its regions use from
outside) are prepared weights, constants or results of moved ops, and at
least one of them derives from a bound argument: computation on constants
alone is left to constant folding (`nn-fold-constants`), and a fill of a
constant stays where it initialises a result. Constants and empty tensors
that moved ops use are copied into the initialiser. An op whose results
are more than twice the size of its operands from bound arguments (the
broadcast of a bias) stays: it is cheaper to compute than to pass. A moved op leaves its
fusion group. A prepared weight that the function no longer uses is
dropped from both signatures.

The pass runs again wherever later rewrites make more computation depend
on the weights alone: on a function that already has its initialiser, the
ops that now depend only on prepared weights join it, and the signatures
are changed in step (the CPU pipeline runs it on nn ops, after batch
norms are folded; on linalg ops, after the convolutions' rewrites have
transposed their filters; and on the loops of the schedules, where the
contractions' weights are packed into panels). Only ops free of side
effects move (nn, arith, math, ub, and tensor, linalg, scf and vector ops on
tensors: the pass runs before bufferization).

Expects a module of `func.func`s whose bodies are one block. Guarantees:
calling the initialiser on the bound arguments and the function on the
rest and the initialiser's results computes what the function computed;
a function with no bound argument is left as it is.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import func

from lamina.dialects.nn import FUSION_GROUP_ATTRIBUTE, FUSION_KIND_ATTRIBUTE
from lamina.pass_registry import Pass, PassFailure, register_pass

BOUND = "lamina.bound"
PREPARED = "lamina.prepared"
INITIALIZER = "lamina.initializer"
# What marks a linalg op as a member of a fusion group (nn-inline-fused): a
# moved op leaves its group, whose other members stay in the function.
FUSION_MARKS = (FUSION_GROUP_ATTRIBUTE, FUSION_KIND_ATTRIBUTE)

# Dialects whose ops (on tensors, before bufferization) have no side
# effects, and so may run in the initialiser instead: the loops of a
# packing that a schedule has tiled are scf and vector ops on tensors.
_PURE_DIALECTS = ("nn", "arith", "math", "tensor", "linalg", "scf", "vector", "ub")
# How much larger than its operands from bound arguments an op's results
# may be for it to move (a padded packing); a broadcast stays.
GROWTH = 2


def _symbol(op: ir.Operation) -> str:
    return ir.StringAttr(op.attributes["sym_name"]).value


def argument_attributes(function: ir.Operation) -> list[dict[str, ir.Attribute]]:
    """The attributes of each argument of `function`."""
    count = len(function.regions[0].blocks[0].arguments)
    if "arg_attrs" not in function.attributes:
        return [{} for _ in range(count)]
    return [{a.name: a.attr for a in ir.DictAttr(attrs)}
            for attrs in ir.ArrayAttr(function.attributes["arg_attrs"])]


def _set_signature(function: ir.Operation, results: list[ir.Type],
                   attributes: list[dict[str, ir.Attribute]]) -> None:
    block = function.regions[0].blocks[0]
    inputs = [a.type for a in block.arguments]
    function.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(inputs, results))
    if any(attributes):
        function.attributes["arg_attrs"] = ir.ArrayAttr.get(
            [ir.DictAttr.get(a) for a in attributes])
    elif "arg_attrs" in function.attributes:
        del function.attributes["arg_attrs"]
    if "res_attrs" in function.attributes:
        del function.attributes["res_attrs"]


def _is_pure(op: ir.Operation) -> bool:
    return op.name.split(".")[0] in _PURE_DIALECTS and op.name != "nn.fused"


def _elements(values) -> int:
    """The number of elements of the tensors among `values`."""
    return sum(math.prod(ir.RankedTensorType(v.type).shape) for v in values
               if isinstance(v.type, ir.RankedTensorType))


def _nested_operands(op: ir.Operation) -> list[tuple[ir.Operation, int, ir.Value]]:
    """(user, operand number, value) for each operand of `op` and of the
    ops in its regions that is defined outside `op`."""
    inside: set[ir.Value] = set()
    found = []

    def visit(inner):
        inner = inner.operation
        for region in inner.regions:
            for block in region.blocks:
                inside.update(block.arguments)
        for index, value in enumerate(inner.operands):
            found.append((inner, index, value))
        inside.update(inner.results)
        return ir.WalkResult.ADVANCE

    op.walk(visit, ir.WalkOrder.PRE_ORDER)
    return [(user, index, value) for user, index, value in found if value not in inside]


def _returns(function: ir.Operation) -> ir.Operation:
    terminator = function.regions[0].blocks[0].operations[
        len(function.regions[0].blocks[0].operations) - 1].operation
    if terminator.name != "func.return":
        raise PassFailure(f"@{_symbol(function)} does not end with func.return", function.location)
    return terminator


def _replace_return(terminator: ir.Operation, values: list[ir.Value]) -> None:
    with ir.InsertionPoint(terminator), terminator.location:
        func.ReturnOp(values)
    terminator.erase()


def _initializer_name(module: ir.Operation, name: str) -> str:
    taken = {_symbol(op.operation) for op in module.regions[0].blocks[0].operations
             if "sym_name" in op.operation.attributes}
    candidate, counter = f"{name}_init", 1
    while candidate in taken:
        candidate, counter = f"{name}_init_{counter}", counter + 1
    return candidate


def _start(module: ir.Operation, function: ir.Operation) -> ir.Operation:
    """Makes the initialiser of `function`, whose bound arguments it
    returns as they are; the function takes them last, as prepared
    weights."""
    block = function.regions[0].blocks[0]
    attributes = argument_attributes(function)
    bound = [i for i, a in enumerate(attributes) if BOUND in a]
    name = _initializer_name(module, _symbol(function))
    with ir.InsertionPoint(function), function.location:
        initializer = func.FuncOp(name, ([block.arguments[i].type for i in bound],
                                         [block.arguments[i].type for i in bound]))
        entry = initializer.add_entry_block()
        with ir.InsertionPoint(entry):
            func.ReturnOp(list(entry.arguments))
    initializer = initializer.operation
    _set_signature(initializer, [block.arguments[i].type for i in bound],
                   [attributes[i] for i in bound])
    for index in bound:
        argument = block.arguments[index]
        prepared = block.add_argument(argument.type, argument.location)
        argument.replace_all_uses_with(prepared)
        attributes.append({PREPARED: ir.UnitAttr.get()})
    for index in reversed(bound):
        block.erase_argument(index)
        del attributes[index]
    results = list(ir.FunctionType(ir.TypeAttr(function.attributes["function_type"]).value).results)
    _set_signature(function, results, attributes)
    function.attributes[INITIALIZER] = ir.FlatSymbolRefAttr.get(name)
    return initializer


def _hoist(function: ir.Operation, initializer: ir.Operation) -> None:
    """Moves the ops of `function` that depend on prepared weights alone
    into `initializer`, and changes both signatures in step."""
    block = function.regions[0].blocks[0]
    attributes = argument_attributes(function)
    prepared = [i for i, a in enumerate(attributes) if PREPARED in a]
    init_return = _returns(initializer)
    returned = list(init_return.operands)
    if len(returned) != len(prepared):
        raise PassFailure(f"@{_symbol(function)} takes {len(prepared)} prepared weights but its "
                          f"initialiser returns {len(returned)}", function.location)
    # The value in the initialiser of each prepared argument and moved result.
    in_initializer: dict[ir.Value, ir.Value] = {
        block.arguments[i]: value for i, value in zip(prepared, returned)}
    static: set[ir.Value] = set(in_initializer)   # computable in the initialiser
    derived: set[ir.Value] = set(in_initializer)  # and depending on a bound argument
    moved: list[ir.Operation] = []
    for op in list(block.operations):
        op = op.operation
        if op.name == "func.return" or not _is_pure(op):
            continue
        outside = [value for _, _, value in _nested_operands(op)]
        if not all(v in static for v in outside):
            continue
        sources = [v for v in dict.fromkeys(outside) if v in derived]
        if sources and _elements(op.results) > GROWTH * _elements(sources):
            continue
        static.update(op.results)
        if sources:
            derived.update(op.results)
            moved.append(op)
    if not moved:
        return

    moved_set = set(moved)
    copies: dict[ir.Value, ir.Value] = {}

    def available(value: ir.Value) -> ir.Value:
        """`value` in the initialiser: moved results stay themselves,
        others (constants, empty tensors) are copied before its return."""
        if value in in_initializer:
            return in_initializer[value]
        owner = value.owner
        if isinstance(owner, ir.Block) or owner.operation in moved_set:
            return value
        if value not in copies:
            source = owner.operation
            for _, _, operand in _nested_operands(source):
                available(operand)
            copy = source.clone(ir.InsertionPoint(init_return))
            _remap(copy, copies)
            _leave_group(copy)
            copies.update(zip(source.results, copy.results))
        return copies[value]

    # Moved results that the function still uses become prepared weights.
    frontier = [r for op in moved for r in op.results
                if any(not _inside_moved(use.owner.operation, moved_set) for use in r.uses)]
    exceptions = _users_in(moved_set)
    for result in frontier:
        argument = block.add_argument(result.type, result.location)
        result.replace_all_uses_except(argument, exceptions)
    for op in moved:
        for _, _, value in _nested_operands(op):
            available(value)
        op.move_before(init_return)
    for op in moved:
        _remap(op, {**in_initializer, **copies})
        _leave_group(op)
    for source in dict.fromkeys(v.owner.operation for v in copies):
        if not any(list(r.uses) for r in source.results):
            source.erase()

    kept = [i for i in prepared if list(block.arguments[i].uses)]
    init_values = [in_initializer[block.arguments[i]] for i in kept] + frontier
    _replace_return(init_return, init_values)
    _set_signature(initializer, [v.type for v in init_values], argument_attributes(initializer))
    for index in reversed(prepared):
        if index not in kept:
            block.erase_argument(index)
            del attributes[index]
    attributes += [{PREPARED: ir.UnitAttr.get()} for _ in frontier]
    results = list(ir.FunctionType(ir.TypeAttr(function.attributes["function_type"]).value).results)
    _set_signature(function, results, attributes)


def _inside_moved(user: ir.Operation, moved: set[ir.Operation]) -> bool:
    """Whether `user` is a moved op or nested in one."""
    while user is not None and user.name != "func.func":
        if user in moved:
            return True
        user = user.parent.operation if user.parent is not None else None
    return False


def _leave_group(op: ir.Operation) -> None:
    for mark in FUSION_MARKS:
        if mark in op.attributes:
            del op.attributes[mark]


def _users_in(moved: set[ir.Operation]):
    """The ops (moved ones and those nested in them) whose uses of a moved
    result stay."""
    users = []
    for op in moved:
        op.walk(lambda inner: users.append(inner.operation) or ir.WalkResult.ADVANCE,
                ir.WalkOrder.PRE_ORDER)
    return users


def _remap(op: ir.Operation, mapping: dict[ir.Value, ir.Value]) -> None:
    """Replaces, in `op` and its regions, each operand found in `mapping`."""
    for user, index, value in _nested_operands(op):
        if value in mapping:
            user.operands[index] = mapping[value]


@register_pass
@dataclass
class FuncSplitInitializer(Pass):
    """Moves what a public function computes from its bound arguments (lamina.bound) alone into an initialiser function that returns the prepared weights."""

    argument = "func-split-initializer"

    def run(self, op: ir.Operation) -> None:
        functions = {}
        for inner in op.regions[0].blocks[0].operations:
            inner = inner.operation
            if inner.name == "func.func" and inner.regions[0].blocks:
                functions[_symbol(inner)] = inner
        initializers = {ir.FlatSymbolRefAttr(f.attributes[INITIALIZER]).value
                        for f in functions.values() if INITIALIZER in f.attributes}
        for function in list(functions.values()):
            if _symbol(function) in initializers:
                continue
            if INITIALIZER in function.attributes:
                name = ir.FlatSymbolRefAttr(function.attributes[INITIALIZER]).value
                if name not in functions:
                    raise PassFailure(f"@{_symbol(function)} names initialiser @{name}, which "
                                      "the module does not define", function.location)
                initializer = functions[name]
            elif any(BOUND in a for a in argument_attributes(function)):
                initializer = _start(op, function)
            else:
                continue
            _hoist(function, initializer)
