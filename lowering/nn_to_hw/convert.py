"""The pass: each host function's fusion groups and nn ops, offered in
order to their lowerings in the registry (`TO_HW`)."""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from lamina.dialects import hw, nn
from lamina.dialects.opdef import lookup_op
from lamina.lowering.nn_to_hw.conv import is_conv_group, lower_conv_fused
from lamina.lowering.nn_to_hw.groups import KernelGroup, lower_group
from lamina.lowering.nn_to_hw.kernels import DEFER, TO_HW, GroupNotLowered, HWLowering, is_empty, launch
from lamina.lowering.nn_to_hw.matmul import (KernelBuilder, TileConfig, group_chain, launch_chain,
                                             parse_tiles)
from lamina.lowering.registry import lowering
from lamina.pass_registry import Pass, PassFailure, register_pass
from lamina.targets import nvidia
from lamina.types import VerifyError

@lowering(nn.FusedOp, to="hw")
def lower_fused(op: nn.FusedOp, target: HWLowering) -> list[ir.Operation]:
    """An elementwise or reduction group as one kernel (`GroupKernel`); a
    contraction group as its matmul's kernel with the group's other ops as
    its epilogue (`group_chain`; the pass inlines the others before)."""
    body = op.body_function()
    if op.kind == nn.CONVOLUTION and is_conv_group(op.operation, body, target.chip):
        return lower_conv_fused(op, target)
    if op.kind in (nn.CONTRACTION, nn.CONVOLUTION):
        chain = group_chain(op.operation, body)
        if chain is None:
            return target.leave(op.operation, f"its group @{op.body} is no matmul kernel's")
        if is_empty(chain.last):
            launch(chain.last, [], target.name, ())
            return chain.ops
        builder = KernelBuilder(chain, target.name, target.chip, target.tiles)
        builder.build(target.kernels, chain.matmul.location)
        launch_chain(chain, builder)
        return chain.ops
    try:
        lower_group(KernelGroup.of_fused(op.operation, body), op.operation, target)
    except GroupNotLowered as reason:
        return target.leave(op.operation, f"its group @{op.body} is neither an elementwise "
                            f"nor a row kernel's: {reason}")
    return [op.operation]


def inline_group(fused: ir.Operation, body: ir.Operation) -> None:
    """Replaces an nn.fused op by a copy of its body's ops."""
    block = body.regions[0].blocks[0]
    mapping = {argument: operand for argument, operand in zip(block.arguments, fused.operands)}
    with ir.InsertionPoint(fused):
        for op in block.operations:
            op = op.operation
            if op.name == "func.return":
                for result, value in zip(fused.results, op.operands):
                    result.replace_all_uses_with(mapping.get(value, value))
                continue
            copy = op.clone(ir.InsertionPoint(fused))
            for i, operand in enumerate(copy.operands):
                if operand in mapping:
                    copy.operands[i] = mapping[operand]
            for old, new in zip(op.results, copy.results):
                mapping[old] = new
    fused.erase()


