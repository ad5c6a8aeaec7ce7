"""--cpu-outline-fusion-groups: groups that are the same computation up
to the values of their constants become one private function, called
where each of them was.

A model repeats its blocks: a transformer's layers, a ResNet's
convolutions of one shape. After `nn-inline-fused` each repetition is a
group of marked ops of its own, which the schedules, the transform
interpreter and LLVM then compile again and again. This pass outlines the
ops marked with one `lamina.fusion_group`, and each linalg op or loop no
group holds (grouped as `cpu-schedule` groups them: an op with the fills
that initialise it, a loop holding linalg ops), into a function (named
like the group) whose arguments are the values the group reads from
outside and whose results are the values the rest of the program reads
from it:

* the tensor constants it reads that are not splats (weights, biases)
  become arguments, so that the function does not hold their values;
* scalar and splat constants and empty tensors it reads are copied into
  the function (they are part of the computation, not of its data);
* everything else it reads (arguments, results of other ops) is an
  argument.

The function's ops keep their markers (renamed to the function's name),
so that `cpu-schedule` schedules the group inside it exactly as it
scheduled the group inline. Groups whose functions print the same (same
ops, attributes, types and copied constants, once named alike) are one
function, called once per group: it is scheduled and compiled once. A
group that no other is the same as is put back where it was. The
functions follow the function they were outlined from.

Groups are left inline in a module whose functions have bound arguments
(`lamina.bound`: `func-split-initializer` moves their weights' packing out
of the groups after the schedules run), and a group is left inline where
the program reads one of its results before its last op or one of its
results has '?' dims.

Expects linalg on tensors with fusion groups marked by `nn-inline-fused`
(the marked ops of a group consecutive in their block, constants between
them). Guarantees: the same computation, each repeated group's ops in a
private function of one block, called once per group it stood for.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import func

from lamina.dialects.nn import FUSION_GROUP_ATTRIBUTE as FUSION_GROUP
from lamina.pass_registry import Pass, register_pass
from lamina.passes.func_split_initializer import BOUND, argument_attributes
from lamina.schedules.analysis import function_groups, loop_body_groups

# The name the markers of a function being built carry while it is
# compared with the functions outlined before it.
_PENDING = "__lamina_pending_group"


def _group_ops(function: ir.Operation) -> dict[str, list[ir.Operation]]:
    """The top-level ops of `function` by fusion group, in program order."""
    groups: dict[str, list[ir.Operation]] = {}
    for op in function.regions[0].blocks[0].operations:
        op = op.operation
        if FUSION_GROUP in op.attributes:
            groups.setdefault(ir.StringAttr(op.attributes[FUSION_GROUP]).value, []).append(op)
    return groups


def _operation(op) -> ir.Operation | None:
    return None if op is None else op.operation


def _inside(op: ir.Operation, ancestors: set) -> bool:
    """True when `op` is one of `ancestors` or nested in one."""
    op = _operation(op)
    while op is not None:
        if op in ancestors:
            return True
        op = _operation(op.parent)
    return False


def _is_copied(value: ir.Value) -> bool:
    """True for a value the outlined function makes itself: an empty
    tensor, a scalar constant or a splat tensor constant."""
    if not isinstance(value.owner, ir.Operation) and not isinstance(value.owner, ir.OpView):
        return False
    op = value.owner.operation
    if op.name == "tensor.empty":
        return len(op.operands) == 0
    if op.name != "arith.constant":
        return False
    attribute = op.attributes["value"]
    return not isinstance(attribute, ir.DenseElementsAttr) or attribute.is_splat


def _nested_operands(op: ir.Operation):
    """(op, index, value) for every operand of `op` and of the ops nested in it."""
    found = []

    def visit(nested):
        nested = nested.operation
        for index, value in enumerate(nested.operands):
            found.append((nested, index, value))
        return ir.WalkResult.ADVANCE

    op.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found


def _set_markers(function: ir.Operation, name: str) -> None:
    marker = ir.StringAttr.get(name, function.context)
    for op in function.regions[0].blocks[0].operations:
        op = op.operation
        if FUSION_GROUP in op.attributes:
            op.attributes[FUSION_GROUP] = marker


@register_pass
@dataclass
class CPUOutlineFusionGroups(Pass):
    """Outlines groups that are the same up to their constants' values into one private function called once per group."""

    argument = "cpu-outline-fusion-groups"
    anchor = "builtin.module"
    verifies_lamina_ops = False  # linalg at its stage

    def run(self, module: ir.Operation) -> None:
        functions = [op.operation for op in module.regions[0].blocks[0].operations
                     if op.operation.name == "func.func" and op.operation.regions[0].blocks]
        if any(BOUND in attributes for f in functions for attributes in argument_attributes(f)):
            return
        taken = {ir.StringAttr(op.operation.attributes["sym_name"]).value
                 for op in module.regions[0].blocks[0].operations
                 if "sym_name" in op.operation.attributes}
        # Each group's function is built from copies of its ops and
        # printed; only groups whose function another group's prints the
        # same as are outlined, so the others are left exactly as they were.
        found: list[tuple[ir.Operation, str, list[ir.Operation], str]] = []
        for function in functions:
            for group, ops in _groups(function):
                interface = _interface(function, ops)
                if interface is None:
                    continue
                body = _build(function, ops, *interface, move=False)
                found.append((function, group, ops, _key(body)))
                body.erase()
        counts: dict[str, int] = {}
        for _, _, _, key in found:
            counts[key] = counts.get(key, 0) + 1
        outlined: dict[str, str] = {}  # printed function -> its name
        place: dict[ir.Operation, ir.Operation] = {}  # function -> the last one after it
        for function, group, ops, key in found:
            if counts[key] < 2:
                continue
            interface = _interface(function, ops)
            if interface is None:
                continue
            arguments, copied, results = interface
            name = outlined.get(key)
            if name is not None:
                _call(function, ops, arguments, results, name)
                for op in reversed(ops):
                    op.erase()
                continue
            name, copy = group, 0
            while name in taken:
                copy += 1
                name = f"{group}_{copy}"
            taken.add(name)
            outlined[key] = name
            _call(function, ops, arguments, results, name)
            body = _build(function, ops, arguments, copied, results, move=True,
                          after=place.get(function, function))
            body.attributes["sym_name"] = ir.StringAttr.get(name, body.context)
            _set_markers(body, name)
            place[function] = body


