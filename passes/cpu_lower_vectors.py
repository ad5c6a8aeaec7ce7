"""--cpu-lower-vectors: the vector ops of scheduled code lowered the way the
CPU runs them fastest.

A transform script (built with the transform dialect's Python builders)
applies upstream's vector lowering patterns to every function:
`vector.contract` becomes `vector.outerproduct`s and those become
`vector.fma`s of a broadcast row element and a column vector (the
register tile's FMAs, instead of LLVM's dot-product lowering);
`vector.multi_reduction` along the innermost dim becomes
`vector.reduction` (one horizontal reduction per row, not a transpose);
n-D transfers become 1-D ones, and leading unit dims are dropped.

Expects vector code on memrefs (after bufferization). Guarantees: the same
computation; no `vector.contract`, `vector.outerproduct` or
`vector.multi_reduction` remains. Canonicalizing after this pass would
fold the register tile's `vector.insert` chains into scalar
`vector.from_elements`, so the CPU pipeline runs none before LLVM.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from lamina.pass_registry import Pass, PassFailure, register_pass


def _script(context: ir.Context) -> ir.Module:
    from mlir.dialects import transform
    from mlir.dialects.transform import structured
    from mlir.dialects.transform import vector as v

    with context, ir.Location.unknown():
        module = ir.Module.create()
        module.operation.attributes["transform.with_named_sequence"] = ir.UnitAttr.get()
        any_op = transform.AnyOpType.get()
        with ir.InsertionPoint(module.body):
            main = transform.NamedSequenceOp("__transform_main", [any_op], [],
                                             arg_attrs=[{"transform.readonly": ir.UnitAttr.get()}])
            with ir.InsertionPoint(main.body):
                funcs = structured.MatchOp.match_op_names(main.bodyTarget, ["func.func"]).result
                for steps in (
                    [lambda: v.ApplyLowerContractionPatternsOp(
                        lowering_strategy=v.VectorContractLowering.OuterProduct),
                     v.ApplyTransferPermutationPatternsOp,
                     v.ApplyLowerOuterProductPatternsOp,
                     lambda: v.ApplyLowerMultiReductionPatternsOp(
                        lowering_strategy=v.VectorMultiReductionLowering.InnerReduction)],
                    [lambda: v.ApplyLowerTransferPatternsOp(max_transfer_rank=1),
                     v.ApplyCastAwayVectorLeadingOneDimPatternsOp],
                ):
                    apply = transform.ApplyPatternsOp(funcs)
                    with ir.InsertionPoint(apply.patterns):
                        for step in steps:
                            step()
                transform.YieldOp()
    return module


@register_pass
@dataclass
class CPULowerVectors(Pass):
    """Lowers contractions to FMAs of outer products, multi-reductions to horizontal reductions and n-D transfers to 1-D ones."""

    argument = "cpu-lower-vectors"
    verifies_lamina_ops = False  # no op of Lamina's dialects at its stage

    def run(self, op: ir.Operation) -> None:
        from mlir.dialects.transform import interpreter

        script = _script(op.context)
        try:
            interpreter.apply_named_sequence(op, script.body.operations[0], script)
        except ir.MLIRError as error:
            raise PassFailure(f"lowering vector ops failed: {error}") from None
