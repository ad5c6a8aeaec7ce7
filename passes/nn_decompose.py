"""--nn-decompose: composite nn ops rebuilt from primitive nn ops, so that
fusion sees inside them.

Every op of the composite category (`nn.CompositeOp`: softmax, log_softmax,
layer_norm, rms_norm, gelu, silu, attention, and a user's composite op) is
replaced by what its `decompose()` builds: elementwise ops, reductions with
`keepdims` (so that row statistics broadcast back over their rows) and
matmuls. The decompositions compute what the references compute: softmax
subtracts the row maximum before `exp`, layer_norm takes two passes (the
mean, then the mean of squared deviations), and f16/bf16 operands are cast
to f32 first and the result rounded once. Scalars are rank-0 splat
`arith.constant` tensors.

`keep-attention` (on by default) leaves `nn.attention` whole: its lowering
already computes the scores, the softmax and the normalisation after the
product with `v` in fused generics, and a dedicated attention lowering
(online softmax, tiled over the keys) wants the op, not its parts. With
`keep-attention=false` attention becomes a matmul with the transposed keys
and its epilogue (scale, mask, causal -inf from a constant i1 mask), a
softmax's row statistics, and a matmul whose result is divided by the row
sums.

A composite op whose class has no decomposition is left whole, as are ops
that are not composites. Decompositions that build composites are
decomposed in turn.

Expects verified nn IR. Guarantees: verified nn IR computing the same
values, with no composite op left (except attention with `keep-attention`
and composites without a decomposition).
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from lamina.dialects import nn
from lamina.dialects.opdef import lookup_op
from lamina.pass_registry import Pass, PassFailure, register_pass
from lamina.types import VerifyError

# A decomposition that keeps building composites is cut off after this many rounds.
_MAX_ROUNDS = 8


def _decomposable(operation: ir.Operation, keep_attention: bool) -> bool:
    op_class = lookup_op(operation.name)
    if op_class is None or not issubclass(op_class, nn.CompositeOp):
        return False
    if keep_attention and issubclass(op_class, nn.AttentionOp):
        return False
    return op_class.decompose is not nn.CompositeOp.decompose


def decompose_op(operation: ir.Operation) -> None:
    """Replaces one composite op by its decomposition."""
    view = lookup_op(operation.name).from_operation(operation)
    operands = [view.operand(decl.name) for decl in view.operand_decls]
    try:
        with operation.context, operation.location, ir.InsertionPoint(operation):
            values = view.decompose(*operands)
    except VerifyError as error:
        raise PassFailure(f"the decomposition of '{operation.name}' is invalid: {error}",
                          operation.location) from None
    values = [values] if isinstance(values, ir.Value) else list(values)
    for result, value in zip(operation.results, values, strict=True):
        result.replace_all_uses_with(value)
    operation.erase()


@register_pass
@dataclass
class NNDecompose(Pass):
    """Rebuilds composite nn ops (softmax, log_softmax, layer_norm, rms_norm, gelu, silu, attention) from primitive nn ops, so that fusion sees inside them."""

    argument = "nn-decompose"
    anchor = "func.func"

    keep_attention: bool = True

    def run(self, op: ir.Operation) -> None:
        for _ in range(_MAX_ROUNDS):
            found = []

            def collect(operation):
                if _decomposable(operation, self.keep_attention):
                    found.append(operation)
                return ir.WalkResult.ADVANCE

            op.walk(collect, ir.WalkOrder.POST_ORDER)
            if not found:
                return
            for operation in found:
                decompose_op(operation)
        raise PassFailure(f"composite ops are still left after {_MAX_ROUNDS} rounds of "
                          "decomposition: a decomposition builds its own op", op.location)
