"""--nn-fold-batch-norm: a per-channel scale after a convolution or a
matmul is folded into its weights.

A batch norm in inference becomes `y * scale + shift` per channel when it
is imported (both importers build it so, with `scale` and `shift`
computed from the weight, bias and running statistics). Where `y` is an
`nn.conv2d` used only by the multiplication and `scale` and the convolution's
weight and bias are weights (see below), the product becomes the convolution of the weight scaled per
output channel, `conv2d(x, w * scale[o], b * scale[o])`; the `+ shift`
stays, an addition the convolution's epilogue computes. An `nn.matmul`
whose right operand is a 2-D weight `[K, N]` followed by a multiplication
by a scale per column folds the same way (`x @ (w * scale[n])`), and so
does one followed by the addition of a bias (`x @ (w * scale[n]) + b *
scale[n]`): a linear layer followed by a batch norm over its features.

A weight is a value computed from constants and from arguments the user
binds (`lamina.bound`, or `lamina.prepared` once an initialiser has been
split off: lamina.passes.func_split_initializer) alone. The scaled weight
then costs nothing at run time: `nn-fold-constants` folds it into a new
constant, `func-split-initializer` moves it into the initialiser. A scale
computed from the program's inputs (or from arguments not bound, whose
scaling would be paid at every call over all of the weight) is left as
it is.

Expects verified nn IR. Guarantees: the same values, up to the rounding
of the scaling moved before the sums; no multiplication folded into a
convolution or matmul whose result is used elsewhere, nor into an integer
matmul or convolution (its i8 weights cannot hold the scaled values).
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from lamina.dialects import nn
from lamina.pass_registry import Pass, register_pass
from lamina.passes.func_split_initializer import BOUND, PREPARED, argument_attributes
from lamina.types import TensorType


def weight_values(function: ir.Operation) -> set[ir.Value]:
    """The values of `function` computed from constants and bound or
    prepared arguments alone."""
    block = function.regions[0].blocks[0]
    weights = {argument for argument, attributes in zip(block.arguments,
                                                       argument_attributes(function))
               if BOUND in attributes or PREPARED in attributes}
    for op in block.operations:
        op = op.operation
        if op.name == "arith.constant" or (
                op.name.startswith("nn.") and op.operands and not op.regions
                and all(v in weights for v in op.operands)):
            weights.update(op.results)
    return weights


def _defining(value: ir.Value, name: str) -> ir.Operation | None:
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.operation.name != name:
        return None
    return owner.operation


def _shape(value: ir.Value) -> tuple[int, ...]:
    return tuple(ir.RankedTensorType(value.type).shape)


def _channel_scale(scale: ir.Value, rank: int, channel_axis: int, channels: int) -> int | None:
    """The number of scale factors (the channel count, or 1) when `scale`
    broadcasts along `channel_axis` of a rank-`rank` result only, else None."""
    shape = _shape(scale)
    if len(shape) > rank:
        return None
    padded = (1,) * (rank - len(shape)) + shape
    others = [size for axis, size in enumerate(padded) if axis != channel_axis]
    if any(size != 1 for size in others) or padded[channel_axis] not in (channels, 1):
        return None
    return padded[channel_axis]


def _reshaped(value: ir.Value, shape: tuple[int, ...], location: ir.Location) -> ir.Value:
    if _shape(value) == shape:
        return value
    dtype = TensorType.from_mlir(value.type, dynamic=True).dtype
    return nn.ReshapeOp.build(value, result_type=TensorType(shape, dtype), loc=location)


def _fold_into_conv(mul: ir.Operation, conv: ir.Operation, scale: ir.Value) -> bool:
    if not _takes_scale(conv):
        return False
    out_channels = _shape(conv.results[0])[1]
    factors = _channel_scale(scale, 4, 1, out_channels)
    if factors is None:
        return False
    view = nn.Conv2dOp.from_operation(conv)
    x, weight = conv.operands[0], conv.operands[1]
    bias = conv.operands[2] if len(conv.operands) > 2 else None
    location = mul.location
    with ir.InsertionPoint(mul):
        weight = nn.MulOp.build(weight, _reshaped(scale, (factors, 1, 1, 1), location),
                                loc=location)
        if bias is not None:
            bias = nn.MulOp.build(bias, _reshaped(scale, (factors,), location), loc=location)
        folded = nn.Conv2dOp.build(x, weight, bias, strides=view.attrs["strides"],
                                   padding=view.attrs["padding"],
                                   dilations=view.attrs["dilations"],
                                   groups=view.attrs["groups"], loc=conv.location)
    mul.results[0].replace_all_uses_with(folded)
    return True


def _takes_scale(product: ir.Operation) -> bool:
    """Whether a matmul's or convolution's weights can take a scale of its
    result's type: not an integer one's (i8 weights, an i32 result)."""
    return product.operands[1].type.element_type == product.results[0].type.element_type


def _fold_into_matmul(mul: ir.Operation, matmul: ir.Operation, scale: ir.Value) -> bool:
    lhs, rhs = matmul.operands
    if len(_shape(rhs)) != 2 or not _takes_scale(matmul):
        return False
    result_shape = _shape(matmul.results[0])
    factors = _channel_scale(scale, len(result_shape), len(result_shape) - 1, result_shape[-1])
    if factors is None:
        return False
    location = mul.location
    with ir.InsertionPoint(mul):
        rhs = nn.MulOp.build(rhs, _reshaped(scale, (1, factors), location), loc=location)
        folded = nn.MatmulOp.build(lhs, rhs, loc=matmul.location)
    mul.results[0].replace_all_uses_with(folded)
    return True


def _fold_into_linear(mul: ir.Operation, add: ir.Operation, scale: ir.Value,
                      weights: set[ir.Value]) -> ir.Operation | None:
    """`(x @ w + b) * scale` -> `x @ (w * scale) + b * scale`: a linear
    layer with its bias, then a batch norm over its features. Returns the
    matmul folded into, or None."""
    result_shape = _shape(add.results[0])
    factors = _channel_scale(scale, len(result_shape), len(result_shape) - 1, result_shape[-1])
    for product, bias in (add.operands, reversed(list(add.operands))):
        matmul = _defining(product, "nn.matmul")
        if (matmul is None or factors is None or bias not in weights or not _takes_scale(matmul)
                or len(list(product.uses)) != 1 or matmul.operands[1] not in weights
                or len(_shape(matmul.operands[1])) != 2):
            continue
        lhs, rhs = matmul.operands
        location = mul.location
        with ir.InsertionPoint(mul):
            rhs = nn.MulOp.build(rhs, _reshaped(scale, (1, factors), location), loc=location)
            scaled = nn.MatmulOp.build(lhs, rhs, loc=matmul.location)
            folded = nn.AddOp.build(scaled, nn.MulOp.build(bias, scale, loc=location),
                                    loc=add.location)
        mul.results[0].replace_all_uses_with(folded)
        return matmul
    return None


_FOLDS = {"nn.conv2d": _fold_into_conv, "nn.matmul": _fold_into_matmul}


@register_pass
@dataclass
class NNFoldBatchNorm(Pass):
    """Folds a per-channel scale by weights (a batch norm's) after nn.conv2d or nn.matmul into the weights of the convolution or matmul."""

    argument = "nn-fold-batch-norm"
    anchor = "func.func"

    def run(self, op: ir.Operation) -> None:
        if not op.regions[0].blocks:
            return
        weights = weight_values(op)
        for inner in list(op.regions[0].blocks[0].operations):
            mul = inner.operation
            if mul.name != "nn.mul":
                continue
            for product, scale in (mul.operands, reversed(list(mul.operands))):
                add = _defining(product, "nn.add")
                if (add is not None and scale in weights and len(list(product.uses)) == 1
                        and mul.results[0].type == product.type):
                    matmul = _fold_into_linear(mul, add, scale, weights)
                    if matmul is not None:
                        mul.erase()
                        add.erase()
                        matmul.erase()
                        break
                producer = next((_defining(product, name) for name in _FOLDS
                                 if _defining(product, name) is not None), None)
                if (producer is None or scale not in weights
                        or not all(v in weights for v in list(producer.operands)[1:])
                        or len(list(product.uses)) != 1
                        or mul.results[0].type != product.type):
                    continue
                if _FOLDS[producer.name](mul, producer, scale):
                    mul.erase()
                    producer.erase()
                    break
