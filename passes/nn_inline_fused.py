"""--nn-inline-fused: fusion groups inlined into their callers, each op
marked with its group.

`convert-nn-to-linalg` lowers an `nn.fused` op to a `func.call` of the
group's body carrying `lamina.fusion_kind`, so that the upstream cleanups
and elementwise fusion that follow it act within each group and never
across groups. This pass then inlines every such call (any other call is
left alone) and erases a body once no call of it is left; a body called
more than once is copied for each call, and each copy is a group of its own
(`fusion_3`, `fusion_3_1`, ...).

Markers (the contract with the schedules that tile and fuse each group into
one loop nest): every op that the body held at its top level, except
constants, gets two discardable attributes:

* `lamina.fusion_group = "fusion_0"`: its group (the body's name); the ops
  of one group, and only they, carry the same name;
* `lamina.fusion_kind = "contraction"`: the group's kind (`elementwise`,
  `reduction`, `contraction` or `convolution`).

Ops without markers were not fused with anything. The marked ops of a
group are consecutive in their block; the results of the group that the
rest of the program reads are results of marked ops. Upstream rewrites that
replace an op (`linalg-fuse-elementwise-ops`, generalisation of named ops)
may drop its discardable attributes: run them before this pass, or carry
the markers over.

Expects IR where calls marked with `lamina.fusion_kind` name functions of
the module with one block. Guarantees: the same computation with those
calls inlined and their bodies gone.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from lamina.dialects.nn import FUSION_GROUP_ATTRIBUTE as FUSION_GROUP
from lamina.dialects.nn import FUSION_KIND_ATTRIBUTE as FUSION_KIND
from lamina.pass_registry import Pass, PassFailure, register_pass


def _fusion_calls(module: ir.Operation) -> list[ir.Operation]:
    calls = []

    def visit(op):
        if op.name == "func.call" and FUSION_KIND in op.attributes:
            calls.append(op.operation)
        return ir.WalkResult.ADVANCE

    module.walk(visit, ir.WalkOrder.PRE_ORDER)
    return calls


def inline_call(call: ir.Operation, body: ir.Operation, group: str, consume: bool) -> None:
    """Inlines `body` at `call`, marking its ops as the group `group`;
    `body` itself is consumed when `consume`, else a copy of it is."""
    markers = {FUSION_GROUP: ir.StringAttr.get(group, call.context),
               FUSION_KIND: call.attributes[FUSION_KIND]}
    function = body if consume else body.clone(ip=ir.InsertionPoint.after(body))
    block = function.regions[0].blocks[0]
    for argument, value in zip(block.arguments, call.operands):
        argument.replace_all_uses_with(value)
    operations = [op.operation for op in block.operations]
    terminator = operations.pop()
    for op in operations:
        op.move_before(call)
        if op.name != "arith.constant":
            for key, value in markers.items():
                op.attributes[key] = value
    for result, value in zip(call.results, terminator.operands):
        result.replace_all_uses_with(value)
    call.erase()
    function.erase()


@register_pass
@dataclass
class NNInlineFused(Pass):
    """Inlines the bodies of fusion groups (calls marked lamina.fusion_kind) and marks their ops with lamina.fusion_group and lamina.fusion_kind."""

    argument = "nn-inline-fused"
    anchor = "builtin.module"

    def run(self, op: ir.Operation) -> None:
        calls = _fusion_calls(op)
        symbols = ir.SymbolTable(op)
        symbols_taken = {ir.StringAttr(f.operation.attributes["sym_name"]).value
                         for f in op.regions[0].blocks[0].operations
                         if "sym_name" in f.operation.attributes}
        groups: set[str] = set()
        referred = _other_uses(op)
        remaining: dict[str, int] = {}
        for call in calls:
            name = ir.FlatSymbolRefAttr(call.attributes["callee"]).value
            remaining[name] = remaining.get(name, 0) + 1
        for call in calls:
            name = ir.FlatSymbolRefAttr(call.attributes["callee"]).value
            try:
                body = symbols[name].operation
            except KeyError:
                raise PassFailure(f"fusion group body @{name} is not in the module",
                                  call.location) from None
            if body.name != "func.func" or len(body.regions[0].blocks) != 1:
                raise PassFailure(f"fusion group body @{name} is not a function with one block",
                                  call.location)
            remaining[name] -= 1
            group, copy = name, 0
            while group in groups or (copy and group in symbols_taken):
                copy += 1
                group = f"{name}_{copy}"
            groups.add(group)
            inline_call(call, body, group,
                        consume=remaining[name] == 0 and name not in referred)


def _other_uses(module: ir.Operation) -> set[str]:
    """The symbols that something other than a marked call refers to.
    Inlining moves and copies ops that refer to symbols but adds no new
    name, so the set found before it holds throughout."""
    found: set[str] = set()

    def visit(op):
        if op.name == "func.call" and FUSION_KIND in op.attributes:
            return ir.WalkResult.ADVANCE
        for attribute in op.attributes:
            value = op.attributes[attribute]
            if isinstance(value, ir.FlatSymbolRefAttr):
                found.add(ir.FlatSymbolRefAttr(value).value)
        return ir.WalkResult.ADVANCE

    module.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found
