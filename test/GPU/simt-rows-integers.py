# RUN: %PYTHON %s | FileCheck %s
#
# Integer reductions as the row kernels compute them, thread by thread (the
# SIMT interpreter of Inputs/simt.py runs the `gpu` stage: each thread's
# fold, butterfly shuffles of 32 bits, an i64 moved as its two halves, and
# the warps' totals through a shared scratch vector of the integer type),
# against the nn reference exactly: sums wrap in their type (i32 sums past
# 2^31), maxima and minima are signed.

import os
import sys

import numpy as np

import lamina
from lamina.dialects import nn
from lamina.targets import get_target
from lamina.types import numpy_dtype

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
import simt  # noqa: E402

TARGET = get_target("cuda:sm_80")
RNG = np.random.default_rng(5)
OPS = {"sum": nn.ReduceSumOp, "max": nn.ReduceMaxOp, "min": nn.ReduceMinOp}


def reduce(kind, shape, axes, dtype, low, high):
    result = tuple(d for i, d in enumerate(shape) if i not in axes)
    text_type = lambda s: "tensor<" + "".join(f"{d}x" for d in s) + dtype + ">"  # noqa: E731
    text = (f"func.func @main(%x: {text_type(shape)}) -> {text_type(result)} {{\n"
            f"  %r = \"nn.reduce_{kind}\"(%x) {{axes = array<i64: {', '.join(map(str, axes))}>}}"
            f" : ({text_type(shape)}) -> {text_type(result)}\n"
            f"  return %r : {text_type(result)}\n}}\n")
    x = RNG.integers(low, high, shape, dtype=np.int64).astype(numpy_dtype(dtype))
    out = np.zeros(result, numpy_dtype(dtype))
    module = TARGET.emit(lamina.parse(text), "gpu")
    simt.launch(module, [x, out])
    want = OPS[kind].detached(axes=list(axes)).reference(x)
    wrong = int((out != want).sum())
    print(f"{kind} {dtype} {shape} over {list(axes)}: "
          f"{'exact' if wrong == 0 else f'DIFFERS in {wrong} of {out.size}'}")


# CHECK: sum i32 (4, 700) over [1]: exact
# CHECK-NEXT: sum i32 (3, 900) over [1]: exact
# CHECK-NEXT: max i32 (5, 40) over [1]: exact
# CHECK-NEXT: min i32 (70, 6) over [0]: exact
# CHECK-NEXT: sum i64 (2, 1500) over [1]: exact
# CHECK-NEXT: max i64 (3, 300) over [1]: exact
# CHECK-NEXT: min i64 (33,) over [0]: exact
reduce("sum", (4, 700), (1,), "i32", -1000, 1000)
reduce("sum", (3, 900), (1,), "i32", 2**29, 2**30)           # wraps past 2^31
reduce("max", (5, 40), (1,), "i32", -2**31, 2**31)
reduce("min", (70, 6), (0,), "i32", -2**31, 2**31)
reduce("sum", (2, 1500), (1,), "i64", -2**40, 2**40)         # both halves move
reduce("max", (3, 300), (1,), "i64", -2**62, 2**62)
reduce("min", (33,), (0,), "i64", -2**62, 2**62)
