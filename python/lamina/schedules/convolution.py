"""Convolutions as contractions: before schedules are chosen, each
`linalg.conv_2d_nchw_fchw` on static shapes is rewritten by upstream's
`transform.structured.convert_conv2d_to_img2col` into a gather of its
input windows (`[N, C*KH*KW, OH*OW]`, the img2col tensor) and a
multiply-add generic over it, which the cost model schedules like any
contraction (packed, register-tiled, threads over panels). The new ops
keep the convolution's fusion group, so a bias, an activation or a
residual add that was fused with the convolution stays in its group (and
gets its loop nest, as a matmul's epilogue does).

The gather itself is left to the loops stage (scalar loops over the
img2col matrix) and never tiled: its input's indexing map takes windows
apart with floordiv and mod, and upstream's tiling of it gave wrong
results here (split over threads at rows that are not whole input
channels, or fused into the loops of B's pack by 32 columns), presumably
because what such a tile reads of the input is not the box that tiling
computes for it. Split at whole channels it was exact but measured no
faster (one more parallel region).

Measured on the bench's conv2d (3x3, 64 -> 64 channels, 56x56, 2 threads):
the unscheduled convolution took 140 ms, img2col with the packed
contraction 27-36 ms (NumPy: 48-72 ms), under a load of 5-7 on 2 cores.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import builtin, transform
from mlir.dialects.transform import interpreter, structured

from lamina.schedules.analysis import FUSION_GROUP, FUSION_KIND

CONVOLUTIONS = ("linalg.conv_2d_nchw_fchw",)
_MARK = "lamina.img2col"


def _static(op: ir.Operation) -> bool:
    return all(isinstance(v.type, ir.RankedTensorType) and v.type.has_static_shape
               for v in list(op.operands) + list(op.results))


def _apply(module: ir.Operation, build) -> bool:
    """Runs a transform script whose entry's body `build(root)` writes;
    False when a transform refuses (the payload is left as it was)."""
    with module.context, ir.Location.unknown():
        script = builtin.ModuleOp()
        script.operation.attributes["transform.with_named_sequence"] = ir.UnitAttr.get()
        with ir.InsertionPoint(script.body):
            entry = transform.NamedSequenceOp("__transform_main", [transform.AnyOpType.get()], [],
                                              arg_attrs=[{"transform.readonly": ir.UnitAttr.get()}])
            with ir.InsertionPoint(entry.body):
                build(entry.bodyTarget)
                transform.YieldOp()
        try:
            interpreter.apply_named_sequence(module, entry.operation, script.operation)
        except (ir.MLIRError, ValueError):
            return False
    return True


def convolutions_to_contractions(module: ir.Operation) -> int:
    """Rewrites the module's static NCHW convolutions into img2col and a
    contraction; returns how many. One the rewrite refuses (dilations)
    stays a convolution, which the loops stage makes scalar loops."""
    marked: list[ir.Operation] = []

    def mark(child):
        if child.name in CONVOLUTIONS and _static(child):
            child.attributes[_MARK] = ir.StringAttr.get(str(len(marked)), module.context)
            marked.append(child)
        return ir.WalkResult.ADVANCE

    module.walk(mark, ir.WalkOrder.PRE_ORDER)
    copied = [{key: op.attributes[key] for key in (FUSION_GROUP, FUSION_KIND)
               if key in op.attributes} for op in marked]
    any_op = transform.AnyOpType.get(module.context)

    def rewrite(index: int, attributes: dict):
        def build(root: ir.Value) -> None:
            match = structured.MatchOp(
                any_op, root, op_attrs=ir.DictAttr.get({_MARK: ir.StringAttr.get(str(index))})).result
            rewritten = structured.ConvertConv2DToImg2ColOp(any_op, any_op, match)
            # `transformed` is the reshape of the contraction's result.
            contraction = transform.GetProducerOfOperand(any_op, rewritten.transformed, 0).producer
            for handle in (rewritten.img2col_tensor, contraction, rewritten.transformed):
                for key, value in attributes.items():
                    param = transform.ParamConstantOp(transform.AnyParamType.get(), value)
                    transform.AnnotateOp(handle, key, param=param.param)
        return build

    def canonicalize(root: ir.Value) -> None:
        # The fill of the result folds through the reshape of the
        # contraction's init, so that it initialises the contraction.
        functions = structured.MatchOp.match_op_names(root, ["func.func"]).result
        apply = transform.ApplyPatternsOp(functions)
        with ir.InsertionPoint(apply.patterns):
            transform.ApplyCanonicalizationPatternsOp()

    rewritten = sum(_apply(module, rewrite(index, attributes))
                    for index, attributes in enumerate(copied))

    def unmark(child):
        if _MARK in child.attributes:
            del child.attributes[_MARK]
        return ir.WalkResult.ADVANCE

    module.walk(unmark, ir.WalkOrder.PRE_ORDER)
    if rewritten:
        _apply(module, canonicalize)
    return rewritten
