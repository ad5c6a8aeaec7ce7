"""A pass plugin: --test-fold-double-neg rewrites nn.neg(nn.neg(x)) to x."""

from dataclasses import dataclass

from mlir import ir, rewrite

from lamina.pass_registry import Pass, register_pass


def fold_double_neg(op, rewriter):
    inner = op.operands[0].owner
    if isinstance(inner, ir.Block) or inner.operation.name != "nn.neg":
        return True  # no match
    rewriter.replace_op(op, [inner.operation.operands[0]])
    if not list(inner.results[0].uses):
        rewriter.erase_op(inner.operation)


@register_pass
@dataclass
class TestFoldDoubleNeg(Pass):
    """Folds nn.neg(nn.neg(x)) to x (a plugin's pass)."""

    argument = "test-fold-double-neg"
    anchor = "func.func"

    def run(self, op):
        patterns = rewrite.RewritePatternSet(op.context)
        patterns.add("nn.neg", fold_double_neg)
        rewrite.apply_patterns_and_fold_greedily(op, patterns.freeze())
