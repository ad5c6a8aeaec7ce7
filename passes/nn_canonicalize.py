"""--nn-canonicalize: local simplifications of nn ops.

Rewrites, each a pattern for upstream's greedy driver:

* `transpose(transpose(x))` -> one transpose with the composed permutation
  (or `x` when the composition is the identity);
* `reshape(reshape(x))` -> one reshape;
* identity `transpose`, `reshape`, `broadcast_to` and `cast` -> `x`;
* `x * 1`, `1 * x`, `x + 0`, `0 + x`, `x - 0` -> `x`, where the constant is
  a splat `arith.constant` and the result type equals `x`'s (no broadcast
  hides behind the constant; signed zeros are not preserved, as in ML
  frameworks);
* `relu(relu(x))` -> `relu(x)`;
* nn ops whose results are unused are erased (nn ops have no side effects,
  which IRDL in LLVM 22 cannot declare, so upstream's DCE keeps them).

Expects verified nn IR. Guarantees: the result is verified nn IR computing
the same values; no op is added except the composed transpose and reshape.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mlir import ir, rewrite

from lamina.dialects import nn
from lamina.pass_registry import Pass, register_pass


def _defining(value: ir.Value, op_name: str) -> ir.Operation | None:
    """The op defining `value` if it is an `op_name`."""
    owner = value.owner
    if isinstance(owner, ir.Block):
        return None
    owner = owner.operation
    return owner if owner.name == op_name else None


def _splat_value(value: ir.Value) -> float | None:
    """The element of a splat `arith.constant` tensor, else None."""
    constant = _defining(value, "arith.constant")
    if constant is None:
        return None
    attr = constant.attributes["value"]
    if not isinstance(attr, ir.DenseElementsAttr) or not attr.is_splat:
        return None
    element = attr.get_splat_value()
    if isinstance(element, ir.FloatAttr):
        return element.value
    if isinstance(element, ir.IntegerAttr):
        return float(element.value)
    return None


def _replace(rewriter, op, value: ir.Value) -> None:
    rewriter.replace_op(op, [value])


# Each pattern returns None when it rewrote `op`, True when it did not match
# (the convention of upstream's Python pattern callbacks).


def fold_transpose(op, rewriter):
    perm = tuple(ir.DenseI64ArrayAttr(op.attributes["perm"]))
    x = op.operands[0]
    if perm == tuple(range(len(perm))):
        return _replace(rewriter, op, x)
    inner = _defining(x, "nn.transpose")
    if inner is None:
        return True
    inner_perm = tuple(ir.DenseI64ArrayAttr(inner.attributes["perm"]))
    composed = tuple(inner_perm[p] for p in perm)
    source = inner.operands[0]
    if composed == tuple(range(len(composed))):
        return _replace(rewriter, op, source)
    with rewriter.ip:
        _replace(rewriter, op, nn.TransposeOp.build(source, perm=composed, loc=op.location))


def fold_reshape(op, rewriter):
    x = op.operands[0]
    if x.type == op.results[0].type:
        return _replace(rewriter, op, x)
    inner = _defining(x, "nn.reshape")
    if inner is None:
        return True
    source = inner.operands[0]
    if source.type == op.results[0].type:
        return _replace(rewriter, op, source)
    with rewriter.ip:
        _replace(rewriter, op, nn.ReshapeOp.build(
            source, result_type=nn.TensorType.from_mlir(op.results[0].type, dynamic=True),
            loc=op.location))


def fold_identity(op, rewriter):
    """broadcast_to and cast to the operand's own type."""
    if op.operands[0].type != op.results[0].type:
        return True
    return _replace(rewriter, op, op.operands[0])


def _fold_neutral(op, rewriter, neutral: float, commutative: bool):
    result_type = op.results[0].type
    lhs, rhs = op.operands
    candidates = [(lhs, rhs)] + ([(rhs, lhs)] if commutative else [])
    for kept, constant in candidates:
        if kept.type == result_type and _splat_value(constant) == neutral:
            return _replace(rewriter, op, kept)
    return True


def fold_mul_one(op, rewriter):
    return _fold_neutral(op, rewriter, 1.0, commutative=True)


def fold_add_zero(op, rewriter):
    return _fold_neutral(op, rewriter, 0.0, commutative=True)


def fold_sub_zero(op, rewriter):
    return _fold_neutral(op, rewriter, 0.0, commutative=False)


def fold_relu_relu(op, rewriter):
    if _defining(op.operands[0], "nn.relu") is None:
        return True
    return _replace(rewriter, op, op.operands[0])


def erase_unused(op, rewriter):
    if any(len(list(result.uses)) for result in op.results):
        return True
    rewriter.erase_op(op.operation)


PATTERNS = {
    "nn.transpose": fold_transpose,
    "nn.reshape": fold_reshape,
    "nn.broadcast_to": fold_identity,
    "nn.cast": fold_identity,
    "nn.mul": fold_mul_one,
    "nn.add": fold_add_zero,
    "nn.sub": fold_sub_zero,
    "nn.relu": fold_relu_relu,
}


@register_pass
@dataclass
class NNCanonicalize(Pass):
    """Simplifies nn ops: composes transposes and reshapes, removes identity ops, x*1, x+0, x-0, relu(relu(x)) and unused nn ops."""

    argument = "nn-canonicalize"
    anchor = "func.func"

    max_iterations: int = field(default=10, metadata={"minimum": 1})
    remove_unused: bool = True

    def run(self, op: ir.Operation) -> None:
        patterns = rewrite.RewritePatternSet(op.context)
        for name, pattern in PATTERNS.items():
            patterns.add(name, pattern, benefit=2)
        if self.remove_unused:
            for mnemonic in nn.NN.ops:
                patterns.add(f"nn.{mnemonic}", erase_unused, benefit=3)
        config = rewrite.GreedyRewriteConfig()
        config.max_iterations = self.max_iterations
        rewrite.apply_patterns_and_fold_greedily(op, patterns.freeze(), config)