def _groups(function: ir.Operation) -> list[tuple[str, list[ir.Operation]]]:
    """The groups of `function`'s top-level ops, named: its fusion groups,
    and the ops no fusion group holds as cpu-schedule groups them (each
    linalg op with its fills, each loop holding linalg ops)."""
    name = ir.StringAttr(function.attributes["sym_name"]).value
    fused = _group_ops(function)
    groups = list(fused.items())
    for group in function_groups(function):
        if group.name not in fused:
            groups.append((f"{name}_{group.name}", [linalg.op.operation for linalg in group.ops]))
    for group in loop_body_groups(function):
        groups.append((f"{name}_{group.name}", [group.loop.operation]))
    return groups


def _interface(function: ir.Operation, ops: list[ir.Operation]):
    """What a group reads from outside (arguments, and values the function
    copies in), in order of first use, and what the rest of the program
    reads from it; None when the program reads one of its results before
    its last op, or one of them has '?' dims."""
    members = set(ops)
    last = ops[-1]
    arguments: list[ir.Value] = []
    copied: list[ir.Value] = []
    for op in ops:
        for _, _, value in _nested_operands(op):
            owner = value.owner
            if isinstance(owner, ir.Block):
                if _inside(owner.owner, members):
                    continue
            elif _inside(owner, members):
                continue
            into = copied if _is_copied(value) else arguments
            if value not in into:
                into.append(value)
    results: list[ir.Value] = []
    for op in ops:
        for result in op.results:
            for use in result.uses:
                user = _operation(use.owner)
                if _inside(user, members):
                    continue
                top = user
                while _operation(top.parent) != function:
                    top = _operation(top.parent)
                if not last.is_before_in_block(top):
                    return None
                if result not in results:
                    results.append(result)
    # Bufferization cannot make a '?'-shaped result an out-parameter.
    if any(isinstance(r.type, ir.ShapedType) and not ir.ShapedType(r.type).has_static_shape
           for r in results):
        return None
    return arguments, copied, results


def _build(function: ir.Operation, ops: list[ir.Operation], arguments: list[ir.Value],
           copied: list[ir.Value], results: list[ir.Value], move: bool,
           after: ir.Operation | None = None) -> ir.Operation:
    """A private function of the group's ops (moved there, or copies of
    them), placed after `after` (default: `function`)."""
    with function.context, ops[0].location:
        function_type = ir.FunctionType.get([v.type for v in arguments],
                                            [v.type for v in results])
        with ir.InsertionPoint.after(after or function):
            body = func.FuncOp(_PENDING, function_type, visibility="private")
        block = body.add_entry_block()
        mapping = dict(zip(arguments, block.arguments))
        with ir.InsertionPoint(block):
            for value in copied:
                mapping[value] = value.owner.operation.clone().results[0]
        members = []
        for op in ops:
            if move:
                block.append(op)
                members.append(op)
            else:
                copy = op.clone(ip=ir.InsertionPoint(block))
                for old, new in zip(op.results, copy.results):
                    mapping[old] = new
                members.append(copy.operation)
        for op in members:
            for user, index, value in _nested_operands(op):
                if value in mapping:
                    user.operands[index] = mapping[value]
        with ir.InsertionPoint(block):
            func.ReturnOp([mapping.get(v, v) for v in results])
        _set_markers(body.operation, _PENDING)
    return body.operation


def _key(body: ir.Operation) -> str:
    """What identifies a group's function: its generic form, unnamed."""
    return body.get_asm(print_generic_op_form=True, enable_debug_info=False,
                        use_local_scope=True)


def _call(function: ir.Operation, ops: list[ir.Operation], arguments: list[ir.Value],
          results: list[ir.Value], name: str) -> None:
    """A call of @name after the group's last op, which the rest of the
    program reads the group's results from."""
    members = set(ops)
    with function.context, ops[0].location:
        call = func.CallOp([v.type for v in results], ir.FlatSymbolRefAttr.get(name), arguments,
                           ip=ir.InsertionPoint.after(ops[-1]))
    for result, replacement in zip(results, call.results):
        for use in list(result.uses):
            user = _operation(use.owner)
            if not _inside(user, members):
                user.operands[use.operand_number] = replacement
