"""--cpu-widen-contractions: f16 and bf16 contractions and convolutions
are computed as f32 ones on the CPU.

Every op whose category is contraction or convolution (`nn.matmul`,
`nn.conv2d`, a plugin's contraction: the pass decides on the category,
not the name) with f16 or bf16 operands and results becomes the same op on
operands widened to f32 (`nn.cast`), its results rounded back to their
type (`nn.cast`). That is what those ops mean already (products
accumulated in f32, rounded once: the nn references compute them so), and
it lets the packed f32 schedule with its FMA register tile serve them: the
bench's bf16 1024^3 matmul took 241 ms as a bf16 contraction and 11 ms
widened, as fast as the f32 one (2 threads), the widening of the operands
being a pass over them. The casts are elementwise: fusion groups the
rounding with the contraction's epilogue.

With `bf16-dot-products` (the CPU target sets it where its model has a
dot product of bf16 pairs, AVX512-BF16's `vdpbf16ps`), bf16 contractions
stay as they are: the contraction schedule packs their operands in pairs
along k and accumulates their products in f32 with that instruction
(lamina.schedules.bf16_dot_product). bf16 convolutions are widened still.

Runs before fusion, in the CPU pipeline only (GPU targets keep f16 and bf16
for the tensor cores). Ops with an operand or result of another element
type (an f32 bias of an f16 matmul, an integer operand) are left alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from lamina.dialects import nn
from lamina.dialects.opdef import lookup_op
from lamina.pass_registry import Pass, register_pass
from lamina.types import TensorType, type_view

LOW_PRECISION = ("f16", "bf16")
WIDENED = (nn.CONTRACTION, nn.CONVOLUTION)


def _widenable(op: ir.Operation, keep_bf16_contractions: bool) -> bool:
    op_class = lookup_op(op.name)
    if op_class is None or nn.fusion_kind(op_class) not in WIDENED:
        return False
    values = list(op.operands) + list(op.results)
    dtypes = set()
    for value in values:
        if not isinstance(value.type, ir.RankedTensorType):
            return False
        dtypes.add(type_view(value.type).dtype)
    if not dtypes <= set(LOW_PRECISION):
        return False
    if keep_bf16_contractions and dtypes == {"bf16"} and nn.fusion_kind(op_class) == nn.CONTRACTION:
        return False
    return bool(op.results)


@register_pass
@dataclass
class CPUWidenContractions(Pass):
    """Computes f16 and bf16 contractions and convolutions as f32 ones on widened operands, their results rounded back (the packed f32 schedules then serve them)."""

    argument = "cpu-widen-contractions"
    bf16_dot_products: bool = False
    """The target computes bf16 contractions with bf16 dot products: they stay bf16."""

    def run(self, module: ir.Operation) -> None:
        found: list[ir.Operation] = []

        def visit(op):
            if _widenable(op.operation, self.bf16_dot_products):
                found.append(op.operation)
            return ir.WalkResult.ADVANCE

        module.walk(visit, ir.WalkOrder.PRE_ORDER)
        for op in found:
            self.widen(op)

    @staticmethod
    def widen(op: ir.Operation) -> None:
        with ir.InsertionPoint(op), op.location:
            operands = [nn.CastOp.build(v, result_type=type_view(v.type).with_dtype("f32"))
                        for v in op.operands]
            result_types = [type_view(r.type).with_dtype("f32").to_mlir() for r in op.results]
            attributes = {name: op.attributes[name] for name in op.attributes}
            wide = ir.Operation.create(op.name, results=result_types, operands=operands,
                                       attributes=attributes)
            for old, new in zip(op.results, wide.results):
                narrow = nn.CastOp.build(new, result_type=type_view(old.type))
                old.replace_all_uses_with(narrow)
        op.erase()