@register_pass
@dataclass
class ConvertNNToHW(Pass):
    """Lowers fusion groups and nn ops to hw kernels and launches: f16, bf16 and f32 matmuls with their epilogues (transposed operands read in place), elementwise groups, row kernels for reductions and their groups (softmax, layer_norm, rms_norm), flash-attention kernels for nn.attention, data movement, pooling, and convolutions with their epilogues (implicit GEMM on tensor cores for f16/bf16, a direct kernel for f32, depthwise and grouped ones)."""

    argument = "convert-nn-to-hw"
    chip: str = "sm_80"
    keep_unconverted: bool = False
    tiles: str = ""
    """BMxBNxBKxSTAGES (e.g. 128x128x64x3): every kernel's tiling instead
    of the cost model's choice (`choose_tiles`); hw-check holds it to the
    architecture's limits."""

    def run(self, module: ir.Operation) -> None:
        nvidia.architecture(self.chip, PassFailure)
        forced = parse_tiles(self.tiles) if self.tiles else None
        body = module.regions[0].blocks[0]
        self.reasons: list[tuple[ir.Operation, str]] = []
        with module.context:
            groups = self.fusion_groups(module)
            names = {nn.FusedOp.from_operation(f).body for f in groups}
            bodies = {ir.StringAttr(f.attributes["sym_name"]).value: f for f in (
                op.operation for op in body.operations) if f.name == "func.func"}
            # Contraction and convolution groups with no kernel of their own
            # are lowered op by op.
            for fused in groups:
                body_function = bodies[nn.FusedOp.from_operation(fused).body]
                if ir.StringAttr(fused.attributes["kind"]).value in (nn.CONTRACTION,
                                                                     nn.CONVOLUTION) \
                        and group_chain(fused, body_function) is None \
                        and not is_conv_group(fused, body_function, self.chip):
                    inline_group(fused, body_function)
            functions = [op for name, op in bodies.items()
                         if not hw.is_kernel(op) and name not in names]
            for function in functions:
                self.convert(function, body, forced)
            # The bodies of the groups lowered (or inlined) are no longer called.
            called = {nn.FusedOp.from_operation(f).body for f in self.fusion_groups(module)}
            for name in names - called:
                bodies[name].erase()
        if not self.keep_unconverted:
            self.report_unconverted(module)

    @staticmethod
    def kernel_kind(op: ir.Operation) -> str:
        """What an op's kernel is named after: the op (`matmul`, `exp`), a
        fusion group's kind (`elementwise`, `reduction`) or the anchor of
        a contraction group (`matmul`)."""
        if op.name != "nn.fused":
            return op.name.split(".", 1)[1]
        view = nn.FusedOp.from_operation(op)
        if view.kind in (nn.CONTRACTION, nn.CONVOLUTION):
            for inner in view.body_function().regions[0].blocks[0].operations:
                op_class = lookup_op(inner.operation.name)
                if op_class is not None and getattr(op_class, "fusion_kind", None) == view.kind:
                    return inner.operation.name.split(".", 1)[1]
        return view.kind

    @staticmethod
    def fusion_groups(module: ir.Operation) -> list[ir.Operation]:
        found = []

        def visit(op):
            if op.name == "nn.fused":
                found.append(op.operation)
            return ir.WalkResult.ADVANCE
        module.walk(visit, ir.WalkOrder.PRE_ORDER)
        return found

    def convert(self, function: ir.Operation, kernels: ir.Block,
                forced: TileConfig | None) -> None:
        """Lowers the ops of a host function that have an nn->hw lowering,
        in order; kernel `N` of op kind `K` in function `F` is `F_K_N`."""
        ops = []

        def visit(op):
            if TO_HW.lookup(lookup_op(op.name)) is not None:
                ops.append(op.operation)
            return ir.WalkResult.ADVANCE
        function.walk(visit, ir.WalkOrder.PRE_ORDER)
        host = ir.StringAttr(function.attributes["sym_name"]).value
        numbers: dict[str, int] = {}
        pending = []
        for op in ops:
            kind = self.kernel_kind(op)
            pending.append((op, f"{host}_{kind}_{numbers.setdefault(kind, 0)}"))
            numbers[kind] += 1
        deferred = []
        while pending or deferred:
            again = not pending
            op, name = (pending or deferred).pop(0)
            op_class = lookup_op(op.name)
            try:
                view = op_class.from_operation(op)
            except VerifyError as error:
                raise PassFailure(f"'{op.name}' op {error}", op.location) from None
            with op.location:
                lowered = TO_HW.lookup(op_class)(view, HWLowering(
                    self.chip, forced, kernels, name, self.reasons, deferred=again))
            if lowered is DEFER:
                if again:
                    raise PassFailure(f"the nn->hw lowering of '{op.name}' deferred it twice",
                                      op.location)
                deferred.append((op, name))
                continue
            lowered = list(lowered or [])
            # Ops the lowering took are offered to no other (compared while
            # they exist: Operations compare equal across their wrappers).
            pending = [(p, n) for p, n in pending if not any(p == done for done in lowered)]
            deferred = [(p, n) for p, n in deferred if not any(p == done for done in lowered)]
            for done in reversed(lowered):
                if any(len(list(result.uses)) for result in done.results):
                    raise PassFailure(f"the nn->hw lowering of '{op.name}' left a use of "
                                      f"'{done.name}', which it lowered", done.location)
                done.erase()

    def report_unconverted(self, module: ir.Operation) -> None:
        left: list[ir.Operation] = []
        # A group left is reported at its nn.fused op, not in its body.
        bodies = {nn.FusedOp.from_operation(f).body for f in self.fusion_groups(module)}

        def visit(op):
            if op.name == "func.func" and ir.StringAttr(op.attributes["sym_name"]).value in bodies:
                return ir.WalkResult.SKIP
            if op.name.startswith("nn."):
                left.append(op.operation)
            return ir.WalkResult.ADVANCE
        module.walk(visit, ir.WalkOrder.PRE_ORDER)
        for op in left:
            reason = next((r for o, r in self.reasons if o == op), None) or (
                "no kernel of the cuda targets covers it")
            message = f"'{op.name}' is not lowered to hw kernels: {reason}"
            if op is left[-1]:
                raise PassFailure(message, op.location)
            op.location.emit_error(message)
