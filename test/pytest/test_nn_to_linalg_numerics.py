"""Numerics of convert-nn-to-linalg: every nn op, compiled for the CPU, against
its NumPy reference.

Each case is one small function; the functions of one element type share a
module, compiled once. Shapes include size-1 dims, broadcasting from either
side, sizes that are not multiples of 4/8/16 and negative axes.

Tolerances (|got - want| <= atol + rtol * |want|), per element type:

* f32: rtol = atol = 1e-5 for ops that are exact or one rounding away; 1e-4
  for chains through exp/log/erf/tanh/pow and for reductions, contractions,
  normalisations and attention, where summation order differs from NumPy.
* f16: rtol = atol = 2e-3 (about two f16 ulps: the lowering computes in f32
  and rounds once, like the reference, so results differ by at most one
  rounding of a slightly different f32 value).
* bf16: rtol = atol = 1.6e-2 (about two bf16 ulps, same reasoning).
* i1, i32 and i64 results (comparisons, integer arithmetic, casts to
  integers, gathers of integers, argmax): exactly equal.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import pytest
from mlir import ir
from mlir.dialects import func

import lamina
from lamina.context import make_context
from lamina.dialects import nn
from lamina.dialects.nn import NN
from lamina.runtime import CompiledFunction, functions, signature
from lamina.types import TensorType, element_type_name, numpy_dtype

FLOAT_TYPES = ("f32", "f16", "bf16")

TOLERANCES = {  # (exact, chained) as (rtol, atol)
    "f32": ((1e-5, 1e-5), (1e-4, 1e-4)),
    "f16": ((2e-3, 2e-3), (2e-3, 2e-3)),
    "bf16": ((1.6e-2, 1.6e-2), (1.6e-2, 1.6e-2)),
    "f64": ((1e-12, 1e-12), (1e-11, 1e-11)),
}


def normal(rng, shape):
    return rng.standard_normal(shape) * 2.0


def positive(rng, shape):
    return rng.uniform(0.1, 4.0, shape)


def small_integers(rng, shape):
    """Values that repeat, so that equality comparisons see ties."""
    return rng.integers(-2, 3, shape).astype(np.float64)


def with_nans(rng, shape):
    """Small integers with NaNs among them: NaN propagates through max and
    min, compares unequal to everything and casts to true."""
    values = small_integers(rng, shape)
    values[rng.random(shape) < 0.3] = np.nan
    return values


def booleans(rng, shape):
    return rng.random(shape) < 0.5


def integers(rng, shape):
    return rng.integers(-50, 51, shape)


def wide_integers(rng, shape):
    """Magnitudes whose products overflow i32 (and wrap, as NumPy's do)."""
    return rng.integers(-2**20, 2**20, shape)


def indices(rng, shape):
    """Indices into an axis of 5, some outside it (clamped: -3 reads 0, 9
    reads 4)."""
    return rng.integers(-3, 10, shape)


def large(rng, shape):
    """Magnitudes that overflow exp unless the maximum is subtracted."""
    return rng.standard_normal(shape) * 60.0


@dataclass
class Case:
    """One op applied to operands `(shape, dtype)` (a list for a variadic
    operand, None for an absent optional one)."""

    name: str
    op: type
    operands: list[Any]
    attrs: dict[str, Any] = field(default_factory=dict)
    result: tuple[tuple[int, ...], str] | None = None  # ops with an explicit result type
    inputs: Callable | list[Callable] = normal
    chained: bool = False

    def flat_operands(self):
        flat = []
        for group in self.operands:
            if isinstance(group, list):
                flat.extend(group)
            elif group is not None:
                flat.append(group)
        return flat

    def dtype(self) -> str:
        if self.result is not None:
            return self.result[1]
        return self.flat_operands()[-1][1]


def _unary_cases():
    ops = [(nn.NegOp, normal, False), (nn.AbsOp, normal, False), (nn.ExpOp, normal, True),
           (nn.LogOp, positive, True), (nn.SqrtOp, positive, False),
           (nn.RsqrtOp, positive, False), (nn.TanhOp, normal, True),
           (nn.SigmoidOp, normal, True), (nn.ReluOp, normal, False), (nn.ErfOp, normal, True),
           (nn.SiluOp, normal, True), (nn.GeluOp, normal, True), (nn.SinOp, normal, True),
           (nn.CosOp, normal, True)]
    cases = []
    for dtype in FLOAT_TYPES:
        for op, inputs, chained in ops:
            cases.append(Case(f"{op.name}_{dtype}", op, [((3, 1, 7), dtype)], inputs=inputs,
                              chained=chained))
        cases.append(Case(f"gelu_tanh_{dtype}", nn.GeluOp, [((2, 9), dtype)],
                          {"approximate": "tanh"}, chained=True))
    cases.append(Case("exp_rank0_f32", nn.ExpOp, [((), "f32")], chained=True))
    cases.append(Case("relu_nan_f32", nn.ReluOp, [((9,), "f32")], inputs=with_nans))
    return cases


BROADCASTS = [((4, 1), (1, 6)), ((3, 1, 7), (1, 6, 1)), ((2, 3, 5), (5,)), ((5,), (2, 3, 5)),
              ((1,), (4, 1)), ((2, 3), (2, 3)), ((), (3, 2))]


def _binary_cases():
    ops = [(nn.AddOp, [normal, normal], False), (nn.SubOp, [normal, normal], False),
           (nn.MulOp, [normal, normal], False), (nn.DivOp, [normal, positive], False),
           (nn.MaximumOp, [normal, normal], False), (nn.MinimumOp, [normal, normal], False),
           (nn.PowOp, [positive, normal], True)]
    cases = []
    for dtype in FLOAT_TYPES:
        for op, inputs, chained in ops:
            for i, (lhs, rhs) in enumerate(BROADCASTS if dtype == "f32" else BROADCASTS[:2]):
                cases.append(Case(f"{op.name}_{i}_{dtype}", op, [(lhs, dtype), (rhs, dtype)],
                                  inputs=inputs, chained=chained))
        for predicate in ("eq", "ne", "lt", "le", "gt", "ge"):
            cases.append(Case(f"compare_{predicate}_{dtype}", nn.CompareOp,
                              [((4, 1, 3), dtype), ((5, 3), dtype)], {"predicate": predicate},
                              inputs=small_integers))
    for op in (nn.MaximumOp, nn.MinimumOp):
        cases.append(Case(f"{op.name}_nan_f32", op, [((9,), "f32"), ((9,), "f32")],
                          inputs=with_nans))
    cases += [Case(f"compare_{predicate}_nan_f32", nn.CompareOp, [((9,), "f32"), ((9,), "f32")],
                   {"predicate": predicate}, inputs=with_nans) for predicate in ("eq", "ne", "lt")]
    cases.append(Case("pow_integer_exponent_f32", nn.PowOp, [((7,), "f32"), ((7,), "f32")],
                      inputs=[normal, lambda rng, shape: rng.integers(-2, 4, shape)]))
    return cases


def _select_cases():
    cases = [Case(f"select_{dtype}", nn.SelectOp,
                  [((2, 1, 5), "i1"), ((3, 5), dtype), ((1,), dtype)],
                  inputs=[booleans, normal, normal]) for dtype in FLOAT_TYPES]
    cases.append(Case("select_i1", nn.SelectOp, [((4, 1), "i1"), ((4, 3), "i1"), ((3,), "i1")],
                      inputs=booleans))
    return cases


def _cast_cases():
    pairs = [("f32", "f16"), ("f32", "bf16"), ("f16", "f32"), ("bf16", "f32"), ("f16", "bf16"),
             ("bf16", "f16"), ("f32", "i1"), ("bf16", "i1"), ("i1", "f32"), ("i1", "f16"),
             ("i1", "bf16")]
    cases = [Case(f"cast_{source}_to_{target}", nn.CastOp, [((3, 5), source)],
                  result=((3, 5), target),
                  inputs=booleans if source == "i1" else with_nans if target == "i1" else normal)
             for source, target in pairs]
    cases.append(Case("cast_f32_to_f32", nn.CastOp, [((4,), "f32")], result=((4,), "f32")))
    return cases


def _matmul_cases():
    shapes = [((3, 5), (5, 7)), ((2, 3, 5), (5, 4)), ((2, 3, 5), (2, 5, 4)),
              ((1, 3, 5), (2, 5, 4)), ((2, 1, 3, 5), (3, 5, 6)), ((4, 3, 5), (1, 5, 2)),
              ((3, 5), (2, 5, 4)), ((1, 1), (1, 9))]
    cases = []
    for dtype in FLOAT_TYPES:
        for i, (lhs, rhs) in enumerate(shapes if dtype == "f32" else shapes[2:5]):
            cases.append(Case(f"matmul_{i}_{dtype}", nn.MatmulOp, [(lhs, dtype), (rhs, dtype)],
                              chained=True))
    return cases


def _conv_cases():
    convs = [
        ("plain", (1, 3, 8, 8), (4, 3, 3, 3), False, {}),
        ("strided_padded_bias", (2, 3, 9, 7), (5, 3, 3, 2), True,
         {"strides": (2, 1), "padding": (1, 0, 2, 1), "dilations": (1, 2)}),
        ("grouped", (1, 4, 7, 9), (6, 2, 3, 2), True, {"groups": 2, "padding": (1, 1, 1, 1)}),
        ("depthwise", (2, 3, 5, 5), (3, 1, 3, 3), False, {"groups": 3, "strides": (2, 2)}),
        ("pointwise_strided", (1, 5, 7, 7), (3, 5, 1, 1), True, {"strides": (3, 2)}),
        ("dilated", (1, 2, 9, 8), (3, 2, 2, 3), False,
         {"dilations": (2, 2), "padding": (0, 2, 1, 0)}),
    ]
    cases = []
    for dtype in FLOAT_TYPES:
        for name, x, w, bias, attrs in convs if dtype == "f32" else convs[1:3]:
            bias_operand = ((w[0],), dtype) if bias else None
            cases.append(Case(f"conv2d_{name}_{dtype}", nn.Conv2dOp,
                              [(x, dtype), (w, dtype), bias_operand], attrs, chained=True))
    return cases


def _pool_cases():
    pools = [("even", (1, 2, 8, 8), {"kernel": (2, 2), "strides": (2, 2)}),
             ("padded", (2, 3, 7, 6), {"kernel": (3, 2), "strides": (1, 2),
                                       "padding": (1, 0, 1, 1)}),
             ("stem", (1, 2, 9, 9), {"kernel": (3, 3), "strides": (2, 2),
                                     "padding": (1, 1, 1, 1)}),
             ("global", (2, 3, 5, 7), {"kernel": (5, 7)})]
    return [Case(f"{op.name}_{name}_{dtype}", op, [(x, dtype)], attrs, chained=True)
            for dtype in FLOAT_TYPES for op in (nn.MaxPool2dOp, nn.AvgPool2dOp)
            for name, x, attrs in (pools if dtype == "f32" else pools[:2])]


def _reduction_cases():
    axes = [((3, 5, 6), (-1,), False), ((3, 5, 6), (0, 2), True), ((3, 5, 6), (1,), True),
            ((3, 5, 6), (0, 1, 2), False), ((4, 1, 3), (-2,), False), ((4, 1, 3), (2, 0), True)]
    ops = (nn.ReduceSumOp, nn.ReduceMaxOp, nn.ReduceMinOp, nn.ReduceMeanOp)
    cases = [Case(f"{op.name}_{i}_{dtype}", op, [(shape, dtype)],
                  {"axes": a, "keepdims": keep}, chained=True)
             for dtype in FLOAT_TYPES for op in ops
             for i, (shape, a, keep) in enumerate(axes if dtype == "f32" else axes[:2])]
    cases += [Case(f"{op.name}_nan_f32", op, [((3, 4), "f32")], {"axes": (1,)},
                   inputs=with_nans) for op in (nn.ReduceMaxOp, nn.ReduceMinOp)]
    return cases


def _normalization_cases():
    cases = []
    for dtype in FLOAT_TYPES:
        for op in (nn.SoftmaxOp, nn.LogSoftmaxOp):
            for axis in (-1, 0, 1):
                cases.append(Case(f"{op.name}_axis{axis}_{dtype}", op, [((2, 5, 3), dtype)],
                                  {"axis": axis}, inputs=large, chained=True))
            cases.append(Case(f"{op.name}_unit_axis_{dtype}", op, [((2, 1, 3), dtype)],
                              {"axis": -2}, chained=True))
        for axis in (-1, 1):
            params = (5, 7) if axis == 1 else (7,)
            cases.append(Case(f"layer_norm_axis{axis}_{dtype}", nn.LayerNormOp,
                              [((2, 5, 7), dtype), (params, dtype), (params, dtype)],
                              {"axis": axis, "epsilon": 1e-3}, chained=True))
            cases.append(Case(f"rms_norm_axis{axis}_{dtype}", nn.RmsNormOp,
                              [((2, 5, 7), dtype), (params, dtype)], {"axis": axis},
                              chained=True))
    return cases


def _attention_cases():
    shapes = [
        ("plain", (2, 5, 8), (2, 6, 8), (2, 6, 3), None, {}),
        ("causal", (2, 5, 8), (2, 6, 8), (2, 6, 3), None, {"causal": True}),
        ("mask_scale", (2, 5, 8), (2, 6, 8), (2, 6, 3), (5, 6), {"scale": 0.3}),
        ("mask_batch_causal", (2, 2, 3, 4), (2, 2, 3, 4), (2, 2, 3, 5), (2, 1, 1, 3),
         {"causal": True}),
        ("unbatched", (4, 8), (7, 8), (7, 2), None, {}),
        ("one_query", (3, 1, 5), (3, 4, 5), (3, 4, 6), (1, 4), {"causal": True, "scale": -0.7}),
    ]
    cases = []
    for dtype in FLOAT_TYPES:
        for name, q, k, v, mask, attrs in shapes if dtype == "f32" else shapes[2:4]:
            operands = [(q, dtype), (k, dtype), (v, dtype), (mask, dtype) if mask else None]
            cases.append(Case(f"attention_{name}_{dtype}", nn.AttentionOp, operands, attrs,
                              chained=True))
    return cases


def _data_movement_cases():
    cases = []
    for dtype in FLOAT_TYPES + ("i1",):
        inputs = booleans if dtype == "i1" else normal
        cases += [
            Case(f"transpose_{dtype}", nn.TransposeOp, [((2, 3, 4), dtype)],
                 {"perm": (2, 0, 1)}, inputs=inputs),
            Case(f"reshape_{dtype}", nn.ReshapeOp, [((2, 6), dtype)], result=((3, 4), dtype),
                 inputs=inputs),
            Case(f"broadcast_to_{dtype}", nn.BroadcastToOp, [((3, 1), dtype)],
                 result=((2, 3, 5), dtype), inputs=inputs),
            # IRDL binds one type to the operands after the first.
            Case(f"concat_{dtype}", nn.ConcatOp,
                 [[((2, 1, 3), dtype), ((2, 2, 3), dtype), ((2, 2, 3), dtype)]], {"axis": -2},
                 inputs=inputs),
            Case(f"slice_{dtype}", nn.SliceOp, [((5, 9), dtype)],
                 {"starts": (1, 2), "limits": (4, 9), "strides": (2, 3)}, inputs=inputs),
        ]
    for dtype in FLOAT_TYPES:
        cases.append(Case(f"pad_{dtype}", nn.PadOp, [((2, 3), dtype)],
                          {"low": (0, 1), "high": (2, 3), "value": -1.5}))
    reshapes = [((2, 3, 4), (6, 4)), ((6, 4), (2, 3, 4)), ((1, 6), (6, 1)), ((4,), (2, 1, 2)),
                ((1, 1), ()), ((), (1, 1, 1)), ((2, 1, 3), (3, 2))]
    cases += [Case(f"reshape_{i}_f32", nn.ReshapeOp, [(source, "f32")], result=(target, "f32"))
              for i, (source, target) in enumerate(reshapes)]
    cases += [Case("broadcast_to_same_f32", nn.BroadcastToOp, [((2, 3), "f32")],
                   result=((2, 3), "f32")),
              Case("broadcast_to_scalar_f32", nn.BroadcastToOp, [((), "f32")],
                   result=((4, 3), "f32")),
              Case("concat_single_f32", nn.ConcatOp, [[((3, 2), "f32")]], {"axis": 0})]
    return cases


INTEGER_TYPES = ("i32", "i64")


def _integer_cases():
    cases = []
    for dtype in INTEGER_TYPES:
        for op in (nn.NegOp, nn.AbsOp):
            cases.append(Case(f"{op.name}_{dtype}", op, [((3, 1, 7), dtype)], inputs=integers))
        for op in (nn.AddOp, nn.SubOp, nn.MulOp, nn.MaximumOp, nn.MinimumOp):
            for i, (lhs, rhs) in enumerate(BROADCASTS[:3]):
                cases.append(Case(f"{op.name}_{i}_{dtype}", op, [(lhs, dtype), (rhs, dtype)],
                                  inputs=integers))
        cases.append(Case(f"mul_wrapping_{dtype}", nn.MulOp, [((4, 5), dtype), ((5,), dtype)],
                          inputs=wide_integers))
        for predicate in ("eq", "ne", "lt", "le", "gt", "ge"):
            cases.append(Case(f"compare_{predicate}_{dtype}", nn.CompareOp,
                              [((2, 1, 5), dtype), ((3, 5), dtype)], {"predicate": predicate},
                              inputs=lambda rng, shape: rng.integers(-2, 3, shape)))
        cases.append(Case(f"select_{dtype}", nn.SelectOp,
                          [((2, 1, 5), "i1"), ((3, 5), dtype), ((1,), dtype)],
                          inputs=[booleans, integers, integers]))
        for op in (nn.ReduceSumOp, nn.ReduceMaxOp, nn.ReduceMinOp):
            cases.append(Case(f"{op.name}_{dtype}", op, [((3, 4, 5), dtype)],
                              {"axes": (0, -1), "keepdims": op is nn.ReduceMaxOp},
                              inputs=integers))
        cases += [
            Case(f"transpose_{dtype}", nn.TransposeOp, [((2, 3, 4), dtype)],
                 {"perm": (2, 0, 1)}, inputs=integers),
            Case(f"reshape_{dtype}", nn.ReshapeOp, [((2, 6), dtype)], result=((3, 4), dtype),
                 inputs=integers),
            Case(f"broadcast_to_{dtype}", nn.BroadcastToOp, [((3, 1), dtype)],
                 result=((2, 3, 5), dtype), inputs=integers),
            Case(f"concat_{dtype}", nn.ConcatOp, [[((2, 1, 3), dtype), ((2, 2, 3), dtype)]],
                 {"axis": -2}, inputs=integers),
            Case(f"slice_{dtype}", nn.SliceOp, [((5, 9), dtype)],
                 {"starts": (1, 2), "limits": (4, 9), "strides": (2, 3)}, inputs=integers),
            Case(f"cumsum_{dtype}", nn.CumsumOp, [((3, 37), dtype)], {"axis": -1},
                 inputs=wide_integers),
            Case(f"cumsum_axis0_{dtype}", nn.CumsumOp, [((19, 4), dtype)], {"axis": 0},
                 inputs=integers),
            Case(f"iota_{dtype}", nn.IotaOp, [], {"axis": 1}, result=((3, 40), dtype)),
            Case(f"gather_{dtype}", nn.GatherOp, [((3, 5), dtype), ((2, 4), dtype)],
                 {"axis": 1}, inputs=[integers, indices]),
            Case(f"argmax_{dtype}", nn.ArgmaxOp, [((4, 37), dtype)], {"axis": -1},
                 inputs=lambda rng, shape: rng.integers(-3, 4, shape)),
        ]
        for op in (nn.BitwiseAndOp, nn.BitwiseOrOp, nn.BitwiseXorOp):
            cases.append(Case(f"{op.name}_{dtype}", op, [((3, 1, 7), dtype), ((7,), dtype)],
                              inputs=wide_integers))
        for op in (nn.ShiftLeftOp, nn.ShiftRightOp):
            # Amounts past the width and negative ones too.
            cases.append(Case(f"{op.name}_{dtype}", op, [((4, 9), dtype), ((9,), dtype)],
                              inputs=[wide_integers,
                                      lambda rng, shape: rng.integers(-3, 70, shape)]))
    for dtype in ("f32", "f16", "f64"):
        cases.append(Case(f"remainder_{dtype}", nn.RemainderOp, [((3, 5), dtype), ((5,), dtype)],
                          inputs=[lambda rng, shape: rng.standard_normal(shape) * 20,
                                  lambda rng, shape: rng.uniform(0.5, 3, shape) *
                                  rng.choice([-1, 1], shape)]))
    for source, target in [("ui8", "i32"), ("i32", "ui16"), ("ui16", "f32"), ("f32", "ui32"),
                           ("ui64", "i64"), ("i8", "ui64"), ("f64", "f16"), ("f32", "f64")]:
        generate = (lambda rng, shape: rng.uniform(0, 1e4, shape)) if source.startswith("f") \
            else (lambda rng, shape: rng.integers(0, 120, shape))
        cases.append(Case(f"cast_{source}_to_{target}", nn.CastOp, [((3, 5), source)],
                          result=((3, 5), target), inputs=generate))
    for source, target in [("f32", "i32"), ("f32", "i64"), ("bf16", "i32"), ("f16", "i64"),
                           ("i64", "f32"), ("i32", "f16"), ("i32", "bf16"), ("i64", "i32"),
                           ("i32", "i64"), ("i1", "i64"), ("i64", "i1"), ("i32", "i1")]:
        generate = (booleans if source == "i1" else
                    (lambda rng, shape: rng.integers(-2, 3, shape)) if target == "i1" else
                    integers if source.startswith("i") else normal)
        cases.append(Case(f"cast_{source}_to_{target}", nn.CastOp, [((3, 5), source)],
                          result=((3, 5), target), inputs=generate))
    for dtype in FLOAT_TYPES:
        cases += [
            Case(f"embedding_{dtype}", nn.GatherOp, [((5, 6), dtype), ((2, 3), "i64")],
                 {"axis": 0}, inputs=[normal, indices]),
            Case(f"iota_{dtype}", nn.IotaOp, [], {"axis": 0}, result=((9, 2), dtype)),
            Case(f"cumsum_{dtype}", nn.CumsumOp, [((2, 33), dtype)], {"axis": 1},
                 chained=True),
            Case(f"argmax_{dtype}", nn.ArgmaxOp, [((3, 40), dtype)],
                 {"axis": 1, "keepdims": True}, inputs=small_integers),
        ]
    cases += [Case("argmax_nan_f32", nn.ArgmaxOp, [((5, 7), "f32")], {"axis": 0},
                   inputs=with_nans),
              Case("gather_i1", nn.GatherOp, [((5, 3), "i1"), ((4,), "i32")], {"axis": 0},
                   inputs=[booleans, indices])]
    return cases


def _quantization_cases():
    """Values around and beyond the range of i8 and ui8 (saturation);
    test_quantize has the ties, infinities and NaN."""
    def quantized(rng, shape):
        return rng.integers(-128, 128, shape)

    def unsigned(rng, shape):
        return rng.integers(0, 256, shape)

    cases = []
    for dtype, zero_points in (("i8", quantized), ("ui8", unsigned)):
        cases += [
            Case(f"quantize_{dtype}", nn.QuantizeOp, [((3, 17), "f32"), ((), "f32"), ((), dtype)],
                 inputs=[large, positive, zero_points]),
            Case(f"quantize_per_channel_{dtype}", nn.QuantizeOp,
                 [((2, 5, 9), "f32"), ((5,), "f32"), ((5,), dtype)],
                 inputs=[large, positive, zero_points]),
            Case(f"dequantize_per_channel_{dtype}", nn.DequantizeOp,
                 [((4, 11), dtype), ((11,), "f32"), ((11,), dtype)], {"axis": -1},
                 inputs=[zero_points, positive, zero_points]),
        ]
    return cases


CASES = (_unary_cases() + _binary_cases() + _select_cases() + _cast_cases() + _matmul_cases()
         + _conv_cases() + _pool_cases() + _reduction_cases() + _normalization_cases()
         + _attention_cases() + _data_movement_cases() + _integer_cases()
         + _quantization_cases())


def _build_function(case: Case) -> None:
    types = [TensorType(shape, dtype).to_mlir() for shape, dtype in case.flat_operands()]

    @func.FuncOp.from_py_func(*types, name=case.name)
    def body(*args):
        args, groups = list(args), []
        for group in case.operands:
            if isinstance(group, list):
                groups.append(args[:len(group)])
                del args[:len(group)]
            elif group is None:
                groups.append(None)
            else:
                groups.append(args.pop(0))
        result_type = TensorType(*case.result) if case.result else None
        return case.op.build(*groups, result_type=result_type, **case.attrs)


def _module_key(case: Case) -> str:
    """Cases are compiled together by element type; every case with i1
    tensors shares one module."""
    types = [dtype for _, dtype in case.flat_operands()] + [case.dtype()]
    return "i1" if "i1" in types or case.op is nn.CompareOp else case.dtype()


@functools.cache
def compiled(key: str) -> dict[str, CompiledFunction]:
    """The functions of every case with module key `key`, compiled together
    once (one JIT for the lot; each case is then an entry of it)."""
    cases = [case for case in CASES if _module_key(case) == key]
    with make_context(), ir.Location.unknown():
        module = ir.Module.create()
        with ir.InsertionPoint(module.body):
            for case in cases:
                _build_function(case)
        first = lamina.compile(module, target="cpu", entry=cases[0].name)
        return {case.name: CompiledFunction(first.engine, case.name, *signature(function))
                for case, function in zip(cases, functions(module))}


def _inputs(case: Case, rng) -> list[np.ndarray]:
    generators = case.inputs if isinstance(case.inputs, list) else [case.inputs] * len(
        case.flat_operands())
    arrays = []
    for (shape, dtype), generate in zip(case.flat_operands(), generators):
        values = np.asarray(generate(rng, shape))
        arrays.append(values.astype(numpy_dtype(dtype)))
    return arrays


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_matches_reference(case: Case):
    rng = np.random.default_rng(sum(map(ord, case.name)))
    arrays = _inputs(case, rng)
    result_types = [TensorType(*case.result)] if case.result else []
    view = case.op.detached(result_types, **case.attrs)
    want = view.run_reference(*arrays)
    got = compiled(_module_key(case))[case.name](*arrays)
    assert got.shape == want.shape and got.dtype == want.dtype
    if want.dtype == np.bool_ or want.dtype.kind in "iu":
        np.testing.assert_array_equal(got, want)
        return
    rtol, atol = TOLERANCES[element_type_name(want.dtype)][case.chained]
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64),
                               rtol=rtol, atol=atol)


def test_every_op_has_a_case():
    # nn.fused calls a function of its module: test_fusion_numerics runs it.
    assert {case.op for case in CASES} == set(NN.ops.values()) - {nn.FusedOp}
